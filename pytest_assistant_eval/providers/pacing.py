"""Pacing and the daily request budget, shared through the ledger (S4.6, S4.11, S4.14).

Before every request :meth:`Pacer.before_request` takes the ledger's lock, checks today's
budget, reserves the next start slot and counts the request; it then sleeps *outside* the
lock until its slot, so several processes on one route queue up without ever starting two
requests closer than the spacing. The spacing is the largest of ``--pace``, the interval
learned from rate limits, the preset's starting interval and the provider's request-limit
headers (a small safety margin is added to everything but ``--pace``, because requests
arrive a few milliseconds after their slot). A 429's ``Retry-After`` holds every process
back until it has passed.

``clock`` is wall-clock time (``time.time``): it is shared between processes and its UTC
date is the budget's day. Tests inject ``clock`` and ``sleep``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

from pytest_assistant_eval.providers.errors import BudgetUsed
from pytest_assistant_eval.providers.http import parse_duration
from pytest_assistant_eval.providers.ledger import Ledger

#: Headers giving the number of requests allowed per minute.
LIMIT_HEADERS = ("x-ratelimit-limit-requests", "anthropic-ratelimit-requests-limit")
REMAINING_HEADERS = {
    "x-ratelimit-remaining-requests": "x-ratelimit-reset-requests",
    "anthropic-ratelimit-requests-remaining": "anthropic-ratelimit-requests-reset",
}
MAX_LEARNED_INTERVAL = 60.0


def utc_day(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).date().isoformat()


def interval_from_headers(headers: Mapping[str, str] | None) -> float | None:
    """Seconds between starts implied by a per-minute request limit header."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    for name in LIMIT_HEADERS:
        value = lower.get(name)
        if value is None:
            continue
        try:
            limit = float(value)
        except ValueError:
            continue
        if limit > 0:
            return 60.0 / limit
    return None


def _reset_seconds(value: str, now: float) -> float | None:
    seconds = parse_duration(value)
    if seconds is not None:
        return seconds
    try:  # RFC 3339 (Anthropic)
        return max(0.0, datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() - now)
    except ValueError:
        return None


class Pacer:
    """Spaces the request starts of one route and keeps its daily budget, across processes."""

    def __init__(
        self,
        ledger: Ledger,
        route: str,
        *,
        pace: float = 0.0,
        start_interval: float = 0.0,
        max_requests_per_day: int | None = None,
        local: bool = False,
        margin: float = 0.03,
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.ledger = ledger
        self.route = route
        self.pace = float(pace or 0.0)
        self.start_interval = float(start_interval or 0.0)
        self.max_requests_per_day = max_requests_per_day
        self.local = local
        self.margin = margin
        self.clock = clock
        self.sleep = sleep
        self.last_wait = 0.0
        self.waited_total = 0.0

    def spacing(self, entry: Mapping[str, Any]) -> float:
        learned = max(float(entry.get("learned_interval") or 0.0), float(entry.get("header_interval") or 0.0),
                      self.start_interval)
        return max(self.pace, learned * (1.0 + self.margin))

    def before_request(self) -> float:
        """Reserve and wait for the next start slot; ``BudgetUsed`` when today's budget is spent."""
        with self.ledger.transaction() as data:
            entry = Ledger.entry(data, self.route)
            now = self.clock()
            day = utc_day(now)
            used = int(entry["requests_by_day"].get(day, 0))
            if self.max_requests_per_day is not None and used >= self.max_requests_per_day:
                raise BudgetUsed(local=self.local, limit=self.max_requests_per_day, route=self.route)
            slot = now
            if entry.get("last_start") is not None:
                slot = max(slot, float(entry["last_start"]) + self.spacing(entry))
            if entry.get("not_before") is not None:
                slot = max(slot, float(entry["not_before"]))
            entry["last_start"] = slot
            entry["requests_by_day"][day] = used + 1
        wait = slot - self.clock()
        self.last_wait = max(0.0, wait)
        if wait > 0:
            self.waited_total += wait
            self.sleep(wait)
        return slot

    def after_response(self, headers: Mapping[str, str] | None) -> None:
        """Learn from a successful answer's headers (request limits, nothing remaining)."""
        interval = interval_from_headers(headers)
        hold = self._hold_from_headers(headers)
        if interval is None and hold is None:
            return
        with self.ledger.transaction() as data:
            entry = Ledger.entry(data, self.route)
            if interval is not None:
                entry["header_interval"] = interval
            if hold is not None:
                entry["not_before"] = max(float(entry.get("not_before") or 0.0), hold)

    def on_rate_limited(self, retry_after: float | None, headers: Mapping[str, str] | None = None) -> None:
        """A 429: hold every process back for ``retry_after`` and learn a longer interval."""
        now = self.clock()
        interval = interval_from_headers(headers)
        with self.ledger.transaction() as data:
            entry = Ledger.entry(data, self.route)
            if retry_after is not None and retry_after > 0:
                entry["not_before"] = max(float(entry.get("not_before") or 0.0), now + retry_after)
            if interval is not None:
                # The provider states its limit: keep to it; the hold covers this one slip.
                entry["header_interval"] = max(interval, float(entry.get("header_interval") or 0.0))
            else:
                # No stated limit: slow down by half again (at least one second between starts).
                current = self.spacing(entry)
                entry["learned_interval"] = min(MAX_LEARNED_INTERVAL, max(current * 1.5, 1.0))

    def requests_today(self) -> int:
        return self.ledger.requests_on(self.route, utc_day(self.clock()))

    def requests_by_day(self) -> dict[str, int]:
        return self.ledger.requests_by_day(self.route)

    def _hold_from_headers(self, headers: Mapping[str, str] | None) -> float | None:
        if not headers:
            return None
        lower = {k.lower(): v for k, v in headers.items()}
        for remaining, reset in REMAINING_HEADERS.items():
            if lower.get(remaining) == "0" and lower.get(reset):
                seconds = _reset_seconds(lower[reset], self.clock())
                if seconds is not None:
                    return self.clock() + seconds
        return None


class NoPacer:
    """For routes without limits (``scripted``): every method is a no-op."""

    last_wait = 0.0

    def before_request(self) -> float:
        return 0.0

    def after_response(self, headers: Mapping[str, str] | None) -> None:
        pass

    def on_rate_limited(self, retry_after: float | None, headers: Mapping[str, str] | None = None) -> None:
        pass
