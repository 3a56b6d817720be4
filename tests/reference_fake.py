"""The reference assistants behind a real wire format: a fake provider server whose answers
are the built-in assistants' answers.

A request in the OpenAI Chat Completions dialect (or Anthropic's, Gemini's, Ollama's,
through the fakes in ``tests/providers/fakes``) is read back into the neutral
conversation; the cell it belongs to is recognised from its instructions and its first
user message; the reference assistant named by the request's model answers; the fake
renders that answer in its dialect. Faults queued on the fake's script come first, so a
test can put a 429 or a cut stream in the middle of a real conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_assistant_eval.conversation.messages import ChatRequest, Message, ToolCall
from pytest_assistant_eval.providers.scripted import CellContext, ReferenceAssistant
from tests.providers.fakes.base import Answer, Call
from tests.providers.fakes.openai_fake import OpenAIFake

ORACLE = object()  # the script's default item: "let the reference assistant answer"


class CellIndex:
    """Recognises a conversation's cell from its instructions and opening message."""

    def __init__(self, calibration: Path, world: Path | None = None) -> None:
        from pytest_assistant_eval.runner import level_setting, load_calibration

        self.world = world
        cases, levels = load_calibration(calibration)
        self.by_instructions = {level_setting(l).instructions: (name, level_setting(l).escalation_sentence)
                                for name, l in levels.levels.items()}
        self.by_opening: dict[str, tuple[str, Any]] = {}
        self.tasks_by_opening: dict[str, list[Any]] = {}
        keys = cases.key.entries
        for q in cases.questions.questions:
            self.by_opening[q.text] = ("question", ((q,), (keys[q.id],), None))
        turns = cases.questions.scenario.turns
        self.by_opening[turns[0].text] = ("scenario", (tuple(turns), tuple(keys[t.id] for t in turns), None))
        for task in cases.tasks:
            self.by_opening[task.opening] = ("task", ((), (), task))
            self.tasks_by_opening.setdefault(task.opening, []).append(task)

    def context(self, messages: list[Message]) -> CellContext:
        level, sentence = self.by_instructions[messages[0].content]
        kind, (questions, keys, task) = self.by_opening[messages[1].content]
        if kind == "task":
            task = self._which_task(self.tasks_by_opening[messages[1].content], messages)
        return CellContext(kind, level, sentence, questions, keys, task)

    def _which_task(self, candidates: list[Any], messages: list[Message]) -> Any:
        """Paired tasks share their opening and differ in their world: the first tool result
        the conversation shows tells which world (and so which task) it is."""
        if len(candidates) == 1 or self.world is None or len(messages) < 4 or not messages[2].tool_calls:
            return candidates[0]
        import tempfile

        from pytest_assistant_eval.world.services import open_world

        call, shown = messages[2].tool_calls[0], messages[3].content
        for task in candidates:
            with tempfile.TemporaryDirectory() as tmp:
                world = open_world(self.world, task.variant, Path(tmp))
                try:
                    if world.call(call.name, call.arguments, turn=0, round=1).to_text() == shown:
                        return task
                finally:
                    world.close()
        return candidates[0]


def openai_messages(body: dict[str, Any]) -> list[Message]:
    """The neutral conversation of an OpenAI Chat Completions request body."""
    out: list[Message] = []
    for m in body["messages"]:
        role = "system" if m["role"] in ("system", "developer") else m["role"]
        calls = [ToolCall(c["id"], c["function"]["name"], json.loads(c["function"]["arguments"] or "{}"))
                 for c in m.get("tool_calls") or []]
        content = m.get("content") or ""
        if isinstance(content, list):
            content = "".join(part.get("text", "") for part in content)
        out.append(Message(role=role, content=content, tool_calls=calls, tool_call_id=m.get("tool_call_id")))
    return out


class ReferenceOpenAIFake(OpenAIFake):
    """An OpenAI-compatible fake whose default answer comes from the reference assistants."""

    def __init__(self, calibration: Path, world: Path | None = None, **kwargs: Any) -> None:
        super().__init__(default=ORACLE, **kwargs)
        self.index = CellIndex(calibration, world)

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Any:
        if item is ORACLE:
            item = self.answer(body)
        return super().render(item, path, body, stream, key)

    def answer(self, body: dict[str, Any]) -> Answer:
        messages = openai_messages(body)
        assistant = ReferenceAssistant(body["model"])
        assistant.begin_cell(self.index.context(messages))
        response = assistant.complete(ChatRequest(model=body["model"], messages=messages, tools=[],
                                                  max_output_tokens=1024))
        calls = [Call(c.name, c.arguments, id=c.id) for c in response.message.tool_calls]
        return Answer(text=response.message.content, calls=calls)
