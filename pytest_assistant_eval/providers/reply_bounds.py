"""Bounds on the shape of a provider's answer: JSON nesting depth and tool calls per reply (issue 31, H/I).

A whole answer nested 2,000 deep raised ``RecursionError`` out of the JSON decoder instead of
being an unreadable answer; 5,000 tool calls in one 350 KB reply took 13 s a cell and made each
record 24.8 MB. :func:`loads` parses JSON no deeper than :data:`MAX_DEPTH` (deeper, or too deep
for the decoder: ``ValueError``, which every reader of an answer classifies as unreadable), and
:data:`MAX_TOOL_CALLS` is the most tool calls one reply may carry before it is an ``oversized``
stop (graded, counted, its calls dropped, as an answer far beyond its output limit).
"""

from __future__ import annotations

import json
import re
from typing import Any

#: No wire format nests an answer deeper than a few dozen levels; tool arguments a model writes neither.
MAX_DEPTH = 100
#: No assistant needs more tool calls in one reply; the calibration tasks need at most a handful.
MAX_TOOL_CALLS = 64

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


class TooDeep(ValueError):
    """JSON nested deeper than :data:`MAX_DEPTH`."""


def depth(text: str) -> int:
    """The deepest nesting of arrays and objects in JSON ``text`` (strings skipped)."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return 0  # cannot be deeper than the bound: no scan
    deepest = level = 0
    for match in _TOKENS.finditer(text):
        char = match.group(0)
        if char in "[{":
            level += 1
            if level > deepest:
                deepest = level
                if deepest > MAX_DEPTH:
                    return deepest
        elif char in "]}":
            level -= 1
    return deepest


def loads(data: str | bytes | bytearray) -> Any:
    """``json.loads`` for what a provider sent: ``ValueError`` for JSON nested beyond :data:`MAX_DEPTH`."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
    if depth(text) > MAX_DEPTH:
        raise TooDeep(f"JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(text)
    except RecursionError:
        raise TooDeep(f"JSON nested too deep to read (over {MAX_DEPTH} levels)") from None
