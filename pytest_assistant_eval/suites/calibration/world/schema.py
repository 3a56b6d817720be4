"""The world's SQLite schema: one table per kind of record, one primary key each.

Columns carry their unit in the name (``distance_km``, ``attachment_mb``...).
List-valued columns (recipients, attendees, input checks) hold JSON text.
This module must stay free of behaviour: services and the build read it.
"""

from __future__ import annotations

FORMAT = 1
"""Version of the database layout (recorded in ``meta`` and in the marker)."""

TABLES: dict[str, list[tuple[str, str]]] = {
    "meta": [("key", "TEXT"), ("value", "TEXT")],
    "counters": [("name", "TEXT"), ("next", "INTEGER")],
    "contacts": [
        ("id", "TEXT"), ("name", "TEXT"), ("email", "TEXT"), ("phone", "TEXT"),
        ("company", "TEXT"), ("city", "TEXT"), ("active", "INTEGER"), ("note", "TEXT"),
    ],
    "messages": [
        ("id", "TEXT"), ("folder", "TEXT"), ("sender", "TEXT"), ("recipients", "TEXT"),
        ("subject", "TEXT"), ("body", "TEXT"), ("sent_at", "TEXT"),
        ("attachment_name", "TEXT"), ("attachment_mb", "REAL"),
    ],
    "events": [
        ("id", "TEXT"), ("title", "TEXT"), ("start", "TEXT"), ("end", "TEXT"),
        ("place", "TEXT"), ("attendees", "TEXT"), ("organizer", "TEXT"), ("status", "TEXT"),
    ],
    "listings": [
        ("id", "TEXT"), ("kind", "TEXT"), ("title", "TEXT"), ("city", "TEXT"),
        ("price_amount", "REAL"), ("price_currency", "TEXT"), ("distance_km", "REAL"),
        ("area_m2", "REAL"), ("kwh_per_year", "REAL"), ("seller", "TEXT"),
        ("available_from", "TEXT"), ("available_until", "TEXT"), ("active", "INTEGER"),
        ("description", "TEXT"),
    ],
    "bookings": [
        ("id", "TEXT"), ("listing", "TEXT"), ("card", "TEXT"), ("start_date", "TEXT"),
        ("end_date", "TEXT"), ("nights", "INTEGER"), ("amount", "REAL"), ("currency", "TEXT"),
        ("status", "TEXT"), ("cancel_reason", "TEXT"), ("created_at", "TEXT"),
        ("cancelled_at", "TEXT"),
    ],
    "cards": [
        ("id", "TEXT"), ("holder", "TEXT"), ("brand", "TEXT"), ("last4", "TEXT"),
        ("expiry", "TEXT"), ("limit_eur", "REAL"), ("balance_eur", "REAL"),
        ("blocked", "INTEGER"), ("label", "TEXT"),
    ],
    "charges": [
        ("id", "TEXT"), ("card", "TEXT"), ("merchant", "TEXT"), ("amount", "REAL"),
        ("currency", "TEXT"), ("status", "TEXT"), ("decline_reason", "TEXT"),
        ("created_at", "TEXT"), ("memo", "TEXT"), ("booking", "TEXT"), ("run", "TEXT"),
    ],
    "runs": [
        ("id", "TEXT"), ("kind", "TEXT"), ("status", "TEXT"), ("started_at", "TEXT"),
        ("ended_at", "TEXT"), ("source_file", "TEXT"), ("source_sha256", "TEXT"),
        ("input_checks", "TEXT"), ("error_log", "TEXT"), ("rows_applied", "INTEGER"),
    ],
}

PRIMARY_KEYS: dict[str, str] = {name: cols[0][0] for name, cols in TABLES.items()}
JSON_COLUMNS: dict[str, tuple[str, ...]] = {
    "messages": ("recipients",),
    "events": ("attendees",),
    "runs": ("input_checks",),
}
BOOL_COLUMNS: dict[str, tuple[str, ...]] = {
    "contacts": ("active",),
    "listings": ("active",),
    "cards": ("blocked",),
}
ID_PREFIXES: dict[str, str] = {
    "messages": "m-",
    "events": "e-",
    "bookings": "b-",
    "charges": "ch-",
}
"""Tables whose new rows get deterministic ids from the ``counters`` table."""


def columns(table: str) -> list[str]:
    return [name for name, _ in TABLES[table]]


def create_sql() -> str:
    parts = []
    for table, cols in TABLES.items():
        pk = cols[0][0]
        body = ", ".join(f'"{name}" {kind}' for name, kind in cols)
        parts.append(f'CREATE TABLE "{table}" ({body}, PRIMARY KEY ("{pk}"));')
    return "\n".join(parts)
