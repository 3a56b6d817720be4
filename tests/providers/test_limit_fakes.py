"""Every preset against a fake that enforces and states its limits the provider's way, over real HTTP.

The fake's limiter and the pacer share one injected clock that only the pacer's sleeps move,
so windows, resets and refills are exact and nothing here depends on the machine's speed.
"""

from __future__ import annotations

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import RetryPolicy
from pytest_assistant_eval.providers.ledger import Ledger
from pytest_assistant_eval.providers.pacing import Pacer, learned_limits
from pytest_assistant_eval.providers.presets import make_provider
from tests.providers.fakes import Answer
from tests.providers.fakes.limits import Limit
from tests.providers.fakes.presets import PLANTED_KEY, PRESET_FAKES
from tests.providers.test_pacing import FakeClock


def ask(provider, model, text="hi", max_output=8):
    request = ChatRequest(model=model, messages=[Message(role="user", content=text)], tools=[],
                          max_output_tokens=max_output)
    return provider.complete(request)


def run_preset(tmp_path, make_fake, preset, limits, count, *, text="hi", stream=False, max_output=8):
    clock = FakeClock()
    cls, suffix, model = PRESET_FAKES[preset]
    fake = make_fake(cls, limits=limits, clock=clock, default=Answer(text="ok"))
    url = fake.url + suffix
    pacer = Pacer(Ledger(tmp_path / "ledger.json"), f"{preset}@{url}", clock=clock, sleep=clock.sleep)
    provider = make_provider(preset, model, base_url=url, key=PLANTED_KEY, pacer=pacer, stream=stream,
                             sleep=clock.sleep, retry=RetryPolicy(max_attempts=3))
    try:
        for _ in range(count):
            ask(provider, model, text, max_output)
    finally:
        provider.close()
    entry = Ledger.entry(Ledger(tmp_path / "ledger.json").read(), pacer.route)
    return fake, clock, entry


def used_share(fake, limit: Limit) -> float:
    """Units served per second between the first and the last start, over the allowed rate."""
    charged = fake.limiter.charged
    span = charged[-1][0] - charged[0][0]
    units = sum(costs.get(limit.dimension, 0.0) for _, costs in charged[:-1])
    return units / span / (limit.amount / limit.window)


CASES = [
    # preset, limit, how many requests
    ("openai", Limit("requests", 20, 10.0, "fixed"), 50),
    ("openai", Limit("requests", 20, 10.0, "sliding"), 50),
    ("openai-compatible", Limit("requests", 30, 60.0, "bucket"), 70),  # vLLM / Groq style
    ("anthropic", Limit("requests", 20, 10.0, "bucket"), 50),
    ("openrouter", Limit("requests", 20, 60.0, "fixed"), 50),  # states its limits on its 429s only
]


@pytest.mark.parametrize("preset, limit, count", CASES, ids=[f"{c[0]}-{c[1].kind}-{c[1].window:g}s" for c in CASES])
def test_a_request_bound_route_uses_its_limit_with_at_most_one_refusal(tmp_path, make_fake, preset, limit, count):
    fake, _, entry = run_preset(tmp_path, make_fake, preset, [limit], count)
    assert fake.limiter.refused <= 1
    assert used_share(fake, limit) >= 0.95
    assert learned_limits(entry)["requests"] == {"limit": limit.amount, "window_s": limit.window}


def test_gemini_paces_by_the_quota_its_refusal_states(tmp_path, make_fake):
    limit = Limit("requests", 10, 60.0, "fixed")
    fake, _, entry = run_preset(tmp_path, make_fake, "gemini", [limit], 35)
    assert fake.limiter.refused == 1
    assert used_share(fake, limit) >= 0.95
    assert learned_limits(entry) == {"requests": {"limit": 10, "window_s": 60.0}}


TOKEN_CASES = [
    ("openai", Limit("tokens", 20000, 10.0, "fixed")),
    ("openai-compatible", Limit("tokens", 20000, 60.0, "bucket")),
    ("anthropic", Limit("input_tokens", 20000, 60.0, "bucket")),
    ("openai", Limit("tokens", 20000, 10.0, "sliding")),
]


@pytest.mark.parametrize("preset, limit", TOKEN_CASES, ids=[f"{c[0]}-{c[1].dimension}-{c[1].kind}" for c in TOKEN_CASES])
def test_a_token_bound_route_is_paced_by_the_estimated_tokens_of_each_request(tmp_path, make_fake, preset, limit):
    requests = Limit("requests", 1000, 60.0, "bucket")  # far from binding
    text = "a conversation of some length " * 150  # ~4,500 characters: about 1,500 tokens as the fake counts
    fake, _, entry = run_preset(tmp_path, make_fake, preset, [requests, limit], 40, text=text, max_output=200)
    assert fake.limiter.refused <= 1
    assert used_share(fake, limit) >= 0.9
    assert learned_limits(entry)[limit.dimension] == {"limit": limit.amount, "window_s": limit.window}
    assert entry["estimate_ratio"]  # the estimate learned the provider's own count


def test_a_daily_limit_is_learned_as_daily(tmp_path, make_fake):
    _, _, entry = run_preset(tmp_path, make_fake, "openai-compatible", [Limit("requests", 14400, 86400.0, "bucket")], 5)
    assert learned_limits(entry) == {"requests": {"limit": 14400, "window_s": 86400.0}}


@pytest.mark.parametrize("preset", ["openai", "openrouter", "anthropic", "gemini", "ollama", "openai-compatible"])
def test_streamed_answers_reuse_one_connection(preset, preset_provider):
    fake, provider = preset_provider(preset, stream=True, fake_kwargs={"default": Answer(text="streamed answer")})
    for _ in range(5):
        assert ask(provider, provider.model).message.content == "streamed answer"
    assert fake.connections == 1
