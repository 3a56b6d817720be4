"""A third suite needs a package and nothing else (issue 32): the toy suite (tests/toy_suite.py) through
``assistant-eval run`` (the plugin, in a fresh process, registered by ASSISTANT_EVAL_SUITES), grade-ai,
the leaderboard and the report, on the session's defaults for every record-keeping member."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_assistant_eval import cli
from pytest_assistant_eval.suites import SUITES, SUITES_VARIABLE, make_suite
from pytest_assistant_eval.suites.base import Suite
from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions
from pytest_assistant_eval.suites.recorded import get_suite, suite_of_record
from pytest_assistant_eval.tables.leaderboard import leaderboard_command

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


@pytest.fixture
def toy_registered(monkeypatch):
    monkeypatch.setitem(SUITES, "toy", "toy_suite")


def toy_run(out: Path, *models: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, SUITES_VARIABLE: "toy=toy_suite",
           "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    args = [a for m in models for a in ("--model", m)]
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "run", "--suite", "toy", *args,
                           "--out", str(out), "-q"], capture_output=True, text=True, cwd=REPO, env=env)


def test_the_toy_suite_is_a_suite_on_the_defaults_alone(toy_registered, tmp_path):
    suite = make_suite(RunOptions(world=None, out=tmp_path, models=(ModelSpec("scripted", "oracle"),),
                                  calibration=None, suite="toy"))
    assert isinstance(suite, Suite)
    assert (suite.run_format, suite.record_format) == ("assistant-eval.toy-run/1", "assistant-eval.toy-cell/1")
    assert [c.cell_id for c in suite.cells] == ["TOY-France__r1", "TOY-Japan__r1", "TOY-Kenya__r1"]
    assert suite.identity(ModelSpec("scripted", "oracle"))["benchmark"] == "toy"


def test_the_tables_and_the_review_read_a_toy_suite_on_the_protocols_defaults(toy_registered):
    """The reading members (issue 32) need nothing of a third suite: no levels, no cases, no tools of
    a table, its records known by their format, and what only the calibration's review does refused by name."""
    suite = get_suite(suite_of_record("assistant-eval.toy-cell/1"))
    assert isinstance(suite, Suite) and suite.name == "toy"
    assert (suite.definition_errors, suite.load_levels(REPO), suite.task_pairs(REPO), suite.tool_specs()) == ((), None, {}, {})
    assert suite.automatic_level("toy-model", 8000, None, "openai") is None and suite.review_sections({}, {}, None) == []
    state = suite.state_record({"capitals": [1]}, {"capitals": [2]})
    assert state["start_digest"] != state["final_digest"] and (state["diff"], state["final"]) == ([], {"capitals": [2]})
    assert suite.state_record({"a": 1}, {"a": 1})["start_digest"] == suite.state_record({"a": 1}, {})["start_digest"]
    for refused in (lambda: suite.load_cases(REPO), lambda: suite.check_record({}, None, None)):
        with pytest.raises(ValueError, match="toy"):
            refused()


def test_a_toy_suite_runs_through_run_grade_ai_the_leaderboard_and_the_report(toy_registered, tmp_path, capsys):
    out = tmp_path / "results"
    done = toy_run(out, "scripted:oracle", "scripted:guesses-facts")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Next: grade the results: assistant-eval grade-ai" in done.stdout
    for label in ("oracle", "guesses-facts"):
        run = json.loads((out / label / "run.json").read_text())
        assert run["format"] == "assistant-eval.toy-run/1" and run["runs"][0]["matrix"]["cells"]
        records = sorted((out / label / "cells").glob("*.json"))
        assert [p.stem for p in records] == ["TOY-France__r1", "TOY-Japan__r1", "TOY-Kenya__r1"]
    record = json.loads((out / "oracle" / "cells" / "TOY-Japan__r1.json").read_text())
    assert record["answer"] == "The capital is Tokyo." and record["service_log"][0]["tool"] == "lookup"
    assert "resume" in record and "requests_by_day" in record  # the session's own fields, added for every suite

    grading = tmp_path / "grading"
    assert cli.main(["grade-ai", str(out / "oracle"), str(out / "guesses-facts"), "--dir", str(grading)]) == 0
    graded = json.loads((grading / "toy.json").read_text())
    right = {(c["model"], c["cell"]): c["checks"]["answers_right"] for c in graded["cells"]}
    assert right[("guesses-facts", "TOY-France__r1")] is True and right[("guesses-facts", "TOY-Kenya__r1")] is False
    assert all(v for (model, _), v in right.items() if model == "oracle")

    out = io.StringIO()  # the leaderboard command as the CLI calls it, into a buffer
    assert leaderboard_command(grading, out=out) == 0
    board = out.getvalue().splitlines()
    assert any(line.startswith("oracle") and "100% (n=3" in line for line in board), board
    assert any(line.startswith("guesses-facts") and "33% (n=3" in line for line in board), board

    assert cli.main(["report", "--dir", str(grading)]) == 0
    page = (grading / "report.html").read_text(encoding="utf-8")
    assert "answers_right" in page and "guesses-facts" in page and "33% (n=3" in page


def test_grade_ai_of_a_toy_folder_keeps_the_folder_rules_every_grading_keeps(toy_registered, tmp_path, capsys):
    out = tmp_path / "results"
    assert toy_run(out, "scripted:oracle").returncode == 0
    assert cli.main(["grade-ai", str(out), "--dir", str(out / "grading")]) == 2
    assert "inside the results folder" in capsys.readouterr().err
