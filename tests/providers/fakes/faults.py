"""Fault injection for every wire format: what a broken proxy, a flaky network or a wrong address sends.

Each helper turns a normal streamed answer of a fake into a damaged one in that fake's own framing
(SSE ``data:`` events for OpenAI, Anthropic and Gemini, NDJSON lines for Ollama), so the client
sees real bytes over a real socket:

- ``garbage_line``: one extra line that is not JSON, in the middle of an otherwise good stream;
- ``cut_chunk``: the event carrying a piece of the text cut in the middle of its JSON (a proxy
  that dropped bytes), the stream going on normally after it;
- ``garbage_then_end``: nothing but garbage, then the format's own end of stream (``[DONE]``,
  ``message_stop``, the last candidate, ``"done": true``);
- ``html_page``: a web page where the API's answer should be (a captive portal, a proxy's error
  page, a wrong ``--base-url``);
- ``refused_address``: an address on 127.0.0.1 where nothing listens.
"""

from __future__ import annotations

import socket
from typing import Any

from tests.providers.fakes.base import Answer, FakeServer, Raw

#: The answer the damaged streams are made from: losing one chunk changes a number in it.
TEXT = "The room is 350 m from the venue, on the second floor."

STREAM_FAULTS = ("garbage_line", "cut_chunk", "garbage_then_end")


def _normal_stream(server: FakeServer, text: str) -> Raw:
    body = {"model": "model-test", "stream": True}
    raw = server.render(Answer(text=text), "/v1beta/models/model-test:streamGenerateContent", body, True, None)
    assert raw.chunks, "a streamed answer has chunks"
    return raw


def _ndjson(server: FakeServer) -> bool:
    return server.name == "ollama"


def _garbage(server: FakeServer) -> bytes:
    if _ndjson(server):
        return b'{"message": {"role": "assistant", "content": " 35\n'
    return b'data: {"choices": [{"delta": {"content": " 35\n\n'


def _cut(chunk: bytes, ndjson: bool) -> bytes:
    end = b"\n" if ndjson else b"\n\n"
    body = chunk[: len(chunk) - len(end)]
    return body[: len(body) // 2] + end


def stream_fault(server: FakeServer, kind: str, text: str = TEXT) -> Raw:
    """A streamed answer of ``server`` damaged as ``kind`` says (see the module docstring)."""
    raw = _normal_stream(server, text)
    chunks = list(raw.chunks or [])
    if kind == "garbage_line":
        chunks.insert(len(chunks) // 2, _garbage(server))
    elif kind == "cut_chunk":
        carrying = [i for i, c in enumerate(chunks) if b"350" in c or b" 35" in c or b"350 m" in c]
        index = carrying[0] if carrying else len(chunks) // 2
        chunks[index] = _cut(chunks[index], _ndjson(server))
    elif kind == "garbage_then_end":
        chunks = [_garbage(server), _garbage(server), chunks[-1]]
    else:
        raise ValueError(f"unknown stream fault {kind!r}")
    return Raw(status=200, headers=dict(raw.headers), chunks=chunks)


def html_page(status: int = 200, title: str = "Sign in to the guest network") -> Raw:
    """A web page instead of the API's answer."""
    body = (f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body><h1>{title}</h1><p>Please log in.</p></body></html>\n").encode()
    return Raw(status=status, headers={"content-type": "text/html; charset=utf-8"}, body=body)


def refused_address() -> str:
    """``http://127.0.0.1:PORT`` where nothing listens (the port was just free)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"



__all__ = ["STREAM_FAULTS", "TEXT", "html_page", "refused_address", "stream_fault"]
