"""What the conversation asks of a simulated user (S5.2): the structured reply and the protocol.

Every suite's user (the calibration's scripted and model-played users, or none) answers the
assistant's last message with a :class:`UserReply`: the text the assistant reads and a
structured side channel (facts disclosed, approvals given or refused, done) that the assistant
never sees and the behaviour checks read. The loop knows a user only through this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from pytest_assistant_eval.messages import Message

__all__ = ["UserReply", "SimulatedUser"]


@dataclass
class UserReply:
    message: str
    facts_disclosed: list[str] = field(default_factory=list)
    approvals_given: list[str] = field(default_factory=list)
    approvals_refused: list[str] = field(default_factory=list)
    done: bool = False
    decision: dict[str, Any] | None = None  # why it answered so (which approval, which words)

    def to_dict(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "facts_disclosed": list(self.facts_disclosed),
            "approvals_given": list(self.approvals_given),
            "approvals_refused": list(self.approvals_refused),
            "done": self.done,
            **({"decision": self.decision} if self.decision is not None else {}),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> UserReply:
        return cls(
            message=data["message"],
            facts_disclosed=list(data.get("facts_disclosed") or []),
            approvals_given=list(data.get("approvals_given") or []),
            approvals_refused=list(data.get("approvals_refused") or []),
            done=bool(data.get("done")),
            decision=data.get("decision"),
        )


class SimulatedUser(Protocol):
    kind: str

    def reply(self, visible: list[Message], state: dict[str, Any]) -> UserReply:
        """Answer the assistant's last message; ``state`` is saved with the conversation."""
        ...
