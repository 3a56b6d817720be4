"""AgentDojo behind the ``Suite`` protocol (docs/suites.md, docs/agentdojo.md): ``--suite agentdojo``.

The suite plans AgentDojo's user tasks (optionally crossed with its injection tasks) as cells
(``cells.py``), and for one cell gives the session the cell's start environment behind
``AgentDojoWorld`` (``backend.py``), AgentDojo's conversation setting (``run.level_for``), the
user task's prompt as the one turn, no simulated user, and the record (``run.cell_record``,
format ``assistant-eval.agentdojo-cell/1``). Skips, ``--resume``, stops, ``spent.json``, usage,
budgets and pacing are the session's, as for the calibration world.

``agentdojo`` is imported only when the suite is made.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_assistant_eval.conversation.loop import LevelSetting, Limits
from pytest_assistant_eval.planning import ModelSpec, RunOptions, UsageError
from pytest_assistant_eval.suites.agentdojo.cells import (
    BENCHMARK_VERSION,
    DEFAULT_ATTACK,
    LEVEL,
    AgentDojoCell,
    AgentDojoCellSpec,
    AgentDojoOptions,
    all_cells,
    check_attack,
    parse_cell_id,
    start_environment,
    suites,
)
from pytest_assistant_eval.suites.agentdojo.run import RECORD_FORMAT, RUN_FORMAT, cell_record, level_for
from pytest_assistant_eval.suites.base import FinishedCell, UserSide

__all__ = ["AgentDojoOptions", "AgentDojoCellSpec", "AgentDojoSuite", "LEVEL", "DATA_SOURCE", "make_suite",
           "plan_agentdojo_cells"]

DATA_SOURCE = "AgentDojo's published benchmark environments (synthetic data made for the benchmark)"


def plan_agentdojo_cells(models: tuple[ModelSpec, ...], options: AgentDojoOptions,
                         repeats: int = 1) -> list[AgentDojoCellSpec]:
    """Every model × cell, sorted like ``plan_cells``: the same list in the controller and every worker.
    An unknown attack is refused here, before any folder or ``run.json`` is written."""
    try:
        check_attack(options.attack)
    except ValueError as exc:
        raise UsageError(f"--agentdojo-attack: {exc}") from None
    known = suites()
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
        cells = all_cells(crossed=options.crossed, repeats=repeats, suite_names=options.suites)
    specs = [AgentDojoCellSpec(m.label, c) for m in models for c in dict.fromkeys(cells)]
    return sorted(specs, key=lambda s: (s.model, s.cell_id))


def _sha256(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def setting_key_of(setting: LevelSetting) -> dict[str, Any]:
    """The conversation setting a checkpoint must match to be continued (as a level's key, S3.4)."""
    return {
        "level": setting.name, "max_tool_calls": setting.max_tool_calls, "max_rounds": setting.max_rounds,
        "max_output_tokens": setting.max_output_tokens, "result_cap_chars": setting.result_cap_chars,
        "context_window": setting.context_window,
        "history": {"compact_at": setting.compact_at, "keep_last_rounds": setting.keep_last_rounds},
        "system_hash": hashlib.sha256(setting.instructions.encode()).hexdigest(),
        "tools_hash": _sha256([t.to_dict() for t in setting.tools]),
    }


@dataclass
class AgentDojoPrepared:
    """One AgentDojo cell ready to run (``PreparedCell``)."""

    suite: "AgentDojoSuite"
    cell: AgentDojoCell
    spec: ModelSpec
    task_suite: Any
    setting: LevelSetting
    setting_key: dict[str, Any]
    turns: list[str]
    limits: Limits = field(default_factory=Limits)

    def open_world(self, workdir: Path) -> Any:
        from pytest_assistant_eval.suites.agentdojo.backend import AgentDojoWorld

        return AgentDojoWorld(self.task_suite, start_environment(self.cell, self.suite.attack, self.spec.model))

    def begin(self, assistant: Any) -> None:
        if hasattr(assistant, "begin_cell"):
            assistant.begin_cell(self.cell, self.setting.escalation_sentence, self.suite.attack)

    def user(self, start_state: Any, model_user: Callable[[], Any] | None) -> UserSide:
        return UserSide()  # AgentDojo has no simulated user: the prompt is the one turn

    def record(self, done: FinishedCell) -> dict[str, Any]:
        return cell_record(self.cell, self.spec, self.suite.attack, self.turns[0], done.final, done.conversation,
                           done.world, done.start_state, done.end_state, resumes=done.checkpoint["resume"]["count"])


class AgentDojoSuite:
    """AgentDojo's cells (``Suite``); made once per process."""

    name = "agentdojo"
    run_format = RUN_FORMAT
    record_format = RECORD_FORMAT
    data_source = DATA_SOURCE

    def __init__(self, options: RunOptions, commit: str | None = None) -> None:
        from pytest_assistant_eval.suites.agentdojo.reference import AGENTDOJO_FAULTS

        try:
            import agentdojo  # noqa: F401
        except ImportError:
            raise UsageError("--suite agentdojo needs the extra: pip install -e '.[agentdojo]'") from None
        for spec in options.models:
            if spec.preset == "scripted" and spec.model not in AGENTDOJO_FAULTS:
                raise UsageError(f"scripted:{spec.model} has no AgentDojo version; the AgentDojo reference "
                                 f"assistants are: {', '.join(AGENTDOJO_FAULTS)}")
        self.options = options
        self.selection: AgentDojoOptions = options.suite_options or AgentDojoOptions()
        self.attack = self.selection.attack
        self.commit = commit
        self.cells = plan_agentdojo_cells(options.models, self.selection, options.repeats or 1)
        self.marker_names = sorted({LEVEL, *(c.cls for c in self.cells)})
        self._settings: dict[str, tuple[LevelSetting, dict[str, Any]]] = {}

    # -- the folder -----------------------------------------------------------------
    def fingerprint(self) -> str:
        """A checkpoint continues only in the same benchmark version and attack (the start environment)."""
        return f"agentdojo {BENCHMARK_VERSION} attack={self.attack}"

    def identity(self, spec: ModelSpec) -> dict[str, Any]:
        return {"preset": spec.preset, "model": spec.model, "address": spec.base_url, "route": spec.route,
                "benchmark": "agentdojo", "benchmark_version": BENCHMARK_VERSION, "attack": self.attack}

    def run_fields(self) -> dict[str, Any]:
        return {"benchmark": "agentdojo", "benchmark_version": BENCHMARK_VERSION, "attack": self.attack,
                "planned": []}

    def matrix(self, cells: list[AgentDojoCellSpec]) -> dict[str, Any]:
        return {"suites": sorted({c.cls for c in cells}), "crossed": self.selection.crossed,
                "repeats": self.options.repeats or 1, "cells": [c.cell_id for c in cells]}

    def on_selection(self, data: dict[str, Any], cells: list[AgentDojoCellSpec], selection: dict[str, Any]) -> None:
        """``planned``: every run's selected cells (a later run of fewer never hides an earlier plan)."""
        data["planned"] = sorted({c.cell_id for c in cells} | set(data.get("planned", [])))
        data["selection"] = selection

    def scripted(self, name: str) -> Any:
        from pytest_assistant_eval.suites.agentdojo.reference import AgentDojoReference

        return AgentDojoReference(name)

    def next_command(self, folders: list[Path], out: Path) -> str:
        """``agentdojo grade`` into a grading folder outside every results folder (as grade-ai's)."""
        import shlex

        from pytest_assistant_eval.suites.agentdojo.board import GRADING_FOLDER_NAME

        grading = out / "grading" if len(folders) > 1 else out.parent / f"{out.name}-grading"
        quoted = " ".join(shlex.quote(str(f)) for f in folders)
        return f"assistant-eval agentdojo grade {quoted} --out {shlex.quote(str(grading / GRADING_FOLDER_NAME))}"

    # -- one cell -------------------------------------------------------------------
    def _setting(self, suite_name: str) -> tuple[LevelSetting, dict[str, Any]]:
        if suite_name not in self._settings:
            setting = level_for(suites()[suite_name])
            self._settings[suite_name] = (setting, setting_key_of(setting))
        return self._settings[suite_name]

    def prepare(self, spec_cell: AgentDojoCellSpec, spec: ModelSpec) -> AgentDojoPrepared:
        cell = spec_cell.cell
        task_suite = suites()[cell.suite]
        setting, key = self._setting(cell.suite)
        return AgentDojoPrepared(self, cell, spec, task_suite, setting, key,
                                 [task_suite.user_tasks[cell.user_task].PROMPT])


def suite_options(parts: tuple[str, ...], get: Callable[[str], Any]) -> AgentDojoOptions:
    """The plugin's options for this suite: ``--suite agentdojo:PARTS`` (or ``--agentdojo PARTS``) and
    ``--agentdojo-crossed``, ``--agentdojo-attack``, ``--agentdojo-cell``."""
    return AgentDojoOptions(suites=tuple(p for p in parts if p != "all"), crossed=bool(get("agentdojo_crossed")),
                            cells=tuple(get("agentdojo_cell") or ()), attack=get("agentdojo_attack") or DEFAULT_ATTACK)

    def record_base(self, spec_cell: AgentDojoCellSpec, spec: ModelSpec) -> dict[str, Any]:
        cell = spec_cell.cell
        return {"format": RECORD_FORMAT, "cell": cell.cell_id, "benchmark_version": BENCHMARK_VERSION,
                "suite": cell.suite, "user_task": cell.user_task, "injection_task": cell.injection_task,
                "attack": self.attack if cell.injection_task else None, "repeat": cell.repeat,
                "model": {"preset": spec.preset, "model": spec.model, "route": spec.route, "label": spec.label}}


def make_suite(options: RunOptions, commit: str | None = None) -> AgentDojoSuite:
    return AgentDojoSuite(options, commit)


def leaderboard(grading_dir: Path, fmt: str, out: Any) -> int | None:
    """The AgentDojo board of a grading folder holding only ``agentdojo.json`` (``leaderboard --dir``),
    as text or in ``fmt``; None for any other grading folder. ``RecordError`` for one it cannot read."""
    from pytest_assistant_eval.suites.agentdojo.board import board_for_grading_folder

    board = board_for_grading_folder(grading_dir)
    if board is None or (grading_dir / "grading.json").exists():
        return None
    if fmt != "text":  # the AgentDojo board as data: its own tables
        from pytest_assistant_eval.suites.agentdojo.board import GRADING_FOLDER_NAME, board_tables
        from pytest_assistant_eval.tables.formats import emit

        emit(fmt, board_tables(grading_dir / GRADING_FOLDER_NAME), None, out)
        return 0
    print(board, file=out)
    return 0


def board_text(grading_dir: Path) -> str | None:
    """The AgentDojo board of a grading folder's ``agentdojo.json`` (printed after our leaderboard)."""
    from pytest_assistant_eval.suites.agentdojo.board import board_for_grading_folder

    return board_for_grading_folder(grading_dir)


def main(argv: list[str]) -> int:
    """``assistant-eval agentdojo run|grade|board|crosscheck`` (``cli.py``)."""
    from pytest_assistant_eval.suites.agentdojo.cli import main as agentdojo_main

    return agentdojo_main(argv)
