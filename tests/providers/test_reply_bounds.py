"""An answer nested too deep is unreadable and one with too many tool calls oversized, never raised (issue 31 H/I).

A whole answer nested 2,000 deep raised ``RecursionError`` from the JSON decoder; 5,000 tool
calls in one 350 KB reply took 13 s a cell and a 24.8 MB record. Both go to fake servers on
127.0.0.1 in the real wire format, through every wire format's provider.
"""

from __future__ import annotations

import json

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
from pytest_assistant_eval.providers.presets import make_provider
from pytest_assistant_eval.providers.reply_bounds import MAX_DEPTH, MAX_TOOL_CALLS, TooDeep, loads
from tests.providers.fakes import Raw
from tests.providers.fakes.openai_fake import OpenAIFake

ONE_TRY = RetryPolicy(max_attempts=1)


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_json_nested_beyond_the_bound_is_a_value_error_never_a_recursion_error():
    for levels in (MAX_DEPTH + 1, 2000, 100_000):
        with pytest.raises(TooDeep):
            loads(_deep(levels))
    assert loads(_deep(MAX_DEPTH)) is not None
    assert loads('{"a": "[[[[[[' + "[" * 500 + '"}') == {"a": "[[[[[[" + "[" * 500}  # brackets in strings


def _ask(raw: Raw, stream: bool = False, max_output_tokens: int = 1024):
    with OpenAIFake() as fake:
        fake.add(raw)
        provider = make_provider("openai", "m", base_url=f"{fake.url}/v1", key="sk-test-key-0000000000000000",
                                 stream=stream, retry=ONE_TRY)
        try:
            return provider.complete(ChatRequest(model="m", messages=[Message(role="user", content="x")], tools=[],
                                                 max_output_tokens=max_output_tokens, stream=stream))
        finally:
            provider.close()


@pytest.mark.parametrize("where", ["content", "arguments"])
def test_a_whole_answer_nested_2000_deep_is_an_unreadable_answer(where):
    deep = _deep(2000)
    if where == "content":
        body = '{"choices": [{"index": 0, "message": {"role": "assistant", "content": ' + deep + \
               '}, "finish_reason": "stop"}], "usage": {"prompt_tokens": 1, "completion_tokens": 1}}'
        with pytest.raises(ProviderError) as caught:
            _ask(Raw(status=200, headers={"content-type": "application/json"}, body=body.encode()))
        assert caught.value.code == "unreadable_answer"
    else:
        call = {"id": "c1", "type": "function", "function": {"name": "search_contacts",
                                                             "arguments": '{"q": ' + deep + "}"}}
        body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "",
                                                                "tool_calls": [call]}, "finish_reason": "tool_calls"}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        response = _ask(Raw(status=200, headers={"content-type": "application/json"}, body=body.encode()))
        assert response.message.tool_calls[0].parse_error  # one unreadable tool call, never a crash


@pytest.mark.parametrize("stream", [False, True])
def test_5000_tool_calls_in_one_reply_are_an_oversized_stop_with_the_calls_dropped(stream):
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "search_contacts", "arguments": "{}"}}
             for i in range(5000)]
    if stream:
        events = [{"id": "x", "choices": [{"index": 0, "delta": {"tool_calls": [{**c, "index": i}]}}]}
                  for i, c in enumerate(calls)]
        events.append({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
        body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        raw = Raw(status=200, headers={"content-type": "text/event-stream"}, chunks=[body.encode()])
    else:
        body = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": "",
                                                                "tool_calls": calls}, "finish_reason": "tool_calls"}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
        raw = Raw(status=200, headers={"content-type": "application/json"}, body=body.encode())
    response = _ask(raw, stream, max_output_tokens=65536)  # far within its output limit: the calls' bound
    assert response.stop_reason == "oversized" and response.message.tool_calls == []
    assert response.provider["oversized"]["tool_calls_dropped"] == 5000
    assert response.provider["oversized"]["max_tool_calls"] == MAX_TOOL_CALLS
