"""AgentDojo cells as pytest items (issue 16): ``--agentdojo`` through the plugin, as our own cells run.

Each test runs pytest in a fresh process (through ``assistant-eval agentdojo run`` or the
calibration's ini directly): cells spread over two real xdist workers, ``-k`` selects cells and
what it selected is the folder's plan, and a cell whose process was killed mid-conversation
continues from its checkpoint with ``--resume`` (and a folder with records is refused without it). Skipped without the ``[agentdojo]`` extra.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.suites.agentdojo.grade import grade_folders, grade_record  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"
WORKER_LINE = re.compile(r"^\[(?P<worker>gw\d+)\].*\bPASSED\b.*test_cell\[(?P<param>[^\]]+)\]")


def agentdojo_run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``assistant-eval agentdojo run ARGS`` in a fresh process (unknown options go to pytest)."""
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "agentdojo", "run", *args],
                          capture_output=True, text=True, cwd=REPO, env=env)


def test_cells_spread_over_two_xdist_workers_and_the_oracle_passes_utility(tmp_path):
    out = tmp_path / "oracle"
    done = agentdojo_run("--model", "scripted:oracle", "--suite", "banking", "--out", str(out), "-n", "2", "-v",
                         "-p", "no:cacheprovider", "-k", "AD-banking-1__ or AD-banking-2__ or AD-banking-3__ or "
                         "AD-banking-4__ or AD-banking-5__ or AD-banking-6__")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = {m["param"]: m["worker"] for line in done.stdout.splitlines() for m in [WORKER_LINE.match(line)] if m}
    assert sorted(ran) == [f"AD-banking-{n}__r1" for n in range(1, 7)]
    assert set(ran.values()) == {"gw0", "gw1"}, "limit-free scripted cells spread over both workers"
    grades = grade_folders([out], tmp_path / "grading.json")
    assert [g.cell for g in grades if not g.utility] == [] and len(grades) == 6


def test_k_selects_cells_and_the_selection_is_the_folders_plan(tmp_path):
    out = tmp_path / "follows"
    done = agentdojo_run("--model", "scripted:follows-injections", "--suite", "slack", "--crossed", "--out", str(out),
                         "-p", "no:cacheprovider", "-q", "-k", "AD-slack-1-i2__ or AD-slack-1__")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.stem for p in (out / "cells").glob("*.json")) == ["AD-slack-1-i2__r1", "AD-slack-1__r1"]
    run = json.loads((out / "run.json").read_text())
    assert run["planned"] == ["AD-slack-1-i2__r1", "AD-slack-1__r1"]
    assert run["selection"]["cells"] == 2 and run["selection"]["of"] == 21 * 6  # 21 user tasks × (benign + 5)
    crossed = grade_record(json.loads((out / "cells" / "AD-slack-1-i2__r1.json").read_text()))
    assert crossed.attack_success is True


DIES = textwrap.dedent("""
    # A pytest plugin for the test: the oracle's process dies (os._exit, nothing cleaned up) on its 3rd request.
    import os
    from pytest_assistant_eval.suites.agentdojo.reference import AgentDojoReference

    _complete = AgentDojoReference.complete
    _seen = [0]

    def complete(self, request):
        _seen[0] += 1
        if _seen[0] == 3:
            os._exit(9)
        return _complete(self, request)

    AgentDojoReference.complete = complete
""")


def test_a_cell_killed_under_pytest_resumes_from_its_checkpoint(tmp_path):
    cell_id = "AD-workspace-6__r1"  # two calls, the second creates an event
    (tmp_path / "dies_on_third_request.py").write_text(DIES, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "out"
    args = ("--model", "scripted:oracle", "--suite", "workspace", "--out", str(out), "-k", f"{cell_id}",
            "-p", "no:cacheprovider", "-q")
    killed = agentdojo_run(*args, "-p", "dies_on_third_request", env=env)
    assert killed.returncode == 9, killed.stdout[-2000:] + killed.stderr[-2000:]
    checkpoint = out / "partial" / f"{cell_id}.json"
    assert checkpoint.exists() and not (out / "cells" / f"{cell_id}.json").exists()
    resumed = agentdojo_run(*args, "--resume")
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    record = json.loads((out / "cells" / f"{cell_id}.json").read_text())
    assert record["resumes"] == 1 and not checkpoint.exists()
    assert [e["tool"] for e in record["service_log"]] == ["get_day_calendar_events", "create_calendar_event"]
    assert grade_record(record).utility
    again = agentdojo_run(*args)
    assert again.returncode != 0 and "--resume" in again.stderr, "a folder with records needs --resume"
