"""A fake Ollama server: ``/api/chat`` (NDJSON streams), ``/api/show``, ``/api/ps``, ``/api/tags``.

``models`` describes installed models: trained context, size, how much fits in GPU memory
(``vram``) and an optional ``remote_host`` for a model the server forwards to a cloud service.
Loading a model with ``options.num_ctx`` makes it appear in ``/api/ps`` with the context it
would really get (capped by ``max_ctx``, like a machine short of memory).
"""

from __future__ import annotations

from typing import Any

from tests.providers.fakes.base import Answer, Fault, FakeServer, Raw


class OllamaFake(FakeServer):
    name = "ollama"

    def __init__(self, *, models: dict[str, dict[str, Any]] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.models = models or {}
        self.loaded: dict[str, dict[str, Any]] = {}

    def wants_stream(self, path: str, body: Any) -> bool:
        return bool(isinstance(body, dict) and body.get("stream", True))

    def _model_missing(self, model: str) -> Raw:
        return self.json_raw(404, {"error": f"model '{model}' not found"})

    def route(self, method: str, path: str, body: Any) -> Raw | None:
        body = body or {}
        if path == "/api/ps":
            return self.json_raw(200, {"models": list(self.loaded.values())})
        if path == "/api/tags":
            return self.json_raw(200, {"models": [{"name": n, "model": n} for n in self.models]})
        if path == "/api/show":
            name = body.get("model", "")
            spec = self.models.get(name)
            if spec is None:
                return self._model_missing(name)
            data: dict[str, Any] = {
                "details": {"family": "llama", "parameter_size": "8.0B", "quantization_level": "Q4_0"},
                "model_info": {"general.architecture": "llama",
                               "llama.context_length": spec.get("trained_ctx", 131072)},
                "capabilities": ["completion", "tools"],
                "parameters": "",
            }
            if spec.get("remote_host"):
                data["remote_host"] = spec["remote_host"]
                data["remote_model"] = spec.get("remote_model", name)
            return self.json_raw(200, data)
        if path == "/api/chat" and body.get("messages") == [] and self.models:
            name = body.get("model", "")
            spec = self.models.get(name)
            if spec is None:
                return self._model_missing(name)
            if not spec.get("remote_host"):
                asked = (body.get("options") or {}).get("num_ctx") or 4096
                context = min(asked, spec.get("max_ctx", asked), spec.get("trained_ctx", 131072))
                size = spec.get("size", 5_000_000_000)
                self.loaded[name] = {"name": name, "model": name, "size": size,
                                     "size_vram": spec.get("vram", size), "context_length": context,
                                     "expires_at": "2026-01-01T00:00:00Z"}
            return self.json_raw(200, {"model": name, "created_at": "2026-01-01T00:00:00Z",
                                       "message": {"role": "assistant", "content": ""}, "done": True,
                                       "done_reason": "load"})
        return None

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Raw:
        model = (body or {}).get("model", "model")
        if isinstance(item, Fault):
            return self.fault(item, stream, key, model)
        answer: Answer = item
        calls = []
        for index, call in enumerate(answer.calls):
            args: Any = call.arguments
            calls.append({"id": call.id or f"call_{index:08d}", "function": {"index": index, "name": call.name,
                                                                           "arguments": args}})
        done_reason = "length" if answer.stop == "max_tokens" else "stop"
        final = {"model": model, "created_at": "2026-01-01T00:00:00Z", "done": True, "done_reason": done_reason,
                 "total_duration": 1000, "prompt_eval_count": answer.usage[0], "eval_count": answer.usage[1]}
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": answer.text}
            if answer.reasoning:
                message["thinking"] = answer.reasoning
            if calls:
                message["tool_calls"] = calls
            return self.json_raw(200, {**final, "message": message})
        lines: list[dict[str, Any]] = []
        base = {"model": model, "created_at": "2026-01-01T00:00:00Z", "done": False}
        if answer.reasoning:
            lines.append({**base, "message": {"role": "assistant", "content": "", "thinking": answer.reasoning}})
        for i in range(0, len(answer.text), 5):
            lines.append({**base, "message": {"role": "assistant", "content": answer.text[i:i + 5]}})
        if calls:
            lines.append({**base, "message": {"role": "assistant", "content": "", "tool_calls": calls}})
        lines.append({**final, "message": {"role": "assistant", "content": ""}})
        return self.ndjson(lines, cut_after=answer.cut_after)

    def fault(self, fault: Fault, stream: bool, key: str | None, model: str) -> Raw:
        name = fault.name
        if name in ("busy", "overloaded"):
            return self.json_raw(503, {"error": "server busy, please try again.  maximum pending requests exceeded"})
        if name == "server_error":
            return self.json_raw(500, {"error": "llama runner process has terminated: exit status 2"})
        if name == "context_too_long":
            return self.json_raw(400, {"error": "the prompt is longer than the context length currently available "
                                                "to the model; shorten the prompt"})
        if name == "unknown_model":
            return self._model_missing(model)
        if name == "tools":
            return self.json_raw(400, {"error": f"registry.ollama.ai/library/{model}:latest does not support tools"})
        if name == "rate_limit":
            headers = {"retry-after": str(fault.retry_after)} if fault.retry_after is not None else {}
            return self.json_raw(429, {"error": "too many requests"}, headers)
        if name == "bad_key":
            return self.json_raw(401, {"error": "unauthorized" + (f" {key}" if fault.echo_key and key else "")})
        if name == "mid_stream_error":
            return self.ndjson([{"model": model, "message": {"role": "assistant", "content": "Hel"}, "done": False},
                                {"error": "an error was encountered while running the model"}])
        if name == "cut":
            return self.render(Answer(text="This answer will be cut in the middle", cut_after=2), "",
                               {"model": model}, True, key)
        if name == "drop":
            return Raw(drop=True)
        raise ValueError(f"{self.name} fake has no fault {name!r}")


