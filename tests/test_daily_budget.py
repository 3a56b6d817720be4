"""A used daily request budget stops the day and the next day continues (S4.6, S4.12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_assistant_eval.run import session as runner
from tests.reference_fake import ReferenceOpenAIFake

SELECTED = ("G05", "T01")  # one question (2 requests) and a task (several requests, a booking)


@pytest.fixture
def fake(calibration_dir, world_dir, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-budget-test-key-0123456789")
    server = ReferenceOpenAIFake(calibration_dir, world_dir)
    yield server
    server.close()


def day(monkeypatch, world_dir, out, calibration_dir, fake, today: str, budget: int | None) -> dict[str, str]:
    monkeypatch.setenv("ASSISTANT_EVAL_TODAY", today)
    options = runner.RunOptions(world=world_dir, out=out, calibration=calibration_dir, levels=("basic",),
                                models=(runner.ModelSpec("openai-compatible", "oracle", fake.url + "/v1"),),
                                resume=True, accept_data_notice=True, max_requests_per_day=budget)
    session = runner.RunSession(options)
    session.prepare_folders()
    statuses = {}
    try:
        for cell in session.cells:
            if cell.case_id in SELECTED:
                statuses[cell.cell_id] = session.run_cell(cell).status
    finally:
        session.close()
    return statuses


def stable(record: dict) -> dict:
    return {k: v for k, v in record.items()
            if k not in ("started_at", "finished_at", "conversation_seconds", "requests", "requests_by_day", "resume")}


def test_the_budget_stops_the_day_and_tomorrow_continues_the_kept_cell(fake, world_dir, calibration_dir, tmp_path,
                                                                       monkeypatch):
    out = tmp_path / "r"
    first = day(monkeypatch, world_dir, out, calibration_dir, fake, "2026-11-30", budget=5)
    assert len(fake.requests) == 5, "exactly the budget reaches the provider"
    assert "kept" in first.values() and "left" in first.values()
    kept = [c for c, s in first.items() if s == "kept"]
    checkpoint = json.loads((out / "partial" / f"{kept[0]}.json").read_text())
    assert checkpoint["stop"]["code"] == "daily_quota"

    again = day(monkeypatch, world_dir, out, calibration_dir, fake, "2026-11-30", budget=5)
    assert len(fake.requests) == 5, "the same day sends nothing more"
    assert set(again.values()) <= {"done", "kept", "left"}

    for n, today in enumerate(("2026-12-01", "2026-12-02", "2026-12-03", "2026-12-04"), start=2):
        statuses = day(monkeypatch, world_dir, out, calibration_dir, fake, today, budget=5)
        assert len(fake.requests) <= 5 * n
        if set(statuses.values()) == {"done"}:
            break
    assert set(statuses.values()) == {"done"}
    resumed = {p.stem: json.loads(p.read_text()) for p in (out / "cells").glob("*.json")}
    counted = sum(sum(r["requests_by_day"].values()) for r in resumed.values())
    assert counted == len(fake.requests), "every request counted once, on the day it was sent"
    assert any(r["resume"]["count"] for r in resumed.values())

    plain = tmp_path / "plain"
    day(monkeypatch, world_dir, plain, calibration_dir, fake, "2026-11-30", budget=None)
    for cell, record in resumed.items():
        assert stable(record) == stable(json.loads((plain / "cells" / f"{cell}.json").read_text())), cell
