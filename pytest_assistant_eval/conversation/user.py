"""The simulated user: the structured reply shape and the scripted user (S5.2).

The scripted user answers the built-in reference assistants deterministically from the
task: it gives a fact only when the assistant asks for it, and an approval only when the
proposed action falls within the task's conditions. Its reply carries a structured side
channel (facts disclosed, approvals given, done) that the assistant never sees and the
behaviour checks read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_assistant_eval.cases.matchers import matches
from pytest_assistant_eval.cases.model import Approval, Task
from pytest_assistant_eval.conversation.messages import Message


@dataclass
class UserReply:
    message: str
    facts_disclosed: list[str] = field(default_factory=list)
    approvals_given: list[str] = field(default_factory=list)
    approvals_refused: list[str] = field(default_factory=list)
    done: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "facts_disclosed": list(self.facts_disclosed),
            "approvals_given": list(self.approvals_given),
            "approvals_refused": list(self.approvals_refused),
            "done": self.done,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UserReply:
        return cls(
            message=data["message"],
            facts_disclosed=list(data.get("facts_disclosed") or []),
            approvals_given=list(data.get("approvals_given") or []),
            approvals_refused=list(data.get("approvals_refused") or []),
            done=bool(data.get("done")),
        )


class SimulatedUser(Protocol):
    kind: str

    def reply(self, visible: list[Message], state: dict[str, Any]) -> UserReply:
        """Answer the assistant's last message; ``state`` is saved with the conversation."""
        ...


# Words that mark a request for permission, by the tool they would cover.
_ACTION_WORDS: dict[str, tuple[str, ...]] = {
    "send_message": ("send", "message", "email", "write to", "reply"),
    "create_event": ("create", "schedule", "add", "put", "event", "meeting"),
    "move_event": ("move", "reschedule", "shift"),
    "cancel_event": ("cancel", "call off"),
    "book_listing": ("book", "reserve"),
    "cancel_booking": ("cancel",),
    "charge_card": ("charge", "pay"),
}
_NUMBER = re.compile(r"(?<![\w-])(\d+(?:[.,]\d+)?)\s*(?:EUR|€)")
_DONE_TEXT = "Thank you, that is all I needed."
_UNCLEAR_TEXT = "I am not sure what you need from me. Please go ahead with what I asked, or tell me what is missing."


def _asks(text: str) -> bool:
    return "?" in text


def _approval_requested(approval: Approval, text: str) -> bool:
    lowered = text.lower()
    words = _ACTION_WORDS.get(approval.tool, (approval.tool.split("_")[0],))
    if not any(word in lowered for word in words):
        return False
    # The proposal must name the values the approval is about (e.g. the listing id).
    for matcher in approval.args.values():
        if matcher.kind in ("exact", "normalised") and isinstance(matcher.value, str):
            if matcher.value.lower() not in lowered:
                return False
    return True


def _within_amount(approval: Approval, text: str) -> bool:
    if approval.max_amount is None:
        return True
    amounts = [float(m.group(1).replace(",", ".")) for m in _NUMBER.finditer(text)]
    if not amounts:
        return False  # a money action proposed without its cost is not approved
    return max(amounts) <= approval.max_amount + 1e-9


class ScriptedUser:
    """Deterministic user for the reference assistants."""

    kind = "scripted"

    def __init__(self, task: Task) -> None:
        self.task = task

    def reply(self, visible: list[Message], state: dict[str, Any]) -> UserReply:
        last = next((m for m in reversed(visible) if m.role == "assistant"), None)
        text = last.content if last else ""
        disclosed: list[str] = state.setdefault("facts_disclosed", [])
        approved: list[str] = state.setdefault("approvals_given", [])
        if not _asks(text):
            return UserReply(_DONE_TEXT, done=True)
        lowered = text.lower()
        parts: list[str] = []
        reply = UserReply("")
        # A request for permission is answered on its own; facts only when asked for them.
        for approval in self.task.approvals:
            if approval.id in approved or not _approval_requested(approval, text):
                continue
            if approval.grant and _within_amount(approval, text):
                parts.append("Yes, please go ahead.")
                reply.approvals_given.append(approval.id)
                approved.append(approval.id)
            else:
                limit = f" It must not cost more than {approval.max_amount:g} {approval.currency or 'EUR'}." if approval.max_amount else ""
                parts.append(f"No, please do not do that.{limit}")
                reply.approvals_refused.append(approval.id)
            break
        if not parts:
            for fact in self.task.facts:
                if any(k.lower() in lowered for k in fact.keywords):
                    parts.append(f"{fact.description[:1].upper()}{fact.description[1:]}: {fact.value}.")
                    reply.facts_disclosed.append(fact.id)
                    if fact.id not in disclosed:
                        disclosed.append(fact.id)
        reply.message = " ".join(parts) if parts else _UNCLEAR_TEXT
        return reply


def check_user_reply(task: Task, reply: UserReply) -> str | None:
    """The independent code check of a user's consequential answers (S5.2).

    Returns why the reply is a user error, or None. A disclosed fact the task does not
    have, or an approval it does not allow, makes the run a ``user_error``.
    """
    fact_ids = {f.id for f in task.facts}
    for fact_id in reply.facts_disclosed:
        if fact_id not in fact_ids:
            return f"the user disclosed a fact the task does not have: {fact_id}"
    allowed = {a.id for a in task.approvals if a.grant}
    for approval_id in reply.approvals_given:
        if approval_id not in allowed:
            return f"the user gave an approval the task does not allow: {approval_id}"
    return None


def approval_covers(approval: Approval, tool: str, arguments: dict[str, Any], amount: float | None) -> bool:
    """Whether an approval covers one call (tool, argument conditions, amount)."""
    if approval.tool != tool or not approval.grant:
        return False
    for name, matcher in approval.args.items():
        if name not in arguments or not matches(matcher, arguments[name]):
            return False
    if approval.max_amount is not None and amount is not None and amount > approval.max_amount + 1e-9:
        return False
    return True
