"""A provider's hold is bounded (issue 23, S4.6, S4.11).

A 429 may ask for any wait: ``Retry-After: 999999999``, ``1e999``, an HTTP date in the year
9999, "try again in 99999999h". Stored as asked, such a hold put ``not_before`` in 2058 (every
later ``--resume`` slept without a word) or ``Infinity`` (every later resume died with an
``OverflowError``). The rules:

- a wait of more than :data:`MAX_HOLD` (a day) is a **daily quota**: the cell is kept, the run
  stops on its route with the provider's words and exit 0, and tomorrow's resume asks again;
- no time that is not finite, or that lies more than a day ahead, is ever stored in the ledger,
  and one an older run stored there is forgotten when read (:func:`forget_far_times`);
- a run that must wait for a hold it finds in the ledger says until when, once, at its start
  (:func:`hold_notice`).
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any

from pytest_assistant_eval.providers.errors import ProviderError, make_error

#: The longest hold a provider may ask of the run: beyond it, its limit is a daily quota.
MAX_HOLD = 86400.0
#: A time this far past ``now + MAX_HOLD`` can only come from a hold stored before holds were bounded.
_SLACK = 60.0
#: Holds shorter than this are the pacer's ordinary waits, not worth a line at the run's start.
NOTICE_AFTER = 30.0


def finite_seconds(value: Any) -> float | None:
    """``value`` as seconds when it is a finite number, else ``None``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def describe_wait(seconds: float) -> str:
    """``"2 h 10 min"``, ``"45 s"``; ``"an unbounded time"`` for an infinite wait."""
    if not math.isfinite(seconds):
        return "an unbounded time"
    if seconds >= 86400 * 365:
        return f"{seconds / (86400 * 365):,.0f} years"
    if seconds >= 3600:
        hours, rest = divmod(int(seconds), 3600)
        return f"{hours:,} h {rest // 60} min"
    if seconds >= 60:
        return f"{int(seconds) // 60} min {int(seconds) % 60} s"
    return f"{seconds:.0f} s"


def bound_hold(error: ProviderError) -> ProviderError:
    """``error`` with a finite, non-negative ``retry_after`` of at most a day, or the daily quota it is.

    A temporary error whose wait is beyond a day becomes ``daily_quota`` with the provider's own
    status, code and words; any other error simply loses a wait it cannot use.
    """
    wait = error.retry_after
    if wait is None:
        return error
    if isinstance(wait, bool) or not isinstance(wait, (int, float)) or math.isnan(wait):
        error.retry_after = None
        return error
    if wait < 0:
        error.retry_after = 0.0
        return error
    if wait <= MAX_HOLD:
        return error
    error.retry_after = None
    if error.kind != "temporary" or error.code == "daily_quota":
        return error
    quota = make_error("daily_quota", message=f"the provider asks to wait {describe_wait(wait)}, more than a "
                       "day: its limit is a daily quota", status=error.status, provider_code=error.provider_code,
                       provider_message=error.provider_message, quota=error.quota, headers=error.headers,
                       preset=error.preset)
    quota.address = error.address
    return quota


def _far(value: Any, now: float) -> bool:
    seconds = finite_seconds(value)
    return value is not None and (seconds is None or seconds > now + MAX_HOLD + _SLACK)


def forget_far_times(entry: dict[str, Any], now: float) -> bool:
    """Drop from a route's ledger entry every time that is not finite or more than a day ahead.

    Such a time was stored before holds were bounded (``not_before`` in 2058, a start booked
    behind it, a reset in the year 9999); kept, it would hold the route for ever. Forgotten,
    the next request asks the provider again, and a provider still asking that long stops the
    run as a daily quota. True when something was dropped.
    """
    dropped = False
    for name in ("not_before", "last_start"):
        if _far(entry.get(name), now):
            entry[name] = None
            dropped = True
    starts = entry.get("recent_starts")
    if isinstance(starts, list):
        kept = [s for s in starts if finite_seconds(s) is not None and not _far(s, now)]
        if len(kept) != len(starts):
            entry["recent_starts"] = kept
            dropped = True
    for state in (entry.get("limits") or {}).values():
        if not isinstance(state, dict):
            continue
        for name in ("reset_at", "rolled_at"):
            if _far(state.get(name), now):
                state[name] = None
                dropped = True
    return dropped


def hold_until(entry: dict[str, Any], now: float) -> float | None:
    """When the route's hold ends (a 429's or an exhausted limit's), if it lies ahead and within a day."""
    ends = [finite_seconds(entry.get("not_before"))]
    for state in (entry.get("limits") or {}).values():
        if isinstance(state, dict) and state.get("limit") and (finite_seconds(state.get("remaining")) or 0.0) < 1:
            ends.append(finite_seconds(state.get("reset_at")))
    ahead = [t for t in ends if t is not None and now < t <= now + MAX_HOLD + _SLACK]
    return max(ahead) if ahead else None


def hold_notice(routes: dict[str, Any], route: str, now: float) -> str | None:
    """The line a run says at its start when its route must first wait for a hold: until when."""
    entry = routes.get(route)
    if not isinstance(entry, dict):
        return None
    until = hold_until(entry, now)
    if until is None or until - now < NOTICE_AFTER:
        return None
    when = datetime.fromtimestamp(until, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    return (f"assistant-eval: {route}: the provider's hold from an earlier request lasts until {when} "
            f"(in {describe_wait(until - now)}); the first request waits until then.")
