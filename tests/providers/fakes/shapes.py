"""Answers of every wire format in shapes the format does not have, and answers far too long (issue 23).

``valid_whole`` / ``valid_stream`` are one ordinary answer per wire format (the property tests
mutate them); ``odd_wholes`` are the shapes the issue found crashing the parsers; ``big_stream``
and ``big_whole`` are answers of many megabytes, made piece by piece so the fake's own memory
stays small.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.providers.fakes.base import Raw

#: wire format of each preset the fakes serve
WIRE = {"openai": "openai", "openrouter": "openai", "openai-compatible": "openai", "anthropic": "anthropic",
        "gemini": "gemini", "ollama": "ollama"}
WIRES = ("openai", "anthropic", "gemini", "ollama")


def valid_whole(wire: str, text: str = "The room is 350 m from the venue.") -> dict[str, Any]:
    if wire == "openai":
        return {"id": "c1", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": text,
                "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "search_contacts",
                                                                                 "arguments": "{\"q\": \"Jo\"}"}}]},
                "finish_reason": "stop"}], "usage": {"prompt_tokens": 21, "completion_tokens": 7,
                                                     "prompt_tokens_details": {"cached_tokens": 0},
                                                     "completion_tokens_details": {"reasoning_tokens": 0}}}
    if wire == "anthropic":
        return {"id": "msg_1", "type": "message", "model": "m", "role": "assistant",
                "content": [{"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "text", "text": text},
                            {"type": "tool_use", "id": "toolu_1", "name": "search_contacts", "input": {"q": "Jo"}}],
                "stop_reason": "end_turn", "usage": {"input_tokens": 21, "output_tokens": 7,
                                                     "cache_read_input_tokens": 0}}
    if wire == "gemini":
        return {"candidates": [{"content": {"role": "model", "parts": [{"text": text},
                {"functionCall": {"name": "search_contacts", "args": {"q": "Jo"}}}]}, "finishReason": "STOP"}],
                "usageMetadata": {"promptTokenCount": 21, "candidatesTokenCount": 7}, "modelVersion": "m"}
    return {"model": "m", "message": {"role": "assistant", "content": text, "thinking": "hm",
                                      "tool_calls": [{"function": {"name": "search_contacts", "arguments": {"q": "Jo"}}}]},
            "done": True, "done_reason": "stop", "prompt_eval_count": 21, "eval_count": 7}


def valid_stream(wire: str, text: str = "The room is 350 m from the venue.") -> list[Any]:
    """The events (JSON objects, or the string ``[DONE]``) of one streamed answer."""
    if wire == "openai":
        return [{"id": "c1", "choices": [{"index": 0, "delta": {"role": "assistant", "content": text[:9]}}]},
                {"id": "c1", "choices": [{"index": 0, "delta": {"content": text[9:]}}]},
                {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "id": "call_1", "function": {"name": "search_contacts", "arguments": "{\"q\""}}]}}]},
                {"id": "c1", "choices": [{"index": 0, "delta": {"tool_calls": [
                    {"index": 0, "function": {"arguments": ": \"Jo\"}"}}]}}]},
                {"id": "c1", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                {"id": "c1", "choices": [], "usage": {"prompt_tokens": 21, "completion_tokens": 7}}, "[DONE]"]
    if wire == "anthropic":
        return [{"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {"input_tokens": 21}}},
                {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
                {"type": "content_block_start", "index": 1,
                 "content_block": {"type": "tool_use", "id": "toolu_1", "name": "search_contacts", "input": {}}},
                {"type": "content_block_delta", "index": 1,
                 "delta": {"type": "input_json_delta", "partial_json": "{\"q\": \"Jo\"}"}},
                {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}},
                {"type": "message_stop"}]
    if wire == "gemini":
        return [{"candidates": [{"content": {"role": "model", "parts": [{"text": text[:9]}]}}]},
                {"candidates": [{"content": {"role": "model", "parts": [{"text": text[9:]}]}, "finishReason": "STOP"}],
                 "usageMetadata": {"promptTokenCount": 21, "candidatesTokenCount": 7}}]
    return [{"model": "m", "message": {"role": "assistant", "content": text[:9]}, "done": False},
            {"model": "m", "message": {"role": "assistant", "content": text[9:]}, "done": False},
            {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
             "prompt_eval_count": 21, "eval_count": 7}]


def stream_lines(wire: str, events: list[Any]) -> list[str]:
    """The text lines of a stream of ``events`` on ``wire`` (SSE, or NDJSON for Ollama)."""
    lines: list[str] = []
    for event in events:
        text = event if isinstance(event, str) else json.dumps(event)
        if wire == "ollama":
            lines.append(text)
        else:
            lines += [f"data: {text}", ""]
    return lines


def stream_raw(wire: str, events: list[Any]) -> Raw:
    content_type = "application/x-ndjson" if wire == "ollama" else "text/event-stream"
    body = "".join(line + "\n" for line in stream_lines(wire, events)).encode()
    return Raw(status=200, headers={"content-type": content_type}, chunks=[body])


def whole_raw(data: Any) -> Raw:
    return Raw(status=200, headers={"content-type": "application/json"}, body=json.dumps(data).encode())


def odd_wholes(wire: str) -> dict[str, Any]:
    """The reply shapes the issue found crashing, in each wire format's own terms."""
    good = valid_whole(wire)
    if wire == "openai":
        return {"choices are strings": {"choices": ["surprise"]},
                "content is a number": replaced(good, ["choices", 0, "message", "content"], 42),
                "prompt tokens are words": replaced(good, ["usage", "prompt_tokens"], "lots"),
                "message is a list": replaced(good, ["choices", 0, "message"], ["a"]),
                "tool call is a string": replaced(good, ["choices", 0, "message", "tool_calls"], ["call"])}
    if wire == "anthropic":
        return {"content blocks are strings": replaced(good, ["content"], ["surprise"]),
                "text is a number": replaced(good, ["content", 1, "text"], 42),
                "input tokens are words": replaced(good, ["usage", "input_tokens"], "lots"),
                "usage is a list": replaced(good, ["usage"], [1, 2])}
    if wire == "gemini":
        return {"candidates are strings": {"candidates": ["surprise"]},
                "text is a number": replaced(good, ["candidates", 0, "content", "parts", 0, "text"], 42),
                "prompt tokens are words": replaced(good, ["usageMetadata", "promptTokenCount"], "lots"),
                "error is a string": {"error": "boom"}}
    return {"message is a string": replaced(good, ["message"], "surprise"),
            "content is a number": replaced(good, ["message", "content"], 42),
            "prompt tokens are words": replaced(good, ["prompt_eval_count"], "lots"),
            "tool calls are numbers": replaced(good, ["message", "tool_calls"], [1])}


def replaced(data: Any, path: Any, value: Any) -> Any:
    """A copy of a JSON value with the value at ``path`` (keys and list indexes) replaced; the
    empty path replaces the whole. Shared by the shape tests and the fault-matrix benchmark."""
    if not path:
        return value
    copy = json.loads(json.dumps(data))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copy


# ---------------------------------------------------------------------------------------------
# Answers far beyond any output limit


def _big_events(wire: str, chars: int, piece: int) -> Iterator[Any]:
    pieces = range(0, chars, piece)
    if wire == "openai":
        for start in pieces:
            yield {"choices": [{"index": 0, "delta": {"content": "x" * min(piece, chars - start)}}]}
        yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
        yield "[DONE]"
    elif wire == "anthropic":
        yield {"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {"input_tokens": 21}}}
        yield {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        for start in pieces:
            yield {"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "x" * min(piece, chars - start)}}
        yield {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 7}}
        yield {"type": "message_stop"}
    elif wire == "gemini":
        for start in pieces:
            yield {"candidates": [{"content": {"role": "model", "parts": [{"text": "x" * min(piece, chars - start)}]}}]}
        yield {"candidates": [{"content": {"role": "model", "parts": []}, "finishReason": "STOP"}]}
    else:
        for start in pieces:
            yield {"model": "m", "message": {"role": "assistant", "content": "x" * min(piece, chars - start)},
                   "done": False}
        yield {"model": "m", "message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop"}


def big_stream(wire: str, chars: int, piece: int = 65_536) -> Raw:
    """A streamed answer of ``chars`` characters, sent in events of ``piece`` characters."""
    def chunks() -> Iterator[bytes]:
        for event in _big_events(wire, chars, piece):
            yield ("".join(line + "\n" for line in stream_lines(wire, [event]))).encode()

    content_type = "application/x-ndjson" if wire == "ollama" else "text/event-stream"
    return Raw(status=200, headers={"content-type": content_type}, chunks=chunks())  # type: ignore[arg-type]


def big_whole(wire: str, chars: int) -> Raw:
    return whole_raw(valid_whole(wire, "x" * chars))
