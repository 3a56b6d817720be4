"""Outcomes of question turns (S6.3), from items and their final verdicts."""

from __future__ import annotations

from typing import Any

from pytest_assistant_eval.suites.calibration.checks.answers import AnswerFlags
from pytest_assistant_eval.judging.items import Item

ORDER = ("answered", "escalated", "incomplete", "failed")  # worse to the right


def question_outcome(items: list[Item], flags: AnswerFlags, verdicts: dict[str, str]) -> dict[str, Any]:
    """answered / incomplete / escalated / failed, with the flags that explain it."""
    if flags.no_answer:
        return {"outcome": "failed", "no_answer": True, "critical_missing": [], "invented_numbers": 0,
                "form_missing": []}
    if flags.oversized:  # kept folded, never read as an answer: failed without asking the judge
        return {"outcome": "failed", "no_answer": False, "oversized": True, "critical_missing": [],
                "invented_numbers": 0, "form_missing": []}

    def final(item: Item) -> str | None:
        return verdicts.get(item.id, item.verdict)

    wrong = [i for i in items if final(i) == "wrong"]
    invented = [i for i in items if i.kind == "number" and final(i) == "wrong"]
    missing = [i for i in items if final(i) == "missing"]
    waiting = [i for i in items if final(i) is None]
    if wrong:
        outcome = "failed"  # whatever the owner says of an open item, a wrong one fails the turn
    elif waiting:
        outcome = "waiting"
    elif flags.escalated:
        outcome = "escalated"
    elif missing:
        outcome = "incomplete"
    else:
        outcome = "answered"
    return {
        "outcome": outcome,
        "no_answer": False,
        "critical_missing": [i.id for i in missing if i.critical],
        "invented_numbers": len(invented),
        "form_missing": list(flags.form_missing),
    }


def worst(outcomes: list[str]) -> str:
    if "waiting" in outcomes:
        return "waiting"
    return max(outcomes, key=ORDER.index) if outcomes else "failed"
