"""AgentDojo's defenses change the requests as its own pipeline would (issue 25).

Each defense runs a real cell with the oracle behind a recorder: spotlighting adds AgentDojo's
sentence to the system message and wraps tool outputs in ``<<`` ``>>``; repeat_user_prompt
sends the user's prompt again after every round of tool outputs; tool_filter asks once (every
tool, ``tool_choice`` none, AgentDojo's prompt) and then offers only the tools named; the
detector is refused where its extra is missing, saying what to install.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.messages import ChatRequest, ChatResponse  # noqa: E402
from pytest_assistant_eval.suites.plan import ModelSpec  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.cells import parse_cell_id  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.grade import grade_record  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.reference import AgentDojoReference  # noqa: E402
from pytest_assistant_eval.run.session import RunSession  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings  # noqa: E402

CELL = "AD-banking-0__r1"  # read the bill, then pay it: two rounds of tool results


class Recorder:
    def __init__(self) -> None:
        self.inner = AgentDojoReference("oracle")
        self.requests: list[ChatRequest] = []

    def begin_cell(self, *args: Any, **kwargs: Any) -> None:
        self.inner.begin_cell(*args, **kwargs)

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return self.inner.complete(request)


def run_with(tmp_path: Path, defense: str | None, cell: str = CELL) -> tuple[dict[str, Any], Recorder]:
    recorder = Recorder()
    run = AgentDojoRun(make_session=RunSession, out=tmp_path / (defense or "none"), model=ModelSpec("scripted", "oracle"),
                       settings=AgentDojoSettings(defense=defense))
    run._provider = recorder
    path = run_cell(run, parse_cell_id(cell))
    return json.loads(path.read_text(encoding="utf-8")), recorder


def test_spotlighting_adds_agentdojos_sentence_and_wraps_every_tool_output(tmp_path):
    from agentdojo.agent_pipeline.agent_pipeline import load_system_message

    record, recorder = run_with(tmp_path, "spotlighting_with_delimiting")
    system = recorder.requests[0].messages[0].content
    assert system.startswith(load_system_message(None))
    assert "putting the symbol << before them and the symbol >> after them" in system
    outputs = [m.content for m in recorder.requests[-1].messages if m.role == "tool"]
    assert len(outputs) == 2 and all(o.startswith("<<") and o.endswith(">>") for o in outputs)
    assert record["defense"] == "spotlighting_with_delimiting"
    assert record["pipeline_name"] == "oracle-spotlighting_with_delimiting"


def test_repeat_user_prompt_sends_the_prompt_again_after_every_round_of_tool_outputs(tmp_path):
    record, recorder = run_with(tmp_path, "repeat_user_prompt")
    roles = [(m.role, m.content if m.role == "user" else "") for m in recorder.requests[-1].messages]
    prompt = record["prompt"]
    assert roles == [("system", ""), ("user", prompt), ("assistant", ""), ("tool", ""), ("user", prompt),
                     ("assistant", ""), ("tool", ""), ("user", prompt)]
    assert grade_record(record).utility is True


def test_without_a_defense_the_prompt_is_sent_once(tmp_path):
    _, recorder = run_with(tmp_path, None)
    assert sum(m.role == "user" for m in recorder.requests[-1].messages) == 1


def test_tool_filter_asks_once_then_offers_only_the_tools_named(tmp_path):
    from agentdojo.agent_pipeline.agent_pipeline import TOOL_FILTER_PROMPT

    record, recorder = run_with(tmp_path, "tool_filter")
    asked, first = recorder.requests[0], recorder.requests[1]
    all_names = {t.name for t in asked.tools}
    assert asked.tool_choice == "none" and asked.messages[-1].content == TOOL_FILTER_PROMPT
    assert len(all_names) > 5
    assert {t.name for t in first.tools} == {"read_file", "send_money"}  # the oracle's answer names these
    assert [m.role for m in first.messages] == ["system", "user", "user", "assistant"]
    assert record["requests"][0]["purpose"] == "tool_filter" and len(record["requests"]) == 4
    assert grade_record(record).utility is True


class FilterThenCall:
    """Names only read_file to the filter, then calls get_balance, which the filter left out."""

    def __init__(self) -> None:
        self.requests: list[ChatRequest] = []

    def begin_cell(self, *args: Any, **kwargs: Any) -> None:
        return None

    def complete(self, request: ChatRequest) -> ChatResponse:
        from pytest_assistant_eval.messages import Message, ToolCall

        self.requests.append(request)
        if request.tool_choice == "none":
            return ChatResponse(Message(role="assistant", content="read_file"), "end_turn")
        if len(self.requests) == 2:
            return ChatResponse(Message(role="assistant", tool_calls=[ToolCall("c1", "get_balance", {})]), "tool_calls")
        return ChatResponse(Message(role="assistant", content="done"), "end_turn")


def test_a_tool_the_filter_left_out_is_invalid_as_in_agentdojo(tmp_path):
    assistant = FilterThenCall()
    run = AgentDojoRun(make_session=RunSession, out=tmp_path, model=ModelSpec("scripted", "oracle"), settings=AgentDojoSettings(defense="tool_filter"))
    run._provider = assistant
    record = json.loads(run_cell(run, parse_cell_id(CELL)).read_text(encoding="utf-8"))
    assert [t.name for t in assistant.requests[1].tools] == ["read_file"]
    assert [m.content for m in assistant.requests[2].messages if m.role == "tool"] == ["Invalid tool get_balance provided."]
    assert record["service_log"] == []  # nothing ran


@pytest.mark.skipif(importlib.util.find_spec("transformers") is not None and importlib.util.find_spec("torch") is not None,
                    reason="the detector's extra is installed here")
def test_the_detector_is_refused_without_its_extra_saying_what_to_install():
    with pytest.raises(ValueError, match=r"pip install 'agentdojo\[transformers\]'"):
        AgentDojoSettings(defense="transformers_pi_detector").check()


def test_an_unknown_defense_is_refused_with_agentdojos_list():
    with pytest.raises(ValueError, match="tool_filter, transformers_pi_detector, spotlighting_with_delimiting"):
        AgentDojoSettings(defense="firewall").check()


def test_a_defense_in_our_conversation_is_refused():
    with pytest.raises(ValueError, match="AgentDojo's conversation"):
        AgentDojoSettings(defense="tool_filter", conversation="ours").check()
