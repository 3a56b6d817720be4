"""AgentDojo through our runner (issue 16). Skipped without the ``[agentdojo]`` extra (CI installs it).

One task per suite: the backend's tool calls, refusals, errors, state diff and exact restore.
The oracle's utility on all 97 user tasks (one test per suite, so ``-n 2`` spreads them), a
crossed cell where follows-injections' attack succeeds and the oracle's does not, and the
resume of a cell whose process was killed mid-conversation.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.run.session import RunSession  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.cells import all_cells, parse_cell_id, start_environment, suites  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.grade import grade_folders, grade_record  # noqa: E402
from pytest_assistant_eval.suites.plan import ModelSpec  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.backend import AgentDojoWorld, diff_environments  # noqa: E402

SUITES = ("banking", "slack", "travel", "workspace")
# (a read call, a call the tool itself refuses, a call that changes the world) per suite
CALLS = {
    "banking": (("get_balance", {}), ("update_scheduled_transaction", {"id": 999}),
                ("send_money", {"recipient": "X1", "amount": 5.0, "subject": "t", "date": "2022-01-01"})),
    "slack": (("get_channels", {}), ("read_channel_messages", {"channel": "no-such-channel"}),
              ("send_direct_message", {"recipient": "Alice", "body": "hi"})),
    "travel": (("get_all_hotels_in_city", {"city": "Paris"}), ("cancel_calendar_event", {"event_id": "999"}),
               ("reserve_hotel", {"hotel": "Le Marais Boutique", "start_day": "2024-05-01", "end_day": "2024-05-02"})),
    "workspace": (("get_current_day", {}), ("delete_email", {"email_id": "no-such-email"}),
                  ("delete_file", {"file_id": "0"})),
}


@pytest.mark.parametrize("suite", SUITES)
def test_the_backend_calls_refuses_diffs_and_restores_on_one_task_per_suite(suite):
    world = AgentDojoWorld(suites()[suite], start_environment(parse_cell_id(f"AD-{suite}-0__r1")))
    tools = {t.name: t for t in world.list_tools()}
    assert all(t.parameters["type"] == "object" and t.parameters["additionalProperties"] is False for t in tools.values())
    start = world.snapshot()
    (read, read_args), (bad, bad_args), (write, write_args) = CALLS[suite]
    assert world.call(read, read_args, turn=1, round=1).status == "ok"
    refused = world.call(bad, bad_args, turn=1, round=2)
    assert refused.status == "refused" and refused.error, "an exception the tool raises is the world refusing"
    assert world.call("no_such_tool", {}, turn=1, round=3).status == "error"
    assert world.snapshot() == start, "a read, a refusal and an error change nothing"
    assert tools[write].consequential
    assert world.call(write, write_args, turn=1, round=4).status == "ok"
    changed = world.snapshot()
    assert diff_environments(start, changed)
    assert [e.status for e in world.log][-1] == "ok" and len(world.log) == 4
    world.restore(start)
    assert world.snapshot() == start
    world.restore(changed)
    assert world.snapshot() == changed, "restore is exact, derived fields included"


def test_arguments_the_schema_refuses_are_an_error_not_a_refusal():
    world = AgentDojoWorld(suites()["banking"], start_environment(parse_cell_id("AD-banking-0__r1")))
    result = world.call("send_money", {"recipient": "X1"}, turn=1, round=1)
    assert result.status == "error" and "send_money" in result.error


@pytest.mark.parametrize("suite", SUITES)
def test_the_oracle_passes_agentdojos_utility_on_every_user_task(tmp_path, suite):
    run = AgentDojoRun(make_session=RunSession, out=tmp_path / "oracle", model=ModelSpec("scripted", "oracle"))
    cells = all_cells(suite_names=(suite,))
    for cell in cells:
        run_cell(run, cell)
    grades = grade_folders([run.out], tmp_path / "grading.json")
    assert len(grades) == {"banking": 16, "slack": 21, "travel": 20, "workspace": 40}[suite]
    assert [g.cell for g in grades if not g.utility] == []
    assert [g.cell for g in grades if g.agrees is False] == []
    # Our checks apply only where they fit an AgentDojo cell: the oracle fails none that applies (issue 25).
    assert [g.cell for g in grades if g.real_info is False or g.reports_back is False] == []


def test_a_crossed_cell_measures_attack_success(tmp_path):
    cell = parse_cell_id("AD-slack-1-i2__r1")
    grades = {}
    for model in ("oracle", "follows-injections"):
        run = AgentDojoRun(make_session=RunSession, out=tmp_path / model, model=ModelSpec("scripted", model))
        grades[model] = grade_record(json.loads(run_cell(run, cell).read_text()))
    assert grades["oracle"].attack_success is False and grades["oracle"].utility
    assert grades["follows-injections"].attack_success is True


KILLER = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from pytest_assistant_eval.run.session import RunSession
    from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell
    from pytest_assistant_eval.suites.agentdojo.cells import parse_cell_id
    from pytest_assistant_eval.suites.plan import ModelSpec
    from pytest_assistant_eval.suites.agentdojo.reference import AgentDojoReference

    class DiesOnThirdRequest(AgentDojoReference):
        seen = 0
        def complete(self, request):
            DiesOnThirdRequest.seen += 1
            if DiesOnThirdRequest.seen == 3:
                os._exit(9)  # a kill: nothing is cleaned up
            return super().complete(request)

    run = AgentDojoRun(make_session=RunSession, out=Path(sys.argv[1]), model=ModelSpec("scripted", "oracle"))
    run._provider = DiesOnThirdRequest("oracle")
    run_cell(run, parse_cell_id(sys.argv[2]))
""")


def test_a_killed_cell_resumes_from_its_checkpoint_without_doing_anything_twice(tmp_path):
    cell_id = "AD-workspace-6__r1"  # two calls, the second creates an event
    killed = subprocess.run([sys.executable, "-c", KILLER, str(tmp_path), cell_id], capture_output=True, text=True)
    assert killed.returncode == 9, killed.stderr
    checkpoint = tmp_path / "partial" / f"{cell_id}.json"
    assert checkpoint.exists() and not (tmp_path / "cells" / f"{cell_id}.json").exists()
    run = AgentDojoRun(make_session=RunSession, out=tmp_path, model=ModelSpec("scripted", "oracle"), resume=True)
    record = json.loads(run_cell(run, parse_cell_id(cell_id)).read_text())
    assert record["resumes"] == 1 and not checkpoint.exists()
    assert [e["tool"] for e in record["service_log"]] == ["get_day_calendar_events", "create_calendar_event"]
    assert grade_record(record).utility


def test_the_cli_runs_grades_and_prints_the_board(tmp_path):
    base = [sys.executable, "-m", "pytest_assistant_eval", "agentdojo"]
    subprocess.run([*base, "run", "--model", "scripted:oracle", "--model", "scripted:answers-nothing", "--out",
                    str(tmp_path / "r"), "--cells", "AD-banking-1__r1", "AD-banking-0-i1__r1"], check=True,
                   capture_output=True)
    subprocess.run([*base, "grade", str(tmp_path / "r" / "oracle"), str(tmp_path / "r" / "answers-nothing"),
                    "--out", str(tmp_path / "g.json")], check=True, capture_output=True)
    board = subprocess.run([*base, "board", str(tmp_path / "g.json")], check=True, capture_output=True, text=True).stdout
    # Benign utility and utility under attack apart (one cell each), never pooled into n=2 (issue 25).
    assert "benign utility" in board and "utility under attack" in board and "attack success" in board
    assert "n=2" not in board and "n=1" in board
    assert "banking: 1 of 16 user tasks, 1 of 144 crossed pairs; attack direct" in board
    cross = subprocess.run([*base, "crosscheck", str(tmp_path / "g.json")], check=True, capture_output=True,
                           text=True).stdout
    assert "Cross-check" in cross and "banking" in cross
