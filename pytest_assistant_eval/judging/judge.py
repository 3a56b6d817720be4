"""Asking a judge for one cell (S6.4, S6.6, S6.8): a saved judgment, or a request and at most one retry.

``ask`` takes a ``JudgeRequest`` and something that answers texts (``ApiAnswerer`` wraps a
provider of the ordinary provider layer: its keys, retries, pacing, daily budget and error
codes). A valid reply is saved under the request's key; an invalid one is asked again once
with the problems named field by field; a second invalid reply is returned unparsed for
the owner. Provider errors are not caught here: the caller stops the run and keeps what is
graded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_assistant_eval.messages import Message
from pytest_assistant_eval.judging.reply import ParsedReply, parse_reply, retry_feedback
from pytest_assistant_eval.judging.request import JudgeRequest
from pytest_assistant_eval.judging.saved import SavedJudgments


class Answerer(Protocol):
    route: str

    def answer(self, request: JudgeRequest, extra: list[Message]) -> str: ...


@dataclass
class Judgment:
    """What a judge said about one cell (or why it could not be read)."""

    verdicts: dict[str, dict[str, Any]] = field(default_factory=dict)
    understandability: int | None = None
    relaxed: list[str] = field(default_factory=list)
    route: str = "api"
    requests: int = 0
    reused: bool = False
    unparsed: dict[str, Any] | None = None  # replies, problems: for the owner
    retried: bool = False

    @property
    def ok(self) -> bool:
        return self.unparsed is None


class ApiAnswerer:
    """A provider of the provider layer answering judge requests."""

    route = "api"

    def __init__(self, provider: Any, model: str, *, stream: bool = True) -> None:
        self.provider = provider
        self.model = model
        self.stream = stream

    def answer(self, request: JudgeRequest, extra: list[Message]) -> str:
        response = self.provider.complete(request.chat(self.model, stream=self.stream, extra=extra))
        return response.message.content or ""


def from_parsed(parsed: ParsedReply, *, route: str, requests: int, retried: bool) -> Judgment:
    return Judgment(verdicts=parsed.verdicts, understandability=parsed.understandability, relaxed=parsed.relaxed,
                    route=route, requests=requests, retried=retried)


def save(saved: SavedJudgments, grader: str, request: JudgeRequest, judgment: Judgment, replies: list[str]) -> None:
    saved.put(grader, request.key_sha256, {
        "request_sha256": request.request_sha256, "route": judgment.route, "replies": replies,
        "verdicts": judgment.verdicts, "understandability": judgment.understandability,
        "relaxed": judgment.relaxed, "retried": judgment.retried,
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})


def reuse(saved: SavedJudgments, grader: str, request: JudgeRequest) -> Judgment | None:
    data = saved.get(grader, request.key_sha256)
    if data is None:
        return None
    return Judgment(verdicts=data["verdicts"], understandability=data["understandability"],
                    relaxed=list(data.get("relaxed") or []), route=data.get("route", "api"), requests=0, reused=True,
                    retried=bool(data.get("retried")))


def retry_messages(first_reply: str, problems: list[str]) -> list[Message]:
    """The retry's added turns: the first reply as the assistant's, then what was wrong."""
    return [Message(role="assistant", content=first_reply), Message(role="user", content=retry_feedback(problems))]


def ask(request: JudgeRequest, answerer: Answerer, saved: SavedJudgments, grader: str) -> Judgment:
    """The judgment of one cell: saved, or asked (once more when the first reply is invalid)."""
    found = reuse(saved, grader, request)
    if found is not None:
        return found
    first = answerer.answer(request, [])
    parsed = parse_reply(first, request)
    if parsed.ok:
        judgment = from_parsed(parsed, route=answerer.route, requests=1, retried=False)
        save(saved, grader, request, judgment, [first])
        return judgment
    second = answerer.answer(request, retry_messages(first, parsed.problems))
    again = parse_reply(second, request)
    if again.ok:
        judgment = from_parsed(again, route=answerer.route, requests=2, retried=True)
        save(saved, grader, request, judgment, [first, second])
        return judgment
    return Judgment(route=answerer.route, requests=2, retried=True,
                    unparsed={"replies": [first, second], "problems": [parsed.problems, again.problems]})
