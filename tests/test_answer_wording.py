"""The answer checks read natural wording (issue 9, items 6-11): each check is shown by
answers in the words real assistants write that must pass it, and by answers that must
not. Every test runs the path ``grade-ai`` takes for one turn: ``check_answer``, the
offline rules judge, the outcome.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.suites.calibration.cases.model import Derivation, Fact, ForbiddenClaim, KeyEntry
from pytest_assistant_eval.suites.calibration.checks.answers import AnswerFlags, check_answer
from pytest_assistant_eval.judging.items import Item, settle
from pytest_assistant_eval.suites.calibration.checks.outcomes import question_outcome
from pytest_assistant_eval.suites.calibration.checks.rules_judge import judge_items

ESCALATION = "This question goes beyond what I can settle here, so I am handing it to a human colleague."


def fact(fid: str, value: Any, unit: str | None = None, *, critical: bool = True, statement: str | None = None) -> Fact:
    return Fact(id=fid, statement=statement or f"(key statement of {fid})", value=value, unit=unit, critical=critical,
                derivation=Derivation(sql="SELECT 1"))


def key(*facts: Fact, **kwargs: Any) -> KeyEntry:
    return KeyEntry(question_id="Q", facts=tuple(facts), **kwargs)


def tool(data: Any) -> str:
    return json.dumps({"ok": True, "result": data})


def grade(entry: KeyEntry, answer: str, *tool_texts: str, **kwargs: Any
          ) -> tuple[list[Item], AnswerFlags, dict[str, Any], dict[str, Any]]:
    items, flags = check_answer(entry, answer, tool_texts=list(tool_texts), user_texts=[],
                                escalation_sentence=ESCALATION, **kwargs)
    # The ``claims`` item every answer carries has its own tests (tests/test_grading_claims.py):
    # here it is left out, so each test reads the items of its own subject.
    items = [i for i in items if i.kind != "claims"]
    judged = judge_items(items)
    outcome = question_outcome(items, flags, {k: v["verdict"] for k, v in judged.items() if v["verdict"]})
    return items, flags, judged, outcome


def the(items: list[Item], kind: str) -> Item:
    found = [i for i in items if i.kind == kind]
    assert len(found) == 1, [i.to_dict() for i in items]
    return found[0]


def final(item: Item, judged: dict[str, Any]) -> str:
    return item.verdict or judged[item.id]["verdict"]


EVENT = tool({"id": "e-0002", "title": "Quarterly review", "start": "2026-03-20T15:00:00+00:00",
              "end": "2026-03-20T16:30:00+00:00", "duration_min": 90})
TALK = tool({"id": "e-0008", "start": "2026-04-03T14:30:00+01:00", "end": "2026-04-03T15:15:00+01:00"})


# -- 6. dates and times in any natural form ------------------------------------------
@pytest.mark.parametrize("answer", [
    "The review was moved to **Friday 20 March 2026, 15:00–16:30**.",
    "It now takes place on 20 March at 3 pm (until 4:30 pm).",
    "New slot:\n- Date: Friday, March 20th\n- Time: 3:00 PM – 4:30 PM",
    "Moved to 20/03/2026, 15h00–16h30.",
    "It starts at 15:00 on Fri 20/03 and ends at 16:30.",
    "Start: 2026-03-20 15:00.",
    "The new time is 20\u00a0March\u00a02026 from 15:00 to 16:30.",
])
def test_a_datetime_fact_is_right_in_any_natural_form(answer):
    items, _, judged, outcome = grade(key(fact("start", "2026-03-20T15:00")), answer, EVENT)
    item = the(items, "fact")
    assert (item.verdict, item.settled_by) == ("right", "check")
    assert outcome["outcome"] == "answered", [i.to_dict() for i in items]


@pytest.mark.parametrize("answer", [
    "It is still on Thursday 19 March at 10:00.",
    "It was moved to 20 March at 15:30.",
    "Moved to Friday 27 March 2026, 15:00–16:30.",
])
def test_a_datetime_fact_stated_with_another_day_or_time_is_wrong(answer):
    items, _, judged, outcome = grade(key(fact("start", "2026-03-20T15:00")), answer, EVENT)
    item = the(items, "fact")
    assert item.pending and item.evidence["values_of_the_kind"]
    assert judged[item.id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"


def test_a_datetime_fact_not_stated_at_all_is_missing():
    items, _, judged, outcome = grade(key(fact("start", "2026-03-20T15:00")), "It was moved to Friday afternoon.", EVENT)
    item = the(items, "fact")
    assert item.evidence["values_of_the_kind"] == []
    assert judged[item.id]["verdict"] == "missing"
    assert outcome["outcome"] == "incomplete"


@pytest.mark.parametrize("answer", [
    "The talk starts at 13:30 UTC.",
    "It starts at 14:30 Lisbon time (WEST, UTC+1), so 1:30 pm in UTC.",
    "It starts at 14:30 Lisbon time (WEST, UTC+1).",
    "Start: 14:30 (UTC+01:00).",
    "Start: 2026-04-03T14:30+01:00.",
    "It begins at 13:30 GMT.",
    "In UTC that is **13:30Z**.",
])
def test_a_time_with_its_zone_is_right_in_any_zone_that_converts_to_it(answer):
    items, flags, _, outcome = grade(key(fact("utc", "13:30", "UTC")), answer, TALK)
    assert the(items, "fact").verdict == "right"
    assert flags.form_missing == []
    assert outcome["outcome"] == "answered", [i.to_dict() for i in items]


def test_a_time_without_its_zone_is_right_with_form_missing():
    items, flags, _, outcome = grade(key(fact("utc", "13:30", "UTC")), "The talk starts at 13:30.", TALK)
    assert the(items, "fact").verdict == "right"
    assert flags.form_missing == ["utc: the time 13:30 has no time zone"]
    assert outcome["outcome"] == "answered"


@pytest.mark.parametrize("answer", ["The talk starts at 15:30 UTC.", "It starts at 14:30 UTC."])
def test_a_time_in_another_utc_value_is_wrong_not_missing(answer):
    items, _, judged, outcome = grade(key(fact("utc", "13:30", "UTC")), answer, TALK)
    item = the(items, "fact")
    assert judged[item.id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"


def test_a_local_time_whose_zone_is_not_known_is_neither_right_nor_wrong():
    items, _, judged, outcome = grade(key(fact("utc", "13:30", "UTC")), "It starts at 14:30 Porto time.", TALK)
    assert judged[the(items, "fact").id]["verdict"] == "missing"
    assert outcome["outcome"] == "incomplete"


@pytest.mark.parametrize("answer", [
    "She left on 27 February 2026.",
    "She left the studio on **Feb 27**.",
    "Her last day was February 27th, 2026.",
    "She left on the 27th of February.",
    "Left: 27/02/2026",
    "She left Lind Studio on 2026-02-27.",
])
def test_a_date_fact_is_right_in_any_natural_form(answer):
    items, _, _, outcome = grade(key(fact("left", "2026-02-27")), answer)
    assert the(items, "fact").verdict == "right"
    assert outcome["outcome"] == "answered", [i.to_dict() for i in items]


def test_a_wrong_date_is_wrong_and_no_date_is_missing():
    items, _, judged, outcome = grade(key(fact("left", "2026-02-27")), "She left on 28 February 2026.")
    assert judged[the(items, "fact").id]["verdict"] == "wrong" and outcome["outcome"] == "failed"
    items, _, judged, outcome = grade(key(fact("left", "2026-02-27")), "She left the studio last month.")
    assert judged[the(items, "fact").id]["verdict"] == "missing" and outcome["outcome"] == "incomplete"


@pytest.mark.parametrize("answer", [
    "The Mastercard expired at the end of **February 2026**.",
    "Its expiry is 02/2026, so it has expired.",
    "Expiry 2026-02: expired.",
    "It expired in Feb 2026.",
])
def test_a_month_fact_is_right_in_any_natural_form(answer):
    items, _, _, outcome = grade(key(fact("expiry", "2026-02")), answer)
    assert the(items, "fact").verdict == "right"
    assert outcome["outcome"] == "answered", [i.to_dict() for i in items]


def test_a_month_fact_with_another_month_is_wrong():
    items, _, judged, _ = grade(key(fact("expiry", "2026-02")), "It is valid until 02/29.")
    assert judged[the(items, "fact").id]["verdict"] == "wrong"


@pytest.mark.parametrize("answer, day", [
    ("You are booked for 7–9 April.", "2026-04-07"),
    ("You are booked for 7–9 April.", "2026-04-09"),
    ("The stay runs 1 to 5 April.", "2026-04-01"),
    ("Booked for April 7-9.", "2026-04-09"),
    ("Booked from 7 April to 9 April.", "2026-04-07"),
    ("Both attempts (2 and 4 March) were declined.", "2026-03-02"),
])
def test_a_range_names_both_of_its_ends(answer, day):
    items, _, _, outcome = grade(key(fact("day", day)), answer)
    assert the(items, "fact").verdict == "right"
    assert outcome["invented_numbers"] == 0, [i.to_dict() for i in items]


def test_a_date_key_written_in_words_is_read_as_a_date():
    items, _, _, _ = grade(key(fact("deadline", "23 March")), "Mara must approve them by March 23rd.")
    assert the(items, "fact").verdict == "right"


# -- 7. the many ways to say that the data does not answer ----------------------------
@pytest.mark.parametrize("answer", [
    "The data doesn't show it.",
    "The speed isn't stated in the listing; it only says \u201cfast wifi\u201d.",
    "I can't find it in your records.",
    "There's no record of an electricity bill in your messages or charges.",
    "None of the tools return a wifi speed.",
    "The listing doesn\u2019t mention a speed.",
    "The figure isn't recorded anywhere.",
    "I don't have that information.",
    "I found **no information about** an electricity bill in your messages.",
    "The listing gives no speed, only \u201cfast wifi\u201d.",
    "Unfortunately, I was unable to find any electricity bill.",
    "- Speed: not specified in the listing",
])
def test_saying_the_data_does_not_answer_in_natural_words_is_right(answer):
    items, _, _, outcome = grade(key(data_does_not_answer=True), answer)
    item = the(items, "no_data")
    assert (item.verdict, item.settled_by) == ("right", "check")
    assert outcome["outcome"] == "answered"


@pytest.mark.parametrize("answer", [
    "The data does show it: the listing has fast wifi.",
    "Is there no record of it? Let me look again.",
    "If the data doesn't show it, I'll ask Ana.",
    "The wifi is fast.",
])
def test_a_positive_asked_or_supposed_phrase_does_not_say_no_data(answer):
    items, _, judged, outcome = grade(key(data_does_not_answer=True), answer)
    assert judged[the(items, "no_data").id]["verdict"] == "missing"
    assert outcome["outcome"] == "incomplete"


@pytest.mark.parametrize("answer, says", [
    ("The payments batch failed this morning.", True),
    ("The batch didn\u2019t go through: two rows broke its input checks.", True),
    ("It did not complete.", True),
    ("The run did not fail; it completed without errors.", False),
])
def test_the_failed_run_in_natural_words(answer, says):
    items, _, judged, _ = grade(key(failed_run=True), answer)
    assert final(the(items, "failed_run"), judged) == ("right" if says else "missing")


# -- 8. powers of ten, definitions, tool descriptions ---------------------------------
MESSAGE = tool({"id": "m-0010", "attachment_name": "proofs_hi_res.pdf", "attachment_mb": 340})


@pytest.mark.parametrize("answer", [
    "The file is 0.34 GB (340 MB, where 1 MB = 10^6 bytes).",
    "That is 340 MB; 1 MB = 10⁶ bytes, so about 0.34 GB.",
    "340 MB (1 MB = 1e6 bytes) is 0.34 GB.",
    "It is 340 MB, i.e. 3.4 × 10^8 bytes.",
    "It is 0.34 GB (1 GB = 1,000 MB).",
])
def test_powers_of_ten_and_unit_definitions_are_no_invented_numbers(answer):
    items, _, _, outcome = grade(key(fact("size", 0.34, "GB")), answer, MESSAGE)
    assert [i for i in items if i.kind == "number"] == []
    assert outcome["outcome"] == "answered", [i.to_dict() for i in items]


def test_a_power_of_ten_no_source_gives_is_still_invented():
    items, _, judged, outcome = grade(key(), "The file is 7 × 10^9 bytes.", MESSAGE)
    assert judged[the(items, "number").id]["verdict"] == "wrong"
    assert outcome["invented_numbers"] == 1


def test_a_number_from_a_tool_description_is_sourced_only_when_that_description_was_seen():
    answer = "Distances are rounded to the nearest 50 m by the service."
    seen = ("Listings with distance in km, rounded to 50 m.",)
    assert grade(key(), answer, tool_descriptions=seen)[0] == []
    items = grade(key(), answer, tool_descriptions=())[0]
    assert the(items, "number").evidence["number"] == "50 m"


def test_the_worlds_own_description_defines_a_megabyte():
    # read_message says "size in MB, 1 MB = 10^6 bytes": repeating it invents nothing.
    items, _, _, _ = grade(key(), "The tool counts sizes in MB: 1 MB = 10^6 bytes.", MESSAGE)
    assert items == []


# -- 9. a forbidden claim is never settled wrong by code ------------------------------
ADDRESS = (ForbiddenClaim(pattern=r"ines\.costa@lindstudio\.pt.{0,40}(works|reach|active)",
                          why="The studio address is closed."),)
CLASH = (ForbiddenClaim(pattern=r"\b(neither|no)\s+(slot\s+)?clash", why="Both slots clash."),)


@pytest.mark.parametrize("answer, verdict", [
    ("Her old address ines.costa@lindstudio.pt is closed, so that address won\u2019t reach her any more.", "right"),
    ("Do not use ines.costa@lindstudio.pt: it no longer works.", "right"),
    ("Does ines.costa@lindstudio.pt still reach her? Please tell me.", "right"),
    ("You can reach her at ines.costa@lindstudio.pt, it works fine.", "wrong"),
    ("Good news: **no clash** on either day.", "wrong"),
])
def test_a_forbidden_claim_is_left_to_the_judge_who_reads_its_stance(answer, verdict):
    entry = key(forbidden=ADDRESS + CLASH)
    items, _, judged, outcome = grade(entry, answer)
    item = the(items, "forbidden")
    assert item.pending and item.settled_by is None
    assert judged[item.id]["verdict"] == verdict
    assert outcome["outcome"] == ("failed" if verdict == "wrong" else "answered")


def test_a_negation_in_another_clause_does_not_negate_the_claim():
    claim = (ForbiddenClaim(pattern=r"\b(was|has been)\s+(refunded|credited)\b", why="Nothing was refunded."),)
    items, _, judged, _ = grade(key(forbidden=claim), "The card hasn't expired, but the fee was refunded.")
    assert judged[the(items, "forbidden").id]["verdict"] == "wrong"


def test_settle_refuses_anything_but_right_from_a_check():
    item = Item(id="x", kind="fact", text="x", allowed=("right", "missing", "wrong"))
    for verdict in ("missing", "wrong"):
        with pytest.raises(ValueError, match="settles only 'right'"):
            settle(item, verdict)
    assert settle(item, "right").verdict == "right"


# -- 10. compound units, earlier turns -------------------------------------------------
LISTING = tool({"id": "L-107", "price_amount": 245000, "price_currency": "EUR", "area_m2": 68})


@pytest.mark.parametrize("answer", [
    "At 245,000 EUR for 68 m², that is \u2248 3,602.94 EUR/m².",
    "Price per m\u00b2: **\u20ac3,602.94/m\u00b2**",
    "About 3\u00a0602,94 \u20ac per m\u00b2.",
    "It works out at 3,602.94 euros per square metre.",
    "- \u2248 3,603 EUR/m2",
    "245,000 EUR / 68 m\u00b2 = 3,602.94 EUR/m\u00b2",
])
def test_a_compound_unit_fact_is_right_in_any_natural_form(answer):
    items, flags, _, outcome = grade(key(fact("per_m2", 3602.94, "EUR/m²")), answer, LISTING)
    assert the(items, "fact").verdict == "right"
    assert flags.form_missing == []
    assert outcome["outcome"] == "answered", [i.to_dict() for i in items]


def test_a_compound_value_without_its_denominator_goes_to_the_judge_which_the_rules_accept():
    # A total where a per-unit value is asked ("3,602.94 EUR" for 3,602.94 EUR/m²) is not
    # certain enough for code (issue 21); the rules read it as the right value without its "per".
    items, _, judged, outcome = grade(key(fact("per_m2", 3602.94, "EUR/m²")), "That is 3,602.94 EUR.", LISTING)
    item = the(items, "fact")
    assert item.pending and item.evidence["per_missing"] == "3,602.94 EUR"
    assert judged[item.id]["verdict"] == "right"
    assert [i for i in items if i.kind == "number"] == []  # the key's value, not an invented number
    assert outcome["outcome"] == "answered"


def test_a_per_unit_value_stated_for_a_total_is_wrong():
    # "288.00 EUR a night" for a four-night total of 288 EUR: the unit's denominator differs.
    items, _, judged, outcome = grade(key(fact("total", 288, "EUR")), "The stay is 288.00 EUR a night.", LISTING)
    item = the(items, "fact")
    assert item.pending and item.evidence["per_mismatch"] == ["288.00 EUR a night"]
    assert judged[item.id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"


def test_a_number_with_a_unit_word_the_reader_does_not_know_is_never_unit_less():
    # "68 square feet" for 68 m²: the right digits with another unit are not a bare number.
    items, flags, judged, outcome = grade(key(fact("area", 68, "m²")), "Floor area: 68 square feet (68 ft²).", LISTING)
    item = the(items, "fact")
    assert item.pending and judged[item.id]["verdict"] == "wrong" and outcome["outcome"] == "failed"
    items, flags, judged, outcome = grade(key(fact("area", 68, "m²")), "Floor area: 68 tatamis.", LISTING)
    item = the(items, "fact")
    assert item.pending and item.evidence["unknown_unit"].startswith("68")
    assert judged[item.id]["unsure"] and judged[item.id]["confidence"] == 0.5  # unsure: the owner decides
    assert flags.form_missing == []
    items, flags, _, outcome = grade(key(fact("area", 68, "m²")), "The floor area is 68.", LISTING)
    assert the(items, "fact").verdict == "right" and flags.form_missing and outcome["outcome"] == "answered"


def test_a_wrong_compound_value_is_wrong_and_the_plain_price_alone_is_missing():
    entry = key(fact("per_m2", 3602.94, "EUR/m²"))
    items, _, judged, _ = grade(entry, "It is about 3,500 EUR/m² (245,000 EUR).", LISTING)
    item = the(items, "fact")
    assert item.evidence["values_of_the_kind"] == ["3,500 EUR/m²"]
    assert judged[item.id]["verdict"] == "wrong"
    items, _, judged, _ = grade(entry, "The price is 245,000 EUR.", LISTING)
    assert judged[the(items, "fact").id]["verdict"] == "missing"


@pytest.mark.parametrize("unit, answer", [
    ("kWh/m²/year", "It uses 120 kWh per m² per year."),
    ("kWh/m²/year", "Energy: 120 kWh/m²/yr"),
    ("km/h", "The average speed is 50 km/h."),
    ("EUR/night", "It costs **\u20ac144** a night."),
])
def test_other_compound_units_match(unit, answer):
    items, _, judged, _ = grade(key(fact("rate", 144 if "night" in unit else 120 if "kWh" in unit else 50, unit)), answer)
    item = the(items, "fact")
    assert (item.verdict or judged[item.id]["verdict"]) == "right"


def test_a_number_shown_in_an_earlier_turn_is_sourced_in_a_later_one():
    earlier = "The office has 68 m² for 245,000 EUR: 245,000 / 68 = 3,602.94 EUR per m²."
    answer = "As computed before, 3,602.94 EUR/m² is above the 3,000 EUR/m² you had in mind."
    items, _, _, _ = grade(key(), answer, user_texts_dummy := LISTING, earlier_answers=[earlier])
    assert [i.evidence["number"] for i in items if i.kind == "number"] == ["3,000 EUR/m²"]
    items, _, _, _ = grade(key(), answer, user_texts_dummy)
    assert {i.evidence["number"] for i in items if i.kind == "number"} == {"3,602.94 EUR/m²", "3,000 EUR/m²"}


# -- 11. a wrong value of the fact's kind is wrong, not missing -----------------------
@pytest.mark.parametrize("entry, answer, expected", [
    (key(fact("distance", 3.4, "km")), "The venue is **4.3 km** away.", "wrong"),
    (key(fact("distance", 3.4, "km")), "The venue is 3,400 m away.", "right"),
    (key(fact("distance", 3.4, "km")), "The venue is close by.", "missing"),
    (key(fact("amount", 144, "EUR")), "The stay costs 144.00 euros.", "right"),
    (key(fact("amount", 144, "EUR")), "The stay costs \u20ac148.", "wrong"),
    (key(fact("left", 1559.09, "EUR")), "* Remaining: **1,559.09\u00a0EUR**", "right"),
    (key(fact("utc", "13:30", "UTC")), "It starts at 15:30 UTC.", "wrong"),
    (key(fact("day", "2026-04-10")), "It is available from 11 April 2026.", "wrong"),
])
def test_a_fact_ends_right_wrong_or_missing_by_what_the_answer_states(entry, answer, expected):
    sources = tool({"distance_km": 3.4, "price": 144, "currency": "EUR", "left": 1559.09})
    items, _, judged, _ = grade(entry, answer, sources)
    assert final(the(items, "fact"), judged) == expected


# -- hypothesis: a right value in any supported form is right; checks settle only right --
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]


def _clock12(dt: datetime) -> str:
    h = dt.hour % 12 or 12
    suffix = "pm" if dt.hour >= 12 else "am"
    return f"{h} {suffix}" if dt.minute == 0 else f"{h}:{dt.minute:02d} {suffix.upper()}"


DATETIME_FORMS = [
    lambda dt: dt.strftime("%Y-%m-%dT%H:%M"),
    lambda dt: f"{WEEKDAYS[dt.weekday()]} {dt.day} {MONTHS[dt.month - 1]} {dt.year}, {dt:%H:%M}",
    lambda dt: f"{dt.day} {MONTHS[dt.month - 1]} at {_clock12(dt)}",
    lambda dt: f"{MONTHS[dt.month - 1]} {dt.day}, {dt.year} at {dt:%H:%M}",
    lambda dt: f"{dt.day:02d}/{dt.month:02d}/{dt.year} {dt.hour}h{dt.minute:02d}",
    lambda dt: f"at {_clock12(dt)} on {WEEKDAYS[dt.weekday()][:3]} {dt.day} {MONTHS[dt.month - 1][:3]}",
]
WRAPPERS = ["{}", "**{}**", "- When: {}", "_{}_", "The new slot is {}."]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(minutes=st.integers(min_value=0, max_value=365 * 24 * 4 - 1), form=st.sampled_from(DATETIME_FORMS),
       wrap=st.sampled_from(WRAPPERS))
def test_property_a_datetime_in_any_supported_form_is_settled_right(minutes, form, wrap):
    dt = datetime(2026, 1, 1) + timedelta(minutes=15 * minutes)
    answer = wrap.format(form(dt))
    items, _ = check_answer(key(fact("when", dt.strftime("%Y-%m-%dT%H:%M"))), answer, tool_texts=[], user_texts=[],
                            escalation_sentence=ESCALATION)
    assert the(items, "fact").verdict == "right", answer
    assert [i for i in items if i.kind == "number"] == [], answer


MONEY_FORMS = [
    lambda v: f"{v:,.2f} EUR", lambda v: f"\u20ac{v:,.2f}", lambda v: f"{v:.2f} euros", lambda v: f"EUR {v:,.2f}",
    lambda v: f"{v:,.2f}\u00a0EUR", lambda v: f"{v:,.2f} \u20ac",
    lambda v: f"{v:,.2f} EUR".replace(",", "\u00a0") if v >= 1000 else f"{v:.2f} EUR",
]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cents=st.integers(min_value=1, max_value=10**8), form=st.sampled_from(MONEY_FORMS),
       wrap=st.sampled_from(WRAPPERS), per=st.sampled_from([None, "m²", "night"]))
def test_property_an_amount_in_any_supported_form_is_settled_right(cents, form, wrap, per):
    value = cents / 100
    written = form(value) + (f"/{per}" if per else "")
    unit = "EUR" + (f"/{per}" if per else "")
    items, flags = check_answer(key(fact("amount", value, unit)), wrap.format(written), tool_texts=[], user_texts=[],
                                escalation_sentence=ESCALATION)
    assert the(items, "fact").verdict == "right", written
    assert flags.form_missing == []


FRAGMENTS = st.sampled_from([
    "The review moved to Friday 20 March 2026, 15:00–16:30.", "It starts at 15:30 UTC.", "It costs 4.3 km.",
    "ines.costa@lindstudio.pt works.", "That address won't reach her any more: ines.costa@lindstudio.pt is closed.",
    "The data doesn't show it.", "The data does show it.", "The batch failed.", "It did not fail.",
    "1 MB = 10^6 bytes.", "\u2248 3,602.94 EUR/m\u00b2", "No clash.", "**\u20ac144**", "13:30", "Is it refunded?",
    "I invented 42 EUR.", "",
])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(FRAGMENTS, min_size=0, max_size=6))
def test_property_nothing_a_check_settles_is_ever_anything_but_right(parts):
    entry = key(fact("start", "2026-03-20T15:00"), fact("utc", "13:30", "UTC"), fact("d", 3.4, "km"),
                fact("per_m2", 3602.94, "EUR/m²"), data_does_not_answer=True, failed_run=True,
                forbidden=ADDRESS + CLASH)
    items, _ = check_answer(entry, " ".join(parts), tool_texts=[], user_texts=[], escalation_sentence=ESCALATION)
    for item in items:
        if item.settled_by == "check":
            assert item.verdict == "right", item.to_dict()
        else:
            assert item.verdict is None, item.to_dict()


@pytest.mark.parametrize("answer", [
    "The fee is not in there; the only Figma charge is 45.00 EUR (13 March).",  # another record's amount
    "The balance is not given, but the limit is 1,500 EUR.",
])
def test_a_value_copied_from_another_record_is_no_evidence_against_the_fact(answer):
    sources = tool({"charges": [{"amount": 45, "currency": "EUR", "created_at": "2026-03-13"}], "limit_eur": 1500})
    items, _, judged, outcome = grade(key(fact("balance", 1457, "EUR")), answer, sources)
    item = the(items, "fact")
    assert item.evidence["values_of_the_kind"] == []
    assert judged[item.id]["verdict"] == "missing" and outcome["outcome"] == "incomplete"


def test_a_value_another_fact_matched_is_no_evidence_against_this_one():
    entry = key(fact("rejected", -45, "EUR"), fact("balance", 1457, "EUR", critical=False))
    items, _, judged, outcome = grade(entry, "Row pay-0105 had -45.00 EUR, so the batch failed.",
                                      tool({"detail": "amount -45.00 EUR is not positive"}))
    balance = next(i for i in items if i.id == "fact:balance")
    assert judged[balance.id]["verdict"] == "missing" and outcome["outcome"] == "incomplete"


def test_a_date_copied_from_another_record_is_no_evidence_against_the_fact():
    sources = tool({"charges": [{"created_at": "2026-03-02T09:00:00+00:00"}, {"created_at": "2026-03-04T09:00:00+00:00"}]})
    items, _, judged, _ = grade(key(fact("cancelled", "2026-03-05")), "Both attempts (2 and 4 March) were declined.",
                                sources)
    assert judged[the(items, "fact").id]["verdict"] == "missing"
    items, _, judged, _ = grade(key(fact("cancelled", "2026-03-05")), "The host cancelled on 6 March.", sources)
    assert judged[the(items, "fact").id]["verdict"] == "wrong"


def test_a_calculation_result_in_markdown_bold_is_shown_and_may_be_repeated():
    answer = "Limit 1,500.00 EUR, spent 1,457.00 EUR, so 1,500.00 \u2212 1,457.00 = **43.00 EUR** left. Above 43 EUR use the Visa."
    items, _, _, outcome = grade(key(), answer, tool({"limit_eur": 1500, "balance_eur": 1457}))
    assert items == [] and outcome["outcome"] == "answered"


def test_a_fact_whose_value_is_an_id_is_stated_by_the_records_name_when_names_are_known():
    from pytest_assistant_eval.suites.calibration.world.names import Names

    names = Names({"contacts": [{"id": "c-helena", "name": "Helena Sousa"}, {"id": "c-tiago", "name": "Tiago Ferreira"}]})
    entry = key(fact("helena", "c-helena", statement="Helena Sousa is invited (with Tiago Ferreira and Mara)."))
    items, _, _, _ = grade(entry, "Invited: **Helena Sousa** and Tiago.", names=names)
    assert the(items, "fact").verdict == "right"
    # Her name as the recipient of another message does not say she is invited (issue 21).
    items, _, judged, _ = grade(entry, "The review moved to 15:00. I wrote to Helena Sousa about the agenda.", names=names)
    item = the(items, "fact")
    assert item.pending and item.evidence["not_settled_because"].startswith("the sentence that names")
    assert judged[item.id]["unsure"]
    items, _, judged, _ = grade(entry, "Invited: Tiago Ferreira.", names=names)
    assert judged[the(items, "fact").id]["verdict"] == "missing"


def test_answer_context_gives_earlier_answers_tools_and_texts_of_a_record():
    from pytest_assistant_eval.suites.calibration.checks.answers import answer_context

    record = {"transcript": [{"type": "user", "turn": 0, "text": "Q1"}, {"type": "tool", "turn": 0, "text": "{}"},
                             {"type": "user", "turn": 1, "text": "Q2"}],
              "turns": [{"turn": 0, "final": "A1"}, {"turn": 1, "final": "A2"}],
              "tools": [{"name": "read_message"}], "state": {}}
    ctx = answer_context(record, 1)
    assert ctx["user_texts"] == ["Q1", "Q2"] and ctx["tool_texts"] == ["{}"] and ctx["earlier_answers"] == ["A1"]
    assert any("10^6" in text for text in ctx["tool_descriptions"])
    assert answer_context(record, 0)["earlier_answers"] == []


# -- from the corpus: a denial of what was shown, and a conclusion that contradicts its source ----
RUN_LOG = tool({"id": "run-16", "status": "failed", "log": "row 2 pay-0105: amount -45.00 EUR fails amounts_positive"})


def test_saying_the_data_does_not_show_a_value_the_assistant_was_shown_is_wrong() -> None:
    entry = key(fact("amount", -45, "EUR"))
    items, _, judged, outcome = grade(entry, "The run failed, but the log doesn't say which payment caused it.", RUN_LOG)
    assert final(the(items, "fact"), judged) == "wrong" and outcome["outcome"] == "failed"


def test_saying_the_data_does_not_show_a_value_never_looked_up_is_only_missing() -> None:
    entry = key(fact("cause", "unusual login"))
    card = tool({"id": "card-visa-4821", "blocked": True, "blocked_since": "2026-03-15"})
    items, _, judged, outcome = grade(entry, "The card was blocked on 15 March; the card record doesn't say why.", card)
    assert final(the(items, "fact"), judged) == "missing" and outcome["outcome"] == "incomplete"


def test_a_conclusion_in_the_asked_unit_that_contradicts_its_source_is_wrong() -> None:
    entry = key(fact("size", 1.5, "GB"))
    archive = tool({"name": "handover_2026.zip", "size_mb": 1500})
    wrong = grade(entry, "The archive is 1,500 MB, so 1,500 / 100 = 15 GB.", archive)
    right = grade(entry, "The archive is 1,500 MB, which is 1.5 GB.", archive)
    source_only = grade(entry, "The archive is 1,500 MB.", archive)
    assert final(the(wrong[0], "fact"), wrong[2]) == "wrong"
    assert the(right[0], "fact").verdict == "right"
    assert the(source_only[0], "fact").verdict == "right"
