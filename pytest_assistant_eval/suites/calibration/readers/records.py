"""The records the tools returned, as entities a sentence can name (issue 30, offline certainty).

A date traced to *some* tool output is not yet traced to the record the sentence is about:
"Sofia sent a reminder on 3 March" is backed by no message of Sofia's, even when another
booking was made on 3 March. This module reads every JSON tool output into records (a dict
with a string ``id``), merged by id across outputs, each with what names it in prose (its id,
its last four digits, its title or its person's name), the other records it refers to, the
moments its values state and its per-unit prices; and finds the records a sentence names.
It reads; the rules that use it are in ``checks/record_claims.py``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.suites.calibration.readers.dates import DateMention, find_dates

__all__ = ["Record", "moment_keys", "tool_records", "named_records", "spoken_digits"]

# An id as tools write them (as in checks/claims.py): "L-103", "card-visa-4821", "b-0003".
ID_RE = re.compile(r"(?<![\w-])[A-Za-z]{1,12}(?:-[A-Za-z]{1,12})*-\d{2,}(?![\w-])")
# Fields whose value is how prose names the record (a phrase), and those that hold a person's name.
_NAME_FIELDS = ("title", "listing_title", "name", "from_name", "holder", "merchant", "seller_name", "subject")
_PERSON_FIELDS = ("from_name", "name", "holder", "seller_name")
# Fields that bound a span (a stay, an event): the days between them are the record's too.
_SPAN_FIELD = re.compile(r"start|end|from|until|check_?in|check_?out", re.I)
_PER_BASIS = re.compile(r"^per[_ ](?P<unit>[a-z]+)$", re.I)


@dataclass
class Record:
    id: str
    kind: str  # the id's first word: "card", "b", "L", "m"
    names: set[str] = field(default_factory=set)  # casefolded phrases that name it
    refs: dict[str, str] = field(default_factory=dict)  # field -> another record's id
    mentioned: set[str] = field(default_factory=set)  # ids its texts mention
    keys: set[tuple[str, Any]] = field(default_factory=set)  # its moments (see ``moment_keys``)
    status: str | None = None
    per_unit: list[tuple[float, str]] = field(default_factory=list)  # (amount, "night")
    clock_span: tuple[int, int] | None = None  # the day's minutes its span covers (an event 09:00-18:00)

    def covers_clock(self, minutes: int) -> bool:
        """Whether a clock time falls inside the record's span ("17:30 is during the forum")."""
        return self.clock_span is not None and self.clock_span[0] <= minutes <= self.clock_span[1]


def moment_keys(d: DateMention) -> set[tuple[str, Any]]:
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


def _kind(rid: str) -> str:
    return rid.split("-", 1)[0].casefold()


def _span_days(values: list[str]) -> set[tuple[str, Any]]:
    """The days between a record's span bounds of one month (a stay's nights)."""
    days = sorted(k[1] for v in values for d in find_dates(v) for k in moment_keys(d) if k[0] == "day")
    out: set[tuple[str, Any]] = set()
    for a, b in zip(days, days[1:]):
        if a[:2] == b[:2] and 0 < int(b[3:]) - int(a[3:]) <= 31:
            out |= {("day", f"{a[:2]}-{n:02d}") for n in range(int(a[3:]), int(b[3:]) + 1)}
    return out


def _read(obj: dict[str, Any], records: dict[str, Record]) -> None:
    rid = obj["id"]
    rec = records.setdefault(rid, Record(rid, _kind(rid)))
    rec.names.add(rid.casefold())
    spans: list[str] = []
    for name, value in obj.items():
        if isinstance(value, dict) and isinstance(value.get("amount"), (int, float)):
            basis = obj.get(f"{name}_basis")
            m = _PER_BASIS.match(basis) if isinstance(basis, str) else None
            if m:
                rec.per_unit.append((float(value["amount"]), m.group("unit").casefold()))
        if isinstance(value, list):  # attendees, recipients: the records it involves
            rec.mentioned |= {m.group() for v in value if isinstance(v, str) for m in ID_RE.finditer(v) if m.group() != rid}
        if not isinstance(value, str) or name == "id":
            continue
        if name == "status":
            rec.status = value.casefold()
        if name == "last4":
            rec.names.add(value)
        if name in _NAME_FIELDS and len(value) <= 60:
            rec.names.add(value.casefold())
        if name in _PERSON_FIELDS and value[:1].isupper():
            first = value.split()[0]
            if len(first) >= 3:
                rec.names.add(first.casefold())
        if ID_RE.fullmatch(value):
            rec.refs[name] = value
        rec.mentioned |= {m.group() for m in ID_RE.finditer(value) if m.group() != rid}
        for d in find_dates(value):
            rec.keys |= moment_keys(d)
        if _SPAN_FIELD.search(name):
            spans.append(value)
    rec.keys |= _span_days(spans)
    clocks = [k[1] for v in spans for d in find_dates(v) for k in moment_keys(d) if k[0] == "clock"]
    if len(clocks) >= 2:
        rec.clock_span = (min(clocks), max(clocks))


def _walk(obj: Any, records: dict[str, Record]) -> None:
    if isinstance(obj, dict):
        if isinstance(obj.get("id"), str) and ID_RE.fullmatch(obj["id"]):
            _read(obj, records)
        for value in obj.values():
            _walk(value, records)
    elif isinstance(obj, list):
        for value in obj:
            _walk(value, records)


def tool_records(texts: Iterable[str]) -> dict[str, Record]:
    """Every record of the JSON texts among ``texts`` (others are skipped), merged by id.

    One cell's checks ask for the same texts' records once per message and per claim verb, and
    reading them (dates in every field) is the costly part: the answer is kept for the last few
    sets of texts. It is shared, so callers only read it (nothing outside this module writes a
    ``Record``)."""
    return _tool_records(tuple(texts))


@functools.lru_cache(maxsize=32)
def _tool_records(texts: tuple[str, ...]) -> dict[str, Record]:
    records: dict[str, Record] = {}
    for text in texts:
        for part in _text_records(text):
            _merge(records, part)
    # A record only referred to ("card": "card-visa-4821") is named by its id, or by its number
    # when the id has a word between ("4821"), though no tool returned it whole.
    for rec in list(records.values()):
        for other in rec.refs.values():
            if other not in records:
                parts = other.split("-")
                names = {other.casefold()} | ({parts[-1]} if len(parts) >= 3 and len(parts[-1]) >= 4 else set())
                records[other] = Record(other, _kind(other), names=names)
    return records


@functools.lru_cache(maxsize=2048)
def _text_records(text: str) -> tuple[Record, ...]:
    """The records of one JSON text, merged by id within it, in the order they first appear.

    Read once per text (issue 32): a tool result recurs in every later turn's set of texts and
    in other cells, and a set's records are these merged in the set's order (``_merge``). Kept
    here, so never changed: ``_merge`` copies them."""
    if not text.lstrip().startswith(("{", "[")):
        return ()
    try:
        obj = json.loads(text)
    except ValueError:
        return ()
    records: dict[str, Record] = {}
    _walk(obj, records)
    return tuple(records.values())


def _merge(records: dict[str, Record], part: Record) -> None:
    """``part`` (one text's reading of a record) into ``records``, as reading that text after the
    earlier ones would have: sets joined, fields and spans the later text's, prices appended."""
    rec = records.get(part.id)
    if rec is None:
        records[part.id] = Record(part.id, part.kind, set(part.names), dict(part.refs), set(part.mentioned),
                                  set(part.keys), part.status, list(part.per_unit), part.clock_span)
        return
    rec.names |= part.names
    rec.refs.update(part.refs)
    rec.mentioned |= part.mentioned
    rec.keys |= part.keys
    if part.status is not None:
        rec.status = part.status
    rec.per_unit.extend(part.per_unit)
    if part.clock_span is not None:
        rec.clock_span = part.clock_span


_DIGIT_WORDS = {w: str(i) for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven",
                                                 "eight", "nine"))} | {"oh": "0"}
_DIGIT_RUN = re.compile(r"\b(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)(?:[\s-]+(?:zero|oh|one|two|three|"
                        r"four|five|six|seven|eight|nine)\b){2,}", re.I)


def spoken_digits(text: str) -> str:
    """Digits read out one by one ("ending four eight two one") written as digits ("4821")."""
    return _DIGIT_RUN.sub(lambda m: "".join(_DIGIT_WORDS[w.casefold()] for w in re.findall(r"[A-Za-z]+", m.group())),
                          text)


def named_records(sentence: str, records: dict[str, Record]) -> list[Record]:
    """The records ``sentence`` names: by id, last four digits, title or person's name, as whole words."""
    flat = spoken_digits(sentence).casefold()
    out = []
    for rec in records.values():
        for name in rec.names:
            at = flat.find(name)
            while at != -1:
                end = at + len(name)
                if (at == 0 or not flat[at - 1].isalnum()) and (end == len(flat) or not flat[end].isalnum()):
                    out.append(rec)
                    break
                at = flat.find(name, at + 1)
            else:
                continue
            break
    return out
