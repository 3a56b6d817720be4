"""``compare`` (issue 24): two models on the cases both ran, with paired intervals and McNemar p."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.stats import PairedCounts, mcnemar_exact, newcombe_paired
from pytest_assistant_eval.tables.compare import compare_cells, render_compare


def task(model: str, case: str, outcome: str, repeat: int = 1, **final: bool | None) -> dict[str, Any]:
    checks = {"truthful": True, "asks_first": None, "resists_injections": None} | final
    return {"model": {"model": model, "label": model}, "kind": "task", "case": case, "level": "advanced",
            "repeat": repeat, "outcome": outcome, "task": {"final": checks}}


def question(model: str, case: str, outcome: str) -> dict[str, Any]:
    return {"model": {"model": model, "label": model}, "kind": "question", "case": case, "level": "basic",
            "repeat": 1, "outcome": outcome, "parts": [{"outcome": outcome}]}


def row(rows, name):
    return next(r for r in rows if r.measure == name)


def test_two_identical_models_differ_by_zero_with_an_interval_around_it():
    runs = [("T01", "pass"), ("T02", "fail"), ("T03", "pass"), ("T04", "unsafe"), ("T05", "pass")]
    cells = [task(m, c, o) for m in ("a", "b") for c, o in runs] + [question(m, "G01", "answered") for m in "ab"]
    rows = compare_cells(cells, "a", "b")
    for r in rows:
        if r.counts.n:
            assert r.counts.difference == 0
            assert r.interval[0] < 0 < r.interval[1]
            assert r.p == 1.0
    text = render_compare(rows, "a", "b")
    assert "tasks completed" in text and "0 pts" in text


def test_the_difference_is_paired_over_the_cases_both_ran():
    # a passes T01..T08, b passes T01..T02; T09 only a ran: in no pair.
    cells = ([task("a", f"T0{i}", "pass") for i in range(1, 10)]
             + [task("b", f"T0{i}", "pass" if i <= 2 else "fail") for i in range(1, 9)])
    r = row(compare_cells(cells, "a", "b"), "tasks completed")
    assert r.counts == PairedCounts(both=2, only_a=6, only_b=0, neither=0)
    assert r.counts.difference == pytest.approx(6 / 8)
    assert r.interval == newcombe_paired(PairedCounts(2, 6, 0, 0))
    assert r.p == mcnemar_exact(6, 0) == pytest.approx(2 / 64)


def test_a_check_that_did_not_apply_to_one_model_is_in_no_pair():
    cells = [task("a", "T01", "pass", asks_first=True), task("b", "T01", "pass", asks_first=None),
             task("a", "T02", "pass", asks_first=True), task("b", "T02", "fail", asks_first=False),
             task("a", "T03", "pass", truthful=None), task("b", "T03", "pass")]
    rows = compare_cells(cells, "a", "b")
    assert row(rows, "asks first").counts == PairedCounts(0, 1, 0, 0)
    assert row(rows, "truthful").counts.n == 2
    assert row(rows, "resists injections").counts.n == 0
    line = next(ln for ln in render_compare(rows, "a", "b").splitlines() if ln.startswith("resists injections"))
    assert "%" not in line and line.split()[-8:] == ["0", *["–"] * 7]  # n = 0, and no rate at all


def test_user_error_runs_are_in_no_pair():
    cells = [task("a", "T01", "pass"), task("b", "T01", "user_error"), task("a", "T02", "pass"),
             task("b", "T02", "fail")]
    assert row(compare_cells(cells, "a", "b"), "tasks completed").counts.n == 1


def test_the_table_says_the_smallest_difference_the_cases_can_tell_apart():
    cells = [task(m, f"T{i:02}", "pass") for m in "ab" for i in range(1, 5)]
    text = render_compare(compare_cells(cells, "a", "b"), "a", "b")
    assert "With at most 4 paired case(s) no difference can reach p < 0.05" in text
    cells = [task(m, f"T{i:03}", "pass") for m in "ab" for i in range(1, 101)]
    text = render_compare(compare_cells(cells, "a", "b"), "a", "b")
    assert "With 100 paired cases, no difference below 6% can be told apart" in text


def _grading(tmp_path: Path, cells: list[dict[str, Any]]) -> Path:
    grading = tmp_path / "grading"
    (grading / "cells").mkdir(parents=True)
    order = []
    for n, cell in enumerate(cells, start=1):
        (grading / "cells" / f"{n}.json").write_text(json.dumps({"format": "assistant-eval.graded-cell/1", "n": n,
                                                                  **cell}), encoding="utf-8")
        order.append({"n": n, "folder": cell["model"]["label"], "cell": f"{cell['case']}__advanced__r1"})
    (grading / "grading.json").write_text(json.dumps({"format": "assistant-eval.grading/1", "order": order}),
                                          encoding="utf-8")
    return grading


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval.cli", *args], capture_output=True,
                          text=True, timeout=120)


def test_the_command_prints_differences_with_intervals_and_mcnemar_p(tmp_path: Path):
    grading = _grading(tmp_path, [task("oracle", f"T{i:02}", "pass") for i in range(1, 11)]
                       + [task("false-claims", f"T{i:02}", "fail", truthful=False) for i in range(1, 11)])
    done = _cli("compare", "--dir", str(grading), "oracle", "false-claims")
    assert done.returncode == 0, done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("tasks completed"))
    assert "+100 pts" in line and "+61 to +100" in line and "10 / 0" in line and "0.002" in line
    assert "McNemar p" in done.stdout


def test_the_command_names_the_models_it_has_when_given_another(tmp_path: Path):
    grading = _grading(tmp_path, [task("oracle", "T01", "pass"), task("invents", "T01", "fail")])
    done = _cli("compare", "--dir", str(grading), "oracle", "gpt-9")
    assert done.returncode == 2
    assert "has no model 'gpt-9'; its models: invents, oracle" in done.stderr
