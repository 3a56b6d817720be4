"""AgentDojo cells in the one session every suite shares (issue 25).

The twin ``AgentDojoSession`` had no spent.json, no skips, no usage and no request deadline;
through ``RunSession`` and the ``Suite`` protocol an AgentDojo cell gets what a calibration
cell gets: a provider's stop keeps its checkpoint and goes to ``spent.json``, ``--resume``
continues it from the failed request and the record says where, ``--skip`` skips it, and
``assistant-eval run --suite agentdojo`` runs it with no ``--world``. Skipped without the
``[agentdojo]`` extra.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.run import session as runner  # noqa: E402
from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions  # noqa: E402
from pytest_assistant_eval.providers.errors import Busy  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.cells import AgentDojoCellSpec, AgentDojoOptions, parse_cell_id  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.grade import grade_record  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.reference import AgentDojoReference  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CELL = "AD-workspace-6__r1"  # two calls, the second creates an event


class BusyOnSecondRequest(AgentDojoReference):
    """The oracle, whose service is busy on its second request (a temporary error: the cell is kept)."""

    def __init__(self, model: str) -> None:
        super().__init__(model)
        self.seen = 0

    def complete(self, request):  # type: ignore[no-untyped-def]
        self.seen += 1
        if self.seen == 2:
            raise Busy("the service is busy", status=503, provider_message="try again later")
        return super().complete(request)


def session(out: Path, *, resume: bool = False) -> runner.RunSession:
    options = RunOptions(world=None, out=out, models=(ModelSpec("scripted", "oracle"),), calibration=None,
                         resume=resume, suite="agentdojo", suite_options=AgentDojoOptions(suites=("workspace",)))
    return runner.RunSession(options)


def test_a_stopped_agentdojo_cell_is_kept_filed_in_spent_json_and_resumed_where_it_stopped(tmp_path):
    first = session(tmp_path)
    first.prepare_folders()
    first._providers["oracle"] = BusyOnSecondRequest("oracle")
    cell = AgentDojoCellSpec("oracle", parse_cell_id(CELL))
    stopped = first.run_cell(cell)
    assert stopped.status == "kept" and "kept up to turn 1, request 2" in stopped.message
    assert "HTTP 503" in stopped.message and "try again later" in stopped.message
    spent = json.loads((tmp_path / "spent.json").read_text())
    assert CELL in spent["cells"], "the twin session wrote no spent.json"
    assert (tmp_path / "partial" / f"{CELL}.json").exists()
    assert first.routes_stopped == {"scripted": f"the run stopped after {CELL}'s busy"}

    again = session(tmp_path, resume=True)
    assert again.run_cell(cell).status == "done"
    record = json.loads((tmp_path / "cells" / f"{CELL}.json").read_text())
    assert record["format"] == "assistant-eval.agentdojo-cell/1"
    assert record["resumes"] == 1 and record["resume"]["points"][0]["code"] == "busy"
    assert record["resume"]["points"][0]["request"] == 2
    assert sum(record["requests_by_day"].values()) == 4, "three requests (two calls, the answer), the failed one counted once"
    assert [e["tool"] for e in record["service_log"]] == ["get_day_calendar_events", "create_calendar_event"]
    assert grade_record(record).utility


def test_an_owner_skip_of_an_agentdojo_cell_is_honoured(tmp_path):
    first = session(tmp_path)
    first.prepare_folders()
    options = first.options
    lines = runner.skip_cells(options, [CELL], "flaky tool", [])
    assert CELL in lines[0]
    result = session(tmp_path).run_cell(AgentDojoCellSpec("oracle", parse_cell_id(CELL)))
    assert result.status == "skipped" and "flaky tool" in result.message
    assert not (tmp_path / "cells" / f"{CELL}.json").exists()


def test_run_with_suite_agentdojo_needs_no_world_and_its_folder_has_the_shared_run_json(tmp_path):
    out = tmp_path / "r"
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "run", "--suite", "agentdojo:banking",
                           "--model", "scripted:oracle", "--out", str(out), "-p", "no:cacheprovider", "-q",
                           "-k", "AD-banking-1__ or AD-banking-2__"], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert f"Next: grade the results: assistant-eval grade-ai {out} --dir {out}-grading" in done.stdout
    run = json.loads((out / "run.json").read_text())
    assert run["format"] == "assistant-eval.agentdojo-run/2" and run["attack"] == "direct"
    assert run["planned"] == ["AD-banking-1__r1", "AD-banking-2__r1"]
    assert run["runs"][-1]["selection"]["cells"] == 2 and run["identity"]["benchmark"] == "agentdojo"
    for name in ("AD-banking-1__r1", "AD-banking-2__r1"):
        assert grade_record(json.loads((out / "cells" / f"{name}.json").read_text())).utility


def test_an_unknown_suite_is_refused_with_the_known_ones(tmp_path):
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "run", "--suite", "nope", "--model",
                           "scripted:oracle", "--out", str(tmp_path / "r")], capture_output=True, text=True, cwd=REPO)
    assert done.returncode != 0
    assert "unknown suite 'nope'" in done.stdout + done.stderr and "agentdojo" in done.stdout + done.stderr
    assert not (tmp_path / "r" / "run.json").exists()


def test_grade_ai_hands_agentdojo_folders_to_their_suite_and_the_leaderboard_prints_its_board(tmp_path):
    """The generic commands work for every suite: ``grade-ai`` of AgentDojo folders grades them with
    AgentDojo's utility() and security() into GRADING/agentdojo.json, ``leaderboard --dir`` prints it."""
    out = tmp_path / "r"
    cli = [sys.executable, "-m", "pytest_assistant_eval"]
    done = subprocess.run([*cli, "run", "--suite", "agentdojo:banking", "--model", "scripted:oracle", "--out", str(out),
                           "-p", "no:cacheprovider", "-q", "-k", "AD-banking-1__ or AD-banking-2__"],
                          capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    grading = tmp_path / "r-grading"
    graded = subprocess.run([*cli, "grade-ai", str(out), "--dir", str(grading)], capture_output=True, text=True)
    assert graded.returncode == 0, graded.stderr
    assert "Graded 2 AgentDojo cell(s)" in graded.stdout and (grading / "agentdojo.json").is_file()
    board = subprocess.run([*cli, "leaderboard", "--dir", str(grading)], capture_output=True, text=True)
    assert board.returncode == 0, board.stderr
    assert "benign utility" in board.stdout and "100% (n=2," in board.stdout


def test_grade_ai_refuses_results_folders_of_two_suites(tmp_path):
    """An AgentDojo folder beside one of ours: two benchmarks, never one grading."""
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    for folder, fmt in ((ours, "assistant-eval.run/1"), (theirs, "assistant-eval.agentdojo-run/2")):
        folder.mkdir()
        (folder / "run.json").write_text(json.dumps({"format": fmt}))
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "grade-ai", str(ours), str(theirs),
                           "--dir", str(tmp_path / "g")], capture_output=True, text=True)
    assert done.returncode == 2 and "several suites (agentdojo, calibration)" in done.stderr
    assert not (tmp_path / "g").exists()


def test_the_request_deadline_holds_for_an_agentdojo_cell_and_its_stop_is_filed_in_spent(tmp_path):
    """The shared session passes --request-deadline to AgentDojo's providers too (the twin did not):
    a server that never answers ends the attempt as a timeout, filed in spent.json."""
    from tests.provider_runs_helpers import run_env
    from tests.providers.fakes.base import Raw
    from tests.providers.fakes.openai_fake import OpenAIFake

    fake = OpenAIFake()
    fake.add(*[Raw(200, {"content-type": "application/json"}, b"{}", delay=30.0)] * 4)
    out = tmp_path / "r"
    with fake:
        done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "run", "--suite", "agentdojo:banking",
                               "--model", "openai:gpt-4o-2024-05-13", "--base-url", f"{fake.url}/v1", "--no-stream",
                               "--accept-data-notice", "--request-deadline", "0.5", "--out", str(out),
                               "-p", "no:cacheprovider", "-q", "-k", "AD-banking-1__"],
                              capture_output=True, text=True, cwd=REPO, env=run_env(), timeout=240)
    text = done.stdout + done.stderr
    assert done.returncode == 1, text[-3000:]
    assert "took longer than the deadline of 0.5 s for the whole answer" in text
    spent = json.loads((out / "spent.json").read_text())
    [entry] = spent["cells"]["AD-banking-1__r1"]
    assert entry["stop"]["code"] == "timeout"


def test_grade_ai_of_agentdojo_folders_keeps_the_folder_rules_of_every_grading(tmp_path):
    """The same checks as our grading (grading.folder.check_folders): a --dir inside a results folder
    and a folder given twice are refused before anything is written."""
    out = tmp_path / "r"
    (out / "cells").mkdir(parents=True)
    (out / "run.json").write_text(json.dumps({"format": "assistant-eval.agentdojo-run/2"}))
    cli = [sys.executable, "-m", "pytest_assistant_eval", "grade-ai"]
    inside = subprocess.run([*cli, str(out), "--dir", str(out / "grading")], capture_output=True, text=True)
    assert inside.returncode == 2 and "is inside the results folder" in inside.stderr
    twice = subprocess.run([*cli, str(out), str(out), "--dir", str(tmp_path / "g")], capture_output=True, text=True)
    assert twice.returncode == 2 and "is given twice" in twice.stderr
    assert not (out / "grading").exists() and not (tmp_path / "g").exists()
