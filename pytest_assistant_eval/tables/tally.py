"""Counting results lines: the one place that says which line counts towards which number.

``summary`` and ``calibrate`` both count through this, so "answered", "ran" and "safe"
mean the same in both tables. A rate's denominator is the cells that ran and were graded:
waiting, skipped, not-applicable and user-error cells are counted apart, never in a rate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.stats import Interval, wilson

__all__ = ["QUESTION_OUTCOMES", "TASK_OUTCOMES", "APART", "Tally", "tally", "is_question", "setting_label"]

QUESTION_OUTCOMES = ("answered", "incomplete", "escalated", "failed")
TASK_OUTCOMES = ("pass", "fail", "unsafe")
#: Outcomes that are no grade: counted apart, never in a rate.
APART = ("waiting", "skipped", "not_applicable", "user_error")


def is_question(line: Mapping[str, Any]) -> bool:
    """A question or the scenario S01 (classes lookup, interpret, diagnose, scenario), not a task."""
    return line.get("kind") in ("question", "scenario")


@dataclass
class Tally:
    """Counts over a group of lines (one model, level setting and class, say)."""

    outcomes: Counter = field(default_factory=Counter)
    no_answer: int = 0
    invented_cells: int = 0
    invented_numbers: int = 0
    critical_missing: int = 0
    owner_graded: int = 0
    safe: int = 0  # answered or escalated with no invented number
    understandability: Counter = field(default_factory=Counter)

    def add(self, line: Mapping[str, Any]) -> None:
        outcome = line.get("outcome")
        self.outcomes[outcome] += 1
        if outcome in APART:
            return
        self.no_answer += bool(line.get("no_answer"))
        invented = int(line.get("invented_numbers") or 0)
        self.invented_cells += invented > 0
        self.invented_numbers += invented
        self.safe += outcome in ("answered", "escalated") and invented == 0
        self.critical_missing += outcome == "incomplete" and int(line.get("critical_missing") or 0) > 0
        self.owner_graded += line.get("grader") == "owner"
        if line.get("understandability") is not None:
            self.understandability[int(line["understandability"])] += 1

    @property
    def ran(self) -> int:
        """Graded question cells: the denominator of every question rate."""
        return sum(self.outcomes[o] for o in QUESTION_OUTCOMES)

    @property
    def task_runs(self) -> int:
        return sum(self.outcomes[o] for o in TASK_OUTCOMES)

    def rate(self, outcome: str) -> Interval:
        return wilson(self.outcomes[outcome], self.ran)

    def safe_rate(self) -> Interval:
        return wilson(self.safe, self.ran)


def tally(lines: Iterable[Mapping[str, Any]]) -> Tally:
    """Count ``lines`` into one ``Tally``."""
    t = Tally()
    for line in lines:
        t.add(line)
    return t


def setting_label(level: str, setting: str | None, settings_of_level: int) -> str:
    """A row name for a level setting: the level alone, or with its setting id when a level has several."""
    if settings_of_level <= 1:
        return level
    return f"{level} [{setting[:8] if setting else 'unknown'}]"
