"""The calibration suite's plan (S4.1, S3.3): its cells, their ids and their level settings.

The sorted list of cells (ids ``<case>__<level>__r<n>``), the conversation setting of each
level, the case set and levels a run or a grading loads, and where a model is placed
automatically. What every suite's run shares (the models, the options) is ``suites/plan.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_assistant_eval.conversation.loop import LevelSetting
from pytest_assistant_eval.messages import ToolDefinition
from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.cases.load import load_cases
from pytest_assistant_eval.suites.calibration.cases.model import CaseSet
from pytest_assistant_eval.suites.calibration.world.build import list_variants
from pytest_assistant_eval.suites.calibration.world.fixtures import load_variants
from pytest_assistant_eval.suites.calibration.world.tools import tool_specs
from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions, UsageError

__all__ = ["CELL_ID", "CellSpec", "check_world_path", "level_setting", "tool_definitions", "load_calibration",
           "plan_cells", "automatic_level", "asked_window"]

CELL_ID = re.compile(r"^(?P<case>[A-Z]\d+(?:\.\d+)?)__(?P<level>[a-z]+)__r(?P<repeat>\d+)$")


def check_world_path(world: Path) -> None:
    """Say what is wrong with a ``--world`` path before the marker is looked for.

    "has no marker" puzzled people who mistyped the path or gave the folder a world was built in.
    """
    from pytest_assistant_eval.suites.calibration.world.build import MARKER_NAME, WORLD_DIR_NAME

    world = Path(world)
    if not world.exists():
        raise UsageError(f"--world {world}: no such folder; build a world with 'assistant-eval build --out DIR' "
                         f"and pass --world 'DIR/{WORLD_DIR_NAME}'")
    inside = world / WORLD_DIR_NAME
    if not (world / MARKER_NAME).exists() and (inside / MARKER_NAME).exists():
        raise UsageError(f"--world {world} is the folder a world was built in; pass the world inside it: "
                         f"--world '{inside}'")


@dataclass(frozen=True)
class CellSpec:
    model: str  # the model's label (its results folder)
    cell_id: str  # <case>__<level>__r<n>; the record's name
    case_id: str
    kind: str  # question | scenario | task
    cls: str  # lookup | interpret | diagnose | scenario | task
    level: str
    repeat: int

    @property
    def param_id(self) -> str:
        return self.cell_id


def level_setting(level: levels_mod.Level) -> LevelSetting:
    specs = {s.name: s for s in tool_specs()}
    tools = tuple(ToolDefinition(specs[n].name, specs[n].description, specs[n].parameters) for n in level.tools)
    return LevelSetting(
        name=level.name,
        instructions=level.instructions_text,
        tools=tools,
        max_tool_calls=level.max_tool_calls,
        max_rounds=level.max_rounds,
        max_output_tokens=level.max_output_tokens,
        result_cap_chars=level.result_cap_chars,
        context_window=level.context_window,
        compact_at=level.compact_at,
        keep_last_rounds=level.keep_last_rounds,
        escalation_sentence=level.escalation_sentence,
    )


def tool_definitions(level: levels_mod.Level) -> list[dict[str, Any]]:
    return [t.to_dict() for t in level_setting(level).tools]


def load_calibration(calibration: Path, world: Path | None = None) -> tuple[CaseSet, levels_mod.Levels]:
    names = {s.name for s in tool_specs()}
    if world is not None:
        variants = set(list_variants(world))
    else:
        variants = {"base", *load_variants(calibration / "world")}
    cases = load_cases(calibration, names, variants)
    levels = levels_mod.load_levels(calibration / "levels.yaml")
    return cases, levels


def plan_cells(cases: CaseSet, levels: levels_mod.Levels, options: RunOptions) -> list[CellSpec]:
    chosen = list(options.levels or levels.levels.keys())
    unknown = [name for name in chosen if name not in levels.levels]
    if unknown:
        raise UsageError(f"unknown level(s) {', '.join(unknown)}; levels.yaml has {', '.join(levels.levels)}")
    cells: list[CellSpec] = []
    for spec in options.models:
        auto = automatic_level(spec, levels, asked_window(spec, options))
        for level in chosen:
            q_repeats = options.repeats or 1
            for q in cases.questions.questions:
                for r in range(1, q_repeats + 1):
                    cells.append(CellSpec(spec.label, f"{q.id}__{level}__r{r}", q.id, "question", q.cls, level, r))
            if level == auto:
                sid = cases.questions.scenario.id
                for r in range(1, q_repeats + 1):
                    cells.append(CellSpec(spec.label, f"{sid}__{level}__r{r}", sid, "scenario", "scenario", level, r))
            for task in cases.tasks:
                for r in range(1, (options.repeats or task.repeats) + 1):
                    cells.append(CellSpec(spec.label, f"{task.id}__{level}__r{r}", task.id, "task", "task", level, r))
    return sorted(cells, key=lambda c: (c.model, c.case_id, c.level, c.repeat))


def automatic_level(spec: ModelSpec, levels: levels_mod.Levels, context_window: int | None = None) -> str:
    """The model's automatic level (S3.3) from its name (and the size it names) and its context window.

    The window is known here only for a local model: the largest ``--ollama-context`` it runs
    with. The summary places it again with the context the Ollama probe measured.
    """
    name = spec.model if spec.preset != "scripted" else f"scripted:{spec.model}"
    return levels_mod.placement(name, None, context_window, levels, provider=spec.preset)


def asked_window(spec: ModelSpec, options: RunOptions) -> int | None:
    """The largest context a local model is run with (``--ollama-context``); None when not known."""
    if spec.preset != "ollama" or not options.ollama_contexts:
        return None
    return max(tokens for _, tokens in options.ollama_contexts)

