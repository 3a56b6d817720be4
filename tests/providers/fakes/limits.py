"""Rate limits as providers enforce and state them, for the fake servers.

A :class:`Limit` is one dimension (requests, tokens, input or output tokens), an amount, a
window and a kind:

- ``fixed``: windows aligned to the clock (per minute starts at :00); the reset is the window's end.
- ``sliding``: at most ``amount`` in any ``window`` seconds (a moving log, like the ``limits``
  library behind Flask-Limiter); the reset is when the oldest entry leaves.
- ``bucket``: refills continuously at ``amount / window`` up to ``amount`` (Anthropic's token
  bucket; OpenAI's and Groq's "time until the limit is back to its initial state"); the reset
  is the time until it is full.

How each provider *states* them is its own dialect (:func:`openai_headers`,
:func:`anthropic_headers`, :func:`openrouter_headers`); Gemini states nothing but its 429 body.
The clock is injectable so tests drive windows deterministically.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Literal

Kind = Literal["fixed", "sliding", "bucket"]


@dataclass
class Limit:
    dimension: str  # requests | tokens | input_tokens | output_tokens
    amount: int
    window: float
    kind: Kind = "sliding"


@dataclass
class LimitState:
    limit: Limit
    log: deque[tuple[float, float]] = field(default_factory=deque)  # sliding: (time, cost)
    used: float = 0.0  # fixed: used in the current window
    window_start: float = 0.0
    level: float | None = None  # bucket: units available
    updated: float = 0.0

    def _advance(self, now: float) -> None:
        lim = self.limit
        if lim.kind == "fixed":
            start = math.floor(now / lim.window) * lim.window
            if start != self.window_start:
                self.window_start, self.used = start, 0.0
        elif lim.kind == "sliding":
            while self.log and self.log[0][0] <= now - lim.window:
                self.log.popleft()
        else:
            if self.level is None:
                self.level, self.updated = float(lim.amount), now
            self.level = min(float(lim.amount), self.level + (now - self.updated) * lim.amount / lim.window)
            self.updated = now

    def available(self, now: float) -> float:
        self._advance(now)
        lim = self.limit
        if lim.kind == "fixed":
            return lim.amount - self.used
        if lim.kind == "sliding":
            return lim.amount - sum(cost for _, cost in self.log)
        return float(self.level or 0.0)

    def wait_for(self, cost: float, now: float) -> float:
        """Seconds until ``cost`` fits (what a Retry-After says)."""
        lim = self.limit
        missing = cost - self.available(now)
        if missing <= 0:
            return 0.0
        if lim.kind == "fixed":
            return self.window_start + lim.window - now
        if lim.kind == "sliding":
            freed = 0.0
            for at, amount in self.log:
                freed += amount
                if freed >= missing:
                    return at + lim.window - now
            return lim.window
        return missing * lim.window / lim.amount

    def charge(self, cost: float, now: float) -> None:
        self._advance(now)
        if self.limit.kind == "fixed":
            self.used += cost
        elif self.limit.kind == "sliding":
            self.log.append((now, cost))
        else:
            self.level = float(self.level or 0.0) - cost

    def reset_in(self, now: float) -> float:
        """The reset the provider states: window end, oldest entry leaving, or bucket full."""
        lim = self.limit
        self._advance(now)
        if lim.kind == "fixed":
            return self.window_start + lim.window - now
        if lim.kind == "sliding":
            return self.log[0][0] + lim.window - now if self.log else 0.0
        return (lim.amount - float(self.level or 0.0)) * lim.window / lim.amount


class Limiter:
    """All limits of one fake server, checked and charged under one lock."""

    def __init__(self, limits: list[Limit], clock: Callable[[], float] = time.time) -> None:
        self.states = [LimitState(limit) for limit in limits]
        self.clock = clock
        self.lock = threading.Lock()
        self.refused = 0
        self.refused_by: list[str] = []
        self.charged: list[tuple[float, dict[str, float]]] = []  # (time, cost per dimension) of served requests

    def admit(self, costs: dict[str, float]) -> tuple[bool, float, Limit | None]:
        """``(served, retry_after, binding limit)``; a served request is charged at once."""
        with self.lock:
            now = self.clock()
            worst: tuple[float, Limit | None] = (0.0, None)
            for state in self.states:
                cost = costs.get(state.limit.dimension, 0.0)
                if state.limit.dimension == "output_tokens":
                    cost = 1.0 if state.available(now) < 1 else 0.0  # charged after the answer
                wait = state.wait_for(cost, now) if cost else 0.0
                if wait > worst[0]:
                    worst = (wait, state.limit)
            if worst[1] is not None:
                self.refused += 1
                self.refused_by.append(worst[1].dimension)
                return False, worst[0], worst[1]
            for state in self.states:
                if state.limit.dimension != "output_tokens":
                    state.charge(costs.get(state.limit.dimension, 0.0), now)
            self.charged.append((now, dict(costs)))
            return True, 0.0, None

    def charge_output(self, tokens: float) -> None:
        with self.lock:
            now = self.clock()
            for state in self.states:
                if state.limit.dimension == "output_tokens":
                    state.charge(tokens, now)

    def view(self) -> list[tuple[Limit, float, float]]:
        """``(limit, remaining, reset seconds)`` per limit, as of now."""
        with self.lock:
            now = self.clock()
            return [(s.limit, max(0.0, s.available(now)), max(0.0, s.reset_in(now))) for s in self.states]


def go_duration(seconds: float) -> str:
    """Seconds as Go prints a duration: ``"20ms"``, ``"1s"``, ``"7.66s"``, ``"6m0s"``, ``"2m59.56s"``."""
    if seconds < 1:
        return f"{max(0, math.ceil(seconds * 1000))}ms"
    minutes, rest = divmod(seconds, 60)
    text = f"{rest:.3f}".rstrip("0").rstrip(".") + "s"
    hours, minutes = divmod(int(minutes), 60)
    if hours:
        return f"{hours}h{minutes}m{text}"
    return f"{minutes}m{text}" if minutes else text


def openai_headers(view: list[tuple[Limit, float, float]]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for limit, remaining, reset in view:
        dim = {"requests": "requests", "tokens": "tokens"}.get(limit.dimension)
        if dim is None:
            continue
        headers[f"x-ratelimit-limit-{dim}"] = str(limit.amount)
        headers[f"x-ratelimit-remaining-{dim}"] = str(int(remaining))
        headers[f"x-ratelimit-reset-{dim}"] = go_duration(reset)
    return headers


def anthropic_headers(view: list[tuple[Limit, float, float]], now: float) -> dict[str, str]:
    headers: dict[str, str] = {}
    for limit, remaining, reset in view:
        dim = limit.dimension.replace("_", "-")
        left = int(remaining) if limit.dimension == "requests" else int(round(remaining / 1000.0) * 1000)
        when = datetime.fromtimestamp(math.ceil(now + reset), tz=timezone.utc)
        headers[f"anthropic-ratelimit-{dim}-limit"] = str(limit.amount)
        headers[f"anthropic-ratelimit-{dim}-remaining"] = str(left)
        headers[f"anthropic-ratelimit-{dim}-reset"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return headers


def openrouter_headers(view: list[tuple[Limit, float, float]], now: float) -> dict[str, str]:
    for limit, remaining, reset in view:
        if limit.dimension == "requests":
            return {"X-RateLimit-Limit": str(limit.amount), "X-RateLimit-Remaining": str(int(remaining)),
                    "X-RateLimit-Reset": str(int(math.ceil((now + reset) * 1000)))}
    return {}
