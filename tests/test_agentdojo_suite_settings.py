"""AgentDojo's settings in the one session (issue 25, the s-dojo and s-session merge).

The settings (benchmark version, defense, conversation) are part of the suite: a results folder
of one set-up refuses a run of another, a not-applicable record carries them as every record
does, ``assistant-eval run --suite agentdojo`` takes them, and the tool filter (the suite's
``start`` hook) survives a stop and ``--resume``: the resumed cell offers the tools the saved
filter answer chose and does not ask the filter again. Skipped without the ``[agentdojo]`` extra.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.run import session as runner  # noqa: E402
from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions, UsageError  # noqa: E402
from pytest_assistant_eval.providers.errors import Busy  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.cells import AgentDojoCellSpec, AgentDojoOptions, parse_cell_id  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.grade import grade_record  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.reference import AgentDojoReference  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CELL = "AD-banking-0__r1"  # read the bill, then pay it


class Oracle(AgentDojoReference):
    """The oracle, keeping every request; busy on request ``busy_on`` (a temporary error: the cell is kept)."""

    def __init__(self, busy_on: int | None = None) -> None:
        super().__init__("oracle")
        self.busy_on = busy_on
        self.requests: list[Any] = []

    def complete(self, request):  # type: ignore[no-untyped-def]
        self.requests.append(request)
        if len(self.requests) == self.busy_on:
            raise Busy("the service is busy", status=503, provider_message="try again later")
        return super().complete(request)


def session(out: Path, *, resume: bool = False, **settings: Any) -> runner.RunSession:
    options = RunOptions(world=None, out=out, models=(ModelSpec("scripted", "oracle"),), calibration=None,
                         resume=resume, suite="agentdojo",
                         suite_options=AgentDojoOptions(suites=("banking",), **settings))
    return runner.RunSession(options)


def test_a_tool_filter_cell_stopped_after_the_filter_resumes_with_the_tools_it_chose(tmp_path):
    first = session(tmp_path, defense="tool_filter")
    first.prepare_folders()
    first._providers["oracle"] = Oracle(busy_on=2)  # the filter answers, the model's first request fails
    cell = AgentDojoCellSpec("oracle", parse_cell_id(CELL))
    assert first.run_cell(cell).status == "kept"

    again = session(tmp_path, resume=True, defense="tool_filter")
    resumed = Oracle()
    again._providers["oracle"] = resumed
    result = again.run_cell(cell)
    assert result.status == "done" and "started again" not in result.message, result.message
    record = json.loads((tmp_path / "cells" / f"{CELL}.json").read_text())
    assert record["resumes"] == 1 and record["resume"]["points"][0]["request"] == 2
    assert all(r.tool_choice != "none" for r in resumed.requests), "the filter was not asked again"
    assert all({t.name for t in r.tools} == {"read_file", "send_money"} for r in resumed.requests)
    assert [r.get("purpose") for r in record["requests"]].count("tool_filter") == 1
    assert record["defense"] == "tool_filter" and record["pipeline_name"] == "oracle-tool_filter"
    assert grade_record(record).utility is True


def test_a_tool_filter_cell_stopped_in_the_filters_own_request_starts_again_counting_it_once(tmp_path):
    """Nothing was answered yet, so the cell starts again (the filter asked anew); the refused
    request was sent and stays counted, once, beside the four of the finished cell."""
    first = session(tmp_path, defense="tool_filter")
    first.prepare_folders()
    first._providers["oracle"] = Oracle(busy_on=1)
    cell = AgentDojoCellSpec("oracle", parse_cell_id(CELL))
    assert first.run_cell(cell).status == "kept"

    again = session(tmp_path, resume=True, defense="tool_filter")
    again._providers["oracle"] = resumed = Oracle()
    result = again.run_cell(cell)
    assert result.status == "done" and "started again" in result.message
    record = json.loads((tmp_path / "cells" / f"{CELL}.json").read_text())
    assert [r.get("purpose") for r in record["requests"]] == ["tool_filter", None, None, None]
    assert len(resumed.requests) == 4 and sum(record["requests_by_day"].values()) == 5
    assert grade_record(record).utility is True


@pytest.mark.parametrize("other", [{"defense": "repeat_user_prompt"}, {"conversation": "ours"},
                                   {"benchmark_version": "v1.2.1"}])
def test_a_folder_of_one_setup_refuses_a_resume_in_another(tmp_path, other):
    session(tmp_path).prepare_folders()
    with pytest.raises(UsageError, match=f"differs in {next(iter(other))}"):
        session(tmp_path, resume=True, **other).prepare_folders()


def test_a_folder_begun_under_another_agentdojo_package_refuses_a_resume(tmp_path):
    """After an upgrade of agentdojo, one folder would hold records graded by two versions of its code."""
    session(tmp_path).prepare_folders()
    path = tmp_path / "run.json"
    data = json.loads(path.read_text())
    assert data["identity"]["agentdojo_version"] == version("agentdojo")
    data["identity"]["agentdojo_version"] = "0.1.0"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="differs in agentdojo_version"):
        session(tmp_path, resume=True).prepare_folders()


def test_run_json_and_a_not_applicable_record_carry_the_settings(tmp_path):
    one = session(tmp_path, defense="spotlighting_with_delimiting", benchmark_version="v1.2.1")
    one.prepare_folders()
    run = json.loads((tmp_path / "run.json").read_text())
    base = one.suite.record_base(AgentDojoCellSpec("oracle", parse_cell_id("AD-banking-1-i2__r1")),
                                 ModelSpec("scripted", "oracle"))
    for data in (run, base):
        assert data["agentdojo_version"] == version("agentdojo") and data["benchmark_version"] == "v1.2.1"
        assert data["defense"] == "spotlighting_with_delimiting" and data["conversation"] == "agentdojo"
        assert data["comparable"] is True and data["pipeline_name"] == "oracle-spotlighting_with_delimiting"
    assert run["identity"]["defense"] == "spotlighting_with_delimiting"
    assert base["attack"] == "direct" and base["format"] == "assistant-eval.agentdojo-cell/1"


def test_run_with_suite_agentdojo_takes_the_settings(tmp_path):
    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "run", "--suite", "agentdojo:banking",
                           "--model", "scripted:oracle", "--out", str(out), "-p", "no:cacheprovider", "-q",
                           "--agentdojo-defense", "repeat_user_prompt", "--agentdojo-benchmark-version", "v1.2.1",
                           "-k", "AD-banking-1__"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    record = json.loads((out / "cells" / "AD-banking-1__r1.json").read_text())
    assert record["defense"] == "repeat_user_prompt" and record["benchmark_version"] == "v1.2.1"
    assert [e["type"] for e in record["transcript"]].count("repeated_prompt") >= 1
    assert grade_record(record).utility


def test_run_with_suite_agentdojo_refuses_an_unknown_defense_before_any_folder(tmp_path):
    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "run", "--suite", "agentdojo:banking",
                           "--model", "scripted:oracle", "--out", str(out), "-p", "no:cacheprovider",
                           "--agentdojo-defense", "firewall"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode != 0
    assert "unknown defense 'firewall'" in done.stdout + done.stderr
    assert not (out / "run.json").exists()
