"""A server on 127.0.0.1 that sends its answer one byte at a time, headers included (issue 23).

The wire-format fakes dribble a body (``Raw(chunk_delay=...)``) or stay silent
(``Raw(delay=...)``); this one dribbles everything from the status line on, which no per-read
timeout of httpx can end: only a deadline over the whole attempt does.
"""

from __future__ import annotations

import socket
import threading
import time


class DribblingServer:
    """Answers every connection with ``response`` one byte every ``interval`` seconds."""

    def __init__(self, response: bytes, interval: float) -> None:
        self.response = response
        self.interval = interval
        self.connections = 0
        self._stop = threading.Event()
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.settimeout(0.05)
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def url(self) -> str:
        host, port = self._sock.getsockname()[:2]
        return f"http://{host}:{port}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except (socket.timeout, OSError):
                continue
            self.connections += 1
            threading.Thread(target=self._dribble, args=(conn,), daemon=True).start()

    def _dribble(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(1.0)
                conn.recv(65536)  # the request; its body may come in a second read, which nothing waits for
                for byte in self.response:
                    if self._stop.wait(self.interval):
                        return
                    conn.sendall(bytes([byte]))
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self._sock.close()
        time.sleep(0)

    def __enter__(self) -> DribblingServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
