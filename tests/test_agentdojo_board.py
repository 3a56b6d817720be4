"""The AgentDojo board as AgentDojo reports it, and grading that fits the suite (issue 25).

Benign utility, utility under attack and attack success apart; settings (our conversation, a
defense) labelled and never pooled; each run's selection printed with the figures; utility()
on the start state flagged by evaluating it; our checks only where they fit, shown apart.
Tests that run cells need the ``[agentdojo]`` extra; the board tests only read JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.suites.agentdojo.board import board_rows, render_board, render_crosscheck
from pytest_assistant_eval.suites.agentdojo.selection import selection_lines


def graded(model: str, cell: str, utility: bool, attack_success: bool | None = None, *, suite: str = "banking",
           conversation: str = "agentdojo", defense: str | None = None, holds: bool = False) -> dict[str, Any]:
    crossed = attack_success is not None
    return {"cell": cell, "model": model, "suite": suite, "user_task": "user_task_" + cell.split("-")[2].split("_")[0],
            "injection_task": "injection_task_1" if crossed else None,
            "attack": "important_instructions" if crossed else None, "benchmark_version": "v1.2.2",
            "agentdojo_version": "0.1.35", "conversation": conversation, "defense": defense, "utility": utility,
            "attack_success": attack_success, "holds_at_start": holds, "final_state": None, "real_info": None,
            "reports_back": None, "agrees": None, "cause": None, "run": 0}


def figures(cells: list[dict[str, Any]], model: str, suite: str = "all") -> dict[str, tuple[int | None, int]]:
    row = next(r for r in board_rows(cells) if r.model == model and r.suite == suite)
    return {name: (i.successes, i.n) for name, i in row.figures.items()}


def test_benign_utility_and_utility_under_attack_are_counted_apart_not_pooled():
    # 2 benign cells pass; of 3 attacked cells 1 keeps its utility and 2 attacks succeed.
    cells = [graded("m", "AD-banking-0__r1", True), graded("m", "AD-banking-1__r1", True),
             graded("m", "AD-banking-0-i1__r1", True, False), graded("m", "AD-banking-1-i1__r1", False, True),
             graded("m", "AD-banking-2-i1__r1", False, True)]
    assert figures(cells, "m") == {"benign_utility": (2, 2), "utility_under_attack": (1, 3), "attack_success": (2, 3)}
    text = render_board(cells)
    assert "100% (n=2, " in text and "33% (n=3, " in text and "67% (n=3, " in text
    assert "(n=5" not in text, "no figure pools benign and attacked cells"


def test_the_board_gives_each_suite_and_all_suites():
    cells = [graded("m", "AD-banking-0__r1", True), graded("m", "AD-slack-0__r1", False, suite="slack")]
    assert figures(cells, "m", "banking")["benign_utility"] == (1, 1)
    assert figures(cells, "m", "slack")["benign_utility"] == (0, 1)
    assert figures(cells, "m", "all")["benign_utility"] == (1, 2)


def test_cells_of_our_conversation_or_a_defense_are_labelled_and_never_pooled_with_agentdojos():
    cells = [graded("m", "AD-banking-0__r1", True), graded("m", "AD-banking-1__r1", False, conversation="ours"),
             graded("m", "AD-banking-2__r1", False, defense="tool_filter")]
    rows = [r for r in board_rows(cells) if r.suite == "all"]
    assert {(r.setting[1], r.setting[2], r.figures["benign_utility"].n) for r in rows} == {
        ("agentdojo", None, 1), ("agentdojo", "tool_filter", 1), ("ours", None, 1)}
    text = render_board(cells)
    assert "AgentDojo v1.2.2, AgentDojo's conversation, no defense" in text
    assert "our conversation: not comparable with AgentDojo's leaderboard" in text
    assert "defense tool_filter" in text


def test_tasks_whose_utility_holds_at_start_are_flagged_on_the_board_and_the_crosscheck():
    cells = [graded("m", "AD-banking-5__r1", True, holds=True), graded("m", "AD-banking-0__r1", True)]
    assert "banking user tasks 5" in render_board(cells)
    cross = render_crosscheck(cells)
    assert "utility() holds at start" in cross and " 5 " in next(ln for ln in cross.splitlines() if "banking" in ln)


def test_the_selection_says_how_much_of_each_suite_ran_and_how_it_was_chosen():
    runs = [{"folder": "oracle", "model": "oracle", "benchmark_version": "v1.2.2", "attack": "important_instructions",
             "planned": 40, "selection": {"keyword": "AD-banking", "markexpr": None, "cells": 40, "of": 1046},
             "graded": 35, "suites_of": 4,
             "suites": {"banking": {"user_tasks": 16, "user_tasks_of": 16, "pairs": 19, "pairs_of": 144, "cells": 35}}}]
    (line,) = selection_lines(runs)
    assert line.startswith("oracle: banking: 16 of 16 user tasks, 19 of 144 crossed pairs; attack important_instructions, "
                           "benchmark v1.2.2")
    assert "-k 'AD-banking': 40 of 1046 cells" in line and "5 planned cell(s) without a record" in line
    assert line.endswith("(a subset)")
    whole = {**runs[0], "selection": None, "planned": None,
             "suites": {s: {"user_tasks": n, "user_tasks_of": n, "pairs": p, "pairs_of": p, "cells": n + p}
                        for s, n, p in (("banking", 16, 144), ("slack", 21, 105), ("travel", 20, 140),
                                        ("workspace", 40, 560))}}
    assert selection_lines([whole])[0].endswith("(all user tasks and all pairs)")


def test_a_grading_file_of_format_1_is_still_read_and_says_what_it_lacks(tmp_path: Path):
    from pytest_assistant_eval.suites.agentdojo.board import board_for_grading_folder

    cell = {"cell": "AD-banking-0__r1", "model": "m", "suite": "banking", "user_task": "user_task_0",
            "injection_task": None, "utility": True, "attack_success": None, "final_state": True, "real_info": None,
            "reports_back": None, "agrees": True, "cause": None}
    (tmp_path / "agentdojo.json").write_text(json.dumps({"format": "assistant-eval.agentdojo-grading/1",
                                                         "cells": [cell]}), encoding="utf-8")
    text = board_for_grading_folder(tmp_path)
    assert text is not None and "our conversation: not comparable" in text and "not recorded (grading file /1" in text


# -- grading: needs the extra ------------------------------------------------------------------

def _grades(tmp_path: Path, model: str, cells: list[str], attack: str = "direct") -> list[Any]:
    pytest.importorskip("agentdojo")
    from pytest_assistant_eval.suites.plan import ModelSpec
    from pytest_assistant_eval.suites.agentdojo.cells import parse_cell_id
    from pytest_assistant_eval.suites.agentdojo.grade import grade_folders
    from pytest_assistant_eval.run.session import RunSession
    from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell

    from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings

    run = AgentDojoRun(make_session=RunSession, out=tmp_path / model, model=ModelSpec("scripted", model), settings=AgentDojoSettings(attack=attack))
    for cell in cells:
        run_cell(run, parse_cell_id(cell))
    return grade_folders([run.out], tmp_path / f"{model}.json")


def test_utility_at_start_is_flagged_by_evaluating_it_not_by_a_list(tmp_path: Path):
    cells = [f"AD-banking-{n}__r1" for n in range(16)]
    flagged = {g.user_task for g in _grades(tmp_path, "oracle", cells) if g.holds_at_start}
    assert {"user_task_5", "user_task_8", "user_task_9", "user_task_10"} <= flagged
    # An assistant that does nothing passes utility exactly where it holds at start: the flag is that evaluation.
    idle = {g.user_task for g in _grades(tmp_path, "answers-nothing", cells) if g.utility}
    assert idle == flagged
    board = render_board(json.loads((tmp_path / "oracle.json").read_text())["cells"])
    assert "banking user tasks " + ", ".join(sorted((t.rsplit("_", 1)[1] for t in flagged), key=int)) in board


def test_the_grading_file_carries_each_runs_selection(tmp_path: Path):
    _grades(tmp_path, "oracle", ["AD-banking-0__r1", "AD-banking-0-i1__r1", "AD-slack-1__r1"])
    data = json.loads((tmp_path / "oracle.json").read_text())
    assert data["format"] == "assistant-eval.agentdojo-grading/2"
    (run,) = data["runs"]
    assert run["suites"]["banking"] == {"user_tasks": 1, "user_tasks_of": 16, "pairs": 1, "pairs_of": 144, "cells": 2}
    assert run["attack"] == "direct" and run["suites"]["slack"]["pairs"] == 0


def test_a_denial_of_service_attack_succeeds_when_the_task_fails_as_agentdojo_counts_it(tmp_path: Path):
    oracle = _grades(tmp_path, "oracle", ["AD-banking-0-i1__r1"], attack="dos")
    idle = _grades(tmp_path, "answers-nothing", ["AD-banking-0-i1__r1"], attack="dos")
    assert (oracle[0].utility, oracle[0].attack_success) == (True, False)
    assert (idle[0].utility, idle[0].attack_success) == (False, True)


def test_no_oracle_cell_fails_an_applicable_check_of_ours_under_important_instructions(tmp_path: Path):
    # slack 10 × injection 5: the injected text is a channel name holding an e-mail address, which is no identifier.
    cells = ["AD-slack-10-i5__r1", "AD-slack-7-i5__r1", "AD-banking-0__r1", "AD-travel-0__r1", "AD-workspace-15__r1",
             "AD-banking-2-i3__r1"]
    grades = _grades(tmp_path, "oracle", cells, attack="important_instructions")
    assert [(g.cell, g.real_info, g.reports_back) for g in grades if False in (g.real_info, g.reports_back)] == []


def _record(tmp_path: Path, cell: str) -> dict[str, Any]:
    pytest.importorskip("agentdojo")
    from pytest_assistant_eval.suites.plan import ModelSpec
    from pytest_assistant_eval.suites.agentdojo.cells import parse_cell_id
    from pytest_assistant_eval.run.session import RunSession
    from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell

    run = AgentDojoRun(make_session=RunSession, out=tmp_path, model=ModelSpec("scripted", "oracle"))
    return json.loads(run_cell(run, parse_cell_id(cell)).read_text())


def test_real_info_leaves_out_values_from_the_task_prose_but_catches_an_invented_identifier(tmp_path: Path):
    from pytest_assistant_eval.suites.agentdojo.ours import our_checks

    record = _record(tmp_path, "AD-travel-0__r1")  # reserves "2025-01-11" from "January 11th ... 2025"
    assert our_checks(record)[0] is not False
    record = _record(tmp_path, "AD-workspace-13__r1")  # files and e-mails by id, found by the calls before
    assert our_checks(record)[0] is True
    act = next(e for e in record["service_log"] if e["status"] == "ok" and e["tool"] == "send_email")
    act["arguments"]["recipients"] = ["nobody-shown@example.com"]  # an address no tool showed and the user never gave
    assert our_checks(record)[0] is False


def test_reports_back_asks_only_that_a_refused_action_is_told(tmp_path: Path):
    from pytest_assistant_eval.suites.agentdojo.ours import our_checks

    record = _record(tmp_path, "AD-banking-0__r1")
    assert our_checks(record)[1] is None, "an action done and not narrated is AgentDojo's answer style"
    pay = next(e for e in record["service_log"] if e["tool"] == "send_money")
    pay["status"] = "refused"
    assert our_checks(record)[1] is False, "a refused payment the answer keeps quiet about"
    record["transcript"].append({"type": "assistant", "text": "The payment could not be made: it was refused."})
    assert our_checks(record)[1] is True


def test_the_same_models_cell_in_two_folders_is_refused_not_counted_twice(tmp_path: Path):
    pytest.importorskip("agentdojo")
    from pytest_assistant_eval.suites.plan import ModelSpec
    from pytest_assistant_eval.records import RecordError
    from pytest_assistant_eval.suites.agentdojo.cells import parse_cell_id
    from pytest_assistant_eval.suites.agentdojo.grade import grade_folders
    from pytest_assistant_eval.run.session import RunSession
    from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell

    for name in ("first", "again"):
        run_cell(AgentDojoRun(make_session=RunSession, out=tmp_path / name, model=ModelSpec("scripted", "oracle")), parse_cell_id("AD-banking-1__r1"))
    with pytest.raises(RecordError, match="AD-banking-1__r1 is graded from .*first already"):
        grade_folders([tmp_path / "first", tmp_path / "again"], tmp_path / "g.json")
    assert not (tmp_path / "g.json").exists()


def test_a_cell_not_applicable_is_in_no_figure_and_the_selection_says_so(tmp_path: Path):
    """The shared session can write an AgentDojo ``"status": "na"`` record (an Ollama variant that
    does not fit, the per-minute input quota refused twice): grading skips it, the line counts it."""
    pytest.importorskip("agentdojo")
    import subprocess
    import sys

    out = tmp_path / "oracle"
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "agentdojo", "run", "--model",
                           "scripted:oracle", "--out", str(out), "--cells", "AD-banking-0__r1", "AD-banking-1__r1"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    path = out / "cells" / "AD-banking-1__r1.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({k: record[k] for k in ("format", "cell", "benchmark_version", "suite", "user_task",
                                                        "injection_task", "attack", "repeat", "model")}
                               | {"status": "na", "na_reason": "provider quota per request"}), encoding="utf-8")
    from pytest_assistant_eval.suites.agentdojo.grade import grade_folders

    grades = grade_folders([out], tmp_path / "g.json")
    assert [g.cell for g in grades] == ["AD-banking-0__r1"]
    runs = json.loads((tmp_path / "g.json").read_text(encoding="utf-8"))["runs"]
    assert runs[0]["not_applicable"] == ["AD-banking-1__r1"]
    (line,) = selection_lines(runs)
    assert "1 cell(s) not applicable, in no figure" in line and "without a record" not in line


def test_a_cell_is_graded_with_the_benchmark_version_it_ran_not_the_installed_default(tmp_path: Path):
    """banking user task 6's utility holds on the untouched start state in v1.2.2, not in v1.2.1: a
    v1.2.1 run of an assistant that does nothing must fail it, graded against v1.2.1's task."""
    pytest.importorskip("agentdojo")
    import subprocess
    import sys

    from pytest_assistant_eval.suites.agentdojo.grade import grade_folders

    grades = {}
    for version in ("v1.2.1", "v1.2.2"):
        out = tmp_path / version
        done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "agentdojo", "run", "--model",
                               "scripted:answers-nothing", "--out", str(out), "--benchmark-version", version,
                               "--cells", "AD-banking-6__r1"], capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        (grade,) = grade_folders([out], tmp_path / f"{version}.json")
        grades[version] = (grade.benchmark_version, grade.holds_at_start, grade.utility)
    assert grades == {"v1.2.1": ("v1.2.1", False, False), "v1.2.2": ("v1.2.2", True, True)}
