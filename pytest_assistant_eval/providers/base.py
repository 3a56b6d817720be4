"""The seam between the conversation loop and anything that answers a chat request.

A provider is anything with ``complete(request) -> ChatResponse``: the scripted
reference assistants, the scripted simulated user and every HTTP wire format. Errors
are raised as ``ProviderError`` subclasses (``providers/errors.py``) with a code, so the
loop can decide what to save without knowing which provider failed.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from pytest_assistant_eval.messages import ChatRequest, ChatResponse


@runtime_checkable
class Provider(Protocol):
    preset: str
    model: str

    def complete(self, request: ChatRequest) -> ChatResponse:
        """Answer one request or raise a ProviderError."""
        ...

    def close(self) -> None: ...
