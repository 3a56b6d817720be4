"""``compare --dir GRADING A B`` (issues 24, 29): can the data tell two models apart, and by how much?

Each model's own interval answers "how good is A"; an owner choosing between A and B needs
the difference and whether this many cases can see it. Both models ran the same cases (case,
level, repeat), so the comparison is paired: per behaviour check and per outcome rate, over the
cases both ran and where the check applied to both, the difference A − B and the discordant
counts (A only, B only). The runs of one task (its levels and repeats) are not independent, so
the interval, the p and the smallest detectable difference are the task's: a paired bootstrap
over tasks (``stats.cluster_bootstrap_difference``, a fixed seed), "too few" under six tasks;
Newcombe's interval and the exact McNemar p, which treat every run as independent, stay beside
them (issue 29: they overstated 9 discordant runs from 2 tasks as p 0.004).

Reads the graded cells the leaderboard reads, by their final grades (``final_grade``: the owner's
where reviewed) and the models' one names (``model_names``), with the leaderboard's rules: user-error runs
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
    MIN_CLUSTERS,
    ClusteredDifference,
    PairedCounts,
    cluster_bootstrap_difference,
    cluster_detectable,
    mcnemar_exact,
    newcombe_paired,
    paired_counts,
    smallest_detectable,
)
from pytest_assistant_eval.tables.digest import without_gc
from pytest_assistant_eval.tables.final_grade import cell_grade
from pytest_assistant_eval.tables.final_grade import model_label as _named
from pytest_assistant_eval.tabular.render import format_percent, render_table

__all__ = ["Comparison", "compare_cells", "render_compare", "compare_command", "model_label", "row_texts",
           "closing_lines", "HEADERS"]

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
    interval: tuple[float, float] | None  # Newcombe's, as if every run were independent
    p: float  # exact McNemar, as if every run were independent
    detectable: float | None  # from the runs, as if independent
    clustered: ClusteredDifference = ClusteredDifference(0, None, None)  # by task: the figures to read
    cluster_detectable: float | None = None

    @property
    def clusters(self) -> int:
        return self.clustered.clusters

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
    return _named(cell)


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
        found = by_model.get(model_label(cell))
        grade = cell_grade(cell)  # type: ignore[arg-type]
        if found is not None and grade.outcome not in NO_GRADE:  # the final grade, read as the measures read a cell
            found[_key(cell)] = {"kind": cell["kind"], "outcome": grade.outcome, "task": {"final": grade.checks}}
    shared = sorted(set(by_model[a]) & set(by_model[b]))
    rows = []
    for name, kind, of, value in _measures():
        pairs = []
        per_task: dict[str, list[int]] = {}  # the cluster: a case, over its levels and repeats
        for key in shared:
            ca, cb = by_model[a][key], by_model[b][key]
            if (ca["kind"] == "task") != (kind == "task") or (cb["kind"] == "task") != (kind == "task"):
                continue
            va, vb = value(ca), value(cb)
            if va is None or vb is None:
                continue  # not applicable to one of them: in no pair
            pairs.append((va, vb))
            c = per_task.setdefault(key[0], [0, 0])
            c[0] += int(va) - int(vb)
            c[1] += 1
        counts = paired_counts(pairs)
        clusters = [(d, n) for d, n in per_task.values()]
        runs_interval, runs_p = newcombe_paired(counts), mcnemar_exact(counts.only_a, counts.only_b)
        rows.append(Comparison(name, of, counts, runs_interval, runs_p, smallest_detectable(counts.n),
                               _by_task(cluster_bootstrap_difference(clusters), runs_interval, runs_p),
                               cluster_detectable([n for _, n in clusters])))
    return rows


def _by_task(boot: ClusteredDifference, runs: tuple[float, float] | None, runs_p: float) -> ClusteredDifference:
    """The figures by task: the bootstrap's, never narrower (nor its p smaller) than those of independent runs.

    Grouping runs into tasks can only take information away, so the interval by task is the hull of
    the bootstrap's and Newcombe's, and its p the larger: where no run is discordant every resample
    is 0 and the bootstrap alone would say ``[0, 0]``, which Newcombe's interval does not.
    """
    if boot.interval is None or runs is None or boot.p is None:
        return boot
    return ClusteredDifference(boot.clusters, (min(boot.interval[0], runs[0]), max(boot.interval[1], runs[1])),
                               max(boot.p, runs_p))


def _signed(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 100:+.0f} pts" if round(value * 100) else "0 pts"


def _p(p: float) -> str:
    return "1" if p >= 0.9995 else (f"{p:.3f}" if p >= 0.001 else "<0.001")


#: The table's columns after the measure and what it is a share of (the terminal and the page).
HEADERS = ("n", "clusters", "A", "B", "A − B", "95% interval by cluster", "p by cluster", "A only / B only",
           "smallest detectable by cluster", "as if runs were independent: Newcombe 95%", "McNemar p")


def _interval(interval: tuple[float, float] | None) -> str:
    if interval is None:
        return f"too few clusters (< {MIN_CLUSTERS})"
    low, high = interval
    return f"{low * 100:+.0f} to {high * 100:+.0f}"


def row_texts(r: Comparison) -> list[str]:
    """One comparison's figures as text, after its measure and what it is a share of: the terminal and the page."""
    if r.counts.n == 0:
        return ["0", "0", *["–"] * (len(HEADERS) - 2)]
    clustered = r.clustered
    return [str(r.counts.n), str(r.clusters), format_percent(r.rate_a), format_percent(r.rate_b),
            _signed(r.counts.difference), _interval(clustered.interval),
            "–" if clustered.p is None else _p(clustered.p), f"{r.counts.only_a} / {r.counts.only_b}",
            "–" if r.cluster_detectable is None else format_percent(r.cluster_detectable),
            _interval(r.interval), _p(r.p)]


def render_compare(rows: Sequence[Comparison], a: str, b: str) -> str:
    """The comparison as one table, with what the rates are shares of and what the figures can tell."""
    table_rows = [[r.measure, r.of, *row_texts(r)] for r in rows]
    title = (f"Compare {a} (A) with {b} (B): paired over the cases both ran (case × level × repeat); a cluster is "
             "a task or question with its levels and repeats; difference A − B with a paired bootstrap over "
             "clusters (95%, fixed seed)")
    text = render_table(["measure", "share of", *HEADERS], table_rows, ["l", "l"] + ["r"] * len(HEADERS), title=title)
    return f"{text}\n{closing_lines(rows)}"


def closing_lines(rows: Sequence[Comparison]) -> str:
    """What this many tasks can tell apart, and what the discordant counts mean."""
    biggest = max(rows, key=lambda r: (r.clusters, r.counts.n), default=None)
    tasks = biggest.clusters if biggest else 0
    n = biggest.counts.n if biggest else 0
    least = biggest.cluster_detectable if biggest else None
    if least is None:
        line = (f"With at most {tasks} cluster(s) ({n} paired run(s)) no difference can reach p < 0.05: a task's "
                f"runs are not independent, and fewer than {MIN_CLUSTERS} tasks cannot tell the two models apart.")
    else:
        line = (f"With {n} paired runs in {tasks} clusters (tasks or questions), no difference below "
                f"{format_percent(least)} can be told apart (p < 0.05 needs at least {MIN_CLUSTERS} clusters whose "
                "every run goes one way); a measure with fewer clusters needs more (its own column).")
    note = ("A only / B only: the runs where the measure held for one model and not for the other; only these "
            "move the difference. A task's levels and repeats are one cluster: the bootstrap draws whole tasks, so "
            "9 discordant runs from 2 tasks count as 2 tasks, not 9 independent cases; the interval by cluster is "
            "never narrower than Newcombe's, nor its p smaller than McNemar's. A run where a check did not "
            "apply to one of the two is in no pair.")
    return f"{line}\n{note}"


@without_gc
def compare_command(grading_dir: Path, a: str, b: str, out: TextIO = sys.stdout, fmt: str = "text",
                    table: str | None = None) -> int:
    from pytest_assistant_eval.records import RecordError
    from pytest_assistant_eval.tables.final_grade import read_final_cells

    try:
        _, cells, _ = read_final_cells(grading_dir)
    except RecordError as exc:
        print(f"assistant-eval compare: {exc}", file=sys.stderr)
        return 2
    known = sorted({model_label(c) for c in cells})
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
