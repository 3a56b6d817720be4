"""What the summary and the review both say of cells grade-ai has not graded yet (issue 29).

Below the tables and the review, which both name such cells (issue 32: the review no longer
imports the tables); ``tables.waiting`` keeps these names as its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["NOT_GRADED", "shown_numbers", "not_graded_advice"]

#: The reason of a cell in the grading's blind order that grade-ai has not graded yet.
NOT_GRADED = "not graded yet"


def shown_numbers(numbers: Sequence[int], most: int = 12) -> str:
    """``#3, #9 and 4 more``: blind numbers as the summary and the review name them."""
    numbers = sorted(numbers)
    shown = ", ".join(f"#{n}" for n in numbers[:most])
    return shown + (f" and {len(numbers) - most} more" if len(numbers) > most else "")


def not_graded_advice(grading_dir: Any, numbers: Sequence[int], grading: Mapping[str, Any],
                      found: Mapping[str, Any] | None = None) -> str:
    """What the summary and the review both say of cells grade-ai has not graded yet, and what to do (issue 29).

    Such a cell waits for grading, not for the owner: the review starts only once every cell is
    graded, so both commands name the same cells and the same next step.
    """
    import shlex

    judge = (grading.get("judge") or {}).get("grader") or "JUDGE"
    found = found or {}  # folder name -> where it was found (a table's GradingSource.folders)
    folders = " ".join(shlex.quote(str(found.get(f.get("name")) or f.get("path_hint") or f.get("name")))
                       for f in grading.get("folders") or [])
    return (f"{len(numbers)} cell(s) are not graded yet ({shown_numbers(numbers)}): finish the grading first, with "
            f"the command that started it: assistant-eval grade-ai {folders or 'RESULTS...'} --dir "
            f"{shlex.quote(str(grading_dir))} --judge {judge} (a grading by files: add --import-replies REPLIES); "
            "the review starts once every cell is graded")
