"""One grade per cell (S8.7, issue 29 item 1): the final grade every figure reads.

A cell's final grade is the owner's where the review gave one, else the judge's (the automatic
checks finished by the judge), else it waits: queued for the owner and not reviewed, or an item
nobody settled. A waiting cell is counted apart, never as a pass or a fail. The rule is the
results line's (``lines.graded_fields``, the review marker of ``review/overlay.py`` and the
waiting rules of ``waiting.py``): ``summary`` and ``summary --record`` write it, ``calibrate``
reads what they wrote, and the leaderboard, ``compare`` and the report read it through
``cell_grade`` here, so no table reads a judge's outcome the owner overruled.

``read_final_cells`` is how a table opens a grading folder for its graded cells: the slim
cells (``docs/digests.md``) with the review's marker put on them and each model's name
(``model_names``).
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_assistant_eval.tables.lines import graded_fields, line_part
from pytest_assistant_eval.tables.model_names import display_names
from pytest_assistant_eval.tables.waiting import waiting_reasons

__all__ = ["Grade", "cell_grade", "name_cells", "model_label", "read_final_cells", "final_task_checks"]


@dataclass(frozen=True)
class Grade:
    """A cell's final grade: its outcome (``waiting`` while it waits), who gave it, and what a table reads of it."""

    outcome: str
    grader: str  # "owner", the judge's id, or "none"
    waiting: tuple[str, ...]  # why it waits; empty when the grade is final
    checks: Mapping[str, bool | None]  # a task's final checks (None: did not apply); {} for a question
    invented_numbers: int
    judge_outcome: str | None

    @property
    def by_owner(self) -> bool:
        return self.grader == "owner"


def final_task_checks(judged: Mapping[str, Any], fields: Mapping[str, Any]) -> dict[str, bool | None]:
    """A task's final checks: the judge's, or where the owner graded, the owner's (``checks_failed``).

    The owner's grade names the checks that failed (``review/grade.py``); a check that applied
    under the judge and is not named passed. Whether a check applies does not depend on a verdict.
    """
    if fields.get("grader") != "owner":
        return {k: (None if v is None else bool(v)) for k, v in judged.items()}
    failed = set(fields.get("checks_failed") or [])
    out: dict[str, bool | None] = {k: (None if v is None and k not in failed else k not in failed)
                                   for k, v in judged.items()}
    for name in failed - set(out):
        out[name] = False
    return out


def cell_grade(cell: MutableMapping[str, Any]) -> Grade:
    """The cell's final grade, computed once per cell (kept in the cell under ``_grade``)."""
    kept = cell.get("_grade")
    if isinstance(kept, Grade):
        return kept
    base = cell.get("_line")
    done = line_part(base, cell) if base is not None else None
    if done is not None:
        reasons, fields = done
    else:
        reasons = waiting_reasons(cell)
        fields = graded_fields(cell, reasons)
    judged = ((cell.get("task") or {}).get("final") or {}) if cell.get("kind") == "task" else {}
    grade = Grade(str(fields["outcome"]), str(fields.get("grader")), tuple(reasons),
                  final_task_checks(judged, fields) if cell.get("kind") == "task" else {},
                  int(fields.get("invented_numbers") or 0), cell.get("outcome"))
    cell["_grade"] = grade
    return grade


def model_label(cell: Mapping[str, Any]) -> str:
    """The name the tables give a cell's model (``name_cells``; a hand-made cell: its record's label)."""
    named = cell.get("_model")
    if named:
        return str(named)
    model = cell.get("model") or {}
    return str(model.get("label") or model.get("model"))


def name_cells(cells: Sequence[MutableMapping[str, Any]], folders: Sequence[Mapping[str, Any]]) -> None:
    """Put each cell's model name (``model_names.display_names`` of the grading's folders) on it as ``_model``."""
    names = display_names({str(f["name"]): f.get("identity") or {} for f in folders})
    for cell in cells:
        folder = (cell.get("source") or {}).get("folder")
        if folder in names:
            cell["_model"] = names[folder]


def read_final_cells(grading_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """``grading.json``, the graded cells with the review's marker and their models' names, and the ungraded."""
    from pytest_assistant_eval.review.overlay import overlay_reviews
    from pytest_assistant_eval.tables.grading_source import read_graded_cells

    index, cells, ungraded = read_graded_cells(grading_dir, slim=True)  # through the digest (docs/digests.md)
    overlay_reviews(grading_dir, cells, index, ungraded)
    name_cells(cells, index.get("folders") or [])
    return index, cells, ungraded
