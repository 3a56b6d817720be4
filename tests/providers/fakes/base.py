"""The shared machinery of the fake servers: a threaded HTTP/1.1 server, its script and records.

A test queues items (:class:`Answer`, :class:`Fault` or :class:`Raw`); each request takes the
next one and the wire-format subclass renders it in its dialect (streamed when the request
asked for a stream). Streams use chunked transfer encoding, so a stream "cut short" really is
a connection closed in the middle of a body, as a client sees it in the wild.
"""

from __future__ import annotations

import dataclasses
import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

from tests.providers.fakes.limits import Limit, Limiter

SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key", "api-key", "cookie"}


@dataclass
class Call:
    """A tool call in an answer; ``arguments`` as a string is sent as-is (may be unreadable)."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None
    signature: str | None = None


@dataclass
class Answer:
    text: str = ""
    calls: list[Call] = field(default_factory=list)
    reasoning: str | None = None
    stop: str | None = None  # "max_tokens", "refusal" or None (natural end / tool calls)
    usage: tuple[int, int] = (21, 7)
    #: input tokens read from / written to the provider's cache, as each dialect reports them (issue 29)
    cached: tuple[int, int] = (0, 0)
    signature: str | None = None  # Gemini thought signature / Anthropic thinking signature
    cut_after: int | None = None  # streamed: close the connection after this many events


@dataclass
class Fault:
    """A failure in the provider's own dialect.

    names: rate_limit, overloaded, busy, server_error, daily_quota, tpm_input, context_too_long,
    refusal, bad_key, unknown_model, permission, credit, mid_stream_error, cut, drop.
    """

    name: str
    retry_after: float | None = None
    echo_key: bool = False  # put the request's key into the error text (tests redaction)


@dataclass
class Raw:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    chunks: list[bytes] | None = None  # streamed body (chunked); ``cut`` closes before the end
    cut: bool = False
    drop: bool = False  # close the connection without any answer
    delay: float = 0.0  # seconds to wait before answering (timeouts)
    chunk_delay: float = 0.0  # seconds to wait before each chunk of a streamed body (a dribbling server)


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class FakeServer:
    """Base class: subclasses implement :meth:`render` and :meth:`wants_stream`."""

    name = "fake"

    #: Whether successful answers state the limits (OpenRouter states them on its own 429s only).
    limits_on_success = True

    def __init__(self, *, rate_window: tuple[int, float] | None = None, default: Any = None,
                 limits: list[Limit] | None = None, clock: Callable[[], float] = time.time,
                 reply_delay: float = 0.0) -> None:
        if rate_window is not None and not limits:  # the older spelling: a sliding window of requests
            limits, rate_window = [Limit("requests", rate_window[0], rate_window[1], "sliding")], None
        self.limiter = Limiter(limits, clock) if limits else None
        self.clock = clock
        self.connections = 0
        self.script: deque[Any] = deque()
        self.requests: list[Recorded] = []
        self.rate_window = rate_window
        self.default = default
        #: seconds every reply waits before it is written: a provider's own latency, for a test whose
        #: clients must overlap (the fake answers in about a millisecond otherwise)
        self.reply_delay = reply_delay
        self.rate_limited = 0
        self._starts: deque[float] = deque()
        self._lock = threading.Lock()
        self.keys_seen: list[str] = []
        handler = self._handler_class()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None  # a client hanging up is not a failure
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)
        self.thread.start()

    # -- test API ------------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def add(self, *items: Any) -> FakeServer:
        self.script.extend(items)
        return self

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- per format ---------------------------------------------------------------------

    def wants_stream(self, path: str, body: Any) -> bool:
        return bool(isinstance(body, dict) and body.get("stream"))

    def render(self, item: Any, path: str, body: Any, stream: bool, key: str | None) -> Raw:  # pragma: no cover
        raise NotImplementedError

    def route(self, method: str, path: str, body: Any) -> Raw | None:
        """Endpoints that are not scripted (e.g. ``/api/show``); ``None`` means use the script."""
        return None

    def key_of(self, headers: dict[str, str], path: str) -> str | None:
        for name in ("authorization", "x-api-key", "x-goog-api-key"):
            value = headers.get(name)
            if value:
                return value.removeprefix("Bearer ").strip()
        return None

    def rate_headers(self) -> dict[str, str]:
        if self.limiter is None or not self.limits_on_success:
            return {}
        return self.limit_headers()

    def limit_headers(self) -> dict[str, str]:
        """The limits as this provider states them (its own header dialect); none by default."""
        return {}

    def prompt_tokens(self, body: Any) -> int:
        """The server's own count of a request's input tokens (not the client's estimate)."""
        if not isinstance(body, dict):
            return 0
        parts = {k: body.get(k) for k in ("system", "systemInstruction", "messages", "contents", "tools")}
        return len(json.dumps(parts, ensure_ascii=False)) // 3

    def output_cap(self, body: Any) -> int:
        if not isinstance(body, dict):
            return 0
        for key in ("max_completion_tokens", "max_tokens"):
            if body.get(key):
                return int(body[key])
        for nested, key in (("generationConfig", "maxOutputTokens"), ("options", "num_predict")):
            value = (body.get(nested) or {}).get(key)
            if value:
                return int(value)
        return 0

    def refusal(self, limit: Limit, wait: float, path: str, body: Any, key: str | None) -> Raw:
        """A 429 of the limiter: the provider's rate-limit fault, with the limits as they stand."""
        reply = self.render(Fault("rate_limit", retry_after=round(wait, 3)), path, body, False, key)
        reply.headers.update({k: v for k, v in self.limit_headers().items()})
        reply.headers["retry-after"] = str(max(1, round(wait + 0.4999)))
        return reply

    # -- helpers --------------------------------------------------------------------------

    @staticmethod
    def json_raw(status: int, data: Any, headers: dict[str, str] | None = None) -> Raw:
        return Raw(status=status, headers={"content-type": "application/json", **(headers or {})},
                   body=json.dumps(data).encode())

    @staticmethod
    def sse(events: list[tuple[str | None, Any]], *, cut_after: int | None = None, done: bool = False,
            comments: bool = False) -> Raw:
        chunks: list[bytes] = []
        for event, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            prefix = f"event: {event}\n" if event else ""
            if comments:
                chunks.append(b": OPENROUTER PROCESSING\n\n")
            chunks.append(f"{prefix}data: {text}\n\n".encode())
        if done:
            chunks.append(b"data: [DONE]\n\n")
        cut = cut_after is not None
        if cut:
            chunks = chunks[:cut_after]
        return Raw(status=200, headers={"content-type": "text/event-stream"}, chunks=chunks, cut=cut)

    @staticmethod
    def ndjson(objects: list[Any], *, cut_after: int | None = None) -> Raw:
        chunks = [(json.dumps(o) + "\n").encode() for o in objects]
        cut = cut_after is not None
        if cut:
            chunks = chunks[:cut_after]
        return Raw(status=200, headers={"content-type": "application/x-ndjson"}, chunks=chunks, cut=cut)

    def _limited(self, path: str, body: Any, key: str | None) -> tuple[Raw | None, int]:
        """The limiter's refusal, or ``None`` and the served request's input tokens."""
        if self.limiter is None:
            return None, 0
        tokens = self.prompt_tokens(body)
        costs = {"requests": 1.0, "input_tokens": float(tokens), "tokens": float(tokens + self.output_cap(body))}
        served, wait, limit = self.limiter.admit(costs)
        if served or limit is None:
            return None, tokens
        with self._lock:
            self.rate_limited += 1
        return self.refusal(limit, wait, path, body, key), tokens

    def _next_item(self) -> Any:
        with self._lock:
            now = time.monotonic()
            if self.rate_window is not None:
                limit, window = self.rate_window
                while self._starts and self._starts[0] <= now - window:
                    self._starts.popleft()
                if len(self._starts) >= limit:
                    self.rate_limited += 1
                    wait = max(0.0, self._starts[0] + window - now)
                    return Fault("rate_limit", retry_after=round(wait, 3))
                self._starts.append(now)
            if self.script:
                return self.script.popleft()
            if self.default is not None:
                return self.default
        return Raw(status=500, headers={"content-type": "application/json"},
                   body=b'{"error":{"message":"fake server: script exhausted"}}')

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

            def setup(self) -> None:
                super().setup()
                # Headers and body go out as two writes; with Nagle's algorithm on, the body waited
                # for the client's delayed ACK of the headers, 40 ms a reply on Linux (issue 32).
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                with server._lock:
                    server.connections += 1  # one handler per connection: reuse keeps this at one

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw_body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                key = server.key_of(headers, self.path)
                if key:
                    with server._lock:
                        server.keys_seen.append(key)
                path = self.path
                if key and key in path:
                    path = path.replace(key, "[key]")
                server.requests.append(
                    Recorded(
                        method=self.command,
                        path=path,
                        headers={k: v for k, v in headers.items() if k not in SECRET_HEADERS},
                        body=raw_body,
                        at=time.monotonic(),
                    )
                )
                try:
                    body = json.loads(raw_body) if raw_body else None
                except ValueError:
                    body = None
                reply = server.route(self.command, self.path, body)
                if reply is None:
                    reply, tokens = server._limited(self.path, body, key)
                if reply is None:
                    item = server._next_item()
                    if isinstance(item, Raw):
                        reply = item
                    else:
                        if server.limiter is not None and isinstance(item, Answer):
                            # The usage an answer reports is the server's own count, as with a real provider.
                            item = dataclasses.replace(item, usage=(tokens, item.usage[1]))
                            server.limiter.charge_output(item.usage[1])
                        reply = server.render(item, self.path, body, server.wants_stream(self.path, body), key)
                self._write(reply)

            def _write(self, reply: Raw) -> None:
                if reply.delay or server.reply_delay:
                    time.sleep(reply.delay + server.reply_delay)
                if reply.drop:
                    self.close_connection = True
                    try:
                        self.connection.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass
                    return
                self.send_response(reply.status)
                headers = {**server.rate_headers(), **reply.headers}
                for name, value in headers.items():
                    self.send_header(name, value)
                if reply.chunks is not None:
                    self.send_header("transfer-encoding", "chunked")
                    self.end_headers()
                    for chunk in reply.chunks:
                        if reply.chunk_delay:
                            time.sleep(reply.chunk_delay)
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    if reply.cut:
                        self.close_connection = True
                        self.wfile.flush()
                        try:
                            self.connection.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                        return
                    self.wfile.write(b"0\r\n\r\n")
                else:
                    body = reply.body or b""
                    self.send_header("content-length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                self.wfile.flush()

            do_POST = _handle
            do_GET = _handle
            do_DELETE = _handle

        return Handler
