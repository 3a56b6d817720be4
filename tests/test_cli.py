"""The ``assistant-eval`` command, run as a user runs it: a subprocess (S0.3, S1.6-S1.8, S4.1, S6, S8.5).

Both front doors are exercised: the installed ``assistant-eval`` script and
``python -m pytest_assistant_eval``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

MARKER = ".assistant_eval_world.json"
SCRIPT = Path(sys.executable).with_name("assistant-eval")


def cli(*args: str, script: bool = False, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(SCRIPT)] if script else [sys.executable, "-m", "pytest_assistant_eval"]
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run([*command, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=300)


def fingerprint(world: Path) -> str:
    return json.loads((world / MARKER).read_text(encoding="utf-8"))["fingerprint"]


def built_world_path(proc: subprocess.CompletedProcess[str]) -> Path:
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip().splitlines()[-1]
    return Path(line.split(": ", 1)[1])


# -- build -------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def first_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    out = tmp_path_factory.mktemp("first")
    return cli("build", "--out", out, script=True), out


def test_build_prints_the_path_of_the_world_it_built(first_build):
    proc, out = first_build
    world = built_world_path(proc)
    assert world == out / "Grounding world ä"
    assert (world / MARKER).is_file() and (world / "base.sqlite").is_file()


def test_a_second_build_is_another_world(first_build, tmp_path):
    _, out = first_build
    second = built_world_path(cli("build", "--out", tmp_path))
    assert fingerprint(second) != fingerprint(out / "Grounding world ä")


def test_building_over_an_existing_world_needs_replace(tmp_path):
    world = built_world_path(cli("build", "--out", tmp_path))
    before = fingerprint(world)
    refused = cli("build", "--out", tmp_path)
    assert refused.returncode != 0
    assert "--replace" in refused.stderr
    assert fingerprint(world) == before
    replaced = built_world_path(cli("build", "--out", tmp_path, "--replace"))
    assert replaced == world and fingerprint(world) != before


# -- run, grade-ai, leaderboard ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def results(first_build, tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Two scripted assistants at the basic level, one repeat each, through ``assistant-eval run``."""
    _, out = first_build
    folder = tmp_path_factory.mktemp("results") / "R"
    proc = cli("run", "--world", out / "Grounding world ä", "--out", folder, "--model", "scripted:oracle",
               "--model", "scripted:invents", "--levels", "basic", "--repeats", "1", "-q", script=True)
    return proc, folder


@pytest.fixture
def copied_results(results, tmp_path) -> Path:
    _, folder = results
    copy = tmp_path / "R"
    shutil.copytree(folder, copy)
    return copy


def test_run_writes_one_record_per_planned_cell_per_model(results):
    proc, folder = results
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for model in ("oracle", "invents"):
        run = json.loads((folder / model / "run.json").read_text(encoding="utf-8"))
        planned = run["runs"][-1]["matrix"]["cells"]
        assert planned and all("__basic__r1" in cell for cell in planned)
        assert sorted(p.stem for p in (folder / model / "cells").glob("*.json")) == sorted(planned)


def _graded(grading: Path) -> list[Path]:
    return sorted((grading / "cells").glob("*.json")) if (grading / "cells").exists() else []


def test_grade_ai_refuses_a_truncated_record_naming_it(copied_results, tmp_path):
    record = sorted((copied_results / "invents" / "cells").glob("*.json"))[3]
    text = record.read_text(encoding="utf-8")
    record.write_text(text[: len(text) // 2], encoding="utf-8")
    grading = tmp_path / "G"
    proc = cli("grade-ai", copied_results / "oracle", copied_results / "invents", "--dir", grading, "--seed", "1")
    assert proc.returncode != 0
    assert record.name in proc.stderr and "JSON" in proc.stderr
    assert _graded(grading) == []


def test_grade_ai_refuses_a_record_of_another_format_naming_it(copied_results, tmp_path):
    record = sorted((copied_results / "oracle" / "cells").glob("*.json"))[0]
    data = json.loads(record.read_text(encoding="utf-8"))
    data["format"] = "assistant-eval.cell/0"
    record.write_text(json.dumps(data), encoding="utf-8")
    grading = tmp_path / "G"
    proc = cli("grade-ai", copied_results / "oracle", copied_results / "invents", "--dir", grading, "--seed", "1")
    assert proc.returncode != 0
    assert record.name in proc.stderr and "assistant-eval.cell/0" in proc.stderr
    assert _graded(grading) == []


def test_grade_ai_refuses_one_folder_without_single_model(results, tmp_path):
    _, folder = results
    grading = tmp_path / "G"
    proc = cli("grade-ai", folder / "oracle", "--dir", grading)
    assert proc.returncode != 0
    assert "--single-model" in proc.stderr
    assert _graded(grading) == []


def test_leaderboard_prints_an_aligned_table_of_every_assistant(results, tmp_path):
    _, folder = results
    grading = tmp_path / "G"
    graded = cli("grade-ai", folder / "oracle", folder / "invents", "--dir", grading, "--seed", "7", script=True)
    assert graded.returncode == 0, graded.stderr
    assert len(_graded(grading)) == sum(1 for _ in folder.glob("*/cells/*.json"))
    board = cli("leaderboard", "--dir", grading)
    assert board.returncode == 0, board.stderr
    lines = board.stdout.splitlines()
    rule_at = next(i for i, line in enumerate(lines) if line.startswith("─"))
    header, rule = lines[rule_at - 1], lines[rule_at]
    rows = []
    for line in lines[rule_at + 1:]:
        if not line.strip() or not line.split()[0] in ("oracle", "invents"):
            break
        rows.append(line)
    assert sorted(row.split()[0] for row in rows) == ["invents", "oracle"]
    # Every column of the rule is a column of the header and of each row: gaps line up.
    gaps = [i for i, ch in enumerate(rule) if ch == " "]
    assert gaps
    for line in (header, *rows):
        assert len(line) == len(rule), (line, rule)
        assert all(line[i] == " " for i in gaps), line


def test_run_takes_its_models_from_a_models_file(first_build, tmp_path):
    _, out = first_build
    models = tmp_path / "models.txt"
    models.write_text("# two of the reference assistants\nscripted:oracle\nscripted:answers-nothing\n")
    proc = cli("run", "--world", out / "Grounding world ä", "--out", tmp_path / "R", "--models", models,
               "--levels", "basic", "-k", "G01", "-q", script=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in (tmp_path / "R").iterdir()) == ["answers-nothing", "oracle"]
