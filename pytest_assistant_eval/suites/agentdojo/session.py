"""AgentDojo cells as pytest items (issue 16): the session the plugin uses with ``--agentdojo``.

``RunSession`` (``runner``) plans and runs the grounding world's cells; this is its twin for
AgentDojo's user tasks, with the same face towards the plugin (``cells``, ``models``,
``prepare_folders``, ``record_selection``, ``run_cell``, ``ledger_path``, ``close`` ...), so the
one test function in ``calibration/cells.py`` parametrises either, and ``-k``/``-m``, xdist
(cells grouped on workers by route), ``--resume``, ``--pace`` and the daily budgets work the
same for both. Each cell is run by ``suites.agentdojo.run.run_cell``, the one place an AgentDojo cell
runs: ``assistant-eval agentdojo run`` is a thin front over pytest with this plugin.

Nothing here imports pytest; ``agentdojo`` is imported only when the session is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell
from pytest_assistant_eval.suites.agentdojo.cells import (
    DEFAULT_ATTACK,
    AgentDojoCell,
    all_cells,
    check_attack,
    parse_cell_id,
    suites,
)
from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings
from pytest_assistant_eval.planning import CellResult, ModelSpec, UsageError, check_route, results_dir
from pytest_assistant_eval.providers.errors import ProviderError

__all__ = ["AgentDojoOptions", "AgentDojoCellSpec", "AgentDojoSession", "LEVEL", "plan_agentdojo_cells"]

#: The marker and "level" of every AgentDojo cell: ``-m agentdojo``; the suite is its class (``-m banking``).
LEVEL = "agentdojo"


@dataclass(frozen=True)
class AgentDojoOptions:
    """What ``--agentdojo`` and the shared run options ask for (the plugin builds it from pytest's options)."""

    out: Path
    models: tuple[ModelSpec, ...]
    suites: tuple[str, ...] = ()  # empty: all four
    crossed: bool = False
    cells: tuple[str, ...] = ()  # exactly these cell ids (then suites and crossed are not used)
    attack: str = DEFAULT_ATTACK
    benchmark_version: str | None = None  # None: the installed agentdojo's default
    defense: str | None = None
    conversation: str = "agentdojo"  # "ours": our own loop, not comparable with AgentDojo's leaderboard
    repeats: int = 1
    resume: bool = False
    stream: bool = True
    pace: float = 0.0
    max_requests_per_day: int | None = None
    accept_data_notice: bool = False

    def settings(self) -> AgentDojoSettings:
        """The run's ``AgentDojoSettings`` (checked by ``plan_agentdojo_cells``)."""
        version = {"benchmark_version": self.benchmark_version} if self.benchmark_version else {}
        return AgentDojoSettings(attack=self.attack, defense=self.defense, conversation=self.conversation, **version)


@dataclass(frozen=True)
class AgentDojoCellSpec:
    """One model on one AgentDojo cell: the shape the plugin parametrises, marks and schedules."""

    model: str  # the model's label (its results folder)
    cell: AgentDojoCell

    @property
    def cell_id(self) -> str:
        return self.cell.cell_id

    @property
    def level(self) -> str:
        return LEVEL

    @property
    def cls(self) -> str:
        return self.cell.suite


def plan_agentdojo_cells(options: AgentDojoOptions) -> list[AgentDojoCellSpec]:
    """Every model × cell, sorted like ``plan_cells``: the same list in the controller and every worker.
    An unknown attack is refused here, before any folder or ``run.json`` is written."""
    try:
        check_attack(options.attack)
    except ValueError as exc:
        raise UsageError(f"--agentdojo-attack: {exc}") from None
    settings = options.settings()
    try:
        settings.check()
    except ValueError as exc:
        raise UsageError(f"--agentdojo: {exc}") from None
    known = suites(settings.benchmark_version)
    unknown = [s for s in options.suites if s not in known]
    if unknown:
        raise UsageError(f"--agentdojo: unknown suite(s) {', '.join(unknown)}; AgentDojo has {', '.join(sorted(known))}")
    if options.cells:
        cells = []
        for text in options.cells:
            try:
                cell = parse_cell_id(text)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            suite = known.get(cell.suite)
            if suite is None or cell.user_task not in suite.user_tasks or (
                    cell.injection_task is not None and cell.injection_task not in suite.injection_tasks):
                raise UsageError(f"{text}: AgentDojo has no such suite, user task or injection task")
            cells.append(cell)
    else:
        cells = all_cells(crossed=options.crossed, repeats=options.repeats, suite_names=options.suites,
                          version=settings.benchmark_version)
    specs = [AgentDojoCellSpec(m.label, c) for m in options.models for c in dict.fromkeys(cells)]
    return sorted(specs, key=lambda s: (s.model, s.cell_id))


class AgentDojoSession:
    """Everything one process (controller or xdist worker) needs to run AgentDojo cells."""

    def __init__(self, options: AgentDojoOptions) -> None:
        from pytest_assistant_eval.suites.agentdojo.reference import AGENTDOJO_FAULTS

        for spec in options.models:
            if spec.preset == "scripted" and spec.model not in AGENTDOJO_FAULTS:
                raise UsageError(f"scripted:{spec.model} has no AgentDojo version; the AgentDojo reference "
                                 f"assistants are: {', '.join(AGENTDOJO_FAULTS)}")
        self.options = options
        self.models = {spec.label: spec for spec in options.models}
        self.cells = plan_agentdojo_cells(options)
        self.marker_names = sorted({LEVEL, *(c.cls for c in self.cells)})
        self.start_lines: list[str] = []
        # A remote model's data notice and where its key goes, as for our own cells.
        for spec in options.models:
            if spec.preset != "scripted":
                for line in check_route(spec, options.accept_data_notice)[1]:
                    if line not in self.start_lines:
                        self.start_lines.append(line)
        self.requests_sent = 0
        self.quota_used: set[str] = set()  # routes whose daily budget or quota ran out in this process
        self.routes_stopped: dict[str, str] = {}  # routes a temporary or fatal error stopped, and why
        self.runs = {label: AgentDojoRun(out=results_dir(options, spec), model=spec, settings=options.settings(),  # type: ignore[arg-type]
                                         resume=options.resume, pace=options.pace, stream=options.stream,
                                         max_requests_per_day=options.max_requests_per_day,
                                         ledger=self.ledger_path())
                     for label, spec in self.models.items()}

    # -- the folders (controller only) ---------------------------------------------
    def prepare_folders(self) -> None:
        """Refuse a folder with records unless ``--resume``; write each ``run.json`` before any cell."""
        for label, run in self.runs.items():
            if not self.options.resume and any((run.out / "cells").glob("*.json")):
                raise UsageError(f"{run.out.name}: the results folder already holds records; run again with "
                                 "--resume to continue it, or choose another --out")
            run.out.mkdir(parents=True, exist_ok=True)
            run.write_run_json([])

    def record_selection(self, selected: list[AgentDojoCellSpec], keyword: str | None, markexpr: str | None) -> None:
        """The cells this run asks (after ``-k``/``-m``) join each folder's ``planned``, with the selection."""
        for label, run in self.runs.items():
            mine = [s.cell for s in selected if s.model == label]
            of = sum(1 for s in self.cells if s.model == label)
            run.write_run_json(mine, selection={"keyword": keyword or None, "markexpr": markexpr or None,
                                                "cells": len(mine), "of": of})

    def ledger_path(self) -> Path:
        """One ledger for the whole run (every model, every worker), as ``RunSession`` keeps it."""
        return self.options.out / ".ledger.json"

    # -- one cell -------------------------------------------------------------------
    def run_cell(self, spec: AgentDojoCellSpec) -> CellResult:
        """Run (or continue, or skip as finished) one cell; a provider's stop keeps or drops its checkpoint."""
        model = self.models[spec.model]
        if model.route in self.quota_used:
            return CellResult("left", f"{spec.cell_id}: not asked today (the daily quota is used)", code="daily_quota")
        if model.route in self.routes_stopped:
            return CellResult("left", f"{spec.cell_id}: not asked: {self.routes_stopped[model.route]}")
        run = self.runs[spec.model]
        try:
            run_cell(run, spec.cell)
        except ProviderError as exc:
            return self._stopped(spec, model, run, exc)
        return CellResult("done")

    def _stopped(self, spec: AgentDojoCellSpec, model: ModelSpec, run: AgentDojoRun, exc: ProviderError) -> CellResult:
        """As ``RunSession._stopped``, in short: a temporary stop keeps the checkpoint for ``--resume``."""
        checkpoint = run.out / "partial" / f"{spec.cell_id}.json"
        if exc.code == "daily_quota":
            self.quota_used.add(model.route)
        elif exc.kind in ("temporary", "fatal"):
            self.routes_stopped.setdefault(model.route, f"the run stopped after {spec.cell_id}'s {exc.code}")
        if exc.kind in ("temporary", "format") and checkpoint.exists():
            return CellResult("kept", f"{spec.cell_id}: kept at its last request ({exc.code}); run again with "
                              f"--resume to continue it", code=exc.code)
        checkpoint.unlink(missing_ok=True)
        return CellResult("unsaved", f"{spec.cell_id}: nothing was saved for this cell ({exc.code}: {exc})",
                          code=exc.code)

    # -- what the plugin asks at the end --------------------------------------------
    def waited_seconds(self) -> float:
        """Seconds this process waited for pacing and rate limits, over every model."""
        return sum(float(getattr(getattr(r._provider, "pacer", None), "waited_total", 0.0) or 0.0)
                   for r in self.runs.values())

    def usage_lines(self) -> list[str]:
        return []  # AgentDojo records carry their requests; run.json has no usage entry

    def close(self) -> None:
        for run in self.runs.values():
            close: Any = getattr(run._provider, "close", None)
            if close is not None:
                close()
            run._provider = None
