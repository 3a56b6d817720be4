"""Bounds on one attempt: a total deadline and a cap on what is read of an answer (issue 23, S4.7).

A provider that never stops sending must not hold a run or fill its memory:

- **The deadline** is the longest one attempt may take, connect and the whole answer together
  (``--request-deadline``, :data:`DEFAULT_DEADLINE`). httpx's timeouts are per operation: a server
  dribbling one byte every 5 s never trips a 600 s read timeout. :class:`DeadlineBackend` wraps
  httpcore's network backend and gives every connect, read and write only the time left before
  the attempt's deadline, so a silent server, a dribbling one and one dribbling its headers all
  end at the deadline as a ``timeout``.
- **The cap** is how many bytes of one answer are read (:func:`body_cap`), from the output limit the
  request asked for. An answer far beyond it (a 10 MB answer for 1,024 tokens) is read no further:
  it is a graded ``oversized`` stop, kept with its text folded to :data:`FOLD_CHARS` characters.

This module must never hold a key; it sees bytes and times only.
"""

from __future__ import annotations

import codecs
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpcore
import httpx

#: Seconds one attempt may take, connect and the whole answer (--request-deadline).
DEFAULT_DEADLINE = 600.0
#: Seconds a connection may take to open (within the deadline).
CONNECT_TIMEOUT = 15.0
#: What is kept of an oversized answer's text (and of its reasoning), in characters.
FOLD_CHARS = 4000
#: Bytes read of any answer, whatever its output limit, before it counts as oversized.
BODY_FLOOR = 1 << 20
#: Bytes allowed per requested output token: a streamed token costs one event of ~100-400 bytes.
BYTES_PER_TOKEN = 1024
#: Characters of text, reasoning and tool arguments per requested output token (a token is ~4).
CHARS_PER_TOKEN = 32
#: Characters any answer may have, whatever its output limit.
CHARS_FLOOR = 32_768


def body_cap(max_output_tokens: int) -> int:
    """The bytes read of one answer: far beyond what ``max_output_tokens`` can take on any wire."""
    return BODY_FLOOR + BYTES_PER_TOKEN * max(0, int(max_output_tokens or 0))


def chars_cap(max_output_tokens: int) -> int:
    """The characters a parsed answer may hold before it is far beyond its output limit."""
    return CHARS_FLOOR + CHARS_PER_TOKEN * max(0, int(max_output_tokens or 0))


def fold(text: str | None, limit: int = FOLD_CHARS) -> str | None:
    """``text`` cut to ``limit`` characters with a line saying it was cut (how much is not said)."""
    if text is None or len(text) <= limit:
        return text
    return text[:limit] + "\n[... the rest of this answer was cut: it ran far beyond its output limit]"


# ---------------------------------------------------------------------------------------------
# The deadline


@dataclass
class Deadline:
    """The monotonic time the current attempt must end by; ``None`` between attempts."""

    seconds: float = DEFAULT_DEADLINE
    at: float | None = None

    def start(self) -> None:
        self.at = time.monotonic() + self.seconds

    def stop(self) -> None:
        self.at = None

    def left(self) -> float | None:
        return None if self.at is None else self.at - time.monotonic()

    def passed(self) -> bool:
        left = self.left()
        return left is not None and left <= 0

    def clamp(self, timeout: float | None) -> float | None:
        """The timeout of one operation: never past the deadline."""
        left = self.left()
        if left is None:
            return timeout
        return max(0.001, left if timeout is None else min(timeout, left))


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write ends by the attempt's deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._deadline.passed():
            raise httpcore.ReadTimeout("the attempt's deadline passed")
        return self._inner.read(max_bytes, self._deadline.clamp(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if self._deadline.passed():
            raise httpcore.WriteTimeout("the attempt's deadline passed")
        self._inner.write(buffer, self._deadline.clamp(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname, self._deadline.clamp(timeout)),
                               self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend with every connection bound to one :class:`Deadline`."""

    def __init__(self, inner: httpcore.NetworkBackend, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(host, port, self._deadline.clamp(timeout), local_address, socket_options)
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, self._deadline.clamp(timeout), socket_options)
        return _DeadlineStream(stream, self._deadline)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bind_deadline(client: Any, deadline: Deadline) -> bool:
    """Put ``client``'s own connection pool under ``deadline``; False when it has none (an injected transport).

    httpx does not take a network backend, so the pool's is wrapped in place; without it the
    deadline is still checked between the chunks of an answer.
    """
    pool = getattr(getattr(client, "_transport", None), "_pool", None)
    backend = getattr(pool, "_network_backend", None)
    if backend is None:
        return False
    if not isinstance(backend, DeadlineBackend):
        pool._network_backend = DeadlineBackend(backend, deadline)
    return True


# ---------------------------------------------------------------------------------------------
# Reading with a cap


@dataclass
class Reading:
    """What was read of one answer: bytes so far, and whether the cap stopped the reading."""

    cap: int
    deadline: Deadline | None = None
    received: int = 0
    capped: bool = False
    chunks: list[bytes] = field(default_factory=list)

    def _take(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        for chunk in chunks:
            if self.deadline is not None and self.deadline.passed():
                raise httpx.ReadTimeout("the attempt's deadline passed")
            room = self.cap - self.received
            if len(chunk) > room:
                self.received += max(0, room)
                self.capped = True
                if room > 0:
                    yield chunk[:room]
                return
            self.received += len(chunk)
            yield chunk

    def body(self, chunks: Iterable[bytes]) -> bytes:
        """A whole answer, at most ``cap`` bytes of it."""
        return b"".join(self._take(chunks))

    def lines(self, chunks: Iterable[bytes]) -> Iterator[str]:
        """Text lines of a stream (``\\n`` or ``\\r\\n``); a line the cap cut in its middle is dropped."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending: list[str] = []  # pieces of a line not yet ended (joined once: a long line stays linear)
        for chunk in self._take(chunks):
            piece = decoder.decode(chunk)
            if "\n" not in piece:
                pending.append(piece)
                continue
            first, *rest = piece.split("\n")
            pending.append(first)
            yield "".join(pending).removesuffix("\r")
            *whole, last = rest
            for line in whole:
                yield line.removesuffix("\r")
            pending = [last]
        if self.capped:
            return  # the rest of the last line was never read
        pending.append(decoder.decode(b"", final=True))
        tail = "".join(pending)
        if tail:
            yield tail.removesuffix("\r")
