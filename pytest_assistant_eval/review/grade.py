"""The owner's grade of a cell: the grading's own outcome rules applied to the owner's verdicts.

The checks are run again on the record (``grading.folder.check_record``) and finished with
the owner's verdicts, so an owner's "wrong" fails a turn exactly as a judge's would; nothing
here restates the outcome rules. The result is stored in the cell's review, so ``summary``
reads the owner's grade from a file and never runs the checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_assistant_eval.review.context import ReviewContext
from pytest_assistant_eval.review.store import ReviewRefused

__all__ = ["owner_grade", "grade_fields"]


def grade_fields(result: Mapping[str, Any], understandability: int | None) -> dict[str, Any]:
    """The fields of a results line a grade decides (``docs/results.md``), from a finished graded result."""
    parts = result.get("parts") or []
    items = {i["id"]: i for i in result.get("items") or []}
    verdicts = {k: v.get("verdict") for k, v in ((result.get("judge") or {}).get("verdicts") or {}).items()}
    if "task" in result:
        final = result["task"].get("final") or {}
        checks_failed = sorted(name for name, value in final.items() if value is False)
        invented = sum(1 for i in items.values()
                       if i["kind"] == "number" and (i.get("verdict") if i.get("settled_by") else verdicts.get(i["id"])) == "wrong")
    else:
        checks_failed = []
        invented = sum(int(p.get("invented_numbers") or 0) for p in parts)
    return {"outcome": result.get("outcome"), "understandability": understandability,
            "no_answer": any(p.get("no_answer") for p in parts),
            "escalated": result.get("outcome") == "escalated" or any(p.get("escalated") for p in parts),
            "invented_numbers": invented,
            "critical_missing": sum(len(p.get("critical_missing") or []) for p in parts),
            "form_missing": sum(len(p.get("form_missing") or []) for p in parts),
            "checks_failed": checks_failed}


def owner_grade(ctx: ReviewContext, n: int, verdicts: Mapping[str, str], understandability: int | None
                ) -> dict[str, Any]:
    """The cell's grade with ``verdicts`` (every judged item's) in place of the judge's."""
    checked = ctx.suite.check_record(ctx.record(n), ctx.cases, ctx.levels)  # the suite's code checks
    ids = {i.id for i in checked.items if i.pending}
    expected = {str(i["id"]) for i in ctx.judged(n)}
    if ids != expected:
        raise ReviewRefused(f"cell #{n}: the checks no longer make the items it was graded with (the calibration "
                            "changed?); grade it again with grade-ai --changed")
    missing = sorted(ids - set(verdicts))
    if missing:
        raise ReviewRefused(f"cell #{n}: no verdict for {', '.join(missing)}")
    result = checked.finish({k: {"verdict": v} for k, v in verdicts.items() if k in ids}, {"grader": "owner"})
    if "user_error" in result:  # never queued; kept for safety
        return {"outcome": "user_error", "understandability": None}
    return grade_fields(result, understandability)
