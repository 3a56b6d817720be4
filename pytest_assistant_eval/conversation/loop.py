"""The agent loop (S5.1, S5.3, S5.4) as an explicit, saveable state.

``Conversation`` drives one cell: it builds each request from ``LoopState``, sends it
to the assistant, runs the tool calls against the world, caps results, compacts
history, lets the simulated user answer and decides when to stop. Everything the next
request depends on lives in ``LoopState`` and round-trips through ``to_dict`` /
``from_dict``, so a checkpoint written before a request restores a conversation that
sends the same request again, byte for byte. Times are kept apart from that state.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from pytest_assistant_eval.messages import (
    ChatRequest,
    ChatResponse,
    Message,
    ToolDefinition,
    canonical_text,
    estimate_tokens,  # noqa: F401 - also this module's (the providers' quota reads it from messages)
)
from pytest_assistant_eval.conversation.simulated_user import SimulatedUser, UserReply
from pytest_assistant_eval.providers.base import Provider
from pytest_assistant_eval.providers.errors import GradedError, ToolCallUnreadable
from pytest_assistant_eval.conversation.backend import ToolResult, WorldBackend

NUDGE_TEXT = "(The user is waiting.) Please go on, or tell me plainly that you are done."
UNREADABLE_LIMIT = 3


@dataclass(frozen=True)
class LevelSetting:
    """What the loop needs of a level (built from ``levels.Level``)."""

    name: str
    instructions: str
    tools: tuple[ToolDefinition, ...]
    max_tool_calls: int
    max_rounds: int
    max_output_tokens: int
    result_cap_chars: int
    context_window: int
    compact_at: float
    keep_last_rounds: int
    escalation_sentence: str
    # A foreign suite's conversation as its own benchmark holds it (issue 25); the defaults are ours.
    #: How a tool result is shown, given the tool's name (None: ``ToolResult.to_text()``, our JSON).
    format_result: Callable[[str, ToolResult], str] | None = None
    #: After ``max_rounds`` rounds of tool results the model answers once more, and tool calls in
    #: that answer are not run (AgentDojo's ToolsExecutionLoop); False: the last round's tools run.
    answer_after_last_round: bool = False
    #: A user message sent again after every round of tool results (AgentDojo's repeat_user_prompt).
    repeat_after_tools: str | None = None


@dataclass(frozen=True)
class Limits:
    """Common conversation limits for every cell (S5.3)."""

    max_user_turns: int = 12
    max_requests: int = 80
    max_nudges: int = 2


class UnreadableToolCalls(ToolCallUnreadable):
    """Three answers in a row whose tool calls could not be read: the cell is kept."""


@dataclass
class LoopState:
    messages: list[Message]
    pending_user_turns: list[str]  # question cells: the user turns still to ask
    turn: int = 0  # index of the current user turn
    round: int = 0  # assistant requests within the current turn
    tool_calls_in_turn: int = 0
    requests: int = 0
    nudges_in_turn: int = 0
    unreadable_in_row: int = 0
    user_state: dict[str, Any] = field(default_factory=dict)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)  # finished turns
    cap_hits: list[dict[str, Any]] = field(default_factory=list)
    compactions: list[dict[str, Any]] = field(default_factory=list)
    user_error: str | None = None
    stop: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "messages": [m.to_dict() for m in self.messages],
            "pending_user_turns": list(self.pending_user_turns),
            "turn": self.turn,
            "round": self.round,
            "tool_calls_in_turn": self.tool_calls_in_turn,
            "requests": self.requests,
            "nudges_in_turn": self.nudges_in_turn,
            "unreadable_in_row": self.unreadable_in_row,
            "user_state": self.user_state,
            "transcript": self.transcript,
            "turns": self.turns,
            "cap_hits": self.cap_hits,
            "compactions": self.compactions,
            "user_error": self.user_error,
            "stop": self.stop,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LoopState:
        # Every field is required: a checkpoint is never filled with defaults.
        return cls(
            messages=[Message.from_dict(m) for m in data["messages"]],
            pending_user_turns=list(data["pending_user_turns"]),
            turn=data["turn"],
            round=data["round"],
            tool_calls_in_turn=data["tool_calls_in_turn"],
            requests=data["requests"],
            nudges_in_turn=data["nudges_in_turn"],
            unreadable_in_row=data["unreadable_in_row"],
            user_state=data["user_state"],
            transcript=data["transcript"],
            turns=data["turns"],
            cap_hits=data["cap_hits"],
            compactions=data["compactions"],
            user_error=data["user_error"],
            stop=data["stop"],
        )


def request_body_sha256(request: ChatRequest) -> str:
    """Hash of the neutral request (what resume must give again byte for byte)."""
    return hashlib.sha256(canonical_text(request).encode("utf-8")).hexdigest()


def cap_result(text: str, cap: int) -> tuple[str, bool]:
    if len(text) <= cap:
        return text, False
    cut = len(text) - cap
    return f"{text[:cap]}\n[... {cut} characters cut by the result cap]", True


@dataclass
class RequestTiming:
    seconds: float
    started: float


class Conversation:
    """One cell's conversation. Create it fresh (``start``) or from a saved state."""

    def __init__(
        self,
        *,
        assistant: Provider,
        world: WorldBackend,
        level: LevelSetting,
        model: str,
        user: SimulatedUser | None,
        state: LoopState,
        limits: Limits = Limits(),
        stream: bool = True,
        before_request: Callable[[LoopState, ChatRequest], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.assistant = assistant
        self.world = world
        self.level = level
        self.model = model
        self.user = user
        self.state = state
        self.limits = limits
        self.stream = stream
        self.before_request = before_request
        self.clock = clock
        self.requests_log: list[dict[str, Any]] = []
        self.pending_request_sha256: str | None = None
        self.first_request_at: float | None = None
        self.last_response_at: float | None = None
        # The independent code check of the user's consequential answers (S5.2).
        self.user_check: Callable[[UserReply, list[Message]], str | None] | None = None

    @property
    def _tool_names(self) -> set[str]:
        # From the level each time: a suite may narrow the tools offered during a cell (a tool filter).
        return {t.name for t in self.level.tools}

    @staticmethod
    def start(level: LevelSetting, user_turns: list[str]) -> LoopState:
        """The state before the first request: instructions and the opening user turn."""
        first, rest = user_turns[0], list(user_turns[1:])
        state = LoopState(
            messages=[Message(role="system", content=level.instructions), Message(role="user", content=first)],
            pending_user_turns=rest,
        )
        state.transcript.append({"type": "user", "turn": 0, "text": first, "structured": None})
        return state

    # -- requests -----------------------------------------------------------------
    def next_request(self) -> ChatRequest:
        return self.request_for(self.state)

    def request_for(self, state: LoopState) -> ChatRequest:
        """The request ``state`` gives, without taking it on (a resume checks it before restoring)."""
        return ChatRequest(
            model=self.model,
            messages=list(state.messages),
            tools=list(self.level.tools),
            max_output_tokens=self.level.max_output_tokens,
            tool_choice="auto",
            stream=self.stream,
        )

    def run(self) -> LoopState:
        """Run until a stop; provider errors propagate (the runner decides what to keep)."""
        while self.state.stop is None:
            self._compact_if_needed()
            if self.state.requests >= self.limits.max_requests:
                self._stop("limit_requests")
                break
            request = self.next_request()
            self.pending_request_sha256 = request_body_sha256(request)
            if self.before_request is not None:
                self.before_request(self.state, request)
            started = self.clock()
            if self.first_request_at is None:
                self.first_request_at = started
            try:
                response = self.assistant.complete(request)
            except GradedError as exc:
                # A graded outcome (context too long, a refusal): saved and graded, not retried.
                self.state.requests += 1
                self.requests_log.append({"index": self.state.requests, "turn": self.state.turn,
                                          "round": self.state.round + 1, "seconds": round(self.clock() - started, 6),
                                          "usage": None, "stop_reason": exc.code,
                                          "request_sha256": request_body_sha256(request)})
                self._finish_turn("", exc.code)
                self._stop(exc.code)
                break
            seconds = self.clock() - started
            self.last_response_at = self.clock()
            self.state.requests += 1
            self.state.round += 1
            self.requests_log.append(
                {
                    "index": self.state.requests,
                    "turn": self.state.turn,
                    "round": self.state.round,
                    "seconds": round(seconds, 6),
                    "usage": response.usage.to_dict(),
                    "stop_reason": response.stop_reason,
                    "request_sha256": self.pending_request_sha256,
                    # how far beyond its output limit an oversized answer ran (issue 23); only then
                    **({"oversized": response.provider["oversized"]} if "oversized" in response.provider else {}),
                }
            )
            self._apply(response)
        return self.state

    # -- one answer ---------------------------------------------------------------
    def _apply(self, response: ChatResponse) -> None:
        state = self.state
        message = response.message
        message.role = "assistant"
        state.messages.append(message)
        state.transcript.append(
            {
                "type": "assistant",
                "turn": state.turn,
                "round": state.round,
                "text": message.content,
                "tool_calls": [c.to_dict() for c in message.tool_calls],
                "stop_reason": response.stop_reason,
            }
        )
        if response.stop_reason == "oversized":  # far beyond the output limit: ends as a length stop does
            self._finish_turn(message.content, "oversized")
            self._stop("oversized")
            return
        if response.stop_reason == "max_tokens" and not message.tool_calls:
            self._finish_turn(message.content, "cut_off")
            self._stop("cut_off")
            return
        if response.stop_reason in ("context_too_long", "refusal"):
            self._finish_turn(message.content, response.stop_reason)
            self._stop(response.stop_reason)
            return
        if message.tool_calls:
            if self.level.answer_after_last_round and state.round > self.level.max_rounds:
                state.cap_hits.append({"cap": "rounds", "turn": state.turn, "limit": self.level.max_rounds})
                self._finish_turn(message.content, "cap_rounds")
                self._stop("cap_rounds")
                return
            self._run_tools(message)
            if state.stop is None and state.round >= self.level.max_rounds and not self.level.answer_after_last_round:
                state.cap_hits.append({"cap": "rounds", "turn": state.turn, "limit": self.level.max_rounds})
                self._finish_turn("", "cap_rounds")
                self._stop("cap_rounds")
            return
        self._end_of_turn(message.content)

    def run_tool_calls(self, message: Message) -> None:
        """Run an answer's tool calls as the loop does (an agent's calls come this way, issue 33)."""
        self._run_tools(message)

    def _run_tools(self, message: Message) -> None:
        state = self.state
        unreadable = all(c.parse_error for c in message.tool_calls)
        state.unreadable_in_row = state.unreadable_in_row + 1 if unreadable else 0
        for call in message.tool_calls:
            if state.tool_calls_in_turn >= self.level.max_tool_calls:
                text = json.dumps({"ok": False, "error": f"tool call cap reached ({self.level.max_tool_calls} per question)"})
                state.messages.append(Message(role="tool", content=text, tool_call_id=call.id, name=call.name))
                state.transcript.append({"type": "tool", "turn": state.turn, "round": state.round, "call_id": call.id,
                                         "name": call.name, "arguments": call.arguments, "status": "capped",
                                         "text": text, "truncated": False, "log_seq": None})
                if not any(h["cap"] == "tool_calls" and h["turn"] == state.turn for h in state.cap_hits):
                    state.cap_hits.append({"cap": "tool_calls", "turn": state.turn, "limit": self.level.max_tool_calls})
                continue
            state.tool_calls_in_turn += 1
            seq = None
            if call.parse_error:
                status = "error"
                text = self._loop_error(call.name, f"could not read the tool call's arguments: {call.parse_error}")
            elif call.name not in self._tool_names:
                status = "error"
                text = self._loop_error(call.name, f"unknown tool {call.name!r}")
            else:
                result = self.world.call(call.name, call.arguments, turn=state.turn, round=state.round)
                status = result.status
                fmt = self.level.format_result
                text = result.to_text() if fmt is None else fmt(call.name, result)
                seq = self.world.log[-1].seq if self.world.log else None
            shown, truncated = cap_result(text, self.level.result_cap_chars)
            state.messages.append(Message(role="tool", content=shown, tool_call_id=call.id, name=call.name))
            state.transcript.append({"type": "tool", "turn": state.turn, "round": state.round, "call_id": call.id,
                                     "name": call.name, "arguments": call.arguments, "status": status,
                                     "text": shown, "truncated": truncated, "log_seq": seq})
        if self.level.repeat_after_tools is not None:
            state.messages.append(Message(role="user", content=self.level.repeat_after_tools))
            state.transcript.append({"type": "repeated_prompt", "turn": state.turn, "round": state.round,
                                     "text": self.level.repeat_after_tools})
        if state.unreadable_in_row >= UNREADABLE_LIMIT:
            raise UnreadableToolCalls(f"{UNREADABLE_LIMIT} answers in a row had tool calls that could not be read")

    def _loop_error(self, name: str, error: str) -> str:
        """A call the loop answers itself (unreadable arguments, a tool not offered), in the level's form."""
        fmt = self.level.format_result
        return json.dumps({"ok": False, "error": error}) if fmt is None else fmt(name, ToolResult("error", error=error))

    def _end_of_turn(self, text: str) -> None:
        state = self.state
        if not text.strip() and state.nudges_in_turn < self.limits.max_nudges:
            state.nudges_in_turn += 1
            state.messages.append(Message(role="user", content=NUDGE_TEXT))
            state.transcript.append({"type": "nudge", "turn": state.turn, "text": NUDGE_TEXT})
            state.round = 0
            return
        silent = not text.strip()
        self._finish_turn(text, "silent" if silent else "end_turn")
        if self.user is None:
            if state.pending_user_turns and not silent:
                self._next_turn(state.pending_user_turns.pop(0), None)
            else:
                self._stop("silent" if silent else "done")
            return
        if silent:
            self._stop("silent")
            return
        reply = self.user.reply(state.messages, state.user_state)
        problem = self.user_check(reply, state.messages) if self.user_check is not None else None
        if problem:
            state.user_error = problem
            state.transcript.append({"type": "user", "turn": state.turn + 1, "text": reply.message,
                                     "structured": reply.to_dict()})
            self._stop("user_error")
            return
        if reply.done:
            state.transcript.append({"type": "user", "turn": state.turn + 1, "text": reply.message,
                                     "structured": reply.to_dict()})
            self._stop("user_done")
            return
        if state.turn + 1 >= self.limits.max_user_turns:
            self._stop("limit_user_turns")
            return
        self._next_turn(reply.message, reply)

    def _next_turn(self, text: str, reply: UserReply | None) -> None:
        state = self.state
        state.turn += 1
        state.round = 0
        state.tool_calls_in_turn = 0
        state.nudges_in_turn = 0
        state.messages.append(Message(role="user", content=text))
        state.transcript.append({"type": "user", "turn": state.turn, "text": text,
                                 "structured": reply.to_dict() if reply else None})

    def _finish_turn(self, final_text: str, stop: str) -> None:
        self.state.turns.append({"turn": self.state.turn, "final": final_text, "stop": stop,
                                 "rounds": self.state.round, "tool_calls": self.state.tool_calls_in_turn})

    def _stop(self, reason: str) -> None:
        self.state.stop = reason

    def _compact_if_needed(self) -> None:
        """Fold older tool results when the window fills (the level's history policy)."""
        state = self.state
        before = estimate_tokens(state.messages, self.level.tools)
        if before <= self.level.compact_at * self.level.context_window:
            return
        assistant_rounds = [i for i, m in enumerate(state.messages) if m.role == "assistant" and m.tool_calls]
        keep_from = assistant_rounds[-self.level.keep_last_rounds] if len(assistant_rounds) >= self.level.keep_last_rounds and self.level.keep_last_rounds > 0 else len(state.messages)
        folded = 0
        for i, m in enumerate(state.messages[:keep_from]):
            if m.role == "tool" and not m.content.startswith("[folded"):
                state.messages[i] = Message(role="tool", content="[folded: an earlier tool result was removed to fit the context window]",
                                            tool_call_id=m.tool_call_id, name=m.name)
                folded += 1
        if folded:
            after = estimate_tokens(state.messages, self.level.tools)
            state.compactions.append({"turn": state.turn, "round": state.round, "folded": folded,
                                      "tokens_before": before, "tokens_after": after})
            state.transcript.append({"type": "compaction", "turn": state.turn, "folded": folded})
