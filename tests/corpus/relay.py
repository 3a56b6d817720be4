"""A relay that lets a person (or a separate assistant instance) play the assistant.

It is how the regression corpus in ``tests/corpus/`` is written (S6.10): an OpenAI-compatible
Chat Completions server on 127.0.0.1 that, for each request, writes the request to a folder and
waits until someone writes a reply; the harness runs against it with the ``openai-compatible``
preset like against any model. The player sees only what a model would see (the system prompt,
the tools and the conversation) and never the case files.

    python tests/corpus/relay.py serve --dir D --port 8766          # the server
    python tests/corpus/relay.py next --dir D                        # wait for and show a request
    python tests/corpus/relay.py reply --dir D --text "..."          # answer it in words
    python tests/corpus/relay.py reply --dir D --call NAME '{"a": 1}' # or with tool calls
    python tests/corpus/relay.py label --dir D good|FAULT --note "..." # label this conversation

A request sent again at once (a retry) reuses its number and its reply, so a retry never asks
twice; the same body later (a repeat of a cell) is a new request.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_lock = threading.Lock()


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _conversation_key(body: dict[str, Any]) -> str:
    """Same system prompt and same first user message: the same conversation (cell)."""
    msgs = body.get("messages") or []
    first_user = next((m.get("content") for m in msgs if m.get("role") == "user"), "")
    system = next((m.get("content") for m in msgs if m.get("role") == "system"), "")
    return hashlib.sha256(json.dumps([system, first_user], sort_keys=True).encode()).hexdigest()[:12]


def _request_number(folder: Path, body: dict[str, Any]) -> int:
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    index_path = folder / "index.json"
    with _lock:
        index = json.loads(index_path.read_text()) if index_path.exists() else {"last": None, "count": 0}
        if index["last"] == digest:
            # A retry follows its original at once. The same body later is a new conversation
            # that opens like an earlier one (a repeat of a cell), and needs its own answer.
            return int(index["count"])
        number = index["count"] + 1
        index.update(last=digest, count=number)
        record = {"n": number, "conversation": _conversation_key(body), "body": body}
        _atomic_write(folder / "requests" / f"{number:04d}.json", json.dumps(record, ensure_ascii=False))
        _atomic_write(index_path, json.dumps(index))
        return number


def _completion(model: str, reply: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {"id": f"call_{i}_{abs(hash(json.dumps(c, sort_keys=True))) % 10**8}", "type": "function",
         "function": {"name": c["name"], "arguments": json.dumps(c["arguments"], ensure_ascii=False)}}
        for i, c in enumerate(reply.get("calls") or [])
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("text") or None}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-relay-{int(time.time() * 1000)}", "object": "chat.completion",
        "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def _stream(model: str, reply: dict[str, Any]) -> bytes:
    full = _completion(model, reply)
    msg = full["choices"][0]["message"]
    delta: dict[str, Any] = {"role": "assistant", "content": msg.get("content") or ""}
    if msg.get("tool_calls"):
        delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(msg["tool_calls"])]
    chunks = [
        {"id": full["id"], "object": "chat.completion.chunk", "created": full["created"], "model": model,
         "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {"id": full["id"], "object": "chat.completion.chunk", "created": full["created"], "model": model,
         "choices": [{"index": 0, "delta": {}, "finish_reason": full["choices"][0]["finish_reason"]}],
         "usage": full["usage"]},
    ]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def serve(folder: Path, port: int) -> None:
    (folder / "requests").mkdir(parents=True, exist_ok=True)
    (folder / "replies").mkdir(parents=True, exist_ok=True)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            self._send(200, json.dumps({"object": "list", "data": [{"id": "player", "object": "model"}]}).encode())

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            number = _request_number(folder, body)
            reply_path = folder / "replies" / f"{number:04d}.json"
            while not reply_path.exists():
                time.sleep(0.2)
            reply = json.loads(reply_path.read_text())
            model = body.get("model", "player")
            if body.get("stream"):
                self._send(200, _stream(model, reply), "text/event-stream")
            else:
                self._send(200, json.dumps(_completion(model, reply)).encode())

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"relay listening on http://127.0.0.1:{port}/v1, folder {folder}", flush=True)
    server.serve_forever()


def _pending(folder: Path) -> Path | None:
    for path in sorted((folder / "requests").glob("*.json")):
        if not (folder / "replies" / path.name).exists():
            return path
    return None


def _render_content(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _render_message(m: dict[str, Any]) -> str:
    role = m.get("role")
    if role == "tool":
        return f"[tool result {m.get('tool_call_id', '')}]\n{_render_content(m.get('content'))}"
    lines = [f"[{role}]"]
    if m.get("content"):
        lines.append(_render_content(m.get("content")))
    for call in m.get("tool_calls") or []:
        fn = call.get("function", {})
        lines.append(f"-> call {fn.get('name')} {fn.get('arguments')}  (id {call.get('id')})")
    return "\n".join(lines)


def _render_tools(tools: list[dict[str, Any]]) -> str:
    out = []
    for tool in tools:
        fn = tool.get("function", tool)
        params = fn.get("parameters", {}).get("properties", {})
        required = set(fn.get("parameters", {}).get("required", []))
        args = ", ".join(f"{k}{'' if k in required else '?'}: {v.get('type', '')}" for k, v in params.items())
        out.append(f"- {fn.get('name')}({args}): {fn.get('description', '')}")
    return "\n".join(out)


def show_next(folder: Path, wait: float) -> int:
    deadline = time.monotonic() + wait
    path = _pending(folder)
    while path is None:
        if time.monotonic() > deadline:
            print("no request is waiting (the run may have finished)")
            return 3
        time.sleep(0.5)
        path = _pending(folder)
    record = json.loads(path.read_text())
    body = record["body"]
    state_path = folder / "shown.json"
    shown = json.loads(state_path.read_text()) if state_path.exists() else {"setups": [], "last": None}
    messages = body.get("messages") or []
    system = "\n".join(_render_content(m.get("content")) for m in messages if m.get("role") == "system")
    tools = body.get("tools") or []
    setup = hashlib.sha256(json.dumps([system, tools], sort_keys=True).encode()).hexdigest()[:12]
    print(f"=== request {record['n']}  conversation {record['conversation']}  setup {setup} ===")
    if setup not in shown["setups"]:
        print("--- system prompt ---\n" + system)
        print("--- tools ---\n" + _render_tools(tools))
        shown["setups"].append(setup)
    else:
        print("(system prompt and tools as in setup " + setup + "; `relay.py setup --dir D` shows them again)")
    convo = [m for m in messages if m.get("role") != "system"]
    last = shown.get("last")
    if last and last["conversation"] == record["conversation"] and last["count"] <= len(convo):
        print(f"--- the same conversation continues ({last['count']} earlier messages not repeated) ---")
        convo_new = convo[last["count"]:]
    else:
        print("--- NEW CONVERSATION ---")
        convo_new = convo
    for m in convo_new:
        print(_render_message(m))
    shown["last"] = {"conversation": record["conversation"], "count": len(convo), "n": record["n"]}
    _atomic_write(state_path, json.dumps(shown))
    print("=== reply with: relay.py reply --dir D --text ... | --call NAME JSON ===")
    return 0


def show_setup(folder: Path) -> int:
    path = _pending(folder) or max((folder / "requests").glob("*.json"), default=None)
    if path is None:
        print("no request yet")
        return 3
    body = json.loads(path.read_text())["body"]
    print("\n".join(_render_content(m.get("content")) for m in body.get("messages", []) if m.get("role") == "system"))
    print("--- tools ---\n" + _render_tools(body.get("tools") or []))
    return 0


def write_reply(folder: Path, text: str | None, calls: list[tuple[str, str]]) -> int:
    path = _pending(folder)
    if path is None:
        print("no request is waiting", file=sys.stderr)
        return 3
    parsed = []
    for name, raw in calls:
        try:
            parsed.append({"name": name, "arguments": json.loads(raw)})
        except json.JSONDecodeError as exc:
            print(f"the arguments of {name} are not JSON: {exc}", file=sys.stderr)
            return 2
    if not text and not parsed:
        print("give --text or at least one --call", file=sys.stderr)
        return 2
    _atomic_write(folder / "replies" / path.name, json.dumps({"text": text, "calls": parsed}, ensure_ascii=False))
    print(f"replied to request {int(path.stem)}")
    return 0


def write_label(folder: Path, label: str, note: str) -> int:
    state_path = folder / "shown.json"
    if not state_path.exists():
        print("no conversation shown yet", file=sys.stderr)
        return 3
    last = json.loads(state_path.read_text())["last"]
    with open(folder / "labels.jsonl", "a", encoding="utf-8") as fh:
        fh.write(json.dumps({"conversation": last["conversation"], "label": label, "note": note,
                             "at_request": last["n"]}, ensure_ascii=False) + "\n")
    print(f"labelled conversation {last['conversation']}: {label}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("serve")
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("--port", type=int, default=8766)
    p = sub.add_parser("next")
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("--wait", type=float, default=120.0, help="seconds to wait for a request")
    p = sub.add_parser("setup")
    p.add_argument("--dir", type=Path, required=True)
    p = sub.add_parser("reply")
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("--text")
    p.add_argument("--text-file", type=Path, help="read the reply's text from a file")
    p.add_argument("--call", nargs=2, action="append", default=[], metavar=("NAME", "JSON"))
    p = sub.add_parser("label")
    p.add_argument("--dir", type=Path, required=True)
    p.add_argument("label")
    p.add_argument("--note", default="")
    args = parser.parse_args(argv)
    if args.cmd == "serve":
        serve(args.dir, args.port)
        return 0
    if args.cmd == "next":
        return show_next(args.dir, args.wait)
    if args.cmd == "setup":
        return show_setup(args.dir)
    if args.cmd == "reply":
        text = args.text_file.read_text(encoding="utf-8") if args.text_file else args.text
        return write_reply(args.dir, text, args.call)
    return write_label(args.dir, args.label, args.note)


if __name__ == "__main__":
    sys.exit(main())
