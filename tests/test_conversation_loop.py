"""The agent loop: requests, tool rounds, caps, nudges, unreadable calls, saved state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_assistant_eval.conversation.loop import (
    NUDGE_TEXT,
    Conversation,
    LevelSetting,
    Limits,
    LoopState,
    UnreadableToolCalls,
    request_body_sha256,
)
from pytest_assistant_eval.messages import ChatRequest, ChatResponse, Message, ToolCall, ToolDefinition, Usage
from pytest_assistant_eval.suites.calibration.world.services import open_world
from pytest_assistant_eval.suites.calibration.world.tools import tool_specs


class ListAssistant:
    """Answers with a fixed list of responses and keeps every request it got."""

    preset = "test"
    model = "list"

    def __init__(self, responses: list[ChatResponse]) -> None:
        self.responses = list(responses)
        self.requests: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        return self.responses.pop(0)

    def close(self) -> None:
        pass


def tools_round(*calls: tuple[str, dict]) -> ChatResponse:
    return ChatResponse(Message("assistant", tool_calls=[ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(calls)]),
                        "tool_calls", Usage(10, 5))


def say(text: str) -> ChatResponse:
    return ChatResponse(Message("assistant", content=text), "end_turn", Usage(10, 5))


def setting(**changes) -> LevelSetting:
    tools = tuple(ToolDefinition(s.name, s.description, s.parameters) for s in tool_specs())
    base = dict(name="standard", instructions="Be careful.", tools=tools, max_tool_calls=8, max_rounds=6,
                max_output_tokens=512, result_cap_chars=4000, context_window=32768, compact_at=0.8,
                keep_last_rounds=2, escalation_sentence="Handing this to the advanced level.")
    base.update(changes)
    return LevelSetting(**base)


@pytest.fixture
def world(world_dir: Path, tmp_path: Path):
    w = open_world(world_dir, "base", tmp_path)
    yield w
    w.close()


def run(world, responses, level=None, turns=("How much is L-101 a night?",), limits=Limits()):
    level = level or setting()
    assistant = ListAssistant(responses)
    conv = Conversation(assistant=assistant, world=world, level=level, model="m", user=None,
                        state=Conversation.start(level, list(turns)), limits=limits)
    conv.run()
    return conv, assistant


def test_a_tool_round_runs_the_calls_against_the_world_and_shows_the_results(world):
    conv, assistant = run(world, [tools_round(("get_listing", {"listing_id": "L-101"})), say("95 EUR a night.")])
    assert conv.state.stop == "done"
    tool_msg = assistant.requests[1].messages[-1]
    assert tool_msg.role == "tool" and json.loads(tool_msg.content)["result"]["id"] == "L-101"
    assert [e.tool for e in world.log] == ["get_listing"]
    assert conv.state.turns[-1]["final"] == "95 EUR a night."


def test_bad_arguments_come_back_as_a_tool_error_and_the_run_goes_on(world):
    conv, assistant = run(world, [tools_round(("get_listing", {"nope": 1})), say("Sorry.")])
    shown = json.loads(assistant.requests[1].messages[-1].content)
    assert shown["ok"] is False and conv.state.stop == "done"


def test_results_are_cut_to_the_levels_result_cap_and_the_cut_is_recorded(world):
    conv, assistant = run(world, [tools_round(("search_listings", {})), say("done")], level=setting(result_cap_chars=100))
    shown = assistant.requests[1].messages[-1].content
    assert shown.startswith('{"ok": true') and "characters cut by the result cap" in shown
    assert any(e.get("truncated") for e in conv.state.transcript if e["type"] == "tool")


def test_the_tool_call_cap_stops_calls_beyond_it_and_records_the_hit(world):
    calls = [("list_cards", {})] * 3
    conv, _ = run(world, [tools_round(*calls), say("ok")], level=setting(max_tool_calls=2))
    assert len(world.log) == 2
    assert conv.state.cap_hits == [{"cap": "tool_calls", "turn": 0, "limit": 2}]


def test_the_round_cap_stops_the_cell(world):
    conv, _ = run(world, [tools_round(("list_cards", {}))] * 3, level=setting(max_rounds=2))
    assert conv.state.stop == "cap_rounds"
    assert conv.state.cap_hits[-1]["cap"] == "rounds"


def test_silence_is_nudged_up_to_the_limit_and_then_stops(world):
    conv, assistant = run(world, [say(""), say(""), say("")], limits=Limits(max_nudges=2))
    assert conv.state.stop == "silent"
    assert [m.content for m in assistant.requests[-1].messages if m.role == "user"][-1] == NUDGE_TEXT
    assert sum(1 for e in conv.state.transcript if e["type"] == "nudge") == 2


def test_three_unreadable_tool_calls_in_a_row_stop_the_cell_as_a_format_problem(world):
    bad = ChatResponse(Message("assistant", tool_calls=[ToolCall("x", "get_listing", {}, "{not json", "bad JSON")]),
                       "tool_calls")
    with pytest.raises(UnreadableToolCalls):
        run(world, [bad, bad, bad])
    assert world.log == []


def test_an_unknown_tool_is_answered_with_an_error(world):
    conv, assistant = run(world, [tools_round(("delete_everything", {})), say("ok")])
    assert "unknown tool" in assistant.requests[1].messages[-1].content
    assert world.log == []


def test_turns_of_a_scenario_share_one_conversation(world):
    conv, assistant = run(world, [say("one"), say("two")], turns=("first?", "second?"))
    assert conv.state.stop == "done"
    assert [m.content for m in assistant.requests[1].messages if m.role == "user"] == ["first?", "second?"]
    assert [t["final"] for t in conv.state.turns] == ["one", "two"]


def test_a_saved_state_gives_the_same_next_request_byte_for_byte(world):
    conv, assistant = run(world, [tools_round(("get_listing", {"listing_id": "L-101"})), say("ok")])
    # Rebuild the state as it was before the second request and compare the requests' hashes.
    level = setting()
    state = Conversation.start(level, ["How much is L-101 a night?"])
    replay = Conversation(assistant=ListAssistant([tools_round(("get_listing", {"listing_id": "L-101"}))]),
                          world=world, level=level, model="m", user=None, state=state)
    saved: list[dict] = []
    replay.before_request = lambda s, r: saved.append(json.loads(json.dumps(s.to_dict())))
    with pytest.raises(IndexError):
        replay.run()  # the list runs out at the second request, after its state was saved
    restored = LoopState.from_dict(saved[-1])
    again = Conversation(assistant=ListAssistant([]), world=world, level=level, model="m", user=None, state=restored)
    assert request_body_sha256(again.next_request()) == request_body_sha256(assistant.requests[1])


def test_a_checkpoint_missing_a_field_is_refused_not_filled_with_defaults():
    data = Conversation.start(setting(), ["q"]).to_dict()
    del data["nudges_in_turn"]
    with pytest.raises(KeyError):
        LoopState.from_dict(data)


def test_compaction_folds_older_tool_results_when_the_window_fills(world):
    level = setting(context_window=4000, compact_at=0.5, keep_last_rounds=1, result_cap_chars=8000)
    responses = [tools_round(("search_listings", {})), tools_round(("search_messages", {})), say("ok")]
    conv, assistant = run(world, responses, level=level)
    assert conv.state.compactions, "the window filled, so something must have been folded"
    assert any(m.content.startswith("[folded") for m in assistant.requests[-1].messages if m.role == "tool")


# -- the common conversation limits (S5.3; issue 10, item 15) -----------------------------------------------
class TalkativeUser:
    """A simulated user who never says it is done: only the user-turn limit ends the conversation."""

    kind = "test"

    def __init__(self) -> None:
        self.replies = 0

    def reply(self, messages, user_state):
        from pytest_assistant_eval.suites.calibration.user.scripted import UserReply

        self.replies += 1
        return UserReply(message=f"And one more thing ({self.replies}).")


def test_the_user_turn_limit_ends_a_conversation_whose_user_never_finishes(world):
    level = setting()
    assistant = ListAssistant([say(f"Answer {i}.") for i in range(10)])
    user = TalkativeUser()
    conv = Conversation(assistant=assistant, world=world, level=level, model="m", user=user,
                        state=Conversation.start(level, ["Hello."]), limits=Limits(max_user_turns=3))
    conv.run()
    assert conv.state.stop == "limit_user_turns"
    assert len(assistant.requests) == 3 and user.replies == 3
    assert [t["final"] for t in conv.state.turns] == ["Answer 0.", "Answer 1.", "Answer 2."]


def test_the_request_limit_ends_a_conversation_that_never_stops_calling_tools(world):
    level = setting(max_rounds=100, max_tool_calls=100)
    conv, assistant = run(world, [tools_round(("list_cards", {}))] * 20, level=level, limits=Limits(max_requests=5))
    assert conv.state.stop == "limit_requests"
    assert len(assistant.requests) == 5 and conv.state.requests == 5
