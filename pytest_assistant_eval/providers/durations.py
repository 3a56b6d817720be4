"""Durations as providers write them (``"644ms"``, ``"1m2.5s"``, ``"59s"``), read into seconds.

Its own module because the HTTP layer (retry hints) and the rate-limit reader (reset times
in headers) both read them, and the pacer, which the HTTP layer calls, reads the rate limits:
with the reader here none of the three imports another both ways (issue 25).
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")


def parse_duration(text: str | None) -> float | None:
    """Seconds from ``"644ms"``, ``"9.816s"``, ``"1m2.5s"``, ``"59s"`` or a bare number."""
    if text is None:
        return None
    text = str(text).strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        pass
    total = 0.0
    found = False
    pos = 0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            return None
        pos = m.end()
        found = True
        value, unit = float(m.group(1)), m.group(2)
        total += value * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
    return total if found and pos == len(text) else None
