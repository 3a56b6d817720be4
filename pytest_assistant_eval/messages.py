"""The neutral conversation model that every provider converts to and from.

One message shape for the whole harness: the loop, the records, the checkpoints and
every wire-format module speak it. It must stay JSON round-trippable (``to_dict`` /
``from_dict``) because checkpoints restore it and must give the same request again,
byte for byte.

It sits among the shared values (issue 32): the conversation drives the providers, and the
providers, the judge, the suites and the agents all speak these messages, so what both sides
need lives below both. ``estimate_tokens`` is here for the same reason: the conversation
compacts by it and the providers' per-request quota (S4.9) is taken by it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from collections.abc import Callable, Iterable
from typing import Any, Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class ToolCall:
    """One tool call the assistant asked for.

    ``arguments`` is the parsed object; when the provider's arguments could not be
    read, ``arguments`` is empty and ``parse_error`` says why, with ``raw_arguments``
    keeping the text as received (the loop answers it with a tool error, it never crashes).
    """

    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    raw_arguments: str | None = None
    parse_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "raw_arguments": self.raw_arguments,
            "parse_error": self.parse_error,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(
            id=data["id"],
            name=data["name"],
            arguments=dict(data.get("arguments") or {}),
            raw_arguments=data.get("raw_arguments"),
            parse_error=data.get("parse_error"),
        )


@dataclass
class Message:
    """A message of any role.

    ``reasoning`` keeps thinking blocks apart from the answer (never shown to graders);
    ``provider_data`` carries what a provider needs sent back verbatim (Gemini's thought
    signatures, Anthropic's signed thinking blocks), keyed by wire format.
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    provider_data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "content": self.content,
            "tool_calls": [call.to_dict() for call in self.tool_calls],
            "tool_call_id": self.tool_call_id,
            "name": self.name,
            "reasoning": self.reasoning,
            "provider_data": self.provider_data,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=[ToolCall.from_dict(c) for c in data.get("tool_calls") or []],
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            reasoning=data.get("reasoning"),
            provider_data=dict(data.get("provider_data") or {}),
        )


@dataclass(frozen=True)
class ToolDefinition:
    """A tool as offered to the model: name, description and JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


StopReason = Literal[
    "end_turn",  # the model finished its message
    "tool_calls",  # the model asked for tools
    "max_tokens",  # cut off at the output limit (a graded outcome)
    "context_too_long",  # the request did not fit the context (a graded outcome)
    "refusal",  # the provider refused to answer (a graded outcome)
    "oversized",  # far beyond the output limit: read no further, kept folded (a graded outcome, issue 23)
    "other",
]


@dataclass
class Usage:
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning_tokens: int | None = None
    cached_input_tokens: int | None = None  # input tokens read from the provider's cache (in input_tokens)
    #: input tokens written to the provider's cache (Anthropic's cache_creation_input_tokens; in input_tokens)
    cache_write_tokens: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_input_tokens": self.cached_input_tokens,
        }
        if self.cache_write_tokens is not None:  # only a provider that reports it (records stay as they were)
            out["cache_write_tokens"] = self.cache_write_tokens
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(**{k: data.get(k) for k in ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens",
                                               "cache_write_tokens")})


@dataclass
class ChatRequest:
    """Everything a provider needs for one request; its JSON form is hashed for resume."""

    model: str
    messages: list[Message]
    tools: list[ToolDefinition]
    max_output_tokens: int
    tool_choice: Literal["auto", "none", "required"] = "auto"
    stream: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [m.to_dict() for m in self.messages],
            "tools": [t.to_dict() for t in self.tools],
            "max_output_tokens": self.max_output_tokens,
            "tool_choice": self.tool_choice,
            "stream": self.stream,
        }


@dataclass
class ChatResponse:
    """One answer: the assistant message, why it stopped, usage and provider extras."""

    message: Message
    stop_reason: StopReason
    usage: Usage = field(default_factory=Usage)
    provider: dict[str, Any] = field(default_factory=dict)  # e.g. response id, model as served


def canonical_text(request: ChatRequest) -> str:
    """``request.to_dict()`` as sorted, compact JSON (what resume hashes), its tools encoded once per
    level: the definitions are frozen and were most of every request's hashing (issue 32)."""
    data = request.to_dict()
    data.pop("tools")
    parts = {key: _sorted_json(value) for key, value in data.items()}
    parts["tools"] = _sorted_tools(request.tools)
    return "{" + ",".join(f"{_sorted_json(key)}:{parts[key]}" for key in sorted(parts)) + "}"


def _sorted_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


#: What is computed once per set of definitions: key (what, the definitions' ids), value (the
#: definitions, held so no id is reused while its entry lives; the result). Bounded: past 256 sets it
#: starts again. A definition is frozen and a level's live as long as the process.
_PER_DEFINITIONS: dict[tuple[str, tuple[int, ...]], tuple[tuple[Any, ...], Any]] = {}


def once_per_definitions(what: str, tools: Iterable[Any], compute: Callable[[tuple[Any, ...]], Any]) -> Any:
    """``compute(tuple(tools))``, computed once per ``what`` and set of definitions (the same in every
    request of a level: their hash text, their size, a wire format's tools)."""
    held = tuple(tools)
    key = (what, tuple(map(id, held)))
    known = _PER_DEFINITIONS.get(key)
    if known is None or any(a is not b for a, b in zip(known[0], held)):
        if len(_PER_DEFINITIONS) >= 256:
            _PER_DEFINITIONS.clear()
        known = _PER_DEFINITIONS[key] = (held, compute(held))
    return known[1]


def _sorted_tools(tools: list[ToolDefinition]) -> str:
    return once_per_definitions("sorted json", tools, lambda held: _sorted_json([t.to_dict() for t in held]))


# -- a request's size (the conversation's compaction and the providers' quota, S4.9) ----------
def estimate_tokens(messages: list[Message], tools: tuple[ToolDefinition, ...]) -> int:
    """A deterministic estimate (4 characters a token) used for compaction decisions."""
    chars = sum(len(m.content) + sum(len(json.dumps(c.arguments)) + len(c.name) for c in m.tool_calls) for m in messages)
    chars += _tools_chars(tools)
    return chars // 4 + 4 * len(messages)


def _tools_chars(tools: tuple[ToolDefinition, ...]) -> int:
    """``sum(_definition_chars(t) for t in tools)``, summed once per set of definitions (the estimate
    is taken three times per request)."""
    return once_per_definitions("chars", tools, lambda held: sum(_definition_chars(t) for t in held))


_DEFINITION_CHARS: dict[int, tuple[Any, int]] = {}


def _definition_chars(tool: ToolDefinition) -> int:
    """A tool definition's length, serialised once per definition: a level's definitions live as
    long as the process, and the estimate is taken three times per request (issue 15)."""
    known = _DEFINITION_CHARS.get(id(tool))
    if known is None or known[0] is not tool:
        known = _DEFINITION_CHARS[id(tool)] = (tool, len(json.dumps(tool.to_dict())))
    return known[1]
