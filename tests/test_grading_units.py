"""What issue 21's readers change in the answer checks: a unit of another magnitude or one the
reader does not know is never a right value "without its unit"; 2^30 shown as a divisor and
the minutes between two stated times are not invented; a number in words is a number."""

from __future__ import annotations

from tests.test_grading_answers import fact, grade, key, only, tool


def test_a_fact_in_square_metres_stated_in_square_feet_is_not_settled_right():
    items, flags, judged, outcome = grade(key(fact("area", 68, "m²")), "Floor area: 68 square feet (68 ft²).",
                                          tool({"area_m2": 68}))
    item = only(items, "fact")
    assert item.pending and item.settled_by != "check"
    assert flags.form_missing == []
    assert judged[item.id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"


def test_a_value_next_to_a_unit_the_reader_does_not_know_goes_to_the_judge_with_the_evidence():
    items, flags, _, _ = grade(key(fact("price", 120, "EUR")), "The fee is 120 CHF.", tool({"fee": 120, "currency": "EUR"}))
    item = only(items, "fact")
    assert item.pending
    assert item.evidence["units_not_known"] == ["120 CHF"]
    assert not any("has no unit" in f for f in flags.form_missing)


def test_a_fact_written_in_words_is_settled_right():
    items, _, _, outcome = grade(key(fact("nights", 3, "night")), "You stay three nights.", tool({"nights": 3}))
    assert only(items, "fact").verdict == "right"
    assert outcome["outcome"] == "answered"


def test_2_to_the_30_shown_as_the_divisor_for_gib_is_not_an_invented_number():
    answer = "The file is 5 368 709 120 bytes, divided by 1 073 741 824 (2^30) that is 5 GiB."
    items, _, _, outcome = grade(key(), answer, tool({"size_bytes": 5368709120}))
    assert [i for i in items if i.kind == "number"] == []
    assert outcome["outcome"] == "answered"


def test_the_minutes_between_two_times_the_answer_states_are_not_invented():
    answer = "It was declined at 22:14 UTC; 6 minutes later (22:20 UTC) the bank blocked the card."
    items, _, _, _ = grade(key(), answer, tool({"declined_at": "2026-03-10T22:14:00Z", "mail_at": "2026-03-10T22:20:00Z"}))
    assert [i for i in items if i.kind == "number"] == []


def test_an_invented_number_in_words_is_still_an_item():
    items, _, _, _ = grade(key(), "The cleaning fee is forty-two euros.", tool({"fee": 40, "currency": "EUR"}))
    assert only(items, "number").evidence["number"] == "forty-two euros"
