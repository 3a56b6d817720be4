"""Values tied to the record a sentence names (issue 30: offline, code decides only what it reads one way).

``claims`` traces a date to *any* source; a sentence about a record must agree with *that*
record. Read against the records the tools returned (``readers/records.py``):

- ``contradicts_its_record`` (certain, wrong): a date or time no source gives at all, in a
  sentence naming one record whose own values hold other dates (times) of that kind: "Visa 5530
  blocked on 2026-03-12" where the card reads 2026-03-10;
- ``per_unit_as_total`` (certain, wrong): a record's per-unit price stated as the total of
  several units: "72.00 EUR total for the 2 nights" where the price is 72 EUR per night;
- ``of_another_record`` (unsure): a date or time some tool gave, but only for records the
  sentence does not name nor relate to: "Sofia sent a reminder on 3 March" where 3 March is
  another booking's creation day and no message of Sofia's is of that day;
- ``another_record_tied`` (unsure): a record tied in words to another of the kind its own
  reference names: "b-0003 ... paid with the Visa 4821" where b-0003's card is card-amex-7710,
  and the message never names that one;
- ``closed_record_said_open`` (unsure): an amount said outstanding, owed or unpaid in a message
  naming a record whose status is cancelled or refunded, or where no source uses such a word
  and no record's status reads open (a declined charge does not say the payment is still owed).

The unsure ones go to the owner: the sentence may speak of something the rules cannot see.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any

from pytest_assistant_eval.suites.calibration.readers.dates import find_dates
from pytest_assistant_eval.suites.calibration.readers.negation import negated_action
from pytest_assistant_eval.suites.calibration.readers.numbers import find_quantities
from pytest_assistant_eval.suites.calibration.readers.readings import date_reads_one_way
from pytest_assistant_eval.suites.calibration.readers.records import (
    ID_RE, Record, moment_keys, named_records, spoken_digits, tool_records)
from pytest_assistant_eval.suites.calibration.readers.relative_dates import RELATIVE_RE
from pytest_assistant_eval.suites.calibration.readers.spelled import spelled_numbers
from pytest_assistant_eval.suites.calibration.readers.wording import sentence_around, split_sentences

__all__ = ["record_evidence"]

MAX_LISTED = 6
_CLOSED = {"cancelled", "canceled", "refunded", "closed", "void", "voided"}
_OPEN = {"pending", "unpaid", "outstanding", "due", "open", "overdue", "awaiting_payment"}
_OPEN_DEBT = re.compile(r"\b(?:outstanding|owed|owing|unpaid|still\s+(?:due|open|to\s+be\s+paid|pending))\b", re.I)
_NOT_BEFORE = re.compile(r"\b(?:not|no\s+longer|nothing|never|isn't|is\s+not|no)\b[^.;]{0,25}$", re.I)
_PAID_WITH = re.compile(r"\b(?:paid|pays|charged|billed|settled|put\s+on|booked\s+on)\b", re.I)
# Where a sentence turns to another subject: "(... its 2,000 EUR limit), and the room is free 20 March".
_SUBJECT_BREAK = re.compile(r";|,\s+(?:and|but|while|whereas|so)\s|\)\s*,?\s+and\s", re.I)
# A sentence that proposes or supposes: its times may be the assistant's own ("would be 09:00-10:00").
_MODAL = re.compile(r"\b(?:would|could|might|can|shall|should|if|want\s+me|let\s+me|I'll|I\s+will|I\s+can)\b", re.I)
# A date or time the sentence may have worked out ("two days later", "a week before check-in"),
# or written in a form that does not read one way ("03/04", "20.03.", "1500Z":
# readings.date_reads_one_way): never certain.
_DERIVED = re.compile(r"\b(?:days?|weeks?|months?|hours?|minutes?|nights?)\s+(?:before|after|later|earlier|ahead|"
                      r"from|prior)\b|\b(?:later|earlier|ago|deadline|latest)\b", re.I)
# Only supposed: "it would be 09:00", "if it starts at 10:00" (an intent, "I'll join at 19:30", still asserts the time).
_SUPPOSED = re.compile(r"\b(?:would|could|might|if|suppose|perhaps|maybe)\b", re.I)
_TOTAL = re.compile(r"\b(?:total|in\s+all|altogether|overall)\b", re.I)


def _free_keys(texts: list[str]) -> set[tuple[str, Any]]:
    """The moments of texts that are no tool record: the user's words, earlier answers, and
    tool outputs' values outside any record."""
    keys: set[tuple[str, Any]] = set()
    for text in texts:
        keys |= _free_keys_of(text)
    return keys


@functools.lru_cache(maxsize=2048)
def _free_keys_of(text: str) -> frozenset[tuple[str, Any]]:
    """One text's part of ``_free_keys``, read once per text (issue 32: a tool result recurs in
    every later turn's texts and in other cells)."""

    def strings(obj: Any) -> Iterable[str]:
        if isinstance(obj, dict):
            if isinstance(obj.get("id"), str) and ID_RE.fullmatch(obj["id"]):
                return
            for v in obj.values():
                yield from strings(v)
        elif isinstance(obj, list):
            for v in obj:
                yield from strings(v)
        elif isinstance(obj, str):
            yield obj

    keys: set[tuple[str, Any]] = set()
    pieces = [text]
    if text.lstrip().startswith(("{", "[")):
        try:
            pieces = list(strings(json.loads(text)))
        except ValueError:
            pass
    for piece in pieces:
        for d in find_dates(piece):
            keys |= moment_keys(d)
    return frozenset(keys)


def _related(named: list[Record], records: dict[str, Record]) -> list[Record]:
    """The named records, those they refer to and those that refer to them."""
    ids = {r.id for r in named}
    out = {r.id: r for r in named}
    for r in named:
        for other in (*r.refs.values(), *r.mentioned):
            if other in records:
                out[other] = records[other]
    for rec in records.values():
        if ids & (set(rec.refs.values()) | rec.mentioned):
            out[rec.id] = rec
    return list(out.values())


def _shifted(keys: set[tuple[str, Any]]) -> set[tuple[str, Any]]:
    """A zoned time's neighbours (a local time converted to UTC or back)."""
    return keys | {("clock", (k[1] + s) % 1440) for k in keys if k[0] == "clock" for s in (-120, -60, 60, 120)}


def _moments(text: str, records: dict[str, Record], free: set[tuple[str, Any]], covered: set[int],
             out: dict[str, list[dict[str, str]]]) -> None:
    anywhere = set(free)
    for rec in records.values():
        anywhere |= rec.keys
    for d in find_dates(text):
        if d.start in covered or RELATIVE_RE.fullmatch(d.text):
            continue
        keys = moment_keys(d)
        sentence = sentence_around(text, d.start, d.end)
        named = named_records(_scope(text, sentence, d.start), records)
        if not keys or not named:
            continue
        related = _related(named, records)
        allowed = set(free).union(*(r.keys for r in related))
        for part in ("day", "clock"):
            wanted = {k for k in keys if k[0] == part} if d.kind != "month" or part != "day" else set()
            if not wanted:
                continue
            near = _shifted(wanted) if part == "clock" and d.offset is not None else wanted
            if near & allowed or (part == "clock" and any(r.covers_clock(k[1]) for r in named for k in near)):
                continue
            entry = {"text": d.text, "sentence": sentence[:240], "records": ", ".join(r.id for r in named[:4])}
            if near & anywhere:
                if not _MODAL.search(sentence):
                    out["of_another_record"].append(entry)
            elif (len(named) == 1 and any(k[0] == part for k in named[0].keys) and not _SUPPOSED.search(sentence)
                  and not _DERIVED.search(sentence) and date_reads_one_way(d.text)
                  and not (part == "clock" and _shifted(wanted) & named[0].keys)):
                # A clock an hour or two off the record's may be the same instant in another zone.
                out["contradicts_its_record"].append(entry | {"its_values": _shown_values(part, named[0].keys)})
            break


def _scope(text: str, sentence: str, at: int) -> str:
    """The part of ``sentence`` about the subject the value at ``text[at]`` is said of."""
    offset = text.find(sentence, max(0, at - len(sentence)))
    if offset == -1 or not offset <= at < offset + len(sentence):
        return sentence
    local, left, right = at - offset, 0, len(sentence)
    for m in _SUBJECT_BREAK.finditer(sentence):
        if m.end() <= local:
            left = m.end()
        elif m.start() > local:
            right = m.start()
            break
    return sentence[left:right]


def _shown_values(part: str, keys: set[tuple[str, Any]]) -> str:
    values = sorted(k[1] for k in keys if k[0] == part)[:3]
    return ", ".join(f"{v // 60:02d}:{v % 60:02d}" if part == "clock" else str(v) for v in values)


def _count_of(sentence: str, unit: str) -> int | None:
    """N in "for the 2 nights" / "two nights"."""
    m = re.search(rf"\b(\d+)\s+(?:\w+\s+)?{unit}s?\b", sentence, re.I)
    if m:
        return int(m.group(1))
    for s in spelled_numbers(sentence):
        if re.match(rf"\s+(?:\w+\s+)?{unit}s?\b", sentence[s.end:], re.I) and s.value == int(s.value):
            return int(s.value)
    return None


def _per_unit(text: str, records: dict[str, Record], out: dict[str, list[dict[str, str]]]) -> None:
    prices = [(v, u, r) for r in records.values() for v, u in r.per_unit]
    if not prices:
        return
    for sentence in split_sentences(text):
        if not _TOTAL.search(sentence):
            continue
        for value, unit, rec in prices:
            n = _count_of(sentence, unit)
            if n is None or n < 2 or re.search(rf"(?:\bper|\ba|\beach|/)\s*{unit}\b", sentence, re.I):
                continue
            values = [q.value for q in find_quantities(sentence)]
            if any(abs(v - n * value) < 0.005 for v in values):
                continue  # the right total is there too: "4 x 72.00 = 288.00 in total for 4 nights"
            if any(abs(v - value) < 0.005 for v in values):
                out["per_unit_as_total"].append({"text": f"{value:g} per {unit} as the total of {n} {unit}s",
                                                 "sentence": sentence[:240], "records": rec.id})


def _ties(text: str, records: dict[str, Record], out: dict[str, list[dict[str, str]]]) -> None:
    sentences = split_sentences(spoken_digits(text))
    in_message = {r.id for r in named_records(text, records)}
    for i, sentence in enumerate(sentences):
        here = named_records(sentence, records)
        window = " ".join(sentences[i:i + 2])
        if not _PAID_WITH.search(window):
            continue
        tied = named_records(window, records)
        for a in here:
            for field_name, c in a.refs.items():
                kind = c.split("-", 1)[0].casefold()
                for b in tied:
                    if b.kind == kind and b.id != c and c not in in_message and b.id != a.id:
                        out["another_record_tied"].append({
                            "text": f"{a.id} with {b.id}", "sentence": window[:240],
                            "records": f"{a.id}'s {field_name} is {c}"})


def _closed(text: str, records: dict[str, Record], sources: list[str], out: dict[str, list[dict[str, str]]]) -> None:
    closed = [r for r in named_records(text, records) if r.status in _CLOSED]
    backed = any(r.status in _OPEN for r in records.values())
    for m in _OPEN_DEBT.finditer(text):
        if _NOT_BEFORE.search(text[max(0, m.start() - 40):m.start()]) or negated_action(text, m.start(), m.end()):
            continue
        if re.search(r"\bbalance\b", sentence_around(text, m.start(), m.end()), re.I):
            continue  # "the outstanding balance on the Visa": a card's balance, which the records give
        word = m.group().split()[-1].casefold()
        if not closed and (backed or any(word in s.casefold() for s in sources)):
            continue
        why = ", ".join(f"{r.id} is {r.status}" for r in closed[:3]) or "no record's status reads open"
        out["closed_record_said_open"].append({
            "text": m.group(), "sentence": sentence_around(text, m.start(), m.end())[:240], "records": why})


def record_evidence(text: str, sources: Iterable[str], covered: Iterable[int] = ()) -> dict[str, list[dict[str, str]]]:
    """The findings above for one message, by name (only the non-empty ones)."""
    texts = list(sources)
    records = tool_records(texts)
    if not records:
        return {}
    out: dict[str, list[dict[str, str]]] = {k: [] for k in (
        "contradicts_its_record", "per_unit_as_total", "of_another_record", "another_record_tied",
        "closed_record_said_open")}
    _moments(text, records, _free_keys(texts), set(covered), out)
    _per_unit(text, records, out)
    _ties(text, records, out)
    _closed(text, records, texts, out)
    return {k: v[:MAX_LISTED] for k, v in out.items() if v}


def _stem(verb: str) -> str:
    word = verb.casefold()
    for suffix in ("led", "ed", "ing", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def reports_shown_state(text: str, at: int, verb: str, tool_texts: Iterable[str]) -> bool:
    """Whether the claim verb at ``text[at]`` reports a state the tools had shown rather than an
    action: its line names a record whose status already reads that verb ("old booking b-0002:
    cancelled 2026-03-05", where the tools returned b-0002 with status cancelled)."""
    left = text.rfind("\n", 0, at) + 1
    right = text.find("\n", at)
    line = text[left: right if right != -1 else len(text)]
    stem = _stem(verb)
    records = tool_records(tool_texts)
    return any(r.status and r.status.startswith(stem) for r in named_records(line, records))
