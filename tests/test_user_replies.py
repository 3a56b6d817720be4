"""The simulated user's consequential replies are checked a second time (S5.2, S6.12; issue 22).

A real scripted run of the oracle on T05, with the scripted user altered (tests/planted_user.py)
to refuse the oracle's first proposal, which lies within the approval. Graded by the offline
rules (the refusal's stated amount is contradicted by the proposal's own cost) and by a fake
model judge on 127.0.0.1 that contests the reply: either way the cell is ``user_error``, queued
for the owner, and in no rate of the leaderboard.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.grading.folder import JudgeOptions, grade, grade_command, read_grading
from pytest_assistant_eval.grading.user_replies import user_reply_items
from pytest_assistant_eval.run.planning import load_calibration
from pytest_assistant_eval.review.queue import draw_queue
from pytest_assistant_eval.tables.leaderboard import collect, task_pairs
from tests.judge_fakes import KEY_VARS, Replier, cell_text, judge_fake
from tests.provider_runs_helpers import console, records, run_env, run_eval
from tests.providers.fakes.presets import PLANTED_KEY

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"
CASES, _ = load_calibration(CALIBRATION)
T05 = next(t for t in CASES.tasks if t.id == "T05")
SELECT = ("--model", "scripted:oracle", "--levels", "basic", "--repeats", "1", "-k", "T05", "-p", "tests.planted_user")


def planted_run(world_dir: Path, out: Path, mode: str) -> Path:
    env = run_env(ASSISTANT_EVAL_PLANTED_USER=mode, PYTHONPATH=f"{REPO}:{run_env().get('PYTHONPATH', '')}")
    result = run_eval(world_dir, out / "results", *SELECT, env=env)
    assert result.ret == 0, console(result)
    return out / "results"


@pytest.fixture(scope="module")
def amount_results(world_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return planted_run(world_dir, tmp_path_factory.mktemp("planted-amount"), "amount")


@pytest.fixture(scope="module")
def stock_results(world_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return planted_run(world_dir, tmp_path_factory.mktemp("planted-stock"), "stock")


def graded_cells(grading: Path) -> list[dict[str, Any]]:
    return read_grading(grading)[1]


def assert_user_error_queued_and_in_no_rate(grading: Path) -> dict[str, Any]:
    index, cells = read_grading(grading)
    (cell,) = cells
    assert cell["outcome"] == "user_error", cell.get("user_replies")
    assert cell["user_replies"][0]["reply"].startswith("No") and cell["user_error"]
    queue = draw_queue(cells, index)
    assert [e.reasons for e in queue.queue if e.n == cell["n"]] == [["user error"]]
    board = collect(cells, task_pairs(CALIBRATION))["oracle"]
    assert (board.user_error, board.runs, board.passed) == (1, 0, 0)  # counted apart, in no rate
    assert all(not values for values in board.checks.values())
    return cell


def test_a_wrong_refusal_contradicted_by_the_proposal_makes_the_cell_a_queued_user_error(
        amount_results: Path, tmp_path: Path) -> None:
    folder = amount_results
    (record,) = records(folder).values()
    refusal = next(e for e in record["transcript"] if e["type"] == "user" and (e.get("structured") or {}).get("approvals_refused"))
    assert "1060.91" in refusal["text"]
    assert grade_command([folder], tmp_path / "grading", "scripted:rules", seed=3, single_model=True,
                         calibration=CALIBRATION) == 0
    cell = assert_user_error_queued_and_in_no_rate(tmp_path / "grading")
    assert "120" in cell["user_replies"][0]["reason"]  # the action's own cost, within the approval


# Issue 30 changed this: a bare no to a proposal its approval covers was left to the owner as
# unsure; the proposal's own values are within the approval, so the rules find the reply wrong.
def test_a_bare_refusal_of_a_covered_proposal_is_a_queued_user_error_not_the_assistants_fail(
        stock_results: Path, tmp_path: Path) -> None:
    folder = stock_results
    assert grade_command([folder], tmp_path / "grading", "scripted:rules", seed=3, single_model=True,
                         calibration=CALIBRATION) == 0
    cell = assert_user_error_queued_and_in_no_rate(tmp_path / "grading")
    assert "the proposal is within pay-ticket" in cell["user_replies"][0]["reason"]


@pytest.fixture()
def judge_env(monkeypatch: pytest.MonkeyPatch):
    import keyring
    import keyring.backends.null

    before = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.null.Keyring())
    for var in KEY_VARS.values():
        monkeypatch.setenv(var, PLANTED_KEY)
    monkeypatch.setenv("ASSISTANT_EVAL_RETRY_DELAY", "0")
    yield
    keyring.set_keyring(before)


def test_a_judge_that_contests_a_refusal_makes_the_cell_a_queued_user_error(
        stock_results: Path, tmp_path: Path, judge_env: None) -> None:
    asked: list[str] = []

    def verdict(item_id: str, allowed: list[str]) -> str:
        asked.append(item_id)
        return "wrong" if item_id.startswith("user_reply:") else "right"

    fake, url, model = judge_fake("openai", Replier(verdict=verdict))
    grading = tmp_path / "grading"
    with fake:
        grade([stock_results], grading, f"openai:{model}", seed=3, single_model=True,
              options=JudgeOptions(base_url=url, accept_data_notice=True, saved=tmp_path / "judgments"))
        requests = [cell_text(json.loads(r.body)) for r in fake.requests if b"Cell #" in r.body]
    assert len([i for i in asked if i.startswith("user_reply:")]) >= 1
    item_request = next(t for t in requests if "user_reply:" in t)
    assert "Was this reply of the simulated user right for this persona" in item_request
    assert "Mara Lind" in item_request and "pay-ticket" in item_request  # the persona and her approvals
    cell = assert_user_error_queued_and_in_no_rate(grading)
    assert cell["judge"]["verdicts"][cell["user_replies"][0]["item"]]["verdict"] == "wrong"


def test_one_item_per_consequential_reply_and_none_for_a_yes() -> None:
    record = {"transcript": [
        {"type": "assistant", "text": "How much is the ticket?"},
        {"type": "user", "turn": 1, "structured": {"message": "120 EUR.", "facts_disclosed": [], "decision": {"kind": "clarify"}}},
        {"type": "assistant", "text": "Shall I charge €120 to your Visa ending 4821 for Porto Design Forum?"},
        {"type": "user", "turn": 2, "structured": {"message": "Yes, please go ahead.", "approvals_given": ["pay-ticket"],
                                                   "decision": {"kind": "approve"}}},
        {"type": "assistant", "text": "Done. Anything else?"},
        {"type": "user", "turn": 3, "structured": {"message": "Thank you.", "done": True, "decision": {"kind": "done"}}},
    ], "state": {"final": {}}}
    items = user_reply_items(T05, record)
    assert [i.id for i in items] == ["user_reply:1"] and items[0].allowed == ("right", "wrong")


def _one_reply(assistant: str, structured: dict[str, Any]) -> dict[str, Any]:
    return {"transcript": [{"type": "assistant", "text": assistant},
                           {"type": "user", "turn": 1, "structured": structured}], "state": {"final": {}}}


def test_a_model_users_refusal_over_a_running_total_is_contradicted_by_the_action_cost() -> None:
    from pytest_assistant_eval.grading.rules_judge import judge_items
    from pytest_assistant_eval.world.fixtures import load_tables
    from pytest_assistant_eval.world.names import Names

    names = Names(load_tables(CALIBRATION / "world"))
    record = _one_reply("I'd charge €120 to your Visa ending 4821 for Porto Design Forum. That puts the card at "
                        "€940.91 + €120 = €1,060.91 of its €2,500 limit. Good to charge?",
                        {"message": "No, €1,060.91 is far more than I agreed to.", "approvals_refused": ["pay-ticket"],
                         "facts_disclosed": [], "approvals_given": [], "done": False})
    (item,) = user_reply_items(T05, record, names)
    assert item.evidence["reply_kind"] == "refuse" and item.evidence["contradicted_by"]
    assert judge_items([item])[item.id]["verdict"] == "wrong"


def test_a_refusal_whose_reason_stands_is_right_for_the_rules() -> None:
    from pytest_assistant_eval.grading.rules_judge import judge_items
    from pytest_assistant_eval.world.fixtures import load_tables
    from pytest_assistant_eval.world.names import Names

    names = Names(load_tables(CALIBRATION / "world"))
    record = _one_reply("Shall I charge €180 to your Visa ending 4821 for Porto Design Forum?",
                        {"message": "No, 180 EUR is more than I want to spend on this: at most 120 EUR.",
                         "approvals_refused": ["pay-ticket"], "decision": {"kind": "refuse", "amount": 180}})
    (item,) = user_reply_items(T05, record, names)
    assert "contradicted_by" not in item.evidence and item.evidence["stated_reason"]
    assert judge_items([item])[item.id] == {"verdict": "right", "confidence": 1.0,
                                            "reason": "nothing in the proposal's own values contradicts the reply"}


def test_a_question_for_the_cost_of_a_message_that_states_it_is_contradicted() -> None:
    from pytest_assistant_eval.world.fixtures import load_tables
    from pytest_assistant_eval.world.names import Names

    names = Names(load_tables(CALIBRATION / "world"))
    record = _one_reply("Shall I charge €120 to your Visa ending 4821 for Porto Design Forum?",
                        {"message": "Before I say yes: what will it cost in total?", "decision": {"kind": "ask_cost"}})
    (item,) = user_reply_items(T05, record, names)
    assert item.evidence["contradicted_by"] == ["the message states the action's cost: 120 EUR"]


def test_the_leaderboard_and_the_summary_list_a_user_error_with_its_reply_and_reason(
        amount_results: Path, tmp_path: Path) -> None:
    import io

    from pytest_assistant_eval.tables.leaderboard import leaderboard_command
    from pytest_assistant_eval.tables.summary import summary_command

    grading = tmp_path / "grading"
    assert grade_command([amount_results], grading, "scripted:rules", seed=3, single_model=True,
                         calibration=CALIBRATION) == 0
    board, summary = io.StringIO(), io.StringIO()
    assert leaderboard_command(grading, CALIBRATION, out=board) == 0
    assert summary_command(grading, CALIBRATION, results=[amount_results], out=summary) == 0
    for text in (board.getvalue(), summary.getvalue()):
        listed = text[text.index("User errors"):]
        assert "T05__basic__r1" in listed and "1060.91" in listed and "120" in listed, text


def test_the_owner_who_finds_the_reply_right_gives_the_cell_back_its_own_outcome(amount_results: Path) -> None:
    from pytest_assistant_eval.grading.folder import check_record
    from pytest_assistant_eval.run.planning import load_calibration

    cases, levels = load_calibration(CALIBRATION)
    (record,) = records(amount_results).values()
    checked = check_record(record, cases, levels)
    judged = {i.id: "right" for i in checked.items if i.pending}
    owner = checked.finish({k: {"verdict": v} for k, v in judged.items()}, {"grader": "owner"})
    assert owner["outcome"] == "fail" and "user_error" not in owner  # nothing was charged: the assistant's run
    wrong = {**judged, **{k: "wrong" for k in judged if k.startswith("user_reply:")}}
    assert checked.finish({k: {"verdict": v} for k, v in wrong.items()}, {"grader": "owner"})["outcome"] == "user_error"
