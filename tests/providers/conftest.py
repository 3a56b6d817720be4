"""Fixtures of the provider tests: fake servers per preset, injected sleep, a planted key."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:  # the fakes are imported as tests.providers.fakes (also in child processes)
    sys.path.insert(0, _ROOT)

from tests.providers.fakes.presets import PLANTED_KEY, PRESET_FAKES  # noqa: E402


class Sleeps(list):
    """An injected ``sleep`` that records what it was asked to wait and returns at once."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def make_fake():
    servers = []

    def start(cls, **kwargs):
        server = cls(**kwargs)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


@pytest.fixture
def preset_provider(make_fake, sleeps):
    """``(fake, provider)`` for a preset and a mode, with the planted key and no real sleeping."""
    from pytest_assistant_eval.providers.presets import make_provider

    made = []

    def build(preset: str, *, stream: bool = True, fake_kwargs=None, **kwargs):
        cls, suffix, model = PRESET_FAKES[preset]
        fake = make_fake(cls, **(fake_kwargs or {}))
        kwargs.setdefault("key", PLANTED_KEY)
        kwargs.setdefault("sleep", sleeps)
        provider = make_provider(preset, kwargs.pop("model", model), base_url=fake.url + suffix, stream=stream,
                                 **kwargs)
        made.append(provider)
        return fake, provider

    yield build
    for provider in made:
        provider.close()
