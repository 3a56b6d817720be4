"""The relay that lets a person play the assistant (tests/corpus/relay.py): a real
OpenAI-compatible server on 127.0.0.1 that waits for a written reply; a retry sent at once
gets the same answer, while the same body later (a repeated cell) is a new request."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.corpus import relay


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def served(tmp_path: Path):
    port = _free_port()
    threading.Thread(target=relay.serve, args=(tmp_path, port), daemon=True).start()
    for _ in range(50):
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            break
        except httpx.HTTPError:
            time.sleep(0.05)
    return tmp_path, f"http://127.0.0.1:{port}/v1"


BODY = {"model": "player", "messages": [{"role": "system", "content": "You help."},
                                        {"role": "user", "content": "Book the room."}],
        "tools": [{"type": "function", "function": {"name": "search_listings", "description": "Find listings.",
                                                    "parameters": {"type": "object", "properties": {}}}}]}


def _ask(url: str, body: dict, out: list) -> None:
    out.append(httpx.post(f"{url}/chat/completions", json=body, timeout=10).json())


def _answer_when_waiting(folder: Path, **reply) -> None:
    for _ in range(100):
        if relay._pending(folder) is not None:
            assert relay.write_reply(folder, reply.get("text"), reply.get("calls", [])) == 0
            return
        time.sleep(0.05)
    raise AssertionError("no request arrived")


def test_a_request_waits_for_the_players_tool_call_and_returns_it_in_the_wire_format(served) -> None:
    folder, url = served
    out: list = []
    t = threading.Thread(target=_ask, args=(url, BODY, out))
    t.start()
    _answer_when_waiting(folder, calls=[("search_listings", '{"query": "Miragaia"}')])
    t.join(10)
    message = out[0]["choices"][0]["message"]
    assert out[0]["choices"][0]["finish_reason"] == "tool_calls"
    assert json.loads(message["tool_calls"][0]["function"]["arguments"]) == {"query": "Miragaia"}


def test_a_retry_gets_the_same_answer_and_a_later_repeat_is_asked_again(served) -> None:
    folder, url = served
    first: list = []
    t = threading.Thread(target=_ask, args=(url, BODY, first))
    t.start()
    _answer_when_waiting(folder, text="Shall I book it?")
    t.join(10)
    retry: list = []
    _ask(url, BODY, retry)  # sent again at once: answered from the saved reply, no new request
    assert retry[0]["choices"][0]["message"]["content"] == "Shall I book it?"
    assert len(list((folder / "requests").glob("*.json"))) == 1
    other = dict(BODY, messages=[*BODY["messages"], {"role": "assistant", "content": "Hi"}])
    second: list = []
    t = threading.Thread(target=_ask, args=(url, other, second))
    t.start()
    _answer_when_waiting(folder, text="Done.")
    t.join(10)
    repeat: list = []
    t = threading.Thread(target=_ask, args=(url, BODY, repeat))  # the first body again, later: a new cell
    t.start()
    _answer_when_waiting(folder, text="Want me to book it?")
    t.join(10)
    assert repeat[0]["choices"][0]["message"]["content"] == "Want me to book it?"
    assert len(list((folder / "requests").glob("*.json"))) == 3


def test_a_label_applies_to_the_conversation_last_shown(served, capsys) -> None:
    folder, url = served
    out: list = []
    t = threading.Thread(target=_ask, args=(url, BODY, out))
    t.start()
    for _ in range(100):
        if relay._pending(folder) is not None:
            break
        time.sleep(0.05)
    assert relay.show_next(folder, wait=5) == 0
    shown = capsys.readouterr().out
    assert "NEW CONVERSATION" in shown and "search_listings" in shown and "Book the room." in shown
    assert relay.write_label(folder, "fault", "will book without asking") == 0
    relay.write_reply(folder, "ok", [])
    t.join(10)
    label = json.loads((folder / "labels.jsonl").read_text().splitlines()[0])
    assert (label["label"], label["at_request"]) == ("fault", 1)
