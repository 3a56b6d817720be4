"""Each failed attempt is filed before any wait, and run.json's usage as it grows (issue 31, item G).

A kill during a retry backoff lost the attempts already sent (the server got 4 POSTs, the
record said 2 requests and 1 attempt), and a kill of a run without xdist left run.json's usage
empty. Here a run is killed with SIGKILL while it waits to retry: its checkpoint holds every
attempt the server received and run.json every request, and the resumed cell's record all of them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from pytest_assistant_eval.conversation.checkpoint import load_checkpoint
from pytest_assistant_eval.results.usage import read_usage
from tests.provider_runs_helpers import CALIBRATION, console, records, run_env, run_eval
from tests.providers.fakes.base import Fault
from tests.reference_fake import REFERENCE_FAKES


#: The run's wait before each retry: the kill lands 2 s into the wait after the second attempt (the
#: wait was 8 s, 6 s of which the test only waited through; issue 32).
RETRY_DELAY = 5


def _argv(world, out, url):
    return [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world}", f"--out={out}", "--model", "openai:oracle", f"--base-url={url}",
            "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", "G01", "-p", "no:cacheprovider",
            str(CALIBRATION / "cells.py")]


def _wait_for_filing(out, until):
    """Until the checkpoint holds both failed attempts and run.json both requests (or ``until``):
    what a kill during the wait must find (a polled file, not a fixed sleep of most of the wait)."""
    while time.monotonic() < until:
        try:
            attempts = load_checkpoint(out / "partial" / "G01__basic__r1.json")["attempts"]
            requests = sum(u["requests"] for u in read_usage(out / "run.json").values())
        except (OSError, ValueError, KeyError):  # not written yet, or mid-write: look again
            attempts, requests = [], 0
        if len(attempts) == 2 and requests == 2:
            return
        time.sleep(0.05)


def test_a_kill_during_a_retry_backoff_loses_no_attempt_and_no_usage(calibration_dir, world_dir, tmp_path):
    cls, suffix = REFERENCE_FAKES["openai"]
    out = tmp_path / "results"
    with cls(calibration_dir, world_dir) as fake:
        fake.add(Fault("server_error"), Fault("server_error"), Fault("server_error"))
        proc = subprocess.Popen(_argv(world_dir, out, f"{fake.url}{suffix}"), cwd=tmp_path,
                                env=run_env(ASSISTANT_EVAL_RETRY_DELAY=str(RETRY_DELAY)), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, start_new_session=True)
        try:
            deadline = time.monotonic() + 120
            while len(fake.requests) < 2 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.05)
            assert len(fake.requests) == 2, f"the second attempt was sent, and the run waits {RETRY_DELAY} s to retry"
            _wait_for_filing(out, time.monotonic() + RETRY_DELAY - 1)  # both filed, well inside the wait
            assert len(fake.requests) == 2, "the kill lands inside the wait, before the third attempt"
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        checkpoint = load_checkpoint(out / "partial" / "G01__basic__r1.json")
        assert [a["code"] for a in checkpoint["attempts"]] == ["busy", "busy"]
        assert sum(checkpoint["requests_by_day"].values()) == 1
        # run.json's usage with the killed process's usage journal not yet folded (issue 32)
        usage = read_usage(out / "run.json")
        assert sum(u["requests"] for u in usage.values()) == 2, usage
        resumed = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={fake.url}{suffix}",
                           "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", "G01", "--resume",
                           env=run_env())
        sent = len(fake.requests)
    assert resumed.ret == 0, console(resumed)
    # the resumed run folded the killed run's journal into the killed run's own entry, once
    runs = json.loads((out / "run.json").read_text(encoding="utf-8"))["runs"]
    assert sum(u["requests"] for u in runs[-2]["usage"].values()) == 2, runs[-2]
    assert not (out / ".usage").exists()
    record = records(out)["G01__basic__r1"]
    # every POST the server got is in the record once: an answered request, or a failed attempt
    assert len(record["attempts"]) == 3
    assert sent == len(record["requests"]) + len(record["attempts"]), record["requests"]
