"""The offline judge ``scripted:rules``: settles the remaining items by fixed rules.

It is deterministic and labelled as such in every graded cell (grader
``scripted:rules``, ``deterministic: true``). It reads only what a model judge would
be shown: the items with their evidence. The checks settle only what they prove right
(S6.1), so everything wrong is decided here, from the evidence the checks recorded:

- a fact the answer denies ("the data doesn't say", where the key has it) -> ``wrong``;
- a fact: the answer states other values of the fact's kind (``values_of_the_kind``:
  3 MWh for 3 kWh, 15:30 UTC for 13:30 UTC, another date; ``numbers_with_the_unit`` in
  older gradings) -> ``wrong``; a value that reads more than one way (``values_not_read_one_way``:
  "1,250 km" for 1.25 km) -> **unsure**; none -> ``missing``; a yes/no or text fact not found ->
  ``missing``; **unsure** instead of ``missing`` when part of the answer is in words the rules
  cannot read (``parts_not_read``: a paragraph that is not English, issue 30);
- a number with no tool source in any reading it admits: ``wrong`` (invented; the reason names
  the key fact it contradicts where it does) only when it reads one way — shown calculations,
  constants, definitions, earlier answers and readings the conversation gave ("2.500" for 2500,
  "20.03." for 20 March, "2214Z" for 22:14) were already accepted by the checks; **unsure** when
  it reads several ways, none sourced (``reads_two_ways``), or the readers cannot read it with
  confidence (``not_read_with_confidence``: unknown symbols, glued letters, another script,
  a message not in English; ``readers/readings.py``). (Issue 30's fourth round tried
  "unsure unless it contradicts": it let the demo's inventing assistant pass every question
  until the owner looked, so it was taken back);
- a forbidden-claim match: ``wrong`` when its sentence clearly asserts it; ``right`` when
  it is negated ("so that address won't reach her any more"), asked or only supposed, or the
  denial names its exception ("no clash besides the Forum block", ``excepted``, issue 30);
- "the data does not answer" or "the run failed" not said: ``missing``;
- a claim of an action no service call backs: ``wrong``;
- ``claims`` (the statements no other item covers): ``wrong`` when it states an id no tool
  result or user text gave (an exact string is in the sources or not), or a value that contradicts the
  record its sentence names or a per-unit price stated as a total (``record_claims``, issue 30); **unsure**
  for a value only another record holds, a record tied to another than its own reference names, an
  amount said owed that no record reads, or a message with parts in words the rules cannot read
  (``parts_not_read``, issue 30); ``right`` when every date, time and id
  the message states was traced to a tool result or the user's words and it does not say
  the data is silent where the key says it speaks; otherwise **unsure**: no verdict, the
  cell waits for the owner (queue reason ``unsure``) rather than being graded with a
  confidence the rules do not have;
- a report point (what a no-change task's report must tell): ``missing`` (code would have
  found the words);
- an item code settled right is **contested** when the sentence that settled it also denies
  or contradicts it (a negation in its clause): the outcome keeps the code's verdict, and the
  cell goes to the owner with the reason ``contested``.
- a simulated user's reply (``grading.user_replies``): ``wrong`` when the proposal's own values
  contradict its stated reason; a refusal without a readable reason is ``right`` at confidence
  0.5, so that the owner decides.
"""

from __future__ import annotations

from typing import Any

from pytest_assistant_eval.judging.items import Item
from pytest_assistant_eval.suites.calibration.checks.user_replies import rules_verdict
from pytest_assistant_eval.suites.calibration.readers.exceptions import names_an_event

JUDGE_ID = "scripted:rules"
UNSURE = None  # the rules' "I cannot tell": no verdict, the owner decides


def _fact(item: Item) -> tuple[str | None, str]:
    evidence = item.evidence
    if evidence.get("per_mismatch"):
        return "wrong", f"a per-unit value stated for a total: {', '.join(evidence['per_mismatch'][:3])}"[:200]
    others = evidence.get("values_of_the_kind") or evidence.get("numbers_with_the_unit")
    if others:
        return "wrong", f"the answer states another value of the fact's kind: {', '.join(map(str, others[:3]))}"[:200]
    if evidence.get("values_not_read_one_way"):
        # A value of the fact's kind that reads several ways ("1,250 km") contradicts nothing for certain.
        return UNSURE, f"the answer states a value that reads more than one way: " \
                       f"{', '.join(map(str, evidence['values_not_read_one_way'][:3]))}"[:200]
    if evidence.get("denied_by"):
        # Saying the data cannot settle what it settles is a false statement, not a gap.
        return "wrong", f"the answer says the data does not give it ({evidence['denied_by']!r}), but it does"[:200]
    if evidence.get("unknown_unit"):
        return UNSURE, f"the value is written with a unit the rules do not know: {evidence['unknown_unit']!r}"[:200]
    if evidence.get("denied_in_clause"):
        return UNSURE, f"the value is stated in a clause with a negation: {evidence['denied_in_clause']!r}"[:200]
    if evidence.get("not_settled_because"):
        return UNSURE, f"{evidence['not_settled_because']}: {evidence.get('stated_in', '')!r}"[:200]
    if evidence.get("per_missing"):
        return "right", f"the value {evidence['per_missing']!r} is stated without its 'per' unit"[:200]
    if evidence.get("sentences_on_the_subject"):
        return UNSURE, "a yes/no fact: the answer speaks of its subject; the rules cannot read which way"
    if evidence.get("tokens_not_read"):
        # Not found, beside tokens with digits the readers did not read one way (issue 30).
        return UNSURE, f"not found, but the answer has tokens the rules cannot read one way: " \
                       f"{', '.join(map(repr, evidence['tokens_not_read'][:3]))}"[:200]
    if evidence.get("parts_not_read"):
        # Not found, in a message with parts in a language the rules do not read (issue 30).
        return UNSURE, f"not found, but part of the answer is in words the rules cannot read: " \
                       f"{evidence['parts_not_read'][0]!r}"[:200]
    return "missing", "the value is not stated"


def _forbidden(item: Item) -> tuple[str | None, str]:
    evidence = item.evidence
    if evidence.get("excepted"):
        if names_an_event(evidence["excepted"]):
            return "right", f"the denial names an exception, so it denies only the rest: {evidence['excepted']!r}"[:200]
        return UNSURE, f"the denial names an exception that is no record: {evidence['excepted']!r}"[:200]
    if evidence.get("clearly_asserted"):
        return "wrong", "the sentence asserts the forbidden claim"
    if evidence.get("question"):
        return "right", "the matching sentence only asks"
    if evidence.get("conditional"):
        return "right", "the matching sentence only supposes it"
    return "right", "the matching sentence is negated"


def verdict_for(item: Item) -> tuple[str | None, str]:
    """The rules' verdict and reason for one open item."""
    if item.kind == "fact":
        return _fact(item)
    if item.kind == "number":
        if item.evidence.get("not_read_with_confidence"):
            return UNSURE, f"the rules cannot read this number one way: {item.evidence['not_read_with_confidence']}"[:200]
        if item.evidence.get("reads_two_ways"):
            return UNSURE, f"the number reads another way too: {', '.join(item.evidence['reads_two_ways'][:3])}"[:200]
        if item.evidence.get("contradicts"):
            # Read one way as a key fact's value, and the fact's true value differs (checks/unsourced.py).
            return "wrong", f"no source gives this number, and it contradicts {', '.join(item.evidence['contradicts'][:2])}"[:200]
        return "wrong", "no tool result, calculation or constant gives this number"
    if item.kind == "forbidden":
        return _forbidden(item)
    if item.kind in ("no_data", "failed_run"):
        return "missing", "the answer does not say so"
    if item.kind == "claim":
        return "wrong", "no service call backs this claim"
    if item.kind == "claims":
        return _claims(item)
    if item.kind == "report":
        return "missing", "the report does not tell the user this"
    return item.allowed[-1], "no rule for this item"


def _claims(item: Item, facts_stated: bool = False) -> tuple[str | None, str]:
    evidence = item.evidence
    if evidence.get("calculations_that_do_not_hold"):
        return "wrong", f"a shown calculation does not hold: {evidence['calculations_that_do_not_hold'][0]!r}"[:200]
    if evidence.get("denies_a_clash_the_records_show"):
        return "wrong", f"says nothing clashes, but a calendar event overlaps: {evidence['denies_a_clash_the_records_show'][0]!r}"[:200]
    for key, why in (("contradicts_its_record", "its own record reads otherwise"),
                     ("per_unit_as_total", "a per-unit price stated as a total")):
        if evidence.get(key):
            found = evidence[key][0]
            its = f" reads {found['its_values']}" if found.get("its_values") else ""
            return "wrong", f"{why}: {found.get('text')!r} ({found.get('records')}{its})"[:200]
    untraced = evidence.get("untraced") or []
    # "I can't tell whether ..." beside every key fact stated right is about something else;
    # beside a fact not stated it may deny what the records say: the owner reads it.
    if evidence.get("says_the_data_is_silent") and not facts_stated:
        return UNSURE, f"says the data is silent ({evidence['says_the_data_is_silent']!r}) where it answers"[:200]
    ids = [u for u in untraced if u.get("kind") == "id"]
    if ids:
        # An id or reference is an exact string: in the tools' outputs or the user's words, or
        # not (issue 30). One no source gave is invented, whatever else the message says.
        return "wrong", f"no tool result or user text gives the id {ids[0].get('text')!r}"[:200]
    if untraced:
        shown = ", ".join(repr(u.get("text")) for u in untraced[:3])
        return UNSURE, f"no tool result or user text gives {shown}"[:200]
    for key, why in (("of_another_record", "a value some tool gave, but of no record the sentence names"),
                     ("another_record_tied", "a record tied to another than the one its own record names"),
                     ("closed_record_said_open", "said outstanding or owed, where the records do not read so")):
        if evidence.get(key):
            found = evidence[key][0]
            return UNSURE, f"{why}: {found.get('text')!r} ({found.get('records')})"[:200]
    if evidence.get("parts_not_read"):
        return UNSURE, f"part of the message is in words the rules cannot read: {evidence['parts_not_read'][0]!r}"[:200]
    return "right", "every date, time and id stated is in a tool's output or the user's words"


def _facts_stated(items: list[Item], claims: Item) -> bool:
    """Whether every key fact of the claims item's turn was settled right by code."""
    turn = claims.id.rpartition("/")[0]
    facts = [i for i in items if i.kind == "fact" and i.id.rpartition("/")[0] == turn]
    return bool(facts) and all(i.verdict == "right" for i in facts)


def contest_for(item: Item) -> str | None:
    """Why the rules contest an item code settled right, or None: the settling sentence denies it."""
    if item.pending or item.settled_by != "check":
        return None
    denial = item.evidence.get("denied_in_clause")
    if denial:
        return f"the sentence that states the value also denies it: {denial!r}"[:200]
    return None


def judge_items(items: list[Item]) -> dict[str, dict[str, Any]]:
    """The verdicts of the open items (an unsure one has none: the cell waits for the owner),
    and ``contested`` entries for settled items the rules see contradicted."""
    verdicts: dict[str, dict[str, Any]] = {}
    for item in items:
        if not item.pending:
            reason = contest_for(item)
            if reason is not None:
                verdicts[item.id] = {"verdict": "contested", "confidence": 1.0, "reason": reason}
            continue
        if item.kind == "user_reply":  # the simulated user's reply (S6.12): unsure ones go to the owner
            verdict, reason, confidence = rules_verdict(item)
            verdicts[item.id] = {"verdict": verdict, "confidence": confidence, "reason": reason}
            continue
        if item.kind == "claims":
            verdict, reason = _claims(item, _facts_stated(items, item))
        else:
            verdict, reason = verdict_for(item)
        if verdict is UNSURE:
            # The rules cannot tell: the item keeps the reading most favourable to the assistant at
            # confidence 0.5, marked unsure, and the cell goes to the owner (queue reason "unsure"),
            # whose verdict replaces it; the tables count the cell as waiting until then.
            verdicts[item.id] = {"verdict": item.allowed[0], "confidence": 0.5, "reason": reason, "unsure": True}
            continue
        verdicts[item.id] = {"verdict": verdict, "confidence": 1.0, "reason": reason}
    return verdicts
