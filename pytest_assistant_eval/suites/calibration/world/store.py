"""Low-level SQLite helpers shared by the build, the services and the queries."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from . import schema


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    return conn


def connect_readonly(path: Path) -> sqlite3.Connection:
    """Open read-only through a ``mode=ro`` URI (the path may hold spaces and ä)."""
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True, isolation_level=None)
    conn.row_factory = sqlite3.Row
    return conn


def insert_row(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> None:
    cols = schema.columns(table)
    conn.execute(
        f'INSERT INTO "{table}" ({", ".join(chr(34) + c + chr(34) for c in cols)}) VALUES ({", ".join("?" for _ in cols)})',
        [row.get(c) for c in cols],
    )


def next_id(conn: sqlite3.Connection, table: str) -> str:
    """The next deterministic id of a table (``b-0004``...), advancing its counter."""
    prefix = schema.ID_PREFIXES[table]
    row = conn.execute("SELECT next FROM counters WHERE name = ?", (table,)).fetchone()
    n = int(row[0]) if row else 1
    conn.execute("INSERT OR REPLACE INTO counters (name, next) VALUES (?, ?)", (table, n + 1))
    return f"{prefix}{n:04d}"


def reseed_counters(conn: sqlite3.Connection) -> None:
    """Counters one past the highest numbered id present, so new ids never collide."""
    for table, prefix in schema.ID_PREFIXES.items():
        highest = 0
        for (key,) in conn.execute(f'SELECT "{schema.PRIMARY_KEYS[table]}" FROM "{table}"'):
            m = re.fullmatch(re.escape(prefix) + r"(\d+)", str(key))
            if m:
                highest = max(highest, int(m.group(1)))
        row = conn.execute("SELECT next FROM counters WHERE name = ?", (table,)).fetchone()
        current = int(row[0]) if row else 1
        conn.execute("INSERT OR REPLACE INTO counters (name, next) VALUES (?, ?)", (table, max(current, highest + 1)))


def rows(conn: sqlite3.Connection, table: str) -> list[dict[str, Any]]:
    pk = schema.PRIMARY_KEYS[table]
    cols = schema.columns(table)
    cur = conn.execute(f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}" ORDER BY "{pk}"')
    return [dict(zip(cols, r)) for r in cur.fetchall()]


def get(conn: sqlite3.Connection, table: str, key: str) -> dict[str, Any] | None:
    pk = schema.PRIMARY_KEYS[table]
    cols = schema.columns(table)
    r = conn.execute(
        f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}" WHERE "{pk}" = ?', (key,)
    ).fetchone()
    return dict(zip(cols, r)) if r else None
