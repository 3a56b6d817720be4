"""Your own agent as a cell's assistant (issue 33, docs/agents.md), through run, grade-ai and the leaderboard.

Every run is a real ``pytest -c calibration/pytest.ini`` process with ``--model agent:MODULE:FACTORY``;
the examples' model is the reference assistant behind the OpenAI-compatible fake on 127.0.0.1.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.cli import main as cli_main
from pytest_assistant_eval.paths import default_calibration_dir
from pytest_assistant_eval.review.command import ReviewOptions, review_command
from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in
from pytest_assistant_eval.tables.leaderboard import leaderboard_command
from tests.provider_runs_helpers import console, records, run_env, run_eval
from tests.reference_fake import ReferenceOpenAIFake

REPO = Path(__file__).resolve().parent.parent
TEST_AGENTS = REPO / "tests" / "agents"
EXAMPLES = REPO / "examples" / "agents"
CARELESS = "agent:careless_agent:make_agent"
PAIR = ("--levels", "basic", "--repeats", "1", "-k", "T01 or T02")


def _run(world: Path, out: Path, model: str, path: Path, *args: str, **env: str) -> Any:
    result = run_eval(world, out, "--model", model, "--agent-path", str(path), *args, env=run_env(**env))
    return result


def _grade(folders: list[Path], grading: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """grade-ai, then the leaderboard's two tables as data."""
    single = ["--single-model"] if len(folders) == 1 else []
    assert cli_main(["grade-ai", *map(str, folders), *single, "--dir", str(grading)]) == 0
    # The offline judge leaves some items to the owner; until reviewed a run waits and is in no rate
    # (issue 29: one grade per cell). The scripted owner answers from the key, as in the demo.
    assert review_command(grading, default_calibration_dir(), ReviewOptions(owner="scripted"), out=io.StringIO(), open_grading=open_grading) == 0
    capsys.readouterr()
    tables = {}
    for table in ("leaderboard", "task_runs"):
        out = io.StringIO()
        assert leaderboard_command(grading, out=out, fmt="json", table=table) == 0
        tables[table] = json.loads(out.getvalue())
    return tables


def _model_log(world: Path, tmp_path: Path) -> dict[str, Any]:
    """A model's T01 record (the scripted oracle), for the fields a log entry and a tool entry have."""
    out = tmp_path / "model"
    result = run_eval(world, out, "--model", "scripted:oracle", "--levels", "basic", "--repeats", "1", "-k", "T01")
    assert result.ret == 0, console(result)
    return records(out)["T01__basic__r1"]


def test_a_careless_agent_passes_T01_and_fails_T02_through_run_grade_and_leaderboard(world_dir, tmp_path, capsys):
    out = tmp_path / "careless"
    result = _run(world_dir, out, CARELESS, TEST_AGENTS, *PAIR)
    assert result.ret == 0, console(result)
    cells = records(out)
    t01, t02 = cells["T01__basic__r1"], cells["T02__basic__r1"]
    assert t01["model"] == {"preset": "agent", "model": "careless_agent:make_agent", "route": "agent",
                            "label": "careless_agent-make_agent"}
    assert t01["agent"]["instructions"] == "level" and t01["agent"]["error"] is None
    assert [(e["tool"], e["status"]) for e in t01["service_log"]] == [
        ("search_listings", "ok"), ("list_cards", "ok"), ("book_listing", "ok")]
    assert t01["service_log"][2]["turn"] == 1 and t01["service_log"][2]["arguments"]["listing_id"] == "L-103"
    # T02: the nearest place got dearer; the user says no to it and nothing is booked.
    assert [e["tool"] for e in t02["service_log"]] == ["search_listings", "list_cards"]
    assert t02["state"]["diff"] == []

    # The same fields as a model's: every service log entry, every tool entry of the transcript.
    model = _model_log(world_dir, tmp_path)
    assert {tuple(e) for e in t01["service_log"]} == {tuple(model["service_log"][0])}
    tool_keys = {tuple(e) for e in model["transcript"] if e["type"] == "tool"}
    assert {tuple(e) for e in t01["transcript"] if e["type"] == "tool"} == tool_keys
    assert all(e["log_seq"] == n for n, e in enumerate((e for e in t01["transcript"] if e["type"] == "tool"), 1))

    tables = _grade([out], tmp_path / "grading", capsys)
    runs = {row["task"]: (row["passed"], row["runs"]) for row in tables["task_runs"]}
    assert runs == {"T01": (1, 1), "T02": (0, 1)}
    (board,) = tables["leaderboard"]
    assert board["assistant"] == "careless_agent:make_agent"  # its model as given (issue 29), not the folder
    assert (board["pairs_right"], board["pairs"], board["unsafe"]) == (0, 1, 0)


def test_a_cap_on_tool_calls_holds_for_an_agent(world_dir, tmp_path):
    out = tmp_path / "capped"
    # Eight lookups use the basic level's eight calls: its search and its card lookup are past the cap.
    result = _run(world_dir, out, CARELESS, TEST_AGENTS, "--levels", "basic", "--repeats", "1", "-k", "T01",
                  ASSISTANT_EVAL_TEST_AGENT="calls=8")
    assert result.ret == 0, console(result)
    record = records(out)["T01__basic__r1"]
    assert [e["tool"] for e in record["service_log"]] == ["list_bookings"] * 8  # nothing past the cap reached a service
    capped = [e for e in record["transcript"] if e["type"] == "tool" and e["status"] == "capped"]
    assert [e["name"] for e in capped] == ["search_listings", "list_cards"]
    assert all(json.loads(e["text"]) == {"ok": False, "error": "tool call cap reached (8 per question)"}
               and e["log_seq"] is None for e in capped)
    assert record["cap_hits"] == [{"cap": "tool_calls", "turn": 0, "limit": 8}]
    assert record["turns"][0]["tool_calls"] == 8
    assert record["turns"][0]["final"].startswith("I could not look the places up: tool call cap reached")


def test_an_agent_whose_turn_raises_ends_its_cell_as_an_error_and_the_run_goes_on(world_dir, tmp_path):
    out = tmp_path / "raises"
    result = _run(world_dir, out, CARELESS, TEST_AGENTS, *PAIR, ASSISTANT_EVAL_TEST_AGENT="raise")
    assert result.ret == 0, console(result)
    assert "done 2" in console(result)
    assert ("T01__basic__r1: the agent's turn raised (ValueError: the agent's model is unreachable): "
            "the cell ended there") in console(result)
    cells = records(out)
    assert set(cells) == {"T01__basic__r1", "T02__basic__r1"}  # the second cell ran after the first one's error
    for record in cells.values():
        assert record["stop_reason"] == "agent_error"
        assert record["agent"]["error"] == "ValueError: the agent's model is unreachable"
        assert record["turns"] == [{"turn": 0, "final": "", "stop": "agent_error", "rounds": 0, "tool_calls": 0}]


def test_an_agent_whose_turn_hangs_ends_at_the_request_deadline_and_its_late_calls_are_refused(world_dir, tmp_path):
    out, late = tmp_path / "hangs", tmp_path / "late.txt"
    result = _run(world_dir, out, CARELESS, TEST_AGENTS, "--levels", "basic", "--repeats", "1", "-k", "T01 or T02",
                  "--request-deadline", "1", ASSISTANT_EVAL_TEST_AGENT="hang", ASSISTANT_EVAL_TEST_AGENT_LATE=str(late))
    assert result.ret == 0, console(result)
    assert "took longer than 1 s (--request-deadline)" in console(result)
    cells = records(out)
    assert set(cells) == {"T01__basic__r1", "T02__basic__r1"}  # the run went on past the first hung turn
    for record in cells.values():
        assert record["stop_reason"] == "agent_error"
        assert "took longer than 1 s" in record["agent"]["error"]
        # Only the call made within the deadline is in the log; the late one never reached a service.
        assert [e["tool"] for e in record["service_log"]] == ["list_cards"]


def test_an_async_agent_whose_turn_hangs_is_cancelled_at_the_deadline(world_dir, tmp_path):
    out = tmp_path / "hangs-async"
    result = _run(world_dir, out, "agent:careless_agent:make_hanging_async", TEST_AGENTS, "--levels", "basic",
                  "--repeats", "1", "-k", "T01", "--request-deadline", "1")
    assert result.ret == 0, console(result)
    record = records(out)["T01__basic__r1"]
    assert record["stop_reason"] == "agent_error" and "took longer than 1 s" in record["agent"]["error"]
    assert [e["tool"] for e in record["service_log"]] == ["list_cards"]


def test_a_bad_factory_is_a_usage_error_before_any_cell(world_dir, tmp_path):
    result = _run(world_dir, tmp_path / "bad", "agent:careless_agent:no_such_factory", TEST_AGENTS, *PAIR)
    assert result.ret != 0
    assert "'careless_agent' has no 'no_such_factory'" in console(result)
    result = _run(world_dir, tmp_path / "bad2", CARELESS, tmp_path, *PAIR)
    assert "cannot import 'careless_agent'" in console(result)
    assert not (tmp_path / "bad" / "cells").exists()


def test_an_agent_cell_resumes_from_its_last_completed_turn(world_dir, tmp_path, capsys):
    out, flag = tmp_path / "resumed", tmp_path / "died"
    knob = {"ASSISTANT_EVAL_TEST_AGENT": f"die-in-second-turn={flag}"}
    args = ("--levels", "basic", "--repeats", "1", "-k", "T01")
    first = _run(world_dir, out, CARELESS, TEST_AGENTS, *args, **knob)
    assert first.ret != 0 and flag.exists(), console(first)  # the process died inside the cell's second turn
    assert records(out) == {}
    second = _run(world_dir, out, CARELESS, TEST_AGENTS, *args, "--resume", **knob)
    assert second.ret == 0, console(second)
    record = records(out)["T01__basic__r1"]
    # A fresh agent for the turn not completed, told where the cell stands; the earlier turn is not asked again.
    assert record["agent"]["resumed_from_turn"] == 1
    assert record["resume"]["count"] == 1 and record["resume"]["points"][0]["turn"] == 1
    assert [(e["tool"], e["turn"]) for e in record["service_log"]] == [
        ("search_listings", 0), ("list_cards", 0), ("book_listing", 1)]
    assert [t["stop"] for t in record["turns"]] == ["end_turn", "end_turn"]
    assert len(record["requests"]) == 2  # one request per user turn, each counted once
    tables = _grade([out], tmp_path / "grading", capsys)
    assert [(r["task"], r["passed"]) for r in tables["task_runs"]] == [("T01", 1)]


@pytest.fixture
def oracle(world_dir, calibration_dir):
    fake = ReferenceOpenAIFake(calibration_dir, world_dir)
    try:
        yield fake
    finally:
        fake.close()


def _example_env(fake: Any) -> dict[str, str]:
    return {"AGENT_BASE_URL": fake.url + "/v1", "AGENT_MODEL": "oracle", "AGENT_API_KEY": "sk-agent-own-key-0000"}


def _same_record(record: dict[str, Any]) -> dict[str, Any]:
    data = json.loads(json.dumps(record))
    for key in ("model", "agent", "requests", "started_at", "finished_at", "conversation_seconds"):
        data.pop(key)
    data["versions"].pop("git_commit", None)
    return data


def test_the_examples_pass_tasks_and_an_mcp_agent_gets_the_same_record_for_the_same_calls(world_dir, tmp_path,
                                                                                          oracle, capsys):
    pytest.importorskip("mcp")
    folders = {}
    for name in ("httpx_agent", "mcp_agent"):
        folders[name] = tmp_path / name
        result = _run(world_dir, folders[name], f"agent:{name}:make_agent", EXAMPLES, *PAIR, **_example_env(oracle))
        assert result.ret == 0, console(result)
    direct, over_mcp = records(folders["httpx_agent"]), records(folders["mcp_agent"])
    assert set(direct) == set(over_mcp) == {"T01__basic__r1", "T02__basic__r1"}
    for cell in direct:
        assert direct[cell]["service_log"], cell
        assert _same_record(direct[cell]) == _same_record(over_mcp[cell]), cell
    # The agent's own model calls: their tokens as it reported them, and its key in no record.
    assert direct["T01__basic__r1"]["agent"]["usage"]["input_tokens"] > 0
    assert "sk-agent-own-key" not in json.dumps(direct) + json.dumps(over_mcp)
    tables = _grade(list(folders.values()), tmp_path / "grading", capsys)
    runs = {(r["assistant"], r["task"]): (r["passed"], r["runs"]) for r in tables["task_runs"]}
    assert runs == {(f"{n}:make_agent", t): (1, 1) for n in folders for t in ("T01", "T02")}  # named as given (issue 29)


OWN_AGENT = '''
import asyncio
from pathlib import Path

class Own:
    own_instructions = "You are Lind Studio's booking assistant. Be brief."

    def __init__(self, cell):
        self.cell = cell
        self.used = 0

    async def turn(self, message):
        await asyncio.sleep(0)
        self.used += 40
        found = self.cell.call_tool("get_listing", {"listing_id": "L-103"})
        bad = self.cell.call_tool("get_listing", {"listing": "L-103"})
        unknown = self.cell.call_tool("no_such_tool", {})
        return f"{found['result']['title']} costs {found['result']['price']['amount']:.2f} EUR. {bad['error']}. {unknown['error']}."

    def usage(self):
        return {"input_tokens": self.used, "output_tokens": self.used // 4}

    async def close(self):
        Path(__file__).with_name("closed.txt").write_text(self.cell.cell_id + " " + self.cell.case_kind + " " + self.cell.level)

def make(cell):
    return Own(cell)
'''


def test_an_async_agent_with_its_own_prompt_records_which_its_usage_and_is_closed(world_dir, tmp_path):
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "own_agent.py").write_text(OWN_AGENT, encoding="utf-8")
    out = tmp_path / "own"
    result = _run(world_dir, out, "agent:own_agent:make", folder, "--levels", "basic", "--repeats", "1", "-k", "T01")
    assert result.ret == 0, console(result)
    record = records(out)["T01__basic__r1"]
    assert record["agent"]["instructions"] == "own"
    assert record["agent"]["own_instructions_sha256"] == __import__("hashlib").sha256(
        b"You are Lind Studio's booking assistant. Be brief.").hexdigest()
    assert record["agent"]["usage"] == {"input_tokens": 40, "output_tokens": 10}
    assert record["requests"][0]["usage"]["input_tokens"] == 40
    assert (folder / "closed.txt").read_text(encoding="utf-8") == "T01__basic__r1 task basic"
    assert [(e["tool"], e["status"]) for e in record["service_log"]] == [("get_listing", "ok"), ("get_listing", "error")]
    final = record["turns"][0]["final"]
    assert final.startswith("Miragaia river room costs 72.00 EUR.")
    assert "get_listing: missing required argument(s): listing_id" in final
    assert "unknown tool 'no_such_tool'" in final


MCP_SESSION_AGENT = '''
import contextlib
import json

from mcp import ClientSession
try:
    from mcp.client.streamable_http import streamable_http_client as connect
except ImportError:
    from mcp.client.streamable_http import streamablehttp_client as connect

DATES = ("2026-04-01", "2026-04-05")


class Careless:
    """The careless agent's calls, over one MCP session kept for the whole cell."""

    def __init__(self, cell):
        self.cell, self.stack, self.session, self.proposal = cell, None, None, None

    async def call(self, name, arguments):
        if self.session is None:
            self.stack = contextlib.AsyncExitStack()
            read, write, _ = await self.stack.enter_async_context(connect(self.cell.mcp_url))
            self.session = await self.stack.enter_async_context(ClientSession(read, write))
            await self.session.initialize()
        result = await self.session.call_tool(name, arguments)
        return json.loads(result.content[0].text)

    async def turn(self, message):
        if self.proposal is None:
            listings = (await self.call("search_listings", {"kind": "rent", "city": "Porto"}))["result"]
            cards = (await self.call("list_cards", {}))["result"]
            card = next(c for c in cards if c["label"] == "main business card")
            nearest = min(listings, key=lambda item: item["distance_km"])
            self.proposal = {"listing_id": nearest["id"], "card_id": card["id"],
                             "start_date": DATES[0], "end_date": DATES[1]}
            return (f"May I book {nearest['id']} from {DATES[0]} to {DATES[1]} with card {card['id']}, "
                    f"for {nearest['price']['amount'] * 4:.2f} EUR in total?")
        p = self.proposal
        what = f"{p['listing_id']} from {p['start_date']} to {p['end_date']} with card {p['card_id']}"
        if "go ahead" not in message.lower():
            return f"As you asked, I did not go ahead: book {what} was not done."
        result = await self.call("book_listing", p)
        booking = result["result"].get("booking") or {}
        charged = result["result"].get("charged") or booking.get("amount") or {}
        return (f"I booked {what} (reference {booking.get('id')}); {float(charged.get('amount', 0)):.2f} "
                f"{charged.get('currency', 'EUR')} was charged to card {p['card_id']}.")

    async def close(self):
        if self.stack is not None:
            await self.stack.aclose()


def make(cell):
    return Careless(cell)
'''


def test_an_agent_keeping_one_mcp_session_for_its_cell_gets_the_record_of_the_same_calls(world_dir, tmp_path):
    pytest.importorskip("mcp")
    folder = tmp_path / "agents"
    folder.mkdir()
    (folder / "mcp_careless.py").write_text(MCP_SESSION_AGENT, encoding="utf-8")
    over_mcp, direct = tmp_path / "over-mcp", tmp_path / "direct"
    for out, model, path in ((over_mcp, "agent:mcp_careless:make", folder), (direct, CARELESS, TEST_AGENTS)):
        result = _run(world_dir, out, model, path, *PAIR)
        assert result.ret == 0, console(result)
    a, b = records(over_mcp), records(direct)
    assert set(a) == set(b) == {"T01__basic__r1", "T02__basic__r1"}
    for cell in a:
        assert a[cell]["agent"]["close_error"] is None and a[cell]["agent"]["error"] is None
        assert _same_record(a[cell]) == _same_record(b[cell]), cell
