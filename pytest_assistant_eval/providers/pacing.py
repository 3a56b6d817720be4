"""Pacing and the daily request budget, shared through the ledger (S4.6, S4.11, S4.14, S9.4).

A run keeps each provider busy up to what it allows and no further. What it allows comes
from the provider's own answers (:mod:`.ratelimits`): per dimension (requests, tokens, input
or output tokens) the limit, what remains and when the window resets. The rules, each with
its reason:

- **Spread what remains over the time to the reset.** After an answer says ``R`` units are
  left until the reset in ``T`` seconds, a request costing ``c`` starts no sooner than
  ``c * T / (R + c)`` after the previous start. This needs no window length and fills a fixed
  window exactly, keeps a refilling bucket half full at its full rate, and follows a sliding
  window whose reset is the time its oldest entry leaves.
- **Nothing left: hold until the reset**, then the window is fresh (its limit) until an
  answer says more. While no answer has spoken since the reset, starts are spaced by the
  learned window over the limit (``c * W / L``), with the small safety margin.
- **Tokens are paced by the estimated tokens of the next request**: its input estimate
  (corrected by the route's ratio of reported to estimated input tokens) plus its output cap
  for a combined token limit; one unit for an output-token limit, which is charged after the
  fact and read back from the next answer.
- **Bookings made after a request are taken off what its answer reports**, because the
  provider may not have seen them yet: two workers never count one remainder twice.
- **A booked start is checked again just before it is sent** (:meth:`Pacer.before_request`
  sleeps outside the lock, then confirms): a hold learned meanwhile from "nothing left" or a
  429 reaches a start the other worker had already booked.
- **A limit only refusals state (OpenRouter) is a fixed window aligned to their reset.** Its
  window is at least the time from the ``limit``-th most recent start (the ledger keeps the
  last starts) to the reset, so a 429 just before a window ends cannot teach a 1 s window;
  each window begins at the stated reset, a window after the last, and holds ``limit`` starts
  spaced as in a fresh window, so the spacing never drifts into the next window.
- ``--pace``, the preset's starting interval and the interval learned from 429s without any
  stated limit space the starts on top of all this; a 429's ``Retry-After`` holds every
  process of the route.

``clock`` is wall-clock time (``time.time``): it is shared between processes and its UTC date
is the budget's day. Tests inject ``clock`` and ``sleep``.

Size: the pure arithmetic on a ledger entry (`plan_start`, `book`, `observe`,
`learned_limits`) and the `Pacer` that applies it across processes; the arithmetic would
move to a module of its own and leave the Pacer here.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from pytest_assistant_eval.providers.errors import BudgetUsed
from pytest_assistant_eval.providers.holds import MAX_HOLD, finite_seconds, forget_far_times
from pytest_assistant_eval.providers.ledger import Ledger, new_limit_state
from pytest_assistant_eval.providers.ratelimits import (
    DIMENSIONS,
    Observation,
    observations_from_headers,
    observations_from_quota,
    window_estimate,
)

MAX_LEARNED_INTERVAL = 60.0
#: The starts kept per route (the ledger's ``recent_starts``): a refusal's window is at least the
#: time from the ``limit``-th most recent start to its reset.
RECENT_STARTS = 64
#: Starts wait this much past a reset: a provider's clock and its rounding may run a little late.
RESET_SLACK = 0.02
#: A 429's stated reset, read on arrival, is up to this much shorter than the Retry-After the server
#: rounded up when it answered (7.001 s rounds to 8; 6.98 s are left when the answer is read).
RESET_LATENCY = 0.5


def utc_day(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).date().isoformat()


@dataclass(frozen=True)
class Need:
    """What the next request will cost: its estimated input tokens and its output cap."""

    input_tokens: int = 0
    output_tokens: int = 0

    def of(self, dimension: str) -> float:
        if dimension == "requests":
            return 1.0
        if dimension == "input_tokens":
            return float(self.input_tokens)
        if dimension == "tokens":
            return float(self.input_tokens + self.output_tokens)
        return 1.0  # output tokens are charged as they are produced; the next answer reports them

    def corrected(self, ratio: float | None) -> Need:
        if not ratio:
            return self
        return Need(round(self.input_tokens * ratio), self.output_tokens)


def need_for(request: Any) -> Need:
    """The estimate used for the per-request quota (S4.9): 4 characters a token, and the output cap."""
    from pytest_assistant_eval.messages import estimate_tokens

    try:
        raw = estimate_tokens(list(request.messages), tuple(request.tools))
    except (AttributeError, TypeError):
        return Need()
    return Need(raw, int(getattr(request, "max_output_tokens", 0) or 0))


# ---------------------------------------------------------------------------------------------
# The arithmetic on one route's ledger entry (pure: the tests drive it with plain dicts)


def _roll(state: dict[str, Any], at: float) -> None:
    """The window reset at ``at``: it is fresh until an answer says otherwise."""
    state["carried"] = max(0.0, -float(state.get("remaining") or 0.0))  # over-booked before the reset
    state["remaining"] = float(state["limit"])
    state["reset_at"] = None
    state["rolled_at"] = at
    window = window_estimate(state)
    if state.get("refusal_only") and window and not is_bucket(state):
        # Only refusals state this limit (OpenRouter): the next window is aligned to the reset they
        # stated, since no answer will say where it starts.
        state["reset_at"] = at + window


def is_bucket(state: Mapping[str, Any]) -> bool:
    """Whether the answers showed a bucket that refills continuously (see :func:`window_estimate`)."""
    low, high = state.get("min_bucket"), state.get("max_bucket")
    return bool(low and high and int(state.get("buckets") or 0) >= 3 and float(high) <= 2.0 * float(low))


def fresh_window_spacing(state: Mapping[str, Any], cost: float, window: float) -> float:
    """The spacing of starts in a window no answer has spoken of since its reset.

    A bucket refills continuously, so ``cost * W / L`` keeps its rate. A fixed or sliding
    window holds whole requests: 20,000 tokens per 10 s hold ten of 1,900, not 10.5, so
    starts ``W / 10.5`` apart put an eleventh into some window. With two workers that start
    is then moved behind the other worker's next booking, and each window loses almost two
    spacings (93.9% of the binding limit with two workers, 99% with one). ``W / whole``
    keeps every window at its whole count.
    """
    limit = float(state.get("limit") or 0.0)
    if is_bucket(state) or cost <= 0 or limit <= 0:
        return cost * window / limit if limit > 0 else 0.0
    return window / max(1, math.floor(limit / cost + 1e-9))


def plan_start(entry: dict[str, Any], need: Need, earliest: float, margin: float) -> float:
    """The earliest start at or after ``earliest`` that every known limit allows; rolls windows it passes."""
    slot = earliest
    last = entry.get("last_start")
    for _ in range(8):  # each pass can only move the slot later; windows roll at most once each
        moved = False
        for dim, state in (entry.get("limits") or {}).items():
            limit = float(state.get("limit") or 0.0)
            if limit <= 0:
                continue
            cost = min(need.of(dim), limit)
            reset_at = state.get("reset_at")
            if reset_at is not None and slot >= reset_at:
                _roll(state, reset_at)
                reset_at = state.get("reset_at")
            remaining = float(state.get("remaining", limit))
            rolled_at = state.get("rolled_at")
            if reset_at is not None and state.get("refusal_only") and rolled_at is not None:
                # A window only refusals speak of (OpenRouter): it began at the reset they stated and
                # holds ``limit``; its starts are spaced as in a fresh window, from its own first start
                # on, and the next begins a window later (never where the spacing drifted).
                window = window_estimate(state) or 0.0
                if remaining < cost:
                    target = float(reset_at) + RESET_SLACK
                elif last is not None and last >= float(rolled_at) and window and cost:
                    target = last + fresh_window_spacing(state, cost, window) * (1.0 + margin)
                    if target >= float(reset_at):
                        target = float(reset_at) + RESET_SLACK  # the next window's first start, at its reset
                else:
                    target = slot
                if target > slot + 1e-9:
                    slot, moved = target, True
                continue
            if reset_at is None:
                window = window_estimate(state)
                target = slot
                if window and last is not None and cost:
                    target = last + fresh_window_spacing(state, cost, window) * (1.0 + margin)
                if remaining < cost:
                    # A whole window booked since the reset and no answer said when the next one
                    # ends: the spacing keeps the rate, so count a fresh window from here.
                    state["remaining"] = limit
            elif remaining < cost:
                target = float(reset_at) + RESET_SLACK
            elif last is not None and cost:
                target = last + cost * (float(reset_at) - last) / (remaining + cost)
            else:
                target = slot
            if target > slot + 1e-9:
                slot, moved = target, True
        if not moved:
            break
    return slot


def book(entry: dict[str, Any], need: Need, slot: float, *, again: bool = False) -> dict[str, float]:
    """Take the request's cost off every known limit at ``slot``; the counters it was booked at.

    Bookings are counted per dimension whether or not a limit is known yet: the first answer
    must still learn which requests were booked after its own. ``again``: a booking moved to
    a later start is still one request and must not be counted twice.
    """
    counters = entry.setdefault("booked", {})
    booked_at: dict[str, float] = {}
    for dim in DIMENSIONS:
        if not again:
            counters[dim] = float(counters.get(dim) or 0.0) + need.of(dim)
        booked_at[dim] = float(counters.get(dim) or 0.0)
    for dim, state in (entry.get("limits") or {}).items():
        if state.get("limit"):
            cost = min(need.of(dim), float(state["limit"]))
            state["remaining"] = float(state.get("remaining", state["limit"])) - cost
    entry["last_start"] = max(float(entry.get("last_start") or slot), slot)
    entry["recent_starts"] = sorted([*(entry.get("recent_starts") or []), slot])[-RECENT_STARTS:]
    return booked_at


def conflicts(entry: dict[str, Any], need: Need, slot: float) -> float | None:
    """Just before sending: the later start a hold learned since booking demands, or ``None`` to go."""
    later: float | None = None
    not_before = entry.get("not_before")
    if not_before is not None and float(not_before) > slot + 1e-6:
        later = float(not_before)
    for state in (entry.get("limits") or {}).values():
        if not state.get("limit"):
            continue
        reset_at, rolled_at = state.get("reset_at"), state.get("rolled_at")
        if reset_at is not None and slot < reset_at and float(state.get("remaining") or 0.0) < -1e-9:
            later = max(later or 0.0, float(reset_at) + RESET_SLACK)  # an answer said less is left
        elif rolled_at is not None and slot < rolled_at and float(state.get("carried") or 0.0) > 1e-9:
            later = max(later or 0.0, float(rolled_at) + RESET_SLACK)  # the window it was booked in was over-booked
    return later


def unbook(entry: dict[str, Any], need: Need, slot: float) -> None:
    """Give a booking's cost back to the window it was booked in (it is about to be booked again)."""
    starts = list(entry.get("recent_starts") or [])
    if slot in starts:
        starts.remove(slot)
        entry["recent_starts"] = starts
    for dim, state in (entry.get("limits") or {}).items():
        if not state.get("limit"):
            continue
        cost = min(need.of(dim), float(state["limit"]))
        rolled_at = state.get("rolled_at")
        if rolled_at is not None and slot < rolled_at:
            state["carried"] = max(0.0, float(state.get("carried") or 0.0) - cost)
        else:
            state["remaining"] = float(state.get("remaining", state["limit"])) + cost


def observe(entry: dict[str, Any], observations: list[Observation], booked_at: Mapping[str, float],
            now: float) -> None:
    """Fold what an answer stated into the entry; bookings made after the request are taken off."""
    limits = entry.setdefault("limits", {})
    for obs in observations:
        state = limits.setdefault(obs.dimension, new_limit_state())
        if obs.limit:
            state["limit"] = float(obs.limit)
        if obs.window:
            state["window"] = float(obs.window)
        limit = float(state.get("limit") or 0.0)
        if not limit:
            continue
        if obs.reset is not None:
            state["max_reset"] = max(float(state.get("max_reset") or 0.0), obs.reset)
            if obs.remaining is not None and obs.reset > 0 and limit - obs.remaining >= 1:
                bucket = obs.reset * limit / (limit - obs.remaining)
                state["min_bucket"] = min(float(state.get("min_bucket") or bucket), bucket)
                state["max_bucket"] = max(float(state.get("max_bucket") or bucket), bucket)
                state["buckets"] = int(state.get("buckets") or 0) + 1
        if obs.remaining is None or obs.reset is None:
            continue
        reset_at = now + obs.reset
        rolled_at = state.get("rolled_at")
        if rolled_at is not None and reset_at <= float(rolled_at) + 1e-6:
            continue  # an answer from before the reset we already passed: stale
        booked = float((entry.get("booked") or {}).get(obs.dimension) or 0.0)
        after = booked - float(booked_at.get(obs.dimension, booked))
        state["remaining"] = float(obs.remaining) - max(0.0, after)
        state["reset_at"] = reset_at


def learned_limits(entry: Mapping[str, Any]) -> dict[str, dict[str, float | None]]:
    """Per dimension the limit and window the route learned (for run.json and the progress line)."""
    out: dict[str, dict[str, float | None]] = {}
    for dim, state in (entry.get("limits") or {}).items():
        if state.get("limit"):
            out[dim] = {"limit": float(state["limit"]), "window_s": window_estimate(state)}
    return out


# ---------------------------------------------------------------------------------------------
# The pacer of one route in one process


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
        self._booked_at: dict[str, float] = {}
        self._need = Need()
        self._slot: float | None = None
        self._raw_input = 0
        self._ratio: float | None = None  # the input-estimate ratio learned since the last transaction
        # A local route with no budget, no pace and no starting interval keeps out of the ledger
        # until some answer (its own or another worker's) states a limit or a hold (issue 15): a
        # transaction costs a lock, a temporary file and two fsyncs, as much as the request itself.
        self.light = local and max_requests_per_day is None and not self.pace and not self.start_interval
        self._seen: tuple[int, int] | None = None  # the ledger file's (mtime_ns, size) last looked at
        self._booked_file: tuple[int, int, int] | None = None  # the same, just after this worker's booking

    def _ledger_speaks(self) -> bool:
        """A light route: whether the ledger holds something for it that pacing must follow.

        Read without the lock, and only when the file changed: it is only ever replaced whole.
        """
        try:
            st = os.stat(self.ledger.path)
        except OSError:
            return False
        seen = (st.st_mtime_ns, st.st_size)
        if seen == self._seen:
            return False
        self._seen = seen
        from pytest_assistant_eval.providers.ledger import read_routes

        entry = read_routes(self.ledger.path).get(self.route) or {}
        forget_far_times(entry, self.clock())
        return bool(entry.get("learned_interval") or entry.get("not_before")
                    or any(state.get("limit") for state in (entry.get("limits") or {}).values()))

    def _entry(self, data: dict[str, Any]) -> dict[str, Any]:
        """The route's ledger entry, without any time an older run stored beyond a day (issue 23)."""
        entry = Ledger.entry(data, self.route)
        forget_far_times(entry, self.clock())
        return entry

    def spacing(self, entry: Mapping[str, Any]) -> float:
        """The fixed spacing: ``--pace``, the starting interval, the interval learned from bare 429s."""
        learned = max(float(entry.get("learned_interval") or 0.0), self.start_interval)
        return max(self.pace, learned * (1.0 + self.margin))

    def before_request(self, need: Need | None = None) -> float:
        """Reserve, wait for and confirm the next start; ``BudgetUsed`` when today's budget is spent."""
        raw = need or Need()
        if self.light and not self._ledger_speaks():
            self._raw_input = raw.input_tokens
            self._need = raw.corrected(self._ratio)
            self._booked_at = {}
            self.last_wait = 0.0
            return self.clock()
        self.light = False  # a limit or a hold was learned: the route is paced from now on
        started_waiting = self.clock()
        with self.ledger.transaction() as data:
            entry = self._entry(data)
            if self._ratio is not None:  # learned from the last answer, written with this booking
                entry["estimate_ratio"] = self._ratio
                self._ratio = None
            now = self.clock()
            day = utc_day(now)
            used = int(entry["requests_by_day"].get(day, 0))
            if self.max_requests_per_day is not None and used >= self.max_requests_per_day:
                raise BudgetUsed(local=self.local, limit=self.max_requests_per_day, route=self.route)
            self._raw_input = raw.input_tokens
            self._need = raw.corrected(entry.get("estimate_ratio"))
            slot = self._earliest(entry, now)
            slot = plan_start(entry, self._need, slot, self.margin)
            self._booked_at = book(entry, self._need, slot)
            entry["requests_by_day"][day] = used + 1
            self._counted_day = day
        self._booked_file = self._file_state()
        while True:
            wait = slot - self.clock()
            if wait > 0:
                self.sleep(wait)
            elif not self._hold_since_booking(slot):
                break  # booked for now and no other worker wrote a hold since
            with self.ledger.transaction() as data:
                entry = self._entry(data)
                later = conflicts(entry, self._need, slot)
                if later is None:
                    break
                unbook(entry, self._need, slot)
                slot = plan_start(entry, self._need, max(later, self._earliest(entry, self.clock())), self.margin)
                self._booked_at = book(entry, self._need, slot, again=True)
            self._booked_file = self._file_state()
        self.last_wait = max(0.0, self.clock() - started_waiting)
        self.waited_total += self.last_wait
        self._slot = slot
        return slot

    def _file_state(self) -> tuple[int, int, int] | None:
        """The ledger file's identity: every write replaces it with a new file (a new inode)."""
        try:
            st = os.stat(self.ledger.path)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _hold_since_booking(self, slot: float) -> bool:
        """A start booked for now: whether another worker recorded a hold since, read without the lock.

        The race of two workers at a provider that states nothing before its first 429
        (OpenRouter): A's 429 is written to the ledger while B's booking for "now" is made, and B
        would send into the hold. A stat per request finds whether the ledger changed since B's
        own write; only then is it read (it is only ever replaced whole) and checked.
        """
        seen = self._file_state()
        if seen is None or seen == self._booked_file:
            return False
        self._booked_file = seen
        from pytest_assistant_eval.providers.ledger import read_routes

        entry = read_routes(self.ledger.path).get(self.route)
        if entry:
            forget_far_times(entry, self.clock())
        return bool(entry) and conflicts(entry, self._need, slot) is not None

    def _earliest(self, entry: Mapping[str, Any], now: float) -> float:
        slot = now
        if entry.get("last_start") is not None:
            slot = max(slot, float(entry["last_start"]) + self.spacing(entry))
        if entry.get("not_before") is not None:
            slot = max(slot, float(entry["not_before"]))
        return slot

    def after_response(self, headers: Mapping[str, str] | None, usage: Any = None) -> None:
        """Learn from an answer: the limits its headers state, and how good the token estimate was."""
        now = self.clock()
        observations = observations_from_headers(headers, now)
        ratio = None
        reported = getattr(usage, "input_tokens", None)
        if reported and self._raw_input:
            ratio = reported / self._raw_input
        if ratio is not None:
            self._ratio = round(ratio, 4)
        if not observations:
            return  # the ratio waits for the next booking's transaction
        self.light = False
        with self.ledger.transaction() as data:
            entry = self._entry(data)
            if self._ratio is not None:
                entry["estimate_ratio"] = self._ratio
                self._ratio = None
            observe(entry, observations, self._booked_at, now)
            for obs in observations:  # an answer speaks of this limit: it is not known from refusals only
                state = (entry.get("limits") or {}).get(obs.dimension)
                if state is not None:
                    state["answered"] = True
                    state.pop("refusal_only", None)

    def on_rate_limited(self, retry_after: float | None, headers: Mapping[str, str] | None = None,
                        quota: Mapping[str, Any] | None = None) -> None:
        """A 429: hold every process back for ``retry_after``; learn what the refusal states."""
        now = self.clock()
        retry_after = finite_seconds(retry_after)
        if retry_after is not None and retry_after > MAX_HOLD:
            retry_after = None  # beyond a day is a daily quota (holds.bound_hold): nothing to hold for
        observations = observations_from_headers(headers, now) + observations_from_quota(quota, retry_after)
        self.light = False
        with self.ledger.transaction() as data:
            entry = self._entry(data)
            day = utc_day(now)
            entry["rate_limited_by_day"][day] = int(entry["rate_limited_by_day"].get(day, 0)) + 1
            if retry_after is not None and retry_after > 0:
                hold = min(self._precise_hold(retry_after, observations), MAX_HOLD)
                entry["not_before"] = max(float(entry.get("not_before") or 0.0), now + hold)
            # The refused request was not served: its booking is given back before the answer is folded in.
            for dim, state in (entry.get("limits") or {}).items():
                rolled_at = state.get("rolled_at")
                if self._slot is not None and rolled_at is not None and self._slot < float(rolled_at):
                    continue  # booked in a window already passed: the current one never counted it
                if dim in self._booked_at and state.get("limit"):
                    state["remaining"] = float(state["remaining"]) + min(self._need.of(dim), float(state["limit"]))
            exhausted = [self._exhausted(o, retry_after) for o in observations]
            observe(entry, exhausted, self._booked_at, now)
            self._bound_window(entry, exhausted, now)
            if not observations:
                # No stated limit: slow down by half again (at least one second between starts).
                current = self.spacing(entry)
                entry["learned_interval"] = min(MAX_LEARNED_INTERVAL, max(current * 1.5, 1.0))

    def _bound_window(self, entry: dict[str, Any], observations: list[Observation], now: float) -> None:
        """A refusal of requests: the window is at least from the ``limit``-th start before this one to its reset.

        The ``limit`` requests served before the refused one lie in the window that ends at the
        reset. A 429 late in a window (its reset 0.24 s away) would otherwise teach a 1 s window,
        and the next window would be sent ``limit + 1`` requests early on.
        """
        starts = list(entry.get("recent_starts") or [])
        if self._slot is not None and self._slot in starts:
            starts.remove(self._slot)
            starts = [s for s in starts if s <= self._slot]
        for obs in observations:
            state = (entry.get("limits") or {}).get(obs.dimension)
            if state is None or obs.reset is None or obs.remaining is None or obs.remaining >= 1:
                continue
            if not state.get("answered"):
                state["refusal_only"] = True  # no answer has stated it: refusals are all that speak of it
            limit = int(float(state.get("limit") or 0.0))
            if obs.dimension == "requests" and 0 < limit <= len(starts):
                bound = now + obs.reset - starts[-limit]
                state["min_window"] = max(float(state.get("min_window") or 0.0), bound)

    @staticmethod
    def _precise_hold(retry_after: float, observations: list[Observation]) -> float:
        """The hold of a 429: its ``Retry-After``, or the stated reset of the exhausted limit within its rounding.

        ``Retry-After`` is whole seconds rounded up; OpenRouter's ``X-RateLimit-Reset`` is in
        milliseconds. Holding to the rounded figure (which, rounded up from just past a whole second, can
        be almost two seconds longer than the reset read on arrival) starts the next window up to a second late
        (a 10 s window then holds 18 of its 20).
        """
        resets = [o.reset for o in observations if o.remaining is not None and o.remaining < 1 and o.reset is not None]
        precise = [r for r in resets if retry_after - 1.0 - RESET_LATENCY <= r <= retry_after]
        return min(retry_after, max(precise) + RESET_SLACK) if precise else retry_after

    @staticmethod
    def _exhausted(obs: Observation, retry_after: float | None) -> Observation:
        """A refusal's observation; a reset it lacks is the ``Retry-After``."""
        if obs.reset is None and retry_after is not None:
            return Observation(obs.dimension, obs.limit, obs.remaining, retry_after, obs.window)
        return obs

    def not_sent(self) -> None:
        """The last request never reached the service (no connection could be made): it is no request of today.

        It was counted when booked; counted, it showed as "N request(s) today" and used the daily
        budget of a service that never saw it (issue 24).
        """
        day = getattr(self, "_counted_day", None)
        if day is None:
            return
        self._counted_day = None
        with self.ledger.transaction() as data:
            by_day = self._entry(data)["requests_by_day"]
            if int(by_day.get(day, 0)) > 0:
                by_day[day] = int(by_day[day]) - 1

    def requests_today(self) -> int:
        return self.ledger.requests_on(self.route, utc_day(self.clock()))

    def requests_by_day(self) -> dict[str, int]:
        return self.ledger.requests_by_day(self.route)


class NoPacer:
    """For routes without limits (``scripted``): every method is a no-op."""

    last_wait = 0.0
    waited_total = 0.0

    def before_request(self, need: Need | None = None) -> float:
        return 0.0

    def after_response(self, headers: Mapping[str, str] | None, usage: Any = None) -> None:
        pass

    def not_sent(self) -> None:
        pass

    def on_rate_limited(self, retry_after: float | None, headers: Mapping[str, str] | None = None,
                        quota: Mapping[str, Any] | None = None) -> None:
        pass


@dataclass(frozen=True)
class LedgerView:
    """What the progress line shows of the ledger: the one count every worker's requests add to."""

    requests_today: int = 0
    rate_limited_today: int = 0
    limits: tuple[tuple[str, str], ...] = ()  # (route, "20 requests per 10 s; 30000 input tokens per min")


def ledger_view(path: Any, now: float | None = None) -> LedgerView:
    """Today's requests and 429s over every route of the ledger, and each route's learned limits."""
    from pytest_assistant_eval.providers.ledger import read_routes
    from pytest_assistant_eval.providers.ratelimits import describe_limit

    day = utc_day(time.time() if now is None else now)
    routes = read_routes(path)
    requests = sum(int((e.get("requests_by_day") or {}).get(day, 0)) for e in routes.values())
    refused = sum(int((e.get("rate_limited_by_day") or {}).get(day, 0)) for e in routes.values())
    limits = []
    for name, entry in sorted(routes.items()):
        learned = learned_limits(entry)
        known = [describe_limit(dim, v["limit"], v["window_s"]) for dim, v in sorted(learned.items())
                 if v["window_s"]]
        if known:
            limits.append((name, "; ".join(known)))
    return LedgerView(requests, refused, tuple(limits))
