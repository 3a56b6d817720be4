"""Helpers for tests that run whole cells through the runner against fake provider servers.

A run is a separate ``python -m pytest -c calibration/pytest.ini`` process (what
``assistant-eval run`` starts), pointed at a fake server on 127.0.0.1 through
``--base-url``, with keys in its environment and an empty keyring backend, so nothing of
the machine's own keyring or keys is used.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"

#: the environment variable each preset's key is read from
KEY_VARS = {"openai": "OPENAI_API_KEY", "openrouter": "OPENROUTER_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
            "gemini": "GEMINI_API_KEY"}


def run_env(key: str = "sk-test-key-0000000000000000", **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_ADDOPTS", "GOOGLE_API_KEY", *KEY_VARS.values())}
    env.update({var: key for var in KEY_VARS.values()})
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    env["ASSISTANT_EVAL_RETRY_DELAY"] = "0"  # retries without waiting: the faults are scripted
    env.update(extra)
    return env


def run_eval(world: Path, out: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
             timeout: float = 240) -> pytest.RunResult:
    """One run of the calibration cells in a separate process; its exit code and console."""
    argv = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world}", f"--out={out}", *args, str(CALIBRATION / "cells.py")]
    start = time.monotonic()
    proc = subprocess.run(argv, cwd=cwd or out.parent, env=env or run_env(), capture_output=True, text=True,
                          timeout=timeout)
    return pytest.RunResult(proc.returncode, proc.stdout.splitlines(), proc.stderr.splitlines(),
                            time.monotonic() - start)


def console(result: pytest.RunResult) -> str:
    return "\n".join([*result.outlines, *result.errlines])


def records(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "cells").glob("*.json"))}


def checkpoints(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "partial").glob("*.json"))}


def spent(folder: Path) -> dict[str, Any]:
    path = folder / "spent.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {"cells": {}}


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what differs between providers for the same answers: the model and
    provider fields, times, the git commit and the per-request log (usage, hashes)."""
    data = json.loads(json.dumps(record))
    for key in ("model", "started_at", "finished_at", "conversation_seconds", "requests", "requests_by_day",
                "resume"):
        data.pop(key, None)
    data["versions"].pop("git_commit", None)
    for message in data.get("messages", []):
        message.pop("provider_data", None)
        message.pop("reasoning", None)
    return data
