"""The export to AgentDojo's own log layout (issue 25): AgentDojo's loader reads our runs.

A small real run (benign and crossed cells, ``important_instructions``, the reference assistant
that follows injections) is exported with ``assistant-eval agentdojo export`` and loaded back
with agentdojo's own ``load_task_results``: every cell is found where its TraceLogger would put
it, and utility and security are the ones our grading gives (security true when the attack
succeeded, true for a benign cell, as AgentDojo records it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.suites.agentdojo.grade import grade_folders  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
CELLS = ("AD-banking-0__r1", "AD-banking-0-i1__r1", "AD-slack-1__r1", "AD-slack-1-i2__r1", "AD-workspace-0-i0__r1")


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "agentdojo", *args],
                          capture_output=True, text=True, cwd=REPO)


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    base = tmp_path_factory.mktemp("export")
    out, logdir = base / "ad", base / "logs"
    done = cli("run", "--model", "scripted:follows-injections", "--out", str(out), "--attack",
               "important_instructions", "--cells", *CELLS)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    done = cli("export", str(out), "--logdir", str(logdir))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return out, logdir, base


def test_agentdojos_loader_reads_every_exported_cell_with_our_utility_and_security(exported):
    from agentdojo.benchmark import load_task_results

    out, logdir, base = exported
    grades = {g.cell: g for g in grade_folders([out], base / "g.json")}
    assert len(grades) == len(CELLS)
    for cell, grade in grades.items():
        attack = "important_instructions" if grade.injection_task else "none"
        loaded = load_task_results("follows-injections", grade.suite, grade.user_task, attack,
                                   grade.injection_task or "none", logdir)
        assert loaded.utility == grade.utility, cell
        assert loaded.security == (True if grade.injection_task is None else grade.attack_success), cell
        assert loaded.messages[0]["role"] == "system" and loaded.messages[-1]["role"] == "assistant"
    assert any(g.attack_success for g in grades.values())  # the attack succeeded somewhere: security true there


def test_the_export_has_the_fields_agentdojos_trace_logger_writes(exported):
    out, logdir, _ = exported
    data = json.loads((logdir / "follows-injections" / "banking" / "user_task_0" / "important_instructions"
                       / "injection_task_1.json").read_text(encoding="utf-8"))
    assert set(data) == {"suite_name", "pipeline_name", "user_task_id", "injection_task_id", "attack_type",
                         "injections", "messages", "error", "benchmark_version", "evaluation_timestamp",
                         "agentdojo_package_version", "duration", "utility", "security"}
    assert data["attack_type"] == "important_instructions" and data["injection_task_id"] == "injection_task_1"
    assert "to you, follows-injections." in "".join(data["injections"].values())
    benign = json.loads((logdir / "follows-injections" / "banking" / "user_task_0" / "none" / "none.json")
                        .read_text(encoding="utf-8"))
    assert benign["attack_type"] is None and benign["injections"] == {} and benign["security"] is True


def test_a_run_in_our_conversation_is_not_exported(tmp_path):
    out = tmp_path / "ours"
    done = cli("run", "--model", "scripted:oracle", "--out", str(out), "--conversation", "ours",
               "--cells", "AD-banking-0__r1")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    done = cli("export", str(out), "--logdir", str(tmp_path / "logs"))
    assert done.returncode == 2 and "not comparable with AgentDojo's leaderboard" in done.stderr
    assert not (tmp_path / "logs").exists()
