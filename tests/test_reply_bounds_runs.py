"""A reply of 5,000 tool calls keeps its record and the report small (issue 31, item I).

It made each record 24.8 MB and a 3-cell report 29 MB: the reply is an oversized stop, its calls
dropped and counted, and the record stays within the size bar of any cell.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.provider_runs_helpers import console, records, run_env, run_eval
from tests.providers.fakes.base import Answer, Call
from tests.reference_fake import REFERENCE_FAKES

RECORD_BAR = 512 * 1024


def test_5000_tool_calls_in_one_reply_make_a_small_record_and_report(calibration_dir, world_dir, tmp_path):
    cls, suffix = REFERENCE_FAKES["openai"]
    out = tmp_path / "results"
    calls = [Call("search_contacts", {"query": f"name {i}"}, id=f"c{i}") for i in range(5000)]
    with cls(calibration_dir, world_dir) as fake:
        fake.add(Answer(calls=calls))
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={fake.url}{suffix}",
                          "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", "G01",
                          env=run_env())
    assert result.ret == 0, console(result)
    path = out / "cells" / "G01__basic__r1.json"
    assert path.stat().st_size < RECORD_BAR, path.stat().st_size
    record = records(out)["G01__basic__r1"]
    assert "oversized" in path.read_text(encoding="utf-8")
    assert "search_contacts" not in json.dumps(record.get("service_log", [])), "no dropped call ran"
    grading = tmp_path / "grading"
    for argv in (["grade-ai", str(out), "--dir", str(grading), "--single-model"], ["report", "--dir", str(grading)]):
        done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *argv], capture_output=True,
                              text=True, cwd=tmp_path, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (grading / "report.html").stat().st_size < 2 * 1024 * 1024
