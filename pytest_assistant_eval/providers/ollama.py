"""Ollama's native API (preset ``ollama``): ``/api/chat`` with NDJSON streaming, and the probe.

One variant per context size (S4.5): the request carries ``options.num_ctx``; before the first
cell of a setting, :func:`probe` loads that variant and reads ``/api/show`` and ``/api/ps`` to
learn the context it really runs with, its memory use and whether the server forwards the
model to a cloud service; :func:`applicable` turns that into the runner's decision.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass
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
from pytest_assistant_eval.providers.errors import TOOL_PARSE_MARKERS, ProviderError, make_error
from pytest_assistant_eval.redact import provider_text
from pytest_assistant_eval.providers.http import (
    HTTPProvider,
    Wire,
    encode_body,
    iter_ndjson,
    join_reasoning,
    json_or_none,
    parse_arguments,
    rate_headers,
    retry_after_from_headers,
    retry_after_from_message,
    split_reasoning,
    status_code_for,
)

OLLAMA_BASE_URL = "http://127.0.0.1:11434"

_DONE: dict[str, StopReason] = {"stop": "end_turn", "length": "max_tokens"}
_TOP_LEVEL = ("think", "keep_alive", "format")


def messages_to_ollama(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            item: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                calls = []
                for call in message.tool_calls:
                    names[call.id] = call.name
                    calls.append({"function": {"name": call.name,
                                               "arguments": call.arguments if call.parse_error is None else {}}})
                item["tool_calls"] = calls
            out.append(item)
        elif message.role == "tool":
            out.append({"role": "tool", "tool_name": message.name or names.get(message.tool_call_id or "", ""),
                        "content": message.content})
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def _response(content: str, thinking: str | None, raw_calls: list[dict[str, Any]], final: dict[str, Any],
              model: str) -> ChatResponse:
    calls: list[ToolCall] = []
    for index, raw in enumerate(raw_calls):
        fn = raw.get("function") or {}
        arguments, raw_arguments, error = parse_arguments(fn.get("arguments"))
        calls.append(ToolCall(id=raw.get("id") or f"call_{index}", name=fn.get("name") or "", arguments=arguments,
                              raw_arguments=raw_arguments, parse_error=error))
    text, think = split_reasoning(content)
    done_reason = final.get("done_reason") or ""
    stop: StopReason = "tool_calls" if calls and done_reason in ("stop", "") else _DONE.get(done_reason, "other")
    usage = Usage(input_tokens=final.get("prompt_eval_count"), output_tokens=final.get("eval_count"))
    info: dict[str, Any] = {"model": final.get("model") or model, "done_reason": done_reason}
    message = Message(role="assistant", content=text, tool_calls=calls, reasoning=join_reasoning(thinking, think))
    return ChatResponse(message=message, stop_reason=stop, usage=usage, provider=info)


class OllamaProvider(HTTPProvider):
    preset = "ollama"
    wire_format = "ollama"

    def _wire(self, request: ChatRequest, stream: bool) -> Wire:
        body: dict[str, Any] = {"model": request.model, "messages": messages_to_ollama(request.messages)}
        if request.tools and request.tool_choice != "none":
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in request.tools]
        body["stream"] = stream
        options: dict[str, Any] = {}
        if self.options.get("num_ctx") is not None:
            options["num_ctx"] = int(self.options["num_ctx"])
        options["num_predict"] = request.max_output_tokens
        for name in ("temperature", "top_p", "seed"):  # providers/generation.py
            if name in self.options:
                options[name] = self.options[name]
        body["options"] = options
        for name in _TOP_LEVEL:
            if name in self.options:
                body[name] = self.options[name]
        headers = {"content-type": "application/json"}
        if self._key:
            headers["authorization"] = f"Bearer {self._key.reveal()}"
        return Wire(url=f"{self.base_url}/api/chat", headers=headers, body=body, stream=stream)

    def classify(self, status: int, body: bytes, headers: httpx.Headers | dict[str, str]) -> ProviderError:
        return classify_ollama(status, body, headers, self.preset)

    def _parse_whole(self, data: Any, headers: httpx.Headers) -> ChatResponse:
        if not isinstance(data, dict):
            raise make_error("unreadable_answer", message="the service's answer is not a JSON object")
        if "error" in data:
            raise classify_ollama(200, data, headers, self.preset)
        message = data.get("message") or {}
        return _response(message.get("content") or "", message.get("thinking"), message.get("tool_calls") or [],
                         data, self.model)

    def _closing_lines(self) -> list[str]:
        return ['{"done":true,"done_reason":"length"}']

    def _parse_stream(self, lines: Iterator[str], headers: httpx.Headers) -> ChatResponse:
        content: list[str] = []
        thinking: list[str] = []
        calls: list[dict[str, Any]] = []
        final: dict[str, Any] | None = None
        for chunk in iter_ndjson(lines):
            if "error" in chunk:
                raise classify_ollama(200, chunk, {}, self.preset)
            message = chunk.get("message") or {}
            if message.get("content"):
                content.append(message["content"])
            if message.get("thinking"):
                thinking.append(message["thinking"])
            calls.extend(message.get("tool_calls") or [])
            if chunk.get("done"):
                final = chunk
                break
        if final is None:
            raise make_error("stream_cut", message="the answer stream ended before its last line")
        return _response("".join(content), "".join(thinking) or None, calls, final, self.model)


def classify_ollama(
    status: int,
    body: bytes | dict[str, Any] | None,
    headers: httpx.Headers | dict[str, str] | None,
    preset: str = "ollama",
) -> ProviderError:
    data = body if isinstance(body, dict) else json_or_none(body)
    message: str | None = None
    if isinstance(data, dict):
        err = data.get("error")
        message = err if isinstance(err, str) else (err or {}).get("message") if isinstance(err, dict) else None
    if message is None and isinstance(body, (bytes, bytearray)) and body:
        message = provider_text(body)  # whole: redacted, then cut to 300, by the provider (never cut first)
    lowered = (message or "").lower()
    if any(marker in lowered for marker in TOOL_PARSE_MARKERS):
        # The server could not parse the tool call the model wrote (HTTP 500): one answer's
        # format problem, as an unreadable call is for every preset, not a busy server (S4.7).
        code = "tool_call_unreadable"
    elif "longer than the context" in lowered or "context length" in lowered:
        code = "context_too_long"
    elif "does not support tools" in lowered:
        code = "tools"
    elif "not found" in lowered or status == 404:
        code = "model"
    elif "does not support" in lowered:
        code = "model"
    elif "busy" in lowered or status == 503:
        code = "busy"
    elif status == 429:
        code = "rate_limit"
    elif status == 401:
        code = "key"
    elif status == 200 or status >= 500:
        code = "busy"
    else:
        code = status_code_for(status)
    headers = headers or {}
    retry_after = retry_after_from_headers(headers)  # a proxy or Ollama's cloud may state one
    if retry_after is None:
        retry_after = retry_after_from_message(message)
    return make_error(code, status=status, provider_message=message, retry_after=retry_after,
                      headers=rate_headers(headers))


# ---------------------------------------------------------------------------------------------
# The probe (S4.5)


@dataclass(frozen=True)
class Probe:
    """What a loaded variant really is: its context, its memory use and where it runs."""

    model: str
    asked_context: int | None
    context: int | None  # the context the running instance has (``/api/ps``), else the best estimate
    trained_context: int | None
    size: int | None  # bytes in memory
    size_vram: int | None  # bytes in GPU memory
    cpu_share: float | None  # share of the model on the CPU; None when not known
    forwarded_to: str | None  # a cloud host the server forwards this model to

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def cpu_offload(self) -> dict[str, Any] | None:
        """What a cell records under ``cpu_offload`` (S4.5): null when fully on the GPU."""
        if not self.cpu_share:
            return None
        return {"size": self.size, "size_vram": self.size_vram, "cpu_share": self.cpu_share}


def is_cloud_name(model: str) -> bool:
    return model.endswith("-cloud") or model.endswith(":cloud")


def probe(base_url: str, model: str, num_ctx: int | None, *, transport: httpx.BaseTransport | None = None,
          keep_alive: str = "10m", timeout: float = 600.0) -> Probe:
    """Load ``model`` with ``num_ctx`` (an empty chat, kept alive), then read ``/api/show`` and ``/api/ps``."""
    base = base_url.rstrip("/")
    with httpx.Client(transport=transport, timeout=httpx.Timeout(timeout, connect=15.0)) as client:

        def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
            try:
                response = client.post(f"{base}{path}", content=encode_body(body),
                                       headers={"content-type": "application/json"})
            except httpx.TimeoutException:
                raise make_error("timeout") from None
            except httpx.HTTPError:
                raise make_error("no_connection") from None
            if response.status_code >= 400:
                raise classify_ollama(response.status_code, response.content, response.headers)
            data = json_or_none(response.content)
            return data if isinstance(data, dict) else {}

        load: dict[str, Any] = {"model": model, "messages": [], "stream": False, "keep_alive": keep_alive}
        if num_ctx is not None:
            load["options"] = {"num_ctx": int(num_ctx)}
        post("/api/chat", load)
        show = post("/api/show", {"model": model})
        try:
            ps_response = client.get(f"{base}/api/ps")
            ps = json_or_none(ps_response.content) or {}
        except httpx.HTTPError:
            raise make_error("no_connection") from None
    info = show.get("model_info") or {}
    arch = info.get("general.architecture")
    trained = info.get(f"{arch}.context_length") if arch else None
    forwarded = show.get("remote_host") or None
    if forwarded is None and is_cloud_name(model):
        forwarded = "ollama.com"
    entry = None
    for item in ps.get("models") or []:
        if model in (item.get("name"), item.get("model")) or item.get("name", "").split(":")[0] == model:
            entry = item
            break
    size = entry.get("size") if entry else None
    size_vram = entry.get("size_vram") if entry else None
    context = entry.get("context_length") if entry else None
    if context is None and forwarded is None and num_ctx is not None and trained is not None:
        context = min(int(num_ctx), int(trained))
    cpu_share = None
    if size:
        cpu_share = round(max(0.0, 1.0 - (size_vram or 0) / size), 4)
    return Probe(model=model, asked_context=num_ctx, context=context, trained_context=trained, size=size,
                 size_vram=size_vram, cpu_share=cpu_share,
                 forwarded_to=(show.get("remote_host") or forwarded))


def applicable(probe: Probe, asked_ctx: int | None, allow_cpu_offload: bool) -> tuple[bool, str]:
    """Whether the variant may run a setting's cells (S4.5), and why not."""
    if probe.forwarded_to:
        return True, ""
    if asked_ctx is not None:
        if probe.context is None:
            return False, f"not applicable (context): the running context is unknown, {asked_ctx} was asked"
        if probe.context < asked_ctx:
            return False, f"not applicable (context): runs with {probe.context} tokens, {asked_ctx} were asked"
    if probe.cpu_share and not allow_cpu_offload:
        return False, (f"not applicable (context): not fully in GPU memory ({probe.size_vram} of {probe.size} bytes; "
                       f"{probe.cpu_share:.0%} on the CPU); --allow-cpu-offload runs it anyway")
    return True, ""
