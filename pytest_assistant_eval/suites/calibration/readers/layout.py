"""Numbers that are a text's layout or another unit of a stated amount, not values (issue 30, third round).

Written against the fresh held-out part's s10 (a letter with numbered clauses and footnotes) and
s11 (JSON answers with amounts in cents) cells, as general rules:

* **Clause and section numbers** (``1.``, ``1.1``, ``2.3`` at the start of a line) number the
  text. A line label counts as numbering only inside a scheme the text itself shows: at least two
  labels, each the first of its level (``1``, ``2.1``) or following its predecessor (``2.3`` after
  ``2.2``), a one-part label written with its dot (``1.``), and no unit right after it (``1.5 kWh``
  at a line's start is a value).
* **Footnote markers** (``[1]`` glued to the word or stop before it, ``[1] get_run`` as a note's
  label at a line's start) point to a note. ``[1, 2]`` or ``: [3]`` (a list in JSON) is no marker.
* **Minor units**: an amount marked as cents (``amount_cents: 28800``, ``"total_cents": "28800"``,
  ``28800 cents``) is the amount a hundredth of it (288.00): ``major_value`` gives that reading, and
  the number check counts it sourced when the major amount is.

This module only reads; the checks decide what a reading is worth.
"""

from __future__ import annotations

import re

from pytest_assistant_eval.suites.calibration.readers.numbers import Quantity
from pytest_assistant_eval.suites.calibration.readers.units import looks_like_unit

__all__ = ["layout_spans", "is_layout", "major_value"]

_LINE_LABEL = re.compile(r"(?m)^[ \t>*_#]*(?P<label>[0-9]{1,2}(?:\.[0-9]{1,2})*)(?P<dot>\.?)(?=[ \t]+(?P<next>\S+))")
_GLUED_MARKER = re.compile(r"(?<=[^\s\[(:,0-9])\[(?P<n>[0-9]{1,2})\](?![(\[])")
_NOTE_LABEL = re.compile(r"(?m)^[ \t]*\[(?P<n>[0-9]{1,2})\](?=[ \t]+\S)")


def _numbering(labels: list[tuple[tuple[int, ...], int, int, bool, str]]) -> list[tuple[int, int]]:
    seen = {label for label, *_ in labels}
    if len(seen) < 2:
        return []
    spans = []
    for label, start, end, dot, after in labels:
        if len(label) == 1 and not dot:
            continue  # "3 rows" at a line's start is a count; "3." numbers
        if looks_like_unit(after.strip(".,;:")):
            continue  # "1.5 kWh" at a line's start is a value
        first = label[-1] == 1
        follows = label[:-1] + (label[-1] - 1,) in seen
        siblings = any(other[:-1] == label[:-1] and other != label for other in seen)
        parent = len(label) == 1 or label[:-1] in seen or siblings
        if (first or follows) and parent:
            spans.append((start, end))
    return spans


def layout_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of every clause number and footnote marker of ``text`` (the digits only)."""
    labels = []
    for m in _LINE_LABEL.finditer(text):
        parts = tuple(int(p) for p in m.group("label").split("."))
        labels.append((parts, m.start("label"), m.end("label"), bool(m.group("dot")), m.group("next")))
    spans = _numbering(labels)
    spans += [(m.start("n"), m.end("n")) for m in _GLUED_MARKER.finditer(text)]
    spans += [(m.start("n"), m.end("n")) for m in _NOTE_LABEL.finditer(text)]
    return spans


def is_layout(q: Quantity, spans: list[tuple[int, int]]) -> bool:
    """Whether a stated number is one of the text's clause numbers or footnote markers."""
    return q.unit is None and any(start <= q.start and q.end <= end for start, end in spans)


# "amount_cents: 28800", "\"total_cents\": \"28800\"", "price_per_night_cents 7200", "minor units: 7200"
_MINOR_BEFORE = re.compile(r"(?:\b|_)(?:cents?|minor(?:[_ ]units?)?|pence)[\"']?\s*[:=]?\s*[\"']?$", re.I)
# "28800 cents", "28800 ct", "28800 (minor units)"
_MINOR_AFTER = re.compile(r"^[\"']?\s*\(?(?:cents?|ct|minor[_ ]units?|pence)\b", re.I)


def major_value(text: str, q: Quantity) -> float | None:
    """The amount a number marked as minor units stands for (``amount_cents: 28800`` -> 288.0), else None.

    Only a whole, unit-less number with a cents marker right before or after it is read so."""
    if q.unit is not None or q.decimals or q.spelled:
        return None
    before, after = text[max(0, q.start - 40): q.start], text[q.end: q.end + 20]
    if _MINOR_BEFORE.search(before) or _MINOR_AFTER.search(after):
        return q.value / 100.0
    return None


# A label-like number outside a scheme the text shows: "4.2 Rows ..." alone at a line's start, or
# "[3]" standing apart. It may number the text or state a value: the reader cannot tell.
_LONE_LABEL = re.compile(r"(?m)^[ \t>*_#]*(?P<label>[0-9]{1,2}\.[0-9]{1,2}|[0-9]{1,2}\.)(?=[ \t]+[A-Z(])")
_LONE_MARKER = re.compile(r"\[(?P<n>[0-9]{1,2})\](?![(\[])")


def layout_doubt(text: str, q: Quantity) -> str | None:
    """Why a unit-less number may be the text's layout rather than a value (a reading the number
    check hands to the owner as unsure, never counts as invented), else None."""
    if q.unit is not None:
        return None
    for pattern, group, what in ((_LONE_LABEL, "label", "a clause number"), (_LONE_MARKER, "n", "a footnote marker")):
        for m in pattern.finditer(text, max(0, q.start - 8), min(len(text), q.end + 8)):
            if m.start(group) <= q.start and q.end <= m.end(group):
                return what
    return None
