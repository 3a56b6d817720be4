"""``assistant-eval serve-tools`` (issue 33): one cell's services over MCP for any process, stdio or HTTP,
with the service log and final state written when it stops."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

mcp = pytest.importorskip("mcp")

import anyio  # noqa: E402  (after the skip: the [agents] extra brings it)
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

BOOK = {"card_id": "card-visa-4821", "start_date": "2026-04-01", "end_date": "2026-04-05"}


def _command(world: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "pytest_assistant_eval", "serve-tools", "--world", str(world), "--case", "T01",
            "--level", "basic", "--out", str(out), *extra]


async def _calls(session: ClientSession, calls: list[tuple[str, dict]]) -> list[tuple[bool, dict]]:
    await session.initialize()
    listed = await session.list_tools()
    assert "book_listing" in {t.name for t in listed.tools}
    found = []
    for name, arguments in calls:
        result = await session.call_tool(name, arguments)
        found.append((bool(result.isError), json.loads(result.content[0].text)))
    return found


def test_over_stdio_calls_are_answered_as_a_models_and_the_log_and_state_are_written(world_dir, tmp_path):
    out = tmp_path / "served.json"
    argv = _command(world_dir, out, "--stdio")
    calls = [("get_listing", {}), ("no_such_tool", {}), ("book_listing", {"listing_id": "L-103", **BOOK, "card_id": "card-visa-5530"}),
             ("book_listing", {"listing_id": "L-103", **BOOK})]

    async def main() -> list[tuple[bool, dict]]:
        params = StdioServerParameters(command=argv[0], args=argv[1:])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            return await _calls(session, calls)

    answers = anyio.run(main)
    assert answers[0] == (True, {"ok": False, "error": "get_listing: missing required argument(s): listing_id"})
    assert answers[1] == (True, {"ok": False, "error": "unknown tool 'no_such_tool'"})
    assert answers[2][0] and answers[2][1]["refused"] is True  # a card the bank blocked: the world refuses
    assert answers[3][0] is False and answers[3][1]["ok"] is True
    served = json.loads(out.read_text(encoding="utf-8"))
    assert served["format"] == "assistant-eval.served-tools/1" and served["world"]["variant"] == "base"
    # An unknown tool never reaches a service (as for a model); the others are logged in order.
    assert [(e["seq"], e["tool"], e["status"]) for e in served["service_log"]] == [
        (1, "get_listing", "error"), (2, "book_listing", "refused"), (3, "book_listing", "ok")]
    assert [e["name"] for e in served["transcript"]] == [name for name, _ in calls]
    changed = {d["table"] for d in served["state"]["diff"]}
    assert "bookings" in changed and served["state"]["start_digest"] != served["state"]["final_digest"]


def test_over_http_the_levels_cap_holds_and_a_stop_writes_the_log(world_dir, tmp_path):
    try:
        from mcp.client.streamable_http import streamable_http_client as connect
    except ImportError:  # an mcp 1.x from before the name changed
        from mcp.client.streamable_http import streamablehttp_client as connect

    out = tmp_path / "served.json"
    server = subprocess.Popen(_command(world_dir, out), stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line).group(1)

        async def main() -> list[tuple[bool, dict]]:
            async with connect(url) as (read, write, _), ClientSession(read, write) as session:
                return await _calls(session, [("list_cards", {})] * 9)

        answers = anyio.run(main)
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
    assert server.returncode == 0
    assert all(not error for error, _ in answers[:8])
    assert answers[8] == (True, {"ok": False, "error": "tool call cap reached (8 per question)"})
    served = json.loads(out.read_text(encoding="utf-8"))
    assert len(served["service_log"]) == 8
    assert served["cap_hits"] == [{"cap": "tool_calls", "turn": 0, "limit": 8}]
    assert served["state"]["diff"] == []
