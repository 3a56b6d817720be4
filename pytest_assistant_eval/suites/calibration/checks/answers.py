"""Answer checks for question turns (S6.1, S6.2): facts, provenance of numbers,
forbidden claims, "the data does not answer", the failed run and escalation.

Input is one turn of a cell record (its final answer, the tool results the assistant
saw up to it, the tools' descriptions, the user's texts, the answers of earlier turns)
and the key entry; output is the list of items, some settled right by code, the rest
waiting for a judge, plus the flags the outcome needs.

A check only ever settles an item **right** (S6.1): what it cannot prove right goes to a
judge with the evidence it found (the values of the fact's kind the answer states, the
stance of a forbidden claim's sentence). It reads natural wording through
``quantities`` (numbers, units, dates) and ``wording`` (dates as key values, "no data"
phrasings, negation); it never reads the key's exact phrasing only.

Size: the fact checks by kind (moment, quantity, text, yes/no) sit beside the provenance
readers they all use; the provenance of numbers (`sources_of`, `number_items`, `_implied`)
would move to a module of its own, the fact checks to another.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from pytest_assistant_eval.suites.calibration.cases.matchers import normalise_text
from pytest_assistant_eval.suites.calibration.cases.model import Fact, ForbiddenClaim, KeyEntry
from pytest_assistant_eval.suites.calibration.checks.claims import claims_item
from pytest_assistant_eval.judging.items import Item, settle
from pytest_assistant_eval.suites.calibration.readers.language import reads_as_english, unread_parts
from pytest_assistant_eval.suites.calibration.readers.readings import Reading, decide, readings_of
from pytest_assistant_eval.suites.calibration.readers.calculations import find_calculations
from pytest_assistant_eval.suites.calibration.readers.compare import find_definitions, is_constant, same_quantity
from pytest_assistant_eval.suites.calibration.readers.dates import DateMention, find_dates
from pytest_assistant_eval.suites.calibration.readers.layout import is_layout, layout_doubt, layout_spans, major_value
from pytest_assistant_eval.suites.calibration.readers.exceptions import exception_after
from pytest_assistant_eval.suites.calibration.readers.numbers import Quantity, find_quantities, split_unit
from pytest_assistant_eval.suites.calibration.checks.unsourced import mark_contradictions
from pytest_assistant_eval.suites.calibration.readers.sources import is_sourced, numbers_in_json, prepared
from pytest_assistant_eval.suites.calibration.readers.units import UNITS
from pytest_assistant_eval.suites.calibration.readers.relative_dates import RELATIVE_RE
from pytest_assistant_eval.suites.calibration.world.names import Names
from pytest_assistant_eval.suites.calibration.readers.wording import (
    Moment,
    claim_stance,
    denial_in_clause,
    mentions_subject,
    sentence_around,
    subject_anchors,
    moment_of_value,
    read_moment,
    says_failed,
    says_no_data,
)

__all__ = ["AnswerFlags", "check_answer", "answer_context", "sources_of", "tool_description_texts", "has_escalation",
           "says_no_data"]

Source = tuple[float, str | None]
# A token that mixes letters and digits: an id or a code ("card-amex-7710", "pay-0105", "BK2041").
_CODE_RE = re.compile(r"[A-Za-z][\w-]*\d[\w-]*|\d[\w-]*[A-Za-z][\w-]*")


@dataclass
class AnswerFlags:
    no_answer: bool = False
    escalated: bool = False
    form_missing: list[str] = field(default_factory=list)
    oversized: bool = False  # far beyond the output limit: failed as a length stop, no items (issue 23)

    def to_dict(self) -> dict[str, Any]:
        return {"no_answer": self.no_answer, "escalated": self.escalated, "form_missing": self.form_missing}


def normalise_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def has_escalation(answer: str, sentence: str) -> bool:
    return bool(sentence) and normalise_space(sentence).lower() in normalise_space(answer).lower()


# ---------------------------------------------------------------------------
# What the assistant saw: the sources of numbers
# ---------------------------------------------------------------------------


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


def sources_of(tool_texts: Iterable[str], user_texts: Iterable[str], other_texts: Iterable[str] = ()) -> list[Source]:
    """Every number the assistant saw: in tool results (numbers with unit hints from their
    keys, and numbers written inside strings: last four digits, phone numbers, details), in
    the user's texts and in ``other_texts`` (tool descriptions, earlier answers)."""
    sources: list[Source] = []
    for text in tool_texts:
        sources.extend(_sources_of_tool_text(text))
    for text in [*user_texts, *other_texts]:
        sources.extend((q.value, q.unit) for q in find_quantities(text))
    return sources


@lru_cache(maxsize=8192)
def _sources_of_tool_text(text: str) -> tuple[Source, ...]:
    """The numbers of one tool result, read once (a result recurs in every later turn)."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, ValueError):
        return tuple((q.value, q.unit) for q in find_quantities(text))
    sources: list[Source] = list(numbers_in_json(data))
    for string in _strings(data):
        if string.strip().lstrip("+-").replace(".", "", 1).isdigit():
            sources.append((float(string), None))
        else:
            sources.extend((q.value, q.unit) for q in find_quantities(string))
            # Digits inside ids and codes were seen too ("card-amex-7710" shows 7710); only
            # there: a unitless copy of "1.5 GB" would make "1.5 MB" look sourced.
            for token in _CODE_RE.finditer(string):
                sources.extend((float(m.group()), None) for m in re.finditer(r"\d+", token.group()))
    return tuple(sources)


@lru_cache(maxsize=64)
def _descriptions(names: tuple[str, ...] | None) -> tuple[str, ...]:
    from pytest_assistant_eval.suites.calibration.world.tools import tool_specs

    texts: list[str] = []
    for spec in tool_specs():
        if names is None or spec.name in names:
            texts.append(spec.description)
            texts.extend(_strings_named(spec.parameters, "description"))
    return tuple(texts)


def _strings_named(obj: Any, name: str) -> list[str]:
    if isinstance(obj, dict):
        own = [v for k, v in obj.items() if k == name and isinstance(v, str)]
        return own + [s for v in obj.values() for s in _strings_named(v, name)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings_named(v, name)]
    return []


@lru_cache(maxsize=64)
def _sources_of_texts(texts: tuple[str, ...]) -> list[Source]:
    """The numbers of fixed texts (the tools' descriptions), read once per set."""
    return [(q.value, q.unit) for text in texts for q in find_quantities(text)]


def tool_description_texts(names: Iterable[str] | None = None) -> tuple[str, ...]:
    """The descriptions (tool and parameters) of the world's tools named, all when None.

    The assistant reads them with every request, so a number there ("1 MB = 10^6 bytes")
    is a number it was given. A record lists its level's tools by name (``record["tools"]``).
    """
    return _descriptions(tuple(sorted(names)) if names is not None else None)


# ---------------------------------------------------------------------------
# Facts
# ---------------------------------------------------------------------------


def _fact_item(fact: Fact) -> Item:
    unit = f" {fact.unit}" if fact.unit else ""
    return Item(id=f"fact:{fact.id}", kind="fact", text=f"{fact.statement}: {fact.value}{unit}",
                allowed=("right", "missing", "wrong"), critical=fact.critical,
                evidence={"value": fact.value, "unit": fact.unit})


def _fact_quantity(fact: Fact) -> tuple[float, str | None, str | None] | None:
    """(value, canonical unit, denominator) of a number fact; None for a unit the parser does not know."""
    if isinstance(fact.value, bool) or not isinstance(fact.value, (int, float)):
        return None
    if not fact.unit:
        return float(fact.value), None, None
    unit, per = split_unit(fact.unit)
    if unit is None:
        return None  # compared as text, else judged
    return float(fact.value), unit, per


def fact_item(fact: Fact, answer: str, quantities: list[Quantity], flags: AnswerFlags,
              mentions: list[DateMention] | None = None, names: Names | None = None) -> Item:
    """One fact of the key: right when the answer states it, else for the judge with the
    values of its kind the answer states (a wrong one makes the rules judge say wrong)."""
    item = _fact_item(fact)
    if normalise_text(fact.statement.rstrip(".")) in normalise_text(answer):
        return settle(item, "right")  # the key's own statement, word for word
    moment = moment_of_value(fact.value, fact.unit)
    if moment is not None:
        return _precise(_moment_fact(item, fact, moment, answer, mentions, flags), fact, answer)
    expected = _fact_quantity(fact)
    if expected is not None:
        return _precise(_quantity_fact(item, fact, expected, quantities, flags, answer), fact, answer)
    return _text_fact(item, fact, answer, names)


def _precise(item: Item, fact: Fact, answer: str) -> Item:
    """Keep a right that code settled only when it is certain (issue 21): the value's own clause
    does not deny it ("the 10:00 slot has nothing booked against it"). Otherwise the item goes
    back to the judge with the evidence: a false right is the worst error a grader makes, an
    extra judged item costs little."""
    if item.pending or "matched_at" not in item.evidence:
        return item
    start = item.evidence["matched_at"]
    end = item.evidence.get("matched_end") or start + max(len(str(item.evidence.get("stated_as") or "")), 1)
    if _gate(item, fact, answer, start, end, need_subject=False):
        return item
    item.verdict = None
    item.settled_by = None
    item.evidence.pop("matched_at", None)
    return item


def _moment_fact(item: Item, fact: Fact, moment: Moment, answer: str, mentions: list[DateMention] | None,
                 flags: AnswerFlags) -> Item:
    found = mentions if mentions is not None else find_dates(answer)
    reading = read_moment(answer, moment, found)
    if reading.matched is not None:
        item.evidence["stated_as"] = reading.matched.text
        item.evidence["matched_at"] = reading.matched.start
        if reading.form_missing:
            flags.form_missing.append(f"{fact.id}: {reading.form_missing}")
        return settle(item, "right")
    others = set(reading.others)
    item.evidence["values_of_the_kind"] = reading.others
    item.evidence["values_at"] = [d.start for d in found if d.text in others]
    return item


_FUNCTION_WORDS = frozenset("""a an and as at be by for from in into is it its of on or so the then to was were which
with while than that this these those are also after before each every per all both plus minus total""".split())
_NEXT_WORD = re.compile(r"\s*([^\W\d_][^\W\d_'’-]*)")


def unit_word_after(answer: str, q: Quantity) -> str | None:
    """The word right after a number the reader gave no unit ("68 square feet" -> "square"),
    unless it is a function word: such a number is not unit-less, its unit is unknown."""
    m = _NEXT_WORD.match(answer, q.end)
    if m is None or m.group(1).lower() in _FUNCTION_WORDS:
        return None
    return m.group(1)


def _quantity_fact(item: Item, fact: Fact, expected: tuple[float, str | None, str | None],
                   quantities: list[Quantity], flags: AnswerFlags, answer: str = "") -> Item:
    value, unit, per = expected
    if unit is None:
        for q in quantities:
            if q.unit is None and same_quantity(q, (value, None)) and _gate(item, fact, answer, q.start, q.end,
                                                                             need_subject=True):
                for k in ("stated_in", "not_settled_because", "denied_in_clause"):
                    item.evidence.pop(k, None)
                item.evidence["matched_at"] = q.start
                item.evidence["matched_end"] = q.end
                return settle(item, "right")
        return item
    asked = [q for q in quantities if q.unit == unit and per in (None, q.per)]
    # "uses 9.8 MWh a year": the key's own statement says what the value is per (issue 30).
    own_per = statement_per(fact.statement, value, unit) if per is None else None
    for q in quantities:
        if q.unit is not None and same_quantity(q, (value, unit)) and per is None and q.per is not None \
                and q.per != own_per:
            # A per-unit value for a total ("288.00 EUR a night" for a four-night total): a mismatch.
            item.evidence.setdefault("per_mismatch", []).append(q.text)
            item.evidence.setdefault("values_at", []).append(q.start)
            item.evidence.setdefault("values_of_the_kind", []).append(q.text)
    for q in quantities:
        if q.unit is not None and same_quantity(q, (value, unit)) and (per == q.per or (own_per and q.per == own_per)):
            if q.unit != unit and asked and not any(same_quantity(a, (value, unit)) for a in asked):
                # The right amount only as the source states it ("1,500 MB"), and another in the
                # fact's own unit ("so 15 GB"): the conclusion is the answer, and it is wrong.
                item.evidence["values_of_the_kind"] = [a.text for a in asked]
                item.evidence["values_at"] = [a.start for a in asked]
                item.evidence["source_form_only"] = q.text
                return item
            item.evidence["matched_at"] = q.start
            item.evidence["matched_end"] = q.end
            return settle(item, "right")
    for q in quantities:
        if q.unit is not None and per is not None and q.per is None and same_quantity(q, (value, unit)):
            # A total for a per-unit value ("72 EUR" for 72 EUR a night): the judge reads which it is.
            item.evidence["per_missing"] = q.text
            item.evidence["stated_as"] = q.text
            item.evidence["value_at"] = q.start
            return item
        if q.unit is None and same_quantity(q, (value, unit), allow_unitless=True):
            wrong_prefix = _wrong_prefix(quantities, value, unit)
            if wrong_prefix:
                # "9.8 kWh" for 9.8 MWh: a headline with the wrong prefix is not rescued by the
                # right bare number elsewhere (a shown division's result) (issue 30).
                item.evidence["values_of_the_kind"] = wrong_prefix
                item.evidence["values_at"] = [a.start for a in quantities if a.text in wrong_prefix]
                return item
            if q.unit_unknown:
                # A unit word the reader could not place: never "no unit" (issue 21).
                item.evidence["unknown_unit"] = q.text
                item.evidence["stated_as"] = q.text
                item.evidence["value_at"] = q.start
                return item
            word = unit_word_after(answer, q)
            if word is not None:
                # "68 square feet": a unit the reader does not know is not "no unit".
                item.evidence["unknown_unit"] = f"{q.text} {word}"
                item.evidence["stated_as"] = q.text
                item.evidence["value_at"] = q.start
                return item
            # A bare number names many things ("Rua de Miguel Bombarda 45" for a 45-minute talk):
            # it states the fact only in a sentence about the fact's subject.
            if not _gate(item, fact, answer, q.start, q.end, need_subject=True):
                continue
            for k in ("stated_in", "not_settled_because", "denied_in_clause"):
                item.evidence.pop(k, None)
            flags.form_missing.append(f"{fact.id}: the value {q.text} has no unit")
            item.evidence["matched_at"] = q.start
            item.evidence["matched_end"] = q.end
            return settle(item, "right")
    dimension = UNITS[unit][0]
    same_kind = [q for q in quantities if q.unit is not None and q.dimension == dimension
                 and (per is None or q.per == per)]
    unknown = [q.text for q in quantities if q.unit_unknown]
    if unknown:
        item.evidence["units_not_known"] = unknown  # "68 kWp": a unit, but none the reader knows
    item.evidence["numbers_with_the_unit"] = [q.text for q in same_kind]
    item.evidence["values_of_the_kind"] = [q.text for q in same_kind] + [
        t for t in item.evidence.get("per_mismatch", []) if t not in [q.text for q in same_kind]]
    item.evidence["values_at"] = [q.start for q in same_kind] + [
        q.start for q in quantities if q.text in item.evidence.get("per_mismatch", []) and q not in same_kind]
    return item


def statement_per(statement: str, value: float, unit: str) -> str | None:
    """What the key's statement says its value is per ("9.8 MWh a year" -> "year"), else None."""
    return next((q.per for q in find_quantities(statement)
                 if q.per is not None and q.unit is not None and same_quantity(q, (value, unit))), None)


def _wrong_prefix(quantities: list[Quantity], value: float, unit: str) -> list[str]:
    """The fact's number written with another unit of its dimension ("9.8 kWh" for 9.8 MWh)."""
    dimension = UNITS[unit][0]
    return [q.text for q in quantities if q.unit is not None and q.unit != unit and q.dimension == dimension
            and abs(q.value - value) <= 1e-9 * max(1.0, abs(value)) and not same_quantity(q, (value, unit))]


def _text_fact(item: Item, fact: Fact, answer: str, names: Names | None = None) -> Item:
    """A name, an id or a word: right when one place that states it is certain (see ``_gate``)."""
    from pytest_assistant_eval.suites.calibration.world.names import fold, fold_keeping_offsets

    value = fact.value
    if isinstance(value, bool):
        return _yes_no_fact(item, fact, answer)
    spans: list[tuple[int, int]] = []
    if names is not None and names.kind_of(value):
        spans += [(m.start, m.end) for m in names.mentions(answer) if m.id == value]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = fold(str(value) + (f" {fact.unit}" if fact.unit and not isinstance(value, str) else "")).strip()
    folded = fold_keeping_offsets(answer)
    at = folded.find(text) if text else -1
    while at != -1:
        spans.append((at, at + len(text)))
        at = folded.find(text, at + 1)
    # A record's name or id, or a single word, also names other things ("Helena Sousa" as the
    # recipient of another message, "failed" of another run): its sentence must speak of the
    # fact's subject. A longer phrase ("unusual login", "fast wifi") is specific by itself.
    record = bool(spans) or (names is not None and any(
        fold(m.form) == fold(str(value)) for m in names.mentions(str(value))))
    need_subject = record or len(str(value).split()) == 1
    for start, end in sorted(spans):
        if _gate(item, fact, answer, start, end, need_subject=need_subject):
            item.evidence["matched_at"] = start
            return settle(item, "right")
    return item


def _yes_no_fact(item: Item, fact: Fact, answer: str) -> Item:
    """A yes/no fact is never settled by code (a value alone says nothing); the sentences that
    speak of its subject go to the judge as evidence ("contact inactive, mailbox closed")."""
    anchors = subject_anchors(fact.statement)
    from pytest_assistant_eval.suites.calibration.readers.wording import split_sentences

    said = [s for s in split_sentences(answer) if mentions_subject(s, anchors)]
    if said:
        item.evidence["sentences_on_the_subject"] = [s[:240] for s in said[:4]]
        item.evidence["subject_words"] = sorted(anchors)
    return item


def _gate(item: Item, fact: Fact, answer: str, start: int, end: int, *, need_subject: bool) -> bool:
    """Whether the value at ``answer[start:end]`` states the fact with certainty: its own clause
    does not deny it, and (for names and words, which also name other things) its sentence
    speaks of the fact's subject. When not, the reason and the sentence stay as evidence."""
    denial = denial_in_clause(answer, start, end, after_too=need_subject)
    sentence = sentence_around(answer, start, end)
    if denial is not None:
        item.evidence["denied_in_clause"] = denial[:240]
        reason = "a negation in the clause that states the value"
    elif need_subject and not mentions_subject(sentence, subject_anchors(fact.statement, fact.value)):
        reason = "the sentence that names the value does not speak of the fact's subject"
    else:
        return True
    item.evidence["stated_in"] = sentence[:240]
    item.evidence["not_settled_because"] = reason
    return False


# ---------------------------------------------------------------------------
# Numbers without a source
# ---------------------------------------------------------------------------


def number_items(answer: str, quantities: list[Quantity], sources: list[Source], *, escalation_sentence: str,
                 key_values: set[int], seen_moments: set[tuple[str, Any]] = frozenset()) -> list[Item]:  # type: ignore[assignment]
    """An item for every number of the answer that nothing gave: no tool result, tool
    description, user text or earlier answer; no constant, unit definition or shown
    calculation; not the key's value the fact check matched; in no reading it admits
    (``readers/readings.py``: "2.500" is 2500 too, "2214Z" is 22:14, "23 mars" is 23 March).
    A number that reads several ways, none of them sourced, or that the readers cannot read with
    confidence, is marked ``reads_two_ways`` (unsure for the rules): only a number that reads one
    way is invented for certain (issue 30)."""
    escalation_numbers = {q.text for q in find_quantities(escalation_sentence)}
    sources = prepared(sources)  # read once: every number below is checked against them, some twice
    calculations = [c for c in find_calculations(answer) if c.holds]
    calc_spans = [(c.start, c.end) for c in calculations]
    calc_results: list[Source] = [(c.result.value, c.result.unit) for c in calculations]
    definitions = {q.start for pair in find_definitions(answer, quantities) for q in pair}
    operands = [q for q in quantities if is_sourced(q, sources) or q.start in key_values][:MAX_OPERANDS]
    mentions = find_dates(answer)
    # Days between two dates the answer states; a relative word ("today") is no stated date.
    stated = [d for d in mentions if not RELATIVE_RE.fullmatch(d.text)]
    spans_of_days = _days_between(stated) + _minutes_between(stated)
    english = reads_as_english(answer)
    seen_years = {int(str(v)[:4]) for k, v in seen_moments if k == "month" and str(v)[:4].isdigit()}
    items: list[Item] = []
    for q in quantities:
        if q.start in key_values or q.start in definitions or q.text in escalation_numbers:
            continue
        if is_constant(q) or is_sourced(q, sources):
            continue
        if any(start <= q.start and q.end <= end for start, end in calc_spans):
            continue
        if is_sourced(q, calc_results):
            continue  # the result of a calculation the answer shows
        if _implied(q, operands) or is_sourced(q, spans_of_days):
            continue  # 1,500 − 1,457 left unwritten; 4 nights from "1 April to 5 April"
        major = major_value(answer, q)
        if major is not None and is_sourced(replace(q, value=major, decimals=2), sources):
            continue  # "amount_cents: 28800" is the 288.00 EUR a tool gave (readers/layout.py)
        readings = readings_of(answer, q, english=english)

        def sourced(r: Reading, q: Quantity = q) -> bool:
            if r.moment is not None:
                kind, value = r.moment
                if kind == "year":
                    return value in seen_years
                return (kind, value) in seen_moments or (kind == "clock" and ("instant", value) in seen_moments)
            stated_q = replace(q, value=float(r.value or 0.0), unit=r.unit, decimals=r.decimals)
            return is_sourced(stated_q, sources) or is_sourced(stated_q, calc_results)

        if decide(readings, sourced) == "sourced":
            continue  # sourced in a reading it admits: no invented number
        evidence: dict[str, Any] = {"number": q.text, "context": _context(answer, q.start, q.end)}
        layout = layout_doubt(answer, q)  # "4.2 Rows ..." outside a numbering scheme (readers/layout.py)
        if not readings.one_way or layout:
            evidence["reads_two_ways"] = readings.others() + ([layout] if layout else [])
            if readings.doubt:
                evidence["not_read_with_confidence"] = readings.doubt
        items.append(Item(id=f"number:{q.start}", kind="number", text=f"the number {q.text!r} has no tool source",
                          allowed=("right", "wrong"), evidence=evidence))
    return items


#: How many of an answer's sourced numbers are tried as operands of an unwritten calculation
#: (pairs of them are tried, so the work stays bounded on long answers).
MAX_OPERANDS = 40


def _implied(q: Quantity, operands: list[Quantity]) -> bool:
    """Whether ``q`` is one step of arithmetic on two sourced numbers the answer states:
    "limit 1,500.00 EUR ... 1,457.00 EUR spent ... leaves 43.00 EUR". Sums and differences
    need one dimension; a percentage is never implied (it is what an invented comparison
    looks like)."""
    if q.unit == "%":
        return False
    tolerance = 0.5 * 10.0 ** (-max(q.decimals, 0)) + 1e-9
    for i, a in enumerate(operands):
        for b in operands[i + 1:]:
            if a.start == q.start or b.start == q.start:
                continue
            same = {a.dimension, b.dimension, q.dimension} <= {None, q.dimension}
            candidates = [a.value * b.value]
            if b.value:
                candidates.append(a.value / b.value)
            if a.value:
                candidates.append(b.value / a.value)
            if same:
                candidates += [a.value + b.value, a.value - b.value, b.value - a.value]
            if any(abs(abs(c) - abs(q.value)) <= tolerance for c in candidates):
                return True
    return False


def _days_between(mentions: list[DateMention]) -> list[Source]:
    """The number of days (nights) between two dates an answer states: a stay "1 to 5 April" is 4 nights."""
    from datetime import date

    days: list[date] = []
    for d in mentions[:MAX_OPERANDS]:
        value = d.value[:10] if d.kind == "datetime" else d.value if d.kind == "date" else None
        if value is None:
            continue
        iso = "2026" + value[1:] if value.startswith("--") else value
        try:
            days.append(date.fromisoformat(iso))
        except ValueError:
            continue
    spans = {abs((x - y).days) for i, x in enumerate(days) for y in days[i + 1:]}
    return [(float(n), unit) for n in spans if n for unit in ("day", "night", None)]


def _minutes_between(mentions: list[DateMention]) -> list[Source]:
    """The time between two clock times an answer states: "22:14 ... six minutes later (22:20)"."""
    clocks = []
    for d in mentions[:MAX_OPERANDS]:
        clock = d.value[11:16] if d.kind == "datetime" else d.value[:5] if d.kind == "time" else None
        if clock and clock[:2].isdigit() and clock[3:5].isdigit():
            clocks.append(int(clock[:2]) * 60 + int(clock[3:5]))
    spans = {abs(x - y) for i, x in enumerate(clocks) for y in clocks[i + 1:]}
    return [(float(n), "min") for n in spans if n]


# ---------------------------------------------------------------------------
# Forbidden claims, "no data", the failed run
# ---------------------------------------------------------------------------


def forbidden_items(answer: str, forbidden: Sequence[ForbiddenClaim]) -> list[Item]:
    """Every match of a forbidden pattern, for the judge, with the stance of its sentence.

    Never settled here (S6.1: a check settles only right): the evidence says whether the
    claim is negated ("won't reach her any more"), asked or supposed, or clearly asserted.
    """
    items: list[Item] = []
    for k, claim in enumerate(forbidden):
        for m in re.finditer(claim.pattern, answer, re.I):
            stance = claim_stance(answer, m.start(), m.end(), claim.pattern)
            # "no clash besides the Forum block" names what there is: it denies the rest only (issue 30).
            excepted = exception_after(answer, m.end())
            items.append(Item(
                id=f"forbidden:{k}:{m.start()}", kind="forbidden",
                text=f"a forbidden claim ({claim.why}): {stance.sentence!r}", allowed=("right", "wrong"),
                evidence={"pattern": claim.pattern, "sentence": stance.sentence, "negated": stance.negated,
                          "question": stance.question, "conditional": stance.conditional,
                          "clearly_asserted": stance.asserted and excepted is None,
                          **({"excepted": excepted} if excepted else {})}))
    return items


def _said_item(answer: str, item: Item, reader: Callable[[str], str | None], evidence: str) -> Item:
    """``item`` settled right when ``reader`` finds the answer saying it (kept as ``evidence``), else open."""
    words = reader(answer)
    if words is None:
        return item
    item.evidence[evidence] = words
    return settle(item, "right")


def _no_data_item(answer: str) -> Item:
    return _said_item(answer, Item(id="no_data", kind="no_data", text="says that the data does not answer the question",
                                   allowed=("right", "missing", "wrong")), says_no_data, "phrase")


def _failed_run_item(answer: str) -> Item:
    return _said_item(answer, Item(id="failed_run", kind="failed_run", text="says that the background run failed",
                                   allowed=("right", "missing", "wrong")), says_failed, "words")


# ---------------------------------------------------------------------------
# One turn
# ---------------------------------------------------------------------------


def check_answer(key: KeyEntry, answer: str, *, tool_texts: list[str], user_texts: list[str],
                 escalation_sentence: str, tool_descriptions: Sequence[str] | None = None,
                 earlier_answers: Sequence[str] = (), names: Names | None = None,
                 tool_arguments: Sequence[str] = ()) -> tuple[list[Item], AnswerFlags]:
    """The items of one question turn and its flags.

    ``tool_descriptions``: what the assistant was told about its tools (None: every world
    tool's, see ``tool_description_texts``). ``earlier_answers``: the final answers of the
    conversation's earlier turns; a number computed there by a shown calculation (or taken from a tool) was
    already checked in its own turn, so repeating it later is not inventing it. ``names``:
    the world's names for its records, so a fact whose value is an id is stated by a name.
    ``answer_context(record, turn)`` gives all of these from a cell record.
    """
    flags = AnswerFlags()
    if not answer.strip():
        flags.no_answer = True
        return [], flags
    flags.escalated = has_escalation(answer, escalation_sentence)
    # Clause numbers and footnote markers number the text; they state no value (readers/layout.py).
    layout = layout_spans(answer)
    quantities = [q for q in find_quantities(answer) if not is_layout(q, layout)]
    mentions = find_dates(answer)
    items: list[Item] = []
    if not flags.escalated:
        items.extend(fact_item(f, answer, quantities, flags, mentions, names) for f in key.facts)
        if key.data_does_not_answer:
            items.append(_no_data_item(answer))
        if key.failed_run:
            items.append(_failed_run_item(answer))
    descriptions = tuple(tool_descriptions) if tool_descriptions is not None else tool_description_texts()
    # Of earlier answers only their shown calculations are sources: a number computed there
    # may be reused, while a number invented there is not laundered by being repeated.
    shown = [c.text for text in earlier_answers for c in find_calculations(text) if c.holds]
    sources = sources_of(tool_texts, user_texts, shown) + _sources_of_texts(descriptions)
    if not flags.escalated:
        _keep_contradictions(items, quantities, mentions, sources,
                             _seen_moments([*tool_texts, *user_texts, *earlier_answers]), answer)
        if not key.data_does_not_answer:
            phrase = says_no_data(answer)
            if phrase is not None:
                # "The data doesn't say" about a value the assistant was shown denies it; about
                # one it never looked up, the claim may be true of what it read: only missing.
                seen = "\n".join(tool_texts)
                for fact, item in zip(key.facts, items):
                    if item.kind == "fact" and item.pending and (
                            _shown(fact.value, seen, sources) or _denies_yes_no(fact, answer, phrase)):
                        item.evidence["denied_by"] = phrase
    # A number the fact check matched to the key's value is the key's, not invented
    # (a derived total stated without its calculation; a right value without its unit).
    key_values = {i.evidence["matched_at"] for i in items if i.kind == "fact" and "matched_at" in i.evidence}
    key_values |= {i.evidence["value_at"] for i in items if i.kind == "fact" and "value_at" in i.evidence}
    open_facts = [f for f, i in zip(key.facts, items) if i.kind == "fact" and i.pending and _is_number_or_moment(f)]
    if not flags.escalated and open_facts:
        # A number or date fact not found is "missing" for certain only when every token with
        # digits was read one way: "20MAR26" or "0{,}35" may state it (issue 30, fifth round).
        tokens = _tokens_not_read(answer, quantities, mentions, [*tool_texts, *user_texts])
        for fact, item in zip(key.facts, items):
            if not (tokens and item.kind == "fact" and item.pending and _is_number_or_moment(fact)):
                continue
            # A token no reader read may state anything; one read several ways only if a reading is the value.
            here = [t for t, readings, q in tokens if readings is None or _may_state(item, readings, q)]
            if here:
                item.evidence["tokens_not_read"] = list(dict.fromkeys(here))[:6]
    unread = unread_parts(answer) if not flags.escalated else []
    if unread:
        # A fact code did not find may be stated in words it cannot read: "not stated" is no
        # certain verdict in a message it cannot read whole (issue 30: code decides only what it reads).
        for item in items:
            if item.kind == "fact" and item.pending:
                item.evidence["parts_not_read"] = [part[:160] for part in unread[:3]]
    numbers = number_items(answer, quantities, sources, escalation_sentence=escalation_sentence, key_values=key_values,
                           seen_moments=_seen_moments([*tool_texts, *user_texts]))
    mark_contradictions(numbers, items, quantities, sources)
    items.extend(numbers)
    items.extend(forbidden_items(answer, key.forbidden))
    claims = claims_item("claims", answer, [*tool_texts, *user_texts, *earlier_answers], id_sources=tool_arguments,
                         data_answers=bool(key.facts) and not key.data_does_not_answer and not flags.escalated,
                         covered=key_values)
    if claims is not None:
        items.append(claims)
    return items, flags


def _denies_yes_no(fact: Fact, answer: str, phrase: str) -> bool:
    """A yes/no fact the answer says the records cannot settle, in a sentence on its subject
    ("the address book can't tell whether Inês is reachable")."""
    if not isinstance(fact.value, bool):
        return False
    at = answer.find(phrase)
    return at != -1 and mentions_subject(sentence_around(answer, at, at + len(phrase)), subject_anchors(fact.statement))


def _shown(value: Any, seen: str, sources: list[tuple[float, str | None]]) -> bool:
    """Whether a tool result the assistant saw holds the fact's value (numbers by value,
    text as text; a yes/no cannot be told from a value alone)."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        return any(abs(v - float(value)) < 1e-9 for v, _ in sources)
    return normalise_text(str(value)) in normalise_text(seen)


def _seen_moments(texts: Iterable[str]) -> set[tuple[str, Any]]:
    """The dates, months and times the assistant was shown, as comparable keys."""
    seen: set[tuple[str, Any]] = set()
    for text in texts:
        for d in find_dates(text):
            seen.update(_moment_keys(d))
    return seen


def _moment_keys(d: DateMention) -> list[tuple[str, Any]]:
    keys: list[tuple[str, Any]] = []
    if d.kind in ("date", "datetime"):
        keys.append(("day", d.value[5:10] if not d.value.startswith("--") else d.value[2:7]))
        if not d.value.startswith("--"):
            keys.append(("month", d.value[:7]))
    if d.kind == "month":
        keys.append(("month", d.value))
    clock = d.value[11:16] if d.kind == "datetime" else d.value[:5] if d.kind == "time" else None
    if clock:
        minutes = int(clock[:2]) * 60 + int(clock[3:5])
        keys.append(("clock", minutes) if d.offset is None else ("instant", (minutes - d.offset) % 1440))
        if d.offset is not None:
            keys.append(("clock", minutes))
    return keys


def _keep_contradictions(items: list[Item], quantities: list[Quantity], mentions: list[DateMention],
                         sources: list[Source], seen_moments: set[tuple[str, Any]], answer: str = "") -> None:
    """Keep, as evidence against a fact, only the values that state nothing else.

    A value another fact of the key matched states that fact; a value copied from a tool
    result (another charge's amount, another event's date) states its own record. Neither
    says this fact is wrong, so only the rest (4.3 km for 3.4 km, 15:30 UTC for 13:30 UTC)
    remains in ``values_of_the_kind`` for the judge; without any, the fact is missing. A value that
    does not read one way and in some reading is the fact's value ("1,250 km" is 1.25 km too;
    readers/readings.py) contradicts nothing for certain: it moves to ``values_not_read_one_way``
    (unsure for the rules, issue 30). One that differs in every reading ("3,500" for 3602.94) stays.
    """
    english = reads_as_english(answer) if answer else True
    claimed = {i.evidence["matched_at"] for i in items if i.kind == "fact" and "matched_at" in i.evidence}
    by_start_q = {q.start: q for q in quantities}
    by_start_d = {d.start: d for d in mentions}
    for item in items:
        if item.kind != "fact" or not item.pending or "values_at" not in item.evidence:
            continue
        kept_texts: list[str] = []
        kept_at: list[int] = []
        for start, text in zip(item.evidence["values_at"], item.evidence["values_of_the_kind"]):
            if start in claimed:
                continue
            q, d = by_start_q.get(start), by_start_d.get(start)
            if q is not None and is_sourced(q, sources):
                continue
            if d is not None and _moment_keys(d) and _moment_keys(d)[0] in seen_moments:
                continue
            if q is not None and answer and _may_state(item, readings_of(answer, q, english=english), q):
                item.evidence.setdefault("values_not_read_one_way", []).append(text)
                continue
            kept_texts.append(text)
            kept_at.append(start)
        item.evidence["values_of_the_kind"] = kept_texts
        item.evidence["values_at"] = kept_at
        if "numbers_with_the_unit" in item.evidence:
            item.evidence["numbers_with_the_unit"] = kept_texts


_ID_FORM = re.compile(r"[A-Za-z]{1,12}(?:-[A-Za-z]{1,12})*-\d{2,}")
_TOKEN = re.compile(r"[^\s()\[\]{}<>\"'«»“”|]*\d[^\s()\[\]{}<>\"'«»“”|]*")


def _tokens_not_read(answer: str, quantities: list[Quantity], mentions: list[DateMention],
                     seen: list[str]) -> list[tuple[str, Any, Any]]:
    """The tokens with digits the readers did not read one way, as (token, readings, quantity): in
    no number or date they read (readings None), or in a number that does not read one way; ids
    and codes a source shows are read (copied), and an id form is the claims item's."""
    english = reads_as_english(answer)
    spans = [(q.start, q.end, q) for q in quantities] + [(d.start, d.end, None) for d in mentions]
    seen_text = "\n".join(seen).casefold()
    out: list[tuple[str, Any, Any]] = []
    for m in _TOKEN.finditer(answer):
        token = m.group().strip(".,;:!?*_`")
        copied = token.rstrip("…").rstrip(".")  # a truncated copy ("6b87ec7e…") is a copy
        if not token or copied.casefold() in seen_text or _ID_FORM.fullmatch(copied):
            continue  # an id is an exact string: the claims item decides it
        digits = [i for i in range(m.start(), m.end()) if answer[i].isdigit()]
        if not all(any(a <= i < b for a, b, _ in spans) for i in digits):
            out.append((token, None, None))
            continue
        for q in {id(q): q for a, b, q in spans if q is not None and any(a <= i < b for i in digits)}.values():
            readings = readings_of(answer, q, english=english)
            if not readings.one_way:
                out.append((token, readings, q))
    return out


def _is_number_or_moment(fact: Fact) -> bool:
    value = fact.value
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) or \
        moment_of_value(value, fact.unit) is not None


def _may_state(item: Item, readings: Any, q: Quantity) -> bool:
    """Whether a token that does not read one way states the fact's value in one of its readings."""
    if readings.one_way or not isinstance(item.evidence.get("value"), (int, float)):
        return False
    raw_unit = item.evidence.get("unit")
    unit = split_unit(raw_unit)[0] if raw_unit else None
    expected = [(float(item.evidence["value"]), unit)]
    return any(r.value is not None and is_sourced(replace(q, value=float(r.value), unit=r.unit, decimals=r.decimals),
                                                  expected) for r in readings.readings)


def answer_context(record: dict[str, Any], turn: int) -> dict[str, Any]:
    """What ``check_answer`` reads from a cell record for one turn, besides the key, the
    answer and the escalation sentence: the tool results and user texts of this and every
    earlier turn, the descriptions of the level's tools, the earlier turns' final answers
    and the world's names (from the record's final state)."""
    entries = [e for e in record.get("transcript", []) if (e.get("turn") or 0) <= turn]
    finals = {t["turn"]: t.get("final") or "" for t in record.get("turns", [])}
    state = (record.get("state") or {}).get("final")
    return {
        "tool_texts": [e["text"] for e in entries if e.get("type") == "tool"],
        "user_texts": [e["text"] for e in entries if e.get("type") == "user"],
        "tool_descriptions": tool_description_texts(t["name"] for t in record["tools"]) if record.get("tools") else None,
        "earlier_answers": [finals[i] for i in sorted(finals) if i < turn],
        "names": Names.of(state) if isinstance(state, dict) else None,
        # What the assistant itself asked the tools (ids it passed are facts of this conversation).
        "tool_arguments": [json.dumps(e.get("arguments") or {}, ensure_ascii=False) for e in entries if e.get("type") == "tool"],
    }


_LEVEL_NOUNS = re.compile(r"(?i)[\s-]*(?:levels?|settings?|tiers?|modes?)\b")
_LEVEL_NOUN_AT_START = re.compile(r"(?i)^(?:levels?|settings?|tiers?|modes?)\b")


def _context(text: str, start: int, end: int, width: int = 60, reach: int = 30) -> str:
    """The words around a number, for its evidence (issue 23, item 18).

    Cut at word boundaries: a cut inside a word leaves pieces the blinding cannot read ("the
    basic tie" is no level phrase, "the basic tier" is). A level noun just outside the cut is
    taken in with its word, so the phrase is whole when the request is blinded."""
    a, b = max(0, start - width), min(len(text), end + width)
    if a > 0 and not text[a - 1].isspace():
        left = text.rfind(" ", max(0, a - reach), a)
        a = left + 1 if left >= 0 else (text.find(" ", a, start) + 1 or a)
    if b < len(text) and not text[b].isspace():
        right = re.search(r"\s", text[b:b + reach])
        if right:
            b += right.start()
        else:
            inner = text.rfind(" ", end, b)
            b = inner if inner >= 0 else b
    noun = _LEVEL_NOUNS.match(text, b)
    if noun:
        b = noun.end()
    if _LEVEL_NOUN_AT_START.match(text[a:]) and a > 0:
        before = text.rfind(" ", 0, max(0, a - 1))
        a = before + 1 if before >= 0 else 0
    return text[a:b]
