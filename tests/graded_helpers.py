"""A real graded folder for the tests that review or report one: reference assistants run, then graded.

The runs are the slow part (a pytest process per call) and a dozen test files ask for the same
reference assistants on the same cells, so each model's results folder is run once per test
session into a cache shared by the xdist workers (issue 32, test-suite speed) and copied into each
caller's ``base``: every caller still gets its own folder to change, and is still graded afresh
with its own seed. A model's folder from a run of several models is the same as from a run of it
alone (only timestamps differ), so the cache keys on one model, the selection, the session's one
world (conftest.py builds it once for all workers) and the code's version (the package and calibration sources).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"
PACKAGE = REPO / "pytest_assistant_eval"

#: Names the folder the session's runs are cached in: conftest.py sets it to a folder every xdist
#: worker of the session shares (an environment variable, as the tests import this module under two
#: names); unset (the helper used outside a test session), each call runs for itself.
CACHE_VARIABLE = "ASSISTANT_EVAL_TESTS_RUN_CACHE"


def run_and_grade(base: Path, world_dir: Path, models: Sequence[str], seed: int, select: str = "basic") -> Path:
    """``base/results/<model>`` of the scripted ``models`` (the cells ``-k select`` picks, by default
    the basic level), graded offline into ``base/grading``."""
    from pytest_assistant_eval.suites.calibration.grade.folder import grade_command
    from pytest_assistant_eval.tables import priming  # as the CLI's grade-ai hands it in

    results = base / "results"
    cache = os.environ.get(CACHE_VARIABLE)
    if not cache:
        _run(world_dir, models, select, results)
    elif len(models) == 1:
        shutil.copytree(_cached_run(Path(cache), world_dir, models[0], select), results)
    else:
        for model in models:
            shutil.copytree(_cached_run(Path(cache), world_dir, model, select), results / model)
    folders = results_folders(base)
    assert grade_command(folders, base / "grading", "scripted:rules", seed=seed, calibration=CALIBRATION,
                         single_model=len(folders) == 1, priming=priming) == 0
    return base / "grading"


def results_folders(base: Path) -> list[Path]:
    """The results folders of ``base/results``: one per model, or the folder itself for one model."""
    results = base / "results"
    if (results / "run.json").exists():
        return [results]
    return sorted(p for p in results.iterdir() if (p / "run.json").exists())


def _run(world_dir: Path, models: Sequence[str], select: str, out: Path) -> None:
    """The calibration cells ``-k select`` of the scripted ``models``, run into ``out`` for real."""
    argv = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world_dir}", f"--out={out}", "-q", "-p", "no:cacheprovider", "-k", select]
    for model in models:
        argv += ["--model", f"scripted:{model}"]
    subprocess.run([*argv, str(CALIBRATION / "cells.py")], check=True, capture_output=True)


def _cached_run(cache: Path, world_dir: Path, model: str, select: str) -> Path:
    """The session's one results folder of ``model`` on ``select``: run by the first worker that
    asks, under a file lock, and only read (copied) after."""
    key = hashlib.sha256(json.dumps([model, select, str(world_dir), code_version()])
                         .encode()).hexdigest()[:20]
    folder = cache / key
    done = cache / f"{key}.done"
    cache.mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache / f"{key}.lock")):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # a run that failed half-way is run again
            _run(world_dir, [model], select, folder)
            done.write_text(f"{model} -k {select}\n", encoding="utf-8")
    return folder


_VERSION: str | None = None


def code_version() -> str:
    """A hash of the package's and the calibration's source files: a cached run is of this code."""
    global _VERSION
    if _VERSION is None:
        digest = hashlib.sha256()
        for root in (PACKAGE, CALIBRATION):
            for path in sorted(root.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    digest.update(str(path.relative_to(REPO)).encode())
                    digest.update(path.read_bytes())
        _VERSION = digest.hexdigest()
    return _VERSION


def shared_temp(factory: object) -> Path:
    """A folder every xdist worker of this session shares (the session's base temp under xdist)."""
    base = factory.getbasetemp()  # type: ignore[attr-defined]
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
