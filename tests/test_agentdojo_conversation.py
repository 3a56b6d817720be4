"""The conversation an AgentDojo cell holds (issue 25): AgentDojo's by default, ours on request.

Each test runs real cells (real AgentDojo environments and tools) with a recording assistant
and reads the requests the model got: AgentDojo's system message, tool results exactly as its
own ``tool_result_to_str`` gives them, no nudge after an empty answer, its 15 rounds of tool
execution and then one more answer whose calls are not run, no cut of a long result; and with
``conversation="ours"`` our JSON results, nudges and 20,000-character cap as before.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.conversation.loop import NUDGE_TEXT  # noqa: E402
from pytest_assistant_eval.messages import ChatRequest, ChatResponse, Message, ToolCall, Usage  # noqa: E402
from pytest_assistant_eval.suites.plan import ModelSpec  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.cells import parse_cell_id, start_environment, suites  # noqa: E402
from pytest_assistant_eval.run.session import RunSession  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings  # noqa: E402


class Scripted:
    """An assistant that answers from a list (the last answer repeats) and keeps every request."""

    def __init__(self, answers: list[Message]) -> None:
        self.answers = answers
        self.requests: list[ChatRequest] = []

    def begin_cell(self, *args: Any, **kwargs: Any) -> None:
        return None

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        message = self.answers[min(len(self.requests) - 1, len(self.answers) - 1)]
        message = Message(role="assistant", content=message.content,
                          tool_calls=[ToolCall(id=f"c{len(self.requests)}-{i}", name=c.name, arguments=dict(c.arguments))
                                      for i, c in enumerate(message.tool_calls)])
        return ChatResponse(message, "tool_calls" if message.tool_calls else "end_turn", Usage(1, 1))


def call(name: str, **args: Any) -> Message:
    return Message(role="assistant", tool_calls=[ToolCall(id="x", name=name, arguments=args)])


def say(text: str) -> Message:
    return Message(role="assistant", content=text)


def run_one(tmp_path: Path, cell_id: str, answers: list[Message], **settings: Any) -> tuple[dict[str, Any], Scripted]:
    assistant = Scripted(answers)
    run = AgentDojoRun(make_session=RunSession, out=tmp_path / "m", model=ModelSpec("scripted", "oracle"), settings=AgentDojoSettings(**settings))
    run._provider = assistant
    path = run_cell(run, parse_cell_id(cell_id))
    return json.loads(path.read_text(encoding="utf-8")), assistant


def agentdojo_result(cell_id: str, name: str, **args: Any) -> str:
    """What AgentDojo's own ToolsExecutor shows for this call on the cell's start environment."""
    from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
    from agentdojo.functions_runtime import FunctionsRuntime

    cell = parse_cell_id(cell_id)
    suite = suites()[cell.suite]
    value, error = FunctionsRuntime(suite.tools).run_function(start_environment(cell, model="oracle"), name, args)
    return error or tool_result_to_str(value)


def tool_messages(request: ChatRequest) -> list[Message]:
    return [m for m in request.messages if m.role == "tool"]


def test_a_default_cell_shows_agentdojos_system_message_and_its_yaml_tool_output(tmp_path):
    from agentdojo.agent_pipeline.agent_pipeline import load_system_message

    cell = "AD-banking-1__r1"
    record, assistant = run_one(tmp_path, cell, [call("get_most_recent_transactions", n=100), say("Total: 1050.")])
    first, second = assistant.requests
    assert first.messages[0].role == "system" and first.messages[0].content == load_system_message(None)
    assert [m.role for m in first.messages] == ["system", "user"]
    shown = tool_messages(second)[0].content
    assert shown == agentdojo_result(cell, "get_most_recent_transactions", n=100)
    assert not shown.startswith("{") and "recipient:" in shown  # YAML, not our {"ok": ...} JSON
    assert record["system"] == load_system_message(None)


def test_an_error_is_shown_as_agentdojo_shows_it(tmp_path):
    cell = "AD-workspace-0__r1"
    _, assistant = run_one(tmp_path, cell, [call("get_day_calendar_events", day="not a date"), say("done")])
    shown = tool_messages(assistant.requests[1])[0].content
    assert shown == agentdojo_result(cell, "get_day_calendar_events", day="not a date")
    assert shown.startswith("ValueError: ")


def test_a_tool_the_suite_does_not_have_is_answered_in_agentdojos_words(tmp_path):
    _, assistant = run_one(tmp_path, "AD-banking-0__r1", [call("launch_rocket"), say("done")])
    assert tool_messages(assistant.requests[1])[0].content == "Invalid tool launch_rocket provided."


def test_no_nudge_follows_an_empty_answer(tmp_path):
    record, assistant = run_one(tmp_path, "AD-banking-0__r1", [say("")])
    assert len(assistant.requests) == 1
    assert record["stop_reason"] == "silent"
    assert not any(t["type"] == "nudge" for t in record["transcript"])


def test_the_cell_stops_after_agentdojos_fifteen_rounds_of_tool_execution(tmp_path):
    record, assistant = run_one(tmp_path, "AD-banking-0__r1", [call("get_balance")])
    assert len(assistant.requests) == 16  # the first answer and one after each of 15 rounds of results
    assert len(record["service_log"]) == 15  # the 16th answer's call is not run, as in its ToolsExecutionLoop
    assert len(tool_messages(assistant.requests[-1])) == 15
    assert record["stop_reason"] == "cap_rounds"


def test_a_long_result_is_never_cut(tmp_path):
    cell = "AD-workspace-0__r1"
    record, assistant = run_one(tmp_path, cell, [call("list_files"), say("done")])
    shown = tool_messages(assistant.requests[1])[0].content
    assert len(shown) > 20000
    assert shown == agentdojo_result(cell, "list_files")
    env = start_environment(parse_cell_id(cell), model="oracle")
    assert all(f"id_: '{file_id}'" in shown for file_id in env.cloud_drive.files)  # every file seen
    assert not any(t.get("truncated") for t in record["transcript"] if t["type"] == "tool")


def test_list_strings_are_read_as_lists_as_agentdojos_executor_reads_them(tmp_path):
    record, _ = run_one(tmp_path, "AD-workspace-0__r1",
                        [call("search_files_by_filename", filename="['a', 'b']"), say("done")])
    # a list written as a string reaches the tool as AgentDojo's ToolsExecutor passes it: a list
    assert record["service_log"][0]["arguments"] == {"filename": ["a", "b"]}


def test_our_conversation_is_todays_on_request_and_labelled_not_comparable(tmp_path):
    cell = "AD-workspace-0__r1"
    record, assistant = run_one(tmp_path, cell, [call("list_files"), say(""), say(""), say("")], conversation="ours")
    shown = tool_messages(assistant.requests[1])[0].content
    assert shown.startswith('{"ok": true, "result": ') and "characters cut by the result cap" in shown
    assert [m.content for m in assistant.requests[-1].messages if m.role == "user"][-2:] == [NUDGE_TEXT, NUDGE_TEXT]
    assert len(assistant.requests) == 4  # the call, an empty answer and its two nudges
    assert record["conversation"] == "ours" and record["comparable"] is False
    assert "not comparable with AgentDojo's leaderboard" in record["not_comparable"]


def test_our_conversation_allows_forty_rounds(tmp_path):
    record, assistant = run_one(tmp_path, "AD-banking-0__r1", [call("get_balance")], conversation="ours")
    assert len(assistant.requests) == 40 and len(record["service_log"]) == 40
