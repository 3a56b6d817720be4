"""The Gemini API wire format (preset ``gemini``, generativelanguage ``v1beta``).

The model's parts are kept verbatim in ``Message.provider_data["gemini"]["parts"]`` and sent
back exactly as received, because thought signatures must stay on the same part in the same
place. Function calls finish with ``STOP``: tool calls are recognised by their parts. Streams
are SSE with a whole response object per event and no terminator: a stream whose last event
has no ``finishReason`` was cut short. 429s are classified from their ``QuotaFailure`` and
``RetryInfo`` details: a per-day quota, the per-minute input-token quota (``tpm_input``) or a
plain rate limit.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

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
    parse_duration,
    rate_headers,
    retry_after_from_headers,
    retry_after_from_message,
    split_reasoning,
    status_code_for,
)

_REFUSALS = {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII", "RECITATION", "IMAGE_SAFETY",
             "IMAGE_PROHIBITED_CONTENT", "LANGUAGE"}
_MODES = {"auto": "AUTO", "required": "ANY", "none": "NONE"}
#: Id prefix of tool calls the service sent without an id (never echoed back as ``id``).
LOCAL_CALL_PREFIX = "gemini_call_"


def _model_parts(message: Message) -> list[dict[str, Any]]:
    stored = (message.provider_data.get("gemini") or {}).get("parts")
    if stored is not None:
        return [dict(p) for p in stored]
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"text": message.content})
    for call in message.tool_calls:
        if call.parse_error is not None:
            continue
        fc: dict[str, Any] = {"name": call.name, "args": call.arguments}
        if not call.id.startswith(LOCAL_CALL_PREFIX):
            fc["id"] = call.id
        parts.append({"functionCall": fc})
    return parts


def contents_from_messages(messages: list[Message]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    system: list[str] = []
    contents: list[dict[str, Any]] = []
    calls: dict[str, ToolCall] = {}
    for message in messages:
        if message.role == "system":
            system.append(message.content)
        elif message.role == "assistant":
            for call in message.tool_calls:
                calls[call.id] = call
            contents.append({"role": "model", "parts": _model_parts(message)})
        elif message.role == "tool":
            call = calls.get(message.tool_call_id or "")
            if call is not None and call.parse_error is not None:
                part: dict[str, Any] = {"text": f"(tool error) {message.content}"}
            else:
                name = message.name or (call.name if call else "")
                response: dict[str, Any] = {"name": name, "response": {"output": message.content}}
                if message.tool_call_id and not message.tool_call_id.startswith(LOCAL_CALL_PREFIX):
                    response = {"id": message.tool_call_id, **response}
                part = {"functionResponse": response}
            if contents and contents[-1]["role"] == "user" and contents[-1].get("_tool"):
                contents[-1]["parts"].append(part)
            else:
                contents.append({"role": "user", "parts": [part], "_tool": True})
        else:
            contents.append({"role": "user", "parts": [{"text": message.content}]})
    for content in contents:
        content.pop("_tool", None)
    instruction = {"parts": [{"text": "\n\n".join(system)}]} if system else None
    return instruction, contents


def usage_from_gemini(data: dict[str, Any] | None) -> Usage:
    if not data:
        return Usage()
    candidates = data.get("candidatesTokenCount")
    thoughts = data.get("thoughtsTokenCount")
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    return Usage(input_tokens=data.get("promptTokenCount"), output_tokens=output, reasoning_tokens=thoughts,
                 cached_input_tokens=data.get("cachedContentTokenCount"))


def _merge_part(parts: list[dict[str, Any]], part: dict[str, Any]) -> None:
    """Append a streamed part, joining plain text deltas but never touching a signed part."""
    if (
        parts
        and set(part) <= {"text", "thought"}
        and "text" in part
        and set(parts[-1]) <= {"text", "thought"}
        and "text" in parts[-1]
        and bool(parts[-1].get("thought")) == bool(part.get("thought"))
    ):
        parts[-1] = {**parts[-1], "text": parts[-1]["text"] + part["text"]}
    else:
        parts.append(dict(part))


def _response(parts: list[dict[str, Any]], finish: str | None, usage: Usage, info: dict[str, Any],
              finish_message: str | None = None, blocked: str | None = None) -> ChatResponse:
    texts: list[str] = []
    thoughts: list[str] = []
    calls: list[ToolCall] = []
    for part in parts:
        if "functionCall" in part:
            fc = part.get("functionCall") or {}
            arguments, raw_arguments, error = parse_arguments(fc.get("args"))
            call_id = fc.get("id") or f"{LOCAL_CALL_PREFIX}{len(calls)}"
            calls.append(ToolCall(id=call_id, name=fc.get("name") or "", arguments=arguments,
                                  raw_arguments=raw_arguments, parse_error=error))
        elif "text" in part:
            (thoughts if part.get("thought") else texts).append(part.get("text") or "")
    text, think = split_reasoning("".join(texts))
    stop: StopReason
    if blocked:
        stop = "refusal"
    elif finish == "MALFORMED_FUNCTION_CALL":
        calls.append(ToolCall(id=f"{LOCAL_CALL_PREFIX}{len(calls)}", name="", raw_arguments=finish_message or "",
                              parse_error="the service reported a malformed function call"))
        stop = "tool_calls"
    elif finish == "MAX_TOKENS":
        stop = "max_tokens"
    elif finish in _REFUSALS:
        stop = "refusal"
    elif calls:
        stop = "tool_calls"
    elif finish == "STOP":
        stop = "end_turn"
    else:
        stop = "other"
    if finish:
        info["finish_reason"] = finish
    if blocked:
        info["block_reason"] = blocked
    message = Message(role="assistant", content=text, tool_calls=calls,
                      reasoning=join_reasoning("".join(thoughts) or None, think),
                      provider_data={"gemini": {"parts": parts}})
    return ChatResponse(message=message, stop_reason=stop, usage=usage, provider=info)


class GeminiProvider(HTTPProvider):
    preset = "gemini"
    wire_format = "gemini"

    def _wire(self, request: ChatRequest, stream: bool) -> Wire:
        instruction, contents = contents_from_messages(request.messages)
        if instruction is not None and self._fold_system(request.model):
            # Gemma 3 on the Gemini API refuses systemInstruction: the text opens the first user turn.
            text = instruction["parts"][0]["text"]
            first = next((c for c in contents if c["role"] == "user"), None)
            if first is None:
                contents.insert(0, {"role": "user", "parts": [{"text": text}]})
            else:
                first["parts"] = [{"text": text}, *first["parts"]]
            instruction = None
        body: dict[str, Any] = {}
        if instruction is not None:
            body["systemInstruction"] = instruction
        body["contents"] = contents
        if request.tools:
            body["tools"] = [{"functionDeclarations": [
                {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
                for t in request.tools]}]
            body["toolConfig"] = {"functionCallingConfig": {"mode": _MODES[request.tool_choice]}}
        config: dict[str, Any] = {"maxOutputTokens": request.max_output_tokens}
        for name in ("temperature", "topP", "seed"):  # providers/generation.py
            if name in self.options:
                config[name] = self.options[name]
        if "thinkingConfig" in self.options:
            config["thinkingConfig"] = self.options["thinkingConfig"]
        body["generationConfig"] = config
        model = quote(request.model.removeprefix("models/"), safe="-._:")
        method = "streamGenerateContent" if stream else "generateContent"
        headers = {"content-type": "application/json"}
        if self._key:
            headers["x-goog-api-key"] = self._key.reveal()
        return Wire(url=f"{self.base_url}/v1beta/models/{model}:{method}", headers=headers, body=body, stream=stream,
                    params={"alt": "sse"} if stream else {})

    def _fold_system(self, model: str) -> bool:
        if "fold_system" in self.options:
            return bool(self.options["fold_system"])
        return model.removeprefix("models/").startswith("gemma-3")

    def classify(self, status: int, body: bytes, headers: httpx.Headers | dict[str, str]) -> ProviderError:
        return classify_gemini(status, body, headers, self.preset)

    def _check(self, data: Any) -> dict[str, Any]:
        if isinstance(data, list) and len(data) == 1:
            data = data[0]
        if not isinstance(data, dict):
            raise make_error("unreadable_answer", message="the service's answer is not a JSON object")
        if "error" in data:
            raise classify_gemini(int((data.get("error") or {}).get("code") or 200), data, {}, self.preset)
        return data

    def _parse_whole(self, data: Any, headers: httpx.Headers) -> ChatResponse:
        data = self._check(data)
        info = {k: data[k] for k in ("responseId", "modelVersion") if data.get(k) is not None}
        candidates = data.get("candidates") or []
        usage = usage_from_gemini(data.get("usageMetadata"))
        if not candidates:
            blocked = (data.get("promptFeedback") or {}).get("blockReason") or "OTHER"
            return _response([], None, usage, info, blocked=blocked)
        candidate = candidates[0]
        parts = [dict(p) for p in ((candidate.get("content") or {}).get("parts") or [])]
        return _response(parts, candidate.get("finishReason"), usage, info, candidate.get("finishMessage"))

    def _closing_lines(self) -> list[str]:
        return ["", 'data: {"candidates":[{"content":{"parts":[]},"finishReason":"MAX_TOKENS"}]}', ""]

    def _parse_stream(self, lines: Iterator[str], headers: httpx.Headers) -> ChatResponse:
        parts: list[dict[str, Any]] = []
        finish: str | None = None
        finish_message: str | None = None
        usage = Usage()
        info: dict[str, Any] = {}
        blocked: str | None = None
        for event in iter_sse(lines):
            data = self._check(event_json(event.data))
            for key in ("responseId", "modelVersion"):
                if data.get(key) is not None:
                    info[key] = data[key]
            if data.get("usageMetadata"):
                usage = usage_from_gemini(data["usageMetadata"])
            if (data.get("promptFeedback") or {}).get("blockReason"):
                blocked = data["promptFeedback"]["blockReason"]
            for candidate in (data.get("candidates") or [])[:1]:
                for part in (candidate.get("content") or {}).get("parts") or []:
                    _merge_part(parts, part)
                if candidate.get("finishReason"):
                    finish = candidate["finishReason"]
                    finish_message = candidate.get("finishMessage")
        if finish is None and blocked is None:
            raise make_error("stream_cut", message="the answer stream ended before its finish reason")
        return _response(parts, finish, usage, info, finish_message, blocked)


def _details(error: dict[str, Any], suffix: str) -> list[dict[str, Any]]:
    return [d for d in error.get("details") or [] if isinstance(d, dict) and str(d.get("@type", "")).endswith(suffix)]


def classify_gemini(
    status: int,
    body: bytes | dict[str, Any] | list[Any] | None,
    headers: httpx.Headers | dict[str, str] | None,
    preset: str = "gemini",
) -> ProviderError:
    data = body if isinstance(body, (dict, list)) else json_or_none(body)
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    headers = headers or {}
    error = data.get("error") if isinstance(data, dict) and isinstance(data.get("error"), dict) else {}
    rpc_status = error.get("status")
    message = error.get("message")
    if message is None and isinstance(body, (bytes, bytearray)) and body:
        message = provider_text(body)  # whole: redacted, then cut to 300, by the provider (never cut first)
    if isinstance(error.get("code"), int) and status == 200:
        status = error["code"]
    reasons = {d.get("reason") for d in _details(error, "google.rpc.ErrorInfo")}
    violations = [v for d in _details(error, "google.rpc.QuotaFailure") for v in d.get("violations") or []]
    retry_after = None
    for info in _details(error, "google.rpc.RetryInfo"):
        retry_after = parse_duration(info.get("retryDelay"))
    if retry_after is None:
        retry_after = retry_after_from_headers(headers) or retry_after_from_message(message)
    lowered = f"{rpc_status} {message}".lower()
    quota: dict[str, Any] | None = None
    if violations:
        v = violations[0]
        quota = {"metric": v.get("quotaMetric"), "quota_id": v.get("quotaId"), "value": v.get("quotaValue"),
                 "dimensions": v.get("quotaDimensions")}
    if status == 429 or rpc_status == "RESOURCE_EXHAUSTED":
        ids = " ".join(str(v.get("quotaId", "")) + " " + str(v.get("quotaMetric", "")) for v in violations)
        if any(str(v.get("quotaValue")) == "0" for v in violations):
            code = "permission"  # the plan has no access to this model at all: waiting never helps
        elif "perday" in ids.lower() or "daily" in ids.lower() or "per day" in lowered:
            code = "daily_quota"
        elif "inputtoken" in ids.lower() or "input_token" in ids.lower():
            code = "tpm_input"
        else:
            code = "rate_limit"
    elif "API_KEY_INVALID" in reasons or "api key not valid" in lowered or status == 401:
        code = "key"
    elif "exceeds the maximum number of tokens" in lowered or "input token count" in lowered:
        code = "context_too_long"
    elif "thought_signature" in lowered or "function call turn" in lowered or "function response" in lowered:
        code = "history"
    elif status == 400 and ("function_declarations" in lowered or "function calling" in lowered
                            or "tools[" in lowered or "parameters" in lowered):
        code = "tools"
    elif rpc_status == "PERMISSION_DENIED" or rpc_status == "FAILED_PRECONDITION" or status == 403:
        code = "permission"
    elif rpc_status == "NOT_FOUND" or status == 404:
        code = "model"
    elif rpc_status == "UNAVAILABLE" or status == 503:
        code = "overloaded"
    elif rpc_status == "DEADLINE_EXCEEDED" or status == 504:
        code = "timeout"
    elif rpc_status == "INTERNAL" or status >= 500 or status == 200:
        code = "busy"
    else:
        code = status_code_for(status)
    return make_error(code, status=status, provider_code=rpc_status, provider_message=message,
                      retry_after=retry_after, quota=quota, headers=rate_headers(headers))


__all__ = ["GeminiProvider", "classify_gemini", "contents_from_messages", "usage_from_gemini"]
