"""Every table and the report work on any non-empty grading (issue 23, item 12).

A grading need not hold both kinds of cell: one of a question set alone has no task run, one of
tasks alone no question cell, and a first try may hold one cell, or only runs the simulated user
spoiled. ``report`` crashed on the first two (a plot the template asked for was never drawn);
each shape is graded for real here (reference assistants, the offline judge, the scripted owner)
and every table and the page are made from it.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.review.command import ReviewOptions, review_command
from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in
from pytest_assistant_eval.tables.calibrate import calibrate_command
from pytest_assistant_eval.tables.leaderboard import leaderboard_command
from pytest_assistant_eval.tables.report import report_command
from pytest_assistant_eval.tables.summary import summary_command
from tests.graded_helpers import CALIBRATION, results_folders, run_and_grade

SHAPES: dict[str, tuple[tuple[str, ...], str]] = {
    "questions only": (("oracle", "invents"), "basic and G01"),
    "tasks only": (("oracle", "invents"), "basic and T01 and r1"),
    "one cell": (("oracle",), "G05__basic__r1"),
    "user_error only": (("oracle",), "T01__basic__r1"),
}


def _spoil_every_run(grading: Path, results: list[Path]) -> None:
    """Every run's simulated user erred: the grading holds user_error cells only."""
    folders = {p.name: p for p in results}
    folders.update({json.loads((p / "run.json").read_text(encoding="utf-8"))["identity"]["model"]: p for p in results})
    for path in (grading / "cells").glob("*.json"):
        cell = json.loads(path.read_text(encoding="utf-8"))
        cell["outcome"] = "user_error"
        path.write_text(json.dumps(cell), encoding="utf-8")
        record = folders[cell["source"]["folder"]] / "cells" / f"{cell['source']['cell']}.json"
        data = json.loads(record.read_text(encoding="utf-8"))
        data["user"]["user_error"] = "the user approved a listing outside the approval"
        record.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture(scope="module", params=sorted(SHAPES))
def shape(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> dict[str, Any]:
    """A reviewed grading of one shape, its results folders and the results file it recorded."""
    models, select = SHAPES[request.param]
    base = tmp_path_factory.mktemp(request.param.replace(" ", "_"))
    grading = run_and_grade(base, world_dir, models, seed=23, select=select)
    results = results_folders(base)
    if request.param == "user_error only":
        _spoil_every_run(grading, results)
    assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted"), open_grading=open_grading) == 0
    results_file = base / "results.jsonl"
    out = io.StringIO()
    assert summary_command(grading, CALIBRATION, results=results, record=True, results_file=results_file, out=out) == 0
    return {"name": request.param, "grading": grading, "results": results, "file": results_file, "base": base}


def test_the_summary_works_on_every_shape(shape: dict[str, Any]) -> None:
    out = io.StringIO()
    assert summary_command(shape["grading"], CALIBRATION, results=shape["results"], out=out) == 0
    assert "Per model" in out.getvalue()


def test_the_leaderboard_works_on_every_shape(shape: dict[str, Any]) -> None:
    out = io.StringIO()
    assert leaderboard_command(shape["grading"], CALIBRATION, out=out) == 0
    assert "oracle" in out.getvalue()


def test_calibrate_works_on_every_shape(shape: dict[str, Any]) -> None:
    out = io.StringIO()
    assert calibrate_command(shape["file"], CALIBRATION, out=out) == 0
    assert out.getvalue().startswith(f"Calibration from {shape['file']}: ")


def test_the_report_works_on_every_shape(shape: dict[str, Any]) -> None:
    page = shape["base"] / "report.html"
    out = io.StringIO()
    assert report_command(shape["grading"], CALIBRATION, page, results=shape["results"], out=out) == 0
    html = page.read_text(encoding="utf-8")
    assert "Report:" in out.getvalue() and html.startswith("<!DOCTYPE html>") and "oracle" in html
