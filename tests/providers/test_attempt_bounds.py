"""One attempt is bounded: in bytes read (``oversized``, item 7) and in time (the deadline, item 8).

A 10 MB answer for 1,024 tokens was saved whole (a 30 MB record, gigabytes to grade); a server
dribbling one byte every 5 s, or never answering, held a request for as long as it liked. The
slow servers here are real sockets on 127.0.0.1; the tests assert only how the attempt ended.
"""

from __future__ import annotations

import tracemalloc

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
from pytest_assistant_eval.providers.limits import FOLD_CHARS, Deadline, Reading, body_cap
from pytest_assistant_eval.providers.presets import make_provider
from tests.providers.fakes import Answer, Raw
from tests.providers.fakes.shapes import WIRE, big_stream, big_whole, stream_raw, valid_stream
from tests.providers.fakes.slow import DribblingServer

ONE_TRY = RetryPolicy(max_attempts=1)
PRESETS = ["openai", "openrouter", "openai-compatible", "anthropic", "gemini", "ollama"]
TEN_MB = 10_000_000


def ask(provider, max_output_tokens=1024):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=max_output_tokens))


# -- oversized -----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_ten_megabyte_answer_for_1024_tokens_is_an_oversized_stop_folded_and_read_with_a_cap(
        preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream, retry=ONE_TRY)
    wire = WIRE[preset]
    fake.add(big_stream(wire, TEN_MB) if stream else big_whole(wire, TEN_MB))
    tracemalloc.start()
    try:
        response = ask(provider)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert response.stop_reason == "oversized"
    assert len(response.message.content) <= FOLD_CHARS + 100
    assert response.message.tool_calls == [] and response.message.provider_data == {}
    info = response.provider["oversized"]
    assert info["capped"] and info["bytes_read"] <= body_cap(1024) < TEN_MB
    if stream:
        assert response.message.content.startswith("x" * 100)  # the answer's beginning is kept
    assert peak < 8 * body_cap(1024)  # memory follows the cap, never the answer
    assert provider.attempts == []  # a graded stop, not a failed attempt


@pytest.mark.parametrize("preset", ["openai", "anthropic", "gemini", "ollama"])
def test_an_answer_within_the_byte_cap_but_far_beyond_its_characters_is_oversized(preset_provider, preset):
    fake, provider = preset_provider(preset, stream=False, retry=ONE_TRY)
    fake.add(Answer(text="y" * 200_000))
    response = ask(provider, max_output_tokens=64)
    assert response.stop_reason == "oversized"
    assert response.provider["oversized"]["characters"] >= 200_000 and not response.provider["oversized"]["capped"]
    assert len(response.message.content) <= FOLD_CHARS + 100


@pytest.mark.parametrize("preset", ["openai", "anthropic", "gemini", "ollama"])
def test_a_long_answer_within_its_output_limit_is_kept_whole(preset_provider, preset):
    fake, provider = preset_provider(preset, stream=True)
    fake.add(Answer(text="z" * 20_000))
    response = ask(provider, max_output_tokens=4096)
    assert response.stop_reason == "end_turn" and response.message.content == "z" * 20_000


def test_the_capped_reader_drops_the_line_the_cap_cut_in_its_middle():
    reading = Reading(cap=12)
    assert list(reading.lines([b"data: 1\n", b"data: 22222\n"])) == ["data: 1"]
    assert reading.capped and reading.received == 12


# -- the deadline ---------------------------------------------------------------------------------


def test_a_server_dribbling_one_byte_at_a_time_ends_at_the_deadline_as_a_timeout(preset_provider):
    wire = WIRE["openai"]
    raw = stream_raw(wire, valid_stream(wire))
    body = raw.chunks[0]
    raw.chunks = [body[i:i + 1] for i in range(len(body))]
    raw.chunk_delay = 0.2
    fake, provider = preset_provider("openai", stream=True, retry=ONE_TRY, deadline=1.0)
    fake.add(raw)
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.kind, caught.value.status) == ("timeout", "temporary", None)
    assert "deadline of 1 s" in caught.value.message
    assert [a.code for a in provider.attempts] == ["timeout"]


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_silent_server_ends_at_the_deadline_as_a_timeout(preset_provider, stream):
    fake, provider = preset_provider("anthropic", stream=stream, retry=ONE_TRY, deadline=0.5)
    fake.add(Raw(status=200, body=b"{}", delay=20.0))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.provider_message) == ("timeout", None)


def test_a_server_dribbling_its_headers_ends_at_the_deadline_as_a_timeout():
    response = (b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nx-padding: " + b"p" * 400 + b"\r\n"
                b"content-length: 2\r\n\r\n{}")
    with DribblingServer(response, interval=0.05) as server:
        provider = make_provider("openai-compatible", "m", base_url=server.url + "/v1", stream=False,
                                 retry=ONE_TRY, deadline=1.0)
        try:
            with pytest.raises(ProviderError) as caught:
                ask(provider)
        finally:
            provider.close()
    assert caught.value.code == "timeout"


def test_each_retry_gets_a_fresh_deadline(preset_provider, sleeps):
    fake, provider = preset_provider("openai", stream=False, retry=RetryPolicy(max_attempts=2), deadline=0.5)
    fake.add(Raw(status=200, body=b"{}", delay=20.0), Answer(text="in time"))
    assert ask(provider).message.content == "in time"
    assert [a.code for a in provider.attempts] == ["timeout"]


def test_the_default_deadline_is_ten_minutes_and_a_deadline_only_runs_during_an_attempt():
    provider = make_provider("openai-compatible", "m", base_url="http://127.0.0.1:9/v1")
    try:
        assert provider.deadline.seconds == 600.0 and provider.deadline.at is None
    finally:
        provider.close()
    deadline = Deadline(5.0)
    assert deadline.clamp(30.0) == 30.0
    deadline.start()
    assert deadline.clamp(30.0) <= 5.0 and deadline.clamp(None) <= 5.0
