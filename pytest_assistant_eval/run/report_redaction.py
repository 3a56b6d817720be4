"""What pytest prints and writes about a cell is redacted like every file (S9.3; issue 23 item 15).

pytest renders a failing cell's traceback on the terminal and into ``--junitxml``. With ``-l``
it prints every frame's locals, and those hold what a provider sent (an error body echoing
the request's headers, a garbled event) and the request being sent; its pretty printer splits
and shortens long values, so a key would come out in pieces no redaction after the fact can
find. So ``-l`` is switched off for cells (the run says so once), and every report is passed
through the one redaction policy before pytest writes it: its traceback text, its captured
sections and the cell's properties. This module never holds a key of its own.
"""

from __future__ import annotations

from typing import Any

from pytest_assistant_eval.redact import redact
from pytest_assistant_eval.secret import Secrets

SHOWLOCALS_LINE = ("assistant-eval: -l (--showlocals) is off for cells: a cell's locals hold the provider's answers "
                   "and the request's headers, which may hold a key")


def guard_showlocals(option: Any) -> str | None:
    """Switch pytest's ``-l`` off; the line to say once when it was on."""
    if getattr(option, "showlocals", False):
        option.showlocals = False
        return SHOWLOCALS_LINE
    return None


def redact_report(report: Any, secrets: Secrets) -> None:
    """Redact a test report in place: keys only, so a traceback keeps its file paths."""
    if report.longrepr is not None:
        text = str(report.longrepr)
        cleaned = redact(text, secrets, paths=False)
        if cleaned != text:
            report.longrepr = cleaned
    report.sections = [(title, redact(content, secrets, paths=False)) for title, content in report.sections]
    report.user_properties = [(name, redact(value, secrets) if isinstance(value, str) else value)
                              for name, value in report.user_properties]
