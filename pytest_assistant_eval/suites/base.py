"""What a suite gives the run (S9.5, docs/suites.md): the ``Suite`` protocol and its small values.

A suite is what a benchmark brings: its cells and their plan, for one cell a world backend
(snapshot, restore, diff), the conversation setting, the opening turns, the user (or none)
and the record's own fields, and the wording of its data notice. Everything else (skips,
checkpoints and ``--resume``, stops, ``spent.json``, pacing and daily budgets, usage in
``run.json``, the Ollama variants, the progress counters, the writer lock) is the session's,
written once in ``runner.RunSession``. A suite's cells never import the plugin or pytest; the
session knows a suite only through this protocol, and finds it through ``suites.SUITES``.
A suite module also gives ``make_suite(options, commit)`` and ``suite_options(parts, get)``
(its own options from the plugin's, ``get`` being ``config.getoption``).

``SuiteBase`` (issue 32) is the protocol with defaults: the record plumbing (``run_format``,
``record_format``, ``fingerprint``, ``identity``, ``run_fields``, ``matrix``, ``on_selection``,
``record_base``, ``next_command``) is the session's, so a suite that inherits it writes only
what a benchmark is: its cells (``cells``), one cell ready to run (``prepare``: its world
backend, setting, opening turns, user), its reference assistants (``scripted``), its data
notice (``data_source``) and, in its module, its grading and board (docs/suites.md).

The reading members (``definition_errors``, ``load_levels``, ``load_cases``, ``task_pairs``,
``automatic_level``, ``tool_specs``, ``check_record``, ``review_sections``, ``state_record``) are
how the tables, the review and serve-tools know a suite (issue 32): they ask the suite a folder
recorded (``suites.get_suite``, ``suites.grading_suite``), never one by its name. They need no run:
``suites.get_suite(name)`` makes the suite's ``reading_suite()``, and ``SuiteBase`` gives a suite
without levels, cases or a world of tables defaults that say so.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol, runtime_checkable

from pytest_assistant_eval.conversation.loop import Conversation, LevelSetting, Limits, LoopState
from pytest_assistant_eval.suites.plan import ModelSpec

__all__ = ["PlannedCell", "PreparedCell", "FinishedCell", "Suite", "SuiteBase", "UserSide", "next_command",
           "reading_suite"]


class PlannedCell(Protocol):
    """One model on one cell: what the plugin parametrises, marks and schedules."""

    @property
    def model(self) -> str: ...  # the model's label (its results folder)

    @property
    def cell_id(self) -> str: ...  # the record's name, unique in a results folder

    @property
    def level(self) -> str: ...  # a marker, and the key of --ollama-context

    @property
    def cls(self) -> str: ...  # a marker: the class or the suite part


@dataclass
class UserSide:
    """The user of a cell: the simulated user and the check of its replies, or none."""

    user: Any = None
    check: Callable[[Any, Any], Any] | None = None


@dataclass
class FinishedCell:
    """What the session hands a suite to write a cell's record with."""

    cell: Any
    spec: ModelSpec
    final: LoopState
    conversation: Conversation
    world: Any
    start_state: Any
    end_state: Any
    log: list[dict[str, Any]]
    started_at: str
    checkpoint: dict[str, Any] = field(default_factory=dict)  # its ``resume`` and ``requests_by_day``


class PreparedCell(Protocol):
    """One cell, ready to run: the suite's answers for it."""

    setting: LevelSetting  # instructions, tools, caps and result format of the conversation
    setting_key: dict[str, Any]  # what a checkpoint must match to be continued (S3.4, S4.8)
    turns: list[str]  # the opening user turns
    limits: Limits  # the conversation's common limits (user turns, requests, nudges)

    def open_world(self, workdir: Path | None) -> Any:
        """The cell's own world backend (``WorldBackend``), a fresh copy in ``workdir`` (None when
        the suite says ``uses_work_dir = False``: its world lives in memory)."""

    def begin(self, assistant: Any) -> None:
        """Tell a reference assistant what the cell is (a remote model is told nothing)."""

    def start(self, conversation: Conversation, restored: bool) -> None:
        """Called once the conversation is made (and, on --resume, restored), before its first request.

        A suite may shape it from its state: AgentDojo's tool filter asks its one request on a fresh
        conversation and offers only the tools its answer chose. With ``restored`` nothing may be
        sent: only what the restored state already holds is applied (the session also calls it on
        a copy before comparing a checkpoint's pending request). The calibration world: nothing."""

    def user(self, start_state: Any, model_user: Callable[[], Any] | None) -> UserSide:
        """The cell's user; ``model_user()`` gives the --user-model's provider where one is set."""

    def record(self, done: FinishedCell) -> dict[str, Any]:
        """The finished cell's record; the session adds resume, requests_by_day and attempts."""


@runtime_checkable
class Suite(Protocol):
    """A benchmark the session runs (docs/suites.md)."""

    name: str  # "calibration", "agentdojo": --suite NAME
    run_format: str  # run.json's format
    record_format: str  # a finished record's format (a record of another format is set aside)
    data_source: str  # the data notice's "the data comes from ..."
    cells: list[Any]  # every planned PlannedCell, sorted: the same list in every process
    marker_names: list[str]  # markers beyond the level and class ones

    def fingerprint(self) -> str:
        """The world a checkpoint must be of to be continued (a build's, a benchmark version's)."""

    def identity(self, spec: ModelSpec) -> dict[str, Any]:
        """What a results folder is of: a folder of another identity is refused."""

    def run_fields(self, spec: ModelSpec) -> dict[str, Any]:
        """Top-level fields of a new run.json of ``spec``'s folder beside format, identity and runs."""

    def matrix(self, cells: list[Any]) -> dict[str, Any]:
        """The plan of one run entry (cells as ids, and what they span)."""

    def on_selection(self, data: dict[str, Any], cells: list[Any], selection: dict[str, Any]) -> None:
        """Top-level run.json fields that follow the cells this run asks (AgentDojo's ``planned``)."""

    def prepare(self, cell: Any, spec: ModelSpec) -> PreparedCell:
        """One cell ready to run."""

    def record_base(self, cell: Any, spec: ModelSpec) -> dict[str, Any]:
        """The identity fields of a cell's record, also of a not-applicable one."""

    def scripted(self, name: str) -> Any:
        """A reference assistant of this suite by name (``scripted:NAME``)."""

    def next_command(self, folders: list[Path], out: Path) -> str:
        """The command that grades this run's results folders (said after a finished run)."""

    # -- what the tables, the review and serve-tools read of a suite, without a run (issue 32) -----
    definition_errors: tuple[type[Exception], ...]  # a bad definition file (levels, cases): said, exit 2

    def load_levels(self, definition: Path) -> Any:
        """The owner's levels (their settings and the trust verdict's bars) of a definition folder
        (``--calibration DIR``); None for a suite without levels."""

    def load_cases(self, definition: Path) -> tuple[Any, Any]:
        """The suite's cases and levels of a definition folder, as its grading read them (the review)."""

    def task_pairs(self, definition: Path) -> dict[str, str]:
        """Task id -> the id of the task it is paired with (the leaderboard's pairs); none by default."""

    def automatic_level(self, model_name: str, context_window: int | None, levels: Any,
                        provider: str | None) -> str | None:
        """The level a model is placed at by the suite's rules (a table's ``automatic_level``)."""

    def tool_specs(self) -> dict[str, Any]:
        """Tool name -> its ``ToolSpec`` (name, description, parameters): what a prompt estimate counts."""

    def check_record(self, record: dict[str, Any], cases: Any, levels: Any) -> Any:
        """A record's code checks, the items left to judge (``finish(verdicts, grader)``): the owner's grade."""

    def review_sections(self, record: dict[str, Any], cell: dict[str, Any], cases: Any) -> list[Any]:
        """What the owner reads of a graded cell (``judging.items.Section``s, before blinding)."""

    def state_record(self, start: Any, end: Any) -> dict[str, Any]:
        """A record's ``state``: the world's start and final digests, their diff, the final state."""


def next_command(folders: Sequence[Path], out: Path) -> str:
    """The ``grade-ai`` that grades this run's results folders, into a grading folder outside all of them.

    Several models: their parent ``out`` holds the results folders, so ``out/grading`` is outside
    each. One model: ``out`` is the results folder, so the grading goes beside it.
    """
    quoted = " ".join(shlex.quote(str(f)) for f in folders)
    if len(folders) > 1:
        return f"assistant-eval grade-ai {quoted} --dir {shlex.quote(str(out / 'grading'))}"
    folder = Path(folders[0]) if folders else out
    grading = folder.parent / f"{folder.name}-grading"
    return f"assistant-eval grade-ai {quoted} --single-model --dir {shlex.quote(str(grading))}"


class SuiteBase:
    """The ``Suite`` protocol with the session's defaults for the record plumbing (issue 32).

    A subclass sets ``name``, ``data_source`` and ``cells`` and writes ``prepare`` and ``scripted``;
    it overrides a default only where its folders must say more (AgentDojo's versions, the
    calibration's world). ``version`` is the suite's own: a checkpoint or a folder of another
    version is not continued."""

    name: str = "suite"
    version: str = "1"
    data_source: str = "the benchmark's own data"
    marker_names: list[str] = []
    cells: list[Any] = []
    #: False when ``open_world`` never writes a file (an in-memory world): the session then makes
    #: and removes no folder per cell, which costs milliseconds on a busy disk (issue 32).
    uses_work_dir: bool = True

    @property
    def run_format(self) -> str:
        return f"assistant-eval.{self.name}-run/1"

    @property
    def record_format(self) -> str:
        return f"assistant-eval.{self.name}-cell/1"

    def fingerprint(self) -> str:
        return f"{self.name} {self.version}"

    def identity(self, spec: ModelSpec) -> dict[str, Any]:
        return {"preset": spec.preset, "model": spec.model, "address": spec.base_url, "route": spec.route,
                "benchmark": self.name, "version": self.version}

    def run_fields(self, spec: ModelSpec) -> dict[str, Any]:
        return {"benchmark": self.name}

    def matrix(self, cells: list[Any]) -> dict[str, Any]:
        return {"cells": [c.cell_id for c in cells]}

    def on_selection(self, data: dict[str, Any], cells: list[Any], selection: dict[str, Any]) -> None:
        return None

    def record_base(self, cell: Any, spec: ModelSpec) -> dict[str, Any]:
        return {"format": self.record_format, "cell": cell.cell_id, "benchmark": self.name, "version": self.version,
                "level": cell.level, "class": cell.cls,
                "model": {"preset": spec.preset, "model": spec.model, "route": spec.route, "label": spec.label}}

    def next_command(self, folders: list[Path], out: Path) -> str:
        return next_command(folders, out)

    def prepare(self, cell: Any, spec: ModelSpec) -> PreparedCell:
        raise NotImplementedError(f"the {self.name} suite prepares no cell")

    def scripted(self, name: str) -> Any:
        from pytest_assistant_eval.suites.plan import UsageError

        raise UsageError(f"the {self.name} suite has no reference assistant scripted:{name}")

    # -- reading (issue 32): what the tables, the review and serve-tools ask; a suite without
    # levels, cases or a world of tables says so by these defaults and writes none of them.
    definition_errors: tuple[type[Exception], ...] = ()

    def load_levels(self, definition: Path) -> Any:
        return None  # no levels: every model is asked one setting

    def load_cases(self, definition: Path) -> tuple[Any, Any]:
        raise ValueError(f"the {self.name} suite has no case files to review")

    def task_pairs(self, definition: Path) -> dict[str, str]:
        return {}

    def automatic_level(self, model_name: str, context_window: int | None, levels: Any,
                        provider: str | None) -> str | None:
        return None

    def tool_specs(self) -> dict[str, Any]:
        return {}

    def check_record(self, record: dict[str, Any], cases: Any, levels: Any) -> Any:
        raise ValueError(f"the {self.name} suite's records are graded by its own grade-ai, not reviewed")

    def review_sections(self, record: dict[str, Any], cell: dict[str, Any], cases: Any) -> list[Any]:
        return []

    def state_record(self, start: Any, end: Any) -> dict[str, Any]:
        """Digests of the states' canonical JSON; no field-level diff (a suite's own world knows its keys)."""
        import hashlib
        import json

        def digest(state: Any) -> str:
            text = json.dumps(state, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
            return hashlib.sha256(text.encode("utf-8")).hexdigest()

        return {"start_digest": digest(start), "final_digest": digest(end), "diff": [], "final": end}


def reading_suite(name: str) -> SuiteBase:
    """A suite with no reading of its own (``suites.get_suite`` of a module without ``reading_suite``): the defaults."""
    suite = SuiteBase()
    suite.name = name
    return suite
