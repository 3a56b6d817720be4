"""The offline judge ``scripted:rules``: settles the remaining items by fixed rules.

It is deterministic and labelled as such in every graded cell (grader
``scripted:rules``, ``deterministic: true``). It reads only what a model judge would
be shown: the items with their evidence. The checks settle only what they prove right
(S6.1), so everything wrong is decided here, from the evidence the checks recorded:

- a fact the answer denies ("the data doesn't say", where the key has it) -> ``wrong``;
- a fact: the answer states other values of the fact's kind (``values_of_the_kind``:
  3 MWh for 3 kWh, 15:30 UTC for 13:30 UTC, another date; ``numbers_with_the_unit`` in
  older gradings) -> ``wrong``; none -> ``missing``; a yes/no or text fact not found ->
  ``missing``;
- a number with no tool source: ``wrong`` (invented) — shown calculations, constants,
  definitions and earlier answers were already accepted by the checks;
- a forbidden-claim match: ``wrong`` when its sentence clearly asserts it; ``right`` when
  it is negated ("so that address won't reach her any more"), asked or only supposed;
- "the data does not answer" or "the run failed" not said: ``missing``;
- a claim of an action no service call backs: ``wrong``;
- a simulated user's reply (``grading.user_replies``): ``wrong`` when the proposal's own values
  contradict its stated reason; a refusal without a readable reason is ``right`` at confidence
  0.5, so that the owner decides.
"""

from __future__ import annotations

from typing import Any

from pytest_assistant_eval.grading.items import Item
from pytest_assistant_eval.grading.user_replies import rules_verdict

JUDGE_ID = "scripted:rules"


def _fact(item: Item) -> tuple[str, str]:
    others = item.evidence.get("values_of_the_kind") or item.evidence.get("numbers_with_the_unit")
    if others:
        return "wrong", f"the answer states another value of the fact's kind: {', '.join(map(str, others[:3]))}"[:200]
    if item.evidence.get("denied_by"):
        return "wrong", f"the answer says the data does not give it ({item.evidence['denied_by']!r}), but it does"[:200]
    return "missing", "the value is not stated"


def _forbidden(item: Item) -> tuple[str, str]:
    evidence = item.evidence
    if evidence.get("clearly_asserted"):
        return "wrong", "the sentence asserts the forbidden claim"
    if evidence.get("question"):
        return "right", "the matching sentence only asks"
    if evidence.get("conditional"):
        return "right", "the matching sentence only supposes it"
    return "right", "the matching sentence is negated"


def verdict_for(item: Item) -> tuple[str, str]:
    """The rules' verdict and reason for one open item."""
    if item.kind == "fact":
        return _fact(item)
    if item.kind == "number":
        return "wrong", "no tool result, calculation or constant gives this number"
    if item.kind == "forbidden":
        return _forbidden(item)
    if item.kind in ("no_data", "failed_run"):
        return "missing", "the answer does not say so"
    if item.kind == "claim":
        return "wrong", "no service call backs this claim"
    return item.allowed[-1], "no rule for this item"


def judge_items(items: list[Item]) -> dict[str, dict[str, Any]]:
    verdicts: dict[str, dict[str, Any]] = {}
    for item in items:
        if not item.pending:
            continue
        if item.kind == "user_reply":  # the simulated user's reply (S6.12): unsure ones go to the owner
            verdict, reason, confidence = rules_verdict(item)
            verdicts[item.id] = {"verdict": verdict, "confidence": confidence, "reason": reason}
            continue
        verdict, reason = verdict_for(item)
        verdicts[item.id] = {"verdict": verdict, "confidence": 1.0, "reason": reason}
    return verdicts
