"""A world's identity is its content (issue 29, item 4).

Two builds of the same fixtures are two builds (their own fingerprints, so a half-finished folder
is resumed only on its own build) but one world: models run on different days on fresh builds grade,
summarise and compare together. Builds of other fixtures are refused, the refusal naming the
fixture file that differs and what to do.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graded_helpers import CALIBRATION, REPO
from pytest_assistant_eval.suites.calibration.grade.folder import GradingError, grade
from pytest_assistant_eval.suites.calibration.world.build import MARKER_NAME, build_world, verify_world

SELECT = "G01__basic or G02__basic or T01__basic"


def run_cells(world: Path, out: Path, model: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir",
                           str(CALIBRATION), f"--world={world}", f"--out={out}", "-q", "-p", "no:cacheprovider",
                           "--model", f"scripted:{model}", "-k", SELECT, *extra, str(CALIBRATION / "cells.py")],
                          capture_output=True, text=True, cwd=REPO)


@pytest.fixture(scope="module")
def two_builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("builds")
    return build_world(base / "monday", CALIBRATION / "world"), build_world(base / "tuesday", CALIBRATION / "world")


def test_two_builds_of_the_same_fixtures_are_two_builds_of_one_world(two_builds):
    monday, tuesday = (verify_world(w) for w in two_builds)
    assert monday.fingerprint != tuesday.fingerprint  # S1.7: each build is its own
    assert monday.content == tuesday.content and monday.content
    marker = json.loads((two_builds[0] / MARKER_NAME).read_text(encoding="utf-8"))
    assert marker["content"] == monday.content
    assert marker["fixture_files"] and all(len(h) == 64 for h in marker["fixture_files"].values())


def test_models_run_on_two_builds_of_the_same_fixtures_grade_and_compare_together(two_builds, tmp_path: Path):
    monday, tuesday = two_builds
    assert run_cells(monday, tmp_path / "oracle", "oracle").returncode == 0
    assert run_cells(tuesday, tmp_path / "guesses", "guesses-facts").returncode == 0
    summary = grade([tmp_path / "oracle", tmp_path / "guesses"], tmp_path / "grading", "scripted:rules", seed=2,
                    calibration=CALIBRATION)
    cells = [len(list((tmp_path / m / "cells").glob("*.json"))) for m in ("oracle", "guesses")]
    assert cells[0] == cells[1] > 0 and summary["graded"] == sum(cells)
    from pytest_assistant_eval.tables.compare import compare_command
    from pytest_assistant_eval.tables.summary import summary_command

    out = io.StringIO()
    assert summary_command(tmp_path / "grading", CALIBRATION, out=out) == 0
    assert "oracle" in out.getvalue() and "guesses-facts" in out.getvalue()
    out = io.StringIO()
    assert compare_command(tmp_path / "grading", "oracle", "guesses-facts", out=out) == 0
    assert "Compare oracle (A) with guesses-facts (B)" in out.getvalue()


def test_a_half_finished_folder_is_still_resumed_only_on_its_own_build(two_builds, tmp_path: Path):
    monday, tuesday = two_builds
    assert run_cells(monday, tmp_path / "oracle", "oracle").returncode == 0
    done = run_cells(tuesday, tmp_path / "oracle", "oracle", "--resume")
    assert done.returncode != 0
    assert "belongs to another run (it differs in world)" in done.stdout + done.stderr


def test_folders_of_worlds_built_from_other_fixtures_are_refused_naming_the_file(two_builds, tmp_path: Path):
    fixtures = tmp_path / "fixtures"
    shutil.copytree(CALIBRATION / "world", fixtures)
    changed = sorted(p for p in fixtures.rglob("*.yaml") if "variants" not in p.parts)[0]
    changed.write_text(changed.read_text(encoding="utf-8") + "\n# an owner's edit\n", encoding="utf-8")
    other = build_world(tmp_path / "other", fixtures)
    assert run_cells(two_builds[0], tmp_path / "oracle", "oracle").returncode == 0
    assert run_cells(other, tmp_path / "guesses", "guesses-facts").returncode == 0
    with pytest.raises(GradingError) as caught:
        grade([tmp_path / "oracle", tmp_path / "guesses"], tmp_path / "grading", "scripted:rules", seed=2,
              calibration=CALIBRATION)
    message = str(caught.value)
    assert "ran on different worlds" in message
    assert changed.relative_to(fixtures).as_posix() in message
    assert "Grade each world's folders into a grading of its own, or run the models again on one world" in message
    assert not (tmp_path / "grading" / "grading.json").exists()
