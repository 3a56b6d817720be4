"""The OpenAI Chat Completions wire format (presets ``openai`` and ``openai-compatible``).

Converts the neutral conversation to ``/chat/completions`` bodies and back, streamed (SSE,
``data: [DONE]``) or whole. Tool-call arguments arrive as JSON text: unreadable ones become
a ``ToolCall`` with ``parse_error`` and the text as received, never an exception. Reasoning
(``reasoning``/``reasoning_content`` fields, ``<think>`` blocks) is kept out of ``content``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx

from pytest_assistant_eval.messages import (
    ChatRequest,
    ChatResponse,
    Message,
    StopReason,
    ToolCall,
    ToolDefinition,
    Usage,
)
from pytest_assistant_eval.providers.errors import TOOL_PARSE_MARKERS, ProviderError, make_error
from pytest_assistant_eval.redact import provider_text
from pytest_assistant_eval.providers.http import (
    HTTPProvider,
    Wire,
    dumps_arguments,
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
    wire_tools,
)

OPENAI_BASE_URL = "https://api.openai.com/v1"

_FINISH: dict[str, StopReason] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "content_filter": "refusal",
}


def message_to_openai(message: Message) -> dict[str, Any]:
    if message.role == "assistant":
        out: dict[str, Any] = {"role": "assistant", "content": message.content or None}
        if message.tool_calls:
            out["tool_calls"] = [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {
                        "name": call.name,
                        "arguments": call.raw_arguments
                        if call.parse_error is not None and call.raw_arguments is not None
                        else dumps_arguments(call.arguments),
                    },
                }
                for call in message.tool_calls
            ]
        return out
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id or "", "content": message.content}
    return {"role": message.role, "content": message.content}


def tools_to_openai(request: ChatRequest) -> list[dict[str, Any]]:
    """The request's tools as OpenAI's format gives them, built and encoded once per level (``wire_tools``)."""
    return wire_tools("openai", request.tools, _tool_to_openai)


def _tool_to_openai(t: ToolDefinition) -> dict[str, Any]:
    return {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}


def usage_from_openai(data: dict[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    prompt_details = data.get("prompt_tokens_details") or {}
    completion_details = data.get("completion_tokens_details") or {}
    return Usage(
        input_tokens=data.get("prompt_tokens"),
        output_tokens=data.get("completion_tokens"),
        reasoning_tokens=completion_details.get("reasoning_tokens"),
        cached_input_tokens=prompt_details.get("cached_tokens"),
        cache_write_tokens=prompt_details.get("cache_write_tokens"),  # OpenRouter's, for a model that caches by writes
    )


def _tool_call(index: int, call_id: str | None, name: str | None, raw: Any) -> ToolCall:
    arguments, raw_arguments, error = parse_arguments(raw)
    return ToolCall(
        id=call_id or f"call_{index}",
        name=name or "",
        arguments=arguments,
        raw_arguments=raw_arguments,
        parse_error=error if name else (error or "the tool call has no name"),
    )


def _finish(
    content: str,
    reasoning_field: str | None,
    refusal: str | None,
    calls: list[ToolCall],
    finish_reason: str | None,
    usage: Usage,
    provider: dict[str, Any],
) -> ChatResponse:
    text, think = split_reasoning(content or "")
    stop: StopReason
    if refusal:
        stop = "refusal"
        text = text or refusal
    elif calls:
        stop = "tool_calls" if finish_reason in (None, "stop", "tool_calls", "function_call") else _FINISH.get(
            finish_reason or "", "other"
        )
    else:
        stop = _FINISH.get(finish_reason or "", "other")
    if finish_reason is not None:
        provider["finish_reason"] = finish_reason
    message = Message(role="assistant", content=text, tool_calls=calls, reasoning=join_reasoning(reasoning_field, think))
    return ChatResponse(message=message, stop_reason=stop, usage=usage, provider=provider)


def _in_band_error(error: Any, preset: str) -> ProviderError:
    """An error inside a 200 answer (a stream event or ``finish_reason: error``)."""
    if not isinstance(error, dict):
        error = {"message": str(error)}
    code = error.get("code")
    status = code if isinstance(code, int) else 200
    return classify_openai(status, {"error": error}, {}, preset)


class OpenAICompatProvider(HTTPProvider):
    """OpenAI Chat Completions over httpx; also any server speaking the same dialect."""

    preset = "openai"
    wire_format = "openai"
    max_tokens_field = "max_completion_tokens"
    stream_usage_option = True

    def __init__(self, model: str, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        if self.preset == "openai-compatible":
            # Servers speaking the dialect (vLLM, llama.cpp, Ollama's /v1) read max_tokens, not its successor.
            self.max_tokens_field = "max_tokens"
        self.max_tokens_field = self.options.get("max_tokens_field", self.max_tokens_field)

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "application/json"}
        if self._key:
            headers["authorization"] = f"Bearer {self._key.reveal()}"
        return headers

    def _body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        body: dict[str, Any] = {"model": request.model, "messages": [message_to_openai(m) for m in request.messages]}
        if request.tools:
            body["tools"] = tools_to_openai(request)
            body["tool_choice"] = request.tool_choice
        body[self.max_tokens_field] = request.max_output_tokens
        for name in ("temperature", "top_p", "seed", "reasoning_effort", "reasoning"):  # providers/generation.py
            if name in self.options:
                body[name] = self.options[name]
        body["stream"] = stream
        if stream and self.stream_usage_option:
            body["stream_options"] = {"include_usage": True}
        return body

    def _wire(self, request: ChatRequest, stream: bool) -> Wire:
        return Wire(
            url=f"{self.base_url}/chat/completions",
            headers=self._headers() | ({"accept": "text/event-stream"} if stream else {}),
            body=self._body(request, stream),
            stream=stream,
        )

    def classify(self, status: int, body: bytes, headers: httpx.Headers | dict[str, str]) -> ProviderError:
        return classify_openai(status, body, headers, self.preset)

    def _provider_info(self, data: dict[str, Any]) -> dict[str, Any]:
        info: dict[str, Any] = {}
        for key in ("id", "model", "provider", "system_fingerprint"):
            if data.get(key) is not None:
                info[key] = data[key]
        return info

    def _parse_whole(self, data: Any, headers: httpx.Headers) -> ChatResponse:
        if not isinstance(data, dict):
            raise make_error("unreadable_answer", message="the service's answer is not a JSON object")
        if "error" in data and not data.get("choices"):
            raise _in_band_error(data["error"], self.preset)
        choices = data.get("choices") or []
        if not choices:
            raise make_error("unreadable_answer", message="the service's answer has no choices")
        choice = choices[0]
        if choice.get("finish_reason") == "error" or choice.get("error"):
            raise _in_band_error(choice.get("error") or {"message": "the provider failed mid-answer"}, self.preset)
        msg = choice.get("message") or {}
        calls = []
        for index, call in enumerate(msg.get("tool_calls") or []):
            fn = call.get("function") or {}
            calls.append(_tool_call(index, call.get("id"), fn.get("name"), fn.get("arguments")))
        info = self._provider_info(data)
        if choice.get("native_finish_reason") is not None:
            info["native_finish_reason"] = choice["native_finish_reason"]
        return _finish(
            msg.get("content") or "",
            msg.get("reasoning") or msg.get("reasoning_content"),
            msg.get("refusal"),
            calls,
            choice.get("finish_reason"),
            usage_from_openai(data.get("usage")),
            info,
        )

    def _closing_lines(self) -> list[str]:
        return ["", 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}', "", "data: [DONE]", ""]

    def _parse_stream(self, lines: Iterator[str], headers: httpx.Headers) -> ChatResponse:
        content: list[str] = []
        reasoning: list[str] = []
        refusal: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish_reason: str | None = None
        usage = Usage()
        info: dict[str, Any] = {}
        done = False
        for event in iter_sse(lines):
            if event.data.strip() == "[DONE]":
                done = True
                break
            chunk = event_json(event.data)
            if chunk.get("error") is not None and not any(
                (c.get("finish_reason") not in (None, "error")) for c in chunk.get("choices") or []
            ):
                raise _in_band_error(chunk["error"], self.preset)
            if not info:
                info = self._provider_info(chunk)
            if chunk.get("usage"):
                usage = usage_from_openai(chunk["usage"])
            for choice in chunk.get("choices") or []:
                if choice.get("index", 0) != 0:
                    continue
                delta = choice.get("delta") or {}
                if delta.get("content"):
                    content.append(delta["content"])
                piece = delta.get("reasoning") or delta.get("reasoning_content")
                if piece:
                    reasoning.append(piece)
                if delta.get("refusal"):
                    refusal.append(delta["refusal"])
                for frag in delta.get("tool_calls") or []:
                    slot = calls.setdefault(frag.get("index", len(calls)), {"id": None, "name": None, "args": []})
                    if frag.get("id"):
                        slot["id"] = frag["id"]
                    fn = frag.get("function") or {}
                    if fn.get("name"):
                        slot["name"] = fn["name"]
                    if fn.get("arguments"):
                        slot["args"].append(fn["arguments"])
                if choice.get("finish_reason"):
                    finish_reason = choice["finish_reason"]
                    if choice.get("native_finish_reason") is not None:
                        info["native_finish_reason"] = choice["native_finish_reason"]
                    if finish_reason == "error":
                        raise _in_band_error(chunk.get("error") or choice.get("error") or {}, self.preset)
        if not done and finish_reason is None:
            raise make_error("stream_cut", message="the answer stream ended before its last event")
        tool_calls = [
            _tool_call(i, slot["id"], slot["name"], "".join(slot["args"])) for i, slot in sorted(calls.items())
        ]
        return _finish(
            "".join(content),
            "".join(reasoning) or None,
            "".join(refusal) or None,
            tool_calls,
            finish_reason,
            usage,
            info,
        )


# ---------------------------------------------------------------------------------------------
# Errors


_CONTEXT_MARKERS = ("context_length_exceeded", "maximum context length", "context length", "too many tokens",
                    "prompt is too long", "token_limit_exceeded", "max_tokens_exceeded", "string_too_long",
                    "reduce the length")


def classify_openai(
    status: int,
    body: bytes | dict[str, Any] | None,
    headers: httpx.Headers | dict[str, str] | None,
    preset: str = "openai",
) -> ProviderError:
    """Our error for an OpenAI-shaped (or OpenRouter-shaped) error answer."""
    data = body if isinstance(body, dict) else json_or_none(body)
    headers = headers or {}
    error: dict[str, Any] = {}
    if isinstance(data, dict) and isinstance(data.get("error"), dict):
        error = data["error"]
    elif isinstance(data, dict) and isinstance(data.get("error"), str):
        error = {"message": data["error"]}
    text_body = body.decode("utf-8", "replace") if isinstance(body, (bytes, bytearray)) else None
    message = error.get("message") or (provider_text(text_body) if text_body and not data else None)
    metadata = error.get("metadata") if isinstance(error.get("metadata"), dict) else {}
    raw_upstream = metadata.get("raw") if isinstance(metadata.get("raw"), str) else None
    if raw_upstream:
        message = f"{message}: {raw_upstream}" if message else raw_upstream
    provider_code = error.get("code")
    error_type = metadata.get("error_type") or error.get("error_type") or error.get("type")
    availability = error.get("availability") if isinstance(error.get("availability"), dict) else {}
    if availability.get("code"):
        provider_code = availability["code"]
    if isinstance(provider_code, int):
        provider_code = str(error_type or provider_code)
    elif provider_code is None and error_type:
        provider_code = str(error_type)
    lowered = " ".join(str(x) for x in (message, provider_code, error_type, raw_upstream) if x).lower()
    retry_after = retry_after_from_headers(headers)
    if retry_after is None and availability.get("retry_after") is not None:
        try:
            retry_after = float(availability["retry_after"])
        except (TypeError, ValueError):
            retry_after = None
    if retry_after is None:
        retry_after = retry_after_from_message(message)
    quota: dict[str, Any] | None = None
    limit_headers = metadata.get("headers") if isinstance(metadata.get("headers"), dict) else None
    if limit_headers:
        quota = rate_headers(limit_headers)  # an echo of the request's headers holds its key: limits only
    if metadata.get("limit_source"):
        quota = (quota or {}) | {"limit_source": metadata["limit_source"]}

    code: str
    if any(marker in lowered for marker in TOOL_PARSE_MARKERS):
        code = "tool_call_unreadable"  # the server (e.g. Ollama's /v1) could not parse the model's tool call
    elif "insufficient_quota" in lowered or "credit_balance" in lowered or status == 402 or "payment_required" in lowered:
        code = "credit"
    elif "free-models-per-day" in lowered or "per-day" in lowered or "openrouter_free_tier_daily" in lowered or (
        status == 429 and _daily_from_headers(limit_headers or rate_headers(headers))
    ):
        code = "daily_quota"
    elif any(marker in lowered for marker in _CONTEXT_MARKERS) or status == 413:
        code = "context_too_long"
    elif status == 429 and "request too large" in lowered:
        code = "context_too_long"
    elif status == 429 or "rate_limit" in lowered or "rate limit" in lowered:
        code = "rate_limit"
    elif "invalid_prompt" in lowered or "content_policy" in lowered or "refusal" in lowered or (
        status == 403 and ("moderation" in lowered or "flagged" in lowered or metadata.get("reasons"))
    ):
        code = "refusal"
    elif status == 401 or "invalid_api_key" in lowered or "authentication" in lowered:
        code = "key"
    elif status == 404 and any(m in lowered for m in ("privacy_restricted", "data policy", "no_endpoints",
                                                       "no endpoints", "constraint_filtered")):
        code = "routing"
    elif "model_not_found" in lowered or "not a valid model" in lowered or "model_deprecated" in lowered or (
        status == 404
    ):
        code = "model"
    elif status == 403:
        code = "permission"
    elif status in (400, 422) and ("tool_call" in lowered or "tool message" in lowered or "role 'tool'" in lowered
                                   or "messages" in lowered):
        code = "history"
    elif status in (400, 422) and ("tools" in lowered or "function" in lowered or "schema" in lowered):
        code = "tools"
    elif status == 503 and "busy" in lowered:
        code = "busy"
    elif status in (502, 503) and ("no provider" in lowered or "routing" in lowered or "no endpoints" in lowered):
        code = "routing"
    elif status == 200:
        code = "busy"
    else:
        code = status_code_for(status)
    return make_error(
        code,
        status=status,
        provider_code=str(provider_code) if provider_code is not None else None,
        provider_message=message,
        retry_after=retry_after,
        quota=quota,
        headers=rate_headers(headers),
    )


def _daily_from_headers(headers: dict[str, str] | None) -> bool:
    """OpenRouter's free daily cap: nothing remaining and the reset hours away."""
    if not headers:
        return False
    lower = {k.lower(): v for k, v in headers.items()}
    if lower.get("x-ratelimit-remaining") != "0" or "x-ratelimit-reset" not in lower:
        return False
    try:
        reset = float(lower["x-ratelimit-reset"])
    except ValueError:
        return False
    if reset > 1e11:  # epoch milliseconds
        reset /= 1000.0
    return reset - time.time() > 3600
