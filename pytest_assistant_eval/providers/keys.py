"""Where keys come from: the system keyring or the provider's environment variable (S4.3).

Never from the command line or a file. The keyring entry is service ``assistant-eval``,
username = the preset. A key is returned to the caller and never stored, logged or put into
an error message.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from pytest_assistant_eval.providers.errors import MissingKey

KEYRING_SERVICE = "assistant-eval"

#: Environment variables per preset, in the order they are read.
ENV_VARS: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "openrouter": ("OPENROUTER_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    "openai-compatible": ("OPENAI_COMPATIBLE_API_KEY",),
    "ollama": ("OLLAMA_API_KEY",),
}

#: Presets that work without a key (a local server, the built-in assistants).
KEY_OPTIONAL = {"ollama", "scripted", "openai-compatible"}


def _from_keyring(preset: str) -> str | None:
    try:
        import keyring
        from keyring.errors import KeyringError
    except ImportError:  # pragma: no cover - keyring is a dependency
        return None
    try:
        return keyring.get_password(KEYRING_SERVICE, preset) or None
    except (KeyringError, RuntimeError, OSError):
        # No usable backend (a headless machine): fall back to the environment.
        return None


def get_key(preset: str, environ: Mapping[str, str] | None = None) -> str | None:
    """The key for ``preset``; ``None`` for presets that need none; ``MissingKey`` when absent."""
    if preset == "scripted":
        return None
    env = os.environ if environ is None else environ
    key = _from_keyring(preset)
    if key:
        return key
    for name in ENV_VARS.get(preset, ()):
        value = env.get(name)
        if value:
            return value.strip()
    if preset in KEY_OPTIONAL:
        return None
    raise MissingKey(preset, ENV_VARS.get(preset, ()), KEYRING_SERVICE)
