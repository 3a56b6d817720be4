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

import yaml

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
    return Path(__file__).resolve().parents[2] / "calibration" / "world"


def _load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FixtureError(f"Fixture file {path} is missing.") from None
    except yaml.YAMLError as exc:
        raise FixtureError(f"Fixture file {path} is not valid YAML: {exc}") from None


def encode_row(table: str, row: dict[str, Any], where: str) -> dict[str, Any]:
    """A fixture record as database values (JSON text for lists, 0/1 for booleans)."""
    if not isinstance(row, dict):
        raise FixtureError(f"{where}: a {table} record must be a mapping, got {row!r}.")
    cols = schema.columns(table)
    unknown = sorted(set(row) - set(cols))
    if unknown:
        raise FixtureError(f"{where}: unknown field(s) {', '.join(unknown)} for table {table}; known: {', '.join(cols)}.")
    pk = schema.PRIMARY_KEYS[table]
    if not row.get(pk):
        raise FixtureError(f"{where}: a {table} record has no {pk}.")
    out: dict[str, Any] = {}
    for col in cols:
        value = row.get(col)
        if col in schema.JSON_COLUMNS.get(table, ()) and value is not None and not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        elif col in schema.BOOL_COLUMNS.get(table, ()) and value is not None:
            value = int(bool(value))
        elif isinstance(value, str) and col not in schema.JSON_COLUMNS.get(table, ()):
            value = value.rstrip("\n") if col != "body" else value
        out[col] = value
    return out


def encode_changes(table: str, changes: dict[str, Any], where: str) -> dict[str, Any]:
    cols = set(schema.columns(table))
    unknown = sorted(set(changes) - cols)
    if unknown:
        raise FixtureError(f"{where}: unknown field(s) {', '.join(unknown)} for table {table}.")
    out = {}
    for col, value in changes.items():
        if col in schema.JSON_COLUMNS.get(table, ()) and value is not None and not isinstance(value, str):
            value = json.dumps(value, ensure_ascii=False, sort_keys=True)
        elif col in schema.BOOL_COLUMNS.get(table, ()) and value is not None:
            value = int(bool(value))
        out[col] = value
    return out


def load_frame(source_dir: Path) -> dict[str, Any]:
    frame = _load_yaml(source_dir / "world.yaml")
    if not isinstance(frame, dict) or "now" not in frame:
        raise FixtureError(f"{source_dir / 'world.yaml'}: expected a mapping with at least 'now'.")
    return frame


def load_tables(source_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """Every fixture table as encoded rows, checked for duplicate ids."""
    tables: dict[str, list[dict[str, Any]]] = {}
    for table, filename in TABLE_FILES.items():
        path = source_dir / filename
        data = _load_yaml(path)
        if not isinstance(data, dict) or not isinstance(data.get(table), list):
            raise FixtureError(f"{path}: expected a top-level '{table}:' list.")
        rows = []
        seen: set[str] = set()
        for i, raw in enumerate(data[table]):
            row = encode_row(table, raw, f"{path} record {i + 1}")
            key = row[schema.PRIMARY_KEYS[table]]
            if key in seen:
                raise FixtureError(f"{path} record {i + 1}: duplicate id {key}.")
            seen.add(key)
            rows.append(row)
        tables[table] = rows
    return tables


def load_runs(source_dir: Path) -> dict[str, Any]:
    path = source_dir / "runs.yaml"
    data = _load_yaml(path)
    job = data.get("payments_batch") if isinstance(data, dict) else None
    if not isinstance(job, dict) or len(job.get("runs") or []) < 2:
        raise FixtureError(f"{path}: expected 'payments_batch' with at least two runs (one that succeeds, one that fails).")
    return job


def load_variants(source_dir: Path) -> dict[str, dict[str, Any]]:
    """``name -> {"purpose": str, "changes": [...]}``, sorted by name."""
    out: dict[str, dict[str, Any]] = {}
    vdir = source_dir / "variants"
    if not vdir.is_dir():
        return out
    for path in sorted(vdir.glob("*.yaml")):
        name = path.stem
        if name == "base" or not name.replace("_", "").replace("-", "").isalnum():
            raise FixtureError(f"{path}: variant name {name!r} is not allowed (letters, digits, '_' and '-'; not 'base').")
        data = _load_yaml(path)
        if not isinstance(data, dict) or not isinstance(data.get("changes"), list) or not data.get("purpose"):
            raise FixtureError(f"{path}: expected 'purpose:' (text) and 'changes:' (a list).")
        changes = []
        for i, change in enumerate(data["changes"]):
            where = f"{path} change {i + 1}"
            if not isinstance(change, dict) or change.get("table") not in schema.TABLES or change["table"] in ("meta", "counters", "runs"):
                raise FixtureError(f"{where}: 'table' must be one of the record tables.")
            table = change["table"]
            if "insert" in change:
                changes.append({"table": table, "insert": encode_row(table, change["insert"], where)})
            elif "set" in change and "key" in change:
                if not isinstance(change["set"], dict):
                    raise FixtureError(f"{where}: 'set' must be a mapping of field: value.")
                changes.append({"table": table, "key": change["key"], "set": encode_changes(table, change["set"], where)})
            elif "delete" in change:
                changes.append({"table": table, "delete": change["delete"]})
            else:
                raise FixtureError(f"{where}: expected 'insert: {{...}}', 'key:' with 'set: {{...}}', or 'delete: <id>'.")
        out[name] = {"purpose": " ".join(str(data["purpose"]).split()), "changes": changes}
    return out


def apply_changes(conn: sqlite3.Connection, changes: list[dict[str, Any]], where: str) -> None:
    for change in changes:
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
