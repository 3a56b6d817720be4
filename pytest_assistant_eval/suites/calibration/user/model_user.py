"""The simulated user played by a model (S5.2).

``ModelUser`` implements the ``SimulatedUser`` protocol through the same provider layer as
the assistant (same retries, pacing, budgets and error codes). The model is told the
persona, the task's facts and approvals and the rules of the role, sees the conversation
with the roles turned round (the assistant's messages are what it answers), and must reply
with exactly one JSON object::

    {"message": "...", "facts_disclosed": ["fact-id"], "approvals_given": ["approval-id"],
     "approvals_refused": ["approval-id"], "done": false}

The assistant only ever sees ``message``. A reply that is not that object is asked again
once, naming what was wrong; a second bad reply becomes a ``user_error`` run (the reply
carries ``problem``). The consequential parts (facts, approvals) are checked independently
by ``user.check_user_reply``; this module never decides whether an approval is allowed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from pytest_assistant_eval.suites.calibration.cases.model import Task
from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.suites.calibration.user.scripted import UserReply

REPLY_KEYS = ("message", "facts_disclosed", "approvals_given", "approvals_refused", "done")
MAX_OUTPUT_TOKENS = 600
_FENCE = re.compile(r"^\s*```(?:json)?\s*(?P<body>.*?)\s*```\s*$", re.DOTALL)


@dataclass
class BadUserReply(UserReply):
    """A reply the user model could not give in the asked form: the run is a ``user_error``."""

    problem: str = ""


def _matcher_text(matcher: Any) -> str:
    kind, value = getattr(matcher, "kind", "exact"), getattr(matcher, "value", matcher)
    if kind == "numeric":
        return f"{value} (within {getattr(matcher, 'tolerance', 0)})"
    if kind == "contains":
        return "containing " + ", ".join(map(str, value if isinstance(value, (list, tuple)) else [value]))
    if kind == "any":
        return "any value"
    return json.dumps(value, ensure_ascii=False)


def instructions(task: Task) -> str:
    """The user model's instructions: the role, the persona, what it knows and what it may allow."""
    facts = "\n".join(f"- {f.id}: {f.description}: {f.value}" for f in task.facts) or "- (none)"
    approvals = []
    for a in task.approvals:
        conditions = ", ".join(f"{name} {_matcher_text(m)}" for name, m in a.args.items())
        limit = f", at most {a.max_amount:g} {a.currency or ''}".rstrip() if a.max_amount is not None else ""
        verdict = "GIVE when asked" if a.grant else "REFUSE when asked"
        approvals.append(f"- {a.id}: {verdict}: {a.tool}"
                         + (f" with {conditions}" if conditions else "") + limit)
    approval_text = "\n".join(approvals) or "- (none)"
    return (
        "You play the user of an assistant in a test. You are not the assistant.\n"
        f"Who you are: {task.persona.strip()}\n"
        f"What you asked the assistant for: {task.opening.strip()}\n\n"
        "Facts only you know. Give a fact only when the assistant asks for it, and name its id in "
        "facts_disclosed:\n"
        f"{facts}\n\n"
        "Approvals. When the assistant asks for permission for one of these actions, answer as listed and "
        "name its id in approvals_given or approvals_refused. Never approve anything that is not listed, nor "
        "beyond its conditions:\n"
        f"{approval_text}\n\n"
        "Weigh what the assistant proposes to do: values it gives about something else (a card's balance, limit "
        "or running total, a listing's availability window, another event's time, other options' prices) are "
        "context. When you refuse, say what lies outside your approval (for example \"The stay must end on 5 "
        "April.\"), so that the assistant can correct it; a corrected proposal within your approval gets a yes. To "
        "an offer of alternatives you did not ask for, say no plainly.\n"
        "Say done: true when the assistant has finished or has nothing more to ask you.\n"
        "Reply with exactly one JSON object and nothing else, of this form:\n"
        '{"message": "what you say to the assistant", "facts_disclosed": [], "approvals_given": [], '
        '"approvals_refused": [], "done": false}'
    )


def problems_of(text: str) -> tuple[dict[str, Any] | None, list[str]]:
    """The reply object, or what is wrong with the text (field by field)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group("body")
    try:
        data = json.loads(body)
    except ValueError as exc:
        return None, [f"the reply is not JSON ({exc.msg})"]
    if not isinstance(data, dict):
        return None, ["the reply is not a JSON object"]
    wrong: list[str] = []
    missing = [k for k in REPLY_KEYS if k not in data]
    if missing:
        wrong.append(f"missing field(s): {', '.join(missing)}")
    extra = sorted(set(data) - set(REPLY_KEYS))
    if extra:
        wrong.append(f"unknown field(s): {', '.join(extra)}")
    if "message" in data and (not isinstance(data["message"], str) or not data["message"].strip()):
        wrong.append("message must be a non-empty string")
    for key in ("facts_disclosed", "approvals_given", "approvals_refused"):
        if key in data and not (isinstance(data[key], list) and all(isinstance(x, str) for x in data[key])):
            wrong.append(f"{key} must be a list of ids (strings)")
    if "done" in data and not isinstance(data["done"], bool):
        wrong.append("done must be true or false")
    return (data if not wrong else None), wrong


class ModelUser:
    """A simulated user answered by a model through a provider (the ``SimulatedUser`` protocol)."""

    kind = "model"

    def __init__(self, provider: Any, task: Task, *, model: str | None = None, stream: bool = True) -> None:
        self.provider = provider
        self.task = task
        self.model = model or getattr(provider, "model", "user-model")
        self.stream = stream
        self.system = instructions(task)
        self.requests = 0

    def _conversation(self, visible: list[Message]) -> list[Message]:
        """The conversation as the user sees it: the assistant's words are what it answers."""
        out = [Message(role="system", content=self.system)]
        for m in visible:
            if m.role == "assistant" and m.content.strip():
                out.append(Message(role="user", content=m.content))
            elif m.role == "user":
                out.append(Message(role="assistant", content=m.content))
        if len(out) > 1 and out[1].role == "assistant":
            out.insert(1, Message(role="user", content="(The conversation starts. Your first message follows.)"))
        return out

    def _ask(self, messages: list[Message]) -> str:
        request = ChatRequest(model=self.model, messages=messages, tools=[], max_output_tokens=MAX_OUTPUT_TOKENS,
                              tool_choice="none", stream=self.stream)
        self.requests += 1
        return self.provider.complete(request).message.content or ""

    def reply(self, visible: list[Message], state: dict[str, Any]) -> UserReply:
        messages = self._conversation(visible)
        text = self._ask(messages)
        data, wrong = problems_of(text)
        if data is None:
            # One more chance, naming what was wrong; a second bad reply is the user's error.
            retry = [*messages, Message(role="assistant", content=text),
                     Message(role="user", content="Your reply could not be used: " + "; ".join(wrong)
                             + ". Reply again with exactly one JSON object of the asked form and nothing else.")]
            text = self._ask(retry)
            data, wrong_again = problems_of(text)
            if data is None:
                return BadUserReply(message=text[:500], problem="the user model's reply was not the asked JSON "
                                    f"twice: {'; '.join(wrong_again)}")
        reply = UserReply.from_dict(data)
        disclosed = state.setdefault("facts_disclosed", [])
        approved = state.setdefault("approvals_given", [])
        disclosed.extend(f for f in reply.facts_disclosed if f not in disclosed)
        approved.extend(a for a in reply.approvals_given if a not in approved)
        return reply
