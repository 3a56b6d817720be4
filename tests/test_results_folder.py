"""One writer per results folder, folders told apart by more than their name, and a run that
writes only its own folder (issue 23, items 1, 4 and 5; S9.2)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graded_helpers import CALIBRATION, run_and_grade
from pytest_assistant_eval.run import session as runner
from pytest_assistant_eval.suites.calibration.grade.folder import grade_command
from pytest_assistant_eval.tables.report import report_command
from pytest_assistant_eval.tables.summary import summary_command
from pytest_assistant_eval.results.writer_lock import FolderInUse, WriterLock, check_under, live_holder


def run_cli(world: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    argv = [sys.executable, "-m", "pytest_assistant_eval", "run", "--world", str(world), "--out", str(out),
            "--model", "scripted:oracle", "--levels", "basic", "-q", "-p", "no:cacheprovider", *extra]
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(scope="module")
def graded(world_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``base/results/{oracle,invents}`` at the basic level, graded offline into ``base/grading``."""
    return run_and_grade(tmp_path_factory.mktemp("graded"), world_dir, ["oracle", "invents"], seed=7).parent


# -- item 1: one writer per results folder --------------------------------------------------------------
def test_a_second_run_on_one_out_is_refused_naming_the_holders_pid_and_start_time(world_dir, tmp_path):
    out = tmp_path / "results"
    holder = WriterLock(out)
    held = holder.acquire()
    try:
        proc = run_cli(world_dir, out, "-k", "G01")
    finally:
        holder.release()
    said = proc.stdout + proc.stderr
    assert proc.returncode not in (0, 1), said[-2000:]
    assert f"pid {os.getpid()}" in said and f"started {held.started_at}" in said
    assert "being written by another run" in said
    assert not (out / "run.json").exists() and not (out / "cells").exists(), "the refused run wrote nothing"


def test_a_run_lets_go_of_its_folder_when_it_ends_so_resume_and_grading_may_follow(world_dir, tmp_path):
    out = tmp_path / "results"
    assert run_cli(world_dir, out, "-k", "G01").returncode == 0
    assert live_holder(out) is None
    assert json.loads((out / ".writer.json").read_text())["format"] == "assistant-eval.writer/1"
    assert run_cli(world_dir, out, "-k", "G01", "--resume").returncode == 0


def test_xdist_workers_write_under_their_controllers_lock(world_dir, tmp_path):
    out = tmp_path / "results"
    proc = run_cli(world_dir, out, "-k", "G01 or G02", "-n", "2")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert sorted(p.stem for p in (out / "cells").glob("*.json")) == ["G01__basic__r1", "G02__basic__r1"]


def test_a_worker_is_refused_a_folder_its_controller_does_not_hold(tmp_path):
    lock = WriterLock(tmp_path / "r")
    held = lock.acquire()
    try:
        check_under(tmp_path / "r", held.token)  # its own controller: fine
        with pytest.raises(FolderInUse, match="controller does not hold"):
            check_under(tmp_path / "r", "another run's token")
    finally:
        lock.release()
    with pytest.raises(FolderInUse, match="controller does not hold"):
        check_under(tmp_path / "r", held.token)  # nobody holds it any more


def test_grade_ai_summary_and_report_refuse_a_results_folder_whose_run_is_live(graded, tmp_path, capsys):
    base = tmp_path / "base"
    shutil.copytree(graded, base)
    grading, oracle = base / "grading", base / "results" / "oracle"
    folders = sorted(p for p in (base / "results").iterdir() if (p / "run.json").exists())
    lock = WriterLock(oracle)
    lock.acquire()
    try:
        assert grade_command(folders, base / "again", "scripted:rules", seed=7, calibration=CALIBRATION) == 2
        assert summary_command(grading, CALIBRATION, out=io.StringIO()) == 2
        assert report_command(grading, CALIBRATION, out=io.StringIO()) == 2
        said = capsys.readouterr().err
        for command in ("grade-ai", "summary", "report"):
            assert (f"assistant-eval {command}: the results folder {oracle} is still being written by its run "
                    f"(pid {os.getpid()}") in said
        assert not (base / "again" / "cells").exists()
    finally:
        lock.release()
    assert summary_command(grading, CALIBRATION, out=io.StringIO()) == 0


# -- item 4: folders are told apart by more than their name ---------------------------------------------
def test_two_results_folders_of_one_name_are_refused_not_merged(graded, tmp_path, capsys):
    a, b = tmp_path / "a" / "res", tmp_path / "b" / "res"
    shutil.copytree(graded / "results" / "oracle", a)
    shutil.copytree(graded / "results" / "invents", b)
    assert grade_command([a, b], tmp_path / "grading", "scripted:rules", seed=7, calibration=CALIBRATION) == 2
    said = capsys.readouterr().err
    assert f"the results folders {a} and {b} have the same name" in said
    assert not (tmp_path / "grading" / "grading.json").exists()


def test_names_that_collide_on_a_disk_that_folds_case_are_refused_too(graded, tmp_path, capsys):
    a, b = tmp_path / "a" / "Res", tmp_path / "b" / "res"
    shutil.copytree(graded / "results" / "oracle", a)
    shutil.copytree(graded / "results" / "invents", b)
    assert grade_command([a, b], tmp_path / "grading", "scripted:rules", seed=7, calibration=CALIBRATION) == 2
    assert "have the same name ('Res', 'res')" in capsys.readouterr().err


def test_a_folder_and_its_copy_never_grade_one_cell_twice(graded, tmp_path, capsys):
    copy = tmp_path / "copy-of-oracle"
    shutil.copytree(graded / "results" / "oracle", copy)
    folders = [graded / "results" / "oracle", copy]
    assert grade_command(folders, tmp_path / "grading", "scripted:rules", seed=7, calibration=CALIBRATION) == 2
    assert "would be graded and counted twice" in capsys.readouterr().err


def test_tables_refuse_a_grading_that_names_two_folders_alike(graded, tmp_path, capsys):
    base = tmp_path / "base"
    shutil.copytree(graded, base)
    index_path = base / "grading" / "grading.json"
    index = json.loads(index_path.read_text())
    for folder in index["folders"]:  # as a grading of a/res and b/res was written before the refusal
        folder["name"] = folder["path_hint"] = "res"
    index_path.write_text(json.dumps(index))
    assert summary_command(base / "grading", CALIBRATION, out=io.StringIO()) == 2
    assert report_command(base / "grading", CALIBRATION, out=io.StringIO()) == 2
    assert "names two results folders alike ('res', 'res')" in capsys.readouterr().err


# -- item 5: a run writes only its own folder, and cleans only its own files ------------------------------
def test_run_refuses_a_grading_folder_as_out(graded, world_dir, tmp_path):
    grading = tmp_path / "grading"
    shutil.copytree(graded / "grading", grading)
    before = sorted(str(p.relative_to(grading)) for p in grading.rglob("*"))
    for out in (grading, grading / "cells"):
        proc = run_cli(world_dir, out, "-k", "G01")
        said = proc.stdout + proc.stderr
        assert proc.returncode not in (0, 1), said[-2000:]
        assert "(it holds grading.json); a run writes a results folder: choose another --out" in said
    assert sorted(str(p.relative_to(grading)) for p in grading.rglob("*")) == before, "nothing was written"


def test_resume_removes_only_the_temporaries_the_harness_left(world_dir, tmp_path):
    out = tmp_path / "results"
    options = runner.RunOptions(world=world_dir, out=out, models=(runner.ModelSpec("scripted", "oracle"),),
                                calibration=CALIBRATION, levels=("basic",), resume=True)
    owners = [out / "notes" / ".my-draft.tmp", out / ".my-draft.tmp", out / "cells" / ".notes.tmp"]
    ours = [out / ".run.json.ab12cd34.tmp", out / "cells" / ".G01__basic__r1.json.x_9yz0w1.tmp",
            out / "partial" / ".T01__basic__r1.json.q1w2e3r4.tmp", out / ".spent.json.aaaaaaaa.tmp"]
    for path in [*owners, *ours]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    runner.RunSession(options).prepare_folders()
    assert [p for p in owners if not p.exists()] == [], "an owner's own files are never deleted"
    assert [p for p in ours if p.exists()] == []


def test_a_run_on_a_parent_out_cleans_only_its_own_models_folders(world_dir, tmp_path):
    out = tmp_path / "parent"
    options = runner.RunOptions(world=world_dir, out=out, calibration=CALIBRATION, levels=("basic",), resume=True,
                                models=(runner.ModelSpec("scripted", "oracle"), runner.ModelSpec("scripted", "invents")))
    beside = [out / "another-run" / ".run.json.ab12cd34.tmp", out / "another-run" / ".work" / "cell" / "base.sqlite"]
    ours = [out / "oracle" / ".run.json.ab12cd34.tmp", out / "invents" / ".work" / "cell" / "base.sqlite"]
    for path in [*beside, *ours]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("half")
    runner.RunSession(options).prepare_folders()
    assert all(p.exists() for p in beside), "another live run's folder beside ours is never touched"
    assert not any(p.exists() for p in ours)
