"""Spans of a text that hold digits but no amount (S6.1): ids, card digits, phone numbers,
time zones on their own, and dates.

Split from ``quantities`` (issue 32). A number is skipped as a quantity when it is part of

1. a date or a time (``dates.find_dates``), or a zone offset on its own (``UTC+1``);
2. an id: a token that starts with a letter and joins segments with ``-``, ``_`` or
   ``#`` (``L-104``, ``card-2``, ``ch-0011``, ``run_2``), or ``#12``;
3. card digits: four digits after *ending (in/with), ends in/with, last four
   (digits)*, or after a mask such as ``••••`` or ``****``;
4. an international phone number (``+351 217 000 900``).
"""

from __future__ import annotations

import re

from pytest_assistant_eval.reading.dates import _ZONE_ALONE_RE, find_dates
from pytest_assistant_eval.reading.units import SPACE as _SPACE

__all__ = ["blocked_spans"]


_ID_RE = re.compile(
    # Bounded by anything but letters and digits: "_L-103_" is markdown italics around an id.
    r"(?<![^\W_])(?<!#)[A-Za-z][A-Za-z0-9]*(?:[-_#][A-Za-z0-9]+)+(?![^\W_])"
    r"|(?<![^\W_])#[0-9]+(?![^\W_])"
)
_CARD_RE = re.compile(
    rf"(?i:(?:ending|ends)(?:{_SPACE}+(?:in|with))?|last{_SPACE}+(?:four|4)(?:{_SPACE}+digits)?(?:{_SPACE}+(?:are|of))?)"
    rf"[:{_SPACE}]*(?P<d>[0-9]{{4}})(?![0-9])"
    # A mask of at least three stars ("**" before digits is markdown bold: "**1000 EUR**").
    rf"|(?:(?:[•·●]{{2,}}|[*xX]{{3,}}){_SPACE}?)(?P<m>[0-9]{{4}})(?![0-9])"
)


# International phone numbers ("+351 217 000 900") are contact details, not amounts.
_PHONE_RE = re.compile(rf"(?<![\w+])\+[0-9]{{1,3}}(?:(?:{_SPACE}|-)?[0-9]{{2,4}}){{2,}}(?![0-9])")


def _blocked_spans(text: str) -> list[tuple[int, int]]:
    spans = [(d.start, d.end) for d in find_dates(text)]
    spans.extend(m.span() for m in _ZONE_ALONE_RE.finditer(text))
    spans.extend(m.span() for m in _PHONE_RE.finditer(text))
    for m in _ID_RE.finditer(text):
        if any(ch.isdigit() for ch in m.group()):
            spans.append(m.span())
    for m in _CARD_RE.finditer(text):
        group = "d" if m.group("d") else "m"
        spans.append(m.span(group))
    return spans

blocked_spans = _blocked_spans
