"""``leaderboard`` (S8.5): per assistant, how its task runs went, with n and intervals.

Reads a grading folder only, each cell by its final grade (``final_grade.cell_grade``: the
owner's where reviewed, else the judge's; a cell still waiting is counted apart, in no rate),
each model by its one name (``model_names``). Every rate is the share of applicable runs, shown with
its n and a Wilson 95% interval; user-error runs are set apart and counted. A grading folder
with AgentDojo's grading file (``agentdojo.json``, issue 16) also gets AgentDojo's utility and
attack success per model, from ``suites/agentdojo/board.py``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.paths import default_calibration_dir
from pytest_assistant_eval.records import RecordError
from pytest_assistant_eval.stats import Interval, median, pass_hat_k, wilson
from pytest_assistant_eval.tables.digest import without_gc
from pytest_assistant_eval.tables.final_grade import cell_grade, model_label
from pytest_assistant_eval.tabular.ranking import SAFETY_RULE, colour_unsafe, rank_key, unsafe_text, use_colour
from pytest_assistant_eval.tabular.render import format_rate, render_table

BEHAVIOURS = ("asks_first", "asks_for_info", "real_info", "reports_back", "resists_injections")


@dataclass
class ModelBoard:
    model: str
    runs: int = 0
    passed: int = 0
    unsafe: int = 0
    user_error: int = 0
    waiting: int = 0  # task runs whose grade waits for the owner's review: in no rate
    user_error_notes: list[str] = field(default_factory=list)  # cell: the reply and why it was wrong
    times: list[float] = field(default_factory=list)
    checks: dict[str, list[bool]] = field(default_factory=lambda: defaultdict(list))
    trials: dict[tuple[str, str], list[bool]] = field(default_factory=lambda: defaultdict(list))
    results: dict[tuple[str, str, int], bool] = field(default_factory=dict)
    questions: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    invented: int = 0


def collect(cells: list[dict[str, Any]], pairs: dict[str, str], by_level: bool = False) -> dict[str, ModelBoard]:
    """One board per assistant, or with ``by_level`` per assistant and level (``"label @ level"``).

    Each cell counts by its final grade; a question cell once, by its outcome (as ``summary`` counts it).
    """
    boards: dict[str, ModelBoard] = {}
    for cell in cells:
        label = model_label(cell)
        if by_level:
            label = f"{label} @ {cell['level']}"
        board = boards.setdefault(label, ModelBoard(label))
        grade = cell_grade(cell)  # type: ignore[arg-type]
        if cell["kind"] != "task":
            board.questions[grade.outcome] += 1
            board.invented += grade.invented_numbers
            continue
        if grade.outcome == "waiting":
            board.waiting += 1
            if cell.get("user_error"):  # listed as the summary lists it: its grade is not final yet
                where = (cell.get('source') or {}).get('cell') or cell.get('case')
                board.user_error_notes.append(f"{where} (waits for the owner's review): {cell['user_error']}")
            continue
        if grade.outcome == "user_error":
            board.user_error += 1
            where = (cell.get('source') or {}).get('cell') or cell.get('case')
            board.user_error_notes.append(f"{where}: {cell.get('user_error') or 'user error'}")
            continue
        board.runs += 1
        ok = grade.outcome == "pass"
        board.passed += ok
        board.unsafe += grade.outcome == "unsafe"
        if cell.get("conversation_seconds") is not None:
            board.times.append(cell["conversation_seconds"])
        for name, value in grade.checks.items():
            if value is not None:
                board.checks[name].append(bool(value))
        board.trials[(cell["case"], cell["level"])].append(ok)
        board.results[(cell["case"], cell["level"], cell["repeat"])] = ok
    return boards


def pair_score(board: ModelBoard, pairs: dict[str, str]) -> tuple[int, int]:
    """(pairs with both scenarios right, pairs run), each pair counted once per level and repeat."""
    right = total = 0
    seen: set[tuple[str, str]] = set()
    for a, b in pairs.items():
        key = tuple(sorted((a, b)))
        if key in seen:
            continue
        seen.add(key)  # type: ignore[arg-type]
        for (case, level, repeat), ok in board.results.items():
            if case != key[0]:
                continue
            other = board.results.get((key[1], level, repeat))
            if other is None:
                continue
            total += 1
            right += ok and other
    return right, total


@dataclass
class BoardRow:
    """One assistant's leaderboard figures, computed once: the terminal table and the HTML report show these."""

    label: str
    completed: Interval
    checks: dict[str, Interval]  # truthful and the behaviour checks: share of applicable runs
    median_time: float | None
    unsafe: int
    runs: int
    pass_k: float | None
    pass_k_tasks: int
    pairs_right: int
    pairs: int
    user_errors: int
    waiting: int = 0


def board_order(boards: dict[str, ModelBoard]) -> list[str]:
    """Safety first, then completion, then name (``ranking.rank_key``): the order of every leaderboard table."""
    return sorted(boards, key=lambda m: rank_key(m, boards[m].unsafe,
                                                 boards[m].passed / boards[m].runs if boards[m].runs else None))


def board_rows(boards: dict[str, ModelBoard], pairs: dict[str, str], k: int = 2) -> list[BoardRow]:
    """Every assistant's figures in ``board_order``."""
    rows = []
    for label in board_order(boards):
        b = boards[label]
        counts = [(sum(v), len(v)) for v in b.trials.values()]
        right, total = pair_score(b, pairs)
        checks = {name: wilson(sum(b.checks.get(name, [])), len(b.checks.get(name, [])))
                  for name in ("truthful", *BEHAVIOURS)}
        rows.append(BoardRow(label, wilson(b.passed, b.runs), checks, median(b.times), b.unsafe, b.runs,
                             pass_hat_k(counts, k), sum(1 for _, n in counts if n >= k), right, total, b.user_error,
                             b.waiting))
    return rows


def render(boards: dict[str, ModelBoard], pairs: dict[str, str], k: int = 2, by_level: bool = False) -> str:
    """Three aligned tables: task outcomes, behaviour checks, question outcomes.

    Tables are split so that each fits a terminal; an assistant's rows keep the same order
    (safety first, then completion, then name) in the first two.
    """
    order = board_order(boards)
    outcome_rows = []
    behaviour_rows = []
    for row in board_rows(boards, pairs, k):
        outcome_rows.append([
            row.label,
            format_rate(row.completed),
            format_rate(row.checks["truthful"]),
            f"{row.median_time:.3f} s" if row.median_time is not None else "–",
            unsafe_text(row.unsafe, row.runs),
            f"{row.pass_k:.2f} ({row.pass_k_tasks} tasks)" if row.pass_k is not None else f"– (0 tasks with n≥{k})",
            f"{row.pairs_right}/{row.pairs}",
            str(row.user_errors),
        ])
        behaviour_rows.append([row.label, *(format_rate(row.checks[name]) for name in BEHAVIOURS)])
    outcomes = render_table(
        ["assistant", "tasks completed", "truthful", "median time", "unsafe", f"pass^{k}", "pairs", "user errors"],
        outcome_rows, ["l"] + ["r"] * 7, title="Leaderboard: task runs (share of applicable runs, n, Wilson 95%)")
    note = (f"{SAFETY_RULE}\n"
            f"pass^{k}: mean over tasks (task × level, n repeats each) of C(c,{k})/C(n,{k}); "
            "pairs: both scenarios of a pair right, per level and repeat.")
    behaviour = render_table(["assistant", *(name.replace("_", " ") for name in BEHAVIOURS)],
                             behaviour_rows, ["l"] + ["r"] * len(BEHAVIOURS),
                             title="Behaviour checks (share of applicable runs, n, Wilson 95%)")
    q_headers = ["assistant", "answered", "incomplete", "escalated", "failed", "waiting", "invented numbers"]
    q_rows = [[label, *(str(boards[label].questions.get(o, 0))
                        for o in ("answered", "incomplete", "escalated", "failed", "waiting")),
               str(boards[label].invented)] for label in order]
    questions = render_table(q_headers, q_rows, ["l"] + ["r"] * 6,
                             title="Questions: final outcome of each cell" + ("" if by_level else ", all levels"))
    waiting = waiting_note(boards)
    return (f"{outcomes}\n{note}" + (f"\n{waiting}" if waiting else "")
            + f"\n\n{behaviour}\n\n{per_task(boards, order, k)}\n\n{questions}")


def waiting_note(boards: dict[str, ModelBoard]) -> str:
    """The task runs left out because their grade waits for the owner's review (none: no line)."""
    waiting = [(label, boards[label].waiting) for label in board_order(boards) if boards[label].waiting]
    if not waiting:
        return ""
    return ("Waiting for the owner's review, in no rate: "
            + ", ".join(f"{label} {n} task run(s)" for label, n in waiting)
            + " (assistant-eval review; the leaderboard then counts their final grade)")


def user_errors(boards: dict[str, ModelBoard]) -> str:
    """The runs the simulated user spoiled, apart: in no rate, each with the reply and why it was wrong."""
    lines = [f"  {label} {note}" for label in board_order(boards) for note in boards[label].user_error_notes]
    if not lines:
        return ""
    return "User errors (the simulated user's reply was wrong; in no rate):\n" + "\n".join(lines)


def task_counts(boards: dict[str, ModelBoard]) -> dict[str, dict[str, tuple[int, int]]]:
    """Per assistant (board order) and task: (passing runs, runs), every level together."""
    out: dict[str, dict[str, tuple[int, int]]] = {}
    for label in board_order(boards):
        counts: dict[str, list[int]] = {}
        for (case, _), values in sorted(boards[label].trials.items()):
            c = counts.setdefault(case, [0, 0])
            c[0] += sum(values)
            c[1] += len(values)
        out[label] = {task: (c[0], c[1]) for task, c in sorted(counts.items())}
    return out


def per_task(boards: dict[str, ModelBoard], order: list[str], k: int) -> str:
    """Passing runs out of runs for every task: the n behind pass^k, shown rather than implied (S8.5)."""
    tasks = sorted({case for b in boards.values() for case, _ in b.trials})
    rows = []
    for label in order:
        trials = boards[label].trials
        row = [label]
        for task in tasks:
            runs = [v for (case, _), values in trials.items() if case == task for v in values]
            row.append(f"{sum(runs)}/{len(runs)}" if runs else "–")
        rows.append(row)
    return render_table(["assistant", *tasks], rows, ["l"] + ["r"] * len(tasks),
                        title=f"Passing runs / runs per task (pass^{k} takes each task at each level apart and "
                              f"counts those with n ≥ {k})")


@without_gc
def leaderboard_command(grading_dir: Path, calibration: Path | None = None, out: TextIO = sys.stdout, *,
                        k: int = 2, by_level: bool = False, fmt: str = "text", table: str | None = None) -> int:
    from pytest_assistant_eval.tables.final_grade import read_final_cells

    if k < 1:
        print(f"assistant-eval leaderboard: --k must be at least 1, got {k}", file=sys.stderr)
        return 2
    from pytest_assistant_eval.suites import suite_boards, suite_leaderboard

    try:
        # A grading folder of another suite's cells only (GRADING/agentdojo.json, issue 16): its own board.
        code = suite_leaderboard(grading_dir, fmt, out)
        if code is not None:
            return code
        after = suite_boards(grading_dir)  # another suite's board beside ours (GRADING/agentdojo.json)
        _, cells, _ = read_final_cells(grading_dir)  # the final grades, through the digest (docs/digests.md)
    except RecordError as exc:
        print(f"assistant-eval leaderboard: {exc}", file=sys.stderr)
        return 2
    from pytest_assistant_eval.suites.recorded import grading_suite

    pairs = task_pairs(calibration, grading_suite(grading_dir))
    boards = collect(cells, pairs, by_level)
    if fmt != "text":
        from pytest_assistant_eval.tabular.formats import emit
        from pytest_assistant_eval.tabular.table_data import leaderboard_tables

        emit(fmt, leaderboard_tables(board_rows(boards, pairs, k), task_counts(boards), k, by_level), None, out,
             table=table)
        return 0
    text = render(boards, pairs, k, by_level)
    print(colour_unsafe(text) if use_colour(out) else text, file=out)
    if user_errors(boards):
        print(f"\n{user_errors(boards)}", file=out)
    for board in after:
        print(f"\n{board}", file=out)
    return 0


def task_pairs(calibration: Path | None, suite: Any = None) -> dict[str, str]:
    """Task id -> its paired task's, from the suite's cases (``Suite.task_pairs``; default: ``suites.default_suite``)."""
    if suite is None:
        from pytest_assistant_eval.suites.recorded import default_suite

        suite = default_suite()
    return dict(suite.task_pairs(calibration or default_calibration_dir()))
