"""How a key is held while a run uses it (S4.3, S9.3; issue 23 items 15 and 16).

A key lives in a :class:`Secret` from the moment it is read (keyring or environment) until a
request's header is built from it: its ``repr`` and ``str`` never show it, so a traceback
printed with pytest's ``-l`` (every frame's locals) or a junit report cannot carry it, and no
function of the harness binds the bare key to a local variable. The run's keys are one
:class:`Secrets`, which is what every writer redacts with.

A key is replaced in written text only when it is strong enough to be found without harm: a
key shorter than 8 characters, one in :data:`WORDS` (placeholders local servers are given,
words of the harness's own vocabulary) or one found in the run's own identity (a model's
name, an address) is accepted and sent, but never searched for: replacing ``replay`` or
``ollama`` everywhere would corrupt records (a model named ``replay`` became ``[key]``). The
run says so once (:func:`weak_key_line`). This module never writes, prints or logs a key.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

#: The shortest key that is searched for and replaced in what is written.
MIN_LENGTH = 8

#: Keys that are words, not secrets: what local servers are given and what the harness writes itself.
WORDS = frozenset({
    # placeholders of local servers and their documentation
    "none", "null", "empty", "ollama", "key", "apikey", "api-key", "api_key", "token", "secret", "password",
    "passw0rd", "changeme", "change-me", "dummy", "dummy-key", "fake", "fake-key", "test", "test-key",
    "testkey", "testing", "example", "placeholder", "anything", "whatever", "not-needed", "notneeded",
    "no-key", "nokey", "no-key-required", "sk-no-key-required", "sk-xxx", "sk-1234", "lm-studio", "lmstudio",
    "llama.cpp", "llamacpp", "llama-cpp", "vllm", "token-abc123", "local", "localhost", "local-key",
    "secret-key", "my-key", "mykey", "your-api-key", "your_api_key", "your-key-here", "xxxxxxxx",
    # the harness's own vocabulary: values every record holds
    "replay", "scripted", "oracle", "openai", "openrouter", "anthropic", "gemini", "openai-compatible",
    "basic", "standard", "advanced", "question", "scenario", "task", "finished", "answered", "incomplete",
    "escalated", "failed", "calibration", "assistant", "assistant-eval", "user-sim",
})


class Secret:
    """One key; :meth:`reveal` is called only where a request's header is built."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    @classmethod
    def of(cls, value: str | Secret | None) -> Secret | None:
        """``value`` held as a Secret (None or an empty key: None)."""
        if value is None or isinstance(value, Secret):
            return value or None
        return cls(value) if value else None

    def reveal(self) -> str:
        return self._value

    def weakness(self, identity: Iterable[str] = ()) -> str | None:
        """Why this key is not searched for in written text, or None when it is."""
        value = self._value
        if len(value) < MIN_LENGTH:
            return f"shorter than {MIN_LENGTH} characters"
        if value.strip().lower() in WORDS:
            return "a common word"
        if any(value in name for name in identity if name):
            return "part of the run's own names (a model, an address)"
        return None

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Secret):
            return other._value == self._value
        return NotImplemented

    def __hash__(self) -> int:
        return hash(("Secret", self._value))

    def __repr__(self) -> str:
        return "Secret('[key]')"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("a key is not pickled")  # it never crosses to another process or a file


class Secrets:
    """The run's keys, as every writer redacts with them; its ``repr`` names only how many."""

    __slots__ = ("_searched", "_weak")

    def __init__(self, keys: Iterable[str | Secret | None] = (), identity: Iterable[str] = ()) -> None:
        names = tuple(identity)
        searched: dict[str, None] = {}
        weak: dict[str, str] = {}
        for key in keys:
            secret = Secret.of(key)
            if secret is None:
                continue
            why = secret.weakness(names)
            if why is None:
                searched[secret.reveal()] = None
            else:
                weak[secret.reveal()] = why
        # Longest first: a key that holds another is replaced whole.
        self._searched = tuple(sorted(searched, key=len, reverse=True))
        self._weak = tuple(weak.values())

    @classmethod
    def of(cls, value: Secrets | Iterable[str | Secret | None] | None) -> Secrets:
        if isinstance(value, Secrets):
            return value
        return cls(value or ())

    def needles(self) -> Iterator[str]:
        """The keys to search written text for (strong keys only), longest first."""
        return iter(self._searched)

    @property
    def weak_reasons(self) -> tuple[str, ...]:
        return self._weak

    def __add__(self, other: Secrets) -> Secrets:
        joined = Secrets()
        joined._searched = tuple(sorted({*self._searched, *other._searched}, key=len, reverse=True))
        joined._weak = (*self._weak, *other._weak)
        return joined

    def __bool__(self) -> bool:
        return bool(self._searched)

    def __len__(self) -> int:
        return len(self._searched)

    def __repr__(self) -> str:
        return f"Secrets({len(self._searched)} searched, {len(self._weak)} not searched)"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("keys are not pickled")


def weak_key_line(preset: str, source: str, key: Secret | None, identity: Iterable[str] = ()) -> str | None:
    """The one line a run says when its key is accepted but never searched for in what it writes."""
    why = key.weakness(identity) if key is not None else None
    if why is None:
        return None
    return (f"assistant-eval: the {preset} key ({source}) is {why}: it is sent as given, but not searched for "
            "and replaced in what the run writes (it would replace the same word everywhere)")


def unsendable_at(key: Secret) -> int | None:
    """The 1-based position of the first character an HTTP header cannot carry, or None.

    httpx encodes header values as ASCII; a key with another letter would fail inside httpx,
    whose frames hold the whole header, with a traceback pytest prints with its locals.
    """
    for index, char in enumerate(key.reveal(), start=1):
        if not (32 < ord(char) < 127):
            return index
    return None
