"""Checkpoints and --resume (S4.8, S4.12): a kept cell continues from the request that
failed, sending it again byte for byte; anything that changed starts it again, saying why."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.suites.calibration import levels as levels_mod
from pytest_assistant_eval.run import session as runner
from pytest_assistant_eval.conversation.loop import request_body_sha256
from pytest_assistant_eval.providers.errors import Overloaded
from pytest_assistant_eval.suites.calibration.reference import ReferenceAssistant

CELL = "T01__basic__r1"  # a task: lookups, a question for approval, a booking, a report


class Flaky:
    """The oracle, failing with a temporary error at request ``fail_at`` (1-based) of each cell."""

    preset = "scripted"

    def __init__(self, fail_at: int | None) -> None:
        self.inner = ReferenceAssistant("oracle")
        self.model = "oracle"
        self.fail_at = fail_at
        self.n = 0
        self.requests: list[str] = []

    def begin_cell(self, context: Any) -> None:
        self.inner.begin_cell(context)
        self.n = 0

    def complete(self, request):
        self.n += 1
        self.requests.append(request_body_sha256(request))
        if self.n == self.fail_at:
            raise Overloaded(status=529, provider_code="overloaded_error", provider_message="Overloaded")
        return self.inner.complete(request)

    def close(self) -> None:
        pass


def session(world_dir: Path, out: Path, calibration: Path, *, resume: bool, fail_at: int | None) -> runner.RunSession:
    options = runner.RunOptions(world=world_dir, out=out, models=(runner.ModelSpec("scripted", "oracle"),),
                                calibration=calibration, levels=("basic",), resume=resume)
    s = runner.RunSession(options)
    s.prepare_folders()
    s._providers["oracle"] = Flaky(fail_at)
    return s


def cell(s: runner.RunSession, cell_id: str = CELL) -> runner.CellSpec:
    return next(c for c in s.cells if c.cell_id == cell_id)


def strip(record: dict) -> dict:
    out = {k: v for k, v in record.items() if k not in ("started_at", "finished_at", "conversation_seconds",
                                                         "resume", "requests", "requests_by_day")}
    return json.loads(json.dumps(out))


@pytest.fixture
def calibration_copy(tmp_path: Path, calibration_dir: Path) -> Path:
    copy = tmp_path / "calibration"
    shutil.copytree(calibration_dir, copy)
    return copy


def kept(world_dir: Path, out: Path, calibration: Path, fail_at: int = 3) -> Path:
    s = session(world_dir, out, calibration, resume=False, fail_at=fail_at)
    result = s.run_cell(cell(s))
    assert result.status == "kept" and result.code == "overloaded"
    assert f", request {fail_at}; run again with --resume to continue it" in result.message
    assert "provider: HTTP 529 overloaded_error: Overloaded" in result.message
    return out / "partial" / f"{CELL}.json"


def test_a_temporary_error_keeps_the_cell_with_a_private_checkpoint(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir)
    data = json.loads(checkpoint.read_text())
    assert data["stop"]["code"] == "overloaded" and data["pending"]["request"] == 3
    assert checkpoint.stat().st_mode & 0o777 == 0o600
    assert not (tmp_path / "r" / "cells" / f"{CELL}.json").exists()


def test_resume_sends_the_failed_request_again_byte_for_byte_and_finishes_like_an_uninterrupted_run(
        world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir)
    pending = json.loads(checkpoint.read_text())["pending"]["request_sha256"]
    s = session(world_dir, tmp_path / "r", calibration_dir, resume=True, fail_at=None)
    assert s.run_cell(cell(s)).status == "done"
    assert s._providers["oracle"].requests[0] == pending
    assert not checkpoint.exists(), "the checkpoint goes when the record is written"
    resumed = json.loads((tmp_path / "r" / "cells" / f"{CELL}.json").read_text())
    plain = session(world_dir, tmp_path / "plain", calibration_dir, resume=False, fail_at=None)
    plain.run_cell(cell(plain))
    uninterrupted = json.loads((tmp_path / "plain" / "cells" / f"{CELL}.json").read_text())
    assert strip(resumed) == strip(uninterrupted)
    assert resumed["resume"]["count"] == 1
    point = resumed["resume"]["points"][0]
    assert (point["request"], point["code"], point["request_sha256"]) == (3, "overloaded", pending)
    # Every request is counted once: two before the stop, the failed one, and the rest after it.
    assert sum(resumed["requests_by_day"].values()) == sum(uninterrupted["requests_by_day"].values()) + 1


def test_a_killed_process_leaves_a_checkpoint_without_a_stop_that_resume_continues(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir)
    data = json.loads(checkpoint.read_text())
    data["stop"] = None  # as a SIGKILL leaves it: written before the request, never told why it stopped
    checkpoint.write_text(json.dumps(data))
    s = session(world_dir, tmp_path / "r", calibration_dir, resume=True, fail_at=None)
    assert s.run_cell(cell(s)).status == "done"
    record = json.loads((tmp_path / "r" / "cells" / f"{CELL}.json").read_text())
    assert record["resume"]["points"][0]["code"] == "killed"


def test_a_finished_cell_is_not_asked_again_on_resume(world_dir, tmp_path, calibration_dir):
    s = session(world_dir, tmp_path / "r", calibration_dir, resume=False, fail_at=None)
    s.run_cell(cell(s))
    again = session(world_dir, tmp_path / "r", calibration_dir, resume=True, fail_at=None)
    assert again.run_cell(cell(again)).status == "done"
    assert again._providers["oracle"].requests == []


def restart_reason(world_dir: Path, out: Path, calibration: Path) -> str:
    s = session(world_dir, out, calibration, resume=True, fail_at=None)
    result = s.run_cell(cell(s))
    assert result.status == "done"
    return result.message


def test_a_changed_window_starts_the_cell_again(world_dir, tmp_path, calibration_copy):
    kept(world_dir, tmp_path / "r", calibration_copy)
    levels = calibration_copy / "levels.yaml"
    levels.write_text(levels.read_text().replace("context_window: 16384", "context_window: 20000", 1))
    assert "started again: the level setting changed: window" in restart_reason(world_dir, tmp_path / "r", calibration_copy)


def test_changed_instructions_start_the_cell_again(world_dir, tmp_path, calibration_copy):
    kept(world_dir, tmp_path / "r", calibration_copy)
    instructions = calibration_copy / "instructions" / "basic.md"
    instructions.write_text(instructions.read_text() + "\nBe brief.\n")
    assert "started again: the instructions or tools changed" in restart_reason(world_dir, tmp_path / "r", calibration_copy)


def test_a_changed_behaviour_version_starts_the_cell_again(world_dir, tmp_path, calibration_dir, monkeypatch):
    kept(world_dir, tmp_path / "r", calibration_dir)
    monkeypatch.setattr(levels_mod, "BEHAVIOUR_VERSION", "b-next")
    assert "started again: the assistant's behaviour changed since this checkpoint" in restart_reason(
        world_dir, tmp_path / "r", calibration_dir)


def test_a_checkpoint_of_another_format_starts_the_cell_again(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir)
    data = json.loads(checkpoint.read_text())
    data["format"] = "assistant-eval.checkpoint/0"
    checkpoint.write_text(json.dumps(data))
    assert "started again: a checkpoint of another format" in restart_reason(world_dir, tmp_path / "r", calibration_dir)


def test_a_checkpoint_missing_a_field_is_never_filled_with_defaults(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir)
    data = json.loads(checkpoint.read_text())
    del data["state"]["nudges_in_turn"]
    checkpoint.write_text(json.dumps(data))
    assert "started again: a checkpoint of another format" in restart_reason(world_dir, tmp_path / "r", calibration_dir)


def test_a_checkpoint_that_no_longer_gives_the_same_request_starts_the_cell_again(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir)
    data = json.loads(checkpoint.read_text())
    data["state"]["messages"][1]["content"] += " (edited)"
    checkpoint.write_text(json.dumps(data))
    assert "started again: the checkpoint no longer gives the same request" in restart_reason(
        world_dir, tmp_path / "r", calibration_dir)


def test_a_folder_of_another_identity_is_refused_but_other_levels_are_fine(world_dir, tmp_path, calibration_dir):
    session(world_dir, tmp_path / "r", calibration_dir, resume=False, fail_at=None)
    options = runner.RunOptions(world=world_dir, out=tmp_path / "r", models=(runner.ModelSpec("scripted", "invents"),),
                                calibration=calibration_dir, levels=("basic",), resume=True)
    with pytest.raises(runner.UsageError, match="belongs to another run"):
        runner.RunSession(options).prepare_folders()
    other_levels = runner.RunOptions(world=world_dir, out=tmp_path / "r", models=(runner.ModelSpec("scripted", "oracle"),),
                                     calibration=calibration_dir, levels=("standard",), resume=True)
    runner.RunSession(other_levels).prepare_folders()
    runs = json.loads((tmp_path / "r" / "run.json").read_text())["runs"]
    assert [r["matrix"]["levels"] for r in runs] == [["basic"], ["standard"]]


# -- records that do not parse; world copies of killed runs (issue 10, items 5 and 6) ---------------------
def test_resume_moves_a_truncated_record_aside_and_asks_its_cell_again(world_dir, tmp_path, calibration_dir):
    out = tmp_path / "results"
    first = session(world_dir, out, calibration_dir, resume=False, fail_at=None)
    assert first.run_cell(cell(first)).status == "done"
    path = first.record_path(cell(first))
    whole = path.read_text(encoding="utf-8")
    path.write_text(whole[: len(whole) // 2], encoding="utf-8")  # a record cut by a full disk or a bad copy
    again = session(world_dir, out, calibration_dir, resume=True, fail_at=None)
    result = again.run_cell(cell(again))
    assert result.status == "done"
    assert "was moved aside" in result.message and "broken" in result.message
    assert json.loads(path.read_text(encoding="utf-8"))["cell"] == CELL  # asked again, whole
    [kept] = (out / "broken").iterdir()
    assert kept.name.startswith(f"{CELL}.") and kept.read_text(encoding="utf-8") == whole[: len(whole) // 2]


def test_a_record_of_another_format_is_moved_aside_too(world_dir, tmp_path, calibration_dir):
    out = tmp_path / "results"
    first = session(world_dir, out, calibration_dir, resume=False, fail_at=None)
    first.run_cell(cell(first))
    path = first.record_path(cell(first))
    path.write_text('{"format": "something-else/9"}', encoding="utf-8")
    again = session(world_dir, out, calibration_dir, resume=True, fail_at=None)
    assert again.run_cell(cell(again)).status == "done"
    assert json.loads(path.read_text(encoding="utf-8"))["format"] == "assistant-eval.cell/1"
    assert len(list((out / "broken").iterdir())) == 1


def test_a_cells_world_copy_lives_in_the_results_folder_and_goes_with_it(world_dir, tmp_path, calibration_dir,
                                                                         monkeypatch):
    out = tmp_path / "results"
    s = session(world_dir, out, calibration_dir, resume=False, fail_at=None)
    seen: list[Path] = []
    from pytest_assistant_eval.suites.calibration import suite as calibration_suite

    real = calibration_suite.open_world

    def spy(world, variant, workdir, policy):
        seen.append(Path(workdir))
        return real(world, variant, workdir, policy)

    monkeypatch.setattr(calibration_suite, "open_world", spy)
    s.run_cell(cell(s))
    [workdir] = seen
    assert workdir.parent == out / ".work"
    assert not workdir.exists()


def test_the_next_run_removes_the_world_copies_a_killed_run_left(world_dir, tmp_path, calibration_dir):
    out = tmp_path / "results"
    left = out / ".work" / "assistant-eval-cell-killed"
    left.mkdir(parents=True)
    (left / "base.sqlite").write_bytes(b"x" * 100)
    session(world_dir, out, calibration_dir, resume=True, fail_at=None)
    assert not (out / ".work").exists() or not any((out / ".work").iterdir())


# -- a checkpoint that no longer gives the same request (issue 23, item 2) -------------------------------
def broken_request(checkpoint: Path) -> None:
    """Edit the kept conversation so it no longer gives the pending request (as a rewrite did)."""
    data = json.loads(checkpoint.read_text())
    data["state"]["messages"][1]["content"] += " (edited)"
    checkpoint.write_text(json.dumps(data))


def test_a_cell_started_again_restores_neither_the_old_conversation_nor_the_world(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir, fail_at=4)
    assert json.loads(checkpoint.read_text())["world_state"], "the kept cell had changed the world"
    broken_request(checkpoint)
    s = session(world_dir, tmp_path / "r", calibration_dir, resume=True, fail_at=None)
    result = s.run_cell(cell(s))
    assert result.status == "done" and "started again: the checkpoint no longer gives the same request" in result.message
    again = json.loads((tmp_path / "r" / "cells" / f"{CELL}.json").read_text())
    plain = session(world_dir, tmp_path / "plain", calibration_dir, resume=False, fail_at=None)
    plain.run_cell(cell(plain))
    uninterrupted = json.loads((tmp_path / "plain" / "cells" / f"{CELL}.json").read_text())
    assert strip(again) == strip(uninterrupted), "started from the start: its own conversation and world"
    assert again["resume"] == {"count": 0, "points": []}


def test_a_cell_started_again_keeps_every_request_it_already_sent_counted(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir, fail_at=4)
    sent_before = sum(json.loads(checkpoint.read_text())["requests_by_day"].values())
    assert sent_before == 4
    broken_request(checkpoint)
    s = session(world_dir, tmp_path / "r", calibration_dir, resume=True, fail_at=None)
    assert s.run_cell(cell(s)).status == "done"
    again = json.loads((tmp_path / "r" / "cells" / f"{CELL}.json").read_text())
    asked_now = len(s._providers["oracle"].requests)
    assert sum(again["requests_by_day"].values()) == sent_before + asked_now


def test_the_started_again_line_is_said_when_the_cell_stops_again_too(world_dir, tmp_path, calibration_dir):
    checkpoint = kept(world_dir, tmp_path / "r", calibration_dir, fail_at=4)
    broken_request(checkpoint)
    s = session(world_dir, tmp_path / "r", calibration_dir, resume=True, fail_at=2)
    result = s.run_cell(cell(s))
    assert result.status == "kept"
    assert result.message.startswith(f"{CELL}: started again: the checkpoint no longer gives the same request\n")
    assert sum(json.loads(checkpoint.read_text())["requests_by_day"].values()) == 4 + 2


class Chatty(Flaky):
    """The oracle, saying a local path and a key-shaped string beside its tool calls."""

    SAID = "Looking in /home/someone/notes.txt with sk-abcdefghijklmnopqrstuvwx first."

    def complete(self, request):
        import dataclasses

        response = super().complete(request)
        if response.message.tool_calls:
            response = dataclasses.replace(response, message=dataclasses.replace(response.message, content=self.SAID))
        return response


def test_a_path_or_a_key_shaped_string_in_an_answer_does_not_stop_a_resume(world_dir, tmp_path, calibration_dir):
    out = tmp_path / "r"
    s = session(world_dir, out, calibration_dir, resume=False, fail_at=None)
    s._providers["oracle"] = Chatty(4)
    assert s.run_cell(cell(s)).status == "kept"
    checkpoint = out / "partial" / f"{CELL}.json"
    pending = json.loads(checkpoint.read_text())["pending"]["request_sha256"]
    again = session(world_dir, out, calibration_dir, resume=True, fail_at=None)
    again._providers["oracle"] = Chatty(None)
    result = again.run_cell(cell(again))
    assert result.status == "done" and "started again" not in result.message
    assert again._providers["oracle"].requests[0] == pending, "the request that failed, sent again byte for byte"
    record = (out / "cells" / f"{CELL}.json").read_text()
    assert "/home/someone" not in record and "sk-abcdefghijklmnopqrstuvwx" not in record, "the record is redacted"
    assert json.loads(record)["resume"]["count"] == 1
