"""What every review mode reads: the grading folder, its results folders' records, the calibration.

The owner sees what a judge sees (S6.9): the material is built by ``grading.material`` from the
record and the key, and blinded by ``grading.blind`` (model and level names, escalation
sentences), so the owner's first verdicts are as blind as the judge's.

The grading folder is opened by the reader the front door hands in (``open_grading``: the
tables' ``tables.grading_source.open_grading``, reviews overlaid): the tables show the review's
outcome, so the review sits below them and never imports them (issue 32).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pytest_assistant_eval.judging.blind import Blinder
from pytest_assistant_eval.review.queue import draw_queue, judged_items, refresh_queue
from pytest_assistant_eval.review.store import (
    CellReview,
    ReviewIndex,
    is_done,
    ReviewRefused,
    read_index,
    read_reviews,
    write_index,
)
from pytest_assistant_eval.judging.not_graded import not_graded_advice

__all__ = ["ReviewContext", "open_review", "is_done", "GradingView"]


class GradingView(Protocol):
    """What the review reads of a grading folder opened with its results folders
    (``tables.grading_source.GradingSource`` is one)."""

    index: dict[str, Any]  # grading.json
    cells: list[dict[str, Any]]  # the graded cells, the owner's reviews overlaid
    folders: dict[str, Path | None]  # folder name -> where it was found (None: not found)
    identities: dict[str, dict[str, Any]]  # folder name -> its run.json's identity
    ungraded: list[dict[str, Any]]  # order entries grade-ai has not graded yet

    @property
    def missing_folders(self) -> list[str]: ...

    def record(self, folder: str, cell: str) -> dict[str, Any] | None: ...


#: ``open_grading(grading_dir, results)``: the grading folder and its results folders, read.
OpenGrading = Callable[[Path, Sequence[Path]], GradingView]


@dataclass
class ReviewContext:
    grading_dir: Path
    source: GradingView
    cells: dict[int, dict[str, Any]]
    cases: Any  # the suite's cases (``Suite.load_cases``): its key, its tasks
    levels: Any  # the suite's levels: their names and escalation sentences
    blinder: Blinder
    index: ReviewIndex
    reviews: dict[int, CellReview]
    #: The suite whose grading is reviewed (``suites.grading_suite``): its checks and material (issue 32).
    suite: Any = None

    @property
    def grading(self) -> dict[str, Any]:
        return self.source.index

    def record(self, n: int) -> dict[str, Any]:
        cell = self.cells[n]
        record = self.source.record(cell["source"]["folder"], cell["source"]["cell"])
        if record is None:
            raise ReviewRefused(f"cell #{n}: its record is not readable in its results folder")
        return record

    def pending(self) -> list[int]:
        """Queued cells without a finished review of their current material, in queue order."""
        return [e.n for e in self.index.queue if e.n in self.cells and not is_done(self.reviews.get(e.n), self.cells[e.n])]

    def judged(self, n: int) -> list[Mapping[str, Any]]:
        return judged_items(self.cells[n])

    def save_index(self) -> None:
        write_index(self.grading_dir, self.index)


def _blinder(source: GradingView, levels: Any) -> Blinder:
    names = {ident.get("model") for ident in source.identities.values()} | set(source.folders)
    every = list(levels.levels.values())
    return Blinder(tuple(sorted(n for n in names if n)), tuple(levels.names),
                   tuple(lv.escalation_sentence for lv in every))


def open_review(grading_dir: Path, calibration: Path, results: Sequence[Path] = (), *, open_grading: OpenGrading,
                all_cells: bool = False, need_records: bool = True, suite: Any = None) -> ReviewContext:
    """Read everything a review needs; draw the queue once (written to review.json) or extend it.

    The caller holds the grading folder's lock. A folder with cells still to grade, or whose
    results folders are not found, is refused: the queue is drawn over every graded cell, and
    the owner reads the record. ``suite``: the suite whose grading it is (default: the one the folder
    recorded, ``suites.grading_suite``); its cases, checks and material are read through its protocol.
    """
    if suite is None:
        from pytest_assistant_eval.suites.recorded import grading_suite

        suite = grading_suite(grading_dir)

    source = open_grading(grading_dir, results)
    if source.ungraded:
        raise ReviewRefused(not_graded_advice(grading_dir, [int(e["n"]) for e in source.ungraded], source.index,
                                              source.folders))
    if need_records and source.missing_folders:
        raise ReviewRefused(f"the results folder(s) {', '.join(source.missing_folders)} were not found beside "
                            f"{grading_dir}; give them with --results")
    cases, levels = suite.load_cases(calibration)
    cells = {c["n"]: c for c in source.cells}
    index = read_index(grading_dir)
    if index is None:
        index = draw_queue(source.cells, source.index, all_cells=all_cells)
        write_index(grading_dir, index)
    elif refresh_queue(index, source.cells, source.index, all_cells=all_cells) or (all_cells and not index.all):
        write_index(grading_dir, index)
    return ReviewContext(grading_dir, source, cells, cases, levels, _blinder(source, levels), index,
                         read_reviews(grading_dir), suite)
