"""The steps every review mode shares: start a cell's review, compare with the judge, finish it.

The terminal, the markdown files and the scripted owner differ only in how they ask; the
order is the same for all (S7.2): first verdicts blind, then the judge's shown with each
disagreement, then final verdicts. Agreement reads the first verdicts, the grade the final.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from pytest_assistant_eval.review.context import ReviewContext
from pytest_assistant_eval.review.grade import owner_grade
from pytest_assistant_eval.review.store import CellReview, Verdicts, now, write_review

__all__ = ["LETTERS", "VERDICT_OF", "Disagreement", "JudgeView", "judge_view", "start_review", "disagreements",
           "finish_review", "save_first"]

#: The letters the owner types, and the verdicts they stand for.
LETTERS = {"right": "r", "missing": "m", "wrong": "w"}
VERDICT_OF = {v: k for k, v in LETTERS.items()}


@dataclass
class JudgeView:
    """What the judge said about one cell, as the owner sees it after the first verdicts."""

    readable: bool
    verdicts: dict[str, dict[str, Any]]
    understandability: int | None


def judge_view(cell: Mapping[str, Any]) -> JudgeView:
    judge = cell.get("judge") or {}
    verdicts = {k: dict(v) for k, v in (judge.get("verdicts") or {}).items() if isinstance(v, Mapping)}
    return JudgeView(not judge.get("unparsed"), verdicts, judge.get("understandability"))


@dataclass
class Disagreement:
    item: str  # an item id, or "understandability"
    owner: Any
    judge: Any
    confidence: float | None = None
    reason: str = ""


def start_review(ctx: ReviewContext, n: int, by: str, *, left_to_judge: Iterable[str] = (),
                 again: bool = False) -> CellReview:
    """The cell's review to continue, or a new one (an earlier review of other material, or one
    taken again with --regrade, is kept in ``history``: the latest review wins)."""
    cell = ctx.cells[n]
    old = ctx.reviews.get(n)
    if old is not None and old.material_sha256 == cell["material_sha256"] and not old.done and not again:
        return old
    history: list[dict[str, Any]] = []
    if old is not None:
        if old.material_sha256 == cell["material_sha256"] and not old.done and not old.first.verdicts:
            history = old.history
        else:
            earlier = old.to_dict()
            earlier.pop("history", None)
            earlier.pop("format", None)
            history = [*old.history, earlier]
    skip = set(left_to_judge)
    asked = [str(i["id"]) for i in ctx.judged(n) if str(i["id"]) not in skip]
    review = CellReview(n=n, material_sha256=cell["material_sha256"], by=by, asked=asked,
                        left_to_judge=[str(i["id"]) for i in ctx.judged(n) if str(i["id"]) in skip], history=history)
    ctx.reviews[n] = review
    return review


def save_first(ctx: ReviewContext, review: CellReview, item: str | None, value: Any) -> None:
    """Record one first answer (an item's verdict, or the understandability when ``item`` is None), at once."""
    if item is None:
        review.first.understandability = int(value)
    else:
        review.first.verdicts[item] = str(value)
    review.first.at = now()
    write_review(ctx.grading_dir, review)


def disagreements(ctx: ReviewContext, review: CellReview) -> list[Disagreement]:
    """Where the judge's verdicts differ from the owner's first ones (none when its reply was unreadable)."""
    view = judge_view(ctx.cells[review.n])
    if not view.readable:
        return []
    out = []
    for item in review.asked:
        judged = view.verdicts.get(item)
        if judged is not None and judged.get("verdict") != review.first.verdicts.get(item):
            out.append(Disagreement(item, review.first.verdicts.get(item), judged.get("verdict"),
                                    judged.get("confidence"), str(judged.get("reason") or "")))
    if view.understandability is not None and view.understandability != review.first.understandability:
        out.append(Disagreement("understandability", review.first.understandability, view.understandability))
    return out


def _all_verdicts(ctx: ReviewContext, review: CellReview, mine: Mapping[str, str]) -> dict[str, str]:
    view = judge_view(ctx.cells[review.n])
    verdicts = {k: str(v.get("verdict")) for k, v in view.verdicts.items() if k in review.left_to_judge}
    verdicts.update(mine)
    return verdicts


def finish_review(ctx: ReviewContext, review: CellReview, changes: Mapping[str, Any]) -> None:
    """Final verdicts = the first ones with ``changes`` (item id or "understandability" -> new value); the grade."""
    final = Verdicts(verdicts=dict(review.first.verdicts), understandability=review.first.understandability,
                     at=now())
    for item, value in changes.items():
        if item == "understandability":
            if value != final.understandability:
                final.understandability = int(value)
                final.changed.append(item)
        elif value != final.verdicts.get(item):
            final.verdicts[item] = str(value)
            final.changed.append(item)
    view = judge_view(ctx.cells[review.n])
    review.judge = {"readable": view.readable, "verdicts": {k: v.get("verdict") for k, v in view.verdicts.items()},
                    "understandability": view.understandability}
    review.first_grade = owner_grade(ctx, review.n, _all_verdicts(ctx, review, review.first.verdicts),
                                     review.first.understandability)
    review.grade = owner_grade(ctx, review.n, _all_verdicts(ctx, review, final.verdicts), final.understandability)
    review.final = final
    write_review(ctx.grading_dir, review)


def as_dict(d: Disagreement) -> dict[str, Any]:
    return asdict(d)
