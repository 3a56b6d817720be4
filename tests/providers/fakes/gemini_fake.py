"""A fake Gemini API server: ``:generateContent`` and ``:streamGenerateContent?alt=sse``.

Faults include the RESOURCE_EXHAUSTED 429s with their ``QuotaFailure``/``RetryInfo`` details
(per-day quota, per-minute input tokens, per-minute requests) and the 400 for a bad key.
"""

from __future__ import annotations

from typing import Any

from tests.providers.fakes.base import Answer, Fault, FakeServer, Raw
from tests.providers.fakes.limits import Limit

QUOTA = "type.googleapis.com/google.rpc.QuotaFailure"
RETRY = "type.googleapis.com/google.rpc.RetryInfo"
HELP = "type.googleapis.com/google.rpc.Help"


class GeminiFake(FakeServer):
    name = "gemini"

    def wants_stream(self, path: str, body: Any) -> bool:
        return ":streamGenerateContent" in path

    def key_of(self, headers: dict[str, str], path: str) -> str | None:
        key = super().key_of(headers, path)
        if key is None and "key=" in path:
            key = path.split("key=", 1)[1].split("&", 1)[0]
        return key

    def _parts(self, answer: Answer) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if answer.reasoning:
            parts.append({"text": answer.reasoning, "thought": True})
        if answer.text:
            parts.append({"text": answer.text})
        for index, call in enumerate(answer.calls):
            part: dict[str, Any] = {"functionCall": {"name": call.name, "args": call.arguments}}
            if call.id:
                part["functionCall"]["id"] = call.id
            sig = call.signature or (answer.signature if index == 0 else None)
            if sig:
                part["thoughtSignature"] = sig
            parts.append(part)
        if answer.signature and not answer.calls:
            parts.append({"text": "", "thoughtSignature": answer.signature})
        return parts

    def _finish(self, answer: Answer) -> str:
        return {"max_tokens": "MAX_TOKENS", "refusal": "SAFETY"}.get(answer.stop or "", "STOP")

    def _usage(self, answer: Answer) -> dict[str, Any]:
        out = {"promptTokenCount": answer.usage[0], "candidatesTokenCount": answer.usage[1],
               "totalTokenCount": sum(answer.usage)}
        if answer.cached[0]:
            out["cachedContentTokenCount"] = answer.cached[0]
        return out

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Raw:
        model = path.split("/models/", 1)[-1].split(":", 1)[0]
        if isinstance(item, Fault):
            return self.fault(item, stream, key, model)
        answer: Answer = item
        parts = self._parts(answer)
        meta = {"modelVersion": model, "responseId": "resp-fake"}
        if not stream:
            return self.json_raw(200, {"candidates": [{"content": {"role": "model", "parts": parts},
                                                       "finishReason": self._finish(answer), "index": 0}],
                                       "usageMetadata": self._usage(answer), **meta})
        events: list[tuple[str | None, Any]] = []
        stream_parts: list[dict[str, Any]] = []
        for part in parts:
            if set(part) == {"text"} and len(part["text"]) > 8:
                text = part["text"]
                stream_parts.extend({"text": text[i:i + 8]} for i in range(0, len(text), 8))
            else:
                stream_parts.append(part)
        for i, part in enumerate(stream_parts):
            candidate: dict[str, Any] = {"content": {"role": "model", "parts": [part]}, "index": 0}
            event: dict[str, Any] = {"candidates": [candidate], **meta}
            if i == len(stream_parts) - 1:
                candidate["finishReason"] = self._finish(answer)
                event["usageMetadata"] = self._usage(answer)
            else:
                event["usageMetadata"] = {"promptTokenCount": answer.usage[0], "totalTokenCount": answer.usage[0]}
            events.append((None, event))
        if not stream_parts:
            events.append((None, {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]},
                                                  "finishReason": self._finish(answer), "index": 0}],
                                  "usageMetadata": self._usage(answer), **meta}))
        return self.sse(events, cut_after=answer.cut_after)

    def error(self, status: int, rpc: str, message: str, details: list[dict[str, Any]] | None = None) -> Raw:
        error: dict[str, Any] = {"code": status, "message": message, "status": rpc}
        if details:
            error["details"] = details
        return self.json_raw(status, {"error": error})

    def _quota(self, metric: str, quota_id: str, value: str, model: str, retry: str | None, text: str) -> Raw:
        details: list[dict[str, Any]] = [
            {"@type": QUOTA, "violations": [{"quotaMetric": f"generativelanguage.googleapis.com/{metric}",
                                             "quotaId": quota_id,
                                             "quotaDimensions": {"location": "global", "model": model},
                                             "quotaValue": value}]},
            {"@type": HELP, "links": [{"description": "Learn more about Gemini API quotas",
                                       "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
        ]
        if retry:
            details.append({"@type": RETRY, "retryDelay": retry})
        return self.error(429, "RESOURCE_EXHAUSTED", text, details)

    def refusal(self, limit: Limit, wait: float, path: str, body: Any, key: str | None) -> Raw:
        """Gemini states no headers: the 429 names the quota (per minute or per day) and its value."""
        model = path.split("/models/")[-1].split(":")[0] if "/models/" in path else "model"
        period = "PerDay" if limit.window >= 86400 else "PerMinute"
        tokens = limit.dimension != "requests"
        metric = "generate_content_free_tier_input_token_count" if tokens else "generate_content_free_tier_requests"
        quota_id = (f"GenerateContentInputTokensPerModel{period}-FreeTier" if tokens
                    else f"GenerateRequests{period}PerProjectPerModel-FreeTier")
        retry = f"{wait:.3f}s"
        return self._quota(metric, quota_id, str(limit.amount), model, retry,
                           f"You exceeded your current quota. Please retry in {retry}.")

    def fault(self, fault: Fault, stream: bool, key: str | None, model: str) -> Raw:
        name = fault.name
        wait = fault.retry_after if fault.retry_after is not None else 2
        if name == "tpm_input":
            return self._quota("generate_content_free_tier_input_token_count",
                               "GenerateContentInputTokensPerModelPerMinute-FreeTier", "16000", model, f"{wait}s",
                               "You exceeded your current quota, please check your plan and billing details.\n"
                               "* Quota exceeded for metric: generativelanguage.googleapis.com/"
                               f"generate_content_free_tier_input_token_count, limit: 16000, model: {model}\n"
                               f"Please retry in {wait}s.")
        if name == "rate_limit":
            return self._quota("generate_content_free_tier_requests",
                               "GenerateRequestsPerMinutePerProjectPerModel-FreeTier", "10", model, f"{wait}s",
                               f"You exceeded your current quota. Please retry in {wait}s.")
        if name == "daily_quota":
            return self._quota("generate_content_free_tier_requests",
                               "GenerateRequestsPerDayPerProjectPerModel-FreeTier", "250", model, "43s",
                               "You exceeded your current quota, please check your plan and billing details.")
        if name == "overloaded":
            return self.error(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        if name == "server_error":
            return self.error(500, "INTERNAL", "An internal error has occurred.")
        if name == "context_too_long":
            return self.error(400, "INVALID_ARGUMENT",
                              "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).")
        if name == "bad_key":
            return self.error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."
                              + (f" ({key})" if fault.echo_key and key else ""),
                              [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
                                "domain": "googleapis.com",
                                "metadata": {"service": "generativelanguage.googleapis.com"}}])
        if name == "unknown_model":
            return self.error(404, "NOT_FOUND", f"models/{model} is not found for API version v1beta, or is not "
                                                "supported for generateContent.")
        if name == "permission":
            return self.error(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers.")
        if name == "refusal":
            if stream:
                return self.sse([(None, {"promptFeedback": {"blockReason": "SAFETY"},
                                         "usageMetadata": {"promptTokenCount": 4, "totalTokenCount": 4}})])
            return self.json_raw(200, {"promptFeedback": {"blockReason": "SAFETY"},
                                       "usageMetadata": {"promptTokenCount": 4, "totalTokenCount": 4}})
        if name == "mid_stream_error":
            return self.sse([(None, {"candidates": [{"content": {"role": "model", "parts": [{"text": "Hel"}]},
                                                     "index": 0}]}),
                             (None, {"error": {"code": 503, "message": "The model is overloaded.",
                                               "status": "UNAVAILABLE"}})])
        if name == "cut":
            return self.render(Answer(text="This answer will be cut in the middle, never finished", cut_after=2),
                               f"/v1beta/models/{model}:streamGenerateContent", {}, True, key)
        if name == "malformed_call":
            candidate = {"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "MALFORMED_FUNCTION_CALL",
                         "finishMessage": "Malformed function call: print(default_api.search(query=", "index": 0}
            data = {"candidates": [candidate], "usageMetadata": {"promptTokenCount": 5, "totalTokenCount": 5}}
            return self.sse([(None, data)]) if stream else self.json_raw(200, data)
        if name == "drop":
            return Raw(drop=True)
        raise ValueError(f"{self.name} fake has no fault {name!r}")
