"""The ``assistant-eval`` command: an argparse front door with no logic of its own.

Each subcommand parses its options and calls one plain function. ``run`` hands over to
pytest with the opt-in plugin; nothing after the run imports pytest.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any, Sequence

from pytest_assistant_eval import option_ranges as ranges
from pytest_assistant_eval.paths import default_calibration_dir  # noqa: F401 - re-exported for callers of cli




def _cmd_build(args: argparse.Namespace) -> int:
    from pytest_assistant_eval.suites import suite_part

    build_world = suite_part("calibration", "world.build").build_world
    WorldError = suite_part("calibration", "world.errors").WorldError

    source = args.calibration / "world"
    try:
        world = build_world(args.out, source, replace=args.replace)
    except WorldError as exc:
        print(f"assistant-eval build: {exc}", file=sys.stderr)
        return 2
    print(f"Built the grounding world: {world}")
    return 0


def pytest_args_for_run(args: argparse.Namespace, extra: Sequence[str]) -> list[str]:
    calibration = args.calibration.resolve()
    argv = ["-c", str(calibration / "pytest.ini"), "--rootdir", str(calibration),
            "--out", str(Path(args.out).resolve())]
    if args.world:
        argv += ["--world", str(Path(args.world).resolve())]
    if args.suite:
        argv += ["--suite", args.suite]
    if args.provider:
        argv += ["--provider", args.provider]
    for model in args.model:
        argv += ["--model", model]
    for cell in args.skip:
        argv += ["--skip", cell]
    for cell in args.unskip:
        argv += ["--unskip", cell]
    if args.models:
        argv.append(f"--models={Path(args.models).resolve()}")
    for name in ("levels", "repeats", "base_url", "pace", "request_deadline", "skip_reason", "user_model", "user_base_url",
                 "max_requests_per_day", "ollama_context"):
        value = getattr(args, name)
        if value is not None:
            argv += [f"--{name.replace('_', '-')}", str(value)]
    for flag in ("resume", "accept_data_notice", "no_stream", "group_by_route", "spread_route",
                 "relax_data_collection", "allow_cpu_offload"):
        if getattr(args, flag):
            argv.append(f"--{flag.replace('_', '-')}")
    from pytest_assistant_eval.run.model_options import forward

    argv += forward(args)  # --agent-path, --temperature ... (issue 33)
    if args.workers is not None:
        argv += ["-n", str(args.workers)]
    argv += list(extra)
    argv.append(str(calibration / "cells.py"))
    return argv


def _cmd_run(args: argparse.Namespace, extra: Sequence[str]) -> int:
    import pytest

    if (args.suite or "calibration").partition(":")[0] == "calibration" and not args.world:
        print("assistant-eval run: the calibration suite needs --world DIR/'Grounding world ä' (build one with "
              "'assistant-eval build --out DIR'; another suite: --suite NAME)", file=sys.stderr)
        return 2

    code = pytest.main(pytest_args_for_run(args, extra))
    return int(code)


def _add_run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--suite", default=None, metavar="NAME[:PARTS]",
                   help="the suite whose cells run: calibration (default) or agentdojo, agentdojo:banking,slack for "
                        "some of its suites (its own options: --agentdojo-crossed, --agentdojo-attack, "
                        "--agentdojo-cell, --agentdojo-benchmark-version, --agentdojo-defense, "
                        "--agentdojo-conversation; docs/suites.md)")
    p.add_argument("--world", default=None,
                   help="the built grounding world (DIR/'Grounding world ä'); the calibration suite needs it")
    p.add_argument("--out", default="_eval_reports/results",
                   help="results folder, a parent folder for several models (default: _eval_reports/results, "
                        "which git ignores: records stay local)")
    p.add_argument("--provider", help="provider preset for --model (scripted, openai, openrouter, anthropic, "
                                      "gemini, ollama, openai-compatible)")
    p.add_argument("--model", action="append", default=[], help="MODEL, or PRESET:MODEL; repeatable")
    p.add_argument("--models", help="a file listing models, one a line: PRESET:MODEL [base_url=URL]")
    p.add_argument("--levels", help="comma-separated levels (default: every level in levels.yaml)")
    p.add_argument("--repeats", type=ranges.REPEATS, help="repeats per cell (default: 1 per question, each task's own)")
    p.add_argument("--base-url", help="the address of an openai-compatible or ollama server (a key goes only over "
                                      "https, or http to this machine)")
    p.add_argument("--pace", type=ranges.PACE, help="at least this many seconds between request starts")
    p.add_argument("--request-deadline", type=ranges.REQUEST_DEADLINE, metavar="SECONDS",
                   help="the longest one request attempt may take, connect and whole answer (default: 600)")
    p.add_argument("--resume", action="store_true",
                   help="continue the results folder: finished cells are skipped, kept cells continue")
    p.add_argument("--accept-data-notice", action="store_true",
                   help="accept the remote provider's data notice (shown when refused) for this run only")
    p.add_argument("--no-stream", action="store_true", help="ask for whole answers instead of streams")
    p.add_argument("--group-by-route", action="store_true",
                   help="keep every route's cells on one worker, the limit-free scripted ones too")
    p.add_argument("--spread-route", action="store_true",
                   help="spread one route's cells over several workers sharing its pacer and budget")
    p.add_argument("--user-model", metavar="PRESET:MODEL",
                   help="the model that plays the simulated user of task cells (default: the scripted user)")
    p.add_argument("--user-base-url", help="the address of the --user-model's server")
    p.add_argument("--max-requests-per-day", type=ranges.REQUESTS_PER_DAY,
                   help="daily request budget per route (default: 45 for free models, none otherwise)")
    p.add_argument("--relax-data-collection", action="store_true",
                   help="let a router use providers that keep request data (the data is synthetic; recorded)")
    p.add_argument("--ollama-context", metavar="LEVEL=TOKENS,...", help="Ollama: a variant per context size")
    p.add_argument("--allow-cpu-offload", action="store_true",
                   help="Ollama: run a variant that does not fit in GPU memory (each cell records cpu_offload)")
    p.add_argument("-n", "--workers", help="xdist workers (a number or 'auto')")
    p.add_argument("--skip", action="append", default=[], metavar="CELL",
                   help="record CELL as skipped by the owner and run nothing; needs --skip-reason")
    p.add_argument("--skip-reason", help="why the --skip cells are skipped")
    p.add_argument("--unskip", action="append", default=[], metavar="CELL", help="take a skipped cell back")
    from pytest_assistant_eval.run.model_options import add_cli_options

    add_cli_options(p)


def _add_calibration(p: argparse.ArgumentParser, default: Any) -> None:
    # Accepted before and after the subcommand: after it, it used to go to pytest as an unknown option.
    p.add_argument("--calibration", type=Path, default=default,
                   help="the calibration folder (cases, key, levels, world fixtures; default: the shipped one)")


def build_parser() -> argparse.ArgumentParser:
    from pytest_assistant_eval.records import HARNESS_VERSION
    from pytest_assistant_eval.tabular.formats import add_format_arguments
    from pytest_assistant_eval.tabular.table_data import CALIBRATE_TABLES, COMPARE_TABLES, LEADERBOARD_TABLES, SUMMARY_TABLES

    parser = argparse.ArgumentParser(prog="assistant-eval", description=(
        "Measure what tool-using assistants do, ask and report, against a synthetic world of services."))
    parser.add_argument("-V", "--version", action="version", version=f"assistant-eval {HARNESS_VERSION}",
                        help="print the harness's version and exit")
    _add_calibration(parser, default_calibration_dir())
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("build", help="build the grounding world from calibration/world")
    p.add_argument("--out", type=Path, required=True, help="folder to build 'Grounding world ä' in")
    p.add_argument("--replace", action="store_true", help="replace an existing world (its results can no longer be resumed)")

    p = sub.add_parser("run", help="run cells (pytest with the plugin); unknown options go to pytest")
    _add_run_options(p)

    p = sub.add_parser("grade-ai", help="grade results folders: automatic checks, then the judge")
    p.add_argument("results", nargs="+", type=Path, help="results folders (one per model) to grade together")
    p.add_argument("--dir", type=Path, required=True,
                   help="the grading folder (outside every results folder)")
    p.add_argument("--judge", default="scripted:rules", help="PRESET:MODEL of the judge (scripted:rules is offline)")
    p.add_argument("--seed", type=ranges.SEED, default=None, help="seed of the blind order (default: random, recorded)")
    p.add_argument("--single-model", action="store_true", help="allow a grading folder of one results folder")
    from pytest_assistant_eval.judging.arguments import add_judge_arguments

    add_judge_arguments(p)

    p = sub.add_parser("summary", help="per model, level setting and class: how the graded cells came out")
    p.add_argument("--dir", type=Path, required=True, help="a grading folder")
    p.add_argument("--results", type=Path, action="append", default=[], metavar="FOLDER",
                   help="a graded results folder not found beside the grading folder (repeatable)")
    p.add_argument("--record", action="store_true",
                   help="append one line per cell to the results file (refused while cells wait for review)")
    p.add_argument("--file", type=Path, default=None,
                   help="the results file (default: results.jsonl in the calibration folder)")
    p.add_argument("--prices", type=Path, default=None, metavar="FILE",
                   help="a YAML of input and output prices per million tokens per PRESET:MODEL: the cost per cell, "
                        "model and run, the judge apart (docs/results.md)")
    add_format_arguments(p, SUMMARY_TABLES)

    p = sub.add_parser("review", help="the owner's review of a grading folder: the queue, blind verdicts first")
    from pytest_assistant_eval.review.cli_options import add_review_arguments

    add_review_arguments(p)

    p = sub.add_parser("calibrate", help="per model and level setting: rates with intervals, and the evidence")
    p.add_argument("--file", type=Path, default=None,
                   help="the results file (default: results.jsonl in the calibration folder)")
    p.add_argument("--set-version", help="tabulate this question set version (default: the newest line's)")
    p.add_argument("--key-version", help="tabulate this answer key version (default: the newest line's)")
    add_format_arguments(p, CALIBRATE_TABLES)

    p = sub.add_parser("leaderboard", help="the per-assistant table of task runs")
    p.add_argument("--dir", type=Path, required=True, help="a grading folder")
    p.add_argument("--by-level", action="store_true", help="one row per assistant and level")
    p.add_argument("--k", type=ranges.PASS_K, default=2, help="the k of pass^k: k repeats of a task all pass (default: 2)")
    add_format_arguments(p, LEADERBOARD_TABLES)

    p = sub.add_parser("compare", help="two models on the cases both ran: differences with paired 95%% intervals "
                                       "and exact McNemar p")
    p.add_argument("--dir", type=Path, required=True, help="a grading folder holding both models")
    p.add_argument("model_a", metavar="A", help="a model as the leaderboard names it")
    p.add_argument("model_b", metavar="B", help="the model to compare it with")
    add_format_arguments(p, COMPARE_TABLES)

    p = sub.add_parser("report", help="one self-contained HTML page of a grading folder, with a drill-down into "
                                      "every cell (opens offline)")
    p.add_argument("--dir", type=Path, required=True, help="a grading folder")
    p.add_argument("--out", type=Path, default=None, help="the page to write (default: GRADING/report.html)")
    p.add_argument("--results", type=Path, action="append", default=[], metavar="FOLDER",
                   help="a graded results folder not found beside the grading folder (repeatable)")
    p.add_argument("--k", type=ranges.PASS_K, default=2, help="the k of the leaderboard's pass^k (default: 2)")
    p.add_argument("--unblind", action="store_true",
                   help="name the model of every cell even while the review queue is open (the page says so)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="the two models the page compares (default: the leaderboard's first two)")
    p.add_argument("--prices", type=Path, default=None, metavar="FILE",
                   help="a YAML of input and output prices per million tokens per PRESET:MODEL (as summary's): "
                        "the page shows the cost per model and the judge's apart")

    p = sub.add_parser("demo", help="build, run every reference assistant, grade and print the leaderboard")
    p.add_argument("--out", type=Path, default=Path("_eval_reports/demo"),
                   help="a new, empty or earlier demo folder the demo writes into (default: _eval_reports/demo)")
    p.add_argument("-n", "--workers", default=None, help="xdist workers (default: the machine's cores)")
    p.add_argument("--owner", choices=("scripted", "none"), default="scripted",
                   help="who reviews the queue: the scripted owner answering from the key (default), or none "
                        "(the queue waits for you; nothing is recorded)")
    p = sub.add_parser("agentdojo", help="AgentDojo's suites: run (an alias of run --suite agentdojo), export, grade, board, "
                       "crosscheck (needs the [agentdojo] extra; docs/agentdojo.md)", add_help=False)
    p.add_argument("agentdojo_args", nargs=argparse.REMAINDER,
                   help="run | export | grade | board | crosscheck and their options (assistant-eval agentdojo ACTION --help)")

    from pytest_assistant_eval.agents.serve_tools import add_parser as add_serve_tools

    add_serve_tools(sub)  # issue 33

    for child in sub.choices.values():
        _add_calibration(child, argparse.SUPPRESS)  # given after the subcommand, it wins; else the top's
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command; a reader that stops reading (``summary | head -1``) ends it quietly, exit 0 (issue 29)."""
    try:
        code = _dispatch(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return 0


def _quiet_stdout() -> None:
    """Point stdout at /dev/null: the reader is gone, and Python's last flush at exit must not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass  # stdout is no file (a test's StringIO): nothing is flushed at exit
    finally:
        os.close(devnull)


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command not in ("run", "agentdojo"):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command == "agentdojo":
        from pytest_assistant_eval.suites import suite_command

        return suite_command("agentdojo", [*args.agentdojo_args, *extra])
    if args.command == "build":
        return _cmd_build(args)
    if args.command == "run":
        return _cmd_run(args, extra)
    if args.command == "grade-ai":
        from pytest_assistant_eval.suites import suite_part

        _folder = suite_part("calibration", "grade.folder")
        grade_command, judge_options = _folder.grade_command, _folder.judge_options
        from pytest_assistant_eval.suites import suite_grade

        code = suite_grade(args.results, args.dir)  # another suite's folders: that suite grades them
        if code is not None:
            return code

        from pytest_assistant_eval.tables import priming  # the tables' digests, primed as it grades

        return grade_command(args.results, args.dir, args.judge, seed=args.seed, single_model=args.single_model,
                             calibration=args.calibration, options=judge_options(args), priming=priming)
    if args.command == "leaderboard":
        from pytest_assistant_eval.tables.leaderboard import leaderboard_command

        return leaderboard_command(args.dir, args.calibration, k=args.k, by_level=args.by_level, fmt=args.format,
                                   table=args.table)
    if args.command == "compare":
        from pytest_assistant_eval.tables.compare import compare_command

        return compare_command(args.dir, args.model_a, args.model_b, fmt=args.format, table=args.table)
    if args.command == "summary":
        from pytest_assistant_eval.tables.summary import summary_command

        return summary_command(args.dir, args.calibration, results=args.results, record=args.record,
                               results_file=args.file, fmt=args.format, table=args.table,
                               prices_file=args.prices)
    if args.command == "review":
        from pytest_assistant_eval.review.cli_options import run_review
        from pytest_assistant_eval.tables.grading_source import open_grading  # the review reads what the tables read

        return run_review(args, parser, open_grading=open_grading)
    if args.command == "calibrate":
        from pytest_assistant_eval.tables.calibrate import calibrate_command

        return calibrate_command(args.file or args.calibration / "results.jsonl", args.calibration,
                                 set_version=args.set_version, key_version=args.key_version, fmt=args.format,
                                 table=args.table)
    if args.command == "report":
        from pytest_assistant_eval.tables.report import report_command

        return report_command(args.dir, args.calibration, args.out, results=args.results, k=args.k,
                              unblind=args.unblind, compare=args.compare, prices_file=args.prices)
    if args.command == "serve-tools":
        from pytest_assistant_eval.agents.serve_tools import serve_tools_command

        return serve_tools_command(args)
    if args.command == "demo":
        from pytest_assistant_eval.demo import demo_command

        workers = args.workers or str(max(1, min(os.cpu_count() or 1, 4)))
        return demo_command(args.out, args.calibration, workers, owner=args.owner)
    parser.error(f"unknown command {args.command}")
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
