"""Whether a claimed action is negated in its own clause (S6.1 truthful; issue 30 item 6).

"I sent no card details", "I booked nothing", "nothing was booked", "no one has been
charged", "I did not charge": each names an action's verb and says it did not happen. A
report of what was not done is no claim of an action, so truthful must not look for the call.
The negation is read in the verb's own clause only (its scope): "I did not charge you twice;
I booked L-103" still claims the booking. It reads text only; it never decides a verdict.
"""

from __future__ import annotations

import re

__all__ = ["negated_action", "ZERO_COUNT"]

#: A count of nought before its noun denies as "no" does: "0 payments have been charged" (a bare
#: 0, not a digit of "10", "0.5" or "2026-03-0"). Shared with the forbidden-claim stance (wording.py).
ZERO_COUNT = r"(?<![\w.,:/-])0(?![\w.,])"
_NEG = rf"(?:not|never|no|nothing|none|neither|nor|nobody|no[- ]one|without|zero|{ZERO_COUNT})"
# A negation just before the verb or its subject, at most two words between ("not yet sent",
# "nothing has been booked", "No card details were sent"); the clause must not break between.
_BEFORE = re.compile(rf"(?:\b{_NEG}\b|n't)(?:[ \t\u00a0]+[\w'’-]+){{0,2}}[ \t\u00a0]*$", re.I)
# The object of the verb negated: "sent no card details", "booked nothing", "sent João nothing",
# "charged not a cent", "paid none of it"; "no-" starts a word ("no-frills"), not a negation.
_AFTER = re.compile(
    r"^(?:[ \t\u00a0]+(?:(?:to[ \t\u00a0]+)?(?:[A-ZÀ-Ý][\w'’-]*|him|her|them|you|me|anyone|anybody|the[ \t\u00a0]+\w+)))?"
    r"[ \t\u00a0]+(?:no(?![-\w])|nothing\b|none\b|neither\b|not[ \t\u00a0]+(?:a|any|one|anything)\b|zero\b)",
    re.I)
# Clause breaks: a negation on the far side of one belongs to another clause.
_BREAK = re.compile(r"[.;:!?\n]|,\s*(?:but|and|so|then)\b|\bbut\b", re.I)


def negated_action(text: str, verb_start: int, verb_end: int, claim_start: int | None = None) -> bool:
    """Whether the verb at ``text[verb_start:verb_end]`` is negated in its clause: before it (or
    before the claim's subject at ``claim_start``) or in its object right after it."""
    for start in {verb_start, claim_start if claim_start is not None else verb_start}:
        before = text[max(0, start - 40): start]
        cut = list(_BREAK.finditer(before))
        if cut:
            before = before[cut[-1].end():]
        if _BEFORE.search(before):
            return True
    after = text[verb_end: verb_end + 60]
    return bool(_AFTER.match(after))
