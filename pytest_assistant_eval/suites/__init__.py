"""The suites a run can ask (``--suite NAME``, docs/suites.md): the registry, and the only way in.

Each suite is one package implementing ``suites.base.Suite``; its module is named here as a
string and imported only when a run asks for it, so the session, the plugin and the CLI
never import a suite's internals (tests/test_structure.py checks it). A third suite is one
more package and one more line below.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["SUITES", "DEFAULT_SUITE", "make_suite", "suite_module"]

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
