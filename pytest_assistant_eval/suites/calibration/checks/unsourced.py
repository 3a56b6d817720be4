"""An unsourced number is unsure unless it contradicts a value it is said of (issue 30, fourth round).

Offline, code decides only what it reads one way. A number, date or time the answer states that
no tool result, user text, constant or shown calculation gives may still be true: written in a
style the readers do not know ("0,35 km x 1 000", "20MAR26 1500Z", "15 h 30"), a quantity derived
in a way no reader follows, or a true fact of the world the assistant stated without looking.
Counting it invented made well-answered cells silently ``failed`` on every unseen style. So an
unsourced number is handed to the owner as **unsure** (``scripted:rules``), and stays a certain
``wrong`` only when it is read one way as the value of a key fact whose true value differs: the
fact check kept it in that fact's ``values_of_the_kind`` (a contradiction: "4.3 km" for 3.4 km), or
when its digits are a source's value with another prefix of the same unit ("1.5 MB" where the tools
gave 1500 MB, i.e. 1.5 GB): the same digits, read one way as a unit error on a given value.
Ids, references and exact strings are not numbers here: ``claims`` settles them (an id no source
gave is wrong, certain).
"""

from __future__ import annotations

from dataclasses import replace

from pytest_assistant_eval.judging.items import Item
from pytest_assistant_eval.suites.calibration.readers.numbers import Quantity
from pytest_assistant_eval.suites.calibration.readers.sources import is_sourced
from pytest_assistant_eval.suites.calibration.readers.units import UNITS

__all__ = ["mark_contradictions"]


def another_prefix(q: Quantity, sources: list[tuple[float, str | None]]) -> str | None:
    """The unit of ``q``'s dimension, other than its own, in which its digits are a source's value
    ("1.5 MB" -> "GB" when a tool gave 1500 MB), else None. Only units that differ by a prefix
    (another scale of one dimension) count: a number sourced only that way is a wrong prefix."""
    if q.unit is None or q.unit not in UNITS:
        return None
    dimension, scale = UNITS[q.unit]
    for unit, (dim, other) in UNITS.items():
        if dim == dimension and other != scale and is_sourced(replace(q, unit=unit), sources):
            return unit
    return None


def mark_contradictions(numbers: list[Item], items: list[Item], quantities: list[Quantity] = (),  # type: ignore[assignment]
                        sources: list[tuple[float, str | None]] = ()) -> None:  # type: ignore[assignment]
    """Record on each unsourced-number item the key facts it contradicts (``contradicts``): the
    pending facts whose evidence keeps this number's position as another value of their kind, and
    a source value its digits state with another prefix (``another_prefix_of``)."""
    by_start = {q.start: q for q in quantities}
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
        q = by_start.get(start)
        unit = another_prefix(q, list(sources)) if q is not None else None
        if unit is not None:
            number.evidence["contradicts"] = [*number.evidence.get("contradicts", []),
                                              f"a given value in {unit} (another prefix)"]
