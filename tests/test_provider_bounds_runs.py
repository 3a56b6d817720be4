"""Issue 23, items 3, 6, 7 and 8 through whole runs: a separate pytest process against a fake server.

- a hold beyond a day stops the run as a daily quota (exit 0, the provider's words, the cell kept),
  and a ledger an older run left holding ``Infinity`` or 2058 is resumed without a hang or a crash;
- a reply of a shape the format does not have keeps the cell and reaches ``spent.json``;
- a 10 MB answer for 1,024 tokens is a graded ``oversized`` stop: a small record, graded failed;
- ``--request-deadline`` ends an attempt at a silent server as a ``timeout``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.provider_runs_helpers import checkpoints, console, records, run_eval, spent
from tests.providers.fakes.base import Raw
from tests.providers.fakes.shapes import big_stream, whole_raw
from tests.reference_fake import REFERENCE_FAKES

ONE = ("--levels", "basic", "--repeats", "1", "-k", "G01")
ROUTE_ARGS = ("--model", "openai:oracle", "--accept-data-notice")


def reference_fake(calibration: Path, world: Path):
    cls, suffix = REFERENCE_FAKES["openai"]
    fake = cls(calibration, world)
    return fake, fake.url + suffix


def test_a_retry_after_of_999999999_stops_the_run_as_a_daily_quota_with_exit_0(calibration_dir, world_dir,
                                                                                 tmp_path):
    fake, url = reference_fake(calibration_dir, world_dir)
    body = {"error": {"message": "Slow down.", "type": "requests", "code": "rate_limit_exceeded"}}
    fake.add(Raw(429, {"content-type": "application/json", "retry-after": "999999999"}, json.dumps(body).encode()))
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, *ROUTE_ARGS, f"--base-url={url}", *ONE)
    text = console(result)
    assert result.ret == 0, text
    assert "provider: HTTP 429 rate_limit_exceeded: Slow down." in text
    assert "Daily request budget used. Run again with --resume --accept-data-notice tomorrow." in text
    assert checkpoints(out)["G01__basic__r1"]["stop"]["code"] == "daily_quota"
    [entry] = spent(out)["cells"]["G01__basic__r1"]
    assert entry["stop"]["code"] == "daily_quota" and entry["stop"]["retry_after"] is None
    ledger = out / ".ledger.json"  # a route on this machine keeps out of the ledger until it must be paced
    if ledger.exists():
        assert all(entry["not_before"] is None for entry in json.loads(ledger.read_text())["routes"].values())
    assert len(fake.requests) == 1


@pytest.mark.parametrize("stored", ["Infinity", "2158000000.0"], ids=["infinity", "2058"])
def test_a_resume_on_a_ledger_holding_an_endless_hold_asks_and_finishes(calibration_dir, world_dir, tmp_path,
                                                                        stored):
    from pytest_assistant_eval.providers.presets import route

    fake, url = reference_fake(calibration_dir, world_dir)
    out = tmp_path / "results"
    out.mkdir()
    path = out / ".ledger.json"
    path.write_text('{"format": 1, "routes": {"' + route("openai", url) + '": {"requests_by_day": {}, '
                    '"rate_limited_by_day": {}, "learned_interval": 0.0, "last_start": ' + stored + ', '
                    '"not_before": ' + stored + ', "limits": {}, "booked": {}}}}')
    with fake:
        result = run_eval(world_dir, out, *ROUTE_ARGS, f"--base-url={url}", *ONE, timeout=120)
    assert result.ret == 0, console(result)
    assert "G01__basic__r1" in records(out) and not checkpoints(out)
    assert "the provider's hold" not in console(result)  # nothing a run could wait for: no line either


def test_a_resume_that_must_wait_for_a_hold_says_until_when(calibration_dir, world_dir, tmp_path):
    import time

    out = tmp_path / "results"
    out.mkdir()
    route = "openai-compatible@http://127.0.0.1:9/v1"
    until = time.time() + 7200
    (out / ".ledger.json").write_text(json.dumps({"format": 1, "routes": {route: {
        "requests_by_day": {}, "rate_limited_by_day": {}, "learned_interval": 0.0, "last_start": None,
        "not_before": until, "estimate_ratio": None, "limits": {}, "booked": {}}}}))
    result = run_eval(world_dir, out, "--model", "openai-compatible:m", "--base-url=http://127.0.0.1:9/v1",
                      *ONE, "--collect-only", "-q")
    text = console(result)
    assert text.count(f"assistant-eval: {route}: the provider's hold from an earlier request lasts until ") == 1, text
    assert "(in 1 h 59 min)" in text or "(in 2 h 0 min)" in text, text


def test_a_reply_of_a_shape_the_format_does_not_have_keeps_the_cell_and_reaches_spent_json(calibration_dir,
                                                                                           world_dir, tmp_path):
    fake, url = reference_fake(calibration_dir, world_dir)
    fake.add(*[whole_raw({"choices": ["surprise"]})] * 4)
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, *ROUTE_ARGS, f"--base-url={url}", "--no-stream", *ONE)
    text = console(result)
    assert result.ret == 1, text
    assert "G01__basic__r1: kept up to turn 1, request 1; run again with --resume to continue it" in text
    assert "Traceback" not in text and "Error:" not in text
    [entry] = spent(out)["cells"]["G01__basic__r1"]
    assert entry["stop"]["code"] == "unreadable_answer"
    assert [a["code"] for a in entry["attempts"]] == ["unreadable_answer"] * 4
    assert "surprise" in entry["stop"]["message"]


def test_a_ten_megabyte_answer_is_an_oversized_stop_kept_small_and_graded_failed(calibration_dir, world_dir,
                                                                                  tmp_path):
    from pytest_assistant_eval.suites.calibration.grade.folder import grade_record
    from pytest_assistant_eval.suites.calibration.checks.material import question_sections, task_sections
    from pytest_assistant_eval.suites.calibration.plan import load_calibration

    fake, url = reference_fake(calibration_dir, world_dir)
    fake.add(big_stream("openai", 10_000_000), big_stream("openai", 10_000_000))
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, *ROUTE_ARGS, f"--base-url={url}", "--levels", "basic", "--repeats", "1",
                          "-k", "G01 or T01")
    assert result.ret == 0, console(result)
    cells = records(out)
    assert sorted(cells) == ["G01__basic__r1", "T01__basic__r1"]
    cases, levels = load_calibration(calibration_dir)
    for name, record in cells.items():
        assert record["stop_reason"] == "oversized"
        assert record["requests"][-1]["stop_reason"] == "oversized" and record["requests"][-1]["oversized"]["capped"]
        assert (out / "cells" / f"{name}.json").stat().st_size < 200_000
        assert len(record["turns"][-1]["final"]) < 4200
        graded = grade_record(record, cases, levels)
        task = next((t for t in cases.tasks if t.id == record["case"]), None)
        shown = task_sections(record, task) if task is not None else question_sections(record, cases)
        assert sum(len(section.text) for section in shown) < 60_000  # what a judge would be shown
        if record["kind"] == "task":
            assert graded["outcome"] == "fail"
            assert graded["task"]["checks"]["final_answer"]["passed"] is False
        else:
            assert graded["outcome"] == "failed" and graded["parts"][0]["oversized"] is True


def test_the_request_deadline_ends_an_attempt_at_a_silent_server_as_a_timeout(calibration_dir, world_dir, tmp_path):
    fake, url = reference_fake(calibration_dir, world_dir)
    fake.add(*[Raw(200, {"content-type": "application/json"}, b"{}", delay=30.0)] * 4)
    out = tmp_path / "results"
    with fake:
        result = run_eval(world_dir, out, *ROUTE_ARGS, f"--base-url={url}", "--no-stream", *ONE,
                          "--request-deadline", "0.5")
    text = console(result)
    assert result.ret == 1, text
    assert "took longer than the deadline of 0.5 s for the whole answer" in text
    [entry] = spent(out)["cells"]["G01__basic__r1"]
    assert entry["stop"]["code"] == "timeout"
