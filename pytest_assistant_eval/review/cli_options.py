"""The review subcommand's options (kept here so ``cli.py`` stays a front door with no logic)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_assistant_eval import option_ranges as ranges

__all__ = ["add_review_arguments", "run_review"]


def add_review_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", type=Path, required=True, help="a grading folder")
    p.add_argument("--results", type=Path, action="append", default=[], metavar="FOLDER",
                   help="a graded results folder not found beside the grading folder (repeatable)")
    p.add_argument("--sitting", type=ranges.SITTING, default=37, metavar="N", help="cells in one sitting (default 37; 0: no limit)")
    p.add_argument("--regrade", metavar="#N", help="review cell #N again (the latest review wins)")
    p.add_argument("--all", action="store_true", help="queue every cell: full manual grading")
    p.add_argument("--owner", choices=("terminal", "scripted"), default="terminal",
                   help="who reviews: you in the terminal (default), or the scripted owner answering from the key")
    md = p.add_mutually_exclusive_group()
    md.add_argument("--export-md", type=Path, metavar="FILE", help="write the unreviewed queued cells as markdown")
    md.add_argument("--import-md", type=Path, metavar="FILE", help="read the letters written in an exported file")
    p.add_argument("--helpfulness", action="store_true",
                   help="the helpfulness review: leave the facts to the judge, rate a sample's answers 1/2/3")
    p.add_argument("--per-level", type=ranges.PER_LEVEL, default=None, metavar="N",
                   help="helpfulness: cells drawn per level (default 8; drawn once)")


def run_review(args: argparse.Namespace, parser: argparse.ArgumentParser, *, open_grading: Any) -> int:
    # Imported here: every command builds the review's parser, only the review runs it.
    from pytest_assistant_eval.review.command import ReviewOptions, parse_cell_number, review_command

    regrade = None
    if args.regrade is not None:
        try:
            regrade = parse_cell_number(args.regrade)
        except ValueError as exc:
            parser.error(str(exc))
    if args.helpfulness and args.export_md is None and args.import_md is None:
        parser.error("--helpfulness needs --export-md FILE or --import-md FILE")
    if args.sitting < 0:
        parser.error("--sitting must be 0 (no limit) or more")
    options = ReviewOptions(sitting=args.sitting, regrade=regrade, all_cells=args.all, owner=args.owner,
                            export_md=args.export_md, import_md=args.import_md, helpfulness=args.helpfulness,
                            per_level=args.per_level, results=list(args.results))
    return review_command(args.dir, args.calibration, options, open_grading=open_grading)
