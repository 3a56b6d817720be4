"""An unsourced number is unsure unless it contradicts a value it is said of (issue 30, fourth round).

Offline, code decides only what it reads one way. A number, date or time the answer states that
no tool result, user text, constant or shown calculation gives may still be true: written in a
style the readers do not know ("0,35 km x 1 000", "20MAR26 1500Z", "15 h 30"), a quantity derived
in a way no reader follows, or a true fact of the world the assistant stated without looking.
Counting it invented made well-answered cells silently ``failed`` on every unseen style. So an
unsourced number is handed to the owner as **unsure** (``scripted:rules``), and stays a certain
``wrong`` only when it is read one way as the value of a key fact whose true value differs: the
fact check kept it in that fact's ``values_of_the_kind`` (a contradiction: "4.3 km" for 3.4 km).
Ids, references and exact strings are not numbers here: ``claims`` settles them (an id no source
gave is wrong, certain).
"""

from __future__ import annotations

from pytest_assistant_eval.judging.items import Item

__all__ = ["mark_contradictions"]


def mark_contradictions(numbers: list[Item], items: list[Item]) -> None:
    """Record on each unsourced-number item the key facts it contradicts (``contradicts``): the
    pending facts whose evidence keeps this number's position as another value of their kind."""
    against: dict[int, list[str]] = {}
    for item in items:
        if item.kind != "fact" or not item.pending:
            continue
        for start in item.evidence.get("values_at") or []:
            against.setdefault(int(start), []).append(item.id)
    for number in numbers:
        start = int(number.id.split(":", 1)[1])
        if start in against:
            number.evidence["contradicts"] = sorted(set(against[start]))
