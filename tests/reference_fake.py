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

from pytest_assistant_eval.messages import ChatRequest, Message, ToolCall
from pytest_assistant_eval.suites.calibration.reference import CellContext, ReferenceAssistant
from tests.providers.fakes.base import Answer, Call
from tests.providers.fakes.openai_fake import OpenAIFake

ORACLE = object()  # the script's default item: "let the reference assistant answer"


class CellIndex:
    """Recognises a conversation's cell from its instructions and opening message."""

    def __init__(self, calibration: Path, world: Path | None = None) -> None:
        from pytest_assistant_eval.suites.calibration.plan import level_setting, load_calibration

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

        from pytest_assistant_eval.suites.calibration.world.services import open_world

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

    def __init__(self, calibration: Path, world: Path | None = None, *, delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(default=ORACLE, **kwargs)
        self.index = CellIndex(calibration, world)
        self.delay = delay  # seconds before each answer, so a run takes long enough to be interrupted

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Any:
        if item is ORACLE:
            item = self.answer(body)
        raw = super().render(item, path, body, stream, key)
        raw.delay = max(raw.delay, self.delay)
        return raw

    def answer(self, body: dict[str, Any]) -> Answer:
        messages = openai_messages(body)
        assistant = ReferenceAssistant(body["model"])
        assistant.begin_cell(self.index.context(messages))
        response = assistant.complete(ChatRequest(model=body["model"], messages=messages, tools=[],
                                                  max_output_tokens=1024))
        calls = [Call(c.name, c.arguments, id=c.id) for c in response.message.tool_calls]
        return Answer(text=response.message.content, calls=calls)


# -- the other wire formats ------------------------------------------------------------------
# Each reads its dialect's request body back into the neutral conversation, lets the reference
# assistant named by the request's model answer, and renders that answer with the plain fake.

def _answer_of(index: CellIndex, model: str, messages: list[Message]) -> Answer:
    assistant = ReferenceAssistant(model)
    assistant.begin_cell(index.context(messages))
    response = assistant.complete(ChatRequest(model=model, messages=messages, tools=[], max_output_tokens=1024))
    return Answer(text=response.message.content,
                  calls=[Call(c.name, c.arguments, id=c.id) for c in response.message.tool_calls])


def anthropic_messages(body: dict[str, Any]) -> list[Message]:
    """The neutral conversation of an Anthropic Messages request body."""
    system = body.get("system")
    if isinstance(system, list):
        system = "".join(b.get("text", "") for b in system)
    out = [Message(role="system", content=system)] if system else []
    for m in body["messages"]:
        content = m["content"]
        if isinstance(content, str):
            out.append(Message(role=m["role"], content=content))
            continue
        texts = [b.get("text", "") for b in content if b.get("type") == "text"]
        if m["role"] == "assistant":
            calls = [ToolCall(b["id"], b["name"], dict(b.get("input") or {})) for b in content
                     if b.get("type") == "tool_use"]
            out.append(Message(role="assistant", content="".join(texts), tool_calls=calls))
            continue
        for b in content:
            if b.get("type") == "tool_result":
                result = b.get("content")
                if isinstance(result, list):
                    result = "".join(x.get("text", "") for x in result)
                out.append(Message(role="tool", content=result or "", tool_call_id=b.get("tool_use_id")))
        if texts:
            out.append(Message(role="user", content="".join(texts)))
    return out


def gemini_messages(body: dict[str, Any]) -> list[Message]:
    """The neutral conversation of a Gemini generateContent request body."""
    out: list[Message] = []
    instruction = body.get("systemInstruction")
    if instruction:
        out.append(Message(role="system", content="".join(p.get("text", "") for p in instruction["parts"])))
    for content in body["contents"]:
        parts = content.get("parts") or []
        if content["role"] == "model":
            calls = [ToolCall(p["functionCall"].get("id") or f"call_{i}", p["functionCall"]["name"],
                              dict(p["functionCall"].get("args") or {}))
                     for i, p in enumerate(parts) if "functionCall" in p]
            out.append(Message(role="assistant", content="".join(p.get("text", "") for p in parts
                                                                 if not p.get("thought")), tool_calls=calls))
            continue
        responses = [p["functionResponse"] for p in parts if "functionResponse" in p]
        for r in responses:
            out.append(Message(role="tool", content=(r.get("response") or {}).get("output", ""),
                               tool_call_id=r.get("id"), name=r.get("name")))
        texts = [p.get("text", "") for p in parts if "text" in p]
        if texts or not responses:
            out.append(Message(role="user", content="".join(texts)))
    return out


def ollama_messages(body: dict[str, Any]) -> list[Message]:
    """The neutral conversation of an Ollama /api/chat request body (tool results carry names, not ids)."""
    out: list[Message] = []
    for m in body["messages"]:
        if m["role"] == "assistant":
            calls = [ToolCall(c.get("id") or f"call_{i}", c["function"]["name"], dict(c["function"].get("arguments") or {}))
                     for i, c in enumerate(m.get("tool_calls") or [])]
            out.append(Message(role="assistant", content=m.get("content") or "", tool_calls=calls))
        elif m["role"] == "tool":
            out.append(Message(role="tool", content=m.get("content") or "", name=m.get("tool_name")))
        else:
            out.append(Message(role=m["role"], content=m.get("content") or ""))
    return out


class _Reference:
    """Mixin: the script's default item is the reference assistant's answer."""

    index: CellIndex

    def _setup_reference(self, calibration: Path, world: Path | None) -> None:
        self.index = CellIndex(calibration, world)

    def neutral(self, path: str, body: dict[str, Any]) -> tuple[str, list[Message]]:  # pragma: no cover
        raise NotImplementedError

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Any:
        if item is ORACLE:
            model, messages = self.neutral(path, body)
            item = _answer_of(self.index, model, messages)
        return super().render(item, path, body, stream, key)  # type: ignore[misc]


def _reference_class(base: type, convert: Any, model_of: Any) -> type:
    class Reference(_Reference, base):  # type: ignore[misc, valid-type]
        def __init__(self, calibration: Path, world: Path | None = None, **kwargs: Any) -> None:
            base.__init__(self, default=ORACLE, **kwargs)
            self._setup_reference(calibration, world)

        def neutral(self, path: str, body: dict[str, Any]) -> tuple[str, list[Message]]:
            return model_of(path, body), convert(body)

    Reference.__name__ = Reference.__qualname__ = f"Reference{base.__name__}"
    return Reference


from tests.providers.fakes.anthropic_fake import AnthropicFake  # noqa: E402
from tests.providers.fakes.gemini_fake import GeminiFake  # noqa: E402
from tests.providers.fakes.ollama_fake import OllamaFake  # noqa: E402
from tests.providers.fakes.openai_fake import OpenRouterFake  # noqa: E402

ReferenceOpenRouterFake = _reference_class(OpenRouterFake, openai_messages, lambda path, body: body["model"])
ReferenceAnthropicFake = _reference_class(AnthropicFake, anthropic_messages, lambda path, body: body["model"])
ReferenceGeminiFake = _reference_class(GeminiFake, gemini_messages,
                                       lambda path, body: path.split("/models/", 1)[-1].split(":", 1)[0])
ReferenceOllamaFake = _reference_class(OllamaFake, ollama_messages, lambda path, body: body["model"])

#: preset -> (reference fake class, the address suffix the preset uses on it)
REFERENCE_FAKES: dict[str, tuple[type, str]] = {
    "openai": (ReferenceOpenAIFake, "/v1"),
    "openai-compatible": (ReferenceOpenAIFake, "/v1"),
    "openrouter": (ReferenceOpenRouterFake, "/api/v1"),
    "anthropic": (ReferenceAnthropicFake, ""),
    "gemini": (ReferenceGeminiFake, ""),
    "ollama": (ReferenceOllamaFake, ""),
}
