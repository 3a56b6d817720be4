"""The offline judge ``scripted:rules``: settles the remaining items by fixed rules.

It is deterministic and labelled as such in every graded cell (grader
``scripted:rules``, ``deterministic: true``). It reads only what a model judge would
be shown: the items with their evidence. Rules:

- a fact: a value with the fact's unit that differs from the key is ``wrong``; no such
  value is ``missing``; a yes/no or text fact not found is ``missing``;
- a number with no tool source: ``wrong`` (invented) — shown calculations and
  constants were already accepted by the checks;
- a forbidden-claim match: ``right`` (code found no clear assertion, so it reads as negated);
- "the data does not answer" or "the run failed" not said: ``missing``;
- a claim of an action no service call backs: ``wrong``.
"""

from __future__ import annotations

from typing import Any

from pytest_assistant_eval.grading.items import Item

JUDGE_ID = "scripted:rules"


def judge_items(items: list[Item]) -> dict[str, dict[str, Any]]:
    verdicts: dict[str, dict[str, Any]] = {}
    for item in items:
        if not item.pending:
            continue
        if item.kind == "fact":
            verdict = "wrong" if item.evidence.get("numbers_with_the_unit") else "missing"
            reason = "a value with the fact's unit differs from the key" if verdict == "wrong" else "the value is not stated"
        elif item.kind == "number":
            verdict, reason = "wrong", "no tool result, calculation or constant gives this number"
        elif item.kind == "forbidden":
            verdict, reason = "right", "the matching sentence is negated"
        elif item.kind in ("no_data", "failed_run"):
            verdict, reason = "missing", "the answer does not say so"
        elif item.kind == "claim":
            verdict, reason = "wrong", "no service call backs this claim"
        else:
            verdict, reason = item.allowed[-1], "no rule for this item"
        verdicts[item.id] = {"verdict": verdict, "confidence": 1.0, "reason": reason}
    return verdicts
