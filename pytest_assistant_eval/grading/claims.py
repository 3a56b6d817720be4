"""The ``claims`` item (issue 21): every statement of fact that no key item covers is read.

Key facts, unsourced numbers and forbidden patterns cover only what the key foresaw. An
answer can also invent a date ("its cycle resets on 1 April"), a schedule, an id no tool
returned, a cause ("the bank blocked the card", where the records say it expired) or say
falsely that the records cannot tell. One ``claims`` item per final answer (and per task
report) puts all of that before a judge: right when every such statement is backed by this
conversation's tool results or the user's words, wrong (naming the statement) otherwise.

Code never settles it: a cause or a state in words is beyond what code can prove. What code
can do is trace every date, time and id the text states to a source, and say which it could
not trace; the rules judge (``rules_judge``) accepts the item only when nothing is left
untraced and the text does not claim the data is silent where the key says it speaks, and
otherwise leaves it unsure for the owner instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from pytest_assistant_eval.grading.items import Item
from pytest_assistant_eval.reading.quantities import DateMention, find_dates
from pytest_assistant_eval.reading.wording import plain, says_no_data, sentence_around

__all__ = ["CLAIMS_TEXT", "claims_item", "untraced_statements"]

CLAIMS_TEXT = ("every statement of fact in this message that no other item covers (dates, times, ids, names, "
               "states of records, causes, counts, 'the records do not say') is backed by this conversation's "
               "tool results or the user's words")

# An id as tools write them: letters, a separator, then digits ("L-103", "card-visa-4821",
# "ch-0011", "pay-0105", "b-0003", "e-0008", "m-0016").
_ID_RE = re.compile(r"(?<![\w-])[A-Za-z]{1,12}(?:-[A-Za-z]{1,12})*-\d{2,}(?![\w-])")
MAX_LISTED = 12


def _moment_keys(d: DateMention) -> set[tuple[str, Any]]:
    """Comparable keys of a date or time: its day (month-day), its month, its clock time."""
    keys: set[tuple[str, Any]] = set()
    value = d.value
    if d.kind in ("date", "datetime"):
        keys.add(("day", value[2:7] if value.startswith("--") else value[5:10]))
    if d.kind == "month":
        keys.add(("month", value[-2:]))
    if d.kind in ("date", "datetime") and not value.startswith("--"):
        keys.add(("month", value[5:7]))
    clock = value[11:16] if d.kind == "datetime" else value[:5] if d.kind == "time" else None
    if clock and len(clock) == 5 and clock[2] == ":":
        minutes = int(clock[:2]) * 60 + int(clock[3:])
        keys.add(("clock", minutes))
        if d.offset is not None:
            keys.add(("clock", (minutes - d.offset) % 1440))  # the same instant in UTC
    return keys


def _seen_keys(texts: Iterable[str]) -> set[tuple[str, Any]]:
    seen: set[tuple[str, Any]] = set()
    for text in texts:
        own: set[tuple[str, Any]] = set()
        for d in find_dates(text):
            own |= _moment_keys(d)
        seen |= own | _days_around(own)  # a stay's nights, within one record
        for d in find_dates(text):
            seen |= _moment_keys(d)
            if d.offset is not None and d.kind in ("datetime", "time"):
                clock = d.value[11:16] if d.kind == "datetime" else d.value[:5]
                minutes = int(clock[:2]) * 60 + int(clock[3:])
                seen.add(("clock", (minutes + d.offset) % 1440))  # a UTC time shown in local time too
    return seen


def _days_around(seen: set[tuple[str, Any]]) -> set[tuple[str, Any]]:
    """A stay's nights and an event's day: the days between two seen days of one month are
    sayable ("the nights of 1, 2, 3 and 4 April" for a stay from 1 to 5 April)."""
    days = sorted(k[1] for k in seen if k[0] == "day")
    out: set[tuple[str, Any]] = set()
    for a, b in zip(days, days[1:]):
        if a[:2] == b[:2] and 0 < int(b[3:]) - int(a[3:]) <= 14:
            out |= {("day", f"{a[:2]}-{d:02d}") for d in range(int(a[3:]), int(b[3:]) + 1)}
    return out


def untraced_statements(text: str, sources: Iterable[str], covered: Iterable[int] = ()) -> list[dict[str, str]]:
    """The dates, times and ids of ``text`` that no source text states, each with its sentence.
    ``covered``: offsets where another item already reads a value (a key fact it matched)."""
    skip = set(covered)
    texts = list(sources)
    seen = _seen_keys(texts)
    joined = "\n".join(texts).casefold()
    found: list[dict[str, str]] = []
    for d in find_dates(text):
        keys = _moment_keys(d)
        if not keys or d.start in skip:
            continue
        # A date is backed when its day (or month) was shown; a time when its clock was.
        wanted = "month" if d.kind == "month" else "day"
        day_keys = {k for k in keys if k[0] == wanted}
        clock_keys = {k for k in keys if k[0] == "clock"}
        day_ok = not day_keys or bool(day_keys & seen)
        clock_ok = not clock_keys or bool(clock_keys & seen)
        if not clock_ok and d.offset is not None:
            # A zoned time converted from a seen local one ("13:45 Porto time is 12:45 UTC").
            clock_ok = any(("clock", (k[1] + shift) % 1440) in seen for k in clock_keys for shift in (-120, -60, 60, 120))
        if not (day_ok and clock_ok):
            found.append({"kind": "date" if d.kind in ("date", "month") else "time" if d.kind == "time" else "date-time",
                          "text": d.text, "sentence": sentence_around(text, d.start, d.end)[:240]})
    for m in _ID_RE.finditer(text):
        if m.group().casefold() not in joined and m.start() not in skip:
            found.append({"kind": "id", "text": m.group(), "sentence": sentence_around(text, m.start(), m.end())[:240]})
    return found[:MAX_LISTED]


def claims_item(item_id: str, text: str, sources: Iterable[str], *, data_answers: bool | None,
                covered: Iterable[int] = ()) -> Item | None:
    """The ``claims`` item of one message (None for an empty one).

    ``data_answers``: True when the key says the data answers the question (a question turn
    whose key has facts and no ``data_does_not_answer``), None when unknown (a task report).
    """
    if not plain(text).strip():
        return None
    evidence: dict[str, Any] = {"untraced": untraced_statements(text, sources, covered)}
    if data_answers:
        phrase = says_no_data(text)
        if phrase is not None:
            evidence["says_the_data_is_silent"] = phrase
    return Item(id=item_id, kind="claims", text=CLAIMS_TEXT, allowed=("right", "wrong"), evidence=evidence)
