"""What a provider says about its rate limits, read from its own headers and 429 bodies (S4.11, S9.4).

Every family of rate-limit headers is turned into the same :class:`Observation`: which
dimension (requests, tokens, input or output tokens), the limit, how many units remain and
in how many seconds the window resets. Nothing here assumes a window length: a limit header
alone says "20", never "20 a minute" (Groq's request limit is per day, other servers count
per 10 s or per hour); the window is learned from how the reset and remaining values move
(:func:`window_estimate`).

Families read:

- ``x-ratelimit-{limit,remaining,reset}-{requests,tokens}``: OpenAI, Groq, vLLM and other
  OpenAI-compatible servers; resets are Go durations (``"6m0s"``, ``"1s"``, ``"20ms"``).
- ``anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}``:
  resets are RFC 3339 times; token remainders are rounded to the nearest thousand, so half a
  thousand is taken off to stay on the safe side.
- ``x-ratelimit-{limit,remaining,reset}`` (OpenRouter, on its own 429s, reset in epoch
  milliseconds) and the IETF draft's ``ratelimit-{limit,remaining,reset}``: request counts.
- Gemini states no headers; a 429's ``QuotaFailure`` names the quota (``...PerMinute...``,
  ``...PerDay...``) and its value, which gives a limit with a stated window.

A reset is accepted as a duration, plain seconds, epoch seconds or milliseconds, an RFC 3339
time or an HTTP date (:func:`reset_seconds`).
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pytest_assistant_eval.providers.holds import MAX_HOLD
from pytest_assistant_eval.providers.durations import parse_duration

Dimension = Literal["requests", "tokens", "input_tokens", "output_tokens"]
DIMENSIONS: tuple[Dimension, ...] = ("requests", "tokens", "input_tokens", "output_tokens")

#: Windows that limits are stated in; a learned window close to one of them is taken as it.
STANDARD_WINDOWS = (1.0, 10.0, 60.0, 3600.0, 86400.0)
#: How far above a standard window a learned reset may lie and still be that window (latency).
WINDOW_TOLERANCE = 0.05
#: Anthropic rounds token remainders to the nearest thousand.
ANTHROPIC_TOKEN_ROUNDING = 500.0


@dataclass(frozen=True)
class Observation:
    """One dimension's state as the provider stated it, at the moment its answer arrived."""

    dimension: Dimension
    limit: float | None = None
    remaining: float | None = None
    reset: float | None = None  # seconds from the answer until the window resets
    window: float | None = None  # only when the provider states it (Gemini's quota ids)


def reset_seconds(value: str | None, now: float) -> float | None:
    """Seconds until a reset given in any of the formats providers use; ``None`` if unreadable.

    A bare number is a count of seconds, unless it is so large it can only be an epoch time
    (seconds after 2001, or milliseconds: OpenRouter). A reset that is not finite or more than
    a day away (``MAX_HOLD``: a date in the year 9999) is no reset pacing can wait for: ``None``.
    """
    seconds = _reset_seconds(value, now)
    if seconds is None or not math.isfinite(seconds) or seconds > MAX_HOLD:
        return None
    return seconds


def _reset_seconds(value: str | None, now: float) -> float | None:
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    try:
        number = float(text)
    except ValueError:
        number = None
    if number is not None:
        if number > 1e11:  # epoch milliseconds
            return max(0.0, number / 1000.0 - now)
        if number > 1e9:  # epoch seconds
            return max(0.0, number - now)
        return max(0.0, number)
    seconds = parse_duration(text)
    if seconds is not None:
        return seconds
    try:
        return max(0.0, datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() - now)
    except (ValueError, OverflowError):
        pass
    try:
        return max(0.0, email.utils.parsedate_to_datetime(text).timestamp() - now)
    except (TypeError, ValueError, OverflowError):
        return None


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    return number if math.isfinite(number) and number >= 0 else None


_OPENAI = re.compile(r"^x-ratelimit-(limit|remaining|reset)-(requests|tokens)$")
_ANTHROPIC = re.compile(r"^anthropic-ratelimit-(requests|tokens|input-tokens|output-tokens)-(limit|remaining|reset)$")
_PLAIN = re.compile(r"^(?:x-)?ratelimit-(limit|remaining|reset)$")


def observations_from_headers(headers: Mapping[str, str] | None, now: float) -> list[Observation]:
    """Every dimension the headers speak of (empty when they state nothing)."""
    if not headers:
        return []
    parts: dict[Dimension, dict[str, str]] = {}
    rounded: set[Dimension] = set()
    for name, value in headers.items():
        key = name.lower()
        if m := _OPENAI.match(key):
            field, dim = m.group(1), m.group(2)
        elif m := _ANTHROPIC.match(key):
            dim, field = m.group(1).replace("-", "_"), m.group(2)
            if dim != "requests":
                rounded.add(dim)  # type: ignore[arg-type]
        elif m := _PLAIN.match(key):
            field, dim = m.group(1), "requests"
        else:
            continue
        parts.setdefault(dim, {}).setdefault(field, value)  # type: ignore[arg-type]
    found: list[Observation] = []
    for dim, fields in parts.items():
        remaining = _number(fields.get("remaining"))
        if remaining is not None and dim in rounded:
            remaining = max(0.0, remaining - ANTHROPIC_TOKEN_ROUNDING)
        observation = Observation(dim, limit=_number(fields.get("limit")), remaining=remaining,
                                  reset=reset_seconds(fields.get("reset"), now))
        if observation.limit or observation.remaining is not None:
            found.append(observation)
    return found


def observations_from_quota(quota: Mapping[str, Any] | None, retry_after: float | None) -> list[Observation]:
    """Gemini's 429: the violated quota's value and window (per minute or per day), nothing left."""
    if not quota:
        return []
    ident = f"{quota.get('quota_id') or ''} {quota.get('metric') or ''}".lower()
    limit = _number(quota.get("value"))
    if not limit:
        return []
    window = 86400.0 if ("perday" in ident or "daily" in ident) else 60.0 if "perminute" in ident else None
    dim: Dimension = "input_tokens" if ("inputtoken" in ident or "input_token" in ident) else "requests"
    return [Observation(dim, limit=limit, remaining=0.0, reset=retry_after, window=window)]


def snap_window(seconds: float | None, *, upward: bool = False) -> float | None:
    """A learned window as the standard window it is (within latency), else rounded to 0.1 s.

    ``upward`` gives the smallest standard window that holds ``seconds``: when only a lower
    bound is known (a reset seen from inside a fixed window), pacing must not assume less.
    """
    if seconds is None or seconds <= 0:
        return None
    for standard in STANDARD_WINDOWS:
        if standard * (1 - WINDOW_TOLERANCE) <= seconds <= standard * (1 + WINDOW_TOLERANCE):
            return standard
    if upward:
        for standard in STANDARD_WINDOWS:
            if seconds <= standard * (1 + WINDOW_TOLERANCE):
                return standard
    return round(seconds, 1)


def window_estimate(state: Mapping[str, Any]) -> float | None:
    """The window of one dimension from what its answers said (``None`` when nothing is known).

    A stated window wins. A bucket that refills continuously gives the same figure
    ``reset * limit / used`` in every answer (within the rounding of a whole remainder):
    three answers that agree within a factor of two make it the window. A fixed or sliding
    window's figures keep changing (every request adds to "used", the reset stays), and its
    window is the longest reset seen, as the standard window that holds it.
    """
    if state.get("window"):
        return float(state["window"])
    low, high = state.get("min_bucket"), state.get("max_bucket")
    if low and high and int(state.get("buckets") or 0) >= 3 and float(high) <= 2.0 * float(low):
        return snap_window(float(high), upward=True)
    longest = max(float(state.get("max_reset") or 0.0), float(state.get("min_window") or 0.0)) or None
    return snap_window(float(longest), upward=True) if longest else None


def describe_limit(dimension: str, limit: float, window: float | None) -> str:
    """``"20 requests per 10 s"``, ``"30000 input tokens per min"``, ``"14400 requests per day"``."""
    unit = dimension.replace("_", " ")
    amount = f"{limit:g}"
    if window is None:
        return f"{amount} {unit} (window not yet known)"
    names = {1.0: "s", 60.0: "min", 3600.0: "h", 86400.0: "day"}
    per = names.get(window, f"{window:g} s")
    return f"{amount} {unit} per {per}"
