"""The agent preset's provider: an agent answers one user turn per request of the loop (issue 33).

The conversation loop, the simulated user, the checkpoints, the checks and the tables stay
the ones a model's cell has: the loop asks this provider once per user turn (the request's
last message is the user's); the provider hands that message to ``agent.turn`` and answers
with the agent's final message. The agent's tool calls are recorded while the turn runs
(``recorder``), before that answer, exactly where a model's calls would be. An exception in
``turn`` (or in the factory) ends the cell as the graded outcome ``agent_error``, with the
traceback's last line in the record's ``agent.error``; the run goes on.

Checkpoints: the session saves one before every request, that is before every user turn. A
cell continued by ``--resume`` starts again from the last turn not completed, with a fresh
agent (``FACTORY(cell)`` once more, ``cell.resumed_from_turn`` and ``cell.history`` set): the
agent's own state is not restored, and tool calls of an interrupted turn are undone with the
world. What the agent's own model calls cost is its own; ``usage()``, when the agent has it,
gives cumulative tokens, recorded per turn in the record's ``requests`` and in all in ``agent``.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import threading
import time
from pathlib import Path
from typing import Any, Sequence

from pytest_assistant_eval.agents.cell import AgentCell
from pytest_assistant_eval.agents.loading import last_line, load_factory
from pytest_assistant_eval.agents.recorder import ToolRecorder
from pytest_assistant_eval.messages import ChatRequest, ChatResponse, Message, Usage
from pytest_assistant_eval.providers.errors import GradedError

__all__ = ["AgentProvider", "AgentError", "USAGE_FIELDS"]

USAGE_FIELDS = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens")
#: The longest one turn may take when the run sets no ``--request-deadline`` (a model's default too).
DEFAULT_TURN_DEADLINE = 600.0


class AgentError(GradedError):
    """The agent's turn raised: the cell ends (graded), the run goes on."""

    code = "agent_error"


class AgentTimeout(AgentError):
    """The agent's turn outlived the run's deadline: the cell ends as an error, the run goes on."""


class AgentProvider:
    """Drives one agent per cell; made once per model and process, bound to each cell in turn."""

    preset = "agent"

    def __init__(self, model: str, paths: Sequence[Path] = (), deadline: float | None = None) -> None:
        self.model = model
        # One user turn gets what one model request gets (``--request-deadline``): an agent that
        # hangs (a stuck model call of its own, a loop that never ends) must not hold the run.
        self.deadline = float(deadline) if deadline else DEFAULT_TURN_DEADLINE
        self.route = "agent"
        self.factory = load_factory(model, paths)
        self.attempts: list[Any] = []
        self._clear()

    def _clear(self) -> None:
        self.cell: AgentCell | None = None
        self.recorder: ToolRecorder | None = None
        self.agent: Any = None
        self.error: str | None = None
        self.usage_error: str | None = None
        self.own_instructions: str | None = None
        self.usage_seen: dict[str, int] = {}
        self.loop: asyncio.AbstractEventLoop | None = None

    # -- the session's hooks --------------------------------------------------------
    def bind_cell(self, conversation: Any, cell: Any, restored: bool) -> None:
        """A new cell: a recorder into its conversation and the cell object the factory is given."""
        self._clear()
        self.recorder = ToolRecorder(conversation)
        state = conversation.state
        history = [{"role": "user" if e["type"] == "user" else "assistant", "content": e.get("text") or ""}
                   for e in state.transcript
                   if e.get("type") in ("user", "assistant") and e.get("turn", 0) < state.turn and e.get("text")]
        self.cell = AgentCell(cell_id=cell.cell_id, kind=getattr(cell, "kind", "task"), level=conversation.level,
                              limits=conversation.limits, recorder=self.recorder,
                              resumed_from_turn=state.turn if restored else None, history=history)

    def end_cell(self) -> dict[str, Any]:
        """Close the agent and its MCP server; the record's ``agent`` fields."""
        close_error = None
        if self.agent is not None and hasattr(self.agent, "close"):
            try:
                self._run(self.agent.close)
            except Exception as exc:  # a failing close is said, never the run's end
                close_error = last_line(exc)
        self._close_loop()
        if self.cell is not None:
            self.cell.close()
        own = self.own_instructions
        fields = {
            "factory": self.model,
            "instructions": "own" if own else "level",
            "own_instructions_sha256": hashlib.sha256(own.encode("utf-8")).hexdigest() if own else None,
            "usage": self._cell_usage(),
            "error": self.error,
            "usage_error": self.usage_error,
            "close_error": close_error,
            "resumed_from_turn": self.cell.resumed_from_turn if self.cell is not None else None,
        }
        self._clear()
        return fields

    def _cell_usage(self) -> dict[str, int] | None:
        """The tokens of every turn of the cell as the requests log has them (a resumed cell's earlier
        turns too: the agent's own count starts again with the fresh agent)."""
        if self.recorder is None:
            return None
        total: dict[str, int] = {}
        for request in self.recorder.conversation.requests_log:
            for name, value in (request.get("usage") or {}).items():
                if name in USAGE_FIELDS and value is not None:
                    total[name] = total.get(name, 0) + int(value)
        return total or None

    # -- one turn -------------------------------------------------------------------
    def _run(self, fn: Any, *args: Any) -> Any:
        """Call one of the agent's methods; an async one is awaited on the cell's event loop."""
        result = fn(*args)
        return self._await(result) if inspect.isawaitable(result) else result

    def _await(self, awaitable: Any, timeout: float | None = None) -> Any:
        """Await in the cell's one driver task: an async context the agent enters in one turn (an MCP
        session) and leaves in ``close`` is entered and left in the same task, as anyio requires
        (so the deadline is ``asyncio.timeout`` inside that task, never ``wait_for``'s task of its own)."""
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
            self.queue: asyncio.Queue[Any] = asyncio.Queue()
            self.driver = self.loop.create_task(self._drive())
        done = self.loop.create_future()
        self.queue.put_nowait((awaitable, done, timeout))
        return self.loop.run_until_complete(done)

    async def _drive(self) -> None:
        while True:
            awaitable, done, timeout = await self.queue.get()
            if awaitable is None:
                return
            try:
                async with asyncio.timeout(timeout):
                    value = await awaitable
                done.set_result(value)
            except (Exception, SystemExit) as exc:
                done.set_exception(exc)

    def _close_loop(self) -> None:
        if self.loop is None:
            return
        self.queue.put_nowait((None, None, None))
        self.loop.run_until_complete(self.driver)
        self.loop.close()

    def complete(self, request: ChatRequest) -> ChatResponse:
        if self.cell is None or self.recorder is None:
            raise RuntimeError("an agent provider answers only inside a cell (bind_cell first)")
        last = request.messages[-1] if request.messages else None
        message = last.content if last is not None and last.role == "user" else ""
        try:
            if self.agent is None:
                self.agent = self.factory(self.cell)
                own = getattr(self.agent, "own_instructions", None)
                self.own_instructions = own if isinstance(own, str) and own.strip() else None
            self.recorder.open = True
            try:
                reply = self._timed_turn(message)
            finally:
                self.recorder.shut()
        except AgentTimeout as exc:
            self.error = str(exc)
            raise
        except (Exception, SystemExit) as exc:  # an agent calling sys.exit ends its cell, not the run
            self.error = last_line(exc)
            raise AgentError(f"the agent's turn raised: {self.error}") from None
        if self.recorder.unreadable is not None:
            unreadable, self.recorder.unreadable = self.recorder.unreadable, None
            raise unreadable
        if not isinstance(reply, str):
            self.error = f"turn() returned {type(reply).__name__}, not a str"
            raise AgentError(self.error)
        return ChatResponse(Message(role="assistant", content=reply), "end_turn", self._usage_delta())

    def _timed_turn(self, message: str) -> Any:
        """``agent.turn(message)`` within the deadline. A sync turn runs in a thread of its own (the
        thread cannot be killed: past the deadline it is left behind, and its later tool calls are
        refused, never recorded); an async one is cancelled on the cell's loop."""
        started = time.monotonic()
        outcome: dict[str, Any] = {}

        def call() -> None:
            try:
                outcome["value"] = self.agent.turn(message)
            except BaseException as exc:  # handed to the cell's thread, raised there
                outcome["error"] = exc

        worker = threading.Thread(target=call, name="agent-turn", daemon=True)
        worker.start()
        worker.join(self.deadline)
        if worker.is_alive():
            raise AgentTimeout(self._late())
        if "error" in outcome:
            raise outcome["error"]
        value = outcome.get("value")
        if not inspect.isawaitable(value):
            return value
        left = max(self.deadline - (time.monotonic() - started), 0.001)
        try:
            return self._await(value, left)
        except TimeoutError:
            raise AgentTimeout(self._late()) from None

    def _late(self) -> str:
        return (f"the agent's turn took longer than {self.deadline:g} s (--request-deadline) and was "
                "abandoned; its later tool calls are refused")

    def _usage_delta(self) -> Usage:
        """This turn's tokens from the agent's cumulative ``usage()`` (none without one)."""
        if not hasattr(self.agent, "usage"):
            return Usage()
        try:
            raw = self._run(self.agent.usage) or {}
            total = {k: int(raw[k]) for k in USAGE_FIELDS if isinstance(raw, dict) and raw.get(k) is not None}
        except Exception as exc:
            self.usage_error = last_line(exc)
            return Usage()
        delta = {k: total[k] - self.usage_seen.get(k, 0) for k in total}
        self.usage_seen.update(total)
        return Usage(**delta)

    def close(self) -> None:
        return None
