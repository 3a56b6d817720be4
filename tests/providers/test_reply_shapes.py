"""Every reply shape of every wire format is ours or ``unreadable_answer`` (issue 23, item 6).

``{"choices": ["surprise"]}``, ``"content": 42`` and ``"prompt_tokens": "lots"`` used to raise an
uncaught ``AttributeError``/``TypeError``: the cell became a pytest error and nothing reached
``spent.json``. The property tests throw arbitrary JSON, and valid answers with one part
replaced by arbitrary JSON, at each parser.
"""

from __future__ import annotations

import json

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.messages import ChatRequest, ChatResponse, Message, Usage
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
from pytest_assistant_eval.providers.presets import make_provider
from pytest_assistant_eval.providers.replies import response_problem
from tests.providers.fakes import Raw
from tests.providers.fakes.shapes import (
    WIRE,
    WIRES,
    odd_wholes,
    replaced,
    stream_lines,
    stream_raw,
    valid_stream,
    valid_whole,
    whole_raw,
)

ONE_TRY = RetryPolicy(max_attempts=1)
PRESET_OF = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini", "ollama": "ollama"}
PRESETS = ["openai", "openrouter", "openai-compatible", "anthropic", "gemini", "ollama"]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["choices", "message", "content", "delta", "usage", "text", "parts", "candidates", "type",
                         "index", "tool_calls", "function", "arguments", "name", "id", "done", "error", "code",
                         "finish_reason", "stop_reason", "prompt_tokens", "input_tokens", "x"]) | st.text(max_size=6),
        inner, max_size=5),
    max_leaves=20)


def ask(provider):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=32))


@pytest.fixture(scope="module")
def parsers():
    """One provider per wire format, never sending: the parsers are called directly."""
    made = {wire: make_provider(PRESET_OF[wire], "m", key="k", base_url="http://127.0.0.1:9") for wire in WIRES}
    yield made
    for provider in made.values():
        provider.close()


def _paths(data, prefix=()):
    """Every path into a JSON value (lists by index, objects by key)."""
    yield prefix
    if isinstance(data, dict):
        for key, value in data.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _paths(value, (*prefix, index))


def _outcome(read):
    """What a parser did with a shape: an answer of our types, or a ProviderError; nothing else escapes."""
    try:
        response = read()
    except ProviderError as error:
        return error
    assert isinstance(response, ChatResponse)
    assert response_problem(response) is None
    json.dumps([response.message.to_dict(), response.usage.to_dict(), response.provider], allow_nan=False)
    return response


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wire=st.sampled_from(WIRES), data=json_values)
def test_any_json_as_a_whole_answer_is_read_or_classified(parsers, wire, data):
    _outcome(lambda: parsers[wire].read_whole(data, {}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wire=st.sampled_from(WIRES), events=st.lists(json_values, max_size=5))
def test_any_json_events_as_a_stream_are_read_or_classified(parsers, wire, events):
    _outcome(lambda: parsers[wire].read_stream(stream_lines(wire, events), {}))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wire=st.sampled_from(WIRES), pick=st.integers(min_value=0), value=json_values)
def test_a_valid_whole_answer_with_any_part_replaced_is_read_or_classified(parsers, wire, pick, value):
    good = valid_whole(wire)
    paths = list(_paths(good))
    _outcome(lambda: parsers[wire].read_whole(replaced(good, paths[pick % len(paths)], value), {}))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wire=st.sampled_from(WIRES), pick=st.integers(min_value=0), value=json_values)
def test_a_valid_stream_with_any_part_of_an_event_replaced_is_read_or_classified(parsers, wire, pick, value):
    events = [e for e in valid_stream(wire)]
    paths = [(i, p) for i, e in enumerate(events) if not isinstance(e, str) for p in _paths(e)]
    index, path = paths[pick % len(paths)]
    events[index] = replaced(events[index], path, value)
    _outcome(lambda: parsers[wire].read_stream(stream_lines(wire, events), {}))


@pytest.mark.parametrize("wire", WIRES)
def test_the_valid_templates_are_read_whole_and_streamed(parsers, wire):
    for read in (lambda: parsers[wire].read_whole(valid_whole(wire), {}),
                 lambda: parsers[wire].read_stream(stream_lines(wire, valid_stream(wire)), {})):
        response = read()
        assert response.message.content == "The room is 350 m from the venue."
        assert [c.arguments for c in response.message.tool_calls] in ([{"q": "Jo"}], [])


CASES = [(preset, name) for preset in PRESETS for name in odd_wholes(WIRE[preset])]


@pytest.mark.parametrize(("preset", "shape"), CASES, ids=[f"{p}-{n.replace(' ', '_')}" for p, n in CASES])
def test_a_reply_of_a_shape_the_format_does_not_have_is_an_unreadable_answer(preset_provider, preset, shape):
    fake, provider = preset_provider(preset, stream=False, retry=ONE_TRY)
    fake.add(whole_raw(odd_wholes(WIRE[preset])[shape]))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.kind) == ("unreadable_answer", "temporary"), caught.value
    assert [a.code for a in provider.attempts] == ["unreadable_answer"]
    assert provider.usage_total.requests == 1 and provider.usage_total.input_tokens == 0


@pytest.mark.parametrize("preset", PRESETS)
def test_a_streamed_content_of_42_is_an_unreadable_answer(preset_provider, preset):
    wire = WIRE[preset]
    events = valid_stream(wire)
    first = events[0]
    if wire == "openai":
        first["choices"][0]["delta"]["content"] = 42
    elif wire == "anthropic":
        events[2]["delta"]["text"] = 42
    elif wire == "gemini":
        first["candidates"][0]["content"]["parts"][0]["text"] = 42
    else:
        first["message"]["content"] = 42
    fake, provider = preset_provider(preset, stream=True, retry=ONE_TRY)
    fake.add(stream_raw(wire, events))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.code == "unreadable_answer"


@pytest.mark.parametrize("preset", ["openai", "anthropic", "gemini", "ollama"])
def test_an_error_body_of_any_shape_is_classified_by_its_status(preset_provider, preset):
    fake, provider = preset_provider(preset, stream=False, retry=ONE_TRY)
    fake.add(Raw(status=429, headers={"content-type": "application/json"},
                 body=json.dumps({"error": {"message": {"nested": [1]}, "details": "x", "code": "y",
                                            "metadata": {"raw": 5}}}).encode()))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert caught.value.code == "rate_limit"
    assert caught.value.provider_message is None or isinstance(caught.value.provider_message, str)


def test_whole_float_token_counts_are_read_as_integers(parsers):
    data = valid_whole("openai")
    data["usage"]["prompt_tokens"] = 21.0
    assert parsers["openai"].read_whole(data, {}).usage == Usage(21, 7, 0, 0)


def test_the_transport_seam_gives_the_same_classification(parsers):
    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, headers={"content-type": "application/json"}, content=b'{"choices":["surprise"]}'))
    provider = make_provider("openai", "m", key="k", transport=transport, stream=False, retry=ONE_TRY)
    try:
        with pytest.raises(ProviderError) as caught:
            ask(provider)
    finally:
        provider.close()
    assert caught.value.code == "unreadable_answer"
