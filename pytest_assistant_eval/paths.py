"""Where the shipped files are: the one default every stage may read (CLI, grading, tables).

It lives below every stage so that none of them imports the CLI (the CLI is the top of the
stack; a stage importing it made a circle). Nothing here reads a file or imports a stage.
"""

from __future__ import annotations

from pathlib import Path


def default_calibration_dir() -> Path:
    """The shipped calibration folder: beside the package in a checkout, else ./calibration."""
    beside = Path(__file__).resolve().parent.parent / "calibration"
    return beside if (beside / "levels.yaml").exists() else Path.cwd() / "calibration"
