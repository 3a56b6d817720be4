"""Kill a run with SIGKILL at random moments and resume it until it finishes.

Shared by the crash test (a few dozen kills in CI) and ``benchmarks/soak_resume.py``
(hundreds). A run talks to the reference fake server over real HTTP, so the server's own
count of the requests it received can be held against the run's accounting.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SELECTION = "T01 or T05 or T10 or G05 or G24"
VOLATILE = ("started_at", "finished_at", "conversation_seconds", "requests", "requests_by_day", "resume")


@dataclass
class CycleResult:
    kills: int = 0
    runs: int = 0
    received: int = 0
    counted: int = 0
    lost: list[str] = field(default_factory=list)  # cells missing or different from the uninterrupted run
    differences: dict[str, list[str]] = field(default_factory=dict)  # cell -> fields that differ
    unreadable: list[str] = field(default_factory=list)  # files that did not parse after a kill


def run_argv(world: Path, out: Path, base_url: str, calibration: Path) -> list[str]:
    return [sys.executable, "-m", "pytest", "-c", str(calibration / "pytest.ini"), "--rootdir", str(calibration),
            "--calibration-dir", str(calibration), "--world", str(world), "--out", str(out),
            "--model", "openai-compatible:oracle", "--base-url", base_url + "/v1", "--accept-data-notice",
            "--levels", "basic", "-k", SELECTION, "-q", "-p", "no:xdist", "--resume", str(calibration / "cells.py")]


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def records(out: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((out / "cells").glob("*.json"))}


def stable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what legitimately differs between runs: times, resume bookkeeping and
    the commit the cell finished on (resuming on another commit is allowed and recorded)."""
    out = {k: v for k, v in record.items() if k not in VOLATILE}
    if isinstance(out.get("versions"), dict):
        out["versions"] = {k: v for k, v in out["versions"].items() if k != "git_commit"}
    return out


def check_readable(out: Path) -> list[str]:
    """Files a reader cannot read after a kill (a checkpoint is a journal: read as a resume reads it)."""
    from pytest_assistant_eval.conversation.checkpoint import load_checkpoint

    bad = []
    for path in out.rglob("*.json"):
        try:
            load_checkpoint(path) if path.parent.name == "partial" else json.loads(path.read_text())
        except (ValueError, OSError):
            bad.append(str(path.relative_to(out)))
    return bad


def reference_run(world: Path, out: Path, fake: Any, calibration: Path) -> dict[str, dict[str, Any]]:
    before = len(fake.requests)
    done = subprocess.run(run_argv(world, out, fake.url, calibration), env=environment(), capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    found = records(out)
    counted = sum(sum(r["requests_by_day"].values()) for r in found.values())
    assert counted == len(fake.requests) - before, "an uninterrupted run counts exactly the requests it sent"
    return found


def wait_for_moment(proc: subprocess.Popen[bytes], fake: Any, rng: random.Random, window: tuple[float, float],
                    after_request: float | None) -> int | None:
    """Wait for the moment to kill ``proc``; its exit code if it ended first, else None.

    Without ``after_request`` the moment is a time since the launch drawn from ``window``. With it,
    half the launches are killed that way and half just after a request: the server's first request
    from this launch plus a time drawn from ``(0, after_request)``. A kill timed from the launch alone
    lands in the start-up whenever the machine is loaded; one timed from a request lands mid-run
    whatever the load, and the run it kills has made progress for the next resume to keep."""
    if after_request is None or rng.random() < 0.5:
        try:
            return proc.wait(timeout=rng.uniform(*window))
        except subprocess.TimeoutExpired:
            return None
    extra, sent = rng.uniform(0.0, after_request), len(fake.requests)
    while len(fake.requests) == sent:
        try:
            return proc.wait(timeout=0.005)
        except subprocess.TimeoutExpired:
            continue
    try:
        return proc.wait(timeout=extra)
    except subprocess.TimeoutExpired:
        return None


def crash_cycle(world: Path, out: Path, fake: Any, calibration: Path, reference: dict[str, dict[str, Any]],
                rng: random.Random, *, max_kills: int, window: tuple[float, float],
                after_request: float | None = None) -> CycleResult:
    """One folder: kill and resume until the run finishes; then compare and count
    (``wait_for_moment`` says when a kill lands)."""
    result = CycleResult()
    before = len(fake.requests)
    while True:
        log = out.parent / f"{out.name}.log"
        with open(log, "w") as handle:
            proc = subprocess.Popen(run_argv(world, out, fake.url, calibration), env=environment(),
                                    stdout=handle, stderr=subprocess.STDOUT)
        result.runs += 1
        try:
            code = proc.wait(timeout=300) if result.kills >= max_kills else wait_for_moment(
                proc, fake, rng, window, after_request)
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            result.kills += 1
            result.unreadable += check_readable(out)
            continue
        if code != 0:
            raise AssertionError(f"a resumed run ended with exit code {code}:\n{log.read_text()[-3000:]}")
        break
    found = records(out)
    for cell, ref in reference.items():
        if cell not in found or stable(found[cell]) != stable(ref):
            result.lost.append(cell)
            mine = stable(found.get(cell, {}))
            result.differences[cell] = sorted(k for k in set(mine) | set(stable(ref)) if mine.get(k) != ref.get(k))
    result.received = len(fake.requests) - before
    result.counted = sum(sum(r["requests_by_day"].values()) for r in found.values())
    return result
