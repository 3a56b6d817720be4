"""A fake Anthropic Messages server: named SSE events, signed thinking, typed errors."""

from __future__ import annotations

import itertools
import json
from typing import Any

from tests.providers.fakes.base import Answer, Fault, FakeServer, Raw
from tests.providers.fakes.limits import anthropic_headers

_ids = itertools.count(1)


class AnthropicFake(FakeServer):
    name = "anthropic"

    def limit_headers(self) -> dict[str, str]:
        """``anthropic-ratelimit-*``: RFC 3339 resets, token remainders to the nearest thousand."""
        return anthropic_headers(self.limiter.view(), self.clock()) if self.limiter is not None else {}

    def _blocks(self, answer: Answer) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if answer.reasoning:
            blocks.append({"type": "thinking", "thinking": answer.reasoning, "signature": answer.signature or "sig-A"})
        if answer.text:
            blocks.append({"type": "text", "text": answer.text})
        for index, call in enumerate(answer.calls):
            blocks.append({"type": "tool_use", "id": call.id or f"toolu_01fake{index:014d}", "name": call.name,
                           "input": call.arguments})
        return blocks

    def _stop(self, answer: Answer) -> str:
        if answer.stop in ("max_tokens", "refusal"):
            return answer.stop
        return "tool_use" if answer.calls else "end_turn"

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Raw:
        model = (body or {}).get("model", "model")
        if isinstance(item, Fault):
            return self.fault(item, stream, key, model)
        answer: Answer = item
        msg_id = f"msg_fake{next(_ids):06d}"
        # Anthropic's input_tokens are the input after the last cache breakpoint: the cached are apart
        read, written = answer.cached
        usage = {"input_tokens": answer.usage[0] - read - written, "output_tokens": answer.usage[1],
                 "cache_creation_input_tokens": written, "cache_read_input_tokens": read}
        blocks = self._blocks(answer)
        if not stream:
            return self.json_raw(200, {"id": msg_id, "type": "message", "role": "assistant", "model": model,
                                       "content": blocks, "stop_reason": self._stop(answer), "stop_sequence": None,
                                       "usage": usage})
        events: list[tuple[str | None, Any]] = [("message_start", {
            "type": "message_start",
            "message": {"id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
                        "stop_reason": None, "stop_sequence": None,
                        "usage": {**usage, "output_tokens": 1}}})]
        events.append(("ping", {"type": "ping"}))
        for index, block in enumerate(blocks):
            if block["type"] == "thinking":
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "thinking", "thinking": "",
                                                                         "signature": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "thinking_delta",
                                                                 "thinking": block["thinking"]}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "signature_delta",
                                                                 "signature": block["signature"]}}))
            elif block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}}))
                text = block["text"]
                for i in range(0, len(text), 6):
                    events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                           "delta": {"type": "text_delta", "text": text[i:i + 6]}}))
            else:
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "tool_use", "id": block["id"],
                                                                         "name": block["name"], "input": {}}}))
                raw = block["input"] if isinstance(block["input"], str) else json.dumps(block["input"])
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "input_json_delta", "partial_json": ""}}))
                for i in range(0, len(raw), 4):
                    events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                           "delta": {"type": "input_json_delta",
                                                                     "partial_json": raw[i:i + 4]}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(("message_delta", {"type": "message_delta",
                                         "delta": {"stop_reason": self._stop(answer), "stop_sequence": None},
                                         "usage": {"output_tokens": answer.usage[1]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        return self.sse(events, cut_after=answer.cut_after)

    def error(self, status: int, etype: str, message: str, headers: dict[str, str] | None = None) -> Raw:
        return self.json_raw(status, {"type": "error", "error": {"type": etype, "message": message},
                                      "request_id": "req_fake0001"},
                             {"request-id": "req_fake0001", **(headers or {})})

    def fault(self, fault: Fault, stream: bool, key: str | None, model: str) -> Raw:
        name = fault.name
        if name == "rate_limit":
            wait = fault.retry_after if fault.retry_after is not None else 1
            return self.error(429, "rate_limit_error",
                              "This request would exceed the rate limit for your organization of 50 requests per "
                              "minute.", {"retry-after": str(wait), "anthropic-ratelimit-requests-limit": "50",
                                          "anthropic-ratelimit-requests-remaining": "0", "x-should-retry": "true"})
        if name == "overloaded":
            headers = {"retry-after": str(fault.retry_after)} if fault.retry_after is not None else {}
            return self.error(529, "overloaded_error", "Overloaded", headers)
        if name == "server_error":
            return self.error(500, "api_error", "Internal server error")
        if name == "context_too_long":
            return self.error(400, "invalid_request_error", "prompt is too long: 208656 tokens > 200000 maximum")
        if name == "bad_key":
            return self.error(401, "authentication_error",
                              "invalid x-api-key" + (f": {key}" if fault.echo_key and key else ""))
        if name == "unknown_model":
            return self.error(404, "not_found_error", f"model: {model}")
        if name == "permission":
            return self.error(403, "permission_error", "Your API key does not have permission to use this resource.")
        if name == "credit":
            return self.error(400, "invalid_request_error",
                              "Your credit balance is too low to access the Anthropic API.")
        if name == "refusal":
            return self.render(Answer(text="", stop="refusal"), "", {"model": model}, stream, key)
        if name == "mid_stream_error":
            return self.sse([
                ("message_start", {"type": "message_start", "message": {
                    "id": "msg_x", "type": "message", "role": "assistant", "model": model, "content": [],
                    "stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 1}}}),
                ("error", {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ])
        if name == "cut":
            return self.render(Answer(text="This answer will be cut in the middle", cut_after=4), "",
                               {"model": model}, True, key)
        if name == "drop":
            return Raw(drop=True)
        raise ValueError(f"{self.name} fake has no fault {name!r}")
