"""One cell's tools as an MCP server (issue 33): streamable HTTP on 127.0.0.1, or stdio.

The server lists the level's tools with the definitions a model is given (name, description,
JSON-schema parameters as ``inputSchema``) and answers each call through the cell's
``ToolRecorder``: the text content is the JSON text a model is shown, ``isError`` is set when
the call did not succeed (an error, a refusal, a capped call). The SDK does not check the
arguments itself (``validate_input=False``): bad arguments get the services' own error result,
as a model's do. ``cell.mcp_url`` runs it in a thread of the cell's process
(``HTTPToolServer``); ``assistant-eval serve-tools`` runs it as the process (``serve_http``,
``serve_stdio``). The ``mcp`` SDK (the ``[agents]`` extra) is imported only here.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from typing import Any

from pytest_assistant_eval.agents.recorder import ToolRecorder

__all__ = ["build_server", "HTTPToolServer", "serve_http", "serve_stdio", "bind_socket", "MCP_PATH"]

MCP_PATH = "/mcp"


def _mcp() -> Any:
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise RuntimeError("the MCP server needs the mcp SDK: pip install 'pytest-assistant-eval[agents]'") from None
    return mcp


def build_server(recorder: ToolRecorder, tools: list[dict[str, Any]]) -> Any:
    """An ``mcp`` low-level server of ``tools`` whose calls go through ``recorder``."""
    _mcp()
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    import logging

    # An unknown tool is answered with the loop's own error; the SDK's note about it is noise.
    logging.getLogger("mcp.server.lowlevel.server").setLevel(logging.ERROR)
    server: Any = Server("assistant-eval-tools")
    listed = [types.Tool(name=t["name"], description=t["description"], inputSchema=t["parameters"]) for t in tools]

    @server.list_tools()
    async def list_tools() -> list[Any]:
        return listed

    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any] | None) -> Any:
        text, status, _ = await anyio.to_thread.run_sync(recorder.call_text, name,
                                                         {} if arguments is None else arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)], isError=status != "ok")

    return server


def _app(server: Any) -> Any:
    """The Starlette app that serves ``server`` at ``/mcp`` (stateless, JSON responses)."""
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)

    class Endpoint:
        async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
            await manager.handle_request(scope, receive, send)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    return Starlette(routes=[Route(MCP_PATH, endpoint=Endpoint(), methods=["GET", "POST", "DELETE"])],
                     lifespan=lifespan)


def bind_socket(port: int = 0) -> socket.socket:
    """A listening socket on 127.0.0.1 (port 0: any free one), bound before the server starts."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # a client that connects before the server runs waits in the backlog, not refused
    return sock


def _uvicorn(app: Any) -> Any:
    import uvicorn

    # A client that keeps a connection open does not hold a stop for long.
    return uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on", timeout_graceful_shutdown=5))


class HTTPToolServer:
    """``cell.mcp_url``: the server in a thread of this process, until ``stop``."""

    def __init__(self, recorder: ToolRecorder, tools: list[dict[str, Any]]) -> None:
        self.recorder = recorder
        self.tools = tools
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def start(self, sock: socket.socket | None = None, timeout: float = 30.0) -> None:
        sock = sock or bind_socket()
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}{MCP_PATH}"
        self._server = _uvicorn(_app(build_server(self.recorder, self.tools)))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]}, daemon=True,
                                        name="assistant-eval-mcp")
        self._thread.start()
        waited = 0.0
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the cell's MCP server did not start")
            if waited > timeout:
                raise RuntimeError(f"the cell's MCP server did not start within {timeout:g} s")
            time.sleep(0.01)
            waited += 0.01

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=30)
        self._server = self._thread = None


def serve_http(recorder: ToolRecorder, tools: list[dict[str, Any]], sock: socket.socket) -> None:
    """Serve on ``sock`` until SIGINT or SIGTERM, then return (the caller writes the log).

    The server runs in a thread: uvicorn in the main thread would raise the signal again once
    it has shut down, and the process would end before anything is written."""
    import signal

    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    server = HTTPToolServer(recorder, tools)
    try:
        server.start(sock)
        while not stop.wait(0.2):
            pass
    finally:
        server.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def serve_stdio(recorder: ToolRecorder, tools: list[dict[str, Any]]) -> None:
    """Serve over stdin and stdout until the client closes stdin."""
    import anyio
    from mcp.server.stdio import stdio_server

    server = build_server(recorder, tools)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
