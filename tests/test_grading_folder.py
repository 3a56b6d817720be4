"""``grade-ai`` with the offline judge (S6.4, S6.5): results folders in, a grading folder out.

Results folders are written by hand (run.json and a few question records of the shipped
calibration), so each test shows one rule of the folder: what is refused with nothing
written, what a second run skips, and how the blind order is drawn.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.suites.calibration.grade.folder import GradingError, grade, grade_command, read_grading
from pytest_assistant_eval.records import CELL_FORMAT, GRADED_CELL_FORMAT, GRADING_FORMAT, RUN_FORMAT, RecordError
from pytest_assistant_eval.suites.calibration.plan import load_calibration

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"
ANSWERS = {
    "G01": ("The Miragaia river room is 350 m from the venue.", {"distance_km": 0.35, "id": "L-103"}),
    "G02": ("The Bonfim studio office has 68 m² of floor area.", {"area_m2": 68, "id": "L-107"}),
}


@pytest.fixture(scope="module")
def versions() -> dict[str, str]:
    cases, _ = load_calibration(CALIBRATION)
    return {"set_version": cases.questions.set_version, "key_version": cases.key.key_version}


def question_record(cell: str, model: str, versions: dict[str, str], answer: str | None = None) -> dict[str, Any]:
    case, level, repeat = cell.split("__")
    text, result = ANSWERS[case]
    answer = text if answer is None else answer
    return {
        "format": CELL_FORMAT, "cell": cell, "case": case, "kind": "question", "class": "lookup", "level": level,
        "repeat": int(repeat[1:]),
        "model": {"preset": "scripted", "model": model, "route": None, "label": f"scripted:{model}"},
        "versions": dict(versions), "user": {"kind": None, "user_error": None}, "stop_reason": "done",
        "turns": [{"turn": 0, "final": answer, "stop": "end_turn"}],
        "transcript": [
            {"type": "user", "turn": 0, "text": "the question", "structured": None},
            {"type": "tool", "turn": 0, "round": 1, "name": "get_listing", "status": "ok", "log_seq": 1,
             "text": json.dumps({"ok": True, "result": result})},
            {"type": "assistant", "turn": 0, "round": 2, "text": answer, "tool_calls": []},
        ],
        "service_log": [{"seq": 1, "turn": 0, "round": 1, "tool": "get_listing", "arguments": {},
                         "status": "ok", "response": result, "error": None}],
        "tools": [], "state": {"final": {}}, "conversation_seconds": 0.5, "requests": [{}, {}],
        "world": {"fingerprint": "world-1"},
    }


CELLS = ["G01__basic__r1", "G02__basic__r1", "G01__advanced__r1"]


def results_folder(root: Path, model: str, versions: dict[str, str], *, cells: list[str] = CELLS,
                   planned: list[str] | None = None, world: str = "world-1") -> Path:
    folder = root / f"results {model}"
    (folder / "cells").mkdir(parents=True)
    run = {"format": RUN_FORMAT,
           "identity": {"preset": "scripted", "model": model, "world": world, "route": None},
           "runs": [{"matrix": {"cells": list(planned if planned is not None else cells)}}]}
    (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    for cell in cells:
        write_record(folder, {**question_record(cell, model, versions), "world": {"fingerprint": world}})
    return folder


def write_record(folder: Path, record: dict[str, Any]) -> None:
    (folder / "cells" / f"{record['cell']}.json").write_text(json.dumps(record), encoding="utf-8")


@pytest.fixture()
def two_folders(tmp_path: Path, versions) -> list[Path]:
    return [results_folder(tmp_path, "oracle", versions), results_folder(tmp_path, "guesser", versions)]


def run_grade(folders: list[Path], out: Path, seed: int = 7) -> dict[str, int]:
    from pytest_assistant_eval.tables import priming  # as the CLI's grade-ai hands it in

    return grade(folders, out, "scripted:rules", seed=seed, calibration=CALIBRATION, priming=priming)


def written(grading_dir: Path) -> list[str]:
    if not grading_dir.exists():
        return []
    return sorted(p.relative_to(grading_dir).as_posix() for p in grading_dir.rglob("*") if p.name != ".lock")


# -- a first grading ------------------------------------------------------------------
def test_grading_writes_the_index_and_one_graded_cell_per_record(two_folders, tmp_path):
    out = tmp_path / "grading"
    assert run_grade(two_folders, out) == {"graded": 6, "skipped": 0}
    index, cells = read_grading(out)
    assert index["format"] == GRADING_FORMAT
    assert index["judge"] == {"grader": "scripted:rules", "route": "offline", "deterministic": True}
    assert [c["n"] for c in cells] == [1, 2, 3, 4, 5, 6]
    for cell in cells:
        assert cell["format"] == GRADED_CELL_FORMAT
        assert cell["judge"]["grader"] == "scripted:rules" and cell["judge"]["deterministic"] is True
        assert cell["outcome"] == "answered"
        assert cell["source"]["cell"] in CELLS


def test_the_judge_is_named_in_every_graded_cell_even_when_it_judged_nothing(two_folders, tmp_path):
    out = tmp_path / "grading"
    run_grade(two_folders, out)
    _, cells = read_grading(out)
    assert all(c["judge"]["grader"] == "scripted:rules" for c in cells)
    # The judge reads only what code left open (every answer's claims item among it, issue 21).
    for c in cells:
        open_ids = {i["id"] for i in c["items"] if i["settled_by"] != "check"}
        assert set(c["judge"]["verdicts"]) <= open_ids | {i["id"] for i in c["items"]}
        assert open_ids <= set(c["judge"]["verdicts"])


def test_grading_primes_the_tables_digests_with_the_rows_they_would_derive_from_the_files(two_folders, tmp_path):
    import io
    import shutil

    from pytest_assistant_eval.tables.leaderboard import leaderboard_command
    from pytest_assistant_eval.tables.summary import summary_command

    out = tmp_path / "grading"
    (out / ".digests").mkdir(parents=True)
    (out / ".digests" / ".primed-cells.jsonl").write_text("what a killed grading left\n")
    run_grade(two_folders, out)
    digests = out / ".digests"
    primed = {p.name: p.read_bytes() for p in digests.glob("*.jsonl")}
    assert set(primed) == {"cells.jsonl", "summary-cells.jsonl", *(f"records-{f.name}.jsonl" for f in two_folders)}
    assert not list(digests.glob(".primed-*"))
    # grade-ai held the lock every writer of cells/ takes: the cells' digests are stamped whole at once,
    # so the first table stats no graded cell (the folder is as the stamp says) and reads none.
    from pytest_assistant_eval.tables.digest import read_digest
    from pytest_assistant_eval.tables.grading_source import CELLS_DIGEST, SUMMARY_DIGEST

    for spec in (CELLS_DIGEST, SUMMARY_DIGEST):
        stamp = json.loads((digests / f"{spec.file}.folder").read_text())["folder"]
        assert stamp == [os.stat(out / "cells").st_mtime_ns, os.stat(out / "cells").st_ino]
        rows = read_digest(out / "cells", digests / spec.file, spec.kind, spec.version, lambda doc: 1 / 0)
        assert len(rows) == 6
    shutil.rmtree(digests)  # the tables derive every row from the files again
    text = io.StringIO()
    assert summary_command(out, CALIBRATION, out=text) == 0
    assert leaderboard_command(out, CALIBRATION, out=io.StringIO()) == 0
    assert {p.name: p.read_bytes() for p in digests.glob("*.jsonl")} == primed
    assert run_grade(two_folders, out) == {"graded": 0, "skipped": 6}  # nothing graded: the digests stay
    again = io.StringIO()
    assert summary_command(out, CALIBRATION, out=again) == 0 and again.getvalue() == text.getvalue()


# -- refusals that write nothing ----------------------------------------------------------
def test_a_record_without_a_transcript_is_refused_and_nothing_is_written(two_folders, tmp_path, versions):
    record = question_record("G02__basic__r1", "guesser", versions)
    del record["transcript"]
    write_record(two_folders[1], record)
    out = tmp_path / "grading"
    with pytest.raises(RecordError, match=r"G02__basic__r1\.json: the record has no 'transcript'"):
        run_grade(two_folders, out)
    assert written(out) == []


@pytest.mark.parametrize("field", ["versions", "user", "class", "repeat", "turns"])
def test_a_record_missing_a_field_grading_reads_is_refused_before_anything_is_written(
        two_folders, tmp_path, versions, field):
    record = question_record("G01__advanced__r1", "oracle", versions)
    del record[field]
    write_record(two_folders[0], record)
    out = tmp_path / "grading"
    with pytest.raises(RecordError, match=f"the record has no '{field}'"):
        run_grade(two_folders, out)
    assert written(out) == []


def test_a_record_of_another_format_is_refused(two_folders, tmp_path, versions):
    record = question_record("G01__basic__r1", "oracle", versions)
    record["format"] = "assistant-eval.cell/0"
    write_record(two_folders[0], record)
    out = tmp_path / "grading"
    with pytest.raises(RecordError, match=r"format 'assistant-eval.cell/0', expected 'assistant-eval.cell/1'"):
        run_grade(two_folders, out)
    assert written(out) == []


def test_a_record_that_is_not_json_is_refused(two_folders, tmp_path):
    (two_folders[0] / "cells" / "G01__basic__r1.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(RecordError, match="not readable JSON"):
        run_grade(two_folders, tmp_path / "grading")


def test_an_unfinished_folder_is_refused_naming_its_cells_and_the_resume_command(tmp_path, versions):
    finished = results_folder(tmp_path, "oracle", versions)
    unfinished = results_folder(tmp_path, "guesser", versions, cells=CELLS[:1], planned=CELLS)
    out = tmp_path / "grading"
    with pytest.raises(GradingError) as caught:
        run_grade([finished, unfinished], out)
    message = str(caught.value)
    assert "2 cell(s) not finished: G02__basic__r1 (not started), G01__advanced__r1 (not started)" in message
    assert "assistant-eval run" in message and "--model scripted:guesser" in message and "--resume" in message
    assert written(out) == []


def test_a_finished_folder_is_no_gap(tmp_path, versions):
    finished = results_folder(tmp_path, "oracle", versions, planned=CELLS)
    other = results_folder(tmp_path, "guesser", versions)
    assert run_grade([finished, other], tmp_path / "grading")["graded"] == 6


def test_one_folder_alone_needs_single_model(tmp_path, versions):
    folder = results_folder(tmp_path, "oracle", versions)
    with pytest.raises(GradingError, match="--single-model"):
        run_grade([folder], tmp_path / "grading")
    assert grade([folder], tmp_path / "grading", "scripted:rules", seed=1, single_model=True,
                 calibration=CALIBRATION)["graded"] == 3


def test_folders_of_two_world_builds_are_refused(tmp_path, versions):
    a = results_folder(tmp_path, "oracle", versions, world="world-1")
    b = results_folder(tmp_path, "guesser", versions, world="world-2")
    with pytest.raises(GradingError, match="ran on different worlds"):
        run_grade([a, b], tmp_path / "grading")
    assert written(tmp_path / "grading") == []


def test_a_record_of_another_key_version_is_refused(two_folders, tmp_path, versions):
    record = question_record("G01__basic__r1", "oracle", {**versions, "key_version": "old"})
    write_record(two_folders[0], record)
    with pytest.raises(GradingError, match="was asked with question set"):
        run_grade(two_folders, tmp_path / "grading")


def test_the_command_reports_a_refusal_on_stderr_with_exit_code_2(two_folders, tmp_path, capsys, versions):
    record = question_record("G01__basic__r1", "oracle", versions)
    del record["service_log"]
    write_record(two_folders[0], record)
    code = grade_command(two_folders, tmp_path / "grading", "scripted:rules", seed=1, calibration=CALIBRATION)
    assert code == 2
    assert "assistant-eval grade-ai:" in capsys.readouterr().err


# -- running again ------------------------------------------------------------------------
def test_a_second_run_skips_cells_graded_from_the_same_material(two_folders, tmp_path):
    out = tmp_path / "grading"
    run_grade(two_folders, out)
    before = {p: p.read_bytes() for p in (out / "cells").glob("*.json")}
    assert run_grade(two_folders, out, seed=999) == {"graded": 0, "skipped": 6}
    assert {p: p.read_bytes() for p in (out / "cells").glob("*.json")} == before


def test_a_changed_record_stops_the_run_with_a_message(two_folders, tmp_path, versions):
    out = tmp_path / "grading"
    run_grade(two_folders, out)
    index, _ = read_grading(out)
    n = next(o["n"] for o in index["order"] if o["folder"] == two_folders[0].name and o["cell"] == "G02__basic__r1")
    graded_before = (out / "cells" / f"{n}.json").read_bytes()
    write_record(two_folders[0], question_record("G02__basic__r1", "oracle", versions, answer="It is 70 m²."))
    with pytest.raises(GradingError, match=f"cell #{n} changed since it was graded"):
        run_grade(two_folders, out)
    assert (out / "cells" / f"{n}.json").read_bytes() == graded_before


def test_another_set_of_folders_is_refused_for_an_existing_grading_folder(two_folders, tmp_path, versions):
    out = tmp_path / "grading"
    run_grade(two_folders, out)
    third = results_folder(tmp_path, "inventor", versions)
    with pytest.raises(GradingError, match="another set of results folders"):
        run_grade([two_folders[0], third], out)


# -- the blind order -------------------------------------------------------------------------
def order_of(folders: list[Path], out: Path, seed: int) -> list[tuple[str, str]]:
    run_grade(folders, out, seed=seed)
    index, _ = read_grading(out)
    assert index["seed"] == seed
    return [(o["folder"], o["cell"]) for o in index["order"]]


def test_the_blind_order_is_a_permutation_of_every_cell(two_folders, tmp_path):
    order = order_of(two_folders, tmp_path / "g", seed=3)
    expected = {(f.name, c) for f in two_folders for c in CELLS}
    assert len(order) == len(expected) and set(order) == expected
    index, _ = read_grading(tmp_path / "g")
    assert [o["n"] for o in index["order"]] == list(range(1, 7))


def test_the_blind_order_is_fixed_by_the_seed(two_folders, tmp_path):
    first = order_of(two_folders, tmp_path / "a", seed=3)
    again = order_of(two_folders, tmp_path / "b", seed=3)
    assert first == again


def test_another_seed_gives_another_order(two_folders, tmp_path):
    orders = {tuple(order_of(two_folders, tmp_path / f"s{seed}", seed=seed)) for seed in (1, 2, 3, 4)}
    assert len(orders) > 1


def test_the_blind_order_does_not_follow_the_folders(two_folders, tmp_path):
    order = order_of(two_folders, tmp_path / "g", seed=3)
    sorted_order = sorted(order)
    assert order != sorted_order  # seed 3 shuffles these six cells


# -- every record belongs to its folder; folders and the grading folder apart (issue 10, items 3 and 4) -----
def test_a_record_of_another_model_copied_into_a_folder_is_refused_naming_it(two_folders, tmp_path, versions):
    oracle, guesser = two_folders
    stray = {**question_record("G02__advanced__r1", "guesser", versions), "world": {"fingerprint": "world-1"}}
    write_record(oracle, stray)
    with pytest.raises(GradingError, match=r"results oracle/cells/G02__advanced__r1.json is a record of "
                                           r"scripted:guesser, not of this folder's scripted:oracle"):
        run_grade(two_folders, tmp_path / "grading")
    assert written(tmp_path / "grading") == []


def test_a_record_of_another_world_build_is_refused_naming_it(two_folders, tmp_path, versions):
    oracle, _ = two_folders
    write_record(oracle, {**question_record("G02__advanced__r1", "oracle", versions),
                          "world": {"fingerprint": "world-2"}})
    with pytest.raises(GradingError, match=r"G02__advanced__r1.json was made on another build of the world"):
        run_grade(two_folders, tmp_path / "grading")


def test_the_same_folder_given_twice_is_refused(two_folders, tmp_path):
    oracle, _ = two_folders
    with pytest.raises(GradingError, match="given twice"):
        run_grade([oracle, oracle.parent / "." / oracle.name], tmp_path / "grading")
    assert written(tmp_path / "grading") == []


@pytest.mark.parametrize("where", ["inside", "equal"])
def test_a_grading_folder_inside_or_equal_to_a_results_folder_is_refused(two_folders, where):
    oracle, _ = two_folders
    target = oracle / "grading" if where == "inside" else oracle
    with pytest.raises(GradingError, match="inside the results folder"):
        run_grade(two_folders, target)
    assert not (oracle / "grading").exists() and not (oracle / "grading.json").exists()


# -- gradable subsets (issue 9, item 14) -------------------------------------------------------------------
def test_a_folder_whose_runs_planned_a_selection_grades_when_the_selection_is_finished(tmp_path, versions):
    folders = [results_folder(tmp_path, "oracle", versions, cells=["G01__basic__r1"]),
               results_folder(tmp_path, "guesser", versions, cells=["G01__basic__r1"])]
    assert run_grade(folders, tmp_path / "grading")["graded"] == 2


def test_every_run_of_a_folder_counts_a_cell_one_planned_and_none_finished_is_a_gap(tmp_path, versions):
    folder = results_folder(tmp_path, "oracle", versions, cells=["G01__basic__r1"])
    run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    run["runs"] = [{"matrix": {"cells": CELLS}}, {"matrix": {"cells": ["G01__basic__r1"]}, "selection": "G01"}]
    (folder / "run.json").write_text(json.dumps(run), encoding="utf-8")
    other = results_folder(tmp_path, "guesser", versions, cells=["G01__basic__r1"])
    with pytest.raises(GradingError, match=r"2 cell\(s\) not finished: G02__basic__r1 \(not started\), G01__advanced__r1 \(not started\)"):
        run_grade([folder, other], tmp_path / "grading")
