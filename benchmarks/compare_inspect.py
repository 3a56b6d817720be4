"""The harness's own CPU per request against inspect_ai's, on the same conversation and server.

    python benchmarks/compare_inspect.py [--conversations 30] [--harness-only]

One local fake OpenAI-compatible server (a separate process on 127.0.0.1, so its CPU is not
counted) answers every conversation the same way: five rounds of one tool call each, then a
final answer. This harness runs it as one question cell (``G01``, advanced level, one worker,
``--no-stream``: world copy, tool calls against the SQLite world, a checkpoint before every
request, the record); inspect_ai runs it as one sample with the same tool names, through its
``openai-api`` provider. Each side's CPU is ``time.process_time()`` around the conversations
only (imports, world build and session set-up excluded), divided by the requests the server
received from it. inspect_ai is installed on demand into a benchmark-only virtual environment
(``~/.cache/assistant-eval-bench/inspect-venv``); it is never a dependency of the project. When
it cannot be installed, the harness's figure is printed alone and the reason said.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

REPO = Path(__file__).resolve().parent.parent
VENV = Path.home() / ".cache" / "assistant-eval-bench" / "inspect-venv"
TOOL_ROUNDS = 5
#: Calls the fake makes, in order; each side offers tools of these names (inspect_ai's return fixed text).
CALLS = [("search_contacts", {"query": "Sofia"}), ("list_cards", {}), ("list_bookings", {}),
         ("list_runs", {}), ("search_contacts", {"query": "Tiago"})]
FINAL = "Sofia Almeida's card ending 4821 has 312.40 EUR left this cycle; the last bank sync failed."


# -- the fake server (its own process) ---------------------------------------------------------

class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    counts: dict[str, int] = {}

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 - /count?client=... for the benchmark
        client = self.path.rsplit("=", 1)[-1]
        self._send(200, {"requests": _Handler.counts.get(client, 0)})

    def do_POST(self) -> None:  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
        client = str(body.get("model"))  # bench-harness or bench-inspect
        _Handler.counts[client] = _Handler.counts.get(client, 0) + 1
        messages = body.get("messages") or []
        last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=0)
        rounds = sum(1 for m in messages[last_user:] if m.get("role") == "assistant")
        offered = {t["function"]["name"] for t in body.get("tools") or []}
        message: dict[str, object] = {"role": "assistant", "content": FINAL}
        finish = "stop"
        if rounds < TOOL_ROUNDS:
            name, arguments = CALLS[rounds]
            if name not in offered and offered:
                name, arguments = sorted(offered)[0], {}
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{rounds + 1}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(arguments)}}]}
            finish = "tool_calls"
        self._send(200, {"id": "chatcmpl-bench", "object": "chat.completion", "created": 1773651600,
                         "model": body.get("model"), "choices": [{"index": 0, "message": message,
                                                                  "finish_reason": finish}],
                         "usage": {"prompt_tokens": 900 + 60 * rounds, "completion_tokens": 24,
                                   "total_tokens": 924 + 60 * rounds}})

    def _send(self, status: int, payload: dict[str, object]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        # headers and body in one write: two small writes meet Nagle and delayed ACKs (40 ms)
        self._headers_buffer.append(b"\r\n")  # type: ignore[attr-defined]
        self.wfile.write(b"".join(self._headers_buffer) + data)  # type: ignore[attr-defined]
        self._headers_buffer = []  # type: ignore[attr-defined]


def serve(port_file: Path) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    port_file.write_text(str(server.server_address[1]))
    server.serve_forever()


def start_server(tmp: Path) -> tuple[subprocess.Popen[bytes], str]:
    port_file = tmp / "port"
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port_file)])
    for _ in range(200):
        if port_file.exists() and port_file.read_text():
            return proc, f"http://127.0.0.1:{port_file.read_text()}/v1"
        time.sleep(0.02)
    proc.kill()
    raise SystemExit("the fake server did not start")


@contextlib.contextmanager
def fake_server(prefix: str) -> Iterator[tuple[Path, str]]:
    """(a scratch folder, the fake's base URL); the server stopped and the folder removed after."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    proc, base_url = start_server(tmp)
    try:
        yield tmp, base_url
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def served(base_url: str, client: str) -> int:
    import urllib.request

    with urllib.request.urlopen(f"{base_url}/count?client={client}") as reply:
        return int(json.loads(reply.read())["requests"])


# -- this harness --------------------------------------------------------------------------------

def harness_cell(base_url: str, tmp: Path) -> tuple[Any, Any]:
    """(session, cell): the benchmark's cell, its world built and its folder prepared under ``tmp``."""
    sys.path.insert(0, str(REPO))
    from pytest_assistant_eval.run import session as runner
    from pytest_assistant_eval.suites.calibration.world.build import build_world

    world = build_world(tmp / "world", REPO / "calibration" / "world")
    os.environ.setdefault("OPENAI_COMPATIBLE_API_KEY", "sk-bench-0123456789")
    options = runner.RunOptions(world=world, out=tmp / "results", calibration=REPO / "calibration",
                                models=(runner.ModelSpec("openai-compatible", "bench-harness", base_url=base_url),),
                                levels=("advanced",), stream=False)
    session = runner.RunSession(options)
    session.prepare_folders()
    return session, next(c for c in session.cells if c.cell_id == "G01__advanced__r1")


def run_harness(base_url: str, tmp: Path, conversations: int) -> tuple[float, int, float]:
    """(CPU seconds, requests, wall seconds) of ``conversations`` runs of the cell."""
    session, cell = harness_cell(base_url, tmp)
    result = session.run_cell(cell)  # a warm-up conversation, not counted
    assert result.status == "done", result
    record_path = session.record_path(cell)
    before = served(base_url, "bench-harness")
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(conversations):
        record_path.unlink()
        result = session.run_cell(cell)
        assert result.status == "done", result
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    requests = served(base_url, "bench-harness") - before
    record = json.loads(record_path.read_text())
    assert len(record["requests"]) == TOOL_ROUNDS + 1, record["requests"]
    session.close()
    return cpu, requests, wall


# -- inspect_ai ----------------------------------------------------------------------------------

INSPECT_TASK = textwrap.dedent('''
    import json, sys, time
    from inspect_ai import Task, eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    RESULT = json.dumps([{"id": "c-sofia", "name": "Sofia Almeida", "email": "sofia@example.org"}] * 3)

    @tool
    def search_contacts():
        async def execute(query: str) -> str:
            """Find contacts whose name, e-mail, company, city or id contains the text.

            Args:
                query: the text to look for
            """
            return RESULT
        return execute

    def _plain(name):
        @tool(name=name)
        def factory():
            async def execute() -> str:
                """Everything of its kind."""
                return RESULT
            return execute
        return factory

    def main(conversations, log_dir):
        tools = [search_contacts(), _plain("list_cards")(), _plain("list_bookings")(), _plain("list_runs")()]
        samples = [Sample(input="How much is left on Sofia's card this cycle?", target="312.40")
                   for _ in range(conversations)]
        task = Task(dataset=samples, solver=[use_tools(tools), generate()])
        warm = Task(dataset=samples[:1], solver=[use_tools(tools), generate()])
        common = dict(model="openai-api/bench/bench-inspect", log_dir=log_dir, display="none", max_connections=1,
                      max_samples=1, max_tasks=1, log_level="warning")
        inspect_eval(warm, **common)
        cpu, wall = time.process_time(), time.perf_counter()
        inspect_eval(task, **common)
        print(json.dumps({"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}))

    main(int(sys.argv[1]), sys.argv[2])
''')


def ensure_inspect() -> tuple[Path | None, str]:
    """The benchmark venv's python with inspect_ai, or None and why not."""
    python = VENV / "bin" / "python"
    if python.exists() and subprocess.run([str(python), "-c", "import inspect_ai, openai"],
                                          capture_output=True).returncode == 0:
        return python, "installed"
    VENV.parent.mkdir(parents=True, exist_ok=True)
    made = subprocess.run([sys.executable, "-m", "venv", str(VENV)], capture_output=True, text=True)
    if made.returncode != 0:
        return None, f"could not make the venv: {made.stderr.strip()[-300:]}"
    installed = subprocess.run([str(python), "-m", "pip", "install", "-q", "inspect_ai", "openai"],
                               capture_output=True, text=True)
    if installed.returncode != 0:
        return None, f"pip could not install inspect_ai: {installed.stderr.strip()[-300:]}"
    return python, "installed now"


def run_inspect(python: Path, base_url: str, tmp: Path, conversations: int) -> tuple[float, int, float]:
    script = tmp / "inspect_task.py"
    script.write_text(INSPECT_TASK)
    env = {**os.environ, "BENCH_API_KEY": "sk-bench-0123456789", "BENCH_BASE_URL": base_url,
           "INSPECT_LOG_DIR": str(tmp / "inspect-logs")}
    before = served(base_url, "bench-inspect")
    done = subprocess.run([str(python), str(script), str(conversations), str(tmp / "inspect-logs")],
                          capture_output=True, text=True, env=env, cwd=tmp)
    if done.returncode != 0:
        raise RuntimeError(done.stderr[-2000:])
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    requests = served(base_url, "bench-inspect") - before
    # the warm-up sample's requests are not in the timed span
    return figures["cpu"], requests - requests // (conversations + 1), figures["wall"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=30)
    parser.add_argument("--harness-only", action="store_true")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve)
        return 0
    with fake_server("compare-inspect-") as (tmp, base_url):
        cpu, requests, wall = run_harness(base_url, tmp, args.conversations)
        ours = cpu / requests * 1000
        print(f"harness:    {requests} requests, CPU {ours:.2f} ms per request (wall {wall / requests * 1000:.2f} ms)")
        if args.harness_only:
            return 0
        python, how = ensure_inspect()
        if python is None:
            print(f"inspect_ai: not measured: {how}")
            return 0
        version = subprocess.run([str(python), "-c", "import inspect_ai; print(inspect_ai.__version__)"],
                                 capture_output=True, text=True).stdout.strip()
        cpu, requests, wall = run_inspect(python, base_url, tmp, args.conversations)
        theirs = cpu / requests * 1000
        print(f"inspect_ai: {requests} requests, CPU {theirs:.2f} ms per request (wall {wall / requests * 1000:.2f} ms)"
              f" [inspect_ai {version}]")
        print(f"ratio harness / inspect_ai: {ours / theirs:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
