"""The agent's tool calls through the loop's own path (issue 33): what is recorded and returned, in process."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_assistant_eval.agents.recorder import NO_TURN, ToolRecorder, result_value
from pytest_assistant_eval.conversation.loop import Conversation
from pytest_assistant_eval.suites.calibration.plan import level_setting, load_calibration
from pytest_assistant_eval.suites.calibration.world.services import open_world


@pytest.fixture
def recorder(world_dir, calibration_dir, tmp_path):
    _, levels = load_calibration(calibration_dir, world_dir)
    setting = level_setting(levels.levels["basic"])
    world = open_world(world_dir, "base", tmp_path)
    conversation = Conversation(assistant=None, world=world, level=setting, model="agent", user=None,
                                state=Conversation.start(setting, ["hello"]))
    yield ToolRecorder(conversation, open_=True)
    world.close()


def test_arguments_that_are_not_a_json_object_get_the_unreadable_call_error_and_reach_no_service(recorder):
    assert recorder.call("get_listing", ["L-103"])["error"].startswith(
        "could not read the tool call's arguments: the arguments must be a JSON object")
    assert "not JSON" in recorder.call("get_listing", {"listing_id": object()})["error"]
    assert recorder.conversation.world.log == []
    tools = [e for e in recorder.conversation.state.transcript if e["type"] == "tool"]
    assert [(e["status"], e["log_seq"], e["round"]) for e in tools] == [("error", None, 1), ("error", None, 2)]


def test_a_call_while_no_turn_runs_is_refused_and_not_recorded(recorder):
    recorder.open = False
    assert recorder.call("list_cards", {}) == {"ok": False, "error": NO_TURN}
    assert recorder.conversation.state.transcript[-1]["type"] == "user"


def test_a_result_past_the_cap_comes_back_as_shown_with_its_cut(recorder):
    found = recorder.call("search_listings", {"kind": "rent"})  # over 2,300 characters; the basic cap is 2,000
    assert found["ok"] is True and found["truncated"] is True
    assert found["text"].endswith(" characters cut by the result cap]") and len(found["text"]) > 2000
    assert recorder.conversation.world.log[0].status == "ok"


def test_every_call_is_a_round_of_one_call_in_the_messages_a_model_would_have(recorder):
    recorder.call("list_cards", {})
    recorder.call("get_card", {"card_id": "card-visa-4821"})
    messages = recorder.conversation.state.messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert [m.tool_calls[0].id for m in messages if m.role == "assistant"] == ["agent_0_1", "agent_0_2"]
    assert [(e.seq, e.turn, e.round) for e in recorder.conversation.world.log] == [(1, 0, 1), (2, 0, 2)]


@given(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=5), max_size=4), st.booleans())
def test_a_shown_json_object_is_returned_as_it_is(data, ok):
    text = json.dumps({"ok": ok, "result": data}, sort_keys=True)
    assert result_value(text, "ok" if ok else "error", False) == {"ok": ok, "result": data}
    assert result_value(text, "ok", True) == {"ok": True, "truncated": True, "text": text}


def test_a_shut_recorder_refuses_a_call_and_records_nothing(recorder):
    recorder.open = True
    recorder.shut()
    result = recorder.call("list_cards", {})
    assert result["ok"] is False and "no user turn is running" in result["error"]
    assert recorder.conversation.state.transcript == [] or all(
        e.get("type") != "tool" for e in recorder.conversation.state.transcript)
