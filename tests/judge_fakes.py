"""Fake judge servers: each preset's fake server, answering every grading request from its own text.

A grading run sends one request per cell with different item ids, so a fixed script cannot
answer it. ``judge_fake`` makes a subclass of the preset's fake whose answer is computed by
a ``Replier`` from the request as received over the socket (the USER text, whether it is a
retry); everything else (wire format, streaming, recording, faults queued with ``add``) is
the fake's own, already checked against the official SDKs in tests/providers.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from tests.providers.fakes.base import Answer, FakeServer, Raw
from tests.providers.fakes.presets import PRESET_FAKES

KEY_VARS = {"openai": "OPENAI_API_KEY", "openrouter": "OPENROUTER_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
            "gemini": "GEMINI_API_KEY"}


def texts_of(body: Any) -> list[str]:
    """Every message text of a request body, in order, whatever the wire format."""
    out: list[str] = []
    if not isinstance(body, dict):
        return out
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            out.append(content)
        elif isinstance(content, list):
            out += [b.get("text", "") for b in content if isinstance(b, dict)]
    for content in body.get("contents") or []:
        out += [p.get("text", "") for p in content.get("parts", []) if isinstance(p, dict)]
    return out


def cell_text(body: Any) -> str:
    return next((t for t in texts_of(body) if t.startswith("Cell #")), "")


def is_retry(body: Any) -> bool:
    return any(t.startswith("Your reply could not be used") for t in texts_of(body))


def template(user: str) -> dict[str, Any]:
    return json.loads(user[user.rindex("Reply in this form:\n") + len("Reply in this form:\n"):].strip())


def good_reply(user: str, verdict: Callable[[str, list[str]], str] | None = None) -> str:
    """A valid reply: each item the last allowed verdict (or ``verdict(id, allowed)``), understandability 2."""
    items = {}
    for item_id, entry in template(user)["items"].items():
        allowed = entry["verdict"].split("|")
        items[item_id] = {"verdict": verdict(item_id, allowed) if verdict else allowed[-1], "confidence": 0.8,
                          "reason": "judged from the fenced answer"}
    return json.dumps({"items": items, "understandability": 2})


def cell_number(user: str) -> int:
    return int(re.match(r"Cell #(\d+)", user).group(1))


@dataclass
class Replier:
    """What the fake judge answers: ``special[n]`` (a list of texts, one per request of cell n) or a good reply."""

    special: dict[int, list[str]] = field(default_factory=dict)
    verdict: Callable[[str, list[str]], str] | None = None
    seen: list[tuple[int, bool]] = field(default_factory=list)

    def __call__(self, body: Any) -> str:
        user = cell_text(body)
        n = cell_number(user)
        self.seen.append((n, is_retry(body)))
        queue = self.special.get(n)
        if queue:
            return queue.pop(0)
        return good_reply(user, self.verdict)


def judge_fake(preset: str, replier: Replier, **kwargs: Any) -> tuple[FakeServer, str, str]:
    """(server, base URL, model) of a fake judge for ``preset``; faults queued with ``add`` come first."""
    cls, suffix, model = PRESET_FAKES[preset]

    class JudgeFake(cls):  # type: ignore[misc, valid-type]
        def route(self, method: str, path: str, body: Any) -> Raw | None:
            own = super().route(method, path, body)
            if own is not None or self.script or not cell_text(body):
                return own
            return self.render(Answer(text=replier(body)), path, body, self.wants_stream(path, body), None)

    server = JudgeFake(**kwargs)
    return server, server.url + suffix, model
