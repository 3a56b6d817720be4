"""``review --owner scripted``: an owner that answers from the answer key, so the loop
grade -> review -> agreement runs offline (the demo, CI).

It is a stand-in, not evidence: its rules are fixed and readable, and they are its own, not
the offline judge's, so its agreement figures exercise every table without pretending a
person gave them. Per item, from the key and the record:

- a fact: right when the answer holds the key's statement or value as written in the key;
  wrong when code found other values of the fact's kind; else missing;
- a number with no tool source: right when it is one of the key's values for the question,
  else wrong;
- a forbidden claim: wrong when the sentence asserts it, else right;
- "the data does not answer", "the run failed": missing (code would have found the wording);
- a claimed action: right when the service log has an ok call of a tool that would back it,
  else wrong; a hidden refusal: wrong;
- a simulated user's reply: wrong when the proposal's own values contradict it (the evidence's
  ``contradicted_by``), else right.

Understandability: 1 when the assistant's final messages are short (under 1,200 characters
in all), else 2. Its first verdicts are kept as final (it presses Enter at every difference).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_assistant_eval.review.context import ReviewContext
from pytest_assistant_eval.review.flow import finish_review, save_first, start_review

__all__ = ["scripted_verdict", "scripted_understandability", "review_scripted"]

SHORT = 1200


def _answer(record: Mapping[str, Any]) -> str:
    return "\n".join(t.get("final") or "" for t in record.get("turns") or [])


def _key_values(ctx: ReviewContext, qid: str) -> list[str]:
    entry = ctx.cases.key.entries.get(qid)
    return [str(f.value) for f in entry.facts] if entry is not None else []


def _digits(text: str) -> str:
    return re.sub(r"[^\d.]", "", text).rstrip(".")


def scripted_verdict(ctx: ReviewContext, n: int, item: Mapping[str, Any], record: Mapping[str, Any]) -> str:
    kind = item["kind"]
    evidence = item.get("evidence") or {}
    qid = str(item["id"]).split("/")[0] if "/" in str(item["id"]) else str(ctx.cells[n]["case"])
    if kind == "fact":
        entry = ctx.cases.key.entries.get(qid)
        fact_id = str(item["id"]).split("fact:")[-1]
        fact = next((f for f in entry.facts if f.id == fact_id), None) if entry else None
        answer = _answer(record).lower()
        if fact is not None and (fact.statement.lower() in answer or str(fact.value).lower() in answer):
            return "right"
        return "wrong" if evidence.get("values_of_the_kind") or evidence.get("numbers_with_the_unit") else "missing"
    if kind == "number":
        number = _digits(str(evidence.get("number") or ""))
        return "right" if number and number in {_digits(v) for v in _key_values(ctx, qid)} else "wrong"
    if kind == "forbidden":
        return "wrong" if evidence.get("clearly_asserted") else "right"
    if kind == "claim":
        tools = set(evidence.get("tools") or [])
        backed = any(e.get("tool") in tools and e.get("status") == "ok" for e in record.get("service_log") or [])
        return "right" if backed and not str(item["id"]).startswith("hidden_refusal") else "wrong"
    if kind == "user_reply":
        # Wrong only when the reply refused or questioned what the proposal's own values allow.
        return "wrong" if evidence.get("contradicted_by") else "right"
    if kind == "claims":
        # Its own reading of what code traced: right when nothing was left untraced or false, and
        # a "the data does not say" beside every key fact stated right is about something else.
        doubts = ("untraced", "calculations_that_do_not_hold", "denies_a_clash_the_records_show")
        if any(evidence.get(k) for k in doubts):
            return "wrong"
        if evidence.get("says_the_data_is_silent"):
            turn = str(item["id"]).rpartition("/")[0]
            facts = [i for i in ctx.cells[n].get("items") or []
                     if i.get("kind") == "fact" and str(i.get("id")).rpartition("/")[0] == turn]
            return "right" if facts and all(i.get("verdict") == "right" for i in facts) else "wrong"
        return "right"
    return "missing" if "missing" in item["allowed"] else str(item["allowed"][-1])


def scripted_understandability(record: Mapping[str, Any]) -> int:
    return 1 if len(_answer(record)) < SHORT else 2


def review_scripted(ctx: ReviewContext) -> int:
    """Review every pending queued cell (no sitting limit); returns how many."""
    done = 0
    for n in ctx.pending():
        record = ctx.record(n)
        review = start_review(ctx, n, "scripted")
        items = {str(i["id"]): i for i in ctx.judged(n)}
        for item_id in review.asked:
            if item_id not in review.first.verdicts:
                review.first.verdicts[item_id] = scripted_verdict(ctx, n, items[item_id], record)
        save_first(ctx, review, None, scripted_understandability(record))
        finish_review(ctx, review, {})
        done += 1
    return done
