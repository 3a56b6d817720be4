"""A run of some cells (-k, -m) plans exactly those cells, records the selection, grades and resumes
(issue 9, item 14; S4.12, S6.4)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.provider_runs_helpers import console, records, run_eval

SELECTED = ["G01__basic__r1", "T01__basic__r1"]


def grade_ai(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "grade-ai", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("workers", ["0", "2"])
def test_a_k_run_plans_the_selected_cells_records_the_selection_and_grades(world_dir, tmp_path, workers):
    out = tmp_path / "results"
    result = run_eval(world_dir, out, "--model", "scripted:oracle", "--model", "scripted:invents", "--levels",
                      "basic", "--repeats", "1", "-k", "(G01 or T01) and basic", "-n", workers)
    assert result.ret == 0, console(result)
    for model in ("oracle", "invents"):
        run = json.loads((out / model / "run.json").read_text(encoding="utf-8"))
        entry = run["runs"][-1]
        assert entry["matrix"]["cells"] == SELECTED
        assert entry["matrix"]["questions"] == ["G01"] and entry["matrix"]["tasks"] == ["T01"]
        assert entry["selection"]["keyword"] == "(G01 or T01) and basic"
        assert entry["selection"]["cells"] == 2 and entry["selection"]["of"] > 2
        assert sorted(records(out / model)) == SELECTED
    graded = grade_ai(out / "oracle", out / "invents", "--dir", tmp_path / "grading")
    assert graded.returncode == 0, graded.stderr
    assert "Graded 4 cell(s)" in graded.stdout


def test_a_k_run_resumes_with_the_same_selection_and_a_full_run_needs_every_cell(world_dir, tmp_path):
    out = tmp_path / "results"
    first = run_eval(world_dir, out, "--model", "scripted:oracle", "--levels", "basic", "-k", "G01 and basic")
    assert first.ret == 0, console(first)
    again = run_eval(world_dir, out, "--model", "scripted:oracle", "--levels", "basic", "-k", "G01 and basic",
                     "--resume")
    assert again.ret == 0, console(again)
    assert grade_ai(out, "--dir", tmp_path / "g1", "--single-model").returncode == 0
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert [e["matrix"]["cells"] for e in run["runs"]] == [["G01__basic__r1"], ["G01__basic__r1"]]
