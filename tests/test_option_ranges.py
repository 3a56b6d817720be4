"""Every numeric option is range-checked when the command line is parsed (issue 31, item H).

``--request-deadline inf`` (or ``1e999``, ``1e12``) was accepted, then every cell failed with
``OverflowError: timestamp out of range``. Each command refuses such a value at once, naming the
option and its range, with no traceback and before anything is written.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytest_assistant_eval import cli
from tests.provider_runs_helpers import CALIBRATION

BAD_SECONDS = ["inf", "-inf", "nan", "1e999", "1e12", "-1", "ten"]


@pytest.mark.parametrize("value", BAD_SECONDS)
@pytest.mark.parametrize("argv", [
    ["run", "--world", "w", "--model", "scripted:oracle", "--request-deadline"],
    ["run", "--world", "w", "--model", "scripted:oracle", "--pace"],
    ["grade-ai", "r", "--dir", "g", "--pace"],
])
def test_a_number_of_seconds_out_of_range_is_refused_when_parsed(argv, value, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([*argv[:-1], f"{argv[-1]}={value}"])  # '=': argparse takes -1 for an option
    assert done.value.code == 2
    err = capsys.readouterr().err
    assert argv[-1] in err and ("out of range" in err or "not a number" in err), err


@pytest.mark.parametrize("argv", [
    ["run", "--world", "w", "--repeats", "0"], ["run", "--world", "w", "--repeats", "1e9"],
    ["run", "--world", "w", "--max-requests-per-day=-1", ""], ["grade-ai", "r", "--dir", "g", "--seed=-5", ""],
    ["leaderboard", "--dir", "g", "--k", "0"], ["report", "--dir", "g", "--k", "100000"],
    ["review", "--dir", "g", "--sitting=-1", ""], ["grade-ai", "r", "--dir", "g", "--max-requests-per-day", "1e3"],
])
def test_a_whole_number_out_of_range_is_refused_when_parsed(argv, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([a for a in argv if a])
    assert done.value.code == 2 and argv[-2].split("=")[0] in capsys.readouterr().err


def test_the_run_plugin_refuses_an_infinite_deadline_before_any_cell(world_dir, tmp_path):
    out = tmp_path / "results"
    argv = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world_dir}", f"--out={out}", "--model", "scripted:oracle", "-k", "G01",
            "--request-deadline", "inf", str(CALIBRATION / "cells.py")]
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    text = done.stdout + done.stderr
    assert done.returncode == 4 and "--request-deadline" in text and "out of range" in text, text
    assert "Traceback" not in text and "OverflowError" not in text and not out.exists()


def test_a_deadline_in_range_is_accepted():
    args, _ = cli.build_parser().parse_known_args(["run", "--request-deadline", "600", "--pace", "0"])
    assert args.request_deadline == 600.0 and args.pace == 0.0
