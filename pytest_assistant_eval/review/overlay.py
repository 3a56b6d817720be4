"""The review as the tables read it: a ``review`` marker on each queued (or rated) graded cell.

``summary`` and ``summary --record`` must know which cells still wait for the owner and which
carry the owner's grade (S8.3), without running any review code but this reader of the
review's files. Before the first review the queue is drawn here in memory, exactly as the
review will draw it (the grading's seed), and not written: so a grading nobody reviewed yet
cannot be recorded as if its queued cells were final.

The marker (``docs/review.md``): ``queued``, ``queued_for`` (the reasons; never shown to the
owner), ``done``, ``judge_final``, ``grade`` (the owner's, when done) and ``helpfulness``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_assistant_eval.review.queue import draw_queue, refresh_queue
from pytest_assistant_eval.review.store import is_done, read_index, read_reviews

__all__ = ["overlay_reviews"]


def overlay_reviews(grading_dir: Path, cells: Sequence[dict[str, Any]], grading: Mapping[str, Any],
                    ungraded: Sequence[Any] = ()) -> None:
    index = read_index(grading_dir)
    if index is None:
        if ungraded or "seed" not in grading:
            return  # the queue is drawn over every graded cell; the ungraded ones wait anyway
        index = draw_queue(cells, grading)
    else:
        refresh_queue(index, cells, grading)
    reviews = read_reviews(grading_dir)
    queued = index.queued()
    ratings = (index.helpfulness or {}).get("ratings") or {}
    for cell in cells:
        n = cell["n"]
        entry = queued.get(n)
        rating = ratings.get(str(n)) if ratings else None
        if entry is None and rating is None:
            continue
        review = reviews.get(n)
        done = is_done(review, cell)
        cell["review"] = {"queued": entry is not None, "queued_for": list(entry.reasons) if entry else [],
                          "done": done, "judge_final": index.judge_final,
                          "grade": review.grade if (done and review is not None) else None, "helpfulness": rating}
