"""The strict reply check (S6.6): exactly the asked JSON, or a list of what is wrong, field by field.

Two slips are accepted and recorded in ``relaxed``: a reason longer than 200 characters is
cut to 200, and a verdict for an item the checks already settled is dropped. Anything else
(not one JSON object, a code fence around it, an item missing or given twice, an unknown
item, a verdict the item does not allow, a confidence outside 0..1, an understandability
other than 1, 2 or 3, an unknown field) makes the reply invalid, and the problems are
written so that the retry can name them one by one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.judging.request import REASON_MAX, JudgeRequest


@dataclass
class ParsedReply:
    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> verdict, confidence, reason
    understandability: int | None = None
    relaxed: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class _Duplicate(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise _Duplicate(k)
        seen[k] = v
    return seen


def parse_reply(text: str, request: JudgeRequest) -> ParsedReply:
    """Check one reply against its request."""
    out = ParsedReply()
    try:
        data = json.loads(text, object_pairs_hook=_pairs)
    except _Duplicate as dup:
        out.problems.append(f"the field or item {dup.args[0]!r} is given twice; give every item exactly once")
        return out
    except ValueError as exc:
        where = "a code fence or text around the JSON" if text.strip().startswith(("```", "Here", "Sure")) else exc.msg
        out.problems.append(f"the reply is not one JSON object ({where}); reply with the JSON object alone")
        return out
    if not isinstance(data, dict):
        out.problems.append("the reply is not a JSON object")
        return out
    for key in sorted(set(data) - {"items", "understandability"}):
        out.problems.append(f"unknown field {key!r}: the reply has only 'items' and 'understandability'")
    u = data.get("understandability")
    if isinstance(u, bool) or u not in (1, 2, 3):
        out.problems.append(f"understandability: {u!r} is not 1, 2 or 3")
    else:
        out.understandability = int(u)
    items = data.get("items")
    if not isinstance(items, dict):
        out.problems.append("items: must be an object of item id -> {verdict, confidence, reason}")
        return out
    for item_id, entry in items.items():
        if item_id in request.settled and item_id not in request.open_items:
            if isinstance(entry, dict) and entry.get("verdict") == "contested":
                # The second reader disputes what code settled (issue 21): kept, it queues the cell.
                out.verdicts[item_id] = _entry(item_id, entry, ("contested",), out)
                continue
            out.relaxed.append(f"{item_id}: a verdict for an item the checks settled was dropped")
            continue
        if item_id not in request.open_items:
            out.problems.append(f"items.{item_id}: not an item to grade")
            continue
        out.verdicts[item_id] = _entry(item_id, entry, request.open_items[item_id], out)
    for item_id in request.open_items:
        if item_id not in items:
            out.problems.append(f"items.{item_id}: missing; give a verdict for it")
    if out.problems:
        out.verdicts = {}
    return out


def _entry(item_id: str, entry: Any, allowed: tuple[str, ...], out: ParsedReply) -> dict[str, Any]:
    where = f"items.{item_id}"
    if not isinstance(entry, dict):
        out.problems.append(f"{where}: must be an object with verdict, confidence and reason")
        return {}
    for key in sorted(set(entry) - {"verdict", "confidence", "reason"}):
        out.problems.append(f"{where}.{key}: unknown field")
    verdict = entry.get("verdict")
    if verdict not in allowed:
        out.problems.append(f"{where}.verdict: {verdict!r} is not one of {', '.join(allowed)}")
    confidence = entry.get("confidence")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        out.problems.append(f"{where}.confidence: {confidence!r} is not a number from 0 to 1")
    reason = entry.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        out.problems.append(f"{where}.reason: must be a non-empty text")
        reason = ""
    elif len(reason) > REASON_MAX:
        out.relaxed.append(f"{where}.reason: {len(reason)} characters cut to {REASON_MAX}")
        reason = reason[:REASON_MAX]
    return {"verdict": verdict, "confidence": confidence, "reason": reason}


def retry_feedback(problems: list[str]) -> str:
    """The user message of the one retry: what was wrong, field by field."""
    return ("Your reply could not be used:\n" + "\n".join(f"- {p}" for p in problems)
            + "\nReply again with exactly one JSON object of the asked form and nothing else.")
