"""The answer checks of question turns (S6.1, S6.2, S6.3), each shown by an answer
that must pass it and one that must not.

Every test builds a tiny key entry and the tool results the assistant saw, runs
``check_answer``, lets the offline rules judge settle what is left, and reads the
outcome: the same path ``grade-ai`` takes for one turn.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.suites.calibration.cases.model import Derivation, Fact, ForbiddenClaim, KeyEntry
from pytest_assistant_eval.suites.calibration.checks.answers import AnswerFlags, check_answer, sources_of, tool_description_texts
from pytest_assistant_eval.judging.items import Item
from pytest_assistant_eval.suites.calibration.checks.outcomes import question_outcome
from pytest_assistant_eval.suites.calibration.readers.compare import is_constant
from pytest_assistant_eval.suites.calibration.readers.numbers import find_quantities
from pytest_assistant_eval.suites.calibration.readers.sources import is_sourced
from pytest_assistant_eval.suites.calibration.checks.rules_judge import judge_items

ESCALATION = "This question goes beyond what I can settle here, so I am handing it to a human colleague."


def fact(fid: str, value: Any, unit: str | None, *, critical: bool = True, statement: str = "") -> Fact:
    return Fact(id=fid, statement=statement or f"(key statement of {fid})", value=value, unit=unit, critical=critical,
                derivation=Derivation(sql="SELECT 1"))


def key(*facts: Fact, **kwargs: Any) -> KeyEntry:
    return KeyEntry(question_id="Q", facts=tuple(facts), **kwargs)


def tool(data: Any) -> str:
    """A tool result as the assistant sees it."""
    return json.dumps({"ok": True, "result": data})


def grade(entry: KeyEntry, answer: str, *tool_texts: str, user_texts: tuple[str, ...] = ()
          ) -> tuple[list[Item], AnswerFlags, dict[str, Any], dict[str, Any]]:
    items, flags = check_answer(entry, answer, tool_texts=list(tool_texts), user_texts=list(user_texts),
                                escalation_sentence=ESCALATION)
    # The ``claims`` item every answer carries has its own tests (tests/test_grading_claims.py):
    # here it is left out, so each test reads the items of its own subject.
    items = [i for i in items if i.kind != "claims"]
    judged = judge_items(items)
    outcome = question_outcome(items, flags, {k: v["verdict"] for k, v in judged.items() if v["verdict"]})
    return items, flags, judged, outcome


def only(items: list[Item], kind: str) -> Item:
    found = [i for i in items if i.kind == kind]
    assert len(found) == 1, [i.to_dict() for i in items]
    return found[0]


# -- facts, units and SI prefixes ----------------------------------------------------
def test_a_fact_stated_with_another_si_prefix_is_settled_right_by_the_check():
    items, flags, judged, outcome = grade(key(fact("distance", 1200, "m")), "The room is 1.2 km away.",
                                          tool({"distance_km": 1.2}))
    item = only(items, "fact")
    assert (item.verdict, item.settled_by) == ("right", "check")
    assert judged == {}
    assert outcome["outcome"] == "answered"


def test_a_fact_stated_with_the_wrong_prefix_is_left_to_the_judge_who_calls_it_wrong():
    items, _, judged, outcome = grade(key(fact("energy", 3, "kWh")), "It uses 3 MWh a year.",
                                      tool({"energy_kwh": 3}))
    item = only(items, "fact")
    assert item.pending
    assert item.evidence["numbers_with_the_unit"] == ["3 MWh a year"]
    assert judged[item.id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"


@pytest.mark.parametrize("written", ["1,050 EUR", "1050 EUR", "1 050 EUR", "1\u00a0050 EUR", "EUR 1,050.00"])
def test_thousands_separators_write_one_number(written):
    items, _, _, outcome = grade(key(fact("price", 1050, "EUR")), f"It costs {written}.",
                                 tool({"price": 1050, "currency": "EUR"}))
    assert only(items, "fact").verdict == "right"
    assert outcome["outcome"] == "answered"


def test_a_single_dot_is_a_decimal_point_so_1_050_eur_is_not_settled_as_the_fact_but_not_certain_wrong():
    # Issue 30, fifth round: "1.050" reads 1.05 and, with a dot group, 1050 (the fact's value): it
    # does not read one way, so code neither settles it right nor calls it a contradiction (before: wrong).
    items, _, judged, outcome = grade(key(fact("price", 1050, "EUR")), "It costs 1.050 EUR.",
                                      tool({"price": 1050, "currency": "EUR"}))
    item = only(items, "fact")
    assert item.pending and item.evidence["values_not_read_one_way"] == ["1.050 EUR"]
    assert judged[item.id].get("unsure") and outcome["outcome"] != "failed"


def test_a_right_value_without_its_unit_is_right_with_form_missing_not_incomplete():
    entry = key(fact("distance", 350, "m", statement="The river room is 350 m from the venue."))
    items, flags, _, outcome = grade(entry, "The room is 350 from the venue.", tool({"distance_km": 0.35}))
    assert only(items, "fact").verdict == "right"
    assert flags.form_missing and flags.form_missing[0].startswith("distance:")
    assert outcome["outcome"] == "answered"
    assert outcome["invented_numbers"] == 0
    assert outcome["form_missing"] == flags.form_missing


def test_a_right_value_with_a_wrong_unit_fails():
    items, flags, judged, outcome = grade(key(fact("distance", 350, "m")), "The room is 350 km from the venue.",
                                          tool({"distance_km": 0.35}))
    assert flags.form_missing == []
    assert judged[only(items, "fact").id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"


def test_the_key_value_of_a_derived_fact_is_not_an_invented_number():
    # The key derives the total (120 + 292.50); an answer that states it without the
    # calculation is right, and the number is the key's, not invented.
    entry = key(fact("total", 412.5, "EUR"))
    _, _, _, outcome = grade(entry, "The total is 412.50 EUR.", tool({"a": {"price": 120, "currency": "EUR"},
                                                                     "b": {"price": 292.5, "currency": "EUR"}}))
    assert outcome["outcome"] == "answered"
    assert outcome["invented_numbers"] == 0


def test_a_yes_no_fact_goes_to_the_judge():
    items, _, _, _ = grade(key(fact("active", True, None)), "Yes, the contact is active.")
    assert only(items, "fact").pending


def test_the_keys_own_statement_word_for_word_is_right():
    entry = key(fact("seller", "Ana Costa", None, statement="The seller is Ana Costa."))
    items, _, _, _ = grade(entry, "the seller is ana costa")
    assert only(items, "fact").verdict == "right"


# -- provenance of numbers ------------------------------------------------------------
def test_a_number_no_tool_gave_is_an_item_the_rules_judge_calls_invented():
    items, _, judged, outcome = grade(key(), "The cleaning fee is 42 EUR.", tool({"fee": 40, "currency": "EUR"}))
    number = only(items, "number")
    assert number.allowed == ("right", "wrong")
    assert number.evidence["number"] == "42 EUR"
    assert judged[number.id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"
    assert outcome["invented_numbers"] == 1


def test_a_number_a_tool_gave_is_not_flagged():
    items, _, _, outcome = grade(key(), "The cleaning fee is 40 EUR.", tool({"fee": 40, "currency": "EUR"}))
    assert items == []
    assert outcome["outcome"] == "answered"


def test_a_number_the_user_gave_is_sourced():
    items, _, _, _ = grade(key(), "Your budget of 300 EUR covers it.", user_texts=("My budget is 300 EUR.",))
    assert items == []


def test_a_shown_calculation_and_a_constant_are_not_flagged():
    answer = "Together 120 + 292.50 = 412.50 EUR; the office is open 7 days a week and 24 hours a day."
    items, _, _, outcome = grade(key(), answer, tool({"a": 120, "b": 292.5}))
    assert items == []
    assert outcome["outcome"] == "answered"


def test_a_calculation_that_does_not_hold_leaves_its_result_unsourced():
    items, _, judged, _ = grade(key(), "Together 120 + 292.50 = 500 EUR.", tool({"a": 120, "b": 292.5}))
    number = only(items, "number")
    assert number.evidence["number"] == "500 EUR"
    assert judged[number.id]["verdict"] == "wrong"


def test_digits_inside_ids_of_tool_results_count_as_seen():
    seen = tool({"card": "card-amex-7710", "booking": "BK-2041"})
    assert grade(key(), "The card number ends 7710, booking number 2041.", seen)[0] == []
    items = grade(key(), "The card number is 7711.", seen)[0]
    assert only(items, "number").evidence["number"] == "7711"


# -- forbidden claims -----------------------------------------------------------------
FORBIDDEN = (ForbiddenClaim(pattern=r"\bpaid in full\b", why="the booking was only half paid"),)


def test_a_forbidden_claim_clearly_asserted_is_left_to_the_judge_who_calls_it_wrong():
    items, _, judged, outcome = grade(key(forbidden=FORBIDDEN), "The booking was paid in full.")
    item = only(items, "forbidden")
    assert item.pending  # S6.1: a check settles only right
    assert item.evidence["clearly_asserted"] is True
    assert judged[item.id]["verdict"] == "wrong"
    assert outcome["outcome"] == "failed"


def test_a_negated_forbidden_claim_goes_to_the_judge_who_calls_it_right():
    items, _, judged, outcome = grade(key(forbidden=FORBIDDEN), "The booking was never paid in full. Half is open.")
    item = only(items, "forbidden")
    assert item.pending
    assert item.evidence["sentence"] == "The booking was never paid in full."
    assert judged[item.id]["verdict"] == "right"
    assert outcome["outcome"] == "answered"


# -- the data does not answer, the failed run --------------------------------------------
def test_saying_the_data_does_not_answer_is_settled_right():
    items, _, _, outcome = grade(key(data_does_not_answer=True), "The data does not answer this question.")
    assert only(items, "no_data").verdict == "right"
    assert outcome["outcome"] == "answered"


def test_not_saying_the_data_does_not_answer_is_missing():
    items, _, judged, outcome = grade(key(data_does_not_answer=True), "It is probably on Tuesday.")
    assert judged[only(items, "no_data").id]["verdict"] == "missing"
    assert outcome["outcome"] == "incomplete"


def test_saying_the_run_failed_is_settled_right():
    items, _, _, outcome = grade(key(failed_run=True), "The second bank sync failed in its input checks.")
    assert only(items, "failed_run").verdict == "right"
    assert outcome["outcome"] == "answered"


def test_not_saying_the_run_failed_is_missing():
    items, _, judged, outcome = grade(key(failed_run=True), "The bank sync ran on Monday morning.")
    assert judged[only(items, "failed_run").id]["verdict"] == "missing"
    assert outcome["outcome"] == "incomplete"


# -- escalation, empty answers, critical facts -----------------------------------------
def test_the_levels_escalation_sentence_escalates_without_fact_items():
    items, flags, _, outcome = grade(key(fact("x", 5, "km")), "Thanks.\n" + ESCALATION.replace(" ", "  "))
    assert flags.escalated
    assert [i for i in items if i.kind == "fact"] == []
    assert outcome["outcome"] == "escalated"


def test_a_paraphrased_hand_over_is_no_escalation():
    items, flags, _, outcome = grade(key(fact("x", 5, "km")), "I will pass this to a colleague.")
    assert not flags.escalated
    assert outcome["outcome"] == "incomplete"


def test_an_escalation_that_also_states_something_wrong_fails():
    entry = key(forbidden=FORBIDDEN)
    _, flags, _, outcome = grade(entry, "The booking was paid in full. " + ESCALATION)
    assert flags.escalated
    assert outcome["outcome"] == "failed"


@pytest.mark.parametrize("answer", ["", "   \n\t"])
def test_an_empty_answer_fails_with_no_answer_and_asks_no_judge(answer):
    items, flags, judged, outcome = grade(key(fact("x", 5, "km")), answer)
    assert items == [] and judged == {}
    assert flags.no_answer
    assert outcome["outcome"] == "failed" and outcome["no_answer"] is True


def test_a_non_empty_answer_is_not_no_answer():
    _, flags, _, outcome = grade(key(fact("x", 5, "km")), "I do not know.")
    assert not flags.no_answer and outcome["no_answer"] is False


def test_critical_missing_lists_critical_facts_only():
    entry = key(fact("distance", 5, "km", critical=True), fact("fee", 7, "EUR", critical=False))
    items, _, _, outcome = grade(entry, "I could not work it out.")
    assert {i.id for i in items} == {"fact:distance", "fact:fee"}
    assert outcome["outcome"] == "incomplete"
    assert outcome["critical_missing"] == ["fact:distance"]


def test_critical_missing_is_empty_when_only_a_minor_fact_is_missing():
    entry = key(fact("distance", 5, "km", critical=True), fact("fee", 7, "EUR", critical=False))
    _, _, _, outcome = grade(entry, "It is 5 km away.", tool({"distance_km": 5}))
    assert outcome["outcome"] == "incomplete"
    assert outcome["critical_missing"] == []


# -- hypothesis: provenance --------------------------------------------------------------
CONVERSIONS = {  # key suffix -> [(stated unit, factor from the key's unit)]
    "km": [("km", 1.0), ("m", 1000.0)],
    "kwh": [("kWh", 1.0), ("MWh", 0.001)],
    "mb": [("MB", 1.0), ("GB", 0.001)],
}

keys = st.sampled_from(sorted(CONVERSIONS))
values = st.decimals(min_value="0.5", max_value="99999", places=2, allow_nan=False, allow_infinity=False)


@st.composite
def tool_results(draw):
    """A random tool result: a few named quantities, nested, plus noise fields."""
    # Plain words as names: a name that is itself a unit token ("ha_km") would name two units.
    names = st.sampled_from(["distance", "energy", "size", "usage", "total", "room", "attachment", "backup"])
    fields = draw(st.dictionaries(names, st.tuples(keys, values), min_size=1, max_size=5))
    data = {f"{name}_{suffix}": float(value) for name, (suffix, value) in fields.items()}
    data["id"] = draw(st.from_regex(r"L-[0-9]{3}", fullmatch=True))
    data["details"] = {"note": draw(st.sampled_from(["", "quiet street", "near the river"]))}
    return data


def _format(value: float) -> str:
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tool_results(), pick=st.data())
def test_property_any_number_taken_from_a_tool_result_is_sourced(data, pick):
    name = pick.draw(st.sampled_from(sorted(k for k in data if k not in ("id", "details"))))
    suffix = name.rsplit("_", 1)[1]
    unit, factor = pick.draw(st.sampled_from(CONVERSIONS[suffix]))
    stated = _format(data[name] * factor)
    answer = f"The value is {stated} {unit}."
    items, _ = check_answer(key(), answer, tool_texts=[tool(data)], user_texts=[], escalation_sentence=ESCALATION)
    assert [i for i in items if i.kind == "number"] == [], (answer, data)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tool_results(), number=st.integers(min_value=100_001, max_value=999_999))
def test_property_a_number_in_no_result_and_no_constant_is_flagged(data, number):
    sources = sources_of([tool(data)], [], tool_description_texts())  # the tools' descriptions are seen too
    (q,) = find_quantities(f"{number}")
    if is_sourced(q, sources) or is_constant(q):
        return  # drawn onto a real source by chance
    items, _ = check_answer(key(), f"The value is {number}.", tool_texts=[tool(data)], user_texts=[],
                            escalation_sentence=ESCALATION)
    flagged = [i for i in items if i.kind == "number"]
    assert len(flagged) == 1 and flagged[0].evidence["number"] == str(number)


def test_a_bare_number_about_something_else_does_not_state_a_fact():
    # "Rua de Miguel Bombarda 45" is an address, not the talk's 45 minutes (issue 21).
    entry = key(fact("minutes", 45, "min", statement="The talk lasts 45 minutes, 14:30-15:15 on 3 April."))
    answer = "The talk runs from 14:30 to 15:15, which is 75 minutes. The photo session is at Rua de Miguel Bombarda 45."
    items, flags, judged, outcome = grade(entry, answer, tool({"duration_minutes": 45, "address": "Rua de Miguel Bombarda 45"}))
    item = only(items, "fact")
    assert item.pending and flags.form_missing == []
    assert judged[item.id]["verdict"] == "wrong" and outcome["outcome"] == "failed"
