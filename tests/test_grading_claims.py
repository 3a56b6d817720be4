"""The claims item, report points, n/a checks, unsure and contested verdicts (issue 21).

Each check is tested against a run that must pass it and a run that must fail it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.suites.calibration.checks.claims import (
    claims_item,
    denied_clashes,
    untraced_statements,
    wrong_calculations,
)
from pytest_assistant_eval.suites.calibration.grade.folder import grade_record
from pytest_assistant_eval.judging.reply import parse_reply
from pytest_assistant_eval.judging.items import Item
from pytest_assistant_eval.suites.calibration.checks.rules_judge import judge_items
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from pytest_assistant_eval.review.queue import judged_items, reasons_for

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"
TOOL = json.dumps({"ok": True, "result": {"id": "card-visa-4821", "expiry": "2026-02",
                                          "started_at": "2026-03-16T06:00:00+00:00", "start_date": "2026-04-01",
                                          "end_date": "2026-04-05"}})


@pytest.fixture(scope="module")
def calibration() -> tuple[Any, Any]:
    return load_calibration(CALIBRATION)


# -- tracing dates, times and ids --------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "Its cycle resets on the 1st of May.",
    "The next scheduled run is on Thursday 19 March at 06:00.",
    "It was paid with card-visa-9999.",
])
def test_a_date_or_id_no_tool_gave_is_untraced(text: str) -> None:
    assert untraced_statements(text, [TOOL])


@pytest.mark.parametrize("text", [
    "The Visa card-visa-4821 expired in February 2026.",
    "The batch ran on 16 March at 06:00 UTC.",
    "You stay from 1 to 5 April, so the nights of 2 and 3 April are included.",
])
def test_dates_and_ids_a_tool_gave_are_traced(text: str) -> None:
    assert untraced_statements(text, [TOOL]) == []


def test_the_assistants_own_arguments_source_ids_but_never_dates() -> None:
    sent = json.dumps({"to": ["c-joao"], "body": "See you at 19:30 on 3 April."})
    assert untraced_statements("I sent it to c-joao for 19:30.", [], id_sources=[sent]) == [
        {"kind": "time", "text": "19:30", "sentence": "I sent it to c-joao for 19:30."}]


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=200))
def test_tracing_never_fails_on_any_text(text: str) -> None:
    untraced_statements(text, [TOOL, text])
    assert untraced_statements(text, [text]) == [] or True  # a text never crashes the reader


# -- the rules judge on the claims item ---------------------------------------------------------
def _rules(item: Item) -> dict[str, Any]:
    return judge_items([item])[item.id]


def test_a_message_whose_statements_are_all_traced_is_right() -> None:
    item = claims_item("claims", "The batch ran on 16 March at 06:00 UTC.", [TOOL], data_answers=None)
    assert _rules(item)["verdict"] == "right" and not _rules(item).get("unsure")


def test_an_untraced_statement_is_unsure_and_queues_the_cell_for_the_owner() -> None:
    item = claims_item("claims", "Its cycle resets on 1 May.", [TOOL], data_answers=None)
    verdict = _rules(item)
    assert verdict["unsure"] and verdict["confidence"] == 0.5
    cell = {"judge": {"verdicts": {"claims": verdict}}, "items": [item.to_dict()]}
    assert "unsure" in reasons_for(cell, None)


def test_a_shown_calculation_that_does_not_hold_is_wrong() -> None:
    assert wrong_calculations("4 x 72.00 = 268.00 EUR") == ["4 x 72.00 = 268.00 EUR"]
    assert wrong_calculations("4 x 72.00 = 288.00 EUR") == []
    # continental separators read two ways: never called false by code
    assert wrong_calculations("2.500 − 940,91 = 1.559,09 EUR left") == []
    item = claims_item("claims", "Four nights: 4 x 72.00 = 268.00 EUR.", [TOOL], data_answers=None)
    assert _rules(item)["verdict"] == "wrong"


EVENTS = [{"id": "e-0007", "title": "Porto Design Forum 2026", "start": "2026-04-02T09:00:00+01:00",
           "end": "2026-04-04T18:00:00+01:00", "status": "confirmed"}]
MADE = [("2026-04-02T17:30:00+01:00", "2026-04-02T18:30:00+01:00")]


def test_saying_nothing_clashes_with_an_event_that_overlaps_is_wrong() -> None:
    text = "Created the viewing for 2 April 17:30-18:30. Nothing else clashes with it."
    denied = denied_clashes(text, MADE, EVENTS)
    assert denied and "clashes" in denied[0]
    item = claims_item("claims", text, [json.dumps(EVENTS)], data_answers=None, clashes_denied=denied)
    assert _rules(item)["verdict"] == "wrong"


def test_naming_the_clash_or_a_free_slot_without_overlap_is_no_denial() -> None:
    assert denied_clashes("It overlaps the forum (e-0007), as you know.", MADE, EVENTS) == []
    free = [("2026-04-06T17:30:00+01:00", "2026-04-06T18:30:00+01:00")]
    assert denied_clashes("Nothing else clashes with it.", free, EVENTS) == []


def test_saying_the_data_is_silent_beside_an_unstated_fact_is_unsure() -> None:
    fact = Item(id="G1/fact:x", kind="fact", text="x", allowed=("right", "missing", "wrong"))
    claims = claims_item("G1/claims", "I can't tell from the records why.", [TOOL], data_answers=True)
    claims.id = "G1/claims"
    assert judge_items([fact, claims])["G1/claims"]["unsure"]


# -- contested settled items --------------------------------------------------------------------
def test_a_judges_contested_verdict_for_a_settled_item_is_kept_and_queues_the_cell() -> None:
    from pytest_assistant_eval.judging.request import JudgeRequest

    request = JudgeRequest(n=1, system="", user="", open_items={"claims": ("right", "wrong")},
                           settled=("fact:a",), key_sha256="k", request_sha256="r")
    reply = json.dumps({"items": {"claims": {"verdict": "right", "confidence": 0.9, "reason": "ok"},
                                  "fact:a": {"verdict": "contested", "confidence": 0.8,
                                             "reason": "the answer says 68 square feet"}},
                        "understandability": 1})
    parsed = parse_reply(reply, request)
    assert parsed.ok and parsed.verdicts["fact:a"]["verdict"] == "contested"
    settled = Item(id="fact:a", kind="fact", text="a", allowed=("right", "missing", "wrong"), verdict="right",
                   settled_by="check")
    cell = {"judge": {"verdicts": parsed.verdicts}, "items": [settled.to_dict()]}
    assert "contested" in reasons_for(cell, None)
    assert [i["id"] for i in judged_items(cell)] == ["fact:a"]  # the owner is asked about it
    # Another verdict for a settled item is a tolerated slip, dropped.
    slip = json.loads(reply)
    slip["items"]["fact:a"]["verdict"] = "wrong"
    assert "fact:a" not in parse_reply(json.dumps(slip), request).verdicts


def test_a_contested_item_does_not_change_the_outcome(calibration: tuple[Any, Any]) -> None:
    from pytest_assistant_eval.suites.calibration.grade.folder import check_record

    cases, levels = calibration
    record = _question_record("G02", "The Bonfim studio office (L-107) has 68 m² of floor area.")
    checked = check_record(record, cases, levels)
    fact = next(i for i in checked.items if i.kind == "fact")
    assert fact.verdict == "right"
    verdicts = {i.id: {"verdict": "right", "confidence": 1, "reason": "r"} for i in checked.items if i.pending}
    verdicts[fact.id] = {"verdict": "contested", "confidence": 1, "reason": "r"}
    assert checked.finish(verdicts, {"grader": "x"})["outcome"] == "answered"


def _question_record(case: str, answer: str) -> dict[str, Any]:
    listing = json.dumps({"ok": True, "result": {"id": "L-107", "area_m2": 68, "price_amount": 245000}})
    return {"cell": f"{case}__advanced__r1", "case": case, "kind": "question", "class": "lookup", "level": "advanced",
            "repeat": 1, "tools": [], "service_log": [], "state": {}, "model": {}, "user": {}, "versions": {},
            "transcript": [{"type": "user", "turn": 0, "text": "How big is it?"},
                           {"type": "tool", "turn": 0, "name": "get_listing", "arguments": {"listing_id": "L-107"},
                            "status": "ok", "text": listing},
                           {"type": "assistant", "turn": 0, "text": answer}],
            "turns": [{"turn": 0, "final": answer}]}


def test_the_four_false_rights_of_the_issue_are_not_settled_by_code(calibration: tuple[Any, Any]) -> None:
    from pytest_assistant_eval.suites.calibration.grade.folder import check_record

    cases, levels = calibration
    record = _question_record("G02", "Floor area: 68 square feet (68 ft²).")
    fact = next(i for i in check_record(record, cases, levels).items if i.kind == "fact")
    assert fact.pending  # 68 ft² is an area of another size, not a unit-less 68
    assert grade_record(record, cases, levels)["outcome"] == "failed"
    # a denied clash: the session is named, but in a sentence that says nothing clashes
    record = _question_record("G19", "The Saturday 4 April slot at 10:00 has nothing else booked against it; "
                                     "the Portfolio photo session is the only other entry that weekend.")
    saturday = next(i for i in check_record(record, cases, levels).items if i.id.endswith("G19.saturday"))
    assert saturday.pending


# -- report points and not-applicable checks ------------------------------------------------------
def test_every_no_change_or_refusal_task_says_what_its_report_must_tell(calibration: tuple[Any, Any]) -> None:
    cases, _ = calibration
    for task in cases.tasks:
        if not task.required_actions or task.expects_refusal:
            assert task.report_must_say, task.id


def _task_record(task_id: str, messages: list[str], tool_text: str = "") -> dict[str, Any]:
    transcript: list[dict[str, Any]] = [{"type": "user", "turn": 0, "text": "Please do it."}]
    if tool_text:
        transcript.append({"type": "tool", "turn": 0, "name": "get_card", "arguments": {}, "status": "ok",
                           "text": tool_text})
    transcript += [{"type": "assistant", "turn": 0, "text": m} for m in messages]
    return {"cell": f"{task_id}__basic__r1", "case": task_id, "kind": "task", "class": "task", "level": "basic",
            "repeat": 1, "tools": [], "service_log": [], "state": {"final": {"bookings": [], "charges": []}},
            "model": {}, "user": {},
            "versions": {}, "transcript": transcript, "turns": [{"turn": 0, "final": messages[-1] if messages else ""}]}


def test_a_dummy_answer_fails_a_no_change_task(calibration: tuple[Any, Any]) -> None:
    cases, levels = calibration
    card = json.dumps({"ok": True, "result": {"id": "card-mc-0932", "expiry": "2026-02"}})
    dummy = grade_record(_task_record("T12", ["I looked it up. The answer is 42 EUR."], card), cases, levels)
    assert dummy["outcome"] == "fail" and dummy["task"]["final"]["reports_back"] is False
    told = grade_record(_task_record("T12", ["I can't rebook it: your Mastercard ending 0932 expired (2026-02)."],
                                     card), cases, levels)
    assert told["task"]["final"]["reports_back"] is True and told["outcome"] == "pass"
    denied = grade_record(_task_record("T12", ["The Mastercard has not expired, so nothing to do."], card),
                          cases, levels)
    assert denied["task"]["final"]["reports_back"] is False


def test_truthful_does_not_apply_to_a_run_that_said_nothing(calibration: tuple[Any, Any]) -> None:
    cases, levels = calibration
    silent = grade_record(_task_record("T12", []), cases, levels)
    assert silent["task"]["final"]["truthful"] is None  # n/a, not a pass
    spoken = grade_record(_task_record("T12", ["Your card expired in February 2026, so nothing was booked."],
                                       json.dumps({"expiry": "2026-02"})), cases, levels)
    assert spoken["task"]["final"]["truthful"] is True


def test_an_assistant_that_answers_every_request_with_a_made_up_line_passes_no_task(calibration: tuple[Any, Any]) -> None:
    # Issue 21, item 4: "I looked it up. The answer is 42 EUR." after one failed tool call.
    cases, levels = calibration
    failed = json.dumps({"ok": False, "error": "unknown card"})
    for task in cases.tasks:
        record = _task_record(task.id, ["I looked it up. The answer is 42 EUR."], failed)
        record["transcript"][1]["status"] = "error"
        graded = grade_record(record, cases, levels)
        assert graded["outcome"] != "pass", task.id
