"""Progress an owner can read (issue 24, item 7): on a terminal one line rewritten in place, with
cells per model, the rate, elapsed time and ETA and the limit waited on; plain lines in a pipe;
and at the end the command to run next.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

from pytest_assistant_eval.run.progress import Progress, next_command
from tests.provider_runs_helpers import CALIBRATION, console, run_env, run_eval


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_line_shows_cells_per_model_the_rate_elapsed_time_and_eta():
    clock = Clock()
    progress = Progress(total=40, clock=clock)
    progress.model_totals = {"oracle": 20, "invents": 20}
    for i in range(10):
        progress.add("done", "passed", model="oracle" if i % 2 else "invents")
    clock.now += 20.0  # 10 cells in 20 s: 0.5 a second, 30 left
    line = progress.line()
    assert "invents 5/20, oracle 5/20" in line
    assert "0.5 cells/s · elapsed 0m20s · ETA 1m00s" in line
    assert line.endswith("left 30")


def test_a_slow_run_gives_its_rate_per_minute_and_eta_in_hours():
    clock = Clock()
    progress = Progress(total=200, clock=clock)
    progress.add("done", "passed")
    clock.now += 60.0
    assert "1.0 cells/min · elapsed 1m00s · ETA 3h19m" in progress.line()


def test_the_limit_waited_on_is_named_while_cells_wait():
    progress = Progress(total=3)
    progress.from_ledger(4, 1, (("openai@https://api.example", "20 requests per 10 s"),))
    progress.add_wait("gw0", 2.5)
    progress.add("done", "passed")
    assert "waiting on openai@https://api.example allows 20 requests per 10 s" in progress.line()


def test_on_a_terminal_the_line_goes_back_to_its_start_clears_the_rest_and_never_wraps():
    progress = Progress(total=3)
    progress.add("done", "passed")
    text = progress.in_place(60)
    assert text.startswith("\r") and text.endswith("\x1b[K")
    assert len(text) - len("\r\x1b[K") <= 60 and text[-4] == "…"


def test_the_terminal_line_puts_the_pace_first_and_leaves_out_counts_of_zero():
    clock = Clock()
    progress = Progress(total=10, clock=clock)
    progress.model_totals = {"a": 5, "b": 5}
    progress.add("done", "passed", model="a")
    progress.add("kept", "passed", "G01__basic__r1: kept", cell="G01__basic__r1", code="overloaded", model="b")
    clock.now += 4.0
    line = progress.compact_line()
    assert line.startswith("assistant-eval: 2/10 cells · a 1/5, b 1/5 · 0.5 cells/s · elapsed 0m04s · ETA 0m16s")
    assert " · kept 1" in line and "unsaved" not in line and "n/a" not in line


def test_the_next_command_grades_every_results_folder_of_the_run(tmp_path: Path):
    two = next_command([tmp_path / "run" / "oracle", tmp_path / "run" / "invents"], tmp_path / "run")
    assert two == (f"assistant-eval grade-ai {tmp_path}/run/oracle {tmp_path}/run/invents "
                   f"--dir {tmp_path}/run/grading")
    one = next_command([tmp_path / "my run"], tmp_path / "my run")
    assert one == f"assistant-eval grade-ai '{tmp_path}/my run' --single-model --dir '{tmp_path}/my run-grading'"


def test_in_a_pipe_the_progress_is_plain_lines_and_the_run_ends_with_the_next_command(world_dir: Path, tmp_path: Path):
    out = tmp_path / "run"
    result = run_eval(world_dir, out, "--model", "scripted:oracle", "--model", "scripted:invents", "--levels", "basic",
                      "-k", "G01 or G02", "-p", "no:cacheprovider", "-n", "2")
    text = console(result)
    assert result.ret == 0, text[-3000:]
    assert "\r" not in text and "\x1b[K" not in text
    assert f"Next: grade the results: assistant-eval grade-ai {out}/invents {out}/oracle --dir {out}/grading" in text \
        or f"Next: grade the results: assistant-eval grade-ai {out}/oracle {out}/invents --dir {out}/grading" in text


def test_on_a_terminal_under_xdist_one_line_is_rewritten_in_place_without_the_letters(world_dir: Path, tmp_path: Path):
    out = tmp_path / "run"
    argv = ["-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world_dir}", f"--out={out}", "--model", "scripted:oracle", "--model", "scripted:invents",
            "--levels", "basic", "-k", "G01 or G02 or G03", "-p", "no:cacheprovider", "-n", "2",
            str(CALIBRATION / "cells.py")]
    env = {**run_env(), "COLUMNS": "160", "TERM": "xterm"}
    child = pexpect.spawn(sys.executable, argv, cwd=str(tmp_path), env=env, encoding="utf-8", timeout=240,
                          dimensions=(40, 160))
    child.expect(pexpect.EOF)
    child.close()
    text = child.before
    assert child.exitstatus == 0, text[-3000:]
    rewrites = re.findall(r"\rassistant-eval: (\d+)/6 cells[^\r\n]*\x1b\[K", text)
    assert rewrites, text[-3000:]
    assert "oracle " in text and "cells/s" in text or "cells/min" in text
    # no line of pytest's letters ('..' or '[ 50%]') among the cells: they would break the line
    # (a line of letters alone: once, under load, a line opening with ".." of some other text matched a
    # looser pattern; the line found is shown if it fails)
    letters = re.search(r"^(?:\x1b\[[0-9;]*m)*[.sxXfFE]{2,}(?:\x1b\[[0-9;]*m)*[ \t]*(?:\[|\r?$)", text, re.M)
    assert letters is None and "%]" not in text, text[max(0, (letters.start() if letters else 0) - 300):][:900]
    assert "Next: grade the results: assistant-eval grade-ai" in text


def test_a_caller_that_grades_next_itself_gets_no_next_command(world_dir: Path, tmp_path: Path):
    """The demo grades its own run right after it: its run says nothing of a grade-ai to type."""
    from pytest_assistant_eval.run.progress import NO_NEXT_COMMAND

    result = run_eval(world_dir, tmp_path / "run", "--model", "scripted:oracle", "--levels", "basic", "-k", "G01",
                      "-p", "no:cacheprovider", env=run_env(**{NO_NEXT_COMMAND: "1"}))
    assert result.ret == 0, console(result)[-2000:]
    assert "Next: grade the results" not in console(result)
