"""What a user reply says against what its side channel records (S5.2, S6.12; issue 30 item 4).

Read alike for the scripted and the model-played user, at run time (``check_user_reply``) and
when a recorded run is graded (``grading.user_replies``): a reply whose words consent while its
fields give no approval (or refuse while they give one) contradicts itself, and a fact it
discloses with a value other than the task's is a wrong fact. Both are the user's mistakes,
never the assistant's. It reads text only; it never decides what the user says.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from pytest_assistant_eval.cases.model import Task
from pytest_assistant_eval.reading.wording import states_value

__all__ = ["consent_in_words", "self_contradiction", "wrong_fact_values"]

_YES = re.compile(
    r"^[\W_]*(?:yes|yeah|yep|yup|sure|ok(?:ay)?|alright|all right|agreed|approved|confirmed?|go ahead|go for it|"
    r"do it|please do|please go ahead|please proceed|proceed|sounds good|that'?s fine|fine by me|perfect,? (?:go|book|send|pay))\b",
    re.I)
_NO = re.compile(r"^[\W_]*(?:no|nope|don'?t|do not|please don'?t|please do not|not (?:that|this|now)|stop)\b", re.I)
# "OK, thanks" and "Yes, thank you, that is all" close a conversation: they consent to nothing.
_CLOSING = re.compile(r"\b(?:thanks|thank you|that'?s all|that is all|nothing else|all i needed)\b", re.I)


def consent_in_words(message: str) -> bool | None:
    """True when the words say yes to a proposal, False when they say no, None when neither."""
    if _NO.match(message):
        return False
    if _YES.match(message):
        return True
    return None


def self_contradiction(structured: Mapping[str, Any], asked_confirmation: bool) -> str | None:
    """Why a structured reply contradicts its own message, or None.

    Consent in words with no approval in the fields counts only as an answer to a message that
    asked for a yes (an "OK, thanks" to a report consents to nothing); an approval in the fields
    with a no in the words always contradicts itself."""
    message = " ".join(str(structured.get("message") or "").split())
    given = list(structured.get("approvals_given") or [])
    words = consent_in_words(message)
    if given and words is False:
        return f"its fields give {', '.join(given)} but its words refuse: {message[:120]!r}"
    if (words is True and asked_confirmation and not given and not structured.get("approvals_refused")
            and not structured.get("facts_disclosed") and not structured.get("done")
            and not (_CLOSING.search(message) and len(message.split()) <= 8)):
        return f"its words consent ({message[:120]!r}) but its fields give no approval"
    return None


def wrong_fact_values(task: Task, structured: Mapping[str, Any]) -> list[str]:
    """Each disclosed fact whose value the reply does not state (it states another): "the user
    disclosed deposit as 'It is 200 EUR.', the task's value is 150"."""
    message = str(structured.get("message") or "")
    facts = {f.id: f for f in task.facts}
    out = []
    for fact_id in structured.get("facts_disclosed") or []:
        fact = facts.get(fact_id)
        if fact is None or isinstance(fact.value, bool) or fact.value is None:
            continue
        own = fact.answer.format(value=fact.value) if fact.answer else str(fact.value)
        if not states_value(own, fact.value):
            continue  # the task's own words for it ("5 April" for 2026-04-05) are not read by value
        if not states_value(message, fact.value):
            out.append(f"the user disclosed {fact_id} as {' '.join(message.split())[:120]!r}, "
                       f"but the task's value is {fact.value!r}")
    return out
