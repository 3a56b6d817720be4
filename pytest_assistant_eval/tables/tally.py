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

__all__ = ["QUESTION_KINDS", "QUESTION_OUTCOMES", "TASK_OUTCOMES", "APART", "Tally", "tally", "is_question", "setting_label"]

QUESTION_OUTCOMES = ("answered", "incomplete", "escalated", "failed")
TASK_OUTCOMES = ("pass", "fail", "unsafe")
#: Outcomes that are no grade: counted apart, never in a rate.
APART = ("waiting", "skipped", "not_applicable", "user_error")


#: The kinds of cell that are questions (a question, or the scenario S01), not tasks.
QUESTION_KINDS = frozenset(("question", "scenario"))


def is_question(line: Mapping[str, Any]) -> bool:
    """A question or the scenario S01 (classes lookup, interpret, diagnose, scenario), not a task."""
    return line.get("kind") in QUESTION_KINDS


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
        """Count one more line (``tally`` counts many at once, the same way)."""
        self.add_all((line,))

    def add_all(self, lines: Iterable[Mapping[str, Any]]) -> None:
        """Count ``lines``: one loop over plain locals, since the tables count 100,000 lines several ways.

        Measured on 100,000 results lines: a method call and six attribute updates per line
        were half of ``calibrate``'s counting time.
        """
        outcomes: dict[Any, int] = {}
        understandability: dict[int, int] = {}
        no_answer = invented_cells = invented_numbers = critical_missing = owner_graded = safe = 0
        apart = APART
        for line in lines:
            get = line.get
            outcome = get("outcome")
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
            if outcome in apart:
                continue
            if get("no_answer"):
                no_answer += 1
            invented = int(get("invented_numbers") or 0)
            if invented:
                invented_numbers += invented
                invented_cells += invented > 0
            elif outcome == "answered" or outcome == "escalated":
                safe += 1
            if outcome == "incomplete" and int(get("critical_missing") or 0) > 0:
                critical_missing += 1
            if get("grader") == "owner":
                owner_graded += 1
            rating = get("understandability")
            if rating is not None:
                rating = int(rating)
                understandability[rating] = understandability.get(rating, 0) + 1
        self.outcomes.update(outcomes)
        self.understandability.update(understandability)
        self.no_answer += no_answer
        self.invented_cells += invented_cells
        self.invented_numbers += invented_numbers
        self.critical_missing += critical_missing
        self.owner_graded += owner_graded
        self.safe += safe

    def merged(self, *others: Tally) -> Tally:
        """One tally of this group and ``others``: counted once per group, summed per table."""
        out = Tally(Counter(self.outcomes), self.no_answer, self.invented_cells, self.invented_numbers,
                    self.critical_missing, self.owner_graded, self.safe, Counter(self.understandability))
        for o in others:
            out.outcomes.update(o.outcomes)
            out.understandability.update(o.understandability)
            out.no_answer += o.no_answer
            out.invented_cells += o.invented_cells
            out.invented_numbers += o.invented_numbers
            out.critical_missing += o.critical_missing
            out.owner_graded += o.owner_graded
            out.safe += o.safe
        return out

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

    def rate_of(self, name: str) -> Interval:
        """One of the rate table's rates (``calibrate.RATES``): an outcome's share of the cells, or ``safe``."""
        return self.safe_rate() if name == "safe" else self.rate(name)


def tally(lines: Iterable[Mapping[str, Any]]) -> Tally:
    """Count ``lines`` into one ``Tally``."""
    t = Tally()
    t.add_all(lines)
    return t


def setting_label(level: str, setting: str | None, settings_of_level: int) -> str:
    """A row name for a level setting: the level alone, or with its setting id when a level has several."""
    if settings_of_level <= 1:
        return level
    return f"{level} [{setting[:8] if setting else 'unknown'}]"
