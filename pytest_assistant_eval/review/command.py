"""``assistant-eval review``: opens the review under the grading folder's lock and hands over to a mode.

Exit codes: 0 done (or stopped by the owner with everything kept), 1 an import reported a
letter that is not allowed or a refused cell (the rest was imported), 2 refused (nothing done).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.records import RecordError
from pytest_assistant_eval.review.store import ReviewRefused, grading_lock

__all__ = ["ReviewOptions", "review_command", "parse_cell_number"]


@dataclass
class ReviewOptions:
    sitting: int = 37
    regrade: int | None = None
    all_cells: bool = False
    owner: str = "terminal"  # or "scripted"
    export_md: Path | None = None
    import_md: Path | None = None
    helpfulness: bool = False
    per_level: int | None = None
    results: list[Path] = field(default_factory=list)


def parse_cell_number(text: str) -> int:
    """``#12`` or ``12``."""
    value = text.strip().lstrip("#")
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{text!r} is not a cell number such as #12")
    return int(value)


def review_command(grading_dir: Path, calibration: Path, options: ReviewOptions, *, open_grading: Any,
                   out: TextIO = sys.stdout) -> int:
    """``assistant-eval review``; ``open_grading``: how the grading folder is read (the front door
    hands in ``tables.grading_source.open_grading``: the review sits below the tables, issue 32)."""
    from pytest_assistant_eval.review.context import open_review
    from pytest_assistant_eval.suites.recorded import grading_suite

    suite = grading_suite(grading_dir)  # the suite whose grading it is, by its protocol (issue 32)

    try:
        with grading_lock(grading_dir):
            ctx = open_review(grading_dir, calibration, options.results, open_grading=open_grading,
                              all_cells=options.all_cells, suite=suite)
            if options.helpfulness:
                from pytest_assistant_eval.review import helpfulness

                return helpfulness.helpfulness_command(ctx, options, out=out)
            if options.export_md is not None:
                from pytest_assistant_eval.review.markdown import export_markdown

                return export_markdown(ctx, options.export_md, out=out)
            if options.import_md is not None:
                from pytest_assistant_eval.review.markdown import import_markdown

                return import_markdown(ctx, options.import_md, out=out)
            if options.regrade is not None and options.regrade not in ctx.cells:
                raise ReviewRefused(f"there is no graded cell #{options.regrade}")
            if options.regrade is not None:
                from pytest_assistant_eval.review.queue import reviewable
                from pytest_assistant_eval.review.store import QueueEntry

                if not reviewable(ctx.cells[options.regrade]):
                    raise ReviewRefused(f"cell #{options.regrade} has nothing to review (no answer, or a user error)")
                if options.regrade not in ctx.index.queued():
                    ctx.index.queue.append(QueueEntry(options.regrade, ["regrade"]))
                    ctx.save_index()
            if options.owner == "scripted":
                from pytest_assistant_eval.review.scripted_owner import review_scripted

                done = review_scripted(ctx)
                print(f"The scripted owner reviewed {done} cell(s) of {grading_dir} (answers from the key; "
                      "a stand-in for the owner, not evidence)", file=out)
                return 0
            from pytest_assistant_eval.review.terminal import TerminalReview

            TerminalReview(ctx, out=out).run(options.sitting, options.regrade)
            return 0
    except (ReviewRefused, RecordError, *suite.definition_errors, OSError) as exc:
        print(f"assistant-eval review: {exc}", file=sys.stderr)
        return 2
