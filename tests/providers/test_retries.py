"""The bounded retry budget inside ``complete()``: what is retried, how long it waits, what is recorded."""

from __future__ import annotations

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import ProviderError, RetryDecision, RetryPolicy, make_error
from tests.providers.fakes import Answer, Fault


def ask(provider):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=32))


def test_a_rate_limit_waits_its_retry_after_then_answers(preset_provider, sleeps):
    fake, provider = preset_provider("openai")
    fake.add(Fault("rate_limit", retry_after=7), Answer(text="ok"))
    assert ask(provider).message.content == "ok"
    assert sleeps == [7.0]
    [attempt] = provider.attempts
    assert (attempt.code, attempt.status, attempt.retry_after) == ("rate_limit", 429, 7.0)


def test_anthropic_overloaded_backs_off_exponentially(preset_provider, sleeps):
    fake, provider = preset_provider("anthropic")
    fake.add(Fault("overloaded"), Fault("overloaded"), Answer(text="ok"))
    assert ask(provider).message.content == "ok"
    assert sleeps == [1.0, 2.0]
    assert [a.code for a in provider.attempts] == ["overloaded", "overloaded"]


def test_an_overloaded_answer_with_retry_after_waits_that_long(preset_provider, sleeps):
    fake, provider = preset_provider("openrouter")
    fake.add(Fault("overloaded", retry_after=3), Answer(text="ok"))
    ask(provider)
    assert sleeps == [3.0]


def test_after_the_budget_the_error_goes_to_the_caller_with_every_attempt(preset_provider, sleeps):
    fake, provider = preset_provider("gemini", retry=RetryPolicy(max_attempts=3))
    fake.add(Fault("overloaded"), Fault("overloaded"), Fault("overloaded"), Answer(text="never"))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.code == "overloaded"
    assert len(fake.requests) == 3 and len(provider.attempts) == 3 and sleeps == [1.0, 2.0]
    assert provider.take_attempts() and provider.attempts == []


@pytest.mark.parametrize(("preset", "fault", "code"), [("openrouter", "daily_quota", "daily_quota"),
                                                       ("gemini", "daily_quota", "daily_quota"),
                                                       ("anthropic", "bad_key", "key"),
                                                       ("openai", "context_too_long", "context_too_long")])
def test_daily_quotas_fatal_and_graded_errors_are_never_retried(preset_provider, sleeps, preset, fault, code):
    fake, provider = preset_provider(preset)
    fake.add(Fault(fault), Answer(text="never"))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.code == code
    assert len(fake.requests) == 1 and sleeps == []


def test_the_per_minute_input_quota_is_retried_once_then_raised_for_the_same_request(preset_provider, sleeps):
    fake, provider = preset_provider("gemini")
    fake.add(Fault("tpm_input", retry_after=2), Fault("tpm_input", retry_after=2), Answer(text="never"))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.code == "tpm_input"
    assert caught.value.quota["quota_id"] == "GenerateContentInputTokensPerModelPerMinute-FreeTier"
    assert sleeps == [2.0]
    first, second = provider.attempts
    assert first.request_sha256 == second.request_sha256 == provider.last_request_sha256
    assert fake.requests[0].body == fake.requests[1].body


def test_a_retry_after_longer_than_allowed_is_not_waited_for(preset_provider, sleeps):
    fake, provider = preset_provider("openai", retry=RetryPolicy(max_retry_after=30))
    fake.add(Fault("rate_limit", retry_after=600), Answer(text="never"))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.retry_after) == ("rate_limit", 600.0)
    assert sleeps == []


@pytest.mark.parametrize("preset", ["openai", "anthropic", "gemini", "ollama"])
def test_a_stream_cut_short_is_sent_again_byte_for_byte(preset_provider, sleeps, preset):
    fake, provider = preset_provider(preset)
    fake.add(Fault("cut"), Answer(text="whole answer"))
    assert ask(provider).message.content == "whole answer"
    assert fake.requests[0].body == fake.requests[1].body
    assert [(a.code, a.status, a.message) for a in provider.attempts] == [("stream_cut", None, None)]


def test_a_connection_refused_is_no_connection(sleeps):
    from pytest_assistant_eval.providers.presets import make_provider
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    provider = make_provider("ollama", "m", base_url=f"http://127.0.0.1:{port}", sleep=sleeps,
                             retry=RetryPolicy(max_attempts=2))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.status, caught.value.provider_message) == ("no_connection", None, None)
    assert len(provider.attempts) == 2
    provider.close()


class RecordingPacer:
    def __init__(self):
        self.calls = []

    def before_request(self, need=None):
        self.calls.append("before")

    def after_response(self, headers, usage=None):
        self.calls.append(("after", dict(headers)))

    def on_rate_limited(self, retry_after, headers, quota=None):
        self.calls.append(("limited", retry_after))


def test_the_pacer_is_asked_before_every_send_and_told_about_limits(preset_provider, sleeps):
    pacer = RecordingPacer()
    fake, provider = preset_provider("anthropic", pacer=pacer)
    fake.add(Fault("rate_limit", retry_after=4), Answer(text="ok"))
    ask(provider)
    assert pacer.calls[:3] == ["before", ("limited", 4.0), "before"]
    assert pacer.calls[3][0] == "after"


def test_retry_decisions():
    policy = RetryPolicy(max_attempts=4, base_delay=1, max_delay=5)
    assert policy.decide(make_error("busy"), 1) == RetryDecision.transient(1)
    assert policy.decide(make_error("busy"), 3) == RetryDecision.transient(4)
    assert policy.decide(make_error("busy"), 4) == RetryDecision.no()
    assert policy.decide(make_error("rate_limit", retry_after=2.5), 1) == RetryDecision.rate_limit(2.5)
    assert policy.decide(make_error("daily_quota"), 1) == RetryDecision.no()
    assert policy.decide(make_error("key"), 1) == RetryDecision.no()
    assert policy.decide(make_error("tpm_input", retry_after=9), 2, ["tpm_input"]) == RetryDecision.no()
    assert policy.decide(make_error("tpm_input", retry_after=9), 2, ["busy"]) == RetryDecision.rate_limit(9)
