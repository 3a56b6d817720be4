"""``compare`` (issue 24): two models on the cases both ran, with paired intervals and McNemar p."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

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
    assert "%" not in line and line.split()[-11:] == ["0", "0", *["–"] * 9]  # n = 0, and no rate at all


def test_user_error_runs_are_in_no_pair():
    cells = [task("a", "T01", "pass"), task("b", "T01", "user_error"), task("a", "T02", "pass"),
             task("b", "T02", "fail")]
    assert row(compare_cells(cells, "a", "b"), "tasks completed").counts.n == 1


def test_the_table_says_the_smallest_difference_the_clusters_can_tell_apart():
    """Issue 29 changes this: what a comparison can tell apart is counted in tasks, not runs."""
    cells = [task(m, f"T{i:02}", "pass") for m in "ab" for i in range(1, 5)]
    text = render_compare(compare_cells(cells, "a", "b"), "a", "b")
    assert "With at most 4 cluster(s) (4 paired run(s)) no difference can reach p < 0.05" in text
    cells = [task(m, f"T{i:03}", "pass") for m in "ab" for i in range(1, 101)]
    text = render_compare(compare_cells(cells, "a", "b"), "a", "b")
    assert "With 100 paired runs in 100 clusters (tasks or questions), no difference below 6% can be told apart" in text


def _runs_of_tasks(discordant: int, tasks: int, runs: int) -> list[dict[str, Any]]:
    """``tasks`` tasks of ``runs`` runs each (levels × repeats); A passes all, B fails every run of the first few."""
    cells = []
    for i in range(1, tasks + 1):
        for r in range(1, runs + 1):
            cells.append(task("a", f"T{i:02}", "pass", repeat=r))
            cells.append(task("b", f"T{i:02}", "fail" if i <= discordant else "pass", repeat=r))
    return cells


def test_the_runs_of_one_task_are_one_cluster():
    r = row(compare_cells(_runs_of_tasks(2, 20, 5), "a", "b"), "tasks completed")
    assert (r.counts.n, r.clusters, r.counts.only_a) == (100, 20, 10)


def test_ten_discordant_runs_from_two_tasks_are_not_significant_by_cluster():
    """The issue's case: McNemar counts 10 independent runs (p 0.002); by task they are 2 of 20 tasks."""
    r = row(compare_cells(_runs_of_tasks(2, 20, 5), "a", "b"), "tasks completed")
    assert r.p == pytest.approx(2 / 1024)
    low, high = r.clustered.interval
    assert low <= 0 < 0.1 < high and r.clustered.p > 0.05
    assert low <= r.interval[0] and high >= r.interval[1]
    assert r.cluster_detectable == pytest.approx(30 / 100)  # six tasks of five runs, all one way
    line = next(ln for ln in render_compare([r], "a", "b").splitlines() if ln.startswith("tasks completed"))
    assert " 100 " in line and " 20 " in line and "0.002" in line


def test_under_six_clusters_the_interval_says_too_few():
    r = row(compare_cells(_runs_of_tasks(2, 5, 6), "a", "b"), "tasks completed")
    assert r.clustered.interval is None and r.clustered.p is None and r.cluster_detectable is None
    assert "too few clusters (< 6)" in render_compare([r], "a", "b")


def test_the_bootstrap_is_the_same_every_time():
    cells = _runs_of_tasks(3, 12, 4)
    first = row(compare_cells(cells, "a", "b"), "tasks completed")
    assert row(compare_cells(list(reversed(cells)), "a", "b"), "tasks completed").clustered == first.clustered


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4), st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=14))
def test_the_interval_by_cluster_is_never_narrower_nor_its_p_smaller_than_the_runs(tasks):
    cells = []
    for i, (runs, a_fail, b_fail) in enumerate(tasks):
        for r in range(1, runs + 1):
            cells.append(task("a", f"T{i:02}", "fail" if r <= a_fail else "pass", repeat=r))
            cells.append(task("b", f"T{i:02}", "fail" if r <= b_fail else "pass", repeat=r))
    r = row(compare_cells(cells, "a", "b"), "tasks completed")
    assert r.clusters == len(tasks)
    if r.clustered.interval is None:
        assert len(tasks) < 6
        return
    low, high = r.clustered.interval
    assert -1 <= low <= r.interval[0] and r.interval[1] <= high <= 1
    assert low <= r.counts.difference <= high
    assert r.clustered.p >= r.p


def test_compare_on_graded_runs_of_the_oracle_and_guesses_facts_prints_its_clusters(tmp_path: Path, world_dir: Path):
    """The acceptance of issue 29 on real graded runs: every task at every level, clusters beside n, and an
    interval by cluster at least as wide as Newcombe's over the runs."""
    from graded_helpers import run_and_grade

    grading = run_and_grade(tmp_path, world_dir, ("oracle", "guesses-facts"), seed=3, select="T")
    done = _cli("compare", "--dir", str(grading), "oracle", "guesses-facts", "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = {r["measure"]: r for r in json.loads(done.stdout)}
    completed = rows["tasks completed"]
    assert completed["only_a"] > 0 and completed["only_b"] == 0
    assert completed["clusters"] == 20 and completed["n"] > completed["clusters"]
    assert completed["difference_low"] <= completed["runs_difference_low"]
    assert completed["difference_high"] >= completed["runs_difference_high"]
    assert completed["p"] >= completed["runs_p"] and completed["p"] > 0.05 > completed["runs_p"]
    assert rows["asks for info"]["clusters"] == 2 and rows["asks for info"]["difference_low"] is None
    text = _cli("compare", "--dir", str(grading), "oracle", "guesses-facts").stdout
    line = next(ln for ln in text.splitlines() if ln.startswith("tasks completed"))
    assert f" {completed['n']} " in line and " 20 " in line
    assert "too few clusters (< 6)" in next(ln for ln in text.splitlines() if ln.startswith("asks for info"))


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
