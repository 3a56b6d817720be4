"""OpenRouter: the OpenAI wire format plus routing (``provider.data_collection``) and free plans.

Free variants (``:free``) route to providers that may keep request data; without
``--relax-data-collection`` we ask for ``data_collection: deny`` and the run records which
one it used (S4.6). OpenRouter's keep-alive comments and in-band stream errors are handled
by the shared SSE parser and :func:`classify_openai`.
"""

from __future__ import annotations

from typing import Any

from pytest_assistant_eval.messages import ChatRequest
from pytest_assistant_eval.providers.openai_compat import OpenAICompatProvider

OPENROUTER_BASE_URL = "https://openrouter.ai/api/v1"

#: Requests per day allowed by default for a free model (S4.6), below OpenRouter's smallest cap.
FREE_DAILY_REQUESTS = 45
#: OpenRouter's free models allow 20 requests a minute: start at that spacing.
FREE_START_INTERVAL = 3.0


def is_free_model(model: str) -> bool:
    return model.endswith(":free")


class OpenRouterProvider(OpenAICompatProvider):
    preset = "openrouter"
    wire_format = "openai"
    max_tokens_field = "max_tokens"
    stream_usage_option = False  # usage always comes in the last chunk

    def __init__(self, model: str, *, relax_data_collection: bool = False, **kwargs: Any) -> None:
        super().__init__(model, **kwargs)
        self.relax_data_collection = relax_data_collection

    @property
    def data_collection(self) -> str:
        return "allow" if self.relax_data_collection else "deny"

    def _headers(self) -> dict[str, str]:
        return super()._headers() | {"x-title": "pytest-assistant-eval"}

    def _body(self, request: ChatRequest, stream: bool) -> dict[str, Any]:
        body = super()._body(request, stream)
        body["provider"] = {"data_collection": self.data_collection}
        return body
