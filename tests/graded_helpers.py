"""A real graded folder for the tests that review or report one: reference assistants run, then graded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"


def run_and_grade(base: Path, world_dir: Path, models: Sequence[str], seed: int, select: str = "basic") -> Path:
    """``base/results/<model>`` of the scripted ``models`` (the cells ``-k select`` picks, by default
    the basic level), graded offline into ``base/grading``."""
    from pytest_assistant_eval.suites.calibration.grade.folder import grade_command
    from pytest_assistant_eval.tables import priming  # as the CLI's grade-ai hands it in

    argv = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world_dir}", f"--out={base / 'results'}", "-q", "-p", "no:cacheprovider", "-k", select]
    for model in models:
        argv += ["--model", f"scripted:{model}"]
    subprocess.run([*argv, str(CALIBRATION / "cells.py")], check=True, capture_output=True)
    folders = results_folders(base)
    assert grade_command(folders, base / "grading", "scripted:rules", seed=seed, calibration=CALIBRATION,
                         single_model=len(folders) == 1, priming=priming) == 0
    return base / "grading"


def results_folders(base: Path) -> list[Path]:
    """The results folders of ``base/results``: one per model, or the folder itself for one model."""
    results = base / "results"
    if (results / "run.json").exists():
        return [results]
    return sorted(p for p in results.iterdir() if (p / "run.json").exists())
