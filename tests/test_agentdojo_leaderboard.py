"""The main leaderboard shows AgentDojo's board when a grading folder has ``agentdojo.json`` (issue 16).

The AgentDojo grading file is written by hand in the shape ``agentdojo grade`` writes it, so
these tests need no extra: the board only reads JSON.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from pytest_assistant_eval.tables.leaderboard import leaderboard_command


def graded(model: str, cell: str, utility: bool, attack_success: bool | None = None) -> dict[str, Any]:
    return {"cell": cell, "model": model, "suite": "banking", "user_task": "user_task_0",
            "injection_task": None if attack_success is None else "injection_task_1", "utility": utility,
            "attack_success": attack_success, "final_state": utility, "real_info": True, "reports_back": None,
            "agrees": True, "cause": None}


def write_agentdojo(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    cells = [graded("oracle", "AD-banking-0__r1", True), graded("oracle", "AD-banking-0-i1__r1", True, False),
             graded("follows-injections", "AD-banking-0__r1", True),
             graded("follows-injections", "AD-banking-0-i1__r1", False, True)]
    (folder / "agentdojo.json").write_text(json.dumps({"format": "assistant-eval.agentdojo-grading/1",
                                                       "cells": cells}), encoding="utf-8")


def row_of(text: str, title: str, label: str) -> str:
    table = text[text.index(title):]
    return next(line for line in table.splitlines() if line.strip().startswith(label))


def all_row(text: str, label: str) -> str:
    """A model's row over all suites in the AgentDojo board."""
    table = text[text.index("AgentDojo"):]
    return next(line for line in table.splitlines() if line.startswith(label) and " all " in line)


def test_a_grading_folder_of_agentdojo_cells_only_prints_its_board(tmp_path: Path):
    write_agentdojo(tmp_path / "grading")
    out = io.StringIO()
    assert leaderboard_command(tmp_path / "grading", out=out) == 0
    text = out.getvalue()
    assert "utility" in text and "attack success" in text
    # Over all suites: benign utility, utility under attack and attack success, each of one cell (issue 25).
    oracle = all_row(text, "oracle")
    assert oracle.count("100% (n=1, ") == 2 and "0% (n=1, " in oracle
    follows = all_row(text, "follows-injections")
    assert follows.split()[3:5] == ["100%", "(n=1,"], "benign utility is the benign cell alone"
    assert "0% (n=1, " in follows and follows.rstrip().endswith("100% (n=1, 21–100%)")


def test_agentdojo_follows_our_tables_in_a_grading_folder_with_both(tmp_path: Path):
    grading = tmp_path / "grading"
    (grading / "cells").mkdir(parents=True)
    cell = {"format": "assistant-eval.graded-cell/1", "n": 1, "model": {"model": "oracle", "label": "oracle"},
            "kind": "task", "case": "T01", "level": "advanced", "repeat": 1, "outcome": "pass",
            "conversation_seconds": 1.0, "task": {"final": {"required_actions": True, "truthful": True}}}
    (grading / "cells" / "1.json").write_text(json.dumps(cell), encoding="utf-8")
    (grading / "grading.json").write_text(json.dumps({"format": "assistant-eval.grading/1", "order": [
        {"n": 1, "folder": "r", "cell": "T01__advanced__r1"}]}), encoding="utf-8")
    write_agentdojo(grading)
    out = io.StringIO()
    assert leaderboard_command(grading, out=out) == 0
    text = out.getvalue()
    assert text.index("Leaderboard: task runs") < text.index("AgentDojo v")
    assert "100% (n=1, " in all_row(text[text.index("AgentDojo v"):], "oracle")


def test_without_agentdojo_json_the_leaderboard_has_no_agentdojo_table(tmp_path: Path):
    grading = tmp_path / "grading"
    (grading / "cells").mkdir(parents=True)
    (grading / "grading.json").write_text(json.dumps({"format": "assistant-eval.grading/1", "order": []}),
                                          encoding="utf-8")
    out = io.StringIO()
    assert leaderboard_command(grading, out=out) == 0
    assert "AgentDojo" not in out.getvalue()


def test_the_agentdojo_board_puts_an_assistant_an_attack_succeeded_against_last(tmp_path: Path):
    # "eager" has the higher utility but one attack succeeded against it: safety first (issue 24).
    from pytest_assistant_eval.suites.agentdojo.board import render_board

    cells = [graded("eager", "AD-banking-0__r1", True), graded("eager", "AD-banking-0-i1__r1", True, True),
             graded("careful", "AD-banking-0__r1", False), graded("careful", "AD-banking-0-i1__r1", True, False)]
    lines = render_board(cells).splitlines()
    assert [ln.split()[0] for ln in lines[3:7:2]] == ["careful", "eager"]
    assert any(line.startswith("Order: safety first") for line in lines)
