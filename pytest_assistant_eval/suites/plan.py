"""What a run asks, whatever its suite (S4.1, S4.17): the models, the options, where results go.

Plain values and functions shared by the plugin, the CLI, the session and every suite: the
model specs parsed from ``--model``, the run's options, a cell's result, where each model's
results folder is, and the route check every session asks before its first cell. They live
below both the run and the suites (issue 32): the session and a suite both read them, and
neither imports the other for them. A suite's own plan (the calibration's cells and level
settings) is the suite's (``suites/calibration/plan.py``). Nothing here runs a cell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_assistant_eval.input_files import read_input_text

KNOWN_PRESETS = ("scripted", "openai", "openrouter", "anthropic", "gemini", "ollama", "openai-compatible", "agent")


def _scripted_models() -> Any:
    """The built-in reference assistants' names (``scripted:NAME``), the calibration suite's, read
    through the registry: a model list is parsed before any suite is made."""
    from pytest_assistant_eval.suites import scripted_models

    return scripted_models()


class UsageError(Exception):
    """A wrong option or input: the message says what to change; nothing was run."""


@dataclass(frozen=True)
class ModelSpec:
    preset: str
    model: str  # for the agent preset: MODULE:FACTORY (issue 33, docs/agents.md)
    base_url: str | None = None
    #: Generation settings given (``providers/generation.py``), in its order; () for the provider's defaults.
    generation: tuple[tuple[str, Any], ...] = ()

    @property
    def route(self) -> str:
        return self.preset if self.base_url is None else f"{self.preset}@{self.base_url}"

    @property
    def label(self) -> str:
        from pytest_assistant_eval.providers.generation import label_suffix

        base = re.sub(r"[^A-Za-z0-9._-]+", "-", self.model).strip("-") or "model"
        return base + label_suffix(self.generation)


def read_models_file(path: Path) -> list[tuple[str, str | None]]:
    """``--models FILE`` as ``(PRESET:MODEL, base_url)`` pairs (``read_model_lines`` has the settings too)."""
    return [(item, url) for item, url, _ in read_model_lines(path)]


def read_model_lines(path: Path) -> list[tuple[str, str | None, dict[str, str]]]:
    """``--models FILE``: one model a line, ``PRESET:MODEL [base_url=URL] [SETTING=VALUE ...]``; ``#``
    starts a comment. A setting is a generation setting (``temperature=0.2``, issue 33).

    Returns ``(PRESET:MODEL, base_url, settings)``; a line that is not of that form is refused
    with the file and the line.
    """
    from pytest_assistant_eval.providers.generation import NAMES
    try:
        text = read_input_text(path)  # a regular file only (issue 31 J)
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--models {path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    found: list[tuple[str, str | None, dict[str, str]]] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        base_url = None
        settings: dict[str, str] = {}
        for extra in words[1:]:
            name, _, value = extra.partition("=")
            if name not in ("base_url", *NAMES) or not value:
                raise UsageError(f"{path}:{number}: expected 'PRESET:MODEL [base_url=URL]' and generation settings "
                                 f"as SETTING=VALUE ({', '.join(NAMES)}), found {raw.strip()!r}")
            if name == "base_url":
                base_url = value
            else:
                settings[name] = value
        if ":" not in words[0]:
            raise UsageError(f"{path}:{number}: {words[0]!r} needs its preset: PRESET:MODEL")
        found.append((words[0], base_url, settings))
    if not found:
        raise UsageError(f"{path}: lists no model")
    return found


def parse_models(provider: str | None, models: list[str], base_url: str | None = None,
                 models_file: Path | None = None, generation: dict[str, Any] | None = None) -> list[ModelSpec]:
    """``--model PRESET:MODEL`` (repeatable), ``--provider P --model M``, or ``--models FILE``.

    ``generation``: the run's generation settings (``--temperature`` ...), for every model; a
    line of ``--models FILE`` may give its own, which replace them for that model."""
    from pytest_assistant_eval.providers.generation import GenerationError, parse_settings, provider_options

    urls: dict[str, str | None] = {}
    own: dict[str, dict[str, str]] = {}
    if models_file is not None:
        for item, url, settings in read_model_lines(models_file):
            models = [*models, item]
            urls[item] = url
            own[item] = settings
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
        if preset == "scripted" and model not in _scripted_models():
            raise UsageError(f"unknown scripted model {model!r}; the built-in assistants are: "
                             f"{', '.join(_scripted_models())}")
        if preset == "openai-compatible" and not model_url:
            raise UsageError("the openai-compatible preset needs --base-url (e.g. http://127.0.0.1:8000/v1)")
        if preset == "agent" and not re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", model):
            raise UsageError(f"--model agent:{model}: expected agent:MODULE:FACTORY (e.g. agent:my_agent:make_agent)")
        try:
            settings = parse_settings({**(generation or {}), **own.get(item, {})})
            provider_options(preset, settings)  # refused here where the provider has none of a setting
        except GenerationError as exc:
            raise UsageError(f"{preset}:{model}: {exc}") from None
        specs.append(ModelSpec(preset, model, model_url if preset not in ("scripted", "agent") else None, settings))
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
    agent_path: tuple[Path, ...] = ()  # --agent-path: folders put on the import path for agent:MODULE:FACTORY


@dataclass
class CellResult:
    status: str  # done | kept | na | skipped | unsaved
    message: str = ""
    code: str | None = None  # the error code that kept the cell, if any


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
