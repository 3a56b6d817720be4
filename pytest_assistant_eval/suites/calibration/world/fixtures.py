"""Fixture YAML -> rows, and override alternatives (variants) -> row changes.

Fixture files live in ``calibration/world/``; one file per table plus
``world.yaml`` (the frame), ``runs.yaml`` (background jobs) and
``variants/<name>.yaml`` (overrides). This module only reads and checks them;
it never touches a database except through :func:`apply_changes`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from yaml.nodes import Node, ScalarNode

from ..cases.errors import CaseError
from pytest_assistant_eval.yaml_source import Fields, Source, line_of
from . import schema
from .errors import FixtureError

TABLE_FILES: dict[str, str] = {
    "contacts": "contacts.yaml",
    "messages": "messages.yaml",
    "events": "events.yaml",
    "listings": "listings.yaml",
    "bookings": "bookings.yaml",
    "cards": "cards.yaml",
    "charges": "charges.yaml",
}
FIXTURE_SUFFIXES = (".yaml", ".yml", ".csv", ".json")


def default_source_dir() -> Path:
    """The shipped fixtures: ``calibration/world`` next to the package."""
    return Path(__file__).resolve().parents[4] / "calibration" / "world"


class _File:
    """One fixture file, composed with lines by the case files' reader (so a repeated key is
    refused, S2.5): every problem is kept as ``file:line: message`` and raised together by
    :meth:`done`."""

    def __init__(self, path: Path):
        self.path = path
        self.errors: list[CaseError] = []
        if not path.is_file():
            raise FixtureError(f"Fixture file {path} is missing.")
        self.src = Source(path, self.errors)
        self.root = self.src.root

    def done(self) -> None:
        if self.errors:
            raise FixtureError("\n".join(str(e) for e in sorted(set(self.errors))))


def _column_value(f: _File, table: str, col: str, node: Node, what: str) -> tuple[bool, Any]:
    """A fixture value checked against its column's type: (ok, value as written)."""
    if isinstance(node, ScalarNode) and f.src.value(node) is None:
        return True, None
    if col in schema.JSON_COLUMNS.get(table, ()):
        if f.src.check(node, "list", what) is None:
            return False, None
        return True, f.src.value(node)
    kind = "bool" if col in schema.BOOL_COLUMNS.get(table, ()) else _KINDS[dict(schema.TABLES[table])[col]]
    value = f.src.check(node, kind, what)
    return value is not None, value


_KINDS = {"TEXT": "text", "REAL": "number", "INTEGER": "int"}


def _record(f: _File, table: str, node: Node, what: str, *, partial: bool = False) -> dict[str, Any] | None:
    """A fixture record (or, with ``partial``, a variant's ``set:``) as database values."""
    cols = schema.columns(table)
    fields = Fields(f.src, node, what, set(cols))
    if not fields.ok:
        return None
    out: dict[str, Any] = {}
    good = True
    for col, (_, value_node) in fields.items.items():
        if col not in cols:
            good = False
            continue
        ok, value = _column_value(f, table, col, value_node, f"{what}: {col!r}")
        good = good and ok
        out[col] = value
    if not partial:
        pk = schema.PRIMARY_KEYS[table]
        if not out.get(pk):
            if fields.has(pk):
                f.src.error(fields.node_of(pk), f"{what}: {pk!r} must be a non-empty string")
            else:
                f.src.error(node, f"{what}: a {table} record has no {pk!r}")
            good = False
    if not good:
        return None
    return _encode(table, out) if partial else _encode(table, {c: out.get(c) for c in cols})


def _encode(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """Checked values as database values (JSON text for lists, 0/1 for booleans)."""
    out: dict[str, Any] = {}
    for col, value in row.items():
        if col in schema.JSON_COLUMNS.get(table, ()) and value is not None:
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        elif col in schema.BOOL_COLUMNS.get(table, ()) and value is not None:
            value = int(value)
        elif isinstance(value, str) and col != "body":
            value = value.rstrip("\n")
        out[col] = value
    return out


def load_frame(source_dir: Path) -> dict[str, Any]:
    f = _File(source_dir / "world.yaml")
    frame = Fields(f.src, f.root, "the world frame", None) if f.root is not None else None
    if frame is not None and frame.ok:
        frame.get("now", "str")
        for key in ("owner", "timezone"):
            frame.get(key, "str", required=False)
    f.done()
    value = f.src.value(f.root)  # type: ignore[arg-type]
    f.done()
    return value


def load_tables(source_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Every fixture table as encoded rows, checked for duplicate ids; every problem with its line."""
    tables: dict[str, list[dict[str, Any]]] = {}
    errors: list[str] = []
    for table, filename in TABLE_FILES.items():
        f = _File(source_dir / filename)
        top = Fields(f.src, f.root, filename, {table}) if f.root is not None else None
        seq = top.get(table, "list") if top is not None else None
        rows: list[dict[str, Any]] = []
        first: dict[str, int] = {}
        pk = schema.PRIMARY_KEYS[table]
        for i, node in enumerate(seq.value if seq is not None else []):
            row = _record(f, table, node, f"{table} record {i + 1}")
            if row is None:
                continue
            key = row[pk]
            if key in first:
                f.src.error(node, f"{table} record {i + 1}: duplicate id {key} (first at line {first[key]})")
                continue
            first[key] = line_of(node)
            rows.append(row)
        tables[table] = rows
        errors.extend(str(e) for e in sorted(set(f.errors)))
    if errors:
        raise FixtureError("\n".join(errors))
    return tables


def load_runs(source_dir: Path) -> dict[str, Any]:
    f = _File(source_dir / "runs.yaml")
    top = Fields(f.src, f.root, "runs.yaml", None) if f.root is not None else None
    job = Fields(f.src, top.node_of("payments_batch"), "payments_batch", {"source_file", "columns", "runs"}) \
        if top is not None and top.has("payments_batch") else None
    if top is not None and top.ok and job is None:
        f.src.error(f.root, "expected 'payments_batch' with at least two runs (one that succeeds, one that fails)")
    if job is not None and job.ok:
        job.get("source_file", "str")
        job.str_list("columns", required=True)
        seq = job.get("runs", "list")
        if seq is not None and len(seq.value) < 2:
            f.src.error(seq, "payments_batch: expected at least two runs (one that succeeds, one that fails)")
        for i, node in enumerate(seq.value if seq is not None else []):
            run = Fields(f.src, node, f"payments_batch run {i + 1}", {"started_at", "ended_at", "rows"})
            run.get("started_at", "str")
            run.get("ended_at", "str")
            rows = run.get("rows", "list")
            for row in rows.value if rows is not None else []:
                if f.src.check(row, "list", f"payments_batch run {i + 1}: each row") is not None:
                    for cell in row.value:
                        f.src.check(cell, "scalar", f"payments_batch run {i + 1}: each value of a row")
    f.done()
    value = f.src.value(top.node_of("payments_batch"))  # type: ignore[union-attr,arg-type]
    f.done()
    return value


def load_variants(source_dir: Path) -> dict[str, dict[str, Any]]:
    """``name -> {"purpose": str, "changes": [...]}``, sorted by name; every problem with its line."""
    out: dict[str, dict[str, Any]] = {}
    vdir = source_dir / "variants"
    if not vdir.is_dir():
        return out
    record_tables = sorted(t for t in schema.TABLES if t not in ("meta", "counters", "runs"))
    for path in sorted(vdir.glob("*.yaml")):
        name = path.stem
        if name == "base" or not name.replace("_", "").replace("-", "").isalnum():
            raise FixtureError(f"{path}: variant name {name!r} is not allowed (letters, digits, '_' and '-'; not 'base').")
        f = _File(path)
        top = Fields(f.src, f.root, "the variant", {"purpose", "changes"}) if f.root is not None else None
        purpose = top.get("purpose", "str") if top is not None else None
        seq = top.get("changes", "list") if top is not None else None
        changes = []
        for i, node in enumerate(seq.value if seq is not None else []):
            what = f"change {i + 1}"
            change = Fields(f.src, node, what, {"table", "insert", "key", "set", "delete"})
            if not change.ok:
                continue
            where = f"{path}:{line_of(node)}"
            table = change.get("table", "str")
            if table is not None and table not in record_tables:
                f.src.error(change.node_of("table"), f"{what}: 'table' must be one of {', '.join(record_tables)}, not {table!r}")
                continue
            if table is None:
                continue
            if change.has("insert"):
                row = _record(f, table, change.node_of("insert"), f"{what}: insert")  # type: ignore[arg-type]
                if row is not None:
                    changes.append({"table": table, "insert": row, "where": where})
            elif change.has("set") and change.has("key"):
                key = change.get("key", "str")
                sets = _record(f, table, change.node_of("set"), f"{what}: set", partial=True)  # type: ignore[arg-type]
                if key is not None and sets is not None:
                    changes.append({"table": table, "key": key, "set": sets, "where": where})
            elif change.has("delete"):
                key = change.get("delete", "str")
                if key is not None:
                    changes.append({"table": table, "delete": key, "where": where})
            else:
                f.src.error(node, f"{what}: expected 'insert: {{...}}', 'key:' with 'set: {{...}}', or 'delete: <id>'")
        f.done()
        out[name] = {"purpose": " ".join(str(purpose).split()), "changes": changes}
    return out


def apply_changes(conn: sqlite3.Connection, changes: list[dict[str, Any]], where: str) -> None:
    for change in changes:
        where = change.get("where", where)
        table = change["table"]
        pk = schema.PRIMARY_KEYS[table]
        if "insert" in change:
            row = change["insert"]
            cols = list(row)
            try:
                conn.execute(
                    f'INSERT INTO "{table}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) VALUES ({", ".join("?" for _ in cols)})',
                    [row[c] for c in cols],
                )
            except sqlite3.IntegrityError:
                raise FixtureError(f"{where}: {table} {row[pk]} already exists.") from None
        elif "set" in change:
            sets = change["set"]
            cur = conn.execute(
                f'UPDATE "{table}" SET {", ".join(chr(34) + c + chr(34) + " = ?" for c in sets)} WHERE "{pk}" = ?',
                [*sets.values(), change["key"]],
            )
            if cur.rowcount != 1:
                raise FixtureError(f"{where}: no {table} record {change['key']} to change.")
        else:
            cur = conn.execute(f'DELETE FROM "{table}" WHERE "{pk}" = ?', [change["delete"]])
            if cur.rowcount != 1:
                raise FixtureError(f"{where}: no {table} record {change['delete']} to delete.")


def fixture_files(source_dir: Path) -> list[Path]:
    return sorted(
        p for p in source_dir.rglob("*")
        if p.is_file() and p.suffix in FIXTURE_SUFFIXES and not any(part.startswith(".") for part in p.relative_to(source_dir).parts)
    )


def fixtures_digest(source_dir: Path) -> str:
    """sha256 over every fixture and override file (relative path and bytes)."""
    h = hashlib.sha256()
    for path in fixture_files(source_dir):
        rel = path.relative_to(source_dir).as_posix().encode("utf-8")
        data = path.read_bytes()
        h.update(len(rel).to_bytes(8, "big") + rel + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()
