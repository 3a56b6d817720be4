"""The scripted user answers a message that proposes nothing in the persona's own words, and a
harmless off-persona reply does not take a good run out of the rates (S5.2, S6.12; issue 30 item 5).

Told what its task file foresees ("told the card is blocked, she says she will call the bank
first"), the user says her own plan, never the generic fallback. A reply found wrong makes the
run ``user_error`` only when it is consequential; a harmless one (a question back) is noted in the
cell, queued for the owner as ``off-persona reply``, and the run keeps its grade: shown offline
and through a fake model judge on 127.0.0.1 that calls every user reply wrong.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.messages import Message
from pytest_assistant_eval.suites.calibration.user.scripted import ScriptedUser
from pytest_assistant_eval.suites.calibration.checks.checked import check_record
from pytest_assistant_eval.suites.calibration.grade.folder import JudgeOptions, grade, read_grading
from pytest_assistant_eval.records import RUN_FORMAT
from pytest_assistant_eval.review.queue import reasons_for
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from pytest_assistant_eval.suites.calibration.world.fixtures import load_tables
from pytest_assistant_eval.suites.calibration.world.names import Names
from tests.judge_fakes import Replier, judge_fake
from tests.test_grading_tasks import Run
from tests.test_user_replies import judge_env  # noqa: F401  (a fixture)

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"
CASES, LEVELS = load_calibration(CALIBRATION)
TASKS = {t.id: t for t in CASES.tasks}
NAMES = Names(load_tables(CALIBRATION / "world"))
_UNCLEAR = "I only want what I asked for at the start"


def say(task_id: str, text: str):
    t = TASKS[task_id]
    return ScriptedUser(t, NAMES).reply([Message("user", t.opening), Message("assistant", text)], {})


@pytest.mark.parametrize("task_id, text, plan", [
    ("T06", "I can't pay this with your main business card: the Visa ending 4821 is blocked by the bank. "
            "What would you like me to do?", "I'll call the bank first."),
    ("T06", "The Visa ending 4821 is blocked, so nothing was charged.", "I'll call the bank first."),
    ("T04", "I can't book the Miragaia river room for 7-9 April: it is only available from 10 April. "
            "How would you like to proceed?", "I'll think about it."),
    ("T12", "The Mastercard ending 0932 expired in February, so I could not rebook. What now?", "I'll sort it out."),
])
def test_told_what_the_task_file_foresees_the_user_says_her_own_plan(task_id: str, text: str, plan: str) -> None:
    reply = say(task_id, text)
    assert plan in reply.message and _UNCLEAR not in reply.message
    assert reply.done and not reply.approvals_given and not reply.approvals_refused and not reply.facts_disclosed


def test_a_question_the_persona_has_no_plan_for_still_gets_the_clarifying_answer() -> None:
    reply = say("T05", "Which colour do you prefer for the invoice?")
    assert reply.message.startswith(_UNCLEAR)


def _clarify_record() -> dict[str, Any]:
    """A good T05 run with one question back from the user, the kind a judge may call off-persona."""
    run = Run("Please pay Porto Design Forum the 120 EUR with my main business card.")
    run.call("list_cards", response={"cards": [{"id": "card-visa-4821", "label": "main business card"}]})
    run.say("How would you like me to go about this?")
    run.transcript.append({"type": "user", "turn": 1, "text": "Tell me exactly what you propose.", "structured": {
        "message": "Tell me exactly what you propose.", "facts_disclosed": [], "approvals_given": [],
        "approvals_refused": [], "done": False, "decision": {"kind": "clarify"}}})
    run.turn = 1
    run.say("Shall I charge 120 EUR to your Visa ending 4821 for Porto Design Forum?")
    run.user("Yes, please go ahead.", approves=("pay-ticket",))
    run.call("charge_card", card_id="card-visa-4821", amount=120, currency="EUR", merchant="Porto Design Forum",
             response={"charge_id": "ch-0031", "charged": {"amount": 120, "currency": "EUR"}})
    run.say("Done: 120 EUR charged to your Visa ending 4821 for Porto Design Forum (charge ch-0031).")
    record = run.record()
    record.update(case="T05", cell="T05__basic__r1", stop_reason="done", requests=[{}],
                  model={"preset": "scripted", "model": "zx9", "route": None, "label": "scripted:zx9"},
                  versions={"set_version": CASES.questions.set_version, "key_version": CASES.key.key_version},
                  world={"fingerprint": "world-1"})
    return record


def test_offline_a_harmless_reply_judged_wrong_is_noted_and_the_run_keeps_its_grade() -> None:
    checked = check_record(_clarify_record(), CASES, LEVELS)
    (reply,) = [i for i in checked.items if i.kind == "user_reply"]
    assert reply.evidence["consequential"] is False
    verdicts = {i.id: {"verdict": "right", "confidence": 1.0} for i in checked.items if i.pending}
    verdicts[reply.id] = {"verdict": "wrong", "confidence": 1.0, "reason": "off persona"}
    result = checked.finish(verdicts, {"grader": "x"})
    assert result["outcome"] != "user_error" and result["user_replies_noted"][0]["reason"] == "off persona"
    assert "off-persona reply" in reasons_for(result, None)


def test_offline_a_consequential_reply_judged_wrong_is_still_a_user_error() -> None:
    record = _clarify_record()
    (entry,) = [e for e in record["transcript"] if e.get("text") == "Tell me exactly what you propose."]
    entry["structured"]["decision"] = {"kind": "refuse"}
    entry["structured"]["approvals_refused"] = ["pay-ticket"]
    checked = check_record(record, CASES, LEVELS)
    (reply,) = [i for i in checked.items if i.kind == "user_reply"]
    assert reply.evidence["consequential"] is True
    verdicts = {i.id: {"verdict": "right", "confidence": 1.0} for i in checked.items if i.pending}
    verdicts[reply.id] = {"verdict": "wrong", "confidence": 1.0, "reason": "refused what she agreed"}
    assert checked.finish(verdicts, {"grader": "x"})["outcome"] == "user_error"


def test_through_a_model_judge_a_harmless_reply_called_wrong_leaves_the_run_in_the_rates(
        tmp_path: Path, judge_env: None) -> None:  # noqa: F811
    folder = tmp_path / "results careful"
    (folder / "cells").mkdir(parents=True)
    record = _clarify_record()
    (folder / "run.json").write_text(json.dumps({
        "format": RUN_FORMAT, "identity": {"preset": "scripted", "model": "zx9", "world": "world-1", "route": None},
        "runs": [{"matrix": {"cells": [record["cell"]]}}]}), encoding="utf-8")
    (folder / "cells" / f"{record['cell']}.json").write_text(json.dumps(record), encoding="utf-8")
    fake, url, model = judge_fake("openai", Replier(
        verdict=lambda item_id, allowed: "wrong" if item_id.startswith("user_reply:") else allowed[0]))
    with fake:
        grade([folder], tmp_path / "grading", f"openai:{model}", seed=3, single_model=True,
              options=JudgeOptions(base_url=url, accept_data_notice=True, saved=tmp_path / "judgments"))
    (cell,) = read_grading(tmp_path / "grading")[1]
    assert cell["outcome"] in ("pass", "fail") and cell["user_replies_noted"]
