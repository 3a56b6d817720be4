"""The running tally of a run (S4.15): cells done, kept, not applicable and left.

On a terminal the tally is one line rewritten in place (``in_place``): cells done of the
total, per model, the rate, elapsed time and an estimate of what is left, and the limit the
run waits on; in a pipe or a file, plain lines at most every few seconds. At the end,
``next_command`` says what to run next. This module only writes text; the plugin decides
where it goes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from pytest_assistant_eval.console import visible
from pytest_assistant_eval.suites.base import next_command  # noqa: F401 - the default every suite gives


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


@dataclass
class Progress:
    total: int
    every_seconds: float = 2.0
    clock: Callable[[], float] = time.monotonic
    counts: dict[str, int] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    kept_by_code: dict[str, list[str]] = field(default_factory=dict)
    quota_notes: list[str] = field(default_factory=list)
    requests_today: int = 0  # read from the ledger, the one count every worker adds to
    rate_limited: int = 0  # 429s today, from the ledger
    waited: float = 0.0  # seconds waited for pacing and rate limits: the most of any one worker
    last_wait: float = 0.0  # seconds the last finished cell waited
    waited_by_worker: dict[str, float] = field(default_factory=dict)
    limits_new: list[str] = field(default_factory=list)  # learned limits not yet shown
    limits_shown: dict[str, str] = field(default_factory=dict)
    selection_recorded: bool = False  # the selected cells went into run.json (once, with xdist too)
    model_totals: dict[str, int] = field(default_factory=dict)  # cells this run asks, per model
    model_done: dict[str, int] = field(default_factory=dict)
    model_of: dict[str, str] = field(default_factory=dict)  # a cell's parameter id -> its model
    terminal: bool = False  # pytest writes to a terminal: the tally is one line rewritten in place
    waiting_on: str = ""  # the limit the last waits were for ("openai@… allows 20 requests per 10 s")
    started: float | None = None
    _last: float = field(default=0.0)

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def add(self, status: str | None, outcome: str, message: str | None = None, *,
            cell: str | None = None, code: str | None = None, model: str | None = None) -> None:
        key = status or ("error" if outcome == "failed" else outcome)
        self.counts[key] = self.counts.get(key, 0) + 1
        if model is not None:
            self.model_done[model] = self.model_done.get(model, 0) + 1
        message = visible(message) if message else message  # the console's one sanitiser (issue 31 C)
        if message and status in ("done", "kept", "unsaved", "na") and code != "daily_quota":
            self.messages.append(message)
        elif message and code == "daily_quota" and "\n  provider: " in message:
            # A provider's quota (not our own budget): its words, the summary says what to do (issue 23).
            self.messages.append(f"{cell}: the provider's daily quota is used{message[message.index(chr(10)):]}")
        if status in ("kept", "left") and code and cell:
            self.kept_by_code.setdefault(code, []).append(cell)

    def quota_stopped(self) -> bool:
        """Every cell left kept stopped for the daily budget or quota (exit 0, S4.6)."""
        codes = [code for code, cells in self.kept_by_code.items() if cells]
        return bool(codes) and set(codes) == {"daily_quota"} and not self.counts.get("unsaved")

    def left_kept_or_unsaved(self) -> bool:
        return bool(self.counts.get("kept") or self.counts.get("unsaved"))

    @property
    def finished(self) -> int:
        return sum(self.counts.values())

    def line(self) -> str:
        c = self.counts
        left = max(self.total - self.finished, 0)
        return (f"assistant-eval: {self.finished}/{self.total} cells · done {c.get('done', 0)} · kept {c.get('kept', 0)}"
                f" · unsaved {c.get('unsaved', 0)} · n/a {c.get('na', 0)} · skipped {c.get('skipped', 0)} · errors {c.get('error', 0)}"
                f" · not asked today {c.get('left', 0)}{self.pace_text()}{self.wait_text()} · left {left}")

    def pace_text(self) -> str:
        """Per model, the rate of finished cells, the time elapsed and an estimate of the time left."""
        text = ""
        if len(self.model_totals) > 1:
            text += " · " + ", ".join(f"{m} {self.model_done.get(m, 0)}/{n}" for m, n in sorted(self.model_totals.items()))
        elapsed = self.clock() - (self.started or 0.0)
        done = self.finished
        left = max(self.total - done, 0)
        if done and elapsed > 0:
            rate = done / elapsed
            shown = f"{rate:.1f} cells/s" if rate >= 0.1 else f"{rate * 60:.1f} cells/min"
            text += f" · {shown} · elapsed {_duration(elapsed)}"
            if left:
                text += f" · ETA {_duration(left / rate)}"
        elif elapsed > 0:
            text += f" · elapsed {_duration(elapsed)}"
        if self.waiting_on and self.last_wait > 0:
            text += f" · waiting on {self.waiting_on}"
        return text

    def compact_line(self) -> str:
        """The terminal's line: what an owner watches first (cells, per model, rate, elapsed, ETA), then the
        counts that are not 0, then requests and waits; it is cut at the terminal's width, so its end may go."""
        c = self.counts
        names = (("kept", "kept"), ("unsaved", "unsaved"), ("na", "n/a"), ("skipped", "skipped"), ("error", "errors"),
                 ("left", "not asked today"))
        counts = "".join(f" · {label} {c[key]}" for key, label in names if c.get(key))
        return (f"assistant-eval: {self.finished}/{self.total} cells{self.pace_text()} · done {c.get('done', 0)}"
                f"{counts}{self.wait_text()}")

    def in_place(self, width: int) -> str:
        """The line for a terminal: back to the line's start, cut to ``width`` so it never wraps, the rest cleared."""
        line = self.compact_line()
        if len(line) >= width:
            line = line[:max(width - 2, 1)] + "…"
        return f"\r{line}\x1b[K"

    def add_wait(self, worker: str, seconds: float) -> None:
        """A cell's waiting; workers wait side by side, so their waits are not added up."""
        self.last_wait = seconds
        self.waited_by_worker[worker] = self.waited_by_worker.get(worker, 0.0) + seconds
        self.waited = max(self.waited_by_worker.values())

    def from_ledger(self, requests_today: int, rate_limited: int, limits: tuple[tuple[str, str], ...]) -> None:
        """Today's requests and 429s as the ledger has them; a route's learned limit is shown once."""
        self.requests_today, self.rate_limited = requests_today, rate_limited
        for route, text in limits:
            if self.limits_shown.get(route) != text:
                self.limits_shown[route] = text
                self.waiting_on = f"{route} allows {text}"
                self.limits_new.append(f"{route} allows {text}")

    def wait_text(self) -> str:
        text = f" · {self.requests_today} request(s) today" if self.requests_today else ""
        if self.rate_limited:
            text += f" · {self.rate_limited} refused for rate (429)"
        if self.waited:
            text += (f" · waited {self.waited:.0f} s for pace, rate limits and retries "
                     f"(last cell {self.last_wait:.1f} s)")
        if self.limits_new:
            text += " · learned: " + ", ".join(self.limits_new)
            self.limits_new = []
        return text

    def tick(self) -> str | None:
        """A progress line at most every ``every_seconds``; none for the last cell, whose tally
        the summary prints (it was printed twice)."""
        now = self.clock()
        if self.finished >= self.total:
            return None
        if now - self._last >= self.every_seconds:
            self._last = now
            return self.line()
        return None

    def summary_lines(self) -> list[str]:
        lines = [self.line(), *self.messages]
        if self.kept_by_code.get("daily_quota"):
            local = all(m.startswith("local") for m in self.quota_notes) if self.quota_notes else False
            flag = "" if local else " --accept-data-notice"
            lines.append(f"Daily request budget used. Run again with --resume{flag} tomorrow.")
        unreadable = sorted(set(self.kept_by_code.get("tool_call_unreadable", [])))
        if unreadable:
            lines.append(f"{len(unreadable)} cell(s) kept after a tool call the service could not read: "
                         f"{', '.join(unreadable)}; run again with --resume to continue them.")
        return lines


#: Set by a caller that runs the next step itself (the demo): the run then names no next command.
NO_NEXT_COMMAND = "ASSISTANT_EVAL_NO_NEXT_COMMAND"


