"""Planning a run: which models, which cells, in which order (S4.1, S4.17).

Plain values and functions shared by the plugin, the CLI and the runner: the model
specs parsed from ``--model``, the run's options, the sorted list of cells (ids
``<case>__<level>__r<n>``), the level settings the loop needs, and where each model's
results folder is. Nothing here runs a cell or touches a provider.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.suites.calibration.cases.load import load_cases
from pytest_assistant_eval.suites.calibration.cases.model import CaseSet
from pytest_assistant_eval.conversation.loop import LevelSetting
from pytest_assistant_eval.conversation.messages import ToolDefinition
from pytest_assistant_eval.suites.calibration.reference import SCRIPTED_MODELS
from pytest_assistant_eval.suites.calibration.world.build import list_variants
from pytest_assistant_eval.suites.calibration.world.fixtures import load_variants
from pytest_assistant_eval.suites.calibration.world.tools import tool_specs

KNOWN_PRESETS = ("scripted", "openai", "openrouter", "anthropic", "gemini", "ollama", "openai-compatible")
CELL_ID = re.compile(r"^(?P<case>[A-Z]\d+(?:\.\d+)?)__(?P<level>[a-z]+)__r(?P<repeat>\d+)$")


class UsageError(Exception):
    """A wrong option or input: the message says what to change; nothing was run."""


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
class ModelSpec:
    preset: str
    model: str
    base_url: str | None = None

    @property
    def route(self) -> str:
        return self.preset if self.base_url is None else f"{self.preset}@{self.base_url}"

    @property
    def label(self) -> str:
        return re.sub(r"[^A-Za-z0-9._-]+", "-", self.model).strip("-") or "model"


def read_models_file(path: Path) -> list[tuple[str, str | None]]:
    """``--models FILE``: one model a line, ``PRESET:MODEL [base_url=URL]``; ``#`` starts a comment.

    Returns ``(PRESET:MODEL, base_url)`` pairs; a line that is not of that form is refused
    with the file and the line.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--models {path}: cannot read it ({exc.strerror})") from None
    found: list[tuple[str, str | None]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        base_url = None
        for extra in words[1:]:
            if not extra.startswith("base_url=") or len(extra) <= len("base_url="):
                raise UsageError(f"{path}:{number}: expected 'PRESET:MODEL [base_url=URL]', found {raw.strip()!r}")
            base_url = extra.split("=", 1)[1]
        if ":" not in words[0]:
            raise UsageError(f"{path}:{number}: {words[0]!r} needs its preset: PRESET:MODEL")
        found.append((words[0], base_url))
    if not found:
        raise UsageError(f"{path}: lists no model")
    return found


def parse_models(provider: str | None, models: list[str], base_url: str | None = None,
                 models_file: Path | None = None) -> list[ModelSpec]:
    """``--model PRESET:MODEL`` (repeatable), ``--provider P --model M``, or ``--models FILE``."""
    urls: dict[str, str | None] = {}
    if models_file is not None:
        for item, url in read_models_file(models_file):
            models = [*models, item]
            urls[item] = url
    if not models:
        raise UsageError("name a model: --provider PRESET --model MODEL, or --model PRESET:MODEL (repeatable)")
    specs: list[ModelSpec] = []
    for item in models:
        model_url = urls.get(item) or base_url
        if ":" in item and (provider is None or item.split(":", 1)[0] in KNOWN_PRESETS):
            preset, model = item.split(":", 1)
        elif provider is not None:
            preset, model = provider, item
        else:
            raise UsageError(f"--model {item!r} needs a preset: --model PRESET:MODEL or --provider PRESET")
        if preset not in KNOWN_PRESETS:
            raise UsageError(f"unknown provider preset {preset!r}; known presets: {', '.join(KNOWN_PRESETS)}")
        if preset == "scripted" and model not in SCRIPTED_MODELS:
            raise UsageError(f"unknown scripted model {model!r}; the built-in assistants are: "
                             f"{', '.join(SCRIPTED_MODELS)}")
        if preset == "openai-compatible" and not model_url:
            raise UsageError("the openai-compatible preset needs --base-url (e.g. http://127.0.0.1:8000/v1)")
        specs.append(ModelSpec(preset, model, model_url if preset != "scripted" else None))
    labels = [s.label for s in specs]
    if len(set(labels)) != len(labels):
        raise UsageError(f"a model is named twice: {', '.join(labels)}")
    return specs


@dataclass(frozen=True)
class RunOptions:
    """What one run asks, whatever its suite (the plugin builds it from pytest's options)."""

    world: Path | None  # the calibration suite's built world (another suite brings its own)
    out: Path
    models: tuple[ModelSpec, ...]
    calibration: Path | None
    levels: tuple[str, ...] | None = None  # None: every level in levels.yaml
    repeats: int | None = None
    resume: bool = False
    stream: bool = True
    pace: float = 0.0
    accept_data_notice: bool = False
    relax_data_collection: bool = False
    max_requests_per_day: int | None = None
    user_model: ModelSpec | None = None  # --user-model: the simulated user of non-scripted task cells
    ollama_contexts: tuple[tuple[str, int], ...] | None = None  # --ollama-context level=tokens,...
    allow_cpu_offload: bool = False
    request_deadline: float | None = None  # seconds one attempt may take in all (None: the provider default)
    suite: str = "calibration"  # --suite NAME (suites/__init__.py)
    suite_options: Any = None  # what only that suite reads (AgentDojo: its parts, crossed, cells, attack)


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


@dataclass
class CellResult:
    status: str  # done | kept | na | skipped | unsaved
    message: str = ""
    code: str | None = None  # the error code that kept the cell, if any


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


def results_dir(options: RunOptions, spec: ModelSpec) -> Path:
    return options.out if len(options.models) == 1 else options.out / spec.label


def check_route(spec: ModelSpec, accept_data_notice: bool, data_source: str | None = None) -> tuple[Any, list[str]]:
    """One model's route before any cell: its data notice (accepted or refused), its key, and
    the lines the run says at its start (the notice's text, where the key goes or that there is
    none). Every session that sends requests (ours, AgentDojo's) asks this."""
    from pytest_assistant_eval.providers.errors import ConfigurationError
    from pytest_assistant_eval.providers.errors import ProviderError as _PE
    from pytest_assistant_eval.providers.keys import get_key, key_destination, key_source, missing_key_line
    from pytest_assistant_eval.providers.notices import check_notice
    from pytest_assistant_eval.providers.presets import preset_info, resolve_base_url
    from pytest_assistant_eval.secret import weak_key_line

    try:
        notices = check_notice(spec.preset, spec.model, spec.base_url, accept_data_notice, world_verified=True,
                               **({"data_source": data_source} if data_source else {}))
        address = resolve_base_url(spec.preset, spec.base_url)
        key = get_key(spec.preset, base_url=address)
        said = (key_destination(spec.preset, address, preset_info(spec.preset).base_url) if key
                else missing_key_line(spec.preset, address))
        weak = weak_key_line(spec.preset, key_source(spec.preset, base_url=address), key,
                             (spec.model, spec.label, address)) if key else None
    except (_PE, ConfigurationError) as exc:
        raise UsageError(str(exc)) from None
    lines = [f"assistant-eval: data notice ({n.route}): {n.text}" for n in notices]
    return key, [line for line in [*lines, said, weak] if line]
