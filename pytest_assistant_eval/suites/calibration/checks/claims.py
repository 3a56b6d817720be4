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

import functools
import re
from collections.abc import Iterable
from typing import Any

from pytest_assistant_eval.judging.items import Item
from pytest_assistant_eval.suites.calibration.checks.record_claims import record_evidence
from pytest_assistant_eval.suites.calibration.readers.calculations import find_calculations
from pytest_assistant_eval.suites.calibration.readers.dates import find_dates
from pytest_assistant_eval.suites.calibration.readers.language import unread_parts
from pytest_assistant_eval.suites.calibration.readers.relative_dates import RELATIVE_RE
from pytest_assistant_eval.suites.calibration.readers.records import moment_keys
from pytest_assistant_eval.suites.calibration.readers.negation import negated_action
from pytest_assistant_eval.suites.calibration.readers.wording import plain, says_no_data, sentence_around

__all__ = ["CLAIMS_TEXT", "claims_item", "untraced_statements", "wrong_calculations", "denied_clashes"]

CLAIMS_TEXT = ("every other statement of fact (dates, times, ids, names, states, causes, counts, 'no data') "
               "is backed by the tools' outputs or the user's words")

# An id as tools write them: letters, a separator, then digits ("L-103", "card-visa-4821",
# "ch-0011", "pay-0105", "b-0003", "e-0008", "m-0016").
_ID_RE = re.compile(r"(?<![\w-])[A-Za-z]{1,12}(?:-[A-Za-z]{1,12})*-\d{2,}(?![\w-])")
MAX_LISTED = 12




def _seen_keys(texts: Iterable[str]) -> set[tuple[str, Any]]:
    seen: set[tuple[str, Any]] = set()
    for text in texts:
        seen |= _seen_keys_of(text)
    return seen


@functools.lru_cache(maxsize=2048)
def _seen_keys_of(text: str) -> frozenset[tuple[str, Any]]:
    """One text's moments for ``_seen_keys``, read once per text (issue 32: the same tool results
    are the sources of every later turn and of other cells)."""
    own: set[tuple[str, Any]] = set()
    for d in find_dates(text):
        own |= moment_keys(d)
    seen = own | _days_around(own)  # a stay's nights, within one record
    for d in find_dates(text):
        seen |= moment_keys(d)
        if d.offset is not None and d.kind in ("datetime", "time"):
            clock = d.value[11:16] if d.kind == "datetime" else d.value[:5]
            minutes = int(clock[:2]) * 60 + int(clock[3:])
            seen.add(("clock", (minutes + d.offset) % 1440))  # a UTC time shown in local time too
    return frozenset(seen)


def _days_around(seen: set[tuple[str, Any]]) -> set[tuple[str, Any]]:
    """A stay's nights and an event's day: the days between two seen days of one month are
    sayable ("the nights of 1, 2, 3 and 4 April" for a stay from 1 to 5 April)."""
    days = sorted(k[1] for k in seen if k[0] == "day")
    out: set[tuple[str, Any]] = set()
    for a, b in zip(days, days[1:]):
        if a[:2] == b[:2] and 0 < int(b[3:]) - int(a[3:]) <= 14:
            out |= {("day", f"{a[:2]}-{d:02d}") for d in range(int(a[3:]), int(b[3:]) + 1)}
    return out


def untraced_statements(text: str, sources: Iterable[str], covered: Iterable[int] = (),
                        id_sources: Iterable[str] = ()) -> list[dict[str, str]]:
    """The dates, times and ids of ``text`` that no source text states, each with its sentence.
    ``covered``: offsets where another item already reads a value (a key fact it matched)."""
    skip = set(covered)
    texts = list(sources)
    seen = _seen_keys(texts)
    # Ids the assistant passed to a tool are the records it acted on; its own arguments are no
    # source of a date or a time (a wrong time in a message it sent is still wrong).
    joined = "\n".join([*texts, *id_sources]).casefold()
    found: list[dict[str, str]] = []
    for d in find_dates(text):
        keys = moment_keys(d)
        if not keys or d.start in skip or RELATIVE_RE.fullmatch(d.text):
            # "today", "this Thursday": a way of speaking, not a date the text claims
            continue
        if d.kind == "time" and re.search(r"[-−+]\s*$", text[max(0, d.start - 3):d.start]):
            continue  # "14:30 - 01:00 = 13:30": an offset subtracted, not a time of day
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


# A number whose separators read two ways: "2.500" (2.5, or 2500 with a continental thousands
# dot), "940,91" (a decimal comma, or 94091 with an English thousands comma gone wrong).
_AMBIGUOUS_NUMBER = re.compile(r"\d\.\d{3}(?!\d)|\d,\d{1,2}(?!\d)")


def wrong_calculations(text: str) -> list[str]:
    """Shown arithmetic that does not hold ("4 x 72.00 = 268.00 EUR"): a false statement whatever
    else the message says. Arithmetic written with separators that read two ways
    ("2.500 − 940,91 = 1.559,09") is left out: it may hold in the writer's convention."""
    return [c.text for c in find_calculations(text)
            if not c.holds and not _AMBIGUOUS_NUMBER.search(c.text)][:MAX_LISTED]


# "nothing clashes", "no conflicts", "the slot is free", "nothing else is booked then"
_NO_CLASH = re.compile(
    r"\b(?:nothing|no\s+other\s+\w+|no\s+events?)\s+(?:else\s+)?(?:\w+\s+){0,3}?(?:clash|conflict|overlap|collide)"
    r"|\bno\s+(?:\w+\s+)?(?:clash|conflict|overlap)s?\b"
    r"|\b(?:doesn't|does\s+not|won't|will\s+not|don't|do\s+not)\s+(?:\w+\s+)?(?:clash|conflict|overlap|collide)"
    # "nothing else is booked then"; a bare "nothing booked" beside "no cards shared" denies an action (issue 30)
    r"|\bnothing\s+(?:else\s+(?:is\s+|was\s+)?|is\s+|was\s+)(?:booked|scheduled|planned)"
    r"|\bnothing\s+(?:booked|scheduled|planned)\s+(?:then|at\s+that\s+time|that\s+(?:day|slot|time|evening|morning|afternoon))\b"
    r"|\bnothing\s+(?:else\s+)?(?:is\s+)?in\s+(?:the|your)\s+calendar"
    r"|\b(?:calendar|slot|time|you)\s+(?:is|are)\s+(?:completely\s+|entirely\s+)?(?:free|clear|open)\b",
    re.I)


def denied_clashes(text: str, created: Iterable[tuple[str, str]], events: Iterable[dict[str, Any]]) -> list[str]:
    """Sentences saying nothing clashes with an event the assistant made or moved, where an event
    the assistant was shown overlaps it (ISO start and end, compared as instants)."""
    from datetime import datetime

    def instant(value: Any) -> datetime | None:
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            return None
        return moment if moment.tzinfo is not None else None

    spans = [(instant(a), instant(b)) for a, b in created]
    spans = [(a, b) for a, b in spans if a and b]
    if not spans:
        return []
    overlapping = []
    for event in events:
        a, b = instant(event.get("start")), instant(event.get("end"))
        if a and b and event.get("status") != "cancelled" and any(a < y and x < b and (a, b) != (x, y) for x, y in spans):
            overlapping.append(event)
    if not overlapping:
        return []
    flat = plain(text)
    named = [m for m in _NAMED_CLASH.finditer(flat) if not negated_action(flat, m.start(), m.start())]
    return [sentence_around(text, m.start(), m.end())[:240] for m in _NO_CLASH.finditer(flat)
            if not (named and _QUALIFIED.search(m.group()))][:MAX_LISTED]


# "It falls inside the Forum block; nothing else is booked then": the clash is named, and
# "nothing else" / "no other" qualifies the denial to the rest of the calendar (issue 30).
_NAMED_CLASH = re.compile(
    r"\b(?:falls?|lands?|sits?|is|are)\s+(?:right\s+)?(?:inside|within|during|in\s+the\s+middle\s+of)\b"
    r"|\b(?:clash(?:es)?|conflicts?|overlaps?|collides?|coincides?)\s+with\b|\bdouble[- ]book\w*|\bsame\s+time\s+as\b",
    re.I)
_QUALIFIED = re.compile(r"\b(?:else|other)\b", re.I)


def claims_item(item_id: str, text: str, sources: Iterable[str], *, data_answers: bool | None,
                covered: Iterable[int] = (), clashes_denied: list[str] | None = None,
                id_sources: Iterable[str] = ()) -> Item | None:
    """The ``claims`` item of one message (None for an empty one).

    ``data_answers``: True when the key says the data answers the question (a question turn
    whose key has facts and no ``data_does_not_answer``), None when unknown (a task report).
    """
    if not plain(text).strip():
        return None
    evidence: dict[str, Any] = {}
    sources = list(sources)
    untraced = untraced_statements(text, sources, covered, id_sources)
    if untraced:
        evidence["untraced"] = untraced
    wrong = wrong_calculations(text)
    if wrong:
        evidence["calculations_that_do_not_hold"] = wrong
    if clashes_denied:
        evidence["denies_a_clash_the_records_show"] = clashes_denied
    # Values tied to the record their sentence names (issue 30): see checks/record_claims.py.
    evidence.update(record_evidence(text, sources, covered))
    unread = unread_parts(text)
    if unread:
        # Statements in words the readers cannot read (a paragraph not in English): what the rules
        # read in words (a total, a debt, a clash) is blind there, so no "right" is certain (issue 30).
        evidence["parts_not_read"] = [part[:160] for part in unread[:3]]
    if data_answers:
        phrase = says_no_data(text)
        if phrase is not None:
            evidence["says_the_data_is_silent"] = phrase
    return Item(id=item_id, kind="claims", text=CLAIMS_TEXT, allowed=("right", "wrong"), evidence=evidence)
