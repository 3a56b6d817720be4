"""The Anthropic Messages wire format (preset ``anthropic``).

System text goes top-level; tool results become ``tool_result`` blocks of one user message;
signed thinking blocks (``thinking``/``redacted_thinking``) are kept verbatim in
``Message.provider_data["anthropic"]`` and sent back first in the assistant turn, as the API
requires. Streams are SSE with named events ending in ``message_stop``; tool arguments come
as ``input_json_delta`` fragments and are parsed only when their block ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx

from pytest_assistant_eval.messages import (
    ChatRequest,
    ChatResponse,
    Message,
    StopReason,
    ToolCall,
    Usage,
)
from pytest_assistant_eval.providers.errors import ProviderError, make_error
from pytest_assistant_eval.redact import provider_text
from pytest_assistant_eval.providers.http import (
    HTTPProvider,
    Wire,
    event_json,
    iter_sse,
    join_reasoning,
    json_or_none,
    parse_arguments,
    rate_headers,
    retry_after_from_headers,
    retry_after_from_message,
    split_reasoning,
    status_code_for,
)

ANTHROPIC_VERSION = "2023-06-01"

_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_calls",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
    "model_context_window_exceeded": "context_too_long",
    "pause_turn": "other",
}

_TOOL_CHOICE = {"auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [dict(b) for b in (message.provider_data.get("anthropic") or {}).get("thinking", [])]
    if message.content:
        blocks.append({"type": "text", "text": message.content})
    for call in message.tool_calls:
        blocks.append({"type": "tool_use", "id": call.id, "name": call.name,
                       "input": call.arguments if call.parse_error is None else {}})
    return blocks


def messages_to_anthropic(messages: list[Message]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)``: tool results grouped into the user turn that follows the call."""
    system: list[str] = []
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "system":
            system.append(message.content)
            continue
        if message.role == "assistant":
            out.append({"role": "assistant", "content": _assistant_blocks(message)})
            continue
        if message.role == "tool":
            block = {"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}
        else:
            block = {"type": "text", "text": message.content}
        # Consecutive user-side messages (tool results, then perhaps text) share one user turn.
        if out and out[-1]["role"] == "user" and isinstance(out[-1]["content"], list) and (
            message.role == "tool" or any(b.get("type") == "tool_result" for b in out[-1]["content"])
        ):
            out[-1]["content"].append(block)
        elif message.role == "tool":
            out.append({"role": "user", "content": [block]})
        else:
            out.append({"role": "user", "content": message.content})
    return ("\n\n".join(system) if system else None), out


def usage_from_anthropic(data: dict[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    cached = data.get("cache_read_input_tokens")
    written = data.get("cache_creation_input_tokens")
    base = data.get("input_tokens")
    total_in = None if base is None else base + (cached or 0) + (written or 0)
    return Usage(input_tokens=total_in, output_tokens=data.get("output_tokens"), cached_input_tokens=cached,
                 cache_write_tokens=written)


def _response_from_blocks(blocks: list[dict[str, Any]], stop: str | None, usage: Usage,
                          info: dict[str, Any]) -> ChatResponse:
    texts: list[str] = []
    reasoning: list[str] = []
    thinking: list[dict[str, Any]] = []
    calls: list[ToolCall] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(block.get("text") or "")
        elif kind == "thinking":
            reasoning.append(block.get("thinking") or "")
            thinking.append({"type": "thinking", "thinking": block.get("thinking") or "",
                             "signature": block.get("signature") or ""})
        elif kind == "redacted_thinking":
            thinking.append({"type": "redacted_thinking", "data": block.get("data") or ""})
        elif kind == "tool_use":
            raw = block.get("input")
            if "_partial" in block:
                raw = block["_partial"]
            arguments, raw_arguments, error = parse_arguments(raw)
            calls.append(ToolCall(id=block.get("id") or f"toolu_{len(calls)}", name=block.get("name") or "",
                                  arguments=arguments, raw_arguments=raw_arguments, parse_error=error))
    text, think = split_reasoning("".join(texts))
    stop_reason: StopReason = _STOP.get(stop or "", "other")
    if calls and stop_reason in ("end_turn", "other"):
        stop_reason = "tool_calls"
    if stop is not None:
        info["stop_reason"] = stop
    provider_data = {"anthropic": {"thinking": thinking}} if thinking else {}
    message = Message(role="assistant", content=text, tool_calls=calls,
                      reasoning=join_reasoning("\n\n".join(r for r in reasoning if r) or None, think),
                      provider_data=provider_data)
    return ChatResponse(message=message, stop_reason=stop_reason, usage=usage, provider=info)


class AnthropicProvider(HTTPProvider):
    preset = "anthropic"
    wire_format = "anthropic"

    def _wire(self, request: ChatRequest, stream: bool) -> Wire:
        system, messages = messages_to_anthropic(request.messages)
        body: dict[str, Any] = {"model": request.model, "max_tokens": request.max_output_tokens}
        if system is not None:
            body["system"] = system
        body["messages"] = messages
        if request.tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters}
                             for t in request.tools]
            body["tool_choice"] = _TOOL_CHOICE[request.tool_choice]
        for name in ("temperature", "top_p"):  # providers/generation.py
            if name in self.options:
                body[name] = self.options[name]
        if "thinking" in self.options:
            body["thinking"] = self.options["thinking"]
        body["stream"] = stream
        headers = {"content-type": "application/json", "anthropic-version": ANTHROPIC_VERSION,
                   "accept": "text/event-stream" if stream else "application/json"}
        if self._key:
            headers["x-api-key"] = self._key.reveal()
        return Wire(url=f"{self.base_url}/v1/messages", headers=headers, body=body, stream=stream)

    def classify(self, status: int, body: bytes, headers: httpx.Headers | dict[str, str]) -> ProviderError:
        return classify_anthropic(status, body, headers, self.preset)

    def _parse_whole(self, data: Any, headers: httpx.Headers) -> ChatResponse:
        if not isinstance(data, dict) or data.get("type") == "error":
            raise classify_anthropic(200, data if isinstance(data, dict) else None, headers, self.preset)
        info = {k: data[k] for k in ("id", "model") if data.get(k) is not None}
        return _response_from_blocks(data.get("content") or [], data.get("stop_reason"),
                                     usage_from_anthropic(data.get("usage")), info)

    def _closing_lines(self) -> list[str]:
        return ["", 'data: {"type":"message_delta","delta":{"stop_reason":"max_tokens"}}', "",
                'data: {"type":"message_stop"}', ""]

    def _parse_stream(self, lines: Iterator[str], headers: httpx.Headers) -> ChatResponse:
        blocks: dict[int, dict[str, Any]] = {}
        usage_data: dict[str, Any] = {}
        info: dict[str, Any] = {}
        stop: str | None = None
        finished = False
        for event in iter_sse(lines):
            data = event_json(event.data)
            kind = data.get("type") or event.event
            if kind == "error":
                raise classify_anthropic(200, data, {}, self.preset)
            if kind == "message_start":
                message = data.get("message") or {}
                info = {k: message[k] for k in ("id", "model") if message.get(k) is not None}
                usage_data.update(message.get("usage") or {})
            elif kind == "content_block_start":
                block = dict(data.get("content_block") or {})
                if block.get("type") == "tool_use":
                    block["_partial"] = ""
                blocks[data.get("index", len(blocks))] = block
            elif kind == "content_block_delta":
                block = blocks.setdefault(data.get("index", 0), {"type": "text", "text": ""})
                delta = data.get("delta") or {}
                dtype = delta.get("type")
                if dtype == "text_delta":
                    block["text"] = (block.get("text") or "") + (delta.get("text") or "")
                elif dtype == "input_json_delta":
                    block["_partial"] = (block.get("_partial") or "") + (delta.get("partial_json") or "")
                elif dtype == "thinking_delta":
                    block["thinking"] = (block.get("thinking") or "") + (delta.get("thinking") or "")
                elif dtype == "signature_delta":
                    block["signature"] = (block.get("signature") or "") + (delta.get("signature") or "")
            elif kind == "message_delta":
                delta = data.get("delta") or {}
                if delta.get("stop_reason"):
                    stop = delta["stop_reason"]
                usage_data.update({k: v for k, v in (data.get("usage") or {}).items() if v is not None})
            elif kind == "message_stop":
                finished = True
                break
        if not finished:
            raise make_error("stream_cut", message="the answer stream ended before message_stop")
        ordered = [blocks[i] for i in sorted(blocks)]
        for block in ordered:
            if block.get("type") == "tool_use" and block.get("_partial") == "":
                block["_partial"] = json.dumps(block.get("input") or {})
        return _response_from_blocks(ordered, stop, usage_from_anthropic(usage_data), info)


def classify_anthropic(
    status: int,
    body: bytes | dict[str, Any] | None,
    headers: httpx.Headers | dict[str, str] | None,
    preset: str = "anthropic",
) -> ProviderError:
    data = body if isinstance(body, dict) else json_or_none(body)
    headers = headers or {}
    error = data.get("error") if isinstance(data, dict) and isinstance(data.get("error"), dict) else {}
    etype = error.get("type")
    message = error.get("message")
    if message is None and isinstance(body, (bytes, bytearray)) and body:
        message = provider_text(body)  # whole: redacted, then cut to 300, by the provider (never cut first)
    details = error.get("details") if isinstance(error.get("details"), dict) else {}
    lowered = f"{etype} {message} {details.get('error_code', '')}".lower()
    if etype == "overloaded_error" or status == 529:
        code = "overloaded"
    elif "spend_limit" in lowered or etype == "billing_error" or "credit balance" in lowered:
        code = "credit"
    elif etype == "rate_limit_error" or status == 429:
        code = "rate_limit"
    elif "prompt is too long" in lowered or "context window" in lowered or status == 413:
        code = "context_too_long"
    elif etype == "authentication_error" or status == 401:
        code = "key"
    elif etype == "permission_error" or status == 403:
        code = "permission"
    elif etype == "not_found_error" or status == 404:
        code = "model"
    elif etype == "timeout_error":
        code = "timeout"
    elif etype == "invalid_request_error" and ("tool_use" in lowered or "tool_result" in lowered
                                               or "messages" in lowered or "thinking" in lowered):
        code = "history"
    elif etype == "invalid_request_error" and ("tools" in lowered or "input_schema" in lowered):
        code = "tools"
    elif etype == "api_error" or (status >= 500):
        code = "busy"
    elif status == 200:
        code = "busy"
    else:
        code = status_code_for(status)
    retry_after = retry_after_from_headers(headers)
    if retry_after is None and isinstance(message, str):
        retry_after = retry_after_from_message(message)
    return make_error(code, status=status, provider_code=etype, provider_message=message,
                      retry_after=retry_after, headers=rate_headers(headers))
