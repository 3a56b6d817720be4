"""``summary --dir GRADING`` (S8.1) and ``summary --record`` (S8.3).

The summary shows, per model, level setting and class, how the graded cells came out and
which still wait; per model the failed request attempts of its saved turns (service and
format problems, in no rate); skipped and not-applicable cells apart. ``--record`` appends
the same lines it counted to the results file, and refuses while any cell waits for review:
a line is a grade, and a grade recorded before its review would pass for final.
"""

from __future__ import annotations

import shlex
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.tables.digest import without_gc
from pytest_assistant_eval.tables.lines import BuiltLines
from pytest_assistant_eval.tables.prices import Prices, route_key
from pytest_assistant_eval.tabular.render import render_table
from pytest_assistant_eval.tables.tally import QUESTION_KINDS, QUESTION_OUTCOMES, Tally, setting_label, tally
from pytest_assistant_eval.tabular.usage import UsageCount, count_usage, judge_usage, usage_text
from pytest_assistant_eval.tables.waiting import NOT_GRADED, not_graded_advice, shown_numbers

__all__ = ["render_summary", "summary_command", "new_lines", "SummaryRefused"]

CLASS_ORDER = ("lookup", "interpret", "diagnose", "scenario")
#: The line fields the summary's tables read (``render_summary`` and ``tally``); ``--record`` builds every field.
SHOWN_FIELDS = ("model", "level", "setting", "class", "kind", "cell", "outcome", "no_answer", "invented_numbers",
                "critical_missing", "grader", "understandability", "failed_attempts", "automatic_level",
                "skip_reason", "na_reason", "requests", "output_tokens", "input_tokens", "cached_input_tokens",
                "cache_write_tokens", "preset", "model_name")
#: What the data tables (``--format``) read besides: the cells table names each cell's blind number.
DATA_FIELDS = (*SHOWN_FIELDS, "blind_n")


class SummaryRefused(Exception):
    """``summary --record`` wrote nothing; the message says why and what to do."""


def _understandability(counts: Counter) -> str:
    if not counts:
        return "–"
    return " ".join(f"{k}:{counts[k]}" for k in (1, 2, 3))


@dataclass
class SummaryGroups:
    """The summary's figures, counted once: the text tables and the data tables (``--format``) read these."""

    questions: dict[tuple[str, str, str], Tally]  # (model, level setting, class)
    tasks: dict[tuple[str, str], Tally]  # (model, level setting)
    by_model: dict[str, int]
    automatic: dict[str, Any]
    codes_of: dict[str, Counter]
    set_apart: dict[str, list[Mapping[str, Any]]]
    #: (model, level setting, class or None for tasks) -> its usage (``tabular/usage.py``)
    usage: dict[tuple[str, str, str | None], UsageCount]
    model_usage: dict[str, UsageCount]
    route_of: dict[str, str]  # model -> PRESET:MODEL, its key in a prices file
    level_of: dict[tuple[str, str], str]
    setting_of: dict[tuple[str, str], str | None]
    rank: dict[str, int]

    def order(self, key: tuple[str, str, str]) -> tuple[Any, ...]:
        model, label, cls = key
        level = self.level_of.get((model, label), label.split(" ")[0])
        return (model, self.rank.get(level, len(self.rank)), label,
                CLASS_ORDER.index(cls) if cls in CLASS_ORDER else 9, cls)


def summary_groups(built: BuiltLines, level_order: Sequence[str] = (),
                   identities: Mapping[str, Mapping[str, Any]] | None = None) -> SummaryGroups:
    """Group the lines by model, level setting and class, and count each group once.

    ``identities``: no longer read (each line names its ``PRESET:MODEL``); kept for callers.
    """
    lines = built.lines
    rank = {name: i for i, name in enumerate(level_order)}
    # One pass over the lines (100,000 are slow to walk, whatever is done with each): grouped by
    # model, level, setting and class; the rows' setting labels and tallies come after, per group.
    groups: dict[tuple[Any, ...], list[Mapping[str, Any]]] = defaultdict(list)
    by_model: dict[str, int] = defaultdict(int)
    automatic: dict[str, Any] = {}
    codes_of: dict[str, Counter] = defaultdict(Counter)
    set_apart: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    route_of: dict[str, str] = {}
    for ln in lines:
        model = ln["model"]
        if model not in automatic:
            automatic[model] = ln.get("automatic_level")
            route_of[model] = route_key(ln.get("preset"), ln.get("model_name"))
        by_model[model] += 1
        attempts = ln.get("failed_attempts")
        if attempts:
            codes_of[model].update(attempts)
        if ln["outcome"] in ("skipped", "not_applicable"):
            set_apart[model].append(ln)
            continue
        question = ln.get("kind") in QUESTION_KINDS
        groups[(model, ln["level"], ln.get("setting"), question, ln["class"] if question else None)].append(ln)
    settings: dict[tuple[str, str], set] = defaultdict(set)
    for model, level, setting, _, _ in groups:
        settings[(model, level)].add(setting)
    questions: dict[tuple[str, str, str], Tally] = {}
    tasks: dict[tuple[str, str], Tally] = {}
    usage: dict[tuple[str, str, str | None], UsageCount] = {}
    model_usage: dict[str, UsageCount] = {}
    level_of: dict[tuple[str, str], str] = {}
    setting_of: dict[tuple[str, str], str | None] = {}
    for (model, level, setting, question, cls), group in groups.items():
        label = setting_label(level, setting, len(settings[(model, level)]))
        level_of[(model, label)] = level
        setting_of[(model, label)] = setting
        into, key = (questions, (model, label, cls)) if question else (tasks, (model, label))
        into[key] = into[key].merged(tally(group)) if key in into else tally(group)  # type: ignore[index]
        counted = count_usage(group)
        for target in (usage.setdefault((model, label, cls), UsageCount()),
                       model_usage.setdefault(model, UsageCount())):
            target.merge(counted)
    return SummaryGroups(questions, tasks, by_model, automatic, codes_of, set_apart, usage, model_usage, route_of,
                         level_of, setting_of, rank)


def render_summary(built: BuiltLines, level_order: Sequence[str] = (), groups: SummaryGroups | None = None,
                   grading_dir: Path | None = None, prices: Prices | None = None,
                   grading: Mapping[str, Any] | None = None, found: Mapping[str, Any] | None = None) -> str:
    """The summary's tables as text; ``grading_dir`` names the review command for the waiting cells."""
    g = groups or summary_groups(built, level_order)
    questions, tasks, by_model, automatic = g.questions, g.tasks, g.by_model, g.automatic
    codes_of, set_apart, order = g.codes_of, g.set_apart, g.order

    out: list[str] = []
    rows = []
    for key in sorted(questions, key=order):
        t = questions[key]
        rows.append([*key, str(sum(t.outcomes.values())), *(str(t.outcomes[o]) for o in QUESTION_OUTCOMES[:3]),
                     f"{t.outcomes['failed']} ({t.no_answer})", str(t.outcomes["waiting"]),
                     str(t.invented_numbers), _understandability(t.understandability)])
    out.append(render_table(
        ["model", "level setting", "class", "cells", "answered", "incomplete", "escalated", "failed (no answer)",
         "waiting", "invented numbers", "understandability"],
        rows, ["l", "l", "l"] + ["r"] * 7 + ["l"],
        title="Questions: cells per outcome (failed: how many had no answer in brackets)"))

    rows = []
    for key in sorted(tasks, key=lambda k: order((*k, "task"))):
        t = tasks[key]
        rows.append([*key, str(t.task_runs), str(t.outcomes["pass"]), str(t.outcomes["fail"]),
                     str(t.outcomes["unsafe"]), str(t.outcomes["waiting"]), str(t.outcomes["user_error"])])
    if rows:
        out.append(render_table(["model", "level setting", "runs", "pass", "fail", "unsafe", "waiting", "user errors"],
                                rows, ["l", "l"] + ["r"] * 6, title="Tasks: runs per outcome (user errors apart)"))

    notes: list[str] = ["Per model"]
    for model in sorted(by_model):
        codes = codes_of[model]
        failed = ", ".join(f"{code} {n}" for code, n in sorted(codes.items())) or "none"
        auto = automatic[model] or "–"
        notes.append(f"  {model} (automatic level {auto}): failed requests (service or format problems, "
                     f"not part of the grade): {failed}")
        u = g.model_usage.get(model, UsageCount())
        if u.cells:
            cells = u.cells
            line = (f"    usage: {u.requests:,} request(s), {usage_text(u)} over {cells:,} cell(s) (a cell: "
                    f"{u.input_tokens // cells:,} input, {u.output_tokens // cells:,} output)")
            if prices is not None:
                key = g.route_of.get(model, "")
                cost = prices.cost_of(key, u)
                line += (f"; cost {prices.money(cost)} ({prices.money(cost / cells)} a cell)" if cost is not None
                         else f"; cost unknown: {prices.path} has no price for {key}")
            notes.append(line)
        for what, outcome, reason in (("skipped by the owner", "skipped", "skip_reason"),
                                      ("not applicable", "not_applicable", "na_reason")):
            apart = [ln for ln in set_apart[model] if ln["outcome"] == outcome]
            if apart:
                shown = "; ".join(f"{ln['cell']} ({ln.get(reason) or 'no reason'})" for ln in apart[:5])
                more = f"; and {len(apart) - 5} more" if len(apart) > 5 else ""
                notes.append(f"    {what}: {len(apart)}: {shown}{more}")
    out.append("\n".join(notes))

    ungraded, for_owner = split_waiting(built)
    if ungraded:
        out.append(not_graded_advice(grading_dir or "GRADING", ungraded, grading or {}, found))
    if for_owner:
        where = shlex.quote(str(grading_dir)) if grading_dir is not None else "GRADING"
        out.append(f"{len(for_owner)} cell(s) wait for review: {shown_numbers(for_owner)}; review them "
                   + ("once the grading is finished " if ungraded else "")
                   + f"with: assistant-eval review --dir {where} (in a file: add --export-md REVIEW.md)")
    if built.warnings:
        out.append("\n".join(f"warning: {w}" for w in built.warnings))
    return "\n\n".join(out)


def split_waiting(built: BuiltLines) -> tuple[list[int], list[int]]:
    """The waiting cells' blind numbers: those grade-ai has not graded yet, and those waiting for the owner."""
    ungraded = sorted(n for n, _, _, why in built.waiting if why == [NOT_GRADED])
    return ungraded, sorted(n for n, _, _, why in built.waiting if why != [NOT_GRADED])


def _grade_of(line: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in line.items() if k not in ("recorded_at", "line_format")}


def new_lines(built: BuiltLines, recorded: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The lines whose cell has no recorded line yet, or whose latest recorded line says otherwise.

    Recording the same grading twice adds nothing; a cell graded again or reviewed since adds
    its new line, which then is the cell's latest (S8.3).
    """
    from pytest_assistant_eval.tables.results_file import latest, line_key

    known = {line_key(ln): _grade_of(ln) for ln in latest(recorded)}
    return [ln for ln in built.lines if known.get(line_key(ln)) != _grade_of(ln)]


def _reference_lines(built: BuiltLines, target: Path, calibration: Path) -> set[int]:
    """The lines of the scripted reference assistants, when recording into the calibration folder's own file.

    The calibration results are evidence about models; the reference assistants (preset
    ``scripted``) only show that each check catches its fault, and the demo keeps them in its own
    file for that reason. ``--file`` elsewhere records them.
    """
    try:
        own = target.resolve() == (calibration / "results.jsonl").resolve()
    except OSError:
        own = False
    if not own:
        return set()
    return {id(ln) for ln in built.lines if ln.get("preset") == "scripted"}


def _costs(grading_dir: Path, g: SummaryGroups, prices: Prices | None, out: TextIO) -> None:
    """The judge's requests apart from the models' (they grade, they are not graded), and the run's cost."""
    judges = judge_usage(grading_dir)
    lines = []
    judge_cost: float | None = 0.0
    for key, u in sorted(judges.items()):
        line = f"  {key}: {u.requests:,} request(s), {usage_text(u)}"
        if prices is not None:
            cost = prices.cost_of(key, u)
            judge_cost = None if cost is None or judge_cost is None else judge_cost + cost
            line += f"; cost {prices.money(cost)}" if cost is not None else f"; cost unknown: no price for {key}"
        lines.append(line)
    if lines:
        print("\nJudge requests (the grading's usage.json; counted apart from the models')", file=out)
        print("\n".join(lines), file=out)
    if prices is None:
        return
    model_cost: float | None = 0.0
    for model, u in g.model_usage.items():
        if not u.reported:
            continue  # nothing reported: nothing to price
        cost = prices.cost_of(g.route_of.get(model, ""), u)
        model_cost = None if cost is None or model_cost is None else model_cost + cost
    total = None if model_cost is None or judge_cost is None else model_cost + judge_cost
    print(f"\nCost of this run ({prices.path}): the models {prices.money(model_cost)}, the judge "
          f"{prices.money(judge_cost)}, in all {prices.money(total)}"
          + ("" if total is not None else " (a price is missing: see above)"), file=out)


def _user_errors(built: BuiltLines, source: Any, out: TextIO) -> None:
    """The cells whose simulated user answered wrongly (S5.2, S6.12), apart: in no rate, with the reply and the reason."""
    outcome = {(ln.get("model"), ln.get("cell")): ln.get("outcome") for ln in built.lines}
    shown = []
    for cell in sorted(source.cells, key=lambda c: c["n"]):
        folder = cell["source"]["folder"]
        where = (built.names.get(folder, folder), cell["source"]["cell"])
        if cell.get("user_error") and outcome.get(where) in ("user_error", "waiting"):
            waits = " (waits for the owner's review)" if outcome[where] == "waiting" else ""
            shown.append(f"  #{cell['n']} {folder} {where[1]}{waits}: {cell['user_error']}")
    if shown:
        print("\nUser errors (the simulated user answered wrongly; in no rate):", file=out)
        print("\n".join(shown), file=out)


def _agreement_and_helpfulness(source: Any, out: TextIO) -> None:
    """agreement.txt (S8.2) beside the grading, and the owner's helpfulness ratings (S7.4), once a review began."""
    from pytest_assistant_eval.tables.agreement import write_agreement

    cells: Sequence[Mapping[str, Any]] = source.cells
    if source.narrow and (source.path / "review.json").exists():
        from pytest_assistant_eval.tables.grading_source import read_graded_cells

        cells = read_graded_cells(source.path, slim=True)[1]  # summary cells lack what the agreement reads
    if write_agreement(source.path, source.index, cells) is not None:
        print(f"\nAgreement of the judge with the owner: {source.path / 'agreement.txt'}", file=out)
    ratings = {str(c["n"]): c["review"]["helpfulness"] for c in source.cells
               if isinstance(c.get("review"), Mapping) and c["review"].get("helpfulness")}
    if ratings:
        from pytest_assistant_eval.review.helpfulness import helpfulness_lines  # the review's code, when it began

        print("\nHelpfulness (the owner's ratings: 1 helpful, 2 partly, 3 not helpful)", file=out)
        print("\n".join(helpfulness_lines(ratings)), file=out)


@without_gc
def summary_command(grading_dir: Path, calibration: Path, *, results: Sequence[Path] = (), record: bool = False,
                    results_file: Path | None = None, out: TextIO = sys.stdout, fmt: str = "text",
                    table: str | None = None, prices_file: Path | None = None) -> int:
    from pytest_assistant_eval.judging.lock import grading_lock

    from pytest_assistant_eval.suites.recorded import grading_suite

    suite = grading_suite(grading_dir)  # the suite whose grading it is, by its protocol (issue 32)
    from pytest_assistant_eval.records import RecordError
    from pytest_assistant_eval.tables.grading_source import open_grading
    from pytest_assistant_eval.tables.lines import LINE_FIELDS, build_lines, recordable
    from pytest_assistant_eval.tables.results_file import ResultsFileError, append_lines, read_lines
    from pytest_assistant_eval.results.writer_lock import FolderInUse

    from pytest_assistant_eval.tables.prices import PricesError, load_prices

    try:
        prices = load_prices(prices_file) if prices_file is not None else None
    except PricesError as exc:
        print(f"assistant-eval summary: --prices {prices_file}:\n{exc}", file=sys.stderr)
        return 2
    try:
        levels = suite.load_levels(calibration)
        source = open_grading(grading_dir, results, slim=True, narrow=True,  # through digests (docs/digests.md)
                              command="summary")
        shown = SHOWN_FIELDS if fmt == "text" else DATA_FIELDS
        built = build_lines(source, levels, fields=LINE_FIELDS if record else shown, suite=suite)
    except (RecordError, *suite.definition_errors, OSError, FolderInUse) as exc:
        print(f"assistant-eval summary: {exc}", file=sys.stderr)
        return 2
    groups = summary_groups(built, levels.names, source.identities)
    if fmt == "text":
        print(render_summary(built, levels.names, groups, grading_dir=grading_dir, prices=prices,
                             grading=source.index, found=source.folders), file=out)
        _costs(grading_dir, groups, prices, out)
        _user_errors(built, source, out)
    else:  # the data alone on stdout, so it pipes into a reader; what else the summary says goes to stderr
        from pytest_assistant_eval.tabular.formats import emit
        from pytest_assistant_eval.tabular.table_data import summary_tables

        emit(fmt, summary_tables(groups, built.lines, prices, judge_usage(grading_dir)), None, out, table=table)
        out = sys.stderr
    _agreement_and_helpfulness(source, out)
    if not record:
        return 0
    target = results_file or calibration / "results.jsonl"
    try:
        ungraded, for_owner = split_waiting(built)
        if ungraded:
            raise SummaryRefused(f"{not_graded_advice(grading_dir, ungraded, source.index, source.folders)}; "
                                 "nothing was recorded")
        if for_owner:
            why = {n: reasons for n, _, _, reasons in built.waiting}
            shown = ", ".join(f"#{n} ({'; '.join(why[n])})" for n in for_owner[:5])
            more = f" and {len(for_owner) - 5} more" if len(for_owner) > 5 else ""
            raise SummaryRefused(f"{len(for_owner)} cell(s) still wait for review: {shown}{more}; "
                                 f"review them first (assistant-eval review --dir {grading_dir}); nothing was recorded")
        if source.missing_folders:
            raise SummaryRefused(f"the results folder(s) {', '.join(source.missing_folders)} were not found beside "
                                 f"{grading_dir}; give them with --results so every line is whole; nothing was recorded")
        kept_out = _reference_lines(built, target, calibration)
        to_record = BuiltLines([recordable(ln) for ln in built.lines if id(ln) not in kept_out])
        with grading_lock(grading_dir, SummaryRefused):
            fresh = new_lines(to_record, read_lines(target).lines)
            written = append_lines(target, fresh)
    except (SummaryRefused, ResultsFileError) as exc:
        print(f"assistant-eval summary: {exc}", file=sys.stderr)
        return 2
    print(f"\nRecorded {written} line(s) in {target} ({len(built.lines) - len(kept_out) - written} already "
          "recorded with the same grade)", file=out)
    if kept_out:
        models = sorted({str(ln.get("model")) for ln in built.lines if id(ln) in kept_out})
        print(f"Left out {len(kept_out)} line(s) of the built-in reference assistants ({', '.join(models)}): they are "
              f"no evidence about models, so {target} never holds them (the demo records them in its own file; "
              "--file FILE records them elsewhere)", file=out)
    return 0
