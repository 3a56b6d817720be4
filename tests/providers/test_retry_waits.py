"""Retry sleeps are counted as waiting, and an attempt never sent is no request (issue 31, item K).

30 s of retry sleeps after a 429 without Retry-After showed as ``waited 0 s for pace and rate
limits``; a connection never made was counted in usage though the ledger (and so "request(s)
today") never counted it: "3 request(s) today" while usage showed 4.
"""

from __future__ import annotations

import socket

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
from pytest_assistant_eval.providers.presets import make_provider
from pytest_assistant_eval.run.progress import Progress
from tests.providers.fakes.base import Answer, Fault
from tests.providers.fakes.openai_fake import OpenAIFake


def _request() -> ChatRequest:
    return ChatRequest(model="m", messages=[Message(role="user", content="x")], tools=[], max_output_tokens=8)


def test_retry_sleeps_are_counted_with_the_waits_the_progress_line_shows():
    slept: list[float] = []
    with OpenAIFake() as fake:
        fake.add(Fault("rate_limit"), Fault("server_error"), Answer(text="ok"))
        provider = make_provider("openai", "m", base_url=f"{fake.url}/v1", key="sk-test-key-0000000000000000",
                                 retry=RetryPolicy(base_delay=2.0, max_delay=30.0, default_rate_limit_delay=10.0),
                                 sleep=slept.append)
        try:
            assert provider.complete(_request()).message.content == "ok"
        finally:
            provider.close()
    assert slept and provider.retry_waited == sum(slept)
    assert provider.usage_total.requests == 3 == len(fake.requests)
    progress = Progress(total=2)
    progress.add_wait("main", provider.retry_waited)
    assert f"waited {sum(slept):.0f} s for pace, rate limits and retries" in progress.wait_text()


def test_an_attempt_that_never_connected_is_no_request_in_usage():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    provider = make_provider("openai-compatible", "m", base_url=f"http://127.0.0.1:{port}/v1", key=None,
                             retry=RetryPolicy(max_attempts=2, base_delay=0.0, max_delay=0.0), sleep=lambda s: None)
    try:
        try:
            provider.complete(_request())
        except ProviderError as exc:
            assert exc.code == "no_connection"
    finally:
        provider.close()
    assert provider.usage_total.requests == 0 and len(provider.attempts) == 2
