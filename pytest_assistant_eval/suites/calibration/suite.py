"""The calibration suite: the grounding world's questions, scenario and tasks behind the ``Suite`` protocol.

What only this suite knows lives here: the world's marker and fingerprint, the case set and
the level settings, the cell plan (``planning.plan_cells``), which variant and policy a cell
starts from, the scripted or model user of a task, and the record of format
``assistant-eval.cell/1`` (docs/records.md). The session does the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.cases.model import KeyEntry, Question, Task
from pytest_assistant_eval.suites.calibration.cases.tasks import policy_for
from pytest_assistant_eval.conversation.loop import LevelSetting, Limits
from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions
from pytest_assistant_eval.suites.calibration.plan import (
    CellSpec,
    check_world_path,
    level_setting,
    load_calibration,
    plan_cells,
    tool_definitions,
)
from pytest_assistant_eval.providers.generation import with_generation
from pytest_assistant_eval.suites.calibration.reference import SCRIPTED_MODELS, CellContext, make_scripted
from pytest_assistant_eval.records import CELL_FORMAT, HARNESS_VERSION, RUN_FORMAT
from pytest_assistant_eval.suites.base import FinishedCell, UserSide
from pytest_assistant_eval.suites.calibration.reading_suite import CalibrationReading, reading_suite
from pytest_assistant_eval.conversation.backend import Policy
from pytest_assistant_eval.suites.calibration.world.build import WorldIdentity, verify_world
from pytest_assistant_eval.suites.calibration.world.names import Names
from pytest_assistant_eval.suites.calibration.world.services import open_world
from pytest_assistant_eval.suites.calibration.world.tools import tool_specs

__all__ = ["CalibrationSuite", "make_suite", "plan_only", "reading_suite", "SCRIPTED_MODELS"]


@dataclass
class CalibrationCell:
    """One calibration cell ready to run (``PreparedCell``)."""

    suite: "CalibrationSuite"
    cell: CellSpec
    spec: ModelSpec
    setting: LevelSetting
    setting_key: dict[str, Any]
    turns: list[str]
    variant: str
    keys: tuple[KeyEntry, ...]
    questions: tuple[Question, ...]
    policy: Policy
    task: Task | None
    limits: Limits = field(default_factory=Limits)

    def open_world(self, workdir: Path) -> Any:
        return open_world(self.suite.options.world, self.variant, workdir, self.policy)

    def begin(self, assistant: Any) -> None:
        if hasattr(assistant, "begin_cell"):
            assistant.begin_cell(CellContext(self.cell.kind, self.cell.level, self.setting.escalation_sentence,
                                             tuple(self.questions), self.keys, self.task))

    def start(self, conversation: Any, restored: bool) -> None:
        return None  # the calibration world's conversation starts as it is made

    def user(self, start_state: Any, model_user: Callable[[], Any] | None) -> UserSide:
        """The simulated user of a task cell: a model with --user-model (not for scripted assistants)."""
        task = self.task
        if task is None:
            return UserSide()
        # Imported here: the tables and the review read this module (``reading_suite``) and ask no user.
        from pytest_assistant_eval.suites.calibration.user.scripted import ScriptedUser, check_user_reply

        names = Names.of(start_state)
        options = self.suite.options
        if options.user_model is None or self.spec.preset == "scripted" or model_user is None:
            user: Any = ScriptedUser(task, names)
        else:
            from pytest_assistant_eval.suites.calibration.user.model_user import ModelUser

            user = ModelUser(model_user(), task, model=options.user_model.model, stream=options.stream)
        return UserSide(user, lambda reply, visible, _t=task: (
            getattr(reply, "problem", None) or check_user_reply(_t, reply, visible, names)))

    def record(self, done: FinishedCell) -> dict[str, Any]:
        return self.suite.finished_record(self, done)


class CalibrationSuite(CalibrationReading):
    """The grounding world's cells (``Suite``); made once per process. What the tables and the review
    read of the suite (its levels, cases, checks, material) is ``CalibrationReading``'s."""

    name = "calibration"
    run_format = RUN_FORMAT
    record_format = CELL_FORMAT
    data_source = "the grounding world built for this evaluation"
    marker_names: list[str] = []

    def __init__(self, options: RunOptions, commit: str | None = None) -> None:
        if options.world is None:
            raise ValueError("the calibration suite needs --world")
        self.options = options
        self.commit = commit
        check_world_path(options.world)
        self.world_identity: WorldIdentity = verify_world(options.world)
        self.cases, self.levels = load_calibration(options.calibration, options.world)
        self.cells: list[CellSpec] = plan_cells(self.cases, self.levels, options)
        self.questions: dict[str, Question] = {q.id: q for q in self.cases.questions.questions}
        self.scenario = self.cases.questions.scenario
        self.tasks: dict[str, Task] = {t.id: t for t in self.cases.tasks}
        self.keys: dict[str, KeyEntry] = self.cases.key.entries
        self.settings = {name: level_setting(level) for name, level in self.levels.levels.items()}
        self.keys_of_setting = {
            name: levels_mod.setting_key(level, tool_definitions(level)) for name, level in self.levels.levels.items()
        }

    # -- the folder -----------------------------------------------------------------
    def fingerprint(self) -> str:
        return self.world_identity.fingerprint

    def identity(self, spec: ModelSpec) -> dict[str, Any]:
        options = self.options
        return {
            "preset": spec.preset,
            "model": spec.model,
            "address": spec.base_url,
            "route": spec.route,
            "free_plan": spec.model.endswith(":free"),
            "data_collection": "allow" if options.relax_data_collection else None,
            "ollama_contexts": (dict(options.ollama_contexts)
                                if spec.preset == "ollama" and options.ollama_contexts else None),
            "cpu_offload": ("allowed" if spec.preset == "ollama" and options.allow_cpu_offload else None),
            "world": self.world_identity.fingerprint,
            **({"generation": dict(spec.generation)} if spec.generation else {}),  # issue 33: a resume keeps them
        }

    def run_fields(self, spec: ModelSpec) -> dict[str, Any]:
        return {"world_identity": self.world_identity.to_dict()}

    def matrix(self, cells: list[CellSpec]) -> dict[str, Any]:
        return {
            "questions": sorted({c.case_id for c in cells if c.kind != "task"}),
            "tasks": sorted({c.case_id for c in cells if c.kind == "task"}),
            "levels": sorted({c.level for c in cells}),
            "repeats": self.options.repeats,
            "cells": [c.cell_id for c in cells],
        }

    def on_selection(self, data: dict[str, Any], cells: list[CellSpec], selection: dict[str, Any]) -> None:
        return None  # the run entry's matrix is the plan

    def scripted(self, name: str) -> Any:
        return make_scripted(name)

    def next_command(self, folders: list[Path], out: Path) -> str:
        from pytest_assistant_eval.suites.base import next_command

        return next_command(folders, out)

    # -- one cell -------------------------------------------------------------------
    def prepare(self, cell: CellSpec, spec: ModelSpec) -> CalibrationCell:
        task = self.tasks.get(cell.case_id) if cell.kind == "task" else None
        if task is not None:
            variant, turns, keys, questions, policy = task.variant, [task.opening], (), (), policy_for(task)
        elif cell.kind == "scenario":
            asked = self.scenario.turns
            variant, turns = asked[0].variant, [q.text for q in asked]
            keys, questions, policy = tuple(self.keys[q.id] for q in asked), tuple(asked), Policy()
        else:
            q = self.questions[cell.case_id]
            variant, turns, keys, questions, policy = q.variant, [q.text], (self.keys[q.id],), (q,), Policy()
        return CalibrationCell(self, cell, spec, self.settings[cell.level], self.setting_key(cell, spec),
                               turns, variant, keys, questions, policy, task)

    def setting_key(self, cell: CellSpec, spec: ModelSpec) -> dict[str, Any]:
        """The level's key, with the model's generation settings in it when it has any (issue 33)."""
        return with_generation(self.keys_of_setting[cell.level], spec.generation)

    def versions(self) -> dict[str, Any]:
        return {"harness": HARNESS_VERSION, "set_version": self.cases.questions.set_version,
                "key_version": self.cases.key.key_version, "levels_version": self.levels.version,
                "git_commit": self.commit}

    def record_base(self, cell: CellSpec, spec: ModelSpec) -> dict[str, Any]:
        return {
            "format": CELL_FORMAT, "cell": cell.cell_id, "case": cell.case_id, "kind": cell.kind,
            "class": cell.cls, "level": cell.level, "repeat": cell.repeat,
            "model": {"preset": spec.preset, "model": spec.model, "route": spec.route, "label": spec.label,
                      **({"generation": dict(spec.generation)} if spec.generation else {})},
            "setting_key": self.setting_key(cell, spec),
            "world": {"fingerprint": self.world_identity.fingerprint, "built_at": self.world_identity.built_at},
            "versions": self.versions(),
        }

    def finished_record(self, prepared: CalibrationCell, done: FinishedCell) -> dict[str, Any]:
        cell, spec, final, conversation = prepared.cell, prepared.spec, done.final, done.conversation
        level = self.levels.levels[cell.level]
        seconds = None
        if conversation.first_request_at is not None and conversation.last_response_at is not None:
            seconds = round(conversation.last_response_at - conversation.first_request_at, 6)
        user_model = self.options.user_model
        log = done.log
        return {
            **self.record_base(cell, spec),
            "world": {"fingerprint": self.world_identity.fingerprint, "variant": prepared.variant,
                      "built_at": self.world_identity.built_at},
            "user": {"kind": getattr(conversation.user, "kind", None), "user_error": final.user_error,
                     **({"model": f"{user_model.preset}:{user_model.model}",
                         **({"generation": dict(user_model.generation)} if user_model.generation else {})}
                        if getattr(conversation.user, "kind", None) == "model" and user_model else {})},
            "stop_reason": final.stop,
            "turns": final.turns,
            "transcript": final.transcript,
            "messages": [m.to_dict() for m in final.messages],
            "service_log": log,
            "tools": [{"name": t.name, "consequential": t.consequential, "affects_others": t.affects_others,
                       "spends_money": t.spends_money} for t in tool_specs() if t.name in set(level.tools)],
            "refusals": [e for e in log if e["status"] == "refused"],
            "state": self.state_record(done.start_state, done.end_state),
            "requests": conversation.requests_log,
            "cap_hits": final.cap_hits,
            "compactions": final.compactions,
            "conversation_seconds": seconds,
            "started_at": done.started_at,
            "finished_at": _now(),
        }


def _now() -> str:
    from pytest_assistant_eval.records import now

    return now()


def suite_options(parts: tuple[str, ...], get: Callable[[str], Any]) -> None:
    """The calibration suite has no parts of its own: levels, repeats and -k/-m choose its cells."""
    if parts:
        raise ValueError(f"the calibration suite has no parts ({', '.join(parts)}); choose cells with --levels, -k or -m")
    return None


def plan_only(options: RunOptions) -> Any:
    """The cells of a run without checking its world (``--skip``/``--unskip`` need only the ids)."""
    from types import SimpleNamespace

    cases, levels = load_calibration(options.calibration)
    return SimpleNamespace(cells=plan_cells(cases, levels, options), run_format=RUN_FORMAT)


def make_suite(options: RunOptions, commit: str | None = None) -> CalibrationSuite:
    return CalibrationSuite(options, commit)
