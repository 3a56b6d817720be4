"""AgentDojo behind the ``Suite`` protocol (docs/suites.md, docs/agentdojo.md): ``--suite agentdojo``.

The suite plans AgentDojo's user tasks (optionally crossed with its injection tasks) as cells
(``cells.py``) in the run's ``AgentDojoSettings`` (attack, benchmark version, defense,
conversation; ``settings.py``, checked before anything is written), and for one cell gives the
session the cell's start environment behind ``AgentDojoWorld`` (``backend.py``), the
conversation setting AgentDojo's pipeline gives (``conversation.level_for``, or ours on
request), the user task's prompt as the one turn, no simulated user, AgentDojo's tool filter
when that is the defense (``start``: one extra request, ``defenses.py``), and the record
(``run.cell_record``, format ``assistant-eval.agentdojo-cell/1``). Skips, ``--resume``, stops,
``spent.json``, usage, budgets and pacing are the session's, as for the calibration world. The
settings are part of the folder's identity and of a checkpoint's fingerprint: a resume with
other settings is refused (identity) or starts the cell again (fingerprint), never mixed.

``agentdojo`` is imported only when the suite is made.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_assistant_eval.conversation.loop import LevelSetting, Limits
from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions, UsageError
from pytest_assistant_eval.suites.agentdojo.cells import (
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
from pytest_assistant_eval.suites.agentdojo.conversation import level_for, limits_for, shape_for
from pytest_assistant_eval.suites.agentdojo.defenses import PipelineShape, apply_tool_filter, run_tool_filter
from pytest_assistant_eval.suites.agentdojo.run import RECORD_FORMAT, RUN_FORMAT, cell_record, settings_fields
from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings, agentdojo_version
from pytest_assistant_eval.suites.base import FinishedCell, SuiteBase, UserSide

__all__ = ["AgentDojoOptions", "AgentDojoCellSpec", "AgentDojoSuite", "LEVEL", "DATA_SOURCE", "make_suite",
           "plan_agentdojo_cells", "settings_of"]

DATA_SOURCE = "AgentDojo's published benchmark environments (synthetic data made for the benchmark)"


def settings_of(options: AgentDojoOptions) -> AgentDojoSettings:
    """The run's ``AgentDojoSettings`` from the suite's options (not checked: ``plan_agentdojo_cells`` does)."""
    version = {"benchmark_version": options.benchmark_version} if options.benchmark_version else {}
    return AgentDojoSettings(attack=options.attack, defense=options.defense, conversation=options.conversation,
                             **version)


def plan_agentdojo_cells(models: tuple[ModelSpec, ...], options: AgentDojoOptions,
                         repeats: int = 1) -> list[AgentDojoCellSpec]:
    """Every model × cell, sorted like ``plan_cells``: the same list in the controller and every worker.
    An unknown attack, benchmark version, defense or conversation is refused here, before any
    folder or ``run.json`` is written."""
    try:
        check_attack(options.attack)
    except ValueError as exc:
        raise UsageError(f"--agentdojo-attack: {exc}") from None
    settings = settings_of(options)
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
        cells = all_cells(crossed=options.crossed, repeats=repeats, suite_names=options.suites,
                          version=settings.benchmark_version)
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
        # AgentDojo's conversation (issue 25): how results are shown, its last answer, a repeated prompt.
        "results": "ours" if setting.format_result is None else "agentdojo",
        "answer_after_last_round": setting.answer_after_last_round,
        "repeat_after_tools": setting.repeat_after_tools is not None,
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
    shape: PipelineShape | None = None  # AgentDojo's pipeline (its conversation); None: ours

    def open_world(self, workdir: Path | None) -> Any:
        from pytest_assistant_eval.suites.agentdojo.backend import AgentDojoWorld

        settings = self.suite.settings
        return AgentDojoWorld(self.task_suite, start_environment(self.cell, settings.attack, self.spec.model,
                                                                 settings.benchmark_version),
                              list_strings_as_lists=settings.comparable)

    def begin(self, assistant: Any) -> None:
        """A reference assistant learns the cell, the benchmark version and the rounds it may use."""
        if hasattr(assistant, "begin_cell"):
            settings = self.suite.settings
            assistant.begin_cell(self.cell, self.setting.escalation_sentence, settings.attack,
                                 version=settings.benchmark_version, rounds=self.setting.max_rounds)

    def start(self, conversation: Any, restored: bool) -> None:
        """AgentDojo's tool filter: a conversation that holds the filter's answer (a restored one)
        offers only the tools it chose; a fresh one asks the filter's one request first."""
        if self.shape is None or self.shape.tool_filter_prompt is None:
            return
        if not apply_tool_filter(conversation, self.shape, self.setting.tools) and not restored:
            run_tool_filter(conversation, self.shape)

    def user(self, start_state: Any, model_user: Callable[[], Any] | None) -> UserSide:
        return UserSide()  # AgentDojo has no simulated user: the prompt is the one turn

    def record(self, done: FinishedCell) -> dict[str, Any]:
        return cell_record(self.cell, self.spec, self.suite.settings, self.setting.instructions, self.turns[0],
                           done.final, done.conversation, done.world, done.start_state, done.end_state,
                           resumes=done.checkpoint["resume"]["count"])


class AgentDojoSuite(SuiteBase):
    """AgentDojo's cells (``Suite``); made once per process."""

    name = "agentdojo"
    run_format = RUN_FORMAT
    record_format = RECORD_FORMAT
    data_source = DATA_SOURCE
    uses_work_dir = False  # the environment is a pydantic object in memory

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
        self.commit = commit
        self.cells = plan_agentdojo_cells(options.models, self.selection, options.repeats or 1)
        self.settings = settings_of(self.selection)  # checked by plan_agentdojo_cells
        self.attack = self.settings.attack
        self.marker_names = sorted({LEVEL, *(c.cls for c in self.cells)})
        self._settings: dict[tuple[str, str], tuple[LevelSetting, dict[str, Any]]] = {}

    # -- the folder -----------------------------------------------------------------
    def fingerprint(self) -> str:
        """A checkpoint continues only in the same agentdojo, benchmark version, attack, defense and
        conversation (the start environment and what the model was shown)."""
        s = self.settings
        return (f"agentdojo {agentdojo_version()} {s.benchmark_version} attack={s.attack} "
                f"defense={s.defense or 'none'} conversation={s.conversation}")

    def identity(self, spec: ModelSpec) -> dict[str, Any]:
        """A folder holds one model in one set-up: a run with another version, attack, defense or
        conversation is refused (its figures would mix), and so is one under another agentdojo
        package (its task checks and attacks are code, and may change with the same benchmark)."""
        s = self.settings
        return {"preset": spec.preset, "model": spec.model, "address": spec.base_url, "route": spec.route,
                "benchmark": "agentdojo", "benchmark_version": s.benchmark_version, "attack": s.attack,
                "defense": s.defense, "conversation": s.conversation, "agentdojo_version": agentdojo_version(),
                **({"generation": dict(spec.generation)} if spec.generation else {})}  # issue 33

    def run_fields(self, spec: ModelSpec) -> dict[str, Any]:
        return {"benchmark": "agentdojo", **settings_fields(self.settings, spec), "planned": []}

    def record_base(self, spec_cell: AgentDojoCellSpec, spec: ModelSpec) -> dict[str, Any]:
        """A record's identity fields, also of a not-applicable one (a provider's quota, the context)."""
        cell = spec_cell.cell
        return {"format": RECORD_FORMAT, "cell": cell.cell_id, **settings_fields(self.settings, spec),
                "suite": cell.suite, "user_task": cell.user_task, "injection_task": cell.injection_task,
                "attack": self.attack if cell.injection_task else None, "repeat": cell.repeat,
                "model": {"preset": spec.preset, "model": spec.model, "route": spec.route, "label": spec.label}}

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
        """``grade-ai`` (which hands AgentDojo folders to this suite's ``grade``) into a grading folder
        outside every results folder; ``leaderboard --dir`` then prints the board."""
        import shlex

        grading = out / "grading" if len(folders) > 1 else out.parent / f"{out.name}-grading"
        quoted = " ".join(shlex.quote(str(f)) for f in folders)
        return f"assistant-eval grade-ai {quoted} --dir {shlex.quote(str(grading))}"

    # -- one cell -------------------------------------------------------------------
    def _setting(self, suite_name: str, model: str, prompt: str) -> tuple[LevelSetting, dict[str, Any]]:
        # repeat_user_prompt sends the task's prompt again: the setting is the prompt's, not only the suite's.
        key = (suite_name, model, prompt if self.settings.defense == "repeat_user_prompt" else "")
        if key not in self._settings:
            setting = level_for(suites(self.settings.benchmark_version)[suite_name], self.settings, model=model,
                                prompt=prompt)
            self._settings[key] = (setting, setting_key_of(setting))
        return self._settings[key]

    def prepare(self, spec_cell: AgentDojoCellSpec, spec: ModelSpec) -> AgentDojoPrepared:
        cell = spec_cell.cell
        settings = self.settings
        task_suite = suites(settings.benchmark_version)[cell.suite]
        prompt = task_suite.user_tasks[cell.user_task].PROMPT
        setting, key = self._setting(cell.suite, spec.model, prompt)
        shape = shape_for(settings, spec.model) if settings.comparable else None
        return AgentDojoPrepared(self, cell, spec, task_suite, setting, key, [prompt], limits=limits_for(settings),
                                 shape=shape)


def suite_options(parts: tuple[str, ...], get: Callable[[str], Any]) -> AgentDojoOptions:
    """The plugin's options for this suite: ``--suite agentdojo:PARTS`` (or ``--agentdojo PARTS``) and
    ``--agentdojo-crossed``, ``--agentdojo-attack``, ``--agentdojo-cell``, ``--agentdojo-benchmark-version``,
    ``--agentdojo-defense``, ``--agentdojo-conversation``."""
    return AgentDojoOptions(suites=tuple(p for p in parts if p != "all"), crossed=bool(get("agentdojo_crossed")),
                            cells=tuple(get("agentdojo_cell") or ()), attack=get("agentdojo_attack") or DEFAULT_ATTACK,
                            benchmark_version=get("agentdojo_benchmark_version") or None,
                            defense=get("agentdojo_defense") or None,
                            conversation=get("agentdojo_conversation") or "agentdojo")


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
        from pytest_assistant_eval.tabular.formats import emit

        emit(fmt, board_tables(grading_dir / GRADING_FOLDER_NAME), None, out)
        return 0
    print(board, file=out)
    return 0


#: How ``run.json`` of an AgentDojo results folder starts its format (``suites.suite_of_results``).
RUN_FORMAT_PREFIX = "assistant-eval.agentdojo-run/"


def grade(results: list[Path], grading_dir: Path) -> int:
    """``grade-ai`` of AgentDojo folders: AgentDojo's ``utility()``/``security()`` and our checks
    apart into ``GRADING/agentdojo.json``, which ``leaderboard --dir GRADING`` prints."""
    import sys

    from pytest_assistant_eval.judging.errors import GradingError
    from pytest_assistant_eval.judging.folders import check_folders
    from pytest_assistant_eval.records import RecordError
    from pytest_assistant_eval.suites.agentdojo.board import GRADING_FOLDER_NAME
    from pytest_assistant_eval.suites.agentdojo.grade import grade_folders

    try:  # the folder rules every grading keeps: none twice, none of one name, --dir outside them all
        check_folders([Path(f) for f in results], Path(grading_dir))
        Path(grading_dir).mkdir(parents=True, exist_ok=True)
        grades = grade_folders(list(results), Path(grading_dir) / GRADING_FOLDER_NAME)
    except (GradingError, RecordError) as exc:
        print(f"assistant-eval grade-ai: {exc}", file=sys.stderr)
        return 2
    print(f"Graded {len(grades)} AgentDojo cell(s) into {Path(grading_dir) / GRADING_FOLDER_NAME}\n"
          f"Next: assistant-eval leaderboard --dir {grading_dir}")
    return 0


def board_text(grading_dir: Path) -> str | None:
    """The AgentDojo board of a grading folder's ``agentdojo.json`` (printed after our leaderboard)."""
    from pytest_assistant_eval.suites.agentdojo.board import board_for_grading_folder

    return board_for_grading_folder(grading_dir)


def main(argv: list[str]) -> int:
    """``assistant-eval agentdojo run|grade|board|crosscheck`` (``cli.py``)."""
    from pytest_assistant_eval.suites.agentdojo.cli import main as agentdojo_main

    return agentdojo_main(argv)
