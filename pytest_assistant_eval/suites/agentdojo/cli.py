"""``assistant-eval agentdojo run|export|grade|board|crosscheck`` (issue 16; needs the ``[agentdojo]`` extra).

``run`` runs AgentDojo cells for one or more models through pytest with the plugin's
``--suite agentdojo:PARTS`` (it is an alias of ``assistant-eval run --suite agentdojo``), as for our cells (``--out`` is the results
folder of one model, the parent of one folder per model for several; ``--benchmark-version``,
``--defense`` and ``--conversation`` set it up as ``settings.AgentDojoSettings``; ``--resume`` continues a
killed run from its checkpoints; ``-n`` spreads cells over xdist workers; unknown options such as
``-k`` go to pytest), ``export`` writes results folders as AgentDojo's own logs, ``grade`` grades results
folders with AgentDojo's ``utility()`` / ``security()`` and our checks into one file, ``board``
prints benign utility, utility under attack and attack success apart per model and suite with n
and Wilson intervals, with each run's selection (``suites/agentdojo/board.py``), and ``crosscheck``
prints our final-state verdicts against ``utility()`` per suite with every disagreement's cause.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

__all__ = ["main", "MISSING_EXTRA", "pytest_args_for_agentdojo"]

MISSING_EXTRA = ("assistant-eval agentdojo: AgentDojo is not installed; install the extra with "
                 "pip install -e '.[agentdojo]'")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="assistant-eval agentdojo")
    sub = parser.add_subparsers(dest="action", required=True)
    p = sub.add_parser("run", help="run AgentDojo cells (pytest with the plugin); unknown options go to pytest")
    p.add_argument("--model", action="append", required=True, help="PRESET:MODEL, more than once for several")
    p.add_argument("--base-url", help="the address of an openai-compatible or ollama server")
    p.add_argument("--out", type=Path, required=True,
                   help="results folder, a parent folder (one results folder per model) for several models")
    p.add_argument("--suite", action="append", default=[], help="only these suites (default: all four)")
    p.add_argument("--crossed", action="store_true", help="also cross every user task with every injection task")
    p.add_argument("--cells", nargs="*", default=[], help="only these cell ids (AD-banking-0__r1 ...)")
    p.add_argument("--attack", default=None,
                   help="AgentDojo attack for crossed cells, any of its registry by name (default: direct)")
    p.add_argument("--benchmark-version", default=None,
                   help="AgentDojo's benchmark version (default: the installed agentdojo's own default)")
    p.add_argument("--defense", default=None, help="one of AgentDojo's defenses: tool_filter, "
                   "spotlighting_with_delimiting, repeat_user_prompt, transformers_pi_detector (needs its extra)")
    p.add_argument("--conversation", default=None, choices=("agentdojo", "ours"),
                   help="agentdojo (default): the conversation AgentDojo's pipeline holds; ours: our own loop "
                        "(JSON results, 40 rounds, nudges, result cap), not comparable with AgentDojo's leaderboard")
    p.add_argument("--resume", action="store_true", help="continue a killed run from its checkpoints")
    p.add_argument("--pace", type=float, default=None, help="seconds between requests to a remote provider")
    p.add_argument("--max-requests-per-day", type=int, default=None, help="daily request budget per route")
    p.add_argument("--repeats", type=int, default=None, help="repeats per cell (default: 1)")
    p.add_argument("-n", "--workers", default=None, help="xdist workers (a number or 'auto')")
    p = sub.add_parser("export", help="write results folders as AgentDojo's own logs (its load_task_results reads them)")
    p.add_argument("results", nargs="+", type=Path)
    p.add_argument("--logdir", type=Path, required=True,
                   help="AgentDojo's log folder: <logdir>/<pipeline>/<suite>/<user task>/<attack>/<injection>.json")
    p = sub.add_parser("grade", help="grade results folders with AgentDojo's utility() and security()")
    p.add_argument("results", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True, help="the grading file to write (JSON)")
    from pytest_assistant_eval.tabular.formats import add_format_arguments
    from pytest_assistant_eval.tabular.table_data import AGENTDOJO_TABLES

    for name in ("board", "crosscheck"):
        p = sub.add_parser(name)
        p.add_argument("grading", type=Path, help="a grading file written by 'agentdojo grade'")
        if name == "board":
            add_format_arguments(p, AGENTDOJO_TABLES)
    return parser


def main(argv: Sequence[str]) -> int:
    parser = _parser()
    args, extra = parser.parse_known_args(list(argv))
    if extra and args.action != "run":
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        import agentdojo  # noqa: F401
    except ImportError:
        print(MISSING_EXTRA, file=sys.stderr)
        return 2
    if args.action == "run":
        import pytest

        from pytest_assistant_eval.suites.agentdojo.cells import check_attack
        from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings

        if args.attack is not None:  # refused before pytest starts: no folder, no run.json
            try:
                check_attack(args.attack)
            except ValueError as exc:
                print(f"assistant-eval agentdojo run: --attack: {exc}", file=sys.stderr)
                return 2
        version = {"benchmark_version": args.benchmark_version} if args.benchmark_version else {}
        try:  # a version, defense or conversation AgentDojo does not know: refused here too
            AgentDojoSettings(attack=args.attack or "direct", defense=args.defense,
                              conversation=args.conversation or "agentdojo", **version).check()
        except ValueError as exc:
            print(f"assistant-eval agentdojo run: {exc}", file=sys.stderr)
            return 2

        return int(pytest.main(pytest_args_for_agentdojo(args, extra)))
    if args.action == "export":
        from pytest_assistant_eval.suites.agentdojo.export import export_folders

        try:
            written = export_folders(args.results, args.logdir)
        except ValueError as exc:
            print(f"assistant-eval agentdojo export: {exc}", file=sys.stderr)
            return 2
        print(f"Exported {len(written)} AgentDojo cell(s) as AgentDojo's logs into {args.logdir}")
        return 0
    from pytest_assistant_eval.records import RecordError

    if args.action == "grade":
        from pytest_assistant_eval.suites.agentdojo.grade import grade_folders

        try:
            grades = grade_folders(args.results, args.out)
        except RecordError as exc:  # a file of another format, one model's cell in two folders
            print(f"assistant-eval agentdojo grade: {exc}", file=sys.stderr)
            return 2
        print(f"Graded {len(grades)} AgentDojo cell(s) into {args.out}")
        return 0
    from pytest_assistant_eval.suites.agentdojo.board import board_command

    try:
        return board_command(args.action, args.grading, getattr(args, "format", "text"), getattr(args, "table", None))
    except RecordError as exc:
        print(f"assistant-eval agentdojo {args.action}: {exc}", file=sys.stderr)
        return 2


def pytest_args_for_agentdojo(args: argparse.Namespace, extra: Sequence[str]) -> list[str]:
    """The pytest command line of ``agentdojo run``: the shipped calibration's ini and ``cells.py``
    with ``--suite agentdojo:PARTS``, so every AgentDojo cell runs as a pytest item in the one session."""
    from pytest_assistant_eval.paths import default_calibration_dir

    calibration = default_calibration_dir().resolve()
    argv = ["-c", str(calibration / "pytest.ini"), "--rootdir", str(calibration),
            "--suite", f"agentdojo:{','.join(args.suite) or 'all'}", "--out", str(Path(args.out).resolve())]
    for model in args.model:
        argv += ["--model", model]
    for cell in args.cells:
        argv += ["--agentdojo-cell", cell]
    for name, value in (("--base-url", args.base_url), ("--agentdojo-attack", args.attack),
                        ("--agentdojo-benchmark-version", args.benchmark_version),
                        ("--agentdojo-defense", args.defense), ("--agentdojo-conversation", args.conversation),
                        ("--pace", args.pace),
                        ("--max-requests-per-day", args.max_requests_per_day), ("--repeats", args.repeats),
                        ("-n", args.workers)):
        if value is not None:
            argv += [name, str(value)]
    for flag, on in (("--agentdojo-crossed", args.crossed), ("--resume", args.resume)):
        if on:
            argv.append(flag)
    return [*argv, *extra, str(calibration / "cells.py")]
