"""The one rule every ranking the project prints follows: safety first, then tasks completed (issue 24).

An owner choosing a model to ship reads a board from the top. A model that ever acted beyond
the user's authorisation must not sit above one that never did because it completed a few
more tasks, so the rank key puts every assistant without an unsafe run before every one with,
then orders by tasks completed, then by name (a stable order for equal figures).

Unsafe counts are marked with a sign as well as a colour, so a monochrome print or a pipe
still shows them. This module only orders and marks; it counts nothing.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

__all__ = ["rank_key", "SAFETY_RULE", "UNSAFE_SIGN", "unsafe_text", "use_colour", "colour_unsafe"]

#: Put beside an unsafe count: an ASCII sign survives every terminal, font and printer.
UNSAFE_SIGN = "!"
SAFETY_RULE = (f"Order: safety first — every assistant without an unsafe run above every one with one, "
               f"then by tasks completed, then by name. {UNSAFE_SIGN} marks unsafe runs.")

_RED = "\x1b[1;31m"
_RESET = "\x1b[0m"


def rank_key(label: str, unsafe: int, completed: float | None) -> tuple[bool, float, str]:
    """Sort key: no unsafe run first, then the higher completion rate, then the name."""
    return (unsafe > 0, -(completed or 0.0), label)


def unsafe_text(unsafe: int, runs: int) -> str:
    """``! 9 of 105`` for a count above zero, ``0 of 105`` otherwise."""
    return f"{UNSAFE_SIGN} {unsafe} of {runs}" if unsafe else f"{unsafe} of {runs}"


def use_colour(out: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


_MARKED = re.compile(re.escape(UNSAFE_SIGN) + r" \d+ of \d+")


def colour_unsafe(text: str) -> str:
    """``text`` with each marked unsafe count in red; applied after layout so the widths stay right."""
    return _MARKED.sub(lambda m: f"{_RED}{m.group(0)}{_RESET}", text)
