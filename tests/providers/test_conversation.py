"""Every preset, streamed and whole, turns the same scripted conversation into the same answers."""

from __future__ import annotations

import json

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message, ToolDefinition
from tests.providers.fakes.presets import PLANTED_KEY, PRESET_FAKES
from tests.providers.fakes import Answer, Call

PRESETS = sorted(PRESET_FAKES)

SEARCH = ToolDefinition(
    name="search_contacts",
    description="Find contacts by name",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
)


def neutral(response):
    """What must not depend on the preset or the mode."""
    return {
        "stop_reason": response.stop_reason,
        "content": response.message.content,
        "calls": [(c.name, c.arguments, c.parse_error) for c in response.message.tool_calls],
        "input_tokens": response.usage.input_tokens,
        "output_tokens": response.usage.output_tokens,
    }


def run_conversation(provider, model):
    messages = [Message(role="system", content="You help with contacts."),
                Message(role="user", content="What is Ana's phone number?")]
    first = provider.complete(ChatRequest(model=model, messages=messages, tools=[SEARCH], max_output_tokens=256))
    call = first.message.tool_calls[0]
    messages += [first.message,
                 Message(role="tool", tool_call_id=call.id, name=call.name, content=json.dumps({"phone": "555-0101"}))]
    second = provider.complete(ChatRequest(model=model, messages=messages, tools=[SEARCH], max_output_tokens=256))
    return first, second


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("preset", PRESETS)
def test_a_tool_call_then_a_final_answer_gives_the_same_neutral_responses(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Answer(calls=[Call("search_contacts", {"query": "Ana"})], usage=(30, 9)),
             Answer(text="Ana's phone number is 555-0101.", usage=(52, 11)))
    first, second = run_conversation(provider, provider.model)
    assert [neutral(first), neutral(second)] == [
        {"stop_reason": "tool_calls", "content": "", "calls": [("search_contacts", {"query": "Ana"}, None)],
         "input_tokens": 30, "output_tokens": 9},
        {"stop_reason": "end_turn", "content": "Ana's phone number is 555-0101.", "calls": [],
         "input_tokens": 52, "output_tokens": 11},
    ]
    assert len(fake.requests) == 2
    second_body = fake.requests[1].body.decode()
    assert "555-0101" in second_body  # the tool result went back
    assert first.message.tool_calls[0].id in second_body or preset in ("gemini", "ollama")
    assert provider.usage_total.requests == 2
    assert provider.usage_total.label == f"{preset} (calibration)"


@pytest.mark.parametrize("preset", PRESETS)
def test_the_request_bytes_are_deterministic_and_exposed(preset_provider, preset):
    fake, provider = preset_provider(preset)
    fake.add(Answer(text="one"), Answer(text="two"))
    request = ChatRequest(model=provider.model, messages=[Message(role="user", content="Grüße")], tools=[SEARCH],
                          max_output_tokens=64)
    provider.complete(request)
    first_body, first_sha = provider.last_request_body, provider.last_request_sha256
    provider.complete(ChatRequest.__new__(ChatRequest).__class__(**{**request.__dict__}))
    assert provider.last_request_body == first_body == fake.requests[0].body == fake.requests[1].body
    assert provider.build_body(request) == first_body
    from pytest_assistant_eval.providers.http import request_sha256

    assert first_sha == request_sha256(first_body)
    assert "Grüße".encode() in first_body  # UTF-8, not escaped
    assert PLANTED_KEY.encode() not in first_body


@pytest.mark.parametrize("preset", PRESETS)
def test_no_key_reaches_the_recorded_requests_but_the_server_got_it(preset_provider, preset):
    fake, provider = preset_provider(preset)
    fake.add(Answer(text="hi"))
    provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")], tools=[],
                                  max_output_tokens=16))
    if preset != "ollama":
        assert fake.keys_seen == [PLANTED_KEY]
    for record in fake.requests:
        assert PLANTED_KEY not in json.dumps(record.headers) + record.path + record.body.decode()
