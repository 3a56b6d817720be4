"""``assistant-eval agentdojo run|grade|board|crosscheck`` (issue 16; needs the ``[agentdojo]`` extra).

``run`` runs AgentDojo cells for one or more models (one results folder per model under
``--out``; ``--resume`` continues a killed run from its checkpoints), ``grade`` grades results
folders with AgentDojo's ``utility()`` / ``security()`` and our checks into one file, ``board``
prints utility and attack success per model with n and Wilson intervals, and ``crosscheck``
prints our final-state verdicts against ``utility()`` per suite with every disagreement's cause.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

__all__ = ["main", "MISSING_EXTRA"]

MISSING_EXTRA = ("assistant-eval agentdojo: AgentDojo is not installed; install the extra with "
                 "pip install -e '.[agentdojo]'")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assistant-eval agentdojo")
    sub = parser.add_subparsers(dest="action", required=True)
    p = sub.add_parser("run", help="run AgentDojo cells")
    p.add_argument("--model", action="append", required=True, help="PRESET:MODEL, more than once for several")
    p.add_argument("--base-url")
    p.add_argument("--out", type=Path, required=True, help="parent folder: one results folder per model")
    p.add_argument("--suite", action="append", default=[], help="only these suites (default: all four)")
    p.add_argument("--crossed", action="store_true", help="also cross every user task with every injection task")
    p.add_argument("--cells", nargs="*", default=[], help="only these cell ids (AD-banking-0__r1 ...)")
    p.add_argument("--attack", default=None, help="AgentDojo attack for crossed cells (default: direct)")
    p.add_argument("--resume", action="store_true", help="continue a killed run from its checkpoints")
    p.add_argument("--pace", type=float, default=None, help="seconds between requests to a remote provider")
    p.add_argument("--max-requests-per-day", type=int, default=None)
    p = sub.add_parser("grade", help="grade results folders with AgentDojo's utility() and security()")
    p.add_argument("results", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True, help="the grading file to write (JSON)")
    for name in ("board", "crosscheck"):
        p = sub.add_parser(name)
        p.add_argument("grading", type=Path, help="a grading file written by 'agentdojo grade'")
    return parser


def main(argv: Sequence[str]) -> int:
    args = _parser().parse_args(list(argv))
    try:
        import agentdojo  # noqa: F401
    except ImportError:
        print(MISSING_EXTRA, file=sys.stderr)
        return 2
    if args.action == "run":
        return _run(args)
    if args.action == "grade":
        from pytest_assistant_eval.grading.agentdojo_grade import grade_folders

        grades = grade_folders(args.results, args.out)
        print(f"Graded {len(grades)} AgentDojo cell(s) into {args.out}")
        return 0
    cells = json.loads(args.grading.read_text(encoding="utf-8"))["cells"]
    from pytest_assistant_eval.tables.agentdojo_board import render_board, render_crosscheck

    print(render_board(cells) if args.action == "board" else render_crosscheck(cells))
    return 0


def _run(args: argparse.Namespace) -> int:
    from pytest_assistant_eval.agentdojo_run import AgentDojoRun, run_cell
    from pytest_assistant_eval.cases.agentdojo_cells import DEFAULT_ATTACK, all_cells, parse_cell_id
    from pytest_assistant_eval.planning import ModelSpec

    if args.cells:
        cells = [parse_cell_id(c) for c in args.cells]
    else:
        cells = all_cells(crossed=args.crossed, suite_names=tuple(args.suite))
    for text in args.model:
        preset, _, model = text.partition(":")
        spec = ModelSpec(preset, model, args.base_url)
        run = AgentDojoRun(out=args.out / spec.label, model=spec, attack=args.attack or DEFAULT_ATTACK,
                           resume=args.resume, pace=args.pace, max_requests_per_day=args.max_requests_per_day)
        run.out.mkdir(parents=True, exist_ok=True)
        run.write_run_json(cells)
        for cell in cells:
            run_cell(run, cell)
        print(f"{spec.preset}:{spec.model}: {len(cells)} AgentDojo cell(s) in {run.out}")
    return 0
