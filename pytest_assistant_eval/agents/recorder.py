"""An agent's tool calls, recorded through the conversation loop's own path (issue 33).

Each call is shown to the loop as if a model had asked for it: one assistant round with that one
tool call, then the loop's ``run_tool_calls``, the same code a model's calls go through. So the
service log entry (seq, turn, round, tool, arguments, status, response, error), the transcript's
tool entry, the tool-call cap (a call past it gets the loop's "tool call cap reached" result,
is recorded as ``capped`` and in ``cap_hits``, and never reaches a service), unknown tools and
bad arguments (the same error results) and the result cap are exactly a model's. Calls come
from the agent's thread (``cell.call_tool``) or the MCP server's (``cell.mcp_url``); one lock
keeps them in order. A call while no turn runs is answered with an error and not recorded.
"""

from __future__ import annotations

import json
import threading
from typing import Any

from pytest_assistant_eval.conversation.loop import Conversation, UnreadableToolCalls
from pytest_assistant_eval.messages import Message, ToolCall

__all__ = ["ToolRecorder", "result_value", "NO_TURN"]

NO_TURN = "no user turn is running: an agent calls its tools from inside turn()"


def result_value(text: str, status: str, truncated: bool) -> dict[str, Any]:
    """What ``cell.call_tool`` returns: the JSON object the model is shown, parsed; a result cut
    by the level's result cap (or not JSON) as ``{"ok", "truncated", "text"}``."""
    if not truncated:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
    return {"ok": status == "ok", "truncated": truncated, "text": text}


class ToolRecorder:
    """Records one cell's tool calls into its conversation (thread-safe)."""

    def __init__(self, conversation: Conversation, *, open_: bool = False) -> None:
        self.conversation = conversation
        self.open = open_  # True while a turn runs (serve-tools: always)
        self.unreadable: UnreadableToolCalls | None = None  # raised by the provider once the turn is over
        self._lock = threading.Lock()

    def shut(self) -> None:
        """Take no more calls; a call under way finishes first (a turn left behind past its deadline
        may still be calling from its own thread)."""
        with self._lock:
            self.open = False

    def call(self, name: Any, arguments: Any) -> dict[str, Any]:
        text, status, truncated = self.call_text(name, arguments)
        return result_value(text, status, truncated)

    def call_text(self, name: Any, arguments: Any) -> tuple[str, str, bool]:
        """The text the model would be shown, its status (ok, error, refused, capped) and whether cut."""
        with self._lock:
            if not self.open:
                return json.dumps({"ok": False, "error": NO_TURN}), "error", False
            return self._record(str(name), arguments)

    def _record(self, name: str, arguments: Any) -> tuple[str, str, bool]:
        conversation = self.conversation
        state = conversation.state
        state.round += 1
        call_id = f"agent_{state.turn}_{state.round}"
        problem = None
        try:
            args = json.loads(json.dumps(arguments, allow_nan=False))
        except (TypeError, ValueError) as exc:
            args, problem = {}, f"the arguments are not JSON ({exc})"
        if problem is None and not isinstance(args, dict):
            args, problem = {}, f"the arguments must be a JSON object, got {type(arguments).__name__}"
        call = ToolCall(call_id, name, args, raw_arguments=None if problem is None else repr(arguments)[:2000],
                        parse_error=problem)
        message = Message(role="assistant", content="", tool_calls=[call])
        state.messages.append(message)
        state.transcript.append({"type": "assistant", "turn": state.turn, "round": state.round, "text": "",
                                 "tool_calls": [call.to_dict()], "stop_reason": "tool_calls"})
        try:
            conversation.run_tool_calls(message)
        except UnreadableToolCalls as exc:  # three unreadable calls in a row: as for a model, once the turn ends
            self.unreadable = exc
        entry = next(e for e in reversed(state.transcript) if e.get("type") == "tool" and e.get("call_id") == call_id)
        return entry["text"], entry["status"], bool(entry["truncated"])
