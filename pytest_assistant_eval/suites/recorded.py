"""The suite a folder, a record or a file recorded, as the tables, the review and serve-tools read it (issue 32).

Generic code never names a suite: it asks this module for the suite of what it reads (a grading
folder, a record's format, a results file) and reads that suite through the ``Suite`` protocol's
reading members (suites/base.py). Where what it reads records no suite (every folder and file
written before suites were recorded), the default is said here, beside the registry, and
nowhere in the tables or the review. Apart from ``suites/__init__.py`` because it makes a
``SuiteBase``: the registry itself imports no protocol (``suites.plan`` reads the registry).
"""

from __future__ import annotations

from typing import Any

from pytest_assistant_eval.suites import DEFAULT_SUITE, SUITES, suite_module
from pytest_assistant_eval.suites.base import reading_suite

__all__ = ["get_suite", "default_suite", "grading_suite", "results_file_suite", "suite_of_record"]


def get_suite(name: str) -> Any:
    """The suite ``name`` as the tables, the review and serve-tools read it (issue 32): its module's
    ``reading_suite()`` (no run planned, no world checked), or ``SuiteBase``'s defaults for a suite
    whose module has none. Generic code passes the name a folder recorded, never a constant."""
    module = suite_module(name)
    reading = getattr(module, "reading_suite", None)
    if reading is not None:
        return reading()
    return reading_suite(name)


def default_suite() -> Any:
    """The suite a table or the review reads when neither its caller nor a folder names one (a
    results file's lines, a caller that hands in only a definition folder): the calibration, the
    suite every folder and file written before suites were recorded is of. Said here, beside the
    registry, so no generic package names it."""
    return get_suite(DEFAULT_SUITE)


def grading_suite(grading_dir: Any) -> Any:
    """The suite whose grading a grading folder holds, for its tables and its review.

    A folder with ``grading.json`` is the calibration's: that file is its grading's index and
    records no suite (every grading folder since S6 and before issue 32), so the documented
    default is said here, beside the registry, and nowhere in the tables. Another suite's grading is
    printed by the suite itself (``suite_leaderboard``, ``suite_report``)."""
    return default_suite()


def results_file_suite(results_file: Any) -> Any:
    """The suite of a results file's lines (``summary --record``'s ``results.jsonl``, S8.5): the
    calibration's, the one suite whose summary records lines; a line records no suite."""
    return default_suite()


def suite_of_record(fmt: Any) -> str:
    """The suite that wrote a record of format ``fmt`` (a cell record's ``format``): the suite whose
    module's ``RECORD_FORMAT_PREFIX`` it starts with (``assistant-eval.NAME-cell/`` for a suite on
    SuiteBase's formats); any other (``assistant-eval.cell/N``, the first suite's) is the calibration's."""
    for name in SUITES:
        default = f"assistant-eval.{name}-cell/" if name != DEFAULT_SUITE else None
        if default and isinstance(fmt, str) and fmt.startswith(default):
            return name  # without importing the suite
        prefix = getattr(suite_module(name), "RECORD_FORMAT_PREFIX", default)
        if prefix and isinstance(fmt, str) and fmt.startswith(prefix):
            return name
    return DEFAULT_SUITE
