"""``report --dir GRADING [--out FILE]`` (S8.6): one self-contained HTML page to look at, offline.

People would rather look than read tables of numbers, and then ask "why this cell?". The page
holds the leaderboard, the calibration rates per model × level × class with their n and Wilson
intervals, plots of those rates, the agreement confusion tables once a review exists, the
scripted user's decisions with the user-error runs apart, and a drill-down into every graded
cell reachable from each table through filters (``docs/report.md``).

Nothing is counted here, and no grade is read but the final one (``final_grade``: the owner's where
reviewed), so the header, the board, the plots and the calibration agree: the figures come from ``leaderboard.board_rows``, ``calibrate.rate_rows``,
``evidence.level_classes``, ``agreement.collect``/``measure`` and the results lines ``summary``
records (``lines.build_lines``), so the page and the terminal never disagree. The page is made
with Jinja2 (autoescape on: an answer or a tool result is always text, never markup) and
matplotlib (inline SVG, imported only by this command); it requests nothing from any network.
"""

from __future__ import annotations

import sys
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.stats import Interval
from pytest_assistant_eval.tables.grading_source import GradingSource, open_grading
from pytest_assistant_eval.tables.report_cells import CellView, cell_view, slim_record, sorted_views

__all__ = ["REPORT_FORMAT", "REPORT_FILE", "build_report", "report_command", "render_page", "page_context"]

#: The page's version, in its ``<meta name="generator">``; what it holds is documented in docs/report.md.
REPORT_FORMAT = "assistant-eval.report/3"
#: Where the page goes without ``--out``: beside the grading it shows.
REPORT_FILE = "report.html"
DECISION_KINDS = ("approve", "refuse", "decline", "facts", "ask_cost", "clarify", "done")


@dataclass
class _KeptSource(GradingSource):
    """A grading source that keeps the part of each record the page shows while ``build_lines`` reads it.

    Every record is read once: ``build_lines`` measures it for the lines, and the drill-down
    shows its transcript and diff from the copy kept here.
    """

    kept: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def record(self, folder: str, cell: str) -> dict[str, Any] | None:
        record = super().record(folder, cell)
        if record is not None:
            self.kept[(folder, cell)] = slim_record(record)
        return record


@dataclass
class Rate:
    """A rate as the page shows it: the text ``calibrate`` prints, and where its cells are."""

    text: str
    interval: Interval
    href: str


def cells_href(**filters: Any) -> str:
    """The address that shows the cell list filtered: ``#cells?model=oracle&level=basic``."""
    from urllib.parse import urlencode

    return "#cells?" + urlencode({k: v for k, v in filters.items() if v is not None and v != ""})


def _rate(interval: Interval, **filters: Any) -> Rate:
    from pytest_assistant_eval.tabular.render import format_rate

    return Rate(format_rate(interval), interval, cells_href(**filters))


def leaderboard_context(cells: Sequence[Mapping[str, Any]], pairs: dict[str, str], k: int) -> dict[str, Any]:
    """The leaderboard's rows (``board_rows``) with links to the runs behind each figure."""
    from pytest_assistant_eval.tables.leaderboard import BEHAVIOURS, board_rows, collect, waiting_note
    from pytest_assistant_eval.tabular.ranking import SAFETY_RULE, unsafe_text

    boards = collect(list(cells), pairs)
    rows = []
    for row in board_rows(boards, pairs, k):
        board = boards[row.label]
        rows.append({
            "label": row.label, "row": row,
            "completed": _rate(row.completed, model=row.label, kind="task"),
            "checks": {name: _rate(row.checks[name], model=row.label, check=name) for name in ("truthful", *BEHAVIOURS)},
            "unsafe_href": cells_href(model=row.label, outcome="unsafe"),
            "unsafe_text": unsafe_text(row.unsafe, row.runs),
            "user_error_href": cells_href(model=row.label, outcome="user_error"),
            "questions": {o: board.questions.get(o, 0)
                          for o in ("answered", "incomplete", "escalated", "failed", "waiting")},
            "invented": board.invented,
        })
    return {"rows": rows, "behaviours": BEHAVIOURS, "k": k, "rule": SAFETY_RULE, "headline": headline(rows),
            "waiting": waiting_note(boards)}


def headline(rows: Sequence[Mapping[str, Any]]) -> str | None:
    """The page's one-line answer, by the board's own safety-first order: the top assistant and why."""
    if not rows:
        return None
    top = rows[0]["row"]
    unsafe = sum(1 for r in rows if r["row"].unsafe)
    safe = len(rows) - unsafe
    if top.unsafe:
        return (f"Every assistant had unsafe runs; by tasks completed {top.label} comes first "
                f"({top.unsafe} of {top.runs} runs unsafe).")
    from pytest_assistant_eval.tabular.render import format_rate

    return (f"First: {top.label}, no unsafe run, tasks completed {format_rate(top.completed)}. "
            f"{safe} assistant(s) without an unsafe run rank above the {unsafe} with one.")


def compare_context(cells: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]],
                    pair: Sequence[str] | None = None) -> dict[str, Any] | None:
    """``compare`` of two models (by default the board's first two), as the command prints it."""
    from pytest_assistant_eval.tables.compare import HEADERS, closing_lines, compare_cells, row_texts

    names = list(pair) if pair else [r["label"] for r in rows[:2]]
    if len(names) != 2 or names[0] == names[1]:
        return None
    found = compare_cells(cells, names[0], names[1])
    return {"a": names[0], "b": names[1], "headers": HEADERS,
            "rows": [(r.measure, r.of, row_texts(r)) for r in found],
            "notes": closing_lines(found).splitlines()}


def calibration_context(lines: Sequence[Mapping[str, Any]], level_order: Sequence[str],
                        answers: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """Per model, the rate table ``calibrate`` prints (rows: level settings × rates; columns: classes)."""
    from pytest_assistant_eval.tables.calibrate import RATES, plan_blocks, rate_lines_by_model, rate_rows
    from pytest_assistant_eval.tables.evidence import level_classes

    blocks = []
    answered: dict[tuple[str, str, str], tuple[Interval, str]] = {}  # the rate, and "answer" or "escalate"
    series: list[str] = []
    for title, block in plan_blocks(lines):
        models = []
        for model, model_lines in sorted(rate_lines_by_model(block).items()):
            classes, rows = rate_rows(model_lines, level_order)
            table = []
            for row in rows:
                for outcome, name in RATES:
                    rates = [_rate(row.tallies[c].rate_of(outcome), model=model, level=row.level, **{"class": c})
                             for c in classes]
                    table.append({"label": row.label if outcome == "answered" else "", "rate": name, "rates": rates})
                if title is None:
                    for c in classes:  # a class the level hands up: its escalations, marked as expected
                        meant = c not in ("lookup", "interpret", "diagnose") or c in answers.get(row.level, (c,))
                        answered[(model, row.label, c)] = ((row.tallies[c].rate("answered"), "answer") if meant
                                                           else (row.tallies[c].rate("escalated"), "escalate"))
                    if row.label not in series:
                        series.append(row.label)
            models.append({"model": model, "classes": classes, "rows": table,
                           "automatic": model_lines[0].get("automatic_level") or "–"})
        if models:
            blocks.append({"title": title, "models": models})
    paid = plan_blocks(lines)[0][1]
    by_model: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for ln in paid:
        by_model[ln["model"]].append(ln)
    evidence = [{"model": model, "lc": lc, "rate": _rate(lc.rate, model=model, level=lc.level, **{"class": lc.cls})}
                for model in sorted(by_model) for lc in level_classes(by_model[model], answers)]
    return {"blocks": blocks, "evidence": evidence, "answered": answered, "series": series}


def verdict_context(lines: Sequence[Mapping[str, Any]], levels: Any, waiting: int) -> dict[str, Any]:
    """The trust verdict at the top of the page (issue 29): ``calibrate``'s, from the same lines."""
    from pytest_assistant_eval.tables.calibrate import plan_verdicts
    from pytest_assistant_eval.tables.trust import BEHAVIOURS

    answers = {level.name: level.answers for level in levels}
    found = plan_verdicts(lines, answers, levels.trust)
    return {"verdicts": [{"free": free, "v": v} for free, v in found], "behaviours": BEHAVIOURS,
            "bars": levels.trust, "waiting": waiting}


def plot_spec(leaderboard: Mapping[str, Any], calibration: Mapping[str, Any]) -> dict[str, Any]:
    """What to plot, as JSON (intervals as [rate, low, high, n]): behaviour checks per assistant; answered
    rate per level per class. A check no run met gets no panel; no rates, no plot."""
    from pytest_assistant_eval.tables.calibrate import CLASSES

    def iv(i: Interval) -> list[Any]:
        return [i.rate, i.low, i.high, i.n]

    spec: dict[str, Any] = {}
    rows = leaderboard["rows"]
    checks = ("completed", "truthful", *leaderboard["behaviours"])
    if rows:
        assistants = [r["label"] for r in rows]
        rates = {(check, r["label"]): (r["row"].completed if check == "completed" else r["row"].checks[check])
                 for check in checks for r in rows}
        applied = [c for c in checks if any(rates[(c, a)].n for a in assistants)]
        if applied:
            spec["behaviour"] = {"checks": applied, "assistants": assistants,
                                 "rates": [[c, a, iv(i)] for (c, a), i in rates.items() if c in applied]}
    answered = calibration["answered"]
    if answered:
        spec["answered"] = {"models": sorted({m for m, _, _ in answered}), "levels": calibration["series"],
                            "classes": [c for c in CLASSES if any(c == cls for _, _, cls in answered)],
                            "rates": [[m, lv, c, iv(i), expected] for (m, lv, c), (i, expected) in answered.items()]}
    return spec


def agreement_context(source: GradingSource, reviews: Mapping[int, Mapping[str, Any]]) -> dict[str, Any] | None:
    """The agreement confusion tables (S8.2), computed by ``tables.agreement``; None before any review."""
    from pytest_assistant_eval.records import read_json
    from pytest_assistant_eval.review.store import REVIEW_FORMAT
    from pytest_assistant_eval.tables import agreement

    path = source.path / "review.json"
    if not path.exists():
        return None
    queue = read_json(path, REVIEW_FORMAT)["queue"]
    groups = agreement.collect(source.cells, queue, reviews)
    seed = int(source.index.get("seed") or 0)
    shown = []
    for key, title in (("sample", "Random sample"), ("all", "All reviewed cells")):
        group = groups[key]
        measures = [agreement.measure("Items", group.items, agreement.ITEM_CATEGORIES, seed=seed),
                    agreement.measure("Outcomes (questions)", group.questions, agreement.QUESTION_OUTCOMES, seed=seed)]
        if group.tasks.pairs:
            measures.append(agreement.measure("Outcomes (tasks)", group.tasks, agreement.TASK_OUTCOMES, seed=seed))
        measures.append(agreement.measure("Understandability", group.understandability, agreement.UNDERSTANDABILITY,
                                          weighted=True, seed=seed))
        shown.append({"title": title, "cells": group.cells, "measures": measures})
    return {"queued": len(queue), "reviewed": groups["all"].cells, "rule": agreement.sample_rule(groups["sample"]),
            "groups": shown}


def decisions_context(views: Sequence[CellView]) -> dict[str, Any]:
    """The scripted user's decisions per assistant and kind, every decision, and the user-error runs apart."""
    counts: dict[str, Counter] = defaultdict(Counter)
    listed = []
    user_errors = []
    for view in views:
        for decision in view.decisions:
            counts[view.model][decision.kind] += 1
            listed.append((view, decision))
        if view.outcome == "user_error" or view.user_error:
            user_errors.append(view)
    kinds = [k for k in DECISION_KINDS if any(c[k] for c in counts.values())]
    kinds += sorted({k for c in counts.values() for k in c} - set(kinds))
    errors = Counter(v.model for v in user_errors)
    return {"kinds": kinds, "counts": {m: counts[m] for m in sorted(counts)}, "listed": listed,
            "user_errors": user_errors, "user_error_counts": errors,
            "models": sorted(set(counts) | set(errors) | {v.model for v in views if v.kind == "task"})}


def _filters(views: Sequence[CellView], level_order: Sequence[str]) -> dict[str, list[str]]:
    rank = {name: i for i, name in enumerate(level_order)}
    return {
        "model": sorted({v.model for v in views}),
        "level": sorted({v.level for v in views}, key=lambda lv: (rank.get(lv, len(rank)), lv)),
        "class": sorted({v.cls for v in views}),
        "kind": sorted({v.kind for v in views}),
        "outcome": sorted({v.outcome for v in views}),
        "check": sorted({m for v in views for m in v.marks}),
        "decision": sorted({d.kind for v in views for d in v.decisions}),
    }


def _reviews(source: GradingSource) -> dict[int, dict[str, Any]]:
    from pytest_assistant_eval.review.store import read_reviews

    return {n: review.to_dict() for n, review in read_reviews(source.path).items()}


def page_context(source: _KeptSource, built: Any, levels: Any, pairs: dict[str, str], k: int = 2,
                 plotter: Any = None, unblind: bool = False, compare: Sequence[str] | None = None,
                 prices: Any = None) -> dict[str, Any]:
    """Everything the template shows, as data; ``plotter`` draws the plots (a ``PlotProcess`` started early).

    While cells still wait for review the cell list, its drill-downs and the user's decisions
    name no model (``blind``): an owner who opens the page before reviewing stays blind.
    ``unblind`` shows the names anyway, under a banner saying so.
    """
    from pytest_assistant_eval.tables.report_plots import PlotProcess
    from pytest_assistant_eval.records import HARNESS_VERSION

    level_order = list(levels.names)
    answers = {level.name: level.answers for level in levels}
    from pytest_assistant_eval.tables.final_grade import name_cells

    line_of = {ln["blind_n"]: ln for ln in built.lines if ln.get("blind_n") is not None}
    name_cells(source.cells, source.index.get("folders") or [])  # one name per model, the lines' own
    reviews = _reviews(source)
    views = sorted_views([cell_view(c, source.kept.get((c["source"]["folder"], c["source"]["cell"])), line_of[c["n"]],
                                    reviews.get(int(c["n"]))) for c in source.cells])
    leaderboard = leaderboard_context(source.cells, pairs, k)
    calibration = calibration_context(built.lines, level_order, answers)
    verdict = verdict_context(built.lines, levels, len(built.waiting))  # issue 29: the page's first answer
    plotter = plotter or PlotProcess()
    spec = plot_spec(leaderboard, calibration)
    agreement = agreement_context(source, reviews)  # counted while the second process draws
    judge = source.index.get("judge") or {}
    review_open = bool(built.waiting)
    filters = _filters(views, level_order)
    if review_open and not unblind:
        filters.pop("model")  # a model filter would map each blind number to its model
    return {
        "format": REPORT_FORMAT, "harness": HARNESS_VERSION, "grading": source.path.name,
        "judge": judge.get("grader"), "set_version": source.index.get("set_version"),
        "key_version": source.index.get("key_version"), "folders": list(source.folders),
        "missing": source.missing_folders, "warnings": list(built.warnings),
        "waiting": len(built.waiting), "outcomes": Counter(v.outcome for v in views),
        "verdict": verdict,
        "leaderboard": leaderboard, "calibration": calibration, "agreement": agreement,
        "compare": compare_context(source.cells, leaderboard["rows"], compare),
        "decisions": decisions_context(views), "plots": plotter.draw(spec),
        "cells": views, "filters": filters,
        "blind": review_open and not unblind, "unblinded": review_open and unblind,
        "usage": usage_context(source, built.lines, prices),
    }


def usage_context(source: GradingSource, lines: Sequence[Mapping[str, Any]], prices: Any = None) -> dict[str, Any]:
    """Requests, tokens and (with prices) cost per model, and the judge's apart, counted as the summary
    counts them (``tabular/usage.py``)."""
    from pytest_assistant_eval.tables.prices import route_key
    from pytest_assistant_eval.tabular.usage import UsageCount, judge_usage

    per: dict[str, dict[str, Any]] = {}
    for ln in lines:
        row = per.setdefault(str(ln.get("model")), {"cells": 0, "usage": UsageCount(),
                                                    "key": route_key(ln.get("preset"), ln.get("model_name"))})
        row["cells"] += 1
        row["usage"].add(ln)

    def money(key: str, u: UsageCount) -> str | None:
        if prices is None:
            return None
        return prices.money(prices.cost_of(key, u))

    models = [{"model": m, "cells": r["cells"], "requests": r["usage"].requests, "input": r["usage"].input_tokens,
               "cached": r["usage"].cached_input_tokens, "cache_write": r["usage"].cache_write_tokens,
               "output": r["usage"].output_tokens, "reported": r["usage"].cells, "key": r["key"],
               "per_cell_input": r["usage"].input_tokens // r["cells"] if r["cells"] else 0,
               "per_cell_output": r["usage"].output_tokens // r["cells"] if r["cells"] else 0,
               "cost": money(r["key"], r["usage"])} for m, r in sorted(per.items())]
    judges = [{"judge": k, "requests": u.requests, "input": u.input_tokens, "cached": u.cached_input_tokens,
               "cache_write": u.cache_write_tokens, "output": u.output_tokens, "cost": money(k, u)}
              for k, u in sorted(judge_usage(source.path).items())]
    return {"models": models, "judges": judges, "priced": prices is not None,
            "prices": str(getattr(prices, "path", "")) if prices is not None else None}


def _environment() -> Any:
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("pytest_assistant_eval.tables", "templates"), autoescape=True,
                      undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.globals["cells_href"] = cells_href
    env.filters["text"] = element_text
    return env


def element_text(value: Any) -> Any:
    """Escape a value for an element's text, never an attribute's: ``&``, ``<`` and ``>`` only.

    Autoescape also writes every quote as ``&#34;``, five characters for one; tool results are
    JSON, so that alone was about a third of the demo's page. A quote cannot end element text.
    """
    import html

    from markupsafe import Markup

    return Markup(html.escape("" if value is None else str(value), quote=False))


def render_page(context: Mapping[str, Any]) -> str:
    """The page from its context; every value is escaped unless it is one of our own SVG plots."""
    from markupsafe import Markup

    # a grading of only question cells draws no behaviour plot, one of only tasks no answered plot
    plots = {"behaviour": "", "answered": "", **{name: Markup(svg) for name, svg in context["plots"].items()}}
    static = {name: Markup(_static(f"report.{name}")) for name in ("css", "js")}  # our own files, inlined whole
    return _environment().get_template("report.html.j2").render(
        {**context, **static, "plots": plots, "script_hash": Markup(script_hash(static["js"]))})


def script_hash(script: str) -> str:
    """The CSP source that lets exactly this inline script run (``'sha256-…'``): any other
    script on the page, should one ever get in, is refused by the browser."""
    import base64
    import hashlib

    return "'sha256-" + base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii") + "'"


def _static(name: str) -> str:
    """A stylesheet or script shipped beside the templates: inlined, so the page is one file."""
    from importlib.resources import files

    return files("pytest_assistant_eval.tables").joinpath("templates", name).read_text(encoding="utf-8")


def build_report(grading_dir: Path, calibration: Path, results: Sequence[Path] = (), k: int = 2,
                 unblind: bool = False, compare: Sequence[str] | None = None, prices: Any = None) -> str:
    """The page for a grading folder: read it (and the results folders it graded), count, render."""
    from pytest_assistant_eval.suites.recorded import grading_suite
    from pytest_assistant_eval.tables.leaderboard import task_pairs
    from pytest_assistant_eval.tables.lines import build_lines

    from pytest_assistant_eval.tables.report_plots import PlotProcess

    plotter = PlotProcess()  # matplotlib loads in a second process while this one reads the grading
    suite = grading_suite(grading_dir)  # the suite whose grading it is, by its protocol (issue 32)
    try:
        levels = suite.load_levels(calibration)
        opened = open_grading(grading_dir, results, command="report")
        source = _KeptSource(**{f: getattr(opened, f) for f in ("path", "index", "cells", "folders", "identities",
                                                               "ungraded")})
        built = build_lines(source, levels, suite=suite)
        return render_page(page_context(source, built, levels, task_pairs(calibration, suite), k, plotter, unblind,
                                        compare, prices))
    finally:
        plotter.close()


def report_command(grading_dir: Path, calibration: Path, out_file: Path | None = None, *,
                   results: Sequence[Path] = (), k: int = 2, out: TextIO | None = None, unblind: bool = False,
                   compare: Sequence[str] | None = None, prices_file: Path | None = None) -> int:
    """Write the page (default ``GRADING/report.html``) atomically and print where it is."""
    from pytest_assistant_eval.suites.recorded import grading_suite

    definition_errors = grading_suite(grading_dir).definition_errors  # its levels or cases files, wrong
    from pytest_assistant_eval.records import RecordError, write_text_atomic
    from pytest_assistant_eval.results.writer_lock import FolderInUse

    started = time.monotonic()
    if k < 1:
        print(f"assistant-eval report: --k must be at least 1, got {k}", file=sys.stderr)
        return 2
    target = out_file or grading_dir / REPORT_FILE
    from pytest_assistant_eval.write_rules import WriteRefused, check_page

    try:
        check_page(target, "--out", calibration=calibration)  # the one rule of where a command writes (issue 31)
    except WriteRefused as exc:
        print(f"assistant-eval report: {exc}", file=sys.stderr)
        return 2
    prices = None
    if prices_file is not None:
        from pytest_assistant_eval.tables.prices import PricesError, load_prices

        try:
            prices = load_prices(prices_file)
        except PricesError as exc:
            print(f"assistant-eval report: --prices {prices_file}:\n{exc}", file=sys.stderr)
            return 2
    try:
        from pytest_assistant_eval.suites import suite_report

        # another suite's grading folder (issue 32): that suite's page; else the calibration's
        page = suite_report(grading_dir) or build_report(grading_dir, calibration, results, k, unblind, compare,
                                                         prices)
        target.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(target, page)
    except (RecordError, *definition_errors, OSError, FolderInUse) as exc:
        print(f"assistant-eval report: {exc}", file=sys.stderr)
        return 2
    size = len(page.encode("utf-8"))
    print(f"Report: {target} ({size / 1e6:.1f} MB, {time.monotonic() - started:.1f} s)", file=out or sys.stdout)
    return 0
