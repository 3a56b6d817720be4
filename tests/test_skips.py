"""Owner skips (S4.13): --skip CELL --skip-reason, --unskip CELL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_assistant_eval.run import session as runner
from pytest_assistant_eval.results import skips


def options(world_dir: Path, out: Path, calibration: Path, model: str = "oracle") -> runner.RunOptions:
    return runner.RunOptions(world=world_dir, out=out, models=(runner.ModelSpec("scripted", model),),
                             calibration=calibration, levels=("basic",), resume=True)


@pytest.fixture
def folder(world_dir: Path, tmp_path: Path, calibration_dir: Path) -> runner.RunSession:
    session = runner.RunSession(options(world_dir, tmp_path / "r", calibration_dir))
    session.prepare_folders()
    return session


def run(session: runner.RunSession, cell_id: str) -> runner.CellResult:
    return session.run_cell(next(c for c in session.cells if c.cell_id == cell_id))


def test_a_skipped_cell_is_recorded_with_its_reason_and_never_asked(folder, world_dir, tmp_path, calibration_dir):
    opts = options(world_dir, tmp_path / "r", calibration_dir)
    [line] = runner.skip_cells(opts, ["G05__basic__r1"], "the provider times out on it", [])
    assert "not applicable (skipped by owner)" in line
    saved = skips.read_skips(tmp_path / "r")["G05__basic__r1"]
    assert saved["reason"] == "the provider times out on it" and saved["at"]
    again = runner.RunSession(opts)
    result = run(again, "G05__basic__r1")
    assert result.status == "skipped"
    assert not (tmp_path / "r" / "cells" / "G05__basic__r1.json").exists()


def test_an_unknown_cell_is_refused_with_the_closest_ids(folder, world_dir, tmp_path, calibration_dir):
    with pytest.raises(skips.SkipError, match="closest are: G05__basic__r1"):
        runner.skip_cells(options(world_dir, tmp_path / "r", calibration_dir), ["G05__basci__r1"], "typo", [])


def test_a_finished_cell_cannot_be_skipped(folder, world_dir, tmp_path, calibration_dir):
    run(folder, "G05__basic__r1")
    with pytest.raises(skips.SkipError, match="finished"):
        runner.skip_cells(options(world_dir, tmp_path / "r", calibration_dir), ["G05__basic__r1"], "late", [])


def test_a_skip_needs_a_reason(folder, world_dir, tmp_path, calibration_dir):
    with pytest.raises(skips.SkipError, match="--skip-reason"):
        runner.skip_cells(options(world_dir, tmp_path / "r", calibration_dir), ["G05__basic__r1"], "  ", [])


def test_unskip_takes_the_cell_back_and_the_next_run_asks_it(folder, world_dir, tmp_path, calibration_dir):
    opts = options(world_dir, tmp_path / "r", calibration_dir)
    runner.skip_cells(opts, ["G05__basic__r1"], "for now", [])
    [line] = runner.skip_cells(opts, [], "", ["G05__basic__r1"])
    assert "taken back" in line
    assert run(runner.RunSession(opts), "G05__basic__r1").status == "done"
    with pytest.raises(skips.SkipError, match="not skipped"):
        runner.skip_cells(opts, [], "", ["G05__basic__r1"])


def test_skipping_needs_no_key_and_checks_the_folder_is_of_this_model(folder, world_dir, tmp_path, calibration_dir):
    with pytest.raises(runner.UsageError, match="of scripted:oracle"):
        runner.skip_cells(options(world_dir, tmp_path / "r", calibration_dir, model="invents"),
                          ["G05__basic__r1"], "x", [])


def test_a_skipped_cell_is_no_gap_for_grading(folder, world_dir, tmp_path, calibration_dir):
    from pytest_assistant_eval.suites.calibration.grade.folder import load_results

    opts = options(world_dir, tmp_path / "r", calibration_dir)
    planned = json.loads((tmp_path / "r" / "run.json").read_text())["runs"][-1]["matrix"]["cells"]
    skipped = planned[0]
    runner.skip_cells(opts, [skipped], "not today", [])
    for cell in folder.cells:
        if cell.cell_id != skipped:
            folder.run_cell(cell)
    _, records = load_results(tmp_path / "r")
    assert len(records) == len(planned) - 1
