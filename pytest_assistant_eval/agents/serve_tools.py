"""``assistant-eval serve-tools``: one cell's services as an MCP server for any process (issue 33).

An agent written in another language can be tried by hand against the same world a cell gets:
the case's variant and policy and the level's tools, caps and result format, planned exactly as
``assistant-eval run`` plans the cell (the calibration suite's ``prepare``). Every call is recorded
through the same ``ToolRecorder`` that backs ``cell.mcp_url``; there are no user turns here, so
every call counts in turn 0 against the level's per-turn cap. When the server stops (Ctrl-C or
SIGTERM over HTTP, the client closing stdin over stdio) it writes the service log, the tool
entries of the transcript, the cap hits and the final state to ``--out`` (format
``assistant-eval.served-tools/1``, docs/agents.md).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["add_parser", "serve_tools_command", "SERVED_FORMAT"]

SERVED_FORMAT = "assistant-eval.served-tools/1"


def add_parser(sub: Any) -> None:
    p = sub.add_parser("serve-tools", help="one cell's services as an MCP server (stdio or streamable HTTP); "
                                           "writes the service log and final state when stopped (docs/agents.md)")
    p.add_argument("--world", type=Path, required=True, help="the built grounding world (DIR/'Grounding world ä')")
    p.add_argument("--case", required=True, help="a question, scenario or task id (Q01, T01 ...)")
    p.add_argument("--level", required=True, help="the level whose tools and caps are served")
    p.add_argument("--port", type=int, default=0, help="the port on 127.0.0.1 (default: any free one, printed)")
    p.add_argument("--stdio", action="store_true", help="speak MCP over stdin and stdout instead of HTTP")
    p.add_argument("--out", type=Path, default=None,
                   help="where the log and final state go (default: served-tools-CASE-LEVEL.json here)")


def _prepared(world: Path, calibration: Path, case: str, level: str) -> Any:
    from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions, UsageError
    from pytest_assistant_eval.suites import make_suite

    spec = ModelSpec("agent", "serve_tools:served")
    options = RunOptions(world=world, out=Path(tempfile.gettempdir()), models=(spec,), calibration=calibration,
                         levels=(level,), repeats=1)
    suite = make_suite(options)  # the calibration suite, as a run plans its cells
    cell = next((c for c in suite.cells if c.case_id == case), None)
    if cell is None:
        known = sorted({c.case_id for c in suite.cells})
        raise UsageError(f"--case {case}: no such case at {level}; the cases are {', '.join(known)}")
    return suite, suite.prepare(cell, spec)


def serve_tools_command(args: argparse.Namespace) -> int:
    from pytest_assistant_eval.agents.recorder import ToolRecorder
    from pytest_assistant_eval.conversation.loop import Conversation
    from pytest_assistant_eval.records import now, write_json_atomic
    from pytest_assistant_eval.suites.plan import UsageError

    try:
        suite, prepared = _prepared(args.world, args.calibration, args.case, args.level)
        from pytest_assistant_eval.agents.mcp_server import bind_socket, serve_http, serve_stdio
        sock = None if args.stdio else bind_socket(args.port)
    except (UsageError, ValueError, OSError, RuntimeError) as exc:
        print(f"assistant-eval serve-tools: {exc}", file=sys.stderr)
        return 2
    out = args.out or Path(f"served-tools-{args.case}-{args.level}.json")
    with tempfile.TemporaryDirectory(prefix="assistant-eval-served-") as workdir:
        world = prepared.open_world(Path(workdir))
        try:
            start_state = world.snapshot()
            conversation = Conversation(assistant=None, world=world, level=prepared.setting,  # type: ignore[arg-type]
                                        model="serve-tools", user=None,
                                        state=Conversation.start(prepared.setting, prepared.turns))
            recorder = ToolRecorder(conversation, open_=True)
            tools = [t.to_dict() for t in prepared.setting.tools]
            started = now()
            if sock is None:
                serve_stdio(recorder, tools)
            else:
                print(f"assistant-eval serve-tools: the tools of {args.case} at {args.level} on "
                      f"http://127.0.0.1:{sock.getsockname()[1]}/mcp (stop with Ctrl-C; the log goes to {out})",
                      file=sys.stderr, flush=True)
                serve_http(recorder, tools, sock)
            end_state = world.snapshot()
            state = conversation.state
            write_json_atomic(out, {
                "format": SERVED_FORMAT, "case": args.case, "level": args.level,
                "world": {"fingerprint": suite.fingerprint(), "variant": getattr(prepared, "variant", None)},
                "setting_key": prepared.setting_key, "started_at": started, "stopped_at": now(),
                "service_log": [entry.to_dict() for entry in world.log],
                "transcript": [e for e in state.transcript if e.get("type") == "tool"],
                "cap_hits": state.cap_hits,
                "state": suite.state_record(start_state, end_state),  # the suite's world (issue 32: its protocol)
            })
        finally:
            world.close()
    print(f"assistant-eval serve-tools: {len(world.log)} call(s); the log and final state are in {out}",
          file=sys.stderr)
    return 0
