"""Where keys come from: the system keyring or the provider's environment variable (S4.3).

Never from the command line or a file. The keyring entry is service ``assistant-eval``,
username = the preset. A key is returned to the caller as a :class:`Secret` (its repr never
shows it) and never stored, logged or put into an error message. A key an HTTP header cannot
carry (a letter outside ASCII) is refused here, before any request, naming where it came from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from urllib.parse import urlsplit

from pytest_assistant_eval.providers.errors import ConfigurationError, MissingKey
from pytest_assistant_eval.secret import Secret, unsendable_at

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


#: keyring reads its backend from this variable instead of probing every backend it knows.
BACKEND_VARIABLE = "PYTHON_KEYRING_BACKEND"


def _backend() -> object | None:
    """The keyring backend this process uses, or None when there is no usable one.

    keyring chooses its backend once per process by probing every backend it knows (on Linux
    that spawns ldconfig, gcc and ld: 0.1 s or more). The choice is exported in
    ``PYTHON_KEYRING_BACKEND`` so processes started from this one (xdist workers, a run the
    CLI starts) load the same backend at once instead of probing again (issue 15).
    """
    try:
        import keyring
        from keyring.backends import fail
    except ImportError:  # pragma: no cover - keyring is a dependency
        return None
    try:
        backend = keyring.get_keyring()  # keyring keeps its choice for the rest of the process
    except Exception:  # noqa: BLE001 - a broken backend is no backend
        return None
    kind = type(backend)
    if BACKEND_VARIABLE not in os.environ and kind.__module__.startswith(("keyring.backends.", "keyrings.")) \
            and kind.__name__ != "ChainerBackend":  # a chainer probes again when it is loaded
        os.environ[BACKEND_VARIABLE] = f"{kind.__module__}.{kind.__name__}"
    return None if isinstance(backend, fail.Keyring) else backend


def _from_keyring(preset: str) -> str | None:
    backend = _backend()
    if backend is None:
        return None
    from keyring.errors import KeyringError

    try:
        return backend.get_password(KEYRING_SERVICE, preset) or None  # type: ignore[attr-defined]
    except (KeyringError, RuntimeError, OSError):
        # No usable backend (a headless machine): fall back to the environment.
        return None


def needs_keyring(preset: str, base_url: str | None = None) -> bool:
    """Whether the keyring is asked for ``preset``'s key at all.

    Not for the built-in assistants, and not for a preset that works without a key
    (``openai-compatible``, ``ollama``) when its address is this machine: such a run needs no
    key, and asking the keyring costs every process its backend probing. A key for a local
    server comes from the preset's environment variable.
    """
    if preset == "scripted":
        return False
    if preset in KEY_OPTIONAL and base_url is not None:
        return not _loopback((urlsplit(base_url).hostname or "").lower())
    return True


def get_key(preset: str, environ: Mapping[str, str] | None = None, base_url: str | None = None) -> Secret | None:
    """The key for ``preset``; ``None`` for presets that need none; ``MissingKey`` when absent.

    ``base_url``: the address the key would go to; a key-optional preset at a local address
    reads only its environment variable (:func:`needs_keyring`).
    """
    if preset == "scripted":
        return None
    env = os.environ if environ is None else environ
    key = Secret.of(_from_keyring(preset) if needs_keyring(preset, base_url) else None)
    if key:
        return _sendable(preset, key, f"keyring service {KEYRING_SERVICE!r}")
    for name in ENV_VARS.get(preset, ()):
        key = Secret.of((env.get(name) or "").strip())
        if key:
            return _sendable(preset, key, name)
    if preset in KEY_OPTIONAL:
        return None
    raise MissingKey(preset, ENV_VARS.get(preset, ()), KEYRING_SERVICE)


def _sendable(preset: str, key: Secret, source: str) -> Secret:
    at = unsendable_at(key)
    if at is not None:
        raise ConfigurationError(
            f"the {preset} key ({source}) holds a character an HTTP header cannot carry (character {at} is not a "
            "visible ASCII character): was it copied with a letter changed, a space or a quote?")
    return key


def key_source(preset: str, environ: Mapping[str, str] | None = None, base_url: str | None = None) -> str:
    """Where ``get_key`` finds the key of ``preset`` (the keyring or a variable's name), for messages."""
    env = os.environ if environ is None else environ
    if needs_keyring(preset, base_url) and _from_keyring(preset):
        return f"keyring service {KEYRING_SERVICE!r}"
    return next((name for name in ENV_VARS.get(preset, ()) if env.get(name)), "no key")


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def key_destination(preset: str, base_url: str, own_url: str | None, environ: Mapping[str, str] | None = None
                    ) -> str | None:
    """Check where a key is about to go; the line that says so when it is not the preset's own address.

    A key is sent only over https, or over plain http to this machine: a ``--base-url`` of
    ``http://`` another host would hand the key to anyone on the way (ConfigurationError).
    """
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if parts.scheme != "https" and not _loopback(host):
        raise ConfigurationError(
            f"{preset}: the key would go over plain http to {host or base_url}; a key is sent only over https, "
            f"or over http to this machine (127.0.0.1, localhost): use https://{parts.netloc}{parts.path} "
            "or a local address")
    if own_url is not None and base_url.rstrip("/") == own_url.rstrip("/"):
        return None
    where = f"not to {own_url}" if own_url else "the address given with --base-url"
    return f"assistant-eval: the {preset} key ({key_source(preset, environ, base_url)}) goes to {base_url.rstrip('/')}, {where}"


def missing_key_line(preset: str, base_url: str) -> str | None:
    """The line that says a preset which may need a key has none (its requests go without one).

    Only ``openai-compatible`` and a remote ``ollama`` may run without a key; a run that silently
    sends none fails at the server with a puzzling 401, or worse, works against the wrong server.
    """
    if preset not in KEY_OPTIONAL or preset == "scripted":
        return None
    if preset == "ollama" and _loopback((urlsplit(base_url).hostname or "").lower()):
        return None  # a local Ollama needs no key
    names = " or ".join(ENV_VARS.get(preset, ()))
    other = "; OPENAI_API_KEY is not read for it" if preset == "openai-compatible" else ""
    return (f"assistant-eval: {preset} has no key (keyring service {KEYRING_SERVICE!r}, username {preset!r}, "
            f"or {names}{other}): its requests go without one")
