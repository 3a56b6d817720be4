"""A third suite in under 150 lines (issue 32, docs/suites.md): capitals looked up with one tool, one check.

What it writes is only what a benchmark is: its cells, a world backend with one tool, the
setting and the opening turn, two reference assistants, its one check. The record plumbing is
``SuiteBase``'s and grade-ai, the leaderboard and the report are ``suites.simple``'s.
Registered by ``suites.register_suite("toy", "toy_suite")`` (or ASSISTANT_EVAL_SUITES=toy=toy_suite).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_assistant_eval.conversation.backend import LogEntry, ToolResult, ToolSpec
from pytest_assistant_eval.conversation.loop import LevelSetting, Limits
from pytest_assistant_eval.messages import ChatResponse, Message, ToolCall, ToolDefinition, Usage
from pytest_assistant_eval.suites.base import FinishedCell, SuiteBase, UserSide
from pytest_assistant_eval.suites.simple import checks_grading

CAPITALS = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi"}
LOOKUP = ToolSpec("lookup", "atlas", "The capital of a country.",
                  {"type": "object", "properties": {"country": {"type": "string"}}, "required": ["country"]})
SETTING = LevelSetting(name="toy", instructions="Answer with the capital; look it up first.",
                       tools=(ToolDefinition(LOOKUP.name, LOOKUP.description, LOOKUP.parameters),),
                       max_tool_calls=3, max_rounds=3, max_output_tokens=200, result_cap_chars=2000,
                       context_window=8000, compact_at=0.9, keep_last_rounds=2, escalation_sentence="")


@dataclass(frozen=True)
class ToyCell:
    model: str
    country: str
    level: str = "toy"
    cls: str = "capital"

    @property
    def cell_id(self) -> str:
        return f"TOY-{self.country}__r1"


class Atlas:
    """The world backend: one read-only tool; its state is the atlas itself."""

    def __init__(self) -> None:
        self.log: list[LogEntry] = []

    def list_tools(self) -> list[ToolSpec]:
        return [LOOKUP]

    def call(self, name: str, arguments: dict[str, Any], *, turn: int, round: int) -> ToolResult:
        found = CAPITALS.get(str(arguments.get("country")))
        result = ToolResult("ok", found) if found else ToolResult("error", error="no such country")
        self.log.append(LogEntry(len(self.log) + 1, turn, round, name, arguments, result.status, result.data,
                                 result.error))
        return result

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        return {"capitals": [{"country": c, "capital": v} for c, v in sorted(CAPITALS.items())]}

    def restore(self, state: Any = None) -> None:
        return None  # read-only: nothing to put back, nothing to close

    describe_state, close = snapshot, restore


@dataclass
class ToyPrepared:
    suite: ToySuite
    cell: ToyCell
    spec: Any
    setting: LevelSetting = SETTING
    setting_key: dict[str, Any] = field(default_factory=lambda: {"level": "toy"})
    limits: Limits = field(default_factory=lambda: Limits(max_user_turns=1, max_requests=6))

    @property
    def turns(self) -> list[str]:
        return [f"What is the capital of {self.cell.country}?"]

    def open_world(self, workdir: Path) -> Atlas:
        return Atlas()

    def begin(self, *args: Any) -> None:
        return None  # a reference assistant learns the cell from the request itself

    start = begin  # nothing shapes the conversation before its first request

    def user(self, start_state: Any, model_user: Any) -> UserSide:
        return UserSide()  # one question, no simulated user

    def record(self, done: FinishedCell) -> dict[str, Any]:
        answer = next((m.content for m in reversed(done.final.messages) if m.role == "assistant"), "")
        return {**self.suite.record_base(self.cell, self.spec), "country": self.cell.country, "answer": answer,
                "stop_reason": done.final.stop, "service_log": done.log, "requests": done.conversation.requests_log}


class Reference:
    """``oracle`` looks the capital up and says it; ``guesses-facts`` answers Paris to everything."""

    preset = "scripted"

    def __init__(self, model: str) -> None:
        self.model = model

    def complete(self, request: Any) -> ChatResponse:
        results = [m.content for m in request.messages if m.role == "tool"]
        if self.model == "oracle" and not results:
            country = request.messages[-1].content.rsplit(" ", 1)[-1].rstrip("?")
            call = ToolCall(id="call_1", name="lookup", arguments={"country": country})
            return ChatResponse(Message(role="assistant", tool_calls=[call]), "tool_calls", Usage(10, 5))
        text = json.loads(results[-1])["result"] if results else "Paris"
        return ChatResponse(Message(role="assistant", content=f"The capital is {text}."), "end_turn", Usage(12, 6))

    def close(self) -> None:
        return None


class ToySuite(SuiteBase):
    name = "toy"
    data_source = "a three-country atlas written for the tests"
    marker_names = ["toy", "capital"]  # -m toy, -m capital: the level and the class of every cell

    def __init__(self, options: Any, commit: str | None = None) -> None:
        self.options = options
        self.cells = sorted((ToyCell(m.label, c) for m in options.models for c in CAPITALS),
                            key=lambda c: (c.model, c.cell_id))

    def prepare(self, cell: ToyCell, spec: Any) -> ToyPrepared:
        return ToyPrepared(self, cell, spec)

    def scripted(self, name: str) -> Reference:
        return Reference(name)


def answers_right(record: dict[str, Any]) -> dict[str, bool | None]:
    return {"answers_right": CAPITALS[record["country"]] in record["answer"]}


make_suite = ToySuite  # make_suite(options, commit)


def suite_options(parts: tuple[str, ...], get: Any) -> None:
    return None  # no options of its own


_grading = checks_grading("toy", ("answers_right",), answers_right)
grade, leaderboard, report = _grading.grade, _grading.leaderboard, _grading.report
