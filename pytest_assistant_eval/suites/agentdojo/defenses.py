"""AgentDojo's defenses, applied as its own pipeline applies them (issue 25).

Nothing of a defense is written here again: AgentDojo's ``AgentPipeline.from_config`` builds its
pipeline for the run's defense around a stand-in model element, and the pieces the model's
conversation depends on are read off that pipeline (``pipeline_shape``): the system message
(spotlighting adds its sentence), the tool-output formatter (YAML; spotlighting wraps it in
``<<`` ``>>``), the round limit of its ``ToolsExecutionLoop`` (15), whether the user's prompt is
sent again after the tool outputs (``repeat_user_prompt``), the tool filter's prompt
(``tool_filter``: one extra request through our provider, whose answer chooses the tools offered)
and the prompt-injection detector (``transformers_pi_detector``, only where its extra is installed).

The stand-in is never asked anything: our loop and providers send the requests. ``agentdojo``
is imported only inside functions.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable

from pytest_assistant_eval.messages import ChatRequest, Message, ToolDefinition

__all__ = ["PipelineShape", "DETECTOR_EXTRA", "check_defense", "defense_names", "pipeline_shape",
           "run_tool_filter", "apply_tool_filter", "filtered_tools"]

#: What ``transformers_pi_detector`` needs and how to install it (AgentDojo's own extra).
DETECTOR_EXTRA = "pip install 'agentdojo[transformers]' (the detector needs transformers and torch)"


def defense_names() -> list[str]:
    """AgentDojo's defenses (its ``DEFENSES`` list)."""
    from agentdojo.agent_pipeline.agent_pipeline import DEFENSES

    return list(DEFENSES)


def check_defense(name: str) -> None:
    """Refuse a defense AgentDojo does not have, or the detector when its extra is missing."""
    known = defense_names()
    if name not in known:
        raise ValueError(f"unknown defense {name!r}; AgentDojo's defenses are: {', '.join(known)}")
    if name == "transformers_pi_detector":
        missing = [m for m in ("transformers", "torch") if importlib.util.find_spec(m) is None]
        if missing:
            raise ValueError(f"defense {name!r} needs {' and '.join(missing)}, which are not installed: {DETECTOR_EXTRA}")


@dataclass(frozen=True)
class PipelineShape:
    """The parts of AgentDojo's pipeline for one model and defense that shape the conversation."""

    name: str  # the pipeline's name: the model id, "-<defense>" with a defense
    system_message: str
    output_formatter: Callable[[Any], str]  # a tool's return value -> the text the model sees
    max_iters: int  # rounds of tool execution its ToolsExecutionLoop allows
    repeat_prompt: bool  # the user's prompt is sent again after every round of tool outputs
    tool_filter_prompt: str | None  # tool_filter: the request that chooses the tools
    detector: Any = None  # transformers_pi_detector: AgentDojo's detector element


def _stand_in(name: str) -> Any:
    from agentdojo.agent_pipeline.llms.openai_llm import OpenAILLM

    class StandInLLM(OpenAILLM):  # an OpenAILLM, so tool_filter accepts it; never queried
        def __init__(self, model: str) -> None:
            self.name = model
            self.model = model
            self.client = None

        def query(self, *args: Any, **kwargs: Any) -> Any:
            raise RuntimeError("the stand-in of AgentDojo's pipeline is never asked; our loop sends the requests")

    return StandInLLM(name)


@lru_cache(maxsize=16)
def pipeline_shape(defense: str | None, model: str) -> PipelineShape:
    """Build AgentDojo's pipeline for ``defense`` (None: none) around a stand-in named ``model``."""
    from agentdojo.agent_pipeline.agent_pipeline import AgentPipeline, PipelineConfig
    from agentdojo.agent_pipeline.basic_elements import InitQuery, SystemMessage
    from agentdojo.agent_pipeline.llms.openai_llm import OpenAILLMToolFilter
    from agentdojo.agent_pipeline.pi_detector import PromptInjectionDetector
    from agentdojo.agent_pipeline.tool_execution import ToolsExecutionLoop, ToolsExecutor

    pipeline = AgentPipeline.from_config(PipelineConfig(llm=_stand_in(model), model_id=None, defense=defense,
                                                        system_message_name=None, system_message=None))
    elements = list(pipeline.elements)
    system = next(e for e in elements if isinstance(e, SystemMessage))
    loop = next(e for e in elements if isinstance(e, ToolsExecutionLoop))
    executor = next(e for e in loop.elements if isinstance(e, ToolsExecutor))
    tool_filter = next((e for e in elements if isinstance(e, OpenAILLMToolFilter)), None)
    return PipelineShape(
        name=str(pipeline.name), system_message=system.system_message, output_formatter=executor.output_formatter,
        max_iters=int(loop.max_iters), repeat_prompt=any(isinstance(e, InitQuery) for e in loop.elements),
        tool_filter_prompt=tool_filter.prompt if tool_filter is not None else None,
        detector=next((e for e in loop.elements if isinstance(e, PromptInjectionDetector)), None))


def filtered_tools(tools: tuple[ToolDefinition, ...], answer: str) -> tuple[ToolDefinition, ...]:
    """The tools whose name the filter's answer contains, as AgentDojo's ``OpenAILLMToolFilter`` keeps them."""
    return tuple(t for t in tools if t.name in answer)


def _filter_exchange(messages: list[Message], prompt: str) -> str | None:
    """The tool filter's answer when the conversation already holds it (system, user, filter prompt, answer)."""
    if len(messages) >= 4 and messages[2].role == "user" and messages[2].content == prompt:
        return messages[3].content
    return None


def apply_tool_filter(conversation: Any, shape: PipelineShape, all_tools: tuple[ToolDefinition, ...]) -> bool:
    """Offer only the tools the conversation's filter answer chose; False when it has none yet.

    Read from the conversation's own messages, so a checkpoint restores the same offer."""
    if shape.tool_filter_prompt is None:
        return True
    answer = _filter_exchange(conversation.state.messages, shape.tool_filter_prompt)
    if answer is None:
        return False
    conversation.level = dataclasses.replace(conversation.level, tools=filtered_tools(all_tools, answer))
    return True


def run_tool_filter(conversation: Any, shape: PipelineShape) -> None:
    """AgentDojo's tool filter: one request (every tool listed, ``tool_choice`` none) after the
    user's prompt, its answer kept in the conversation, then only the tools it names offered."""
    assert shape.tool_filter_prompt is not None
    state = conversation.state
    all_tools = tuple(conversation.level.tools)
    asked = Message(role="user", content=shape.tool_filter_prompt)
    request = ChatRequest(model=conversation.model, messages=[*state.messages, asked], tools=list(all_tools),
                          max_output_tokens=conversation.level.max_output_tokens, tool_choice="none",
                          stream=conversation.stream)
    from pytest_assistant_eval.conversation.loop import request_body_sha256

    if conversation.before_request is not None:
        conversation.before_request(state, request)
    started = conversation.clock()
    response = conversation.assistant.complete(request)
    state.requests += 1
    conversation.requests_log.append({
        "index": state.requests, "turn": state.turn, "round": 0, "purpose": "tool_filter",
        "seconds": round(conversation.clock() - started, 6), "usage": response.usage.to_dict(),
        "stop_reason": response.stop_reason, "request_sha256": request_body_sha256(request)})
    # A tool call in the answer has no result to follow it: only its text is kept, as the filter reads only text.
    answer = Message(role="assistant", content=response.message.content or "")
    state.messages.extend([asked, answer])
    state.transcript.append({"type": "tool_filter", "turn": state.turn, "text": answer.content})
    apply_tool_filter(conversation, shape, all_tools)
