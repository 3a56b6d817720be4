"""States of a world as plain data: digests and field-level diffs (S1.2, S6.1).

A state is ``table -> rows`` with rows sorted by primary key (see backend.State).
"""

from __future__ import annotations

import hashlib
import json
import marshal
from dataclasses import dataclass
from typing import Any

from . import schema
from pytest_assistant_eval.conversation.backend import FieldChange, State  # noqa: F401 - FieldChange is every backend's


def canonical_json(state: State) -> str:
    return json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def state_digest(state: State) -> str:
    """sha256 of the state's canonical JSON. The last few states digested are kept as marshal bytes with
    their digest: a cell's start and final states are mostly the variant's start state again, and equal
    bytes (marshal keeps every type: ``1``, ``1.0`` and ``True`` differ) give the same canonical JSON."""
    try:
        raw = marshal.dumps(state, 0)  # version 0: no references or interning, so the bytes depend on the data alone
    except ValueError:  # not plain data: digested every time
        raw = None
    for kept, digest in _DIGESTS:
        if kept == raw:
            return digest
    digest = hashlib.sha256(canonical_json(state).encode("utf-8")).hexdigest()
    if raw is not None:
        _DIGESTS.insert(0, (raw, digest))
        del _DIGESTS[4:]
    return digest


#: (a state's marshal bytes, its digest), the latest first.
_DIGESTS: list[tuple[bytes, str]] = []


def _pk(table: str, row: dict[str, Any]) -> str:
    name = schema.PRIMARY_KEYS.get(table)
    if name is not None and name in row:
        return str(row[name])
    for guess in ("id", "key", "name"):
        if guess in row:
            return str(row[guess])
    return json.dumps(row, sort_keys=True)


def diff_states(a: State, b: State) -> list[FieldChange]:
    """Every difference from ``a`` to ``b``, ordered by table, key and field."""
    out: list[FieldChange] = []
    for table in sorted(set(a) | set(b)):
        if table in a and table in b and a[table] == b[table]:
            continue  # equal rows, no change (most tables of a cell: one comparison, not a field-by-field walk;
            # a state read from SQLite holds no NaN, the one value a field-by-field ``!=`` would call changed)
        out.extend(table_changes(table, a.get(table, []), b.get(table, [])))
    return out


def table_changes(table: str, rows_a: list[dict[str, Any]], rows_b: list[dict[str, Any]]) -> list[FieldChange]:
    """One table's differences, row by row (by primary key) and field by field."""
    by_key_a = {_pk(table, r): r for r in rows_a}
    by_key_b = {_pk(table, r): r for r in rows_b}
    out: list[FieldChange] = []
    for key in sorted(set(by_key_a) | set(by_key_b)):
        ra, rb = by_key_a.get(key), by_key_b.get(key)
        if ra is None:
            out.append(FieldChange(table, key, None, None, rb))
        elif rb is None:
            out.append(FieldChange(table, key, None, ra, None))
        else:
            out.extend(FieldChange(table, key, name, ra.get(name), rb.get(name))
                       for name in sorted(set(ra) | set(rb)) if ra.get(name) != rb.get(name))
    return out
