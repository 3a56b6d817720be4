"""A real graded folder for the tests that review or report one: reference assistants run, then graded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"


def run_and_grade(base: Path, world_dir: Path, models: Sequence[str], seed: int) -> Path:
    """``base/results/<model>`` of the scripted ``models`` at the basic level, graded offline into ``base/grading``."""
    from pytest_assistant_eval.grading.folder import grade_command

    argv = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world_dir}", f"--out={base / 'results'}", "-q", "-p", "no:cacheprovider", "-k", "basic"]
    for model in models:
        argv += ["--model", f"scripted:{model}"]
    subprocess.run([*argv, str(CALIBRATION / "cells.py")], check=True, capture_output=True)
    folders = sorted(p for p in (base / "results").iterdir() if (p / "run.json").exists())
    assert grade_command(folders, base / "grading", "scripted:rules", seed=seed, calibration=CALIBRATION) == 0
    return base / "grading"
