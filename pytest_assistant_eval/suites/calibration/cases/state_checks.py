"""Final-state assertions (S2.4): compare a task's expected state with the world's
final state and report each difference as one readable line.

It reads a :data:`~pytest_assistant_eval.conversation.backend.State` (table -> rows) and never
touches a database, so records can be checked again long after the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Iterable

from pytest_assistant_eval.conversation.backend import State
from .matchers import canonical, describe, matches
from .model import StateAssertion

__all__ = ["StateMismatch", "check_state", "format_mismatches"]


def _fmt_where(where: dict[str, Any]) -> str:
    if not where:
        return "(all rows)"
    return ", ".join(f"{k}={v!r}" for k, v in where.items())


@dataclass(frozen=True)
class StateMismatch:
    """One difference. ``field`` is None for a whole-selection problem (missing table,
    wrong number of rows); ``row`` is the offending row without its ignored fields."""

    table: str
    where: dict[str, Any]
    field: str | None
    expected: str
    actual: str
    row: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        what = "rows" if self.field is None else self.field
        return f"{self.table} where {_fmt_where(self.where)}: {what}: expected {self.expected}, actual {self.actual}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "where": self.where,
            "field": self.field,
            "expected": self.expected,
            "actual": self.actual,
            "row": self.row,
        }


def _selects(row: dict[str, Any], where: dict[str, Any]) -> bool:
    return all(k in row and canonical(row[k]) == canonical(v) for k, v in where.items())


def check_state(assertions: Iterable[StateAssertion], state: State) -> list[StateMismatch]:
    """Every mismatch between ``assertions`` and ``state``; empty when the state is as expected.

    A ``count`` is checked first; without one, at least one row must be selected when
    fields are asserted. Fields listed in ``ignore`` are neither checked nor shown.
    """
    out: list[StateMismatch] = []
    for a in assertions:
        if a.table not in state:
            out.append(StateMismatch(a.table, dict(a.where), None, "the table", "no such table"))
            continue
        selected = [r for r in state[a.table] if _selects(r, a.where)]
        if a.count is not None and len(selected) != a.count:
            out.append(StateMismatch(a.table, dict(a.where), None, f"{a.count} row(s)", f"{len(selected)} row(s)"))
            continue
        if a.count is None and not selected and a.fields:
            out.append(StateMismatch(a.table, dict(a.where), None, "at least 1 row", "0 rows"))
            continue
        for row in selected:
            shown = {k: v for k, v in row.items() if k not in a.ignore}
            for name, m in a.fields.items():
                if name in a.ignore:
                    continue
                if name not in row:
                    out.append(StateMismatch(a.table, dict(a.where), name, describe(m), "no such field", shown))
                elif not matches(m, row[name]):
                    out.append(StateMismatch(a.table, dict(a.where), name, describe(m), repr(row[name]), shown))
    return out


def format_mismatches(mismatches: Iterable[StateMismatch]) -> str:
    """One line per mismatch, as a diff reads in a failure message or a record."""
    return "\n".join(str(m) for m in mismatches)
