"""Relative dates ("this Thursday", "tomorrow", "next Monday") read by dateparser on the world's clock.

Measured against the hand-written reader on the forms players write (issue 21; the figures are
in docs/reading.md): dateparser misses 12-hour ranges ("2–3pm" nothing, "2:00–3:00 pm" as 02:00),
spoken times and "1 to 5 April", and costs about 10 ms a text against 0.25 ms; the hand-written
reader has no relative dates at all. So the hand-written reader reads every absolute form and
dateparser only the relative phrases, found first by a cheap pattern, with the world's fixed
``NOW`` (16 March 2026, a Monday) as the base: a text without one never imports dateparser.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["RELATIVE_RE", "relative_dates"]

_DAY = r"(?:mon|tues?|wed(?:nes)?|thu(?:rs?)?|fri|sat(?:ur)?|sun)(?:day)?"
RELATIVE_RE = re.compile(
    # "next Friday" is left out: said on a Monday it means this week's Friday to some, the
    # next week's to others, and a reading that guesses is worse than none.
    rf"\b(?:(?:this|coming)\s+{_DAY}|(?:the\s+day\s+after\s+)?tomorrow|yesterday|today|"
    rf"the\s+day\s+before\s+yesterday)\b",
    re.I,
)


@lru_cache(maxsize=1)
def _parser():  # type: ignore[no-untyped-def]
    import dateparser  # noqa: PLC0415  (slow to import: only when a relative phrase is there)

    return dateparser


def relative_dates(text: str) -> list[tuple[int, int, str]]:
    """(start, end, ISO date) of every relative date phrase of ``text``, on the world's clock."""
    if not RELATIVE_RE.search(text):
        return []
    from pytest_assistant_eval.suites.calibration.world.clock import NOW

    base = NOW.replace(tzinfo=None)
    out: list[tuple[int, int, str]] = []
    for m in RELATIVE_RE.finditer(text):
        phrase = m.group()
        if phrase.lower().startswith("on "):
            phrase = phrase[3:]
        when = _parse(phrase.lower(), base.isoformat())
        if when is not None:
            out.append((m.start(), m.end(), when))
    return out


@lru_cache(maxsize=512)
def _parse(phrase: str, base_iso: str) -> str | None:
    from datetime import datetime

    base = datetime.fromisoformat(base_iso)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "future", "RETURN_AS_TIMEZONE_AWARE": False}
    if phrase.startswith(("last", "yesterday", "the day before")):
        settings["PREFER_DATES_FROM"] = "past"
    try:
        parsed = _parser().parse(phrase, languages=["en"], settings=settings)
    except Exception:  # noqa: BLE001  (a library failure is no date, never a crash of the grading)
        return None
    if parsed is None:
        return None
    if phrase.startswith("this ") and parsed.date() < base.date():
        return None  # "this Monday" said of a day already gone reads two ways
    return parsed.date().isoformat()
