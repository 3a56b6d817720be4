"""When a graded cell still waits for review: the rule ``summary`` counts and ``summary --record`` obeys.

``summary --record`` refuses while any cell waits (S8.3): a line is a grade, and a grade
given before the review would be recorded as final. The review itself (issue 10) does not
exist yet, so a cell waits when its grading is visibly unfinished:

- an item has no final verdict (not settled by a check and no judge verdict for it), or the
  cell's outcome is ``waiting``;
- the cell carries a ``review`` marker: whoever queued it for the owner said so.

Each reason is one small rule in ``WAITING_RULES``; the review issue extends the list (or
replaces the marker rule with one that knows a finished review) rather than this module's
callers. A rule reads only the graded-cell format of ``docs/grading.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["WaitingRule", "unsettled_items", "review_marker", "WAITING_RULES", "waiting_reasons", "final_verdict",
           "NOT_GRADED", "not_graded_advice", "shown_numbers"]

#: The reason of a cell in the grading's blind order that grade-ai has not graded yet.
NOT_GRADED = "not graded yet"

#: A rule returns the reasons (short phrases) a cell waits; an empty list when it does not.
WaitingRule = Callable[[Mapping[str, Any]], list[str]]


def final_verdict(cell: Mapping[str, Any], item: Mapping[str, Any]) -> str | None:
    """The item's final verdict: the check's when it settled the item, else the judge's, else None."""
    if item.get("settled_by") and item.get("verdict"):
        return str(item["verdict"])
    judged = ((cell.get("judge") or {}).get("verdicts") or {}).get(item.get("id"))
    if isinstance(judged, Mapping) and judged.get("verdict"):
        return str(judged["verdict"])
    return None


def unsettled_items(cell: Mapping[str, Any]) -> list[str]:
    """Items nobody gave a final verdict (or an outcome still ``waiting``)."""
    open_items = [str(i.get("id")) for i in cell.get("items") or [] if final_verdict(cell, i) is None]
    if open_items:
        shown = ", ".join(open_items[:3]) + (f" and {len(open_items) - 3} more" if len(open_items) > 3 else "")
        return [f"items without a final verdict: {shown}"]
    if cell.get("outcome") == "waiting":
        return ["its outcome is waiting"]
    return []


def review_marker(cell: Mapping[str, Any]) -> list[str]:
    """A ``review`` marker on the cell: it was queued for the owner, and waits until the review is done.

    The review (``review/store.overlay_reviews``, docs/review.md) puts the marker on every queued
    cell: ``done`` once the owner's final verdicts are given for the cell's current material,
    ``judge_final`` when the helpfulness review left the facts to the judge. Why the review
    queued a cell (``queued_for``) is never said here: the owner must not see it (S7.2).
    """
    marker = cell.get("review")
    if not marker:
        return []
    if isinstance(marker, Mapping) and "queued" in marker:
        if not marker["queued"] or marker.get("done") or marker.get("judge_final"):
            return []
        return ["queued for review, not reviewed yet"]
    if isinstance(marker, Mapping) and marker.get("reasons"):
        return ["queued for review: " + ", ".join(map(str, marker["reasons"]))]
    return ["queued for review"]


WAITING_RULES: list[WaitingRule] = [unsettled_items, review_marker]


def waiting_reasons(cell: Mapping[str, Any], rules: Sequence[WaitingRule] | None = None) -> list[str]:
    """Every reason the cell waits for review; empty when its grade is final."""
    reasons: list[str] = []
    for rule in WAITING_RULES if rules is None else rules:
        reasons.extend(rule(cell))
    return reasons


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
