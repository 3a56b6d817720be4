"""One rule for where each command may write, refused before anything is written (issue 31, items D and E).

``report --out`` over a grading folder's ``grading.json``, a results folder's ``run.json``, the
results file or a graded cell; ``run --out`` a filesystem root, the world or the calibration
folder; ``grade-ai --dir`` into the world; a model named ``..``: each is refused naming its rule,
and the files it would have overwritten are unchanged.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_assistant_eval.write_rules import WriteRefused, check_child, check_folder, check_page
from tests.graded_helpers import CALIBRATION, run_and_grade


def _cli(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=300)


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def graded(tmp_path_factory, world_dir) -> Path:
    return run_and_grade(tmp_path_factory.mktemp("graded"), world_dir, ["oracle"], seed=3, select="G01 or G02")


# -- the rule itself ----------------------------------------------------------------------------------


def test_a_filesystem_root_is_never_a_folder_or_a_page():
    for check in (check_folder, check_page):
        with pytest.raises(WriteRefused, match="never a filesystem root"):
            check(Path("/"), "--out")


def test_the_world_and_the_calibration_folder_are_never_written_into(world_dir, tmp_path):
    for inside in (world_dir, world_dir / "sub", CALIBRATION, CALIBRATION / "results"):
        with pytest.raises(WriteRefused, match="never into a world or a calibration folder"):
            check_folder(inside, "--out")
    with pytest.raises(WriteRefused, match="never into a world or a calibration folder"):
        check_page(CALIBRATION / "report.html", "--out")
    check_folder(tmp_path / "results", "--out")  # an ordinary folder is fine


@pytest.mark.parametrize("name", ["..", ".", "", "a/../..", "x\\y"])
def test_a_model_name_never_leads_outside_out(name, tmp_path):
    with pytest.raises(WriteRefused, match="never outside --out through a model's name"):
        check_child(tmp_path, name, "--out")
    check_child(tmp_path, "gpt-4.1-mini", "--out")


# -- report --out ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ["grading.json", "cells", "../results/run.json", "../results/cells",
                                    "results.jsonl", "notes.json"])
def test_report_never_writes_over_a_file_the_harness_reads(target, graded, tmp_path):
    base = graded.parent
    results_file = tmp_path / "results.jsonl"
    results_file.write_text('{"line": 1}\n')
    if target == "results.jsonl":
        path = results_file
    elif target.endswith("cells"):
        folder = (graded / target).resolve()
        path = sorted(folder.glob("*.json"))[0]
    else:
        path = (graded / target).resolve()
    before = {**_tree(base), "results.jsonl": results_file.read_bytes()}
    done = _cli("report", "--dir", graded, "--out", path, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "(rule: " in done.stderr and "Traceback" not in done.stderr
    assert {**_tree(base), "results.jsonl": results_file.read_bytes()} == before


def test_report_writes_a_page_outside_the_grading_folder(graded, tmp_path):
    done = _cli("report", "--dir", graded, "--out", tmp_path / "page.html", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "page.html").read_text(encoding="utf-8").startswith("<!")


# -- grade-ai --dir and run --out ----------------------------------------------------------------------


def test_grade_ai_never_writes_its_grading_into_the_world_or_the_calibration_folder(graded, world_dir, tmp_path):
    results = graded.parent / "results"
    calibration = tmp_path / "calibration"
    shutil.copytree(CALIBRATION, calibration)
    for where in (world_dir / "grading", calibration / "grading"):
        before = _tree(where.parent)
        done = _cli("grade-ai", results, "--dir", where, "--single-model", cwd=tmp_path)
        assert done.returncode == 2 and "never into a world or a calibration folder" in done.stderr, done.stderr
        assert _tree(where.parent) == before and not where.exists()


def _run(world: Path, out: Path, *models: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world}", f"--out={out}", "-q", "-p", "no:cacheprovider", "-k", "G01"]
    for model in models:
        argv += ["--model", f"scripted:{model}"]
    return subprocess.run([*argv, str(CALIBRATION / "cells.py")], capture_output=True, text=True, cwd=cwd,
                          timeout=300)


def test_run_never_writes_its_results_into_the_world(world_dir, tmp_path):
    before = _tree(world_dir)
    done = _run(world_dir, world_dir / "results", "oracle", cwd=tmp_path)
    assert done.returncode != 0 and "never into a world or a calibration folder" in done.stdout + done.stderr
    assert _tree(world_dir) == before


def test_a_run_allowed_to_write_bytecode_leaves_no_compiled_cells_in_the_calibration_folder(world_dir, tmp_path):
    calibration = tmp_path / "calibration"
    shutil.copytree(CALIBRATION, calibration, ignore=shutil.ignore_patterns("__pycache__", "results*.jsonl"))
    before = _tree(calibration)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX", "PYTEST_ADDOPTS")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(calibration / "pytest.ini"), "--rootdir",
                           str(calibration), "--calibration-dir", str(calibration), f"--world={world_dir}",
                           f"--out={tmp_path / 'results'}", "--provider", "scripted", "--model", "oracle", "-q",
                           "-k", "T01 and basic", str(calibration / "cells.py")],
                          capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert _tree(calibration) == before, sorted(set(_tree(calibration)) - set(before))


def test_a_model_named_dot_dot_never_writes_into_the_parent_of_out(calibration_dir, world_dir, tmp_path):
    from tests.provider_runs_helpers import console, run_env, run_eval
    from tests.reference_fake import REFERENCE_FAKES

    out = tmp_path / "parent" / "results"
    out.parent.mkdir()
    cls, suffix = REFERENCE_FAKES["openai"]
    with cls(calibration_dir, world_dir) as fake:
        done = run_eval(world_dir, out, "--model", "openai:oracle", "--model", "openai:..",
                        f"--base-url={fake.url}{suffix}", "--accept-data-notice", "--levels", "basic",
                        "--repeats", "1", "-k", "G01", env=run_env())
        assert not fake.requests, "refused before any request"
    assert done.ret != 0, console(done)
    assert "never outside --out through a model's name" in console(done)
    assert sorted(p.name for p in out.parent.iterdir()) in ([], ["results"])
    assert not (out.parent / "run.json").exists()
