"""Generation settings of a model (issue 33): temperature, top-p, seed, output limit, reasoning effort.

One model at two temperatures is two settings: the values given are part of the model's spec
(its label and folder), of its results folder's identity (a resume with other values is
refused), of every cell's setting key (cells of different settings are never pooled in a
table) and of the tables' model identity. ``provider_options`` maps them onto each preset's
wire format, and refuses a setting the provider has none of: OpenAI and OpenAI-compatible
servers take ``reasoning_effort``, OpenRouter ``reasoning.effort``, Anthropic a thinking
budget, Gemini ``thinkingConfig.thinkingBudget``, Ollama ``think``. ``--max-output-tokens``
replaces the level's output limit in the request (``apply_to_level``).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Mapping

__all__ = ["NAMES", "EFFORTS", "parse_settings", "provider_options", "label_suffix", "with_generation",
           "apply_to_level", "identity_words", "GenerationError"]

#: The settings in the order labels and tables show them.
NAMES = ("temperature", "top_p", "seed", "max_output_tokens", "reasoning_effort")
EFFORTS = ("minimal", "low", "medium", "high")
_SHORT = {"temperature": "t", "top_p": "p", "seed": "s", "max_output_tokens": "o", "reasoning_effort": "r"}
#: Thinking budgets (tokens) per effort where a provider takes a budget, not a word.
ANTHROPIC_BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
GEMINI_BUDGET = {"minimal": 512, "low": 2048, "medium": 8192, "high": 24576}


class GenerationError(ValueError):
    """A generation setting that is malformed or that the model's provider has none of."""


def _number(name: str, value: Any, low: float, high: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise GenerationError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number) or not low <= number <= high:
        raise GenerationError(f"{name} must be between {low:g} and {high:g}, got {value!r}")
    return number


def _integer(name: str, value: Any, low: int) -> int:
    try:
        number = int(str(value))
    except (TypeError, ValueError):
        raise GenerationError(f"{name} must be a whole number, got {value!r}") from None
    if number < low:
        raise GenerationError(f"{name} must be at least {low}, got {value!r}")
    return number


def parse_settings(values: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The settings given (None: not given), checked and in ``NAMES`` order: a ModelSpec's field."""
    unknown = sorted(set(values) - set(NAMES))
    if unknown:
        raise GenerationError(f"unknown generation setting(s) {', '.join(unknown)}; the settings are: "
                              f"{', '.join(NAMES)}")
    out: list[tuple[str, Any]] = []
    for name in NAMES:
        value = values.get(name)
        if value is None:
            continue
        if name == "temperature":
            value = _number(name, value, 0.0, 2.0)
        elif name == "top_p":
            value = _number(name, value, 0.0, 1.0)
        elif name == "seed":
            value = _integer(name, value, 0)
        elif name == "max_output_tokens":
            value = _integer(name, value, 1)
        elif str(value) not in EFFORTS:
            raise GenerationError(f"reasoning_effort must be one of {', '.join(EFFORTS)}, got {value!r}")
        else:
            value = str(value)
        out.append((name, value))
    return tuple(out)


def label_suffix(settings: tuple[tuple[str, Any], ...]) -> str:
    """``_t0.2_s7``: what a model's label adds for its settings (empty without any)."""
    return "".join(f"_{_SHORT[name]}{value:g}" if isinstance(value, float) else f"_{_SHORT[name]}{value}"
                   for name, value in settings)


def identity_words(settings: Mapping[str, Any] | None) -> str:
    """``temperature=0.2, seed=7``: the settings as the tables show them beside the model."""
    if not settings:
        return ""
    return ", ".join(f"{name}={settings[name]}" for name in NAMES if name in settings)


def with_generation(setting_key: dict[str, Any], settings: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The setting key with the settings in it; unchanged without any (older records stay comparable)."""
    if not settings:
        return setting_key
    return {**setting_key, "generation": dict(settings)}


def apply_to_level(level: Any, settings: tuple[tuple[str, Any], ...]) -> Any:
    """The level setting with ``--max-output-tokens`` as its output limit (a frozen dataclass)."""
    limit = dict(settings).get("max_output_tokens")
    return level if limit is None else replace(level, max_output_tokens=int(limit))


def provider_options(preset: str, settings: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """The provider ``options`` that ask for ``settings`` in ``preset``'s wire format.

    ``max_output_tokens`` is not among them (it is the request's own limit). A setting the
    provider has none of is refused with what to change."""
    if settings and preset in ("scripted", "agent"):
        whose = ("the scripted assistants do not sample" if preset == "scripted"
                 else "an agent's own model calls are its own: set them in the agent")
        raise GenerationError(f"{', '.join(name for name, _ in settings)}: {whose}")
    given = {k: v for k, v in settings if k != "max_output_tokens"}
    if not given:
        return {}
    options: dict[str, Any] = {}
    effort = given.pop("reasoning_effort", None)
    if preset in ("openai", "openai-compatible", "openrouter"):
        options.update(given)
        if effort is not None:
            if preset == "openrouter":
                options["reasoning"] = {"effort": effort}
            else:
                options["reasoning_effort"] = effort
    elif preset == "anthropic":
        if "seed" in given:
            raise GenerationError("seed: Anthropic's Messages API has no seed")
        if effort is not None:
            if "temperature" in given:
                raise GenerationError("temperature: Anthropic refuses a temperature with extended thinking "
                                      "(--reasoning-effort); give one of them")
            budget = ANTHROPIC_BUDGET[effort]
            limit = dict(settings).get("max_output_tokens")
            if limit is None or int(limit) <= budget:
                raise GenerationError(f"reasoning_effort {effort}: Anthropic's thinking budget ({budget} tokens) "
                                      f"must be below the output limit: give --max-output-tokens above {budget}")
            options["thinking"] = {"type": "enabled", "budget_tokens": budget}
        options.update(given)
    elif preset == "gemini":
        if "top_p" in given:
            options["topP"] = given.pop("top_p")
        options.update(given)
        if effort is not None:
            options["thinkingConfig"] = {"thinkingBudget": GEMINI_BUDGET[effort]}
    elif preset == "ollama":
        options.update(given)
        if effort is not None:
            if effort == "minimal":
                raise GenerationError("reasoning_effort minimal: Ollama's think takes low, medium or high")
            options["think"] = effort
    else:
        raise GenerationError(f"{', '.join(given)}: the {preset} preset has no generation settings")
    return options
