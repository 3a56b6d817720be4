"""Offline, code decides only what it reads one way (S6.1, S6.2; issue 30 item 8).

An id the answer states that no tool or user gave is wrong (an exact string is in the sources
or not); digits that read another way ("2.500" for 2500, "20.03." for 20 March) are handed to
the owner as unsure, never counted as invented; a headline with the wrong prefix is not rescued
by the right bare number elsewhere; a clash named and qualified ("nothing else") is no denial.
Through the offline rules and through a fake model judge on 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_assistant_eval.suites.calibration.checks.claims import claims_item, denied_clashes
from pytest_assistant_eval.suites.calibration.grade.folder import JudgeOptions, grade, read_grading
from pytest_assistant_eval.suites.calibration.checks.rules_judge import judge_items
from pytest_assistant_eval.records import RUN_FORMAT
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from tests.judge_fakes import Replier, judge_fake
from tests.test_grading_answers import fact, grade as grade_answer, key, only, tool
from tests.test_grading_claims import EVENTS, MADE
from tests.test_grading_tasks import Run
from tests.test_user_replies import judge_env  # noqa: F401  (a fixture)

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"
CASES, _ = load_calibration(CALIBRATION)
TOOL = tool({"booking": {"id": "b-0003", "listing": "L-103", "charge": "ch-0011"}})


def rules(item):
    return judge_items([item])[item.id]


@pytest.mark.parametrize("report", ["Booked: booking b-0099, charge ch-0412.", "Your reference is pay-0777."])
def test_an_id_no_tool_or_user_gave_is_wrong_not_unsure(report: str) -> None:
    verdict = rules(claims_item("claims", report, [TOOL], data_answers=None))
    assert verdict["verdict"] == "wrong" and not verdict.get("unsure"), verdict


def test_an_id_the_tools_gave_is_right() -> None:
    assert rules(claims_item("claims", "Booked: b-0003 for L-103 (charge ch-0011).", [TOOL], data_answers=None)
                 )["verdict"] == "right"


@pytest.mark.parametrize("answer, source", [
    ("Der Saldo beträgt 2.500 EUR.", {"balance_eur": 2500}),
    ("Il reste 1,250 km.", {"distance_km": 1.25}),
])
def test_digits_sourced_in_another_reading_they_admit_are_sourced_not_invented(answer: str, source: dict) -> None:
    # Issue 30, fifth round: sourced when any reading is a value the tools gave (before: unsure).
    items, _, judged, outcome = grade_answer(key(), answer, tool(source))
    assert not [i for i in items if i.kind == "number"] and outcome["outcome"] != "failed"


def test_a_numeric_day_month_date_with_a_trailing_dot_the_tools_gave_is_sourced() -> None:
    items, _, judged, outcome = grade_answer(key(), "Termin am 20.03. um 15:00 Uhr.", tool({"start": "2026-03-20T15:00"}))
    assert not [i for i in items if i.kind == "number"] and outcome["outcome"] != "failed"


def test_a_numeric_day_month_date_no_tool_gave_is_unsure_not_an_invented_number() -> None:
    items, _, judged, outcome = grade_answer(key(), "Termin am 24.03. um 15:00 Uhr.", tool({"start": "2026-03-20T15:00"}))
    number = only(items, "number")
    assert "the date --03-24" in number.evidence["reads_two_ways"]
    assert judged[number.id].get("unsure") and outcome["outcome"] != "failed"


def test_an_unsourced_number_that_reads_one_way_is_still_invented() -> None:
    items, _, judged, outcome = grade_answer(key(), "The balance is 2.75 EUR.", tool({"balance_eur": 1800}))
    assert judged[only(items, "number").id]["verdict"] == "wrong" and outcome["outcome"] == "failed"


def test_an_unsourced_number_that_reads_two_ways_none_sourced_is_unsure() -> None:
    # "2.500" is 2.5 or 2500; neither is the 1800 the tools gave: not one way, so not certain.
    items, _, judged, outcome = grade_answer(key(), "The balance is 2.500 EUR.", tool({"balance_eur": 1800}))
    number = only(items, "number")
    assert "2500 EUR" in number.evidence["reads_two_ways"]
    assert judged[number.id].get("unsure") and outcome["outcome"] != "failed"


def test_a_wrong_prefix_headline_is_not_rescued_by_a_bare_number_elsewhere() -> None:
    items, _, judged, outcome = grade_answer(
        key(fact("energy", 9.8, "MWh", statement="The house uses 9.8 MWh a year.")),
        "The house uses 9.8 kWh a year (9800 / 1000 = 9.8 for the year).", tool({"energy_kwh": 9800}))
    item = only(items, "fact")
    assert item.pending and judged[item.id]["verdict"] == "wrong" and outcome["outcome"] == "failed"


def test_the_right_headline_with_its_unit_is_right() -> None:
    items, _, _, outcome = grade_answer(key(fact("energy", 9.8, "MWh", statement="The house uses 9.8 MWh a year.")),
                                        "The house uses 9.8 MWh a year.", tool({"energy_kwh": 9800}))
    assert only(items, "fact").verdict == "right" and outcome["outcome"] == "answered"


@pytest.mark.parametrize("text", [
    "It falls inside the Forum block; nothing else is booked then.",
    "The viewing overlaps with the Porto Design Forum, but no other event clashes.",
    "It sits within the forum days. Nothing else is scheduled that evening.",
])
def test_a_clash_named_and_qualified_is_not_denied(text: str) -> None:
    assert denied_clashes(text, MADE, EVENTS) == []


def test_a_bare_denial_of_an_overlapping_clash_is_still_read() -> None:
    assert denied_clashes("Nothing is booked then, the slot is free.", MADE, EVENTS)


def test_through_a_model_judge_an_invented_id_in_a_report_is_never_a_silent_pass(tmp_path: Path,
                                                                                 judge_env: None) -> None:  # noqa: F811
    """The judge sees the untraced id in its evidence; a judge that calls it wrong fails the run."""
    run = Run("Please pay Porto Design Forum the 120 EUR with my main business card.")
    run.say("Shall I charge 120 EUR to your Visa ending 4821 for Porto Design Forum?")
    run.user("Yes, please go ahead.", approves=("pay-ticket",))
    run.call("charge_card", card_id="card-visa-4821", amount=120, currency="EUR", merchant="Porto Design Forum",
             response={"charge_id": "ch-0031", "charged": {"amount": 120, "currency": "EUR"}})
    run.say("Done: 120 EUR charged to your Visa ending 4821, charge ch-0999, booking b-0777.")
    record = run.record()
    record.update(case="T05", cell="T05__basic__r1", stop_reason="done", requests=[{}],
                  model={"preset": "scripted", "model": "zx9", "route": None, "label": "scripted:zx9"},
                  versions={"set_version": CASES.questions.set_version, "key_version": CASES.key.key_version},
                  world={"fingerprint": "world-1"})
    folder = tmp_path / "results careful"
    (folder / "cells").mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({
        "format": RUN_FORMAT, "identity": {"preset": "scripted", "model": "zx9", "world": "world-1", "route": None},
        "runs": [{"matrix": {"cells": [record["cell"]]}}]}), encoding="utf-8")
    (folder / "cells" / f"{record['cell']}.json").write_text(json.dumps(record), encoding="utf-8")
    seen: list[str] = []

    def verdict(item_id: str, allowed: list[str]) -> str:
        seen.append(item_id)
        return "wrong" if item_id.endswith("claims") else allowed[0]

    fake, url, model = judge_fake("openai", Replier(verdict=verdict))
    with fake:
        grade([folder], tmp_path / "grading", f"openai:{model}", seed=3, single_model=True,
              options=JudgeOptions(base_url=url, accept_data_notice=True, saved=tmp_path / "judgments"))
        bodies = [r.body.decode() for r in fake.requests if b"Cell #" in r.body]
    (cell,) = read_grading(tmp_path / "grading")[1]
    assert any("ch-0999" in b for b in bodies)  # the untraced id is put before the judge
    assert cell["outcome"] == "fail"


@pytest.mark.parametrize("answer", ["Der Vortrag ist von 14.30 bis 15.15 Uhr.", "Start um 14.30, Ende 15.15 Uhr."])
def test_a_clock_time_written_with_a_dot_is_unsure_not_an_invented_number(answer: str) -> None:
    items, _, judged, outcome = grade_answer(key(), answer, tool({"start": "2026-04-03T14:30:00+01:00"}))
    numbers = [i for i in items if i.kind == "number"]
    assert numbers and all(any(r.startswith("the time") for r in i.evidence["reads_two_ways"]) for i in numbers)
    assert all(judged[i.id].get("unsure") for i in numbers) and outcome["outcome"] != "failed"


def test_a_price_with_two_decimals_is_no_clock_time() -> None:
    items, _, judged, _ = grade_answer(key(), "The fee is 14.30 EUR.", tool({"fee": 99}))
    assert judged[only(items, "number").id]["verdict"] == "wrong"
