"""The suites a run can ask (``--suite NAME``, docs/suites.md): the registry, and the only way in.

Each suite is one package implementing ``suites.base.Suite``; its module is named here as a
string and imported only when a run asks for it, so the session, the plugin and the CLI
never import a suite's internals (tests/test_structure.py checks it). A third suite is one
more package and one more line below. The tables and the review find the suite a folder or a
record recorded through ``suites.recorded`` (issue 32).
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

__all__ = ["SUITES", "DEFAULT_SUITE", "make_suite", "suite_module", "suite_leaderboard", "suite_boards", "suite_command",
           "suite_of_results", "suite_grade", "suite_part", "scripted_models", "register_suite", "suite_report", "SUITES_VARIABLE"]

#: suite name -> the module whose ``make_suite(options, commit)`` makes it.
SUITES = {
    "calibration": "pytest_assistant_eval.suites.calibration.suite",
    "agentdojo": "pytest_assistant_eval.suites.agentdojo.suite",
}
DEFAULT_SUITE = "calibration"
#: More suites for every process of a run (xdist workers too): ``NAME=MODULE,NAME=MODULE``.
SUITES_VARIABLE = "ASSISTANT_EVAL_SUITES"
for _entry in filter(None, os.environ.get(SUITES_VARIABLE, "").split(",")):
    _name, _, _module = _entry.partition("=")
    if _name.strip() and _module.strip():
        SUITES.setdefault(_name.strip(), _module.strip())


def suite_module(name: str) -> Any:
    """The module of a suite by name; ``ValueError`` naming the known ones for any other."""
    return importlib.import_module(suite_module_name(name))


def suite_part(name: str, part: str) -> Any:
    """A named part of a suite's package (``suite_part("calibration", "world.build")``): how the front
    doors reach what only the suite they chose has (its world's build, its grade-ai) without importing
    its internals (tests/test_structure.py). The tables and the review ask a suite's protocol instead
    (``suites.recorded``: the suite a folder recorded), never a part by a suite's name."""
    package = suite_module_name(name).rpartition(".")[0]
    return importlib.import_module(f"{package}.{part}")


def suite_module_name(name: str) -> str:
    """The module path of a suite by name; ``ValueError`` naming the known ones for any other."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; the suites are: {', '.join(SUITES)}")
    return SUITES[name]


def scripted_models(name: str = DEFAULT_SUITE) -> Any:
    """The reference assistants' names of a suite (its module's ``SCRIPTED_MODELS``)."""
    return suite_module(name).SCRIPTED_MODELS


def register_suite(name: str, module: str) -> None:
    """Add a suite to the registry (a third suite, a test's toy suite): ``module`` gives
    ``make_suite(options, commit)`` and ``suite_options(parts, get)`` like the shipped ones."""
    SUITES[name] = module


def make_suite(options: Any, commit: str | None = None) -> Any:
    """The suite ``options.suite`` names, made for this run (its cells planned, its world checked)."""
    return suite_module(getattr(options, "suite", DEFAULT_SUITE)).make_suite(options, commit)


def suite_leaderboard(grading_dir: Any, fmt: str, out: Any) -> int | None:
    """``leaderboard --dir GRADING`` of a grading folder that holds only another suite's grading:
    the first suite whose ``leaderboard(grading_dir, fmt, out)`` knows the folder prints its board
    and gives the exit code; None when none does (then it is the calibration's leaderboard)."""
    for name in SUITES:
        board = getattr(suite_module(name), "leaderboard", None)
        if board is not None:
            code = board(grading_dir, fmt, out)
            if code is not None:
                return int(code)
    return None


def suite_boards(grading_dir: Any) -> list[str]:
    """The boards other suites print after the calibration's leaderboard (``board_text(grading_dir)``)."""
    boards = []
    for name in SUITES:
        text = getattr(suite_module(name), "board_text", None)
        board = text(grading_dir) if text is not None else None
        if board:
            boards.append(board)
    return boards


def suite_report(grading_dir: Any) -> str | None:
    """``report --dir GRADING`` of a grading folder holding only another suite's grading: the page
    of the first suite whose ``report(grading_dir)`` knows the folder; None: the calibration's report."""
    if (Path(grading_dir) / "grading.json").exists():
        return None
    for name in SUITES:
        report = getattr(suite_module(name), "report", None)
        page = report(grading_dir) if report is not None else None
        if page is not None:
            return str(page)
    return None


def suite_command(name: str, argv: list[str]) -> int:
    """A suite's own subcommands (``assistant-eval agentdojo grade|board|crosscheck``): its ``main(argv)``."""
    return int(suite_module(name).main(argv))


def suite_of_results(folder: Any) -> str:
    """The suite whose run wrote a results folder, from its ``run.json``'s format: each suite's
    module names its own (``RUN_FORMAT_PREFIX``); any other folder is the calibration's."""
    import json
    from pathlib import Path

    try:
        found = json.loads((Path(folder) / "run.json").read_text(encoding="utf-8")).get("format", "")
    except (OSError, ValueError, AttributeError):
        return DEFAULT_SUITE  # the calibration's grading says what is wrong with the folder
    for name in SUITES:
        # a suite on SuiteBase's formats needs no prefix of its own: assistant-eval.NAME-run/
        default = f"assistant-eval.{name}-run/" if name != DEFAULT_SUITE else None
        prefix = getattr(suite_module(name), "RUN_FORMAT_PREFIX", default)
        if prefix and isinstance(found, str) and found.startswith(prefix):
            return name
    return DEFAULT_SUITE


def suite_grade(results: list[Any], grading_dir: Any) -> int | None:
    """``grade-ai RESULTS --dir GRADING`` for another suite's folders: that suite's ``grade``
    gives the exit code; None when they are the calibration's (its grading runs). Folders of
    two suites are refused: their figures are of different benchmarks."""
    import sys

    names = sorted({suite_of_results(folder) for folder in results})
    if names == [DEFAULT_SUITE]:
        return None
    if len(names) > 1:
        print(f"assistant-eval grade-ai: these results folders are of several suites ({', '.join(names)}); "
              "grade each suite's folders into its own grading folder", file=sys.stderr)
        return 2
    return int(suite_module(names[0]).grade(results, grading_dir))
