"""The factory: a preset name and a model become a provider object (S4.1, S4.14, S4.16).

``make_provider`` is the only place that knows which class serves which preset, its default
address and its starting pace. ``scripted`` belongs to the runner's own module and is
imported lazily by name, so this layer never depends on it.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from pytest_assistant_eval.providers.base import Provider
from pytest_assistant_eval.providers.errors import ConfigurationError, UnknownPreset


@dataclass(frozen=True)
class PresetInfo:
    name: str
    module: str
    cls: str
    base_url: str | None  # None: the caller must give one
    remote: bool  # sends data to another party by default
    start_interval: float = 0.0  # seconds between request starts before anything is learned


PRESETS: dict[str, PresetInfo] = {
    "openai": PresetInfo("openai", "openai_compat", "OpenAICompatProvider", "https://api.openai.com/v1", True),
    "openrouter": PresetInfo("openrouter", "openrouter", "OpenRouterProvider", "https://openrouter.ai/api/v1", True),
    "anthropic": PresetInfo("anthropic", "anthropic", "AnthropicProvider", "https://api.anthropic.com", True),
    "gemini": PresetInfo("gemini", "gemini", "GeminiProvider", "https://generativelanguage.googleapis.com", True),
    "ollama": PresetInfo("ollama", "ollama", "OllamaProvider", "http://127.0.0.1:11434", False),
    "openai-compatible": PresetInfo("openai-compatible", "openai_compat", "OpenAICompatProvider", None, True),
}

KNOWN_PRESETS = sorted([*PRESETS, "scripted"])


def preset_info(preset: str) -> PresetInfo:
    try:
        return PRESETS[preset]
    except KeyError:
        raise UnknownPreset(preset, KNOWN_PRESETS) from None


def resolve_base_url(preset: str, base_url: str | None) -> str:
    info = preset_info(preset)
    url = base_url or info.base_url
    if not url:
        raise ConfigurationError(f"The {preset} preset needs an address: give --base-url (e.g. http://127.0.0.1:8000/v1).")
    return url.rstrip("/")


def route(preset: str, base_url: str | None = None) -> str:
    """The route a pacer and a budget belong to: the preset and its address (S4.14)."""
    if preset == "scripted":
        return "scripted"
    url = resolve_base_url(preset, base_url)
    parts = urlsplit(url)
    address = f"{parts.scheme}://{parts.netloc}{parts.path}".rstrip("/")
    return f"{preset}@{address}"


def is_local_address(base_url: str | None) -> bool:
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    return host in ("localhost", "127.0.0.1", "::1") or host.startswith("127.")


def start_interval(preset: str, model: str) -> float:
    """The preset's starting spacing between requests for ``model`` (S4.11)."""
    if preset == "openrouter":
        from pytest_assistant_eval.providers.openrouter import FREE_START_INTERVAL, is_free_model

        return FREE_START_INTERVAL if is_free_model(model) else 0.0
    return PRESETS[preset].start_interval if preset in PRESETS else 0.0


def default_daily_budget(preset: str, model: str) -> int | None:
    """Requests a day allowed by default: 45 for a free model (S4.6), else no limit."""
    if preset == "openrouter":
        from pytest_assistant_eval.providers.openrouter import FREE_DAILY_REQUESTS, is_free_model

        return FREE_DAILY_REQUESTS if is_free_model(model) else None
    return None


def make_provider(
    preset: str,
    model: str,
    *,
    base_url: str | None = None,
    stream: bool = True,
    key: str | None = None,
    pacer: Any = None,
    transport: httpx.BaseTransport | None = None,
    relax_data_collection: bool = False,
    options: dict[str, Any] | None = None,
    **extra: Any,
) -> Provider:
    """A provider for ``preset`` and ``model``.

    ``key`` is looked up with :func:`keys.get_key` when not given (``MissingKey`` when a
    remote preset has none). ``extra`` passes ``retry``, ``sleep``, ``clock`` and ``timeout``
    through to the provider (tests inject them).
    """
    if preset == "scripted":
        try:
            scripted = importlib.import_module("pytest_assistant_eval.suites.calibration.reference")
        except ImportError:
            raise ConfigurationError("The scripted preset is not available in this installation.") from None
        return scripted.make_scripted(model)
    info = preset_info(preset)
    url = resolve_base_url(preset, base_url)
    if key is None:
        from pytest_assistant_eval.providers.keys import get_key

        key = get_key(preset)
    module = importlib.import_module(f"pytest_assistant_eval.providers.{info.module}")
    cls = getattr(module, info.cls)
    kwargs: dict[str, Any] = dict(
        base_url=url, key=key, preset=preset, stream=stream, pacer=pacer, transport=transport, options=options
    )
    if preset == "openrouter":
        kwargs["relax_data_collection"] = relax_data_collection
    kwargs.update(extra)
    provider = cls(model, **kwargs)
    provider.route = route(preset, url)
    return provider


def make_pacer(
    ledger: Any,
    preset: str,
    model: str,
    base_url: str | None = None,
    *,
    pace: float = 0.0,
    max_requests_per_day: int | None = None,
    **kwargs: Any,
) -> Any:
    """The pacer of a route with the preset's defaults (starting interval, 45 a day for free models).

    ``ledger`` is a :class:`~.ledger.Ledger` or a path to one; ``kwargs`` go to :class:`~.pacing.Pacer`
    (``clock``, ``sleep``, ``margin``). ``scripted`` has no limits and gets a no-op pacer.
    """
    from pytest_assistant_eval.providers.ledger import Ledger
    from pytest_assistant_eval.providers.pacing import NoPacer, Pacer

    if preset == "scripted":
        return NoPacer()
    if not isinstance(ledger, Ledger):
        ledger = Ledger(ledger)
    url = resolve_base_url(preset, base_url)
    budget = max_requests_per_day if max_requests_per_day is not None else default_daily_budget(preset, model)
    local = preset in ("ollama", "openai-compatible") and is_local_address(url)
    return Pacer(ledger, route(preset, url), pace=pace, start_interval=start_interval(preset, model),
                 max_requests_per_day=budget, local=local, **kwargs)
