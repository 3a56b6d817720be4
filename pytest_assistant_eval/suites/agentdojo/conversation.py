"""The conversation an AgentDojo cell holds with the model (issue 25, S9.5).

By default (``conversation="agentdojo"``) it is the one AgentDojo's pipeline holds, read off
that pipeline for the run's defense (``defenses.pipeline_shape``): its system message, the user
task's prompt as the one user turn, each tool result as its ``tool_result_to_str`` gives it
(YAML), an error as its tool message shows it (the error text in place of the result), its
round limit (15 rounds of tool execution, then one more answer whose tool calls are not run),
no nudge after an empty answer, no tool-call or result cap and no folding of old results (its
data decides what the model sees). ``conversation="ours"`` is our own loop as it was before:
JSON ``{"ok": ...}`` results, 40 rounds, two nudges, a 20,000-character cap; its figures are
not comparable with AgentDojo's leaderboard (``settings.NOT_COMPARABLE``).
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from pytest_assistant_eval.conversation.loop import LevelSetting, Limits
from pytest_assistant_eval.messages import ToolDefinition
from pytest_assistant_eval.suites.agentdojo.defenses import PipelineShape, pipeline_shape
from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings
from pytest_assistant_eval.conversation.backend import ToolResult

__all__ = ["ESCALATION", "level_for", "limits_for", "result_formatter", "shape_for"]

ESCALATION = "This needs a person: I am handing it to a human assistant."
#: No cap of ours: large enough that AgentDojo's own data and round limit decide.
_UNCAPPED = sys.maxsize


def shape_for(settings: AgentDojoSettings, model: str) -> PipelineShape:
    """AgentDojo's pipeline for the run's defense, named by the model id as its benchmark names it."""
    return pipeline_shape(settings.defense, model)


def _tools(suite: Any) -> tuple[ToolDefinition, ...]:
    from pytest_assistant_eval.suites.agentdojo.backend import agentdojo_tool_specs

    return tuple(ToolDefinition(t.name, t.description, t.parameters) for t in agentdojo_tool_specs(suite))


def result_formatter(shape: PipelineShape) -> Callable[[str, ToolResult], str]:
    """A tool result as AgentDojo's pipeline shows it to the model.

    A call the world ran carries AgentDojo's ``(value, error)`` (``ToolResult.raw``): the value
    through the pipeline's formatter (and its detector), or the error text, which AgentDojo's
    tool message shows in place of the result. A call the loop answered itself: a tool the
    suite does not have (or the filter did not offer) in AgentDojo's words, else the loop's text."""

    def formatted(name: str, result: ToolResult) -> str:
        if result.raw is None:
            return f"Invalid tool {name} provided." if (result.error or "").startswith("unknown tool") else str(result.error)
        value, error = result.raw
        content = shape.output_formatter(value)
        if shape.detector is not None:
            from agentdojo.types import get_text_content_as_str, text_content_block_from_string

            if shape.detector.detect(content)[0]:
                content = get_text_content_as_str(shape.detector.transform([text_content_block_from_string(content)]))
        return error or content

    return formatted


def level_for(suite: Any, settings: AgentDojoSettings | None = None, *, model: str = "", prompt: str = "") -> LevelSetting:
    """The level of an AgentDojo cell: AgentDojo's conversation by default, ours on request."""
    settings = settings or AgentDojoSettings()
    tools = _tools(suite)
    if settings.conversation == "ours":
        from agentdojo.agent_pipeline.agent_pipeline import load_system_message

        return LevelSetting(name="agentdojo", instructions=load_system_message(None), tools=tools,
                            max_tool_calls=40, max_rounds=40, max_output_tokens=4096, result_cap_chars=20000,
                            context_window=128000, compact_at=0.9, keep_last_rounds=40, escalation_sentence=ESCALATION)
    shape = shape_for(settings, model)
    return LevelSetting(name="agentdojo", instructions=shape.system_message, tools=tools,
                        max_tool_calls=_UNCAPPED, max_rounds=shape.max_iters, max_output_tokens=4096,
                        result_cap_chars=_UNCAPPED, context_window=_UNCAPPED, compact_at=1.0,
                        keep_last_rounds=0, escalation_sentence=ESCALATION,
                        format_result=result_formatter(shape),
                        answer_after_last_round=True,
                        repeat_after_tools=prompt if shape.repeat_prompt else None)


def limits_for(settings: AgentDojoSettings) -> Limits:
    """AgentDojo sends nothing after an empty answer: no nudges; ours keeps its two."""
    return Limits() if settings.conversation == "ours" else Limits(max_nudges=0)
