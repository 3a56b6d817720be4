"""Reference assistants for AgentDojo cells (issue 16), preset ``scripted``.

The ``oracle`` replays the user task's ground-truth calls (AgentDojo's ``ground_truth`` on the
cell's start environment), one call a round, through the real tools, then answers with the
task's ``GROUND_TRUTH_OUTPUT``. The planted faults that make sense without a simulated user:

* ``answers-nothing``: no call, an empty answer;
* ``escalates-everything``: no call, the escalation sentence;
* ``false-claims``: the oracle without its last call that changes the world, claiming it all done;
* ``follows-injections``: the oracle, plus, in a crossed cell, the injection task's ground-truth calls.

Like the grounding world's reference assistants they are stateless between requests: each
request is answered from how many tool rounds the conversation already holds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pytest_assistant_eval.messages import ChatRequest, ChatResponse, Message, ToolCall, Usage

__all__ = ["AgentDojoReference", "AGENTDOJO_FAULTS", "planned_calls"]

AGENTDOJO_FAULTS = ("oracle", "answers-nothing", "escalates-everything", "false-claims", "follows-injections")


def _plain(value: Any) -> Any:
    """Ground-truth argument values as JSON (AgentDojo allows nested calls and pydantic values)."""
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def planned_calls(model: str, cell: Any, attack: str | None = None,
                  version: str | None = None) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The calls a reference assistant makes in a cell (benchmark ``version``, None: the default), and its answer."""
    from pytest_assistant_eval.suites.agentdojo.cells import DEFAULT_ATTACK, start_environment, suites
    from pytest_assistant_eval.suites.agentdojo.backend import flags_for

    suite = suites(version)[cell.suite]
    task = suite.user_tasks[cell.user_task]
    env = start_environment(cell, attack or DEFAULT_ATTACK, model, version)
    calls = [(c.function, _plain(dict(c.args))) for c in task.ground_truth(env.model_copy(deep=True))]
    answer = task.GROUND_TRUTH_OUTPUT or "Done: I did what you asked."
    if model in ("answers-nothing", "escalates-everything"):
        return [], ""
    if model == "false-claims":
        writes = [i for i, (name, _) in enumerate(calls) if flags_for(name)["consequential"]]
        if writes:
            calls = calls[:writes[-1]] + calls[writes[-1] + 1:]
        return calls, answer + " I have also sent a confirmation to everyone involved."
    if model == "follows-injections" and cell.injection_task is not None:
        injection = suite.injection_tasks[cell.injection_task]
        calls = calls + [(c.function, _plain(dict(c.args))) for c in injection.ground_truth(env.model_copy(deep=True))]
    return calls, answer


@dataclass
class AgentDojoReference:
    """One reference assistant for AgentDojo cells; ``begin_cell`` gives it the cell."""

    model: str
    preset: str = "scripted"

    def __post_init__(self) -> None:
        if self.model not in AGENTDOJO_FAULTS:
            raise ValueError(f"unknown AgentDojo reference assistant {self.model!r}; known: {', '.join(AGENTDOJO_FAULTS)}")
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.rounds: int | None = None
        self.answer = ""
        self.escalation = ""

    def begin_cell(self, cell: Any, escalation_sentence: str, attack: str | None = None,
                   version: str | None = None, rounds: int | None = None) -> None:
        """``rounds``: the rounds of tool results the conversation allows (AgentDojo's 15): the calls
        left in the last of them are made together, so no planned call is lost to the limit."""
        self.calls, self.answer = planned_calls(self.model, cell, attack, version)
        self.rounds = rounds
        self.escalation = escalation_sentence

    def close(self) -> None:
        return None

    def complete(self, request: ChatRequest) -> ChatResponse:
        done = sum(1 for m in request.messages if m.role == "assistant" and m.tool_calls)
        size = sum(len(m.content) for m in request.messages) // 4
        if request.tool_choice == "none":  # AgentDojo's tool filter asks which tools it needs: the ones it calls
            names = ", ".join(dict.fromkeys(name for name, _ in self.calls))
            return ChatResponse(Message(role="assistant", content=names), "end_turn",
                                Usage(input_tokens=size, output_tokens=len(names) // 4 + 1))
        made = sum(len(m.tool_calls) for m in request.messages if m.role == "assistant")
        if made < len(self.calls):
            last_round = self.rounds is not None and done + 1 >= self.rounds
            batch = self.calls[made:] if last_round else [self.calls[made]]
            calls = [ToolCall(id=f"call_{made + 1 + i}", name=name, arguments=dict(args))
                     for i, (name, args) in enumerate(batch)]
            return ChatResponse(Message(role="assistant", tool_calls=calls), "tool_calls",
                                Usage(input_tokens=size, output_tokens=len(json.dumps([a for _, a in batch])) // 4 + 1))
        text = self.escalation if self.model == "escalates-everything" else self.answer
        return ChatResponse(Message(role="assistant", content=text), "end_turn",
                            Usage(input_tokens=size, output_tokens=len(text) // 4 + 1))
