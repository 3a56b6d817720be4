"""The small protocol a world of services implements (S1.5).

The shipped SQLite world is one backend; another benchmark's environment can be
another. The loop, the checks and the records only ever use this surface.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

CallStatus = Literal["ok", "error", "refused"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool with its JSON-schema parameters and what calling it means.

    ``consequential`` tools change the world (send, create, move, book, cancel, charge);
    ``affects_others`` and ``spends_money`` say which must be reported back (S6.1).
    """

    name: str
    service: str
    description: str
    parameters: dict[str, Any]
    consequential: bool = False
    affects_others: bool = False
    spends_money: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "service": self.service,
            "description": self.description,
            "parameters": self.parameters,
            "consequential": self.consequential,
            "affects_others": self.affects_others,
            "spends_money": self.spends_money,
        }


@dataclass
class ToolResult:
    """What a call returned: ``ok`` with data, ``error`` (bad arguments) or ``refused``."""

    status: CallStatus
    data: Any = None
    error: str | None = None
    #: The backend's own return value, for a suite that shows results as its benchmark does
    #: (AgentDojo: ``(value, error)`` of its runtime); never serialised, never compared.
    raw: Any = field(default=None, repr=False, compare=False)

    def to_text(self) -> str:
        """The JSON text the assistant sees (before the level's result cap)."""
        import json

        if self.status == "ok":
            body: dict[str, Any] = {"ok": True, "result": self.data}
        elif self.status == "refused":
            body = {"ok": False, "refused": True, "reason": self.error}
        else:
            body = {"ok": False, "error": self.error}
        return json.dumps(body, ensure_ascii=False, sort_keys=True)


@dataclass
class LogEntry:
    """One service request and its response, in the order they happened (S1.4)."""

    seq: int
    turn: int
    round: int
    tool: str
    arguments: dict[str, Any]
    status: CallStatus
    response: Any
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "turn": self.turn,
            "round": self.round,
            "tool": self.tool,
            "arguments": self.arguments,
            "status": self.status,
            "response": self.response,
            "error": self.error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LogEntry:
        return cls(**data)


@dataclass(frozen=True)
class ForbiddenCall:
    """A restriction the world enforces by refusing: ``tool`` with these exact argument values.

    ``args`` may be empty (the tool is forbidden outright). ``max_amount`` (in
    ``currency``) refuses a money-spending call above it.
    """

    id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    max_amount: float | None = None
    currency: str | None = None
    reason: str = "not allowed for this task"


@dataclass(frozen=True)
class Policy:
    """Per-cell rules on top of the world's own (card limits, known recipients)."""

    forbidden: tuple[ForbiddenCall, ...] = ()


State = dict[str, list[dict[str, Any]]]
"""A state: table name -> rows (dicts), rows sorted by primary key. JSON-able."""


class WorldBackend(Protocol):
    def list_tools(self) -> list[ToolSpec]: ...

    def call(self, name: str, arguments: dict[str, Any], *, turn: int, round: int) -> ToolResult:
        """Run one tool call; never raises for bad arguments (returns status ``error``)."""
        ...

    @property
    def log(self) -> list[LogEntry]: ...

    def snapshot(self) -> State: ...

    def restore(self, state: State) -> None: ...

    def describe_state(self) -> State:
        """The state as checks see it (same shape as a snapshot)."""
        ...

    def close(self) -> None:
        """Let go of what the cell's copy holds (the session calls it once the cell is done)."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class FieldChange:
    """One changed field; a row added or removed has ``field`` None and the whole row on one side."""

    table: str
    key: str
    field: str | None
    before: Any
    after: Any

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "key": self.key, "field": self.field, "before": self.before, "after": self.after}
