"""A fake OpenAI Chat Completions server (and its OpenRouter flavour)."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

from tests.providers.fakes.base import Answer, Call, Fault, FakeServer, Raw
from tests.providers.fakes.limits import openai_headers, openrouter_headers

_ids = itertools.count(1)


class OpenAIFake(FakeServer):
    name = "openai"
    id_prefix = "chatcmpl-"
    comments = False

    def __init__(self, *, rate_window: tuple[int, float] | None = None, default: Any = None,
                 limit_headers: bool = True, **kwargs: Any) -> None:
        super().__init__(rate_window=rate_window, default=default, **kwargs)
        self.states_limits = limit_headers

    def limit_headers(self) -> dict[str, str]:
        """OpenAI, Groq and vLLM: per dimension limit, remaining, and a Go duration to the full reset."""
        return openai_headers(self.limiter.view()) if self.limiter is not None and self.states_limits else {}

    # -- answers ------------------------------------------------------------------------

    def _call_dict(self, index: int, call: Call) -> dict[str, Any]:
        args = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
        return {"id": call.id or f"call_{index}abcdefghijklmnopqrstu"[:29], "type": "function",
                "function": {"name": call.name, "arguments": args}}

    def _finish(self, answer: Answer) -> str:
        if answer.stop == "max_tokens":
            return "length"
        if answer.stop == "refusal":
            return "content_filter"
        return "tool_calls" if answer.calls else "stop"

    def _usage(self, answer: Answer) -> dict[str, Any]:
        return {"prompt_tokens": answer.usage[0], "completion_tokens": answer.usage[1],
                "total_tokens": sum(answer.usage),
                "prompt_tokens_details": {"cached_tokens": answer.cached[0]},
                "completion_tokens_details": {"reasoning_tokens": 0}}

    def _base(self, model: str) -> dict[str, Any]:
        return {"id": f"{self.id_prefix}{next(_ids)}", "created": int(time.time()), "model": model}

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Raw:
        model = (body or {}).get("model", "model")
        if isinstance(item, Fault):
            return self.fault(item, stream, key, model)
        answer: Answer = item
        base = self._base(model)
        if not stream:
            message: dict[str, Any] = {"role": "assistant", "content": answer.text or None, "refusal": None}
            if answer.stop == "refusal":
                message = {"role": "assistant", "content": None, "refusal": answer.text or "I can't help with that."}
            if answer.reasoning:
                message["reasoning"] = answer.reasoning
            if answer.calls:
                message["tool_calls"] = [self._call_dict(i, c) for i, c in enumerate(answer.calls)]
            data = {**base, "object": "chat.completion",
                    "choices": [{"index": 0, "message": message, "logprobs": None,
                                 "finish_reason": self._finish(answer)}],
                    "usage": self._usage(answer)}
            return self.json_raw(200, data)
        chunk = {**base, "object": "chat.completion.chunk"}
        events: list[tuple[str | None, Any]] = []

        def add(delta: dict[str, Any], finish: str | None = None) -> None:
            events.append((None, {**chunk, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                                         "finish_reason": finish}]}))

        add({"role": "assistant", "content": ""})
        if answer.reasoning:
            add({"reasoning": answer.reasoning})
        if answer.stop == "refusal":
            add({"refusal": answer.text or "I can't help with that."})
        elif answer.text:
            for i in range(0, len(answer.text), 7):
                add({"content": answer.text[i:i + 7]})
        for index, call in enumerate(answer.calls):
            full = self._call_dict(index, call)
            args = full["function"]["arguments"]
            add({"tool_calls": [{"index": index, "id": full["id"], "type": "function",
                                 "function": {"name": call.name, "arguments": ""}}]})
            for i in range(0, len(args), 5):
                add({"tool_calls": [{"index": index, "function": {"arguments": args[i:i + 5]}}]})
        add({}, self._finish(answer))
        events.append((None, {**chunk, "choices": [], "usage": self._usage(answer)}))
        return self.sse(events, done=True, cut_after=answer.cut_after, comments=self.comments)

    # -- faults -------------------------------------------------------------------------

    def error(self, status: int, message: str, type_: str | None, code: str | None,
              headers: dict[str, str] | None = None) -> Raw:
        return self.json_raw(status, {"error": {"message": message, "type": type_, "param": None, "code": code}},
                             headers)

    def fault(self, fault: Fault, stream: bool, key: str | None, model: str) -> Raw:
        name = fault.name
        if name == "rate_limit":
            wait = fault.retry_after if fault.retry_after is not None else 1
            headers = {"retry-after": str(wait), "x-ratelimit-remaining-requests": "0",
                       "x-ratelimit-reset-requests": f"{wait}s"}
            return self.error(429, f"Rate limit reached for {model} on requests per min (RPM): Limit 3, Used 3, "
                                   f"Requested 1. Please try again in {wait}s.", "requests", "rate_limit_exceeded",
                              headers)
        if name == "credit":
            return self.error(429, "You exceeded your current quota, please check your plan and billing details.",
                              "insufficient_quota", "insufficient_quota")
        if name == "overloaded":
            headers = {"retry-after": str(fault.retry_after)} if fault.retry_after is not None else {}
            return self.error(503, "The engine is currently overloaded, please try again later",
                              "service_unavailable_error", "server_is_overloaded", headers)
        if name == "server_error":
            return self.error(500, "The server had an error while processing your request.", "server_error", None)
        if name == "context_too_long":
            return self.error(400, "This model's maximum context length is 4097 tokens. However, your messages "
                                   "resulted in 4294 tokens. Please reduce the length of the messages.",
                              "invalid_request_error", "context_length_exceeded")
        if name == "refusal":
            return self.error(400, "Invalid prompt: your prompt was flagged as potentially violating our usage "
                                   "policy.", "invalid_request_error", "invalid_prompt")
        if name == "bad_key":
            shown = key if fault.echo_key and key else "sk-VKM...wjh3"
            return self.error(401, f"Incorrect API key provided: {shown}. You can find your API key at "
                                   "https://platform.openai.com/account/api-keys. " + "x" * 400,
                              "invalid_request_error", "invalid_api_key")
        if name == "unknown_model":
            return self.error(404, f"The model `{model}` does not exist or you do not have access to it.",
                              "invalid_request_error", "model_not_found")
        if name == "permission":
            return self.error(403, "Country, region, or territory not supported", None, None)
        if name == "mid_stream_error":
            base = {**self._base(model), "object": "chat.completion.chunk"}
            return self.sse([(None, {**base, "choices": [{"index": 0, "delta": {"content": "Hel"},
                                                          "finish_reason": None}]}),
                             (None, {"error": {"message": "The server had an error while processing your request.",
                                               "type": "server_error", "code": None}})])
        if name == "cut":
            return self.render(Answer(text="This answer will be cut somewhere in the middle", cut_after=3), "",
                               {"model": model}, True, key)
        if name == "drop":
            return Raw(drop=True)
        raise ValueError(f"{self.name} fake has no fault {name!r}")


class OpenRouterFake(OpenAIFake):
    name = "openrouter"
    id_prefix = "gen-"
    comments = True

    limits_on_success = False  # OpenRouter states its limits on its own 429s only

    def _base(self, model: str) -> dict[str, Any]:
        return {**super()._base(model), "provider": "FakeUpstream"}

    def limit_headers(self) -> dict[str, str]:
        """``X-RateLimit-*`` with the reset in epoch milliseconds."""
        return openrouter_headers(self.limiter.view(), self.clock()) if self.limiter is not None else {}

    def error(self, status: int, message: str, type_: str | None, code: str | None,
              headers: dict[str, str] | None = None, metadata: dict[str, Any] | None = None) -> Raw:
        error: dict[str, Any] = {"message": message, "code": status}
        if metadata:
            error["metadata"] = metadata
        return self.json_raw(status, {"error": error}, headers)

    def fault(self, fault: Fault, stream: bool, key: str | None, model: str) -> Raw:
        name = fault.name
        if name == "daily_quota":
            reset = str(int((time.time() + 10 * 3600) * 1000))
            limits = {"X-RateLimit-Limit": "50", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}
            return self.error(429, "Rate limit exceeded: free-models-per-day. Add 10 credits to unlock 1000 free "
                                   "model requests per day", None, None, limits, {"headers": limits})
        if name == "rate_limit":
            wait = fault.retry_after if fault.retry_after is not None else 1
            reset = str(int((time.time() + wait) * 1000))
            headers = {"retry-after": str(wait), "X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0",
                       "X-RateLimit-Reset": reset}
            return self.error(429, "Rate limit exceeded", None, None, headers,
                              {"error_type": "rate_limit_exceeded"})
        if name == "bad_key":
            return self.error(401, "User not found." + (f" key {key}" if fault.echo_key and key else ""),
                              None, None)
        if name == "credit":
            return self.error(402, "Insufficient credits. Add more using https://openrouter.ai/credits", None, None)
        if name == "unknown_model":
            return self.error(400, f"{model} is not a valid model ID", None, None, None,
                              {"error_type": "model_not_found"})
        if name == "routing":
            return self.error(404, "No endpoints found matching your data policy", None, None)
        if name == "context_too_long":
            return self.error(400, "This endpoint's maximum context length is 8192 tokens.", None, None, None,
                              {"error_type": "context_length_exceeded"})
        if name == "overloaded":
            headers = {"retry-after": str(fault.retry_after)} if fault.retry_after is not None else {}
            return self.error(503, "Provider overloaded", None, None, headers, {"error_type": "provider_overloaded"})
        if name == "mid_stream_error":
            base = {**self._base(model), "object": "chat.completion.chunk"}
            return self.sse([
                (None, {**base, "choices": [{"index": 0, "delta": {"content": "Hel"}, "finish_reason": None}]}),
                (None, {**base, "error": {"code": 502, "message": "Provider returned error",
                                          "metadata": {"error_type": "provider_unavailable"}},
                        "choices": [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]}),
            ], comments=True)
        return super().fault(fault, stream, key, model)
