"""One identity per model (issue 29, item 3): ``PRESET:MODEL`` and its address, never its folder's name.

``scripted:oracle`` and ``openai-compatible:oracle`` (the reference oracle behind a real
OpenAI-compatible server on 127.0.0.1) graded together are two rows, each named with its preset
because they share a model name; ``compare`` takes them as two models; the summary and the report
name them as the leaderboard does. A single model is named by its model name in every table,
whatever its results folder is called.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from graded_helpers import CALIBRATION
from pytest_assistant_eval.suites.calibration.grade.folder import grade
from pytest_assistant_eval.tables.compare import compare_command
from pytest_assistant_eval.tables.leaderboard import leaderboard_command
from pytest_assistant_eval.tables.model_names import display_names, identity_key, relabel_lines
from pytest_assistant_eval.tables.summary import summary_command
from tests.provider_runs_helpers import console, run_eval
from tests.reference_fake import REFERENCE_FAKES

SELECT = ("--levels", "basic", "--repeats", "1", "-k", "G01 or T01 or T07")


@pytest.fixture(scope="module")
def two_oracles(world_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("two-oracles")
    result = run_eval(world_dir, base / "canned", "--model", "scripted:oracle", *SELECT)
    assert result.ret == 0, console(result)
    cls, suffix = REFERENCE_FAKES["openai-compatible"]
    fake = cls(CALIBRATION, world_dir)
    with fake:
        result = run_eval(world_dir, base / "mine", "--model", "openai-compatible:oracle",
                          f"--base-url={fake.url + suffix}", "--accept-data-notice", *SELECT)
    assert result.ret == 0, console(result)
    grade([base / "canned", base / "mine"], base / "grading", "scripted:rules", seed=3, calibration=CALIBRATION)
    return base / "grading"


NAMES = {"scripted:oracle", "openai-compatible:oracle"}


def test_two_identities_with_one_model_name_are_two_rows_named_with_their_presets(two_oracles: Path):
    out = io.StringIO()
    assert leaderboard_command(two_oracles, CALIBRATION, out, fmt="json") == 0
    rows = json.loads(out.getvalue())
    assert {r["assistant"] for r in rows} == NAMES
    assert all(r["runs"] + r["waiting"] for r in rows)  # before the review its queued runs wait


def test_compare_takes_the_two_identities_as_two_models(two_oracles: Path):
    out = io.StringIO()
    assert compare_command(two_oracles, "scripted:oracle", "openai-compatible:oracle", out) == 0
    assert "Compare scripted:oracle (A) with openai-compatible:oracle (B)" in out.getvalue()


def test_the_summary_and_the_report_name_the_models_as_the_leaderboard_does(two_oracles: Path):
    out = io.StringIO()
    assert summary_command(two_oracles, CALIBRATION, out=out, fmt="json") == 0
    assert {r["model"] for r in json.loads(out.getvalue())} == NAMES
    text = io.StringIO()
    assert summary_command(two_oracles, CALIBRATION, out=text) == 0
    assert "canned" not in text.getvalue().split("Per model")[0]  # a folder's name is no model's
    from pytest_assistant_eval.tables.report import build_report

    page = build_report(two_oracles, CALIBRATION)
    for name in NAMES:
        from urllib.parse import urlencode

        assert f'<a href="#cells?{urlencode({"model": name})}">{name}</a></th>' in page  # the board's row


def test_one_model_is_named_by_its_model_name_whatever_its_folder_is_called():
    names = display_names({"mine": {"preset": "openai-compatible", "model": "llama3.1:8b",
                                    "address": "http://127.0.0.1:8000/v1"},
                           "canned": {"preset": "scripted", "model": "oracle"}})
    assert names == {"mine": "llama3.1:8b", "canned": "oracle"}


def test_two_folders_of_one_identity_are_one_model_and_two_addresses_two():
    same = {"preset": "openai-compatible", "model": "m", "address": "http://a/v1", "world": "build-1"}
    names = display_names({"monday": same, "tuesday": {**same, "world": "build-2"},
                           "other": {**same, "address": "http://b/v1"}})
    assert names["monday"] == names["tuesday"] == "openai-compatible:m @ http://a/v1"
    assert names["other"] == "openai-compatible:m @ http://b/v1"
    assert identity_key(same) == identity_key({**same, "world": "build-2"})


def test_lines_of_several_gradings_are_named_by_identity_not_by_their_recorded_name():
    lines = [{"model": "oracle", "route": "scripted", "model_name": "oracle"},  # calibrate reads no preset
             {"model": "oracle", "preset": "openai-compatible", "route": "openai-compatible@http://x/v1",
              "model_name": "oracle"},
             {"model": "mine", "preset": "openai", "route": "openai", "model_name": "gpt-x"}]
    relabel_lines(lines)
    assert [ln["model"] for ln in lines] == ["scripted:oracle", "openai-compatible:oracle", "gpt-x"]
