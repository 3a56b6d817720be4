"""What the rules alone cost per request: the floor under ``compare_inspect.py``'s harness figure.

    python benchmarks/floor_per_request.py [--conversations 30] [--inspect-ms 10.7]

Runs ``compare_inspect.py``'s cell once on its fake server, keeps what that conversation really
did (the request bodies and headers it sent, the requests it hashed, the tool calls it made,
the journal lines and the record it wrote), and then times each piece of work the project's
rules require, alone, with nothing of the harness around it:

- HTTP: the same bodies and headers sent by a bare ``httpx.Client`` (the required HTTP layer);
- durability: the same checkpoint and usage-journal lines appended with ``fdatasync``, the
  first whole checkpoint and the record written atomically with ``fsync`` (paid routes, S4.8);
- the world: the variant's database copied and checked against its marker, opened, the same
  tool calls made against it, its end state read (one SQLite world per cell);
- the record: serialised and redacted with the run's key (every writer redacts, S4.10);
- resume: each request's canonical text hashed (a resume must give the same request).

It prints each piece per request, their sum, and what is left of a budget of
``--target`` × inspect_ai's CPU per request (``--inspect-ms``, from ``compare_inspect.py``) for
everything else the harness does: the loop, building bodies, reading answers, pacing, usage
accounting, and serialising and key-scanning the checkpoint.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

import compare_inspect  # noqa: E402


def _cpu_ms(work: Callable[[], None], repeats: int) -> float:
    """CPU milliseconds of one ``work()``, the mean of ``repeats`` after one warm-up."""
    work()
    start = time.process_time()
    for _ in range(repeats):
        work()
    return (time.process_time() - start) / repeats * 1000


def capture(base_url: str, tmp: Path) -> dict[str, Any]:
    """One conversation of the benchmark's cell, and what it sent, hashed, called and wrote."""
    import httpx

    from pytest_assistant_eval.conversation import checkpoint, loop
    from pytest_assistant_eval.results import usage
    from pytest_assistant_eval.suites.calibration.world import services

    seen: dict[str, list[Any]] = {"sent": [], "hashed": [], "calls": [], "journal": [], "usage": [], "whole": []}
    originals: list[tuple[Any, str, Any]] = []

    def spy(owner: Any, name: str, keep: Callable[..., None]) -> None:
        original = getattr(owner, name)
        originals.append((owner, name, original))

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            keep(*args, **kwargs)
            return original(*args, **kwargs)

        setattr(owner, name, wrapper)

    spy(httpx.Client, "stream", lambda self, method, url, **kw: seen["sent"].append((str(url), kw)))
    spy(loop, "request_body_sha256", lambda request: seen["hashed"].append(request))
    spy(services.SqliteWorld, "call", lambda self, name, arguments, **kw: seen["calls"].append((name, arguments, kw)))
    spy(checkpoint.CheckpointJournal, "_append", lambda self, raw: seen["journal"].append(raw))
    spy(checkpoint, "_write_whole", lambda path, data, durable, secrets=None: seen["whole"].append(
        checkpoint.checkpoint_text(data, secrets)))
    spy(usage, "write_all", lambda fd, raw: seen["usage"].append(raw))
    session, cell = compare_inspect.harness_cell(base_url, tmp)
    try:
        session.run_cell(cell)  # warm: the caches a long run has
        session.record_path(cell).unlink()
        for kept in seen.values():
            kept.clear()
        result = session.run_cell(cell)
        assert result.status == "done", result
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    empty = [name for name, kept in seen.items() if not kept]
    assert not empty, f"the conversation left nothing to time for {empty}: a spy no longer sees its call"
    record = json.loads(session.record_path(cell).read_text())
    return {**seen, "record": record, "secrets": session._secrets(), "world": session.options.world,
            "variant": session.suite.prepare(cell, session.models[cell.model]).variant,
            "requests": len(record["requests"]), "session": session}


def measure(seen: dict[str, Any], tmp: Path, conversations: int) -> dict[str, float]:
    """Milliseconds of CPU per request of each required piece."""
    import httpx

    from pytest_assistant_eval.messages import canonical_text
    from pytest_assistant_eval.records import dumps, redact, write_all, write_text_atomic
    from pytest_assistant_eval.suites.calibration.world.services import open_world

    n = seen["requests"]
    client = httpx.Client(timeout=30)

    def http() -> None:
        for url, kw in seen["sent"]:
            with client.stream("POST", url, content=kw.get("content"), headers=kw.get("headers"),
                               params=kw.get("params")) as response:
                b"".join(response.iter_bytes())

    lines = tmp / "lines"
    lines.mkdir()

    def durability() -> None:
        for name, raws in (("checkpoint", seen["journal"]), ("usage", seen["usage"])):
            fd = os.open(lines / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                for raw in raws:
                    write_all(fd, raw)
                    os.fdatasync(fd)
            finally:
                os.close(fd)
        for whole in seen["whole"]:  # the cell's first checkpoint, whole
            write_text_atomic(lines / "first.json", whole, mode=0o600, sync_dir=False)
        write_text_atomic(lines / "record.json", dumps(seen["record"], compact=True))
        for name in ("checkpoint", "usage"):
            (lines / name).unlink()

    workdir = tmp / "cell"

    def world() -> None:
        opened = open_world(seen["world"], seen["variant"], workdir)
        try:
            for name, arguments, kw in seen["calls"]:
                opened.call(name, arguments, **kw)
            opened.snapshot()
        finally:
            opened.close()
            shutil.rmtree(workdir, ignore_errors=True)

    def record() -> None:
        redact(dumps(seen["record"], compact=True), seen["secrets"])

    def hashing() -> None:
        for request in seen["hashed"]:
            hashlib.sha256(canonical_text(request).encode("utf-8")).hexdigest()

    pieces = {"HTTP over a bare httpx.Client": http, "fdatasync'd journal lines, fsync'd first checkpoint and record":
              durability, "SQLite world: copy + check, tool calls, end state": world,
              "record serialised and redacted": record, "request hashes for resume": hashing}
    try:
        return {label: _cpu_ms(work, conversations) / n for label, work in pieces.items()}
    finally:
        client.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=30)
    parser.add_argument("--inspect-ms", type=float, default=None,
                        help="inspect_ai's CPU per request from compare_inspect.py (default: not compared)")
    parser.add_argument("--target", type=float, default=0.15, help="the ratio the budget is (default 0.15)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="floor-per-request-"))
    proc, base_url = compare_inspect.start_server(tmp)
    try:
        seen = capture(base_url, tmp)
        harness_cpu, requests, _wall = compare_inspect.run_harness(base_url, tmp / "again", args.conversations)
        harness = harness_cpu / requests * 1000
        pieces = measure(seen, tmp, args.conversations)
        seen["session"].close()
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    width = max(map(len, pieces))
    print(f"{seen['requests']} requests a conversation, {len(seen['calls'])} tool calls, "
          f"CPU per request of each piece alone:")
    for label, ms in pieces.items():
        print(f"  {label:<{width}}  {ms:5.2f} ms")
    floor = sum(pieces.values())
    print(f"  {'sum: the floor':<{width}}  {floor:5.2f} ms")
    print(f"  {'the whole harness (compare_inspect.py)':<{width}}  {harness:5.2f} ms "
          f"(everything else: {harness - floor:.2f} ms)")
    if args.inspect_ms:
        budget = args.target * args.inspect_ms
        print(f"budget {args.target:g} x inspect_ai's {args.inspect_ms:.2f} ms = {budget:.2f} ms: "
              f"{budget - floor:.2f} ms left for everything else")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
