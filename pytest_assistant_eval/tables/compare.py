"""``compare --dir GRADING A B`` (issue 24): can the data tell two models apart, and by how much?

Each model's own interval answers "how good is A"; an owner choosing between A and B needs
the difference and whether this many cases can see it. Both models ran the same cases (case,
level, repeat), so the comparison is paired: per behaviour check and per outcome rate, over the
cases both ran and where the check applied to both, the difference A − B with Newcombe's paired
95% interval, the discordant counts (A only, B only), the exact McNemar p, and the smallest
difference this many cases could tell apart at all.

Reads the graded cells the leaderboard reads, with the leaderboard's rules: user-error runs
and cells waiting for a grade are in no pair; a check with nothing to read (``null``) is not
a pass. Statistics come from ``stats`` only; layout from ``render``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.stats import (
    PairedCounts,
    mcnemar_exact,
    newcombe_paired,
    paired_counts,
    smallest_detectable,
)
from pytest_assistant_eval.tables.digest import without_gc
from pytest_assistant_eval.tabular.render import format_percent, render_table

__all__ = ["Comparison", "compare_cells", "render_compare", "compare_command", "model_label", "row_texts",
           "closing_lines"]

#: Task checks compared as pass / not pass (the leaderboard's columns), in its order.
TASK_CHECKS = ("truthful", "asks_first", "asks_for_info", "real_info", "reports_back", "resists_injections")
QUESTION_OUTCOMES = ("answered", "incomplete", "escalated", "failed")
#: Outcomes that are no grade and so in no pair.
NO_GRADE = ("user_error", "waiting", "skipped", "not_applicable")


@dataclass(frozen=True)
class Comparison:
    """One measure of A against B over the cases both ran and where it applied to both."""

    measure: str
    of: str  # what the rates are shares of
    counts: PairedCounts
    interval: tuple[float, float] | None
    p: float
    detectable: float | None

    @property
    def rate_a(self) -> float | None:
        t = self.counts
        return (t.both + t.only_a) / t.n if t.n else None

    @property
    def rate_b(self) -> float | None:
        t = self.counts
        return (t.both + t.only_b) / t.n if t.n else None


def model_label(cell: Mapping[str, Any]) -> str:
    """The name the leaderboard gives a cell's model."""
    return cell["model"].get("label") or cell["model"]["model"]


def _key(cell: Mapping[str, Any]) -> tuple[str, str, int]:
    return (str(cell["case"]), str(cell["level"]), int(cell.get("repeat") or 1))


Measure = tuple[str, str, str, Callable[[Mapping[str, Any]], bool | None]]


def _measures() -> list[Measure]:
    """(name, kind of cell, what it is a share of, the cell's value: True, False or None for not applicable)."""
    found: list[Measure] = [
        ("tasks completed", "task", "task runs", lambda c: c["outcome"] == "pass"),
        ("unsafe", "task", "task runs", lambda c: c["outcome"] == "unsafe"),
    ]
    for name in TASK_CHECKS:
        def check(c: Mapping[str, Any], name: str = name) -> bool | None:
            value = ((c.get("task") or {}).get("final") or {}).get(name)
            return None if value is None else bool(value)

        found.append((name.replace("_", " "), "task", "task runs where it applied to both", check))
    for outcome in QUESTION_OUTCOMES:
        found.append((outcome, "question", "question cells",
                      lambda c, outcome=outcome: c["outcome"] == outcome))
    return found


def compare_cells(cells: Sequence[Mapping[str, Any]], a: str, b: str) -> list[Comparison]:
    """Every measure of ``a`` against ``b``, paired by (case, level, repeat)."""
    by_model: dict[str, dict[tuple[str, str, int], Mapping[str, Any]]] = {a: {}, b: {}}
    for cell in cells:
        model = cell["model"]
        found = by_model.get(model.get("label") or model["model"])
        if found is not None and cell.get("outcome") not in NO_GRADE:
            found[_key(cell)] = cell
    shared = sorted(set(by_model[a]) & set(by_model[b]))
    rows = []
    for name, kind, of, value in _measures():
        pairs = []
        for key in shared:
            ca, cb = by_model[a][key], by_model[b][key]
            if (ca["kind"] == "task") != (kind == "task") or (cb["kind"] == "task") != (kind == "task"):
                continue
            va, vb = value(ca), value(cb)
            if va is None or vb is None:
                continue  # not applicable to one of them: in no pair
            pairs.append((va, vb))
        counts = paired_counts(pairs)
        rows.append(Comparison(name, of, counts, newcombe_paired(counts), mcnemar_exact(counts.only_a, counts.only_b),
                               smallest_detectable(counts.n)))
    return rows


def _signed(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 100:+.0f} pts" if round(value * 100) else "0 pts"


def _p(p: float) -> str:
    return "1" if p >= 0.9995 else (f"{p:.3f}" if p >= 0.001 else "<0.001")


def row_texts(r: Comparison) -> list[str]:
    """One comparison's figures as text, after its measure and what it is a share of: the terminal and the page."""
    if r.counts.n == 0:
        return ["0", "–", "–", "–", "–", "–", "–", "–"]
    low, high = r.interval  # type: ignore[misc]
    return [str(r.counts.n), format_percent(r.rate_a), format_percent(r.rate_b), _signed(r.counts.difference),
            f"{low * 100:+.0f} to {high * 100:+.0f}", f"{r.counts.only_a} / {r.counts.only_b}", _p(r.p),
            "–" if r.detectable is None else format_percent(r.detectable)]


def render_compare(rows: Sequence[Comparison], a: str, b: str) -> str:
    """The comparison as one table, with what the rates are shares of and what the figures can tell."""
    table_rows = [[r.measure, r.of, *row_texts(r)] for r in rows]
    title = (f"Compare {a} (A) with {b} (B): paired over the cases both ran (case × level × repeat); "
             "difference A − B with Newcombe's 95% interval, exact McNemar p")
    text = render_table(["measure", "share of", "n", "A", "B", "A − B", "95% interval", "A only / B only",
                         "McNemar p", "smallest detectable"],
                        table_rows, ["l", "l", "r", "r", "r", "r", "r", "r", "r", "r"], title=title)
    return f"{text}\n{closing_lines(rows)}"


def closing_lines(rows: Sequence[Comparison]) -> str:
    """What this many cases can tell apart, and what the discordant counts mean."""
    biggest = max((r.counts.n for r in rows), default=0)
    least = smallest_detectable(biggest)
    if least is None:
        line = (f"With at most {biggest} paired case(s) no difference can reach p < 0.05: "
                "these cases cannot tell the two models apart.")
    else:
        k = round(least * biggest)
        line = (f"With {biggest} paired cases, no difference below {format_percent(least)} can be told apart "
                f"(p < 0.05 needs at least {k} discordant cases, all one way); a measure with fewer cases "
                "needs more (its own column).")
    note = ("A only / B only: the cases where the measure held for one model and not for the other; only these "
            "move the difference. A case where a check did not apply to one of the two is in no pair.")
    return f"{line}\n{note}"


@without_gc
def compare_command(grading_dir: Path, a: str, b: str, out: TextIO = sys.stdout, fmt: str = "text",
                    table: str | None = None) -> int:
    from pytest_assistant_eval.records import RecordError
    from pytest_assistant_eval.tables.grading_source import read_graded_cells

    try:
        _, cells, _ = read_graded_cells(grading_dir, slim=True)
    except RecordError as exc:
        print(f"assistant-eval compare: {exc}", file=sys.stderr)
        return 2
    known = sorted({c["model"].get("label") or c["model"]["model"] for c in cells})
    for name in (a, b):
        if name not in known:
            print(f"assistant-eval compare: {grading_dir} has no model {name!r}; its models: "
                  f"{', '.join(known) or 'none'}", file=sys.stderr)
            return 2
    if a == b:
        print("assistant-eval compare: give two different models", file=sys.stderr)
        return 2
    rows = compare_cells(cells, a, b)
    if fmt != "text":
        from pytest_assistant_eval.tabular.formats import emit
        from pytest_assistant_eval.tabular.table_data import compare_tables

        emit(fmt, compare_tables(rows, a, b), None, out, table=table)
        return 0
    print(render_compare(rows, a, b), file=out)
    return 0
