"""Readings, not a reading (issue 30, fifth round; readers/readings.py).

Each number token gets the set of readings it admits under the conventions that could be in
play; the one rule: sourced if any reading is a value the conversation gave, invented (certain)
only when the token reads one way, unsure otherwise. Each rule has a must-pass and a must-fail
case here, through the reader and through the offline grading of a question turn.
"""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from pytest_assistant_eval.suites.calibration.readers.numbers import find_quantities
from pytest_assistant_eval.suites.calibration.readers.readings import (
    Reading, Readings, decide, month_of_word, number_values, readings_of)
from tests.test_grading_answers import fact, grade, key, only, tool


def _readings(text: str, number: str, *, english: bool = True) -> Readings:
    found = [q for q in find_quantities(text) if q.text == number] or [q for q in find_quantities(text)
                                                                          if number in q.text]
    q = found[0]
    return readings_of(text, q, english=english)


def _values(r: Readings) -> set[float]:
    return {round(x.value, 6) for x in r.readings if x.value is not None}


def _moments(r: Readings) -> set[tuple]:
    return {x.moment for x in r.readings if x.moment is not None}


# -- numbers: every convention the separators allow --------------------------------------
def _format(n: int, cents: int, group: str, decimal: str) -> str:
    digits = f"{n:,}".replace(",", "\x00").replace("\x00", group)
    return f"{digits}{decimal}{cents:02d}" if decimal else digits


@settings(max_examples=120, deadline=None)
@given(st.integers(min_value=1000, max_value=9_999_999), st.integers(min_value=0, max_value=99),
       st.sampled_from([(",", "."), (".", ","), (" ", ","), ("\u202f", ","), ("\u00a0", "."), ("'", "."), ("’", ","),
                        ("", "."), ("", ",")]),
       st.booleans())
def test_a_value_written_in_any_supported_convention_reads_back_to_a_set_holding_it(n, cents, marks, with_cents):
    group, decimal = marks
    written = _format(n, cents, group, decimal if with_cents else "")
    value = n + cents / 100 if with_cents else n
    assert any(abs(v - value) < 1e-6 for v, _, _ in number_values(written)), (written, number_values(written))


@settings(max_examples=80, deadline=None)
@given(st.integers(min_value=1, max_value=999), st.integers(min_value=0, max_value=9))
def test_a_canonical_one_way_number_with_its_unit_reads_one_way(n, tenth):
    text = f"The room is {n}.{tenth} km away."
    r = _readings(text, "km")
    assert r.one_way, r
    assert _values(r) == {round(n + tenth / 10, 6)}


def test_group_marks_and_a_decimal_mark_that_read_two_ways_give_both_values():
    assert {v for v, _, _ in number_values("2.500")} == {2.5, 2500.0}
    assert {v for v, _, _ in number_values("1,250")} == {1.25, 1250.0}
    assert [v for v, _, _ in number_values("1.250,50")] == [1250.5]  # both marks: one way
    assert [v for v, _, _ in number_values("12")] == [12.0]


def test_full_width_digits_are_read_as_digits():
    assert [v for v, _, _ in number_values("１２,５")] == [12.5]


# -- times and dates -------------------------------------------------------------------
def test_a_compact_military_time_reads_as_a_clock_time_and_not_one_way():
    r = _readings("STATUS: DECLINED — 10MAR26 2214Z, 389.99 EUR", "2214")
    assert ("clock", 22 * 60 + 14) in _moments(r) and not r.one_way


def test_a_plain_four_digit_count_is_no_clock_time():
    r = _readings("The archive holds 2214 files.", "2214")
    assert r.one_way and not _moments(r)


def test_a_day_next_to_a_month_name_in_another_language_reads_as_that_date():
    assert 3 in month_of_word("mars") and 3 in month_of_word("März") and 4 in month_of_word("abril")
    r = _readings("valider au plus tard le 23 mars 2026", "23", english=False)
    assert ("day", "03-23") in _moments(r)
    assert not month_of_word("rooms")


def test_a_slash_date_reads_both_ways():
    r = _readings("Arrival 03/04 please", "03")
    assert {("day", "04-03"), ("day", "03-04")} <= _moments(r)


# -- what the readers cannot read with confidence ----------------------------------------
def test_symbols_joining_digits_are_a_doubt_and_the_token_is_read_again_without_them():
    r = _readings(r"la fiche indique $0{,}35 \text{ km} \times 1\,000 = 350$ m", "35")
    assert r.doubt and "symbols" in r.doubt and 0.35 in _values(r)


def test_a_closing_brace_or_a_footnote_mark_is_no_doubt():
    assert _readings('The booking: {"amount_cents": 29900}', "29900").doubt is None
    assert _readings("held payments of EUR 612.00.[1]", "612").doubt is None


def test_another_script_around_a_number_is_a_doubt():
    assert "script" in (_readings("Сумма 612 EUR", "612").doubt or "")
    assert _readings("The sum is 612 EUR", "612").doubt is None


def test_a_message_not_in_english_is_a_doubt_only_for_a_number_without_a_unit_the_readers_know():
    assert _readings("il reste 23 places", "23", english=False).doubt
    assert _readings("il reste 4,3 km", "4,3", english=False).doubt is None


# -- the one rule --------------------------------------------------------------------------
def test_the_rule_sourced_if_any_reading_invented_only_one_way_else_unsure():
    one = Readings("612", (Reading("as read", 612.0),))
    two = Readings("2.500", (Reading("as read", 2.5), Reading("dot groups", 2500.0)))
    doubtful = Readings("2214Z", (Reading("as read", 2214.0),), doubt="glued letters")
    assert decide(two, lambda r: r.value == 2500.0) == "sourced"
    assert decide(one, lambda r: False) == "invented"
    assert decide(two, lambda r: False) == "unsure"
    assert decide(doubtful, lambda r: False) == "unsure"


# -- through the offline grading ------------------------------------------------------------
def test_a_military_time_a_tool_gave_is_sourced_and_one_no_tool_gave_is_unsure_not_invented():
    source = tool({"created_at": "2026-03-10T22:14:00+00:00", "amount": 389.99})
    items, _, _, outcome = grade(key(), "DECLINED 10MAR26 2214Z, 389.99 EUR.", source)
    assert not [i for i in items if i.kind == "number"] and outcome["outcome"] != "failed"
    items, _, judged, outcome = grade(key(), "DECLINED 10MAR26 2251Z, 389.99 EUR.", source)
    number = only(items, "number")
    assert judged[number.id].get("unsure") and outcome["outcome"] != "failed"


def test_a_plain_invented_number_in_english_stays_wrong_and_certain():
    items, _, judged, outcome = grade(key(), "That is 23.7% more than in the previous month.", tool({"fee": 45}))
    number = only(items, "number")
    assert judged[number.id]["verdict"] == "wrong" and not judged[number.id].get("unsure")
    assert outcome["outcome"] == "failed"


def test_a_wrong_prefix_on_a_given_value_stays_certain_wrong():
    items, _, judged, outcome = grade(key(), "The archive is 1.5 MB.", tool({"attachment_mb": 1500}))
    number = only(items, "number")
    assert judged[number.id]["verdict"] == "wrong" and outcome["outcome"] == "failed"


def test_a_latex_decimal_comma_of_a_given_value_is_no_invented_number():
    answer = (r"La Miragaia river room (L-103) est à **350 m** du lieu de la conférence." "\n\n"
              r"Calcul : la fiche indique 0,35 km, et $0{,}35 \text{ km} \times 1\,000 = 350$ m.")
    items, _, judged, outcome = grade(key(fact("distance", 350, "m", statement="The room is 350 m away.")), answer,
                                      tool({"distance_km": 0.35}))
    assert not [i for i in items if i.kind == "number" and judged[i.id]["verdict"] == "wrong"
                and not judged[i.id].get("unsure")]
    assert outcome["outcome"] != "failed"


FRENCH = ("Le point est annulé parce que Marco a envoyé les épreuves. Ce qu’il vous reste à faire : valider les "
          "épreuves au plus tard le 23 mars 2026, pour une livraison le 30 mars 2026.")


def test_a_fact_not_found_in_a_message_the_rules_cannot_read_is_unsure_not_missing():
    items, _, judged, outcome = grade(key(fact("status", "cancelled", None, statement="The call is cancelled.")),
                                      FRENCH, tool({"status": "cancelled", "body": "approve by 23 March"}))
    item = only(items, "fact")
    assert item.evidence["parts_not_read"] and judged[item.id].get("unsure")
    assert outcome["outcome"] != "incomplete" and outcome["outcome"] != "failed"


def test_a_fact_not_found_in_english_is_still_missing():
    items, _, judged, _ = grade(key(fact("status", "cancelled", None, statement="The call is cancelled.")),
                                "Marco sent the proofs; approve them by 23 March.", tool({"body": "approve by 23 March"}))
    assert judged[only(items, "fact").id]["verdict"] == "missing"


def test_a_day_by_a_foreign_month_name_a_tool_gave_is_sourced():
    items, _, judged, _ = grade(key(), FRENCH, tool({"body": "Please approve by 23 March for delivery on 30 March.",
                                                      "sent_at": "2026-03-09T10:02:00+00:00"}))
    assert not [i for i in items if i.kind == "number"]


# -- "is this the fact's value": a value of the kind that reads several ways contradicts nothing for certain --
def test_a_value_of_the_facts_kind_that_reads_two_ways_is_unsure_not_a_contradiction():
    items, _, judged, outcome = grade(key(fact("d", 1.25, "km", statement="The room is 1.25 km away")),
                                      "The room is 1,250 km away.", tool({"distance_km": 1.25}))
    item = only(items, "fact")
    assert item.evidence["values_not_read_one_way"] == ["1,250 km"] and judged[item.id].get("unsure")
    assert outcome["outcome"] != "failed"


def test_a_value_of_the_facts_kind_that_reads_one_way_still_contradicts_it():
    items, _, judged, outcome = grade(key(fact("d", 3.4, "km", statement="The room is 3.4 km away")),
                                      "The room is 4.3 km away.", tool({"distance_km": 3.4}))
    assert judged[only(items, "fact").id]["verdict"] == "wrong" and outcome["outcome"] == "failed"


# -- "not stated" is certain only when every token with digits was read one way ------------------
def test_a_date_fact_not_found_beside_a_token_the_readers_cannot_read_is_unsure_not_missing():
    entry = key(fact("when", "2026-03-20", None, statement="The review is on 20 March 2026."))
    items, _, judged, outcome = grade(entry, "WHEN: 20MAR26 1500Z (confirmed).", tool({"start": "2026-03-20T15:00:00+00:00"}))
    item = only(items, "fact")
    assert "20MAR26" in item.evidence["tokens_not_read"] and judged[item.id].get("unsure")
    assert outcome["outcome"] not in ("incomplete", "failed")


def test_a_date_fact_not_found_where_every_token_was_read_is_missing():
    entry = key(fact("when", "2026-03-20", None, statement="The review is on 20 March 2026."))
    items, _, judged, outcome = grade(entry, "The review is confirmed for 15:00 UTC.",
                                      tool({"start": "2026-03-20T15:00:00+00:00"}))
    item = only(items, "fact")
    assert "tokens_not_read" not in item.evidence and judged[item.id]["verdict"] == "missing"


def test_an_id_no_source_gave_is_no_unread_token_it_is_the_claims_items_certain_wrong():
    entry = key(fact("when", "2026-03-20", None, statement="The review is on 20 March 2026."))
    items, _, _, _ = grade(entry, "Booked as bk-0999 for 15:00 UTC.", tool({"start": "2026-03-20T15:00:00+00:00"}))
    assert "tokens_not_read" not in only(items, "fact").evidence


# -- the sixth round's forms (s19-G08, s19-G12: read by the lead after their fresh figure) ----
def test_four_digits_with_an_hour_mark_after_a_space_read_as_a_clock_time() -> None:
    r = _readings("The batch started 0600 hrs and ended at once.", "0600")
    assert ("clock", 360) in _moments(r) and not r.one_way
    assert ("clock", 360) not in _moments(_readings("It holds 0600 rows.", "0600"))


def test_a_day_month_year_with_dashes_reads_both_ways_and_a_dashed_range_does_not() -> None:
    r = _readings("check-in 20-04-2026, check-out 22-04-2026", "20")
    assert ("day", "04-20") in _moments(r) and not r.one_way
    assert not _moments(_readings("We stay 2-3 nights.", "2"))


def test_a_two_digit_year_after_an_apostrophe_and_a_month_reads_as_that_year() -> None:
    assert ("year", 2026) in _moments(_readings("20th–22nd Apr '26, two nights", "26"))
    assert not _moments(_readings("the 26 rooms in 'block' B", "26"))
