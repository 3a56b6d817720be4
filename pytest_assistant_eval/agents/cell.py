"""What an agent's factory is given: one cell's instructions, tools, limits and tool access (issue 33).

``FACTORY(cell)`` is called once per cell (and once more when ``--resume`` continues a cell: a
fresh agent, told where the cell stands by ``resumed_from_turn`` and ``history``). docs/agents.md
is the contract; this class is its implementation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_assistant_eval.agents.recorder import ToolRecorder

__all__ = ["AgentCell", "AgentLimits"]


@dataclass(frozen=True)
class AgentLimits:
    """The level's caps as an agent meets them (the same numbers a model's cell has)."""

    max_tool_calls: int  # per user turn; a call past it is refused ("tool call cap reached") and recorded
    max_rounds: int  # a model's rounds per turn (an agent's own loop is its own; not enforced on it)
    max_output_tokens: int  # the level's output limit of a model's answer (a guide for the agent's model)
    result_cap_chars: int  # a tool result longer than this is cut, as a model is shown it
    context_window: int
    max_user_turns: int


class AgentCell:
    """One cell as an agent sees it."""

    def __init__(self, *, cell_id: str, kind: str, level: Any, limits: Any, recorder: ToolRecorder,
                 resumed_from_turn: int | None = None, history: list[dict[str, str]] | None = None) -> None:
        self.cell_id = cell_id
        self.level = level.name
        self.case_kind = "task" if kind == "task" else "question"
        self.instructions = level.instructions
        self.tools = [t.to_dict() for t in level.tools]
        self.limits = AgentLimits(level.max_tool_calls, level.max_rounds, level.max_output_tokens,
                                  level.result_cap_chars, level.context_window, limits.max_user_turns)
        self.resumed_from_turn = resumed_from_turn
        self.history = list(history or [])
        self._recorder = recorder
        self._server: Any = None

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call one of the cell's tools; the JSON result a model is shown, as a dict."""
        return self._recorder.call(name, {} if arguments is None else arguments)

    @property
    def mcp_url(self) -> str:
        """The cell's tools over MCP (streamable HTTP on 127.0.0.1), started on first use."""
        if self._server is None:
            from pytest_assistant_eval.agents.mcp_server import HTTPToolServer

            self._server = HTTPToolServer(self._recorder, self.tools)
            self._server.start()
        return self._server.url

    def close(self) -> None:
        if self._server is not None:
            self._server.stop()
            self._server = None
