"""One grade per cell (issue 29, item 1): every figure reads a cell's final grade from one place.

The owner's grade where the cell was reviewed, else the judge's, else it waits (counted apart).
A real grading of two reference assistants is reviewed by the scripted owner; then the owner
changes one task cell's grade through the review's own rules (``review.grade.owner_grade``), and
the leaderboard, the summary, the recorded lines calibrate counts and the report's header and
board all move by that one cell, together.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from graded_helpers import CALIBRATION, run_and_grade
from pytest_assistant_eval.review.command import ReviewOptions, review_command
from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in
from pytest_assistant_eval.tables.leaderboard import leaderboard_command
from pytest_assistant_eval.tables.summary import summary_command

MODEL = "oracle"


@pytest.fixture(scope="module")
def graded_base(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> Path:
    base = tmp_path_factory.mktemp("one-grade")
    run_and_grade(base, world_dir, (MODEL, "guesses-facts"), seed=5, select="T0 and basic")
    return base


@pytest.fixture()
def grading(graded_base: Path, tmp_path: Path) -> Path:
    shutil.copytree(graded_base, tmp_path / "copy")
    return tmp_path / "copy" / "grading"


def figures(grading: Path, tmp_path: Path) -> dict[str, int]:
    """The passing task runs of MODEL as each figure gives them."""
    got: dict[str, int] = {}
    out = io.StringIO()
    assert leaderboard_command(grading, CALIBRATION, out, fmt="json") == 0
    (row,) = [r for r in json.loads(out.getvalue()) if r["assistant"] == MODEL]
    got["leaderboard"] = row["tasks_completed_k"]
    out = io.StringIO()
    assert summary_command(grading, CALIBRATION, out=out, fmt="json") == 0
    got["summary"] = sum(r["pass"] for r in json.loads(out.getvalue()) if r["model"] == MODEL and r["kind"] == "task")
    results = tmp_path / f"results-{len(list(tmp_path.glob('results-*')))}.jsonl"
    assert summary_command(grading, CALIBRATION, record=True, results_file=results, out=io.StringIO()) == 0
    from pytest_assistant_eval.tables.results_file import latest, read_lines
    from pytest_assistant_eval.tables.tally import tally

    lines = [ln for ln in latest(read_lines(results).lines) if ln["model"] == MODEL and ln["kind"] == "task"]
    got["calibrate"] = tally(lines).outcomes["pass"]  # calibrate counts the recorded lines through tally
    from pytest_assistant_eval.tables.report import build_report

    page = build_report(grading, CALIBRATION)
    header = re.search(r'<p class="outcomes">(.*?)</p>', page, re.S)
    assert header is not None
    passed = re.search(r">pass (\d+)</a>", header.group(1))
    got["report header (every model)"] = int(passed.group(1)) if passed else 0
    board = re.findall(r'model=([^"&]+)&amp;kind=task"[^>]*>(\d+)% \(n=(\d+)', page)
    shares = {model: round(int(pct) * int(n) / 100) for model, pct, n in board}
    got["report board"] = shares[MODEL]
    got["report board (every model)"] = sum(shares.values())
    return got


def flip_one_task(grading: Path) -> int:
    """The owner turns one verdict of a passing task cell of MODEL to wrong (the review's own finish)."""
    from pytest_assistant_eval.review.context import open_review
    from pytest_assistant_eval.review.flow import finish_review
    from pytest_assistant_eval.review.grade import owner_grade

    ctx = open_review(grading, CALIBRATION, [], open_grading=open_grading, all_cells=False)
    for n, review in sorted(ctx.reviews.items()):
        cell = ctx.cells[n]
        if cell["kind"] != "task" or cell["model"]["model"] != MODEL or not review.grade:
            continue
        if review.grade["outcome"] != "pass" or not review.first.verdicts:
            continue
        for item in sorted(review.first.verdicts):
            mine = {**review.first.verdicts, item: "wrong"}
            verdicts = {i["id"]: mine.get(i["id"], "right") for i in ctx.judged(n)}
            if owner_grade(ctx, n, verdicts, review.first.understandability)["outcome"] != "pass":
                finish_review(ctx, review, {item: "wrong"})
                assert review.grade is not None and review.grade["outcome"] != "pass"
                return n
    raise AssertionError("no reviewed passing task cell of the oracle whose item decides its grade")


def test_one_review_moves_every_figure_together(grading: Path, tmp_path: Path):
    assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted", all_cells=True),
                          out=io.StringIO(), open_grading=open_grading) == 0
    before = figures(grading, tmp_path)
    mine = {k: v for k, v in before.items() if "every model" not in k}
    assert len(set(mine.values())) == 1, before  # every figure gives the same passing runs
    assert before["report header (every model)"] == before["report board (every model)"], before
    flip_one_task(grading)
    after = figures(grading, tmp_path)
    assert {k: before[k] - after[k] for k in before} == dict.fromkeys(before, 1), (before, after)


def test_a_cell_waiting_for_review_is_in_no_rate_of_the_leaderboard(grading: Path):
    # Before any review the queued cells wait: the board counts them apart, as the summary does.
    out = io.StringIO()
    assert leaderboard_command(grading, CALIBRATION, out, fmt="json") == 0
    rows = json.loads(out.getvalue())
    summary = io.StringIO()
    assert summary_command(grading, CALIBRATION, out=summary, fmt="json") == 0
    waiting: dict[str, int] = {}
    for r in json.loads(summary.getvalue()):
        if r["kind"] == "task":
            waiting[r["model"]] = waiting.get(r["model"], 0) + r["waiting"]
    assert any(waiting.values())
    assert {r["assistant"]: r["waiting"] for r in rows} == waiting
    text = io.StringIO()
    assert leaderboard_command(grading, CALIBRATION, text) == 0
    assert "Waiting for the owner's review, in no rate:" in text.getvalue()


def test_a_hand_made_cell_without_a_review_counts_by_the_judges_grade():
    from pytest_assistant_eval.tables.final_grade import cell_grade

    cell: dict[str, Any] = {"kind": "task", "outcome": "pass", "judge": {"grader": "scripted:rules"}, "items": [],
                            "task": {"final": {"truthful": True, "asks_first": None}}}
    grade = cell_grade(cell)
    assert (grade.outcome, grade.by_owner, grade.checks) == ("pass", False, {"truthful": True, "asks_first": None})


def test_the_owners_failed_checks_replace_the_judges_and_applicability_stays():
    from pytest_assistant_eval.tables.final_grade import final_task_checks

    judged = {"truthful": True, "asks_first": None, "required_actions": True}
    owner = {"grader": "owner", "checks_failed": ["truthful"]}
    assert final_task_checks(judged, owner) == {"truthful": False, "asks_first": None, "required_actions": True}
    assert final_task_checks(judged, {"grader": "scripted:rules"}) == judged
