"""Shim so that ``pytest -p assistant_eval`` loads the opt-in plugin (no entry point)."""

from pytest_assistant_eval.plugin import *  # noqa: F401,F403
from pytest_assistant_eval.plugin import (  # noqa: F401
    assistant_eval_cell_runner,
    pytest_addoption,
    pytest_collection_modifyitems,
    pytest_configure,
    pytest_generate_tests,
    pytest_report_teststatus,
    pytest_runtest_logreport,
    pytest_sessionfinish,
    pytest_sessionstart,
    pytest_terminal_summary,
    pytest_xdist_make_scheduler,
)
