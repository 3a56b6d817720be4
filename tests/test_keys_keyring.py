"""When the keyring is asked for a key, and that its backend choice is made once (issue 15)."""

from __future__ import annotations

import keyring
import pytest
from keyring.backend import KeyringBackend

from pytest_assistant_eval.providers import keys
from pytest_assistant_eval.providers.keys import get_key, needs_keyring


class CountingKeyring(KeyringBackend):
    priority = 1

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def get_password(self, service, username):
        self.asked.append(username)
        return f"key-of-{username}"

    def set_password(self, service, username, password):  # pragma: no cover - never written
        raise NotImplementedError

    def delete_password(self, service, username):  # pragma: no cover
        raise NotImplementedError


@pytest.fixture
def counting_keyring():
    previous = keyring.get_keyring()
    backend = CountingKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


def test_a_local_key_optional_route_never_asks_the_keyring(counting_keyring):
    assert get_key("openai-compatible", environ={}, base_url="http://127.0.0.1:8000/v1") is None
    assert get_key("ollama", environ={"OLLAMA_API_KEY": "k"}, base_url="http://localhost:11434").reveal() == "k"
    assert get_key("scripted", environ={}) is None
    assert counting_keyring.asked == []


def test_a_route_that_needs_a_key_asks_the_keyring_first(counting_keyring):
    assert get_key("openai", environ={"OPENAI_API_KEY": "env"}).reveal() == "key-of-openai"
    assert get_key("openai-compatible", environ={}, base_url="https://llm.example.org/v1").reveal() == "key-of-openai-compatible"
    assert counting_keyring.asked == ["openai", "openai-compatible"]


@pytest.mark.parametrize(("preset", "url", "asked"), [
    ("openai", None, True), ("anthropic", "http://127.0.0.1:9/v1", True), ("scripted", None, False),
    ("openai-compatible", "http://127.0.0.1:9/v1", False), ("openai-compatible", "https://x.example/v1", True),
    ("ollama", "http://localhost:11434", False), ("ollama", "https://ollama.example", True)])
def test_needs_keyring(preset, url, asked):
    assert needs_keyring(preset, url) is asked


def test_the_backend_choice_is_handed_to_child_processes(monkeypatch):
    from keyring.backends.null import Keyring as NullKeyring

    monkeypatch.delenv(keys.BACKEND_VARIABLE, raising=False)
    previous = keyring.get_keyring()
    keyring.set_keyring(NullKeyring())
    try:
        assert get_key("openai", environ={"OPENAI_API_KEY": "env"}).reveal() == "env"
        import os

        assert os.environ[keys.BACKEND_VARIABLE] == "keyring.backends.null.Keyring"
    finally:
        keyring.set_keyring(previous)


def test_a_test_backend_is_never_handed_on(counting_keyring, monkeypatch):
    import os

    monkeypatch.delenv(keys.BACKEND_VARIABLE, raising=False)
    get_key("openai", environ={})
    assert keys.BACKEND_VARIABLE not in os.environ
