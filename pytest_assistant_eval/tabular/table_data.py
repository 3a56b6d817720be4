"""The table commands' figures as data tables (``--format json|csv|markdown``, issue 24).

Each builder takes the figures a command already computed for its text tables (board rows,
summary groups, calibrate's rate rows, AgentDojo's rates) and lays them out as
:class:`~pytest_assistant_eval.tabular.formats.DataTable` s with the columns documented in
``docs/results.md``. A builder never counts anything itself, so the data and the text can
never disagree. Bump a table's version when a column changes meaning, is renamed or removed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_assistant_eval.tabular.formats import Column, DataTable, rate_columns, rate_values
from pytest_assistant_eval.tabular.usage import UsageCount, count_usage

__all__ = ["LEADERBOARD_TABLES", "SUMMARY_TABLES", "CALIBRATE_TABLES", "AGENTDOJO_TABLES", "leaderboard_tables",
           "summary_tables", "calibrate_tables", "agentdojo_tables", "COMPARE_TABLES", "compare_tables", "verdict_tables"]

LEADERBOARD_TABLES = ("leaderboard", "task_runs")
SUMMARY_TABLES = ("summary", "cells", "usage")
#: The trust verdict first: it is the product's answer (issue 29), and json/csv write the first table by default.
CALIBRATE_TABLES = ("verdict", "verdict_levels", "calibrate")
AGENTDOJO_TABLES = ("agentdojo_board", "agentdojo_ours", "agentdojo_selection")
COMPARE_TABLES = ("compare",)

_BOARD_CHECKS = ("truthful", "asks_first", "asks_for_info", "real_info", "reports_back", "resists_injections")


def leaderboard_tables(rows: Sequence[Any], per_task: Mapping[str, Mapping[str, tuple[int, int]]], k: int,
                       by_level: bool) -> list[DataTable]:
    """``leaderboard``: one row per assistant (``by_level``: per assistant and level), and its runs per task."""
    columns = [Column("rank", "integer", "place in the board's order (1 first)"),
               Column("assistant", "string", "the assistant's label (with ' @ level' under --by-level)"),
               Column("level", "string", "the level under --by-level, else null"),
               Column("runs", "integer", "task runs graded, by their final grade (user-error and waiting runs apart)"),
               *rate_columns("tasks_completed", "task runs that passed")]
    for name in _BOARD_CHECKS:
        columns += rate_columns(name, f"{name.replace('_', ' ')}: applicable runs that passed the check")
    columns += [Column("median_seconds", "number", "median conversation time of a task run"),
                Column("unsafe", "integer", "unsafe task runs"),
                Column("pass_k_k", "integer", "the k of pass^k"),
                Column("pass_k", "number", "pass^k: mean over tasks of C(c,k)/C(n,k)"),
                Column("pass_k_tasks", "integer", "tasks (task × level) with at least k runs"),
                Column("pairs_right", "integer", "pairs with both scenarios right"),
                Column("pairs", "integer", "pairs run"),
                Column("user_errors", "integer", "runs the simulated user spoiled (in no rate)"),
                Column("waiting", "integer", "task runs whose grade waits for the owner's review (in no rate)")]
    data = []
    for i, row in enumerate(rows, 1):
        values: dict[str, Any] = {"rank": i, "assistant": str(row.label),
                                  "level": str(row.label).rsplit(" @ ", 1)[1] if by_level and " @ " in row.label else None,
                                  "runs": int(row.runs), **rate_values("tasks_completed", row.completed)}
        for name in _BOARD_CHECKS:
            values.update(rate_values(name, row.checks[name]))
        values.update({"median_seconds": None if row.median_time is None else float(row.median_time),
                       "unsafe": int(row.unsafe), "pass_k_k": int(k),
                       "pass_k": None if row.pass_k is None else float(row.pass_k),
                       "pass_k_tasks": int(row.pass_k_tasks), "pairs_right": int(row.pairs_right),
                       "pairs": int(row.pairs), "user_errors": int(row.user_errors), "waiting": int(row.waiting)})
        data.append(values)
    # 2: every figure is of the cells' final grades (the owner's where reviewed; issue 29)
    board = DataTable("leaderboard", 2, "Leaderboard: task runs", columns, data)
    task_rows = [{"assistant": str(label), "task": str(task), "passed": int(passed), "runs": int(runs)}
                 for label, tasks in per_task.items() for task, (passed, runs) in tasks.items()]
    task_table = DataTable("task_runs", 1, "Passing runs per task", [
        Column("assistant", "string", "the assistant's label"), Column("task", "string", "the task's id"),
        Column("passed", "integer", "runs that passed"), Column("runs", "integer", "runs graded")], task_rows)
    return [board, task_table]


_SUMMARY_COUNTS = ("answered", "incomplete", "escalated", "failed", "pass", "fail", "unsafe", "waiting", "user_error")


def summary_tables(groups: Any, lines: Sequence[Mapping[str, Any]], prices: Any = None,
                   judges: Mapping[str, UsageCount] | None = None) -> list[DataTable]:
    """``summary``: one row per model, level setting and class (tasks: class null), one row per cell, and the
    usage and cost per model and of the judge (``prices``: a ``tables.prices.Prices``, or None: no cost)."""

    def cost(model: str, u: Any) -> float | None:
        return None if prices is None else prices.cost_of(groups.route_of.get(model, ""), u)

    columns = [Column("model", "string", "the model's name (one per PRESET:MODEL identity)"),
               Column("level", "string", "the level"),
               Column("setting", "string", "the level setting's id (null: the record has no key)"),
               Column("level_setting", "string", "the row's name: the level, with the setting when it has several"),
               Column("kind", "string", "question (questions and the scenario S01) or task"),
               Column("class", "string", "the question class (null for tasks)"),
               Column("cells", "integer", "cells in the row (skipped and not-applicable cells apart)")]
    columns += [Column(name, "integer", f"cells graded {name}") for name in _SUMMARY_COUNTS]
    columns += [Column("no_answer", "integer", "failed cells without an answer"),
                Column("invented_numbers", "integer", "numbers with no tool source judged wrong"),
                *(Column(f"understandability_{n}", "integer", f"cells rated {n}") for n in (1, 2, 3)),
                Column("requests", "integer", "model requests of the row's cells"),
                Column("output_tokens", "integer", "output tokens reported over the row's cells"),
                Column("cells_with_tokens", "integer", "cells whose provider reported tokens"),
                Column("input_tokens", "integer", "input tokens reported over the row's cells (every request)"),
                Column("cost", "number", "what the row's tokens cost at --prices (null: no --prices or no price)"),
                Column("cached_input_tokens", "integer", "of the input tokens, read from the provider's cache"),
                Column("cache_write_tokens", "integer", "of the input tokens, written to the provider's cache")]
    rows = []
    keyed = [((m, label, cls), t, "question") for (m, label, cls), t in groups.questions.items()]
    keyed += [((m, label, None), t, "task") for (m, label), t in groups.tasks.items()]
    for (model, label, cls), t, kind in sorted(keyed, key=lambda x: groups.order((x[0][0], x[0][1], x[0][2] or "task"))):
        u = groups.usage.get((model, label, cls)) or UsageCount()
        counted = u.cells
        rows.append({"model": str(model), "level": str(groups.level_of[(model, label)]),
                     "setting": groups.setting_of[(model, label)], "level_setting": str(label), "kind": kind,
                     "class": cls, "cells": int(sum(t.outcomes.values())),
                     **{name: int(t.outcomes[name]) for name in _SUMMARY_COUNTS},
                     "no_answer": int(t.no_answer), "invented_numbers": int(t.invented_numbers),
                     **{f"understandability_{n}": int(t.understandability[n]) for n in (1, 2, 3)},
                     "requests": int(u.requests), "output_tokens": int(u.output_tokens) if counted else None,
                     "cells_with_tokens": int(counted), "input_tokens": int(u.input_tokens) if counted else None,
                     "cost": cost(model, u) if counted else None,
                     "cached_input_tokens": int(u.cached_input_tokens) if counted else None,
                     "cache_write_tokens": int(u.cache_write_tokens) if counted else None})
    # 2: a model is named by its identity, not its results folder; cached input tokens (issue 29)
    summary = DataTable("summary", 2, "Summary: cells per model, level setting and class", columns, rows)
    cell_columns = [Column("model", "string", "the model's name (one per PRESET:MODEL identity)"),
                    Column("cell", "string", "the cell id"),
                    Column("blind_n", "string", "the cell's blind number in the grading (a string: an id)"),
                    Column("level", "string", "the level"), Column("kind", "string", "question, scenario or task"),
                    Column("class", "string", "the question class"), Column("outcome", "string", "the final grade"),
                    Column("grader", "string", "who gave the final grade"),
                    Column("requests", "integer", "model requests the cell took"),
                    Column("output_tokens", "integer", "output tokens reported (null: none reported)"),
                    Column("input_tokens", "integer", "input tokens reported over every request (null: none)"),
                    Column("cost", "number", "what the cell's tokens cost at --prices (null: no --prices or no price)"),
                    Column("cached_input_tokens", "integer", "of the input tokens, read from the provider's cache"),
                    Column("cache_write_tokens", "integer", "of the input tokens, written to the provider's cache")]
    cell_rows = [{"model": str(ln["model"]), "cell": str(ln["cell"]),
                  "blind_n": None if ln.get("blind_n") is None else str(ln["blind_n"]),
                  "level": _str(ln.get("level")), "kind": _str(ln.get("kind")), "class": _str(ln.get("class")),
                  "outcome": _str(ln.get("outcome")), "grader": _str(ln.get("grader")),
                  "requests": _int(ln.get("requests")), "output_tokens": _int(ln.get("output_tokens")),
                  "input_tokens": _int(ln.get("input_tokens")),
                  "cost": None if ln.get("output_tokens") is None and ln.get("input_tokens") is None
                  else cost(str(ln["model"]), count_usage([ln])),
                  "cached_input_tokens": _int(ln.get("cached_input_tokens")),
                  "cache_write_tokens": _int(ln.get("cache_write_tokens"))}
                 for ln in lines]
    usage_columns = [Column("role", "string", "model (graded) or judge (grading; counted apart)"),
                     Column("model", "string", "the model's name (one per PRESET:MODEL identity); the judge: "
                                                "PRESET:MODEL"),
                     Column("route", "string", "PRESET:MODEL, its key in a prices file"),
                     Column("cells", "integer", "cells with reported tokens (null for the judge)"),
                     Column("requests", "integer", "requests"),
                     Column("input_tokens", "integer", "input tokens reported"),
                     Column("output_tokens", "integer", "output tokens reported"),
                     Column("cost", "number", "their cost at --prices (null: no --prices or no price)"),
                     Column("currency", "string", "the prices file's currency (null: no --prices)"),
                     Column("cached_input_tokens", "integer", "of the input tokens, read from the provider's cache"),
                     Column("cache_write_tokens", "integer", "of the input tokens, written to the provider's cache")]
    currency = None if prices is None else str(prices.currency)
    usage_rows: list[dict[str, Any]] = []
    for model, u in sorted(groups.model_usage.items()):
        usage_rows.append({"role": "model", "model": str(model), "route": groups.route_of.get(model),
                           "cells": int(u.cells), "requests": int(u.requests), "input_tokens": int(u.input_tokens),
                           "output_tokens": int(u.output_tokens), "cost": cost(model, u), "currency": currency,
                           "cached_input_tokens": int(u.cached_input_tokens),
                           "cache_write_tokens": int(u.cache_write_tokens)})
    for key, u in sorted((judges or {}).items()):
        usage_rows.append({"role": "judge", "model": str(key), "route": str(key), "cells": None,
                           "requests": int(u.requests), "input_tokens": int(u.input_tokens),
                           "output_tokens": int(u.output_tokens),
                           "cost": None if prices is None else (prices.cost_of(key, u)),
                           "currency": currency, "cached_input_tokens": int(u.cached_input_tokens),
                           "cache_write_tokens": int(u.cache_write_tokens)})
    return [summary, DataTable("cells", 2, "Cells", cell_columns, cell_rows),
            DataTable("usage", 2, "Usage and cost per model and of the judge", usage_columns, usage_rows)]


def calibrate_tables(blocks: Sequence[tuple[bool, str, str | None, Sequence[Any], Sequence[str]]]) -> list[DataTable]:
    """``calibrate``'s rate table: one row per model, level setting and class, each rate with n and bounds.

    ``blocks``: (free plan, model, automatic level, ``calibrate.rate_rows`` rows, the classes present).
    """
    columns = [Column("free_plan", "boolean", "free-plan cells (tabulated apart, not in the evidence)"),
               Column("model", "string", "the model's label"),
               Column("automatic_level", "string", "the model's automatic level"),
               Column("level", "string", "the level"), Column("setting", "string", "the level setting's id"),
               Column("level_setting", "string", "the row's name"), Column("class", "string", "the question class"),
               Column("ran", "integer", "cells that ran and were graded: every rate's n"),
               *rate_columns("answered_rate", "answered cells"),
               *rate_columns("incomplete_rate", "incomplete cells"),
               *rate_columns("safe_rate", "answered or escalated with no invented number")]
    rows = []
    for free, model, automatic, rate_rows, classes in blocks:
        for row in rate_rows:
            for cls in classes:
                t = row.tallies[cls]
                rows.append({"free_plan": bool(free), "model": str(model), "automatic_level": _str(automatic),
                             "level": str(row.level), "setting": _str(row.setting), "level_setting": str(row.label),
                             "class": str(cls), "ran": int(t.ran),
                             **rate_values("answered_rate", t.rate_of("answered")),
                             **rate_values("incomplete_rate", t.rate_of("incomplete")),
                             **rate_values("safe_rate", t.rate_of("safe"))})
    return [DataTable("calibrate", 1, "Calibration: rates per model, level setting and class", columns, rows)]


def verdict_tables(found: Sequence[tuple[bool, Any]]) -> list[DataTable]:
    """``calibrate``'s trust verdict: one row per model (``verdict``), one per model, level and requirement
    (``verdict_levels``), from ``calibrate.plan_verdicts``'s (free plan, ``trust.Verdict``) pairs."""
    columns = [Column("free_plan", "boolean", "free-plan cells (their verdict apart)"),
               Column("model", "string", "the model's label"),
               Column("automatic_level", "string", "the model's automatic level"),
               Column("trusted_level", "string", "the highest level it can be trusted at (null: none)"),
               Column("evidence_level", "string", "the seed's evidence level from questions and task completion"),
               Column("why", "string", "the verdict's reasons: the trusted level's figures, what keeps each other "
                                       "level from being earned"),
               Column("evidence_why", "string", "the evidence level's reasons"),
               Column("behaviour_bar", "number", "the share of applicable runs a behaviour must pass (levels.yaml)"),
               Column("min_runs", "integer", "fewer applicable runs than this are too few to tell (levels.yaml)")]
    rows = [{"free_plan": bool(free), "model": str(v.model), "automatic_level": _str(v.automatic_level),
             "trusted_level": _str(v.trusted), "evidence_level": _str(v.evidence_level), "why": str(v.why),
             "evidence_why": str(v.evidence_why), "behaviour_bar": float(v.bars.behaviour_bar),
             "min_runs": int(v.bars.min_runs)} for free, v in found]
    level_columns = [Column("free_plan", "boolean", "free-plan cells (their verdict apart)"),
                     Column("model", "string", "the model's label"), Column("level", "string", "the level"),
                     Column("level_earned", "boolean", "every requirement of the level holds"),
                     Column("requirement", "string", "answers_CLASS, no_invented_number, no_unsafe_run or a "
                                                     "behaviour check"),
                     Column("status", "string", "meets, below, too_few, not_measured or not_recorded"),
                     Column("blocks", "boolean", "this requirement keeps the level from being earned"),
                     *rate_columns("held", "cells or runs that held the requirement, of those it applied to"),
                     Column("bar", "number", "the share it must reach (1: every one)"),
                     Column("min_runs", "integer", "a behaviour's fewest runs to tell (null for the others)")]
    level_rows = []
    for free, v in found:
        for lt in v.levels:
            for r in lt.requirements:
                level_rows.append({"free_plan": bool(free), "model": str(v.model), "level": str(lt.level),
                                   "level_earned": bool(lt.earned), "requirement": str(r.name),
                                   "status": str(r.status), "blocks": bool(r.blocks),
                                   **rate_values("held", r.interval), "bar": float(r.bar),
                                   "min_runs": int(r.min_runs) if r.min_runs else None})
    return [DataTable("verdict", 1, "Trust verdict: the highest level each model can be trusted at", columns, rows),
            DataTable("verdict_levels", 1, "Trust verdict: each level's requirements with their n", level_columns,
                      level_rows)]


def agentdojo_tables(rows: Sequence[Any], ours: Sequence[Any], runs: Sequence[Mapping[str, Any]]) -> list[DataTable]:
    """``agentdojo board``: AgentDojo's three figures per setting, model, attack and suite (``board.board_rows``),
    our checks apart (``board.ours_rows``), and what each graded run covered (the grading file's ``runs``)."""
    setting = [Column("assistant", "string", "the model's label"),
               Column("benchmark_version", "string", "AgentDojo's benchmark version of the cells"),
               Column("conversation", "string", "agentdojo (AgentDojo's own) or ours"),
               Column("comparable", "boolean", "the figures compare with AgentDojo's leaderboard (its conversation)"),
               Column("defense", "string", "AgentDojo's defense the cells ran with (null: none)")]
    columns = [*setting, Column("attack", "string", "the crossed cells' attack (null: no crossed cell)"),
               Column("suite", "string", "the suite, or 'all' for every suite of the row's cells"),
               *rate_columns("benign_utility", "benign utility: cells without an injection task whose utility() holds"),
               *rate_columns("utility_under_attack", "utility under attack: crossed cells whose utility() holds"),
               *rate_columns("attack_success", "attack success: crossed cells whose security() holds (goal reached)"),
               Column("start_state_cells", "integer", "cells of the row whose utility() holds on the start state")]

    def of(s: Any) -> dict[str, Any]:
        version, conversation, defense = s
        return {"benchmark_version": str(version), "conversation": str(conversation),
                "comparable": conversation == "agentdojo", "defense": _str(defense)}

    data = []
    for r in rows:
        values: dict[str, Any] = {"assistant": str(r.model), **of(r.setting), "attack": _str(r.attack),
                                  "suite": str(r.suite)}
        for name in ("benign_utility", "utility_under_attack", "attack_success"):
            values.update(rate_values(name, r.figures[name]))
        values["start_state_cells"] = int(r.start_state_cells)
        data.append(values)
    board = DataTable("agentdojo_board", 2, "AgentDojo board: benign utility, utility under attack, attack success",
                      columns, data)
    ours_columns = [*setting, *rate_columns("final_state", "ours: the final state is the ground truth's"),
                    *rate_columns("real_info", "ours: identifiers in actions were shown first"),
                    *rate_columns("reports_back", "ours: a refused action was retried or told")]
    ours_data = [{"assistant": str(model), **of(s), **{k: v for name in ("final_state", "real_info", "reports_back")
                                                        for k, v in rate_values(name, rates[name]).items()}}
                 for s, model, rates in ours]
    selection_columns = [Column("folder", "string", "the results folder graded"),
                         Column("assistant", "string", "the model's label"),
                         Column("benchmark_version", "string", "AgentDojo's benchmark version of the records"),
                         Column("attack", "string", "the crossed cells' attack (null: none crossed)"),
                         Column("suite", "string", "the suite"),
                         Column("user_tasks", "integer", "user tasks with a benign cell graded"),
                         Column("user_tasks_of", "integer", "user tasks the suite holds"),
                         Column("pairs", "integer", "crossed pairs (user task x injection task) graded"),
                         Column("pairs_of", "integer", "crossed pairs the suite holds"),
                         Column("cells", "integer", "cells graded (repeats counted)"),
                         Column("keyword", "string", "the run's -k (null: none or not recorded)"),
                         Column("markexpr", "string", "the run's -m (null: none or not recorded)")]
    selection_data = [{"folder": str(run["folder"]), "assistant": str(run["model"]),
                       "benchmark_version": str(run["benchmark_version"]), "attack": _str(run.get("attack")),
                       "suite": str(suite), "user_tasks": int(c["user_tasks"]), "user_tasks_of": int(c["user_tasks_of"]),
                       "pairs": int(c["pairs"]), "pairs_of": int(c["pairs_of"]), "cells": int(c["cells"]),
                       "keyword": _str((run.get("selection") or {}).get("keyword")),
                       "markexpr": _str((run.get("selection") or {}).get("markexpr"))}
                      for run in runs for suite, c in sorted(run["suites"].items())]
    return [board, DataTable("agentdojo_ours", 1, "Ours, not AgentDojo's: our checks on AgentDojo cells", ours_columns,
                             ours_data),
            DataTable("agentdojo_selection", 1, "What each graded AgentDojo run covered", selection_columns,
                      selection_data)]


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def compare_tables(rows: Sequence[Any], a: str, b: str) -> list[DataTable]:
    """``compare``: one row per measure of A against B over their paired cases (``tables/compare.py``)."""
    columns = [Column("measure", "string", "the rate compared"),
               Column("of", "string", "what the rates are shares of"),
               Column("model_a", "string", "A, as the leaderboard names it"),
               Column("model_b", "string", "B, as the leaderboard names it"),
               Column("n", "integer", "paired cases where the measure applied to both"),
               Column("clusters", "integer", "tasks or questions the pairs come from (a case's levels and repeats "
                                             "are one cluster)"),
               Column("rate_a", "number", "A's rate over the pairs (null when n is 0)"),
               Column("rate_b", "number", "B's rate over the pairs (null when n is 0)"),
               Column("difference", "number", "A − B, -1 to 1 (null when n is 0)"),
               Column("difference_low", "number", "95% interval by cluster (paired bootstrap over clusters, never "
                                                  "narrower than Newcombe's): lower bound; null under 6 clusters"),
               Column("difference_high", "number", "95% interval by cluster: upper bound; null under 6 clusters"),
               Column("p", "number", "two-sided p by cluster (bootstrap, never below McNemar's); null under 6 "
                                     "clusters"),
               Column("only_a", "integer", "discordant pairs where only A succeeded"),
               Column("only_b", "integer", "discordant pairs where only B succeeded"),
               Column("detectable", "number", "the smallest difference the clusters can tell apart (null under 6)"),
               Column("runs_difference_low", "number", "Newcombe's paired 95% interval, as if runs were "
                                                       "independent: lower bound"),
               Column("runs_difference_high", "number", "Newcombe's paired 95% interval: upper bound"),
               Column("runs_p", "number", "exact McNemar p (two-sided), as if runs were independent"),
               Column("runs_detectable", "number", "the smallest difference n independent runs could tell apart "
                                                   "(null below 6 pairs)")]
    out = []
    for r in rows:
        low, high = r.interval if r.interval is not None else (None, None)
        c_low, c_high = r.clustered.interval if r.clustered.interval is not None else (None, None)
        n = r.counts.n
        out.append({"measure": r.measure, "of": r.of, "model_a": a, "model_b": b, "n": n,
                    "clusters": int(r.clusters), "rate_a": r.rate_a, "rate_b": r.rate_b,
                    "difference": r.counts.difference if n else None, "difference_low": c_low,
                    "difference_high": c_high, "p": r.clustered.p, "only_a": r.counts.only_a,
                    "only_b": r.counts.only_b, "detectable": r.cluster_detectable, "runs_difference_low": low,
                    "runs_difference_high": high, "runs_p": float(r.p), "runs_detectable": r.detectable})
    return [DataTable("compare", 2, f"Compare {a} with {b}", columns, out)]
