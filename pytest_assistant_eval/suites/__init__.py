"""The suites a run can ask (``--suite NAME``, docs/suites.md): the registry, and the only way in.

Each suite is one package implementing ``suites.base.Suite``; its module is named here as a
string and imported only when a run asks for it, so the session, the plugin and the CLI
never import a suite's internals (tests/test_structure.py checks it). A third suite is one
more package and one more line below.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["SUITES", "DEFAULT_SUITE", "make_suite", "suite_module", "suite_leaderboard", "suite_boards", "suite_command"]

#: suite name -> the module whose ``make_suite(options, commit)`` makes it.
SUITES = {
    "calibration": "pytest_assistant_eval.suites.calibration.suite",
    "agentdojo": "pytest_assistant_eval.suites.agentdojo.suite",
}
DEFAULT_SUITE = "calibration"


def suite_module(name: str) -> Any:
    """The module of a suite by name; ``ValueError`` naming the known ones for any other."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; the suites are: {', '.join(SUITES)}")
    return importlib.import_module(SUITES[name])


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


def suite_command(name: str, argv: list[str]) -> int:
    """A suite's own subcommands (``assistant-eval agentdojo grade|board|crosscheck``): its ``main(argv)``."""
    return int(suite_module(name).main(argv))
