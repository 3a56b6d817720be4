"""Answer checks for question turns (S6.1, S6.2): facts, provenance of numbers,
forbidden claims, "the data does not answer", the failed run and escalation.

Input is one turn of a cell record (its final answer, the tool results the assistant
saw up to it, the user's texts) and the key entry; output is the list of items, some
settled right by code, the rest waiting for a judge, plus the flags the outcome needs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.cases.matchers import normalise_text
from pytest_assistant_eval.cases.model import Fact, KeyEntry
from pytest_assistant_eval.grading.items import Item, settle
from pytest_assistant_eval.grading.quantities import (
    Quantity,
    canonical_unit,
    find_calculations,
    find_quantities,
    is_constant,
    is_sourced,
    numbers_in_json,
    same_quantity,
)

NO_DATA_PHRASES = (
    r"data (?:does not|doesn't|do not|don't|cannot|can't) (?:answer|say|show|tell|contain|include|record)",
    r"(?:no|not any) (?:record|data|information|entry|entries)",
    r"not (?:in|recorded in|part of) the (?:data|records|services)",
    r"(?:cannot|can't|could not|couldn't) (?:find|tell|determine|answer) (?:this|that|it)? ?from the (?:data|records|services)",
    r"the services (?:do not|don't) (?:hold|record|have)",
)
FAILED_WORDS = re.compile(r"\b(?:fail(?:ed|s|ure)?|did not (?:succeed|complete|run)|unsuccessful|error)\b", re.I)
NEGATION = re.compile(r"\b(?:not|no|never|nothing|none|neither|nor|isn't|wasn't|aren't|weren't|doesn't|didn't|cannot|can't|without)\b", re.I)


@dataclass
class AnswerFlags:
    no_answer: bool = False
    escalated: bool = False
    form_missing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"no_answer": self.no_answer, "escalated": self.escalated, "form_missing": self.form_missing}


def normalise_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def has_escalation(answer: str, sentence: str) -> bool:
    return bool(sentence) and normalise_space(sentence).lower() in normalise_space(answer).lower()


def says_no_data(answer: str) -> bool:
    return any(re.search(p, answer, re.I) for p in NO_DATA_PHRASES)


def _strings(obj: Any) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


def sources_of(tool_texts: list[str], user_texts: list[str]) -> list[tuple[float, str | None]]:
    """Every number the assistant saw: in tool results (numbers with unit hints from their
    keys, and numbers written inside strings: last four digits, phone numbers, details) and
    in the user's texts."""
    sources: list[tuple[float, str | None]] = []
    for text in tool_texts:
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, ValueError):
            sources.extend((q.value, q.unit) for q in find_quantities(text))
            continue
        sources.extend(numbers_in_json(data))
        for string in _strings(data):
            if string.strip().lstrip("+-").replace(".", "", 1).isdigit():
                sources.append((float(string), None))
            else:
                sources.extend((q.value, q.unit) for q in find_quantities(string))
                # Digits inside ids and codes were seen too ("card-amex-7710" shows 7710).
                sources.extend((float(m.group()), None) for m in re.finditer(r"\d+(?:\.\d+)?", string))
    for text in user_texts:
        sources.extend((q.value, q.unit) for q in find_quantities(text))
    return sources


def _fact_quantity(fact: Fact) -> tuple[float, str | None] | None:
    if isinstance(fact.value, bool) or not isinstance(fact.value, (int, float)):
        return None
    unit = canonical_unit(fact.unit) if fact.unit else None
    if fact.unit and unit is None:
        return None  # a unit the parser does not know: compared as text, else judged
    return float(fact.value), unit


def fact_item(fact: Fact, answer: str, quantities: list[Quantity], flags: AnswerFlags) -> Item:
    unit = f" {fact.unit}" if fact.unit else ""
    item = Item(id=f"fact:{fact.id}", kind="fact", text=f"{fact.statement}: {fact.value}{unit}",
                allowed=("right", "missing", "wrong"), critical=fact.critical,
                evidence={"value": fact.value, "unit": fact.unit})
    if normalise_text(fact.statement.rstrip(".")) in normalise_text(answer):
        return settle(item, "right")  # the key's own statement, word for word
    expected = _fact_quantity(fact)
    if expected is not None and expected[1] is None:
        for q in quantities:
            if q.unit is None and same_quantity(q, expected):
                item.evidence["matched_at"] = q.start
                return settle(item, "right")
        return item
    if expected is not None:
        for q in quantities:
            if q.unit is not None and same_quantity(q, expected):
                item.evidence["matched_at"] = q.start
                return settle(item, "right")
        for q in quantities:
            if q.unit is None and expected[1] is not None and same_quantity(q, expected, allow_unitless=True):
                flags.form_missing.append(f"{fact.id}: the value {q.text} has no unit")
                item.evidence["matched_at"] = q.start
                return settle(item, "right")
        same_dim = [q.text for q in quantities if q.unit is not None and expected[1] is not None
                    and q.dimension == Quantity(0, expected[1], "", 0, 0).dimension]
        item.evidence["numbers_with_the_unit"] = same_dim
        return item
    value = fact.value
    if isinstance(value, bool):
        return item  # a yes/no fact is for the judge
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = normalise_text(str(value) + (f" {fact.unit}" if fact.unit and not isinstance(value, str) else ""))
    if text in normalise_text(answer):
        return settle(item, "right")
    return item


def check_answer(key: KeyEntry, answer: str, *, tool_texts: list[str], user_texts: list[str],
                 escalation_sentence: str) -> tuple[list[Item], AnswerFlags]:
    flags = AnswerFlags()
    if not answer.strip():
        flags.no_answer = True
        return [], flags
    flags.escalated = has_escalation(answer, escalation_sentence)
    quantities = find_quantities(answer)
    items: list[Item] = []
    if not flags.escalated:
        items.extend(fact_item(f, answer, quantities, flags) for f in key.facts)
        if key.data_does_not_answer:
            item = Item(id="no_data", kind="no_data", text="says that the data does not answer the question",
                        allowed=("right", "missing", "wrong"))
            items.append(settle(item, "right") if says_no_data(answer) else item)
        if key.failed_run:
            item = Item(id="failed_run", kind="failed_run", text="says that the background run failed",
                        allowed=("right", "missing", "wrong"))
            items.append(settle(item, "right") if FAILED_WORDS.search(answer) else item)
    # Numbers with no source: judged right (a shown calculation, a constant) or wrong (invented).
    sources = sources_of(tool_texts, user_texts)
    escalation_numbers = {q.text for q in find_quantities(escalation_sentence)}
    calculations = [c for c in find_calculations(answer) if c.holds]
    calc_spans = [(c.start, c.end) for c in calculations]
    calc_results = [c.result for c in calculations]
    # A number the fact check matched to the key's value is the key's, not invented
    # (a derived total stated without its calculation; a right value without its unit).
    key_values = {i.evidence["matched_at"] for i in items if i.kind == "fact" and "matched_at" in i.evidence}
    for q in quantities:
        if is_sourced(q, sources) or is_constant(q) or q.text in escalation_numbers or q.start in key_values:
            continue
        if any(start <= q.start and q.end <= end for start, end in calc_spans):
            continue
        if is_sourced(q, [(r.value, r.unit) for r in calc_results]):
            continue  # the result of a calculation the answer shows
        items.append(Item(id=f"number:{q.start}", kind="number", text=f"the number {q.text!r} has no tool source",
                          allowed=("right", "wrong"), evidence={"number": q.text, "context": _context(answer, q.start, q.end)}))
    for k, claim in enumerate(key.forbidden):
        for m in re.finditer(claim.pattern, answer, re.I):
            sentence = _sentence(answer, m.start(), m.end())
            item = Item(id=f"forbidden:{k}:{m.start()}", kind="forbidden",
                        text=f"a forbidden claim ({claim.why}): {sentence!r}", allowed=("right", "wrong"),
                        evidence={"pattern": claim.pattern, "sentence": sentence})
            if not NEGATION.search(sentence):
                item.evidence["clearly_asserted"] = True
                settle(item, "wrong")
            items.append(item)
    return items, flags


def _context(text: str, start: int, end: int, width: int = 60) -> str:
    return text[max(0, start - width): end + width]


def _sentence(text: str, start: int, end: int) -> str:
    left = max(text.rfind(".", 0, start), text.rfind("!", 0, start), text.rfind("?", 0, start)) + 1
    rights = [i for i in (text.find(".", end), text.find("!", end), text.find("?", end)) if i != -1]
    right = min(rights) + 1 if rights else len(text)
    return text[left:right].strip()
