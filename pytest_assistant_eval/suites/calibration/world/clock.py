"""The world's fixed clock: every run of a cell sees the same "now" (S1.2).

Nothing in the world reads the machine's clock except the build, which records
when it was made (so two builds never hash the same).
"""

from __future__ import annotations

from datetime import date, datetime, timezone
from zoneinfo import ZoneInfo

NOW = datetime(2026, 3, 16, 9, 0, 0, tzinfo=timezone.utc)
NOW_ISO = NOW.isoformat()
TODAY = NOW.date()
WORLD_TZ = ZoneInfo("Europe/Lisbon")


def parse_datetime(text: str) -> datetime:
    """An ISO date-time; a naive one is read as the world's local time (Lisbon)."""
    value = datetime.fromisoformat(text)
    if value.tzinfo is None:
        value = value.replace(tzinfo=WORLD_TZ)
        # store a fixed offset, not a zone name, so rows stay plain ISO text
        value = value.replace(tzinfo=timezone(value.utcoffset()))  # type: ignore[arg-type]
    return value


def parse_date(text: str) -> date:
    return date.fromisoformat(text)


def build_timestamp() -> str:
    """The real time of a build (the only place the machine clock is used)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")
