"""The review's files in a grading folder: ``review.json`` and ``reviews/<n>.json`` (``docs/review.md``).

Why separate files, not fields of ``cells/<n>.json``: grade-ai owns the graded cells and rewrites
them (``--changed``); a review kept beside them survives that, and a changed cell is seen as such
by its material hash. Every answer the owner gives is written at once, atomically
(``records.write_json_atomic``), so a review killed at any instant loses nothing already given.

This module only reads and writes; what is queued is ``queue.py``'s, what a verdict means is
the grading's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pytest_assistant_eval.judging.lock import grading_lock as folder_lock
from pytest_assistant_eval.records import RecordError, read_json, write_json_atomic

__all__ = ["REVIEW_FORMAT", "CELL_REVIEW_FORMAT", "QueueEntry", "ReviewIndex", "Verdicts", "CellReview",
           "is_done", "read_index", "write_index", "read_review", "write_review", "read_reviews", "now", "grading_lock",
           "ReviewRefused"]

REVIEW_FORMAT = "assistant-eval.review/1"
CELL_REVIEW_FORMAT = "assistant-eval.cell-review/1"


class ReviewRefused(Exception):
    """The review did nothing (or stopped); the message says why and what to do."""


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class QueueEntry:
    """One queued cell: its blind number, why it was queued (never shown to the owner), random sample or not."""

    n: int
    reasons: list[str]
    sample: bool = False


@dataclass
class ReviewIndex:
    """``review.json``: the queue drawn once with the grading's seed, and the helpfulness review."""

    seed: int
    drawn_at: str
    queue: list[QueueEntry]
    all: bool = False  # --all was given: every reviewable cell is queued
    judge_final: bool = False  # the helpfulness review made the judge's factual grades final
    helpfulness: dict[str, Any] | None = None  # per_level, drawn_at, sample [n], ratings {n: {rating, note, at}}

    def queued(self) -> dict[int, QueueEntry]:
        return {e.n: e for e in self.queue}

    def to_dict(self) -> dict[str, Any]:
        return {"format": REVIEW_FORMAT, "seed": self.seed, "drawn_at": self.drawn_at, "all": self.all,
                "judge_final": self.judge_final, "queue": [asdict(e) for e in self.queue],
                "helpfulness": self.helpfulness}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReviewIndex:
        return cls(seed=data["seed"], drawn_at=data["drawn_at"], all=bool(data.get("all")),
                   judge_final=bool(data.get("judge_final")),
                   queue=[QueueEntry(int(e["n"]), list(e["reasons"]), bool(e.get("sample"))) for e in data["queue"]],
                   helpfulness=data.get("helpfulness"))


@dataclass
class Verdicts:
    """One round of the owner's verdicts: per asked item, and the understandability (1 clear .. 3 hard)."""

    verdicts: dict[str, str] = field(default_factory=dict)
    understandability: int | None = None
    at: str | None = None
    changed: list[str] = field(default_factory=list)  # final round only: what the owner changed after seeing the judge


@dataclass
class CellReview:
    """``reviews/<n>.json``: the owner's first and final verdicts on one cell, and the grade they give.

    ``first`` is given blind to the judge and is what agreement reads; ``final`` is given after
    seeing the judge's verdicts and is the cell's grade. ``asked`` are the items the owner
    judges; ``left_to_judge`` (numbers in a markdown review) carry the judge's verdicts into
    the owner's grade and are in no agreement pair.
    """

    n: int
    material_sha256: str
    by: str  # terminal, markdown or scripted
    asked: list[str]
    left_to_judge: list[str] = field(default_factory=list)
    first: Verdicts = field(default_factory=Verdicts)
    final: Verdicts | None = None
    judge: dict[str, Any] = field(default_factory=dict)  # the judge's verdicts and understandability when compared
    first_grade: dict[str, Any] | None = None  # the outcome the first verdicts give (agreement per outcome)
    grade: dict[str, Any] | None = None  # the owner's grade from the final verdicts (the cell's grade)
    history: list[dict[str, Any]] = field(default_factory=list)  # earlier reviews (--regrade, a changed cell)

    @property
    def first_complete(self) -> bool:
        return all(i in self.first.verdicts for i in self.asked) and self.first.understandability is not None

    @property
    def done(self) -> bool:
        return self.final is not None and self.grade is not None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data = {"format": CELL_REVIEW_FORMAT, **data}
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CellReview:
        final = data.get("final")
        return cls(n=int(data["n"]), material_sha256=data["material_sha256"], by=data["by"],
                   asked=list(data["asked"]), left_to_judge=list(data.get("left_to_judge") or []),
                   first=Verdicts(**data["first"]), final=Verdicts(**final) if final else None,
                   judge=dict(data.get("judge") or {}), first_grade=data.get("first_grade"),
                   grade=data.get("grade"), history=list(data.get("history") or []))


def is_done(review: CellReview | None, cell: Mapping[str, Any]) -> bool:
    """A review counts only for the material it was given on: a cell graded again starts over."""
    return review is not None and review.done and review.material_sha256 == cell.get("material_sha256")


def read_index(grading_dir: Path) -> ReviewIndex | None:
    path = grading_dir / "review.json"
    if not path.exists():
        return None
    return ReviewIndex.from_dict(read_json(path, REVIEW_FORMAT))


def write_index(grading_dir: Path, index: ReviewIndex) -> None:
    write_json_atomic(grading_dir / "review.json", index.to_dict())


def read_review(grading_dir: Path, n: int) -> CellReview | None:
    path = grading_dir / "reviews" / f"{n}.json"
    if not path.exists():
        return None
    try:
        return CellReview.from_dict(read_json(path, CELL_REVIEW_FORMAT))
    except (KeyError, TypeError) as exc:
        raise RecordError(f"{path}: not a cell review ({exc})") from None


def read_reviews(grading_dir: Path) -> dict[int, CellReview]:
    folder = grading_dir / "reviews"
    out: dict[int, CellReview] = {}
    if not folder.is_dir():
        return out
    for path in folder.glob("*.json"):
        if path.stem.isdigit():
            review = read_review(grading_dir, int(path.stem))
            if review is not None:
                out[review.n] = review
    return out


def write_review(grading_dir: Path, review: CellReview) -> None:
    """Written after every answer: a killed review keeps each verdict already given."""
    write_json_atomic(grading_dir / "reviews" / f"{review.n}.json", review.to_dict())


@contextmanager
def grading_lock(grading_dir: Path) -> Iterator[None]:
    """The grading folder's ``.lock``, the one grade-ai and summary --record take: one writer at a time."""
    with folder_lock(grading_dir, ReviewRefused):
        yield
