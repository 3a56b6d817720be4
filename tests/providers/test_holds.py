"""A provider's hold is bounded (issue 23, item 3).

A 429 with ``Retry-After: 999999999`` left ``not_before`` in 2058 in the ledger (every later
resume slept without a word); ``1e999``, a date in the year 9999 or "try again in 99999999h"
stored ``Infinity`` (every later resume died with an ``OverflowError`` in ``pacing.py``). A wait
beyond a day is now a daily quota in the provider's words, and no such time is stored or used.
"""

from __future__ import annotations

import json
import math

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
from pytest_assistant_eval.providers.holds import MAX_HOLD, bound_hold, hold_notice
from pytest_assistant_eval.providers.ledger import Ledger, read_routes
from pytest_assistant_eval.providers.pacing import Pacer
from pytest_assistant_eval.providers.ratelimits import observations_from_headers
from tests.providers.fakes import Answer, Raw

NOW = 1_780_000_000.0
YEAR_2058 = 2_158_000_000.0


class FakeClock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def ask(provider):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=32))


def refusal(headers: dict[str, str], message: str = "Rate limit reached.") -> Raw:
    body = {"error": {"message": message, "type": "requests", "code": "rate_limit_exceeded"}}
    return Raw(status=429, headers={"content-type": "application/json", **headers}, body=json.dumps(body).encode())


FAR = {
    "Retry-After 999999999": ({"retry-after": "999999999"}, "Rate limit reached."),
    "Retry-After 1e999": ({"retry-after": "1e999"}, "Rate limit reached."),
    "retry-after-ms 1e999": ({"retry-after-ms": "1e999"}, "Rate limit reached."),
    "a date in the year 9999": ({"retry-after": "Fri, 31 Dec 9999 23:59:59 GMT"}, "Rate limit reached."),
    "try again in 99999999h": ({}, "Rate limit reached. Please try again in 99999999h."),
}


@pytest.mark.parametrize("case", list(FAR))
def test_a_hold_beyond_a_day_is_a_daily_quota_in_the_providers_words_and_no_hold_is_stored(
        preset_provider, tmp_path, case):
    headers, message = FAR[case]
    clock = FakeClock()
    ledger = Ledger(tmp_path / "ledger.json")
    pacer = Pacer(ledger, "openai@test", clock=clock, sleep=clock.sleep)
    fake, provider = preset_provider("openai", stream=False, pacer=pacer, retry=RetryPolicy(max_attempts=4))
    fake.add(refusal(headers, message))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    error = caught.value
    assert (error.code, error.kind, error.status, error.provider_code) == (
        "daily_quota", "temporary", 429, "rate_limit_exceeded")
    assert error.provider_message == message and error.retry_after is None
    assert "more than a day" in error.message
    assert len(fake.requests) == 1  # never retried, never waited for
    assert clock.sleeps == []
    [attempt] = provider.attempts
    assert attempt.code == "daily_quota" and attempt.retry_after is None
    raw = (tmp_path / "ledger.json").read_text()
    assert "Infinity" not in raw and "NaN" not in raw
    entry = read_routes(tmp_path / "ledger.json")["openai@test"]
    assert entry["not_before"] is None


def test_a_hold_within_a_day_stays_a_rate_limit_the_run_can_wait_for():
    from pytest_assistant_eval.providers.errors import make_error

    error = bound_hold(make_error("rate_limit", retry_after=3600.0))
    assert (error.code, error.retry_after) == ("rate_limit", 3600.0)
    assert bound_hold(make_error("rate_limit", retry_after=float("nan"))).retry_after is None
    assert bound_hold(make_error("key", retry_after=float("inf"))).code == "key"


def test_a_far_or_endless_reset_header_is_no_reset_pacing_waits_for():
    found = observations_from_headers({"x-ratelimit-limit-requests": "10", "x-ratelimit-remaining-requests": "0",
                                       "x-ratelimit-reset-requests": "99999999h"}, NOW)
    assert [o.reset for o in found] == [None]
    found = observations_from_headers({"ratelimit-limit": "10", "ratelimit-remaining": "0",
                                       "ratelimit-reset": "1e999"}, NOW)
    assert [o.reset for o in found] == [None]


@pytest.mark.parametrize("stored", ["Infinity", str(YEAR_2058)], ids=["infinity", "2058"])
def test_a_ledger_holding_an_old_runs_endless_hold_is_read_safely(tmp_path, stored):
    path = tmp_path / "ledger.json"
    entry = ('{"requests_by_day": {}, "rate_limited_by_day": {}, "learned_interval": 0.0, '
             f'"last_start": {stored}, "not_before": {stored}, "recent_starts": [{stored}], '
             f'"limits": {{"requests": {{"limit": 10, "remaining": 0, "reset_at": {stored}, "rolled_at": null}}}}}}')
    path.write_text('{"format": 1, "routes": {"openai@test": ' + entry + '}}')
    clock = FakeClock()
    pacer = Pacer(Ledger(path), "openai@test", clock=clock, sleep=clock.sleep)
    assert hold_notice(read_routes(path), "openai@test", NOW) is None  # nothing to wait for
    slot = pacer.before_request()
    assert math.isfinite(slot) and slot - NOW <= MAX_HOLD
    assert all(s <= MAX_HOLD for s in clock.sleeps)
    raw = path.read_text()
    assert "Infinity" not in raw and str(YEAR_2058) not in raw


def test_a_hold_within_a_day_says_until_when(tmp_path):
    path = tmp_path / "ledger.json"
    clock = FakeClock()
    pacer = Pacer(Ledger(path), "openai@test", clock=clock, sleep=clock.sleep)
    pacer.on_rate_limited(7200.0)
    line = hold_notice(read_routes(path), "openai@test", NOW)
    assert line == ("assistant-eval: openai@test: the provider's hold from an earlier request lasts until "
                    "2026-05-28 22:26:40 UTC (in 2 h 0 min); the first request waits until then.")
    assert hold_notice(read_routes(path), "openai@test", NOW + 7200.0) is None


def test_the_pacer_never_holds_beyond_a_day_whatever_it_is_told(tmp_path):
    path = tmp_path / "ledger.json"
    clock = FakeClock()
    pacer = Pacer(Ledger(path), "openai@test", clock=clock, sleep=clock.sleep)
    for wait in (float("inf"), float("nan"), 1e12, -5.0):
        pacer.on_rate_limited(wait)
    assert read_routes(path)["openai@test"]["not_before"] is None
    pacer.before_request()
    assert clock.sleeps == []


def test_a_rate_limit_within_a_day_is_still_retried_after_its_wait(preset_provider, sleeps):
    fake, provider = preset_provider("openai", stream=False)
    fake.add(refusal({"retry-after": "2"}), Answer(text="fine"))
    assert ask(provider).message.content == "fine"
    assert sleeps == [2.0]


@pytest.mark.parametrize("preset", ["openai", "openrouter", "openai-compatible", "anthropic", "gemini", "ollama"])
def test_every_preset_reads_a_retry_after_beyond_a_day_as_a_daily_quota(preset_provider, preset):
    fake, provider = preset_provider(preset, stream=False, retry=RetryPolicy(max_attempts=4))
    fake.add(refusal({"retry-after": "999999999"}, "Slow down. Please try again in 99999999h."))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.status, caught.value.retry_after) == ("daily_quota", 429, None)
    assert len(fake.requests) == 1
