"""The one sanitiser of what reaches the console from outside the harness (issue 31, item C; S9.3).

A provider's error text, a model's words and the owner's own text (``--skip-reason``) are printed
only through :func:`shown` (or :func:`visible` where the harness itself breaks lines): redacted
first, then every control character, escape sequence and bidirectional override written visibly
(``\\x1b``, ``\\r``, ``\\n``, ``\\u202e``), so no such text clears the screen, sets the title,
rewrites the line or forges a ``==== 3 passed ====`` line of its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pytest_assistant_eval.redact import redact
from pytest_assistant_eval.secret import Secret, Secrets

# C0 and C1 controls, DEL, line and paragraph separators, bidi marks, overrides and isolates.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\x1b": "\\x1b"}


def _escape(match: re.Match[str]) -> str:
    char = match.group(0)
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def one_line(text: str | None) -> str:
    """``text`` on one line, every control character shown as an escape."""
    if not text:
        return text or ""
    return _CONTROL.sub(_escape, str(text))


def visible(text: str | None) -> str:
    """``text`` with its line breaks and tabs kept (a layout) and every other control shown."""
    if not text:
        return text or ""
    return _CONTROL_BUT_NEWLINE.sub(_escape, str(text))


def shown(text: str | None, secrets: Secrets | Iterable[str | Secret | None] = ()) -> str:
    """Outside text as the console shows it: redacted, then on one visible line (in this order)."""
    return one_line(redact(text, secrets))
