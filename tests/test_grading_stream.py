"""grade-ai streams (issue 15): one record at a time, staged graded cells, batches, resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_assistant_eval.suites.calibration.grade import folder as folder_mod
from pytest_assistant_eval.suites.calibration.grade.folder import FolderRecords, grade, load_results
from pytest_assistant_eval.records import RecordError
from tests.test_grading_folder import question_record, results_folder, versions, write_record  # noqa: F401


def many_cells(n: int) -> list[str]:
    return [f"G0{1 + i % 2}__basic__r{1 + i // 2}" for i in range(n)]


def graded(out: Path) -> dict[str, dict]:
    return {p.name: json.loads(p.read_text()) for p in sorted((out / "cells").glob("*.json"))}


def test_records_are_read_from_disk_each_time_they_are_gone_through(tmp_path, versions):
    folder = results_folder(tmp_path, "oracle", versions)
    _, records = load_results(folder)
    assert isinstance(records, FolderRecords) and len(records) == 3
    first = [r["turns"][0]["final"] for r in records]
    write_record(folder, question_record("G01__advanced__r1", "oracle", versions, answer="changed on disk"))
    assert [r["turns"][0]["final"] for r in records] != first  # nothing was held between the passes
    assert records[:1][0]["cell"] == "G01__advanced__r1"


def test_a_record_refused_after_others_were_graded_leaves_nothing_behind(tmp_path, versions):
    folders = [results_folder(tmp_path, "oracle", versions, cells=many_cells(40)),
               results_folder(tmp_path, "guesser", versions, cells=many_cells(40))]
    bad = question_record("G02__basic__r20", "guesser", versions)
    bad["format"] = "assistant-eval.cell/0"
    write_record(folders[1], bad)  # the last record the pass reads
    out = tmp_path / "grading"
    with pytest.raises(RecordError):
        grade(folders, out, "scripted:rules", seed=1, calibration=folder_mod.default_calibration_dir())
    assert sorted(p.name for p in out.iterdir() if p.name != ".lock") == []


def test_cells_staged_by_a_killed_run_are_moved_in_and_not_graded_again(tmp_path, versions, monkeypatch):
    folders = [results_folder(tmp_path, "oracle", versions), results_folder(tmp_path, "guesser", versions)]
    out = tmp_path / "grading"
    grade(folders, out, "scripted:rules", seed=1)
    before = graded(out)
    # as if killed after its pass: every cell staged, none moved in yet
    (out / folder_mod.STAGING).mkdir()
    for name in before:
        (out / "cells" / name).rename(out / folder_mod.STAGING / name)
    (out / folder_mod.STAGING / ".7.json.tmp").write_text("{torn")
    summary = grade(folders, out, "scripted:rules", seed=1)
    assert summary == {"graded": 0, "skipped": 6}
    assert graded(out) == before and not (out / folder_mod.STAGING).exists()


def test_a_graded_cell_torn_by_a_power_cut_is_graded_again(tmp_path, versions):
    folders = [results_folder(tmp_path, "oracle", versions), results_folder(tmp_path, "guesser", versions)]
    out = tmp_path / "grading"
    grade(folders, out, "scripted:rules", seed=1)
    before = graded(out)
    (out / "cells" / "3.json").write_bytes(b"\0" * 40)
    assert grade(folders, out, "scripted:rules", seed=1) == {"graded": 1, "skipped": 5}
    assert graded(out) == before


def test_the_folder_is_synced_once_per_batch_not_once_per_cell(tmp_path, versions, monkeypatch):
    synced = []
    monkeypatch.setattr(folder_mod, "sync_folder", lambda path: synced.append(path.name))
    monkeypatch.setattr(folder_mod, "BATCH", 10)
    monkeypatch.setenv("ASSISTANT_EVAL_GRADE_WORKERS", "1")
    folders = [results_folder(tmp_path, "oracle", versions, cells=many_cells(25)),
               results_folder(tmp_path, "guesser", versions, cells=many_cells(25))]
    grade(folders, tmp_path / "grading", "scripted:rules", seed=1)
    assert synced == [folder_mod.STAGING] * 5 + ["cells"]


def test_the_pass_on_several_processes_grades_exactly_as_one(tmp_path, versions, monkeypatch):
    folders = [results_folder(tmp_path, "oracle", versions, cells=many_cells(80)),
               results_folder(tmp_path, "guesser", versions, cells=many_cells(80))]
    monkeypatch.setenv("ASSISTANT_EVAL_GRADE_WORKERS", "1")
    grade(folders, tmp_path / "one", "scripted:rules", seed=3)
    monkeypatch.setenv("ASSISTANT_EVAL_GRADE_WORKERS", "2")
    assert grade(folders, tmp_path / "two", "scripted:rules", seed=3) == {"graded": 160, "skipped": 0}
    assert graded(tmp_path / "one") == graded(tmp_path / "two")
