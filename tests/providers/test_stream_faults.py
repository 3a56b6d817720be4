"""Damaged answers in every wire format: never read as the model's answer, always named with their address.

A line of a stream that is not JSON used to be skipped: a cut chunk silently dropped "350" from
"The room is 350 m from the venue", and garbage followed by the end of the stream became an
empty, finished answer. Each is now the temporary fault ``unreadable_answer``: retried with the
same bytes, then raised so the runner keeps the cell (S4.7, S4.10).
"""

from __future__ import annotations

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
from pytest_assistant_eval.providers.presets import make_provider
from tests.providers.fakes import Answer, Fault
from tests.providers.fakes.faults import STREAM_FAULTS, TEXT, html_page, refused_address, stream_fault
from tests.providers.fakes.presets import PLANTED_KEY, PRESET_FAKES

ONE_TRY = RetryPolicy(max_attempts=1)
PRESETS = ["openai-compatible", "openai", "openrouter", "anthropic", "gemini", "ollama"]


def ask(provider):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=32))


@pytest.mark.parametrize("kind", STREAM_FAULTS)
@pytest.mark.parametrize("preset", PRESETS)
def test_a_stream_line_that_is_not_json_is_an_unreadable_answer_never_a_changed_one(preset_provider, preset, kind):
    fake, provider = preset_provider(preset, stream=True, retry=ONE_TRY)
    fake.add(stream_fault(fake, kind))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    error = caught.value
    assert (error.code, error.kind) == ("unreadable_answer", "temporary")
    assert error.address == provider.base_url
    assert [a.code for a in provider.attempts] == ["unreadable_answer"]


@pytest.mark.parametrize("preset", PRESETS)
def test_an_unreadable_stream_is_sent_again_and_the_whole_answer_is_kept(preset_provider, preset):
    fake, provider = preset_provider(preset, stream=True)
    fake.add(stream_fault(fake, "cut_chunk"), Answer(text=TEXT))
    response = ask(provider)
    assert response.message.content == TEXT
    assert [a.code for a in provider.attempts] == ["unreadable_answer"]
    assert fake.requests[0].body == fake.requests[1].body


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("preset", PRESETS)
def test_an_html_page_instead_of_the_answer_says_so_and_names_the_address(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream, retry=ONE_TRY)
    fake.add(html_page())
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    error = caught.value
    assert error.code == "unreadable_answer"
    assert "HTML page" in error.message and provider.base_url in error.message
    assert "Sign in to the guest network" in error.message
    assert "<html" not in str(error)


@pytest.mark.parametrize("preset", PRESETS)
def test_an_html_error_page_gives_its_title_not_its_markup(preset_provider, preset):
    fake, provider = preset_provider(preset, stream=False, retry=ONE_TRY)
    fake.add(html_page(502, "502 Bad Gateway"))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    error = caught.value
    assert (error.code, error.status) == ("busy", 502)
    assert error.provider_message == "an HTML page: 502 Bad Gateway"


@pytest.mark.parametrize("preset", PRESETS)
def test_a_refused_connection_says_refused_and_names_the_address(preset, sleeps):
    _, suffix, model = PRESET_FAKES[preset]
    address = refused_address() + suffix
    with make_provider(preset, model, base_url=address, key=PLANTED_KEY, retry=ONE_TRY, sleep=sleeps) as provider:
        with pytest.raises(ProviderError) as caught:
            ask(provider)
    error = caught.value
    assert error.code == "no_connection"
    assert "refused" in error.message and address in error.message
    assert PLANTED_KEY not in str(error)


@pytest.mark.parametrize("preset", PRESETS)
def test_a_stream_cut_short_names_the_address(preset_provider, preset):
    fake, provider = preset_provider(preset, stream=True, retry=ONE_TRY)
    fake.add(Fault("cut"))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.code == "stream_cut"
    assert provider.base_url in caught.value.message
