"""A level's tools are encoded once (issue 32): the hashed text and the bytes sent are what encoding
every request whole gives, and new definitions are never answered from an old set's text."""

from __future__ import annotations

import hashlib
import json

import pytest
from hypothesis import given, strategies as st

from pytest_assistant_eval.conversation.loop import request_body_sha256
from pytest_assistant_eval.messages import ChatRequest, Message, ToolCall, ToolDefinition, canonical_text
from pytest_assistant_eval.providers import http
from pytest_assistant_eval.providers.openai_compat import OpenAICompatProvider, tools_to_openai

_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
                     max_leaves=8)
_TOOLS = st.lists(st.builds(ToolDefinition, _TEXT, _TEXT, st.dictionaries(_TEXT, _JSON, max_size=3)), max_size=4)
_MESSAGES = st.lists(st.builds(Message, st.sampled_from(["system", "user", "assistant", "tool"]), _TEXT,
                               st.lists(st.builds(ToolCall, _TEXT, _TEXT, st.dictionaries(_TEXT, _JSON, max_size=2)),
                                        max_size=2)), max_size=4)


def _request(messages: list[Message], tools: list[ToolDefinition]) -> ChatRequest:
    return ChatRequest(model="m", messages=messages, tools=tools, max_output_tokens=64)


@given(_MESSAGES, _TOOLS)
def test_the_hashed_text_is_the_whole_requests_sorted_json(messages, tools):
    request = _request(messages, tools)
    plain = json.dumps(request.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    assert canonical_text(request) == plain
    assert canonical_text(request) == plain  # the second time from the kept text
    assert request_body_sha256(request) == hashlib.sha256(plain.encode("utf-8")).hexdigest()


@given(_MESSAGES, _TOOLS, st.booleans())
def test_the_bytes_sent_are_the_whole_bodys_encoding(messages, tools, stream):
    provider = OpenAICompatProvider(model="m", base_url="http://127.0.0.1:9", key=None)
    body = provider._wire(_request(messages, tools), stream).body
    plain = json.dumps({k: list(v) if isinstance(v, list) else v for k, v in body.items()}, ensure_ascii=False,
                       separators=(",", ":"), allow_nan=False).encode("utf-8")
    assert http.encode_body(body) == plain


def test_new_definitions_get_new_text_and_equal_lists_of_other_definitions_never_share_one():
    first = [ToolDefinition("a", "the first", {"type": "object"})]
    second = [ToolDefinition("a", "the second", {"type": "object"})]
    one, two = _request([], first), _request([], second)
    assert canonical_text(one) != canonical_text(two)
    assert tools_to_openai(one) == [{"type": "function", "function": {"name": "a", "description": "the first",
                                                                       "parameters": {"type": "object"}}}]
    assert '"the second"' in tools_to_openai(two).text and '"the first"' not in tools_to_openai(two).text


def test_a_value_that_cannot_be_sent_is_refused_on_the_fast_path_too():
    body = {"model": "m", "tools": http.EncodedList.of([{"x": 1}]), "temperature": float("nan")}
    with pytest.raises(ValueError):
        http.encode_body(body)


@given(_MESSAGES, _TOOLS)
def test_the_size_estimate_sums_each_definition_as_before(messages, tools):
    from pytest_assistant_eval.messages import estimate_tokens

    chars = sum(len(m.content) + sum(len(json.dumps(c.arguments)) + len(c.name) for c in m.tool_calls) for m in messages)
    chars += sum(len(json.dumps(t.to_dict())) for t in tools)
    expected = chars // 4 + 4 * len(messages)
    assert estimate_tokens(messages, tuple(tools)) == expected == estimate_tokens(messages, tuple(tools))
    other = [ToolDefinition(t.name, t.description + "more", t.parameters) for t in tools]
    assert estimate_tokens(messages, tuple(other)) == expected + (4 * len(other)) // 4 or not other
