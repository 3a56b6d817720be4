"""What the tables and the review read of a suite, through its protocol (issue 32, docs/suites.md).

The calibration's reading members give what the tables read by its name before (its levels, its
cases' pairs, its world's tools, its checks, its world's state), and the suite of a folder or a
record is found from what it recorded, with the registry's default where it records none.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from pytest_assistant_eval.suites.base import Suite
from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.plan import load_calibration
from pytest_assistant_eval.suites.calibration.world.tools import SPECS_BY_NAME
from pytest_assistant_eval.suites.recorded import get_suite, grading_suite, results_file_suite, suite_of_record
from pytest_assistant_eval.tables.summary import summary_command

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"


def test_a_record_names_its_suite_by_its_format_and_an_unnamed_one_is_the_calibrations():
    assert suite_of_record("assistant-eval.cell/1") == "calibration"
    assert suite_of_record("assistant-eval.agentdojo-cell/1") == "agentdojo"
    assert suite_of_record(None) == suite_of_record("something else/1") == "calibration"


def test_a_grading_folder_and_a_results_file_that_record_no_suite_are_the_calibrations(tmp_path):
    for suite in (grading_suite(tmp_path), results_file_suite(tmp_path / "results.jsonl")):
        assert isinstance(suite, Suite) and suite.name == "calibration"


def test_the_calibrations_reading_members_give_what_the_tables_read_by_its_name_before():
    suite = get_suite("calibration")
    levels = suite.load_levels(CALIBRATION)
    assert levels == levels_mod.load_levels(CALIBRATION / "levels.yaml", known_tools=None)
    cases, _ = load_calibration(CALIBRATION)
    pairs = suite.task_pairs(CALIBRATION)
    assert pairs == {t.id: t.pair for t in cases.tasks if t.pair} and pairs
    assert suite.tool_specs() is SPECS_BY_NAME
    assert suite.automatic_level("scripted:oracle", None, levels, "scripted") == levels.names[-1]
    assert suite.automatic_level("llama3.2:3b", 8192, levels, "ollama") == levels.names[0]


def test_the_calibrations_state_record_names_each_changed_field_and_the_default_names_none():
    start = {"bookings": [{"id": "b-1", "status": "held"}]}
    end = {"bookings": [{"id": "b-1", "status": "paid"}]}
    state = get_suite("calibration").state_record(start, end)
    assert [c["field"] for c in state["diff"]] == ["status"] and state["final"] is end
    assert state["start_digest"] != state["final_digest"]
    assert get_suite("agentdojo").state_record(start, end)["diff"] == []  # on SuiteBase's default


def test_a_bad_levels_file_is_said_through_the_suites_definition_errors(tmp_path, capsys):
    broken = tmp_path / "calibration"
    shutil.copytree(CALIBRATION, broken)
    (broken / "levels.yaml").write_text("levels: [", encoding="utf-8")
    assert levels_mod.LevelsError in get_suite("calibration").definition_errors
    with pytest.raises(levels_mod.LevelsError):
        get_suite("calibration").load_levels(broken)
    assert summary_command(tmp_path / "grading", broken) == 2
    assert "levels.yaml" in capsys.readouterr().err
