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

# What the summary and the review both say of cells not graded yet: below both (issue 32).
from pytest_assistant_eval.judging.not_graded import NOT_GRADED, not_graded_advice, shown_numbers  # noqa: F401

__all__ = ["WaitingRule", "unsettled_items", "review_marker", "WAITING_RULES", "waiting_reasons", "final_verdict",
           "NOT_GRADED", "not_graded_advice", "shown_numbers"]


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
