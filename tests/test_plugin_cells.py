"""The opt-in plugin runs the real calibration cells as pytest items (S0.1, S4.1, S4.7, S4.15, S4.17).

Every test here starts a separate pytest process on a copy of ``calibration/cells.py``
with ``-p assistant_eval``, the real calibration folder and a freshly built world, and
then reads what that process wrote: its terminal output, its exit code and its results
folder. The scripted reference assistants need no network and no key.

Checked against pytest 9.2.0 and pytest-xdist 3.8.0 (execnet 2.1.2).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

pytest_plugins = ["pytester"]

CELL_FORMAT = "assistant-eval.cell/1"
RUN_FORMAT = "assistant-eval.run/1"
CELL_ID = re.compile(r"^[A-Z]\d+__(basic|standard|advanced)__r\d+$")
TIMES = ("started_at", "finished_at", "conversation_seconds")


# -- helpers ------------------------------------------------------------------------
def plugin_args(calibration: Path, world: Path, out: Path, *extra: str) -> list[str]:
    # ``--option=value``: a separate value that is an existing folder would steer pytest's rootdir.
    return ["-p", "assistant_eval", "-p", "no:cacheprovider", f"--calibration-dir={calibration}",
            f"--world={world}", f"--out={out}", *extra, "cells.py"]


def run_cells(pytester: pytest.Pytester, calibration: Path, world: Path, out: Path, *extra: str,
              inprocess: bool = False) -> pytest.RunResult:
    """A pytest run of the copied cells; ``inprocess`` only for runs that stop before any cell runs."""
    shutil.copy(calibration / "cells.py", pytester.path / "cells.py")
    run = pytester.runpytest_inprocess if inprocess else pytester.runpytest_subprocess
    return run(*plugin_args(calibration, world, out, *extra))


def run_cells_in(folder: Path, calibration: Path, world: Path, out: Path, *extra: str) -> pytest.RunResult:
    """The same as ``run_cells`` without pytester, so that a module fixture can share one run."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(calibration / "cells.py", folder / "cells.py")
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", *plugin_args(calibration, world, out, *extra)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=300)
    return pytest.RunResult(proc.returncode, proc.stdout.splitlines(), proc.stderr.splitlines(),
                            time.monotonic() - start)


def records(folder: Path) -> dict[str, dict[str, Any]]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted((folder / "cells").glob("*.json"))}


def without_times(record: dict[str, Any]) -> dict[str, Any]:
    """A record without what legitimately differs between two runs: times and the git commit."""
    data = json.loads(json.dumps(record))
    for key in TIMES:
        data.pop(key, None)
    data["versions"].pop("git_commit", None)
    for request in data.get("requests", []):
        request.pop("seconds", None)
    return data


def node_params(result: pytest.RunResult, outcome: str = "PASSED") -> list[str]:
    """The parameters of the items a verbose run reports with ``outcome``."""
    pattern = re.compile(r"test_cell\[(?P<param>[^\]]+)\]")
    return sorted(m.group("param") for line in result.outlines if outcome in line
                  for m in [pattern.search(line)] if m)


# -- one shared pair of runs: the basic level with and without workers ----------------
@pytest.fixture(scope="module")
def basic_runs(tmp_path_factory: pytest.TempPathFactory, calibration_dir: Path,
               world_dir: Path) -> dict[int, tuple[pytest.RunResult, Path]]:
    def run(workers: int) -> tuple[pytest.RunResult, Path]:
        base = tmp_path_factory.mktemp(f"basic-n{workers}")
        out = base / "results"
        return run_cells_in(base / "project", calibration_dir, world_dir, out,
                            "--provider", "scripted", "--model", "oracle", "--levels", "basic", "-n", str(workers)), out

    # The two runs side by side (each its own folders; the world is only read): the 2-worker run spends
    # seconds starting its workers, in which the other runs (issue 32: 14 s one after the other).
    with ThreadPoolExecutor(2) as pool:
        return dict(zip((0, 2), pool.map(run, (0, 2))))


@pytest.mark.parametrize("workers", [0, 2])
def test_every_planned_cell_passes_and_writes_one_record_named_by_its_cell_id(basic_runs, workers):
    result, out = basic_runs[workers]
    assert result.ret == 0, "\n".join(result.outlines[-30:] + result.errlines[-30:])
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    planned = run["runs"][-1]["matrix"]["cells"]
    result.assert_outcomes(passed=len(planned))
    written = records(out)
    assert sorted(written) == sorted(planned)
    for cell_id, record in written.items():
        assert CELL_ID.match(cell_id)
        assert record["format"] == CELL_FORMAT
        assert record["cell"] == cell_id
        assert record["level"] == "basic"
    assert not (out / "partial").exists() or not any((out / "partial").iterdir())


def test_run_json_names_the_folder_identity_and_lists_the_planned_matrix(basic_runs, calibration_dir):
    import yaml

    _, out = basic_runs[0]
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    assert run["format"] == RUN_FORMAT
    assert run["identity"]["preset"] == "scripted" and run["identity"]["model"] == "oracle"
    assert run["identity"]["world"] == run["world_identity"]["fingerprint"]
    matrix = run["runs"][-1]["matrix"]
    questions = yaml.safe_load((calibration_dir / "grounding_set.yaml").read_text(encoding="utf-8"))
    assert matrix["levels"] == ["basic"]
    task_ids = sorted(p.stem for p in (calibration_dir / "tasks").glob("*.yaml"))
    assert matrix["tasks"] == task_ids
    assert len([q for q in matrix["questions"] if q.startswith("G")]) == len(questions["questions"])
    assert matrix["cells"] == sorted(matrix["cells"], key=lambda c: (*c.split("__")[:2], int(c.split("__r")[1])))
    assert len(matrix["cells"]) == len(set(matrix["cells"]))


def test_two_workers_write_the_same_records_as_one_process(basic_runs):
    (_, out0), (_, out2) = basic_runs[0], basic_runs[2]
    one, two = records(out0), records(out2)
    assert one and sorted(one) == sorted(two)
    differing = [cell for cell in one if without_times(one[cell]) != without_times(two[cell])]
    assert differing == []


@pytest.mark.parametrize("workers", [0, 2])
def test_the_progress_line_counts_every_finished_cell(basic_runs, workers):
    result, out = basic_runs[workers]
    planned = len(records(out))
    result.stdout.fnmatch_lines([f"assistant-eval: {planned}/{planned} cells · done {planned} · kept 0 *· left 0"])


@pytest.mark.parametrize("workers", [0, 2])
def test_the_progress_line_starts_its_own_line_and_the_closing_tally_prints_once(basic_runs, workers):
    result, out = basic_runs[workers]
    planned = len(records(out))
    tallies = [line for line in result.outlines if "assistant-eval:" in line and " cells · " in line]
    assert tallies and all(line.startswith("assistant-eval: ") for line in tallies), tallies
    assert len([line for line in tallies if line.startswith(f"assistant-eval: {planned}/{planned} ")]) == 1


# -- selection --------------------------------------------------------------------------
def test_k_selects_exactly_the_named_cells(pytester, calibration_dir, world_dir, tmp_path):
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "scripted", "--model", "oracle",
                       "-k", "G01 and basic", "-v")
    assert result.ret == 0
    assert node_params(result) == ["G01__basic__r1"]
    assert sorted(records(out)) == ["G01__basic__r1"]
    # The tally counts the selected cells only: nothing is "left" of the deselected ones.
    result.stdout.fnmatch_lines(["assistant-eval: 1/1 cells · done 1 *· left 0", "*1 passed*deselected*"])


def collected_params(result: pytest.RunResult) -> list[str]:
    return sorted(m.group(1) for line in result.outlines for m in [re.search(r"test_cell\[([^\]]+)\]", line)] if m)


def test_class_markers_select_cells(pytester, calibration_dir, world_dir, tmp_path):
    import yaml

    result = run_cells(pytester, calibration_dir, world_dir, tmp_path / "results", "--provider", "scripted",
                       "--model", "oracle", "--levels", "basic", "-m", "lookup", "--collect-only", "-q",
                       inprocess=True)
    assert result.ret == 0
    questions = yaml.safe_load((calibration_dir / "grounding_set.yaml").read_text(encoding="utf-8"))["questions"]
    lookups = sorted(f"{q['id']}__basic__r1" for q in questions if q["class"] == "lookup")
    assert lookups and collected_params(result) == lookups


def test_level_and_model_markers_select_cells(pytester, calibration_dir, world_dir, tmp_path):
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "scripted", "--model", "oracle",
                       "--levels", "basic,advanced", "-m", "advanced and task and model_oracle", "--collect-only",
                       "-q", inprocess=True)
    assert result.ret == 0
    tasks = sorted(p.stem for p in (calibration_dir / "tasks").glob("*.yaml"))
    chosen = collected_params(result)
    assert chosen and all(cell.split("__")[1] == "advanced" for cell in chosen)
    assert sorted({cell.split("__")[0] for cell in chosen}) == tasks


# -- custom outcomes ----------------------------------------------------------------------
def test_unreadable_tool_calls_keep_every_cell_and_the_run_exits_1(pytester, calibration_dir, world_dir, tmp_path):
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "scripted", "--model", "garbled",
                       "--levels", "basic", "-k", "G01 or G02 or T01")
    kept = sorted(m.group(1) for line in result.outlines
                  for m in [re.match(r"^(\S+): kept up to turn \d+, request \d+; run again with --resume", line)] if m)
    assert len(kept) >= 3 and all(CELL_ID.match(c) for c in kept)
    assert result.ret == 1
    result.stdout.fnmatch_lines([
        f"{len(kept)} cell(s) kept after a tool call the service could not read: {', '.join(kept)}; "
        "run again with --resume to continue them.",
        f"=* {len(kept)} kept in *",
    ])
    assert records(out) == {}


# -- refusals: usage errors, nothing run -----------------------------------------------------
def assert_refused(result: pytest.RunResult, out: Path, *needles: str) -> str:
    text = "\n".join(result.errlines + result.outlines)
    assert result.ret == pytest.ExitCode.USAGE_ERROR, text
    for needle in needles:
        assert needle in text
    assert "passed" not in text
    assert not (out / "cells").exists()
    return text


@pytest.fixture
def world_copy(world_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "copy" / world_dir.name
    shutil.copytree(world_dir, copy)
    return copy


def test_a_world_without_its_marker_is_refused(pytester, calibration_dir, world_copy, tmp_path):
    (world_copy / ".assistant_eval_world.json").unlink()
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_copy, out, "--provider", "scripted", "--model", "oracle",
                       inprocess=True)
    assert_refused(result, out, "marker")


def test_a_world_with_a_changed_database_is_refused_naming_it(pytester, calibration_dir, world_copy, tmp_path):
    database = world_copy / "base.sqlite"
    data = bytearray(database.read_bytes())
    data[-1] ^= 0xFF
    database.write_bytes(bytes(data))
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_copy, out, "--provider", "scripted", "--model", "oracle",
                       inprocess=True)
    assert_refused(result, out, "base.sqlite", "changed")


def test_an_unknown_provider_preset_is_refused_naming_the_known_ones(pytester, calibration_dir, world_dir, tmp_path):
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "nosuch", "--model", "oracle",
                       inprocess=True)
    assert_refused(result, out, "'nosuch'", "scripted", "openai", "anthropic", "ollama")


def test_an_unknown_scripted_model_is_refused_naming_the_built_in_ones(pytester, calibration_dir, world_dir,
                                                                       tmp_path):
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "scripted", "--model", "nobody",
                       inprocess=True)
    assert_refused(result, out, "'nobody'", "oracle", "invents", "garbled")


def test_a_missing_world_option_is_a_usage_error(pytester, calibration_dir, tmp_path):
    out = tmp_path / "results"
    shutil.copy(calibration_dir / "cells.py", pytester.path / "cells.py")
    result = pytester.runpytest_inprocess("-p", "assistant_eval", "-p", "no:cacheprovider",
                                          f"--calibration-dir={calibration_dir}", f"--out={out}",
                                          "--provider", "scripted", "--model", "oracle", "cells.py")
    assert_refused(result, out, "--world")


def test_a_malformed_task_file_is_reported_with_file_and_line(pytester, calibration_dir, world_dir, tmp_path):
    broken = tmp_path / "calibration"
    shutil.copytree(calibration_dir, broken, ignore=shutil.ignore_patterns("results*.jsonl", "__pycache__"))
    tasks = sorted((broken / "tasks").glob("*.yaml"))[:2]
    for task in tasks:
        lines = task.read_text(encoding="utf-8").splitlines()
        lines.insert(2, "this line: [is not: closed")
        task.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "results"
    result = run_cells(pytester, broken, world_dir, out, "--provider", "scripted", "--model", "oracle",
                       inprocess=True)
    text = assert_refused(result, out)
    for task in tasks:  # every broken file at once (S2.5), each with its line
        assert re.search(rf"{re.escape(task.name)}:\d+", text), text


def test_an_unknown_level_is_refused_naming_the_known_ones(pytester, calibration_dir, world_dir, tmp_path):
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "scripted", "--model", "oracle",
                       "--levels", "basic,expert", inprocess=True)
    assert_refused(result, out, "expert", "basic", "standard", "advanced")


def test_a_results_folder_with_records_is_refused_without_resume(pytester, calibration_dir, world_dir, basic_runs,
                                                                  tmp_path):
    out = tmp_path / "results"
    shutil.copytree(basic_runs[0][1], out)
    before = (out / "run.json").read_bytes()
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "scripted", "--model", "oracle",
                       "--levels", "basic", inprocess=True)
    text = "\n".join(result.errlines + result.outlines)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "--resume" in text, text
    assert (out / "run.json").read_bytes() == before


def test_a_results_folder_of_another_model_is_refused_naming_what_differs(pytester, calibration_dir, world_dir,
                                                                         basic_runs, tmp_path):
    out = tmp_path / "results"
    shutil.copytree(basic_runs[0][1], out)
    result = run_cells(pytester, calibration_dir, world_dir, out, "--provider", "scripted", "--model", "invents",
                       "--resume", inprocess=True)
    text = "\n".join(result.errlines + result.outlines)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "model" in text and "another run" in text, text


# -- several models ----------------------------------------------------------------------------
def test_several_models_get_one_folder_each_and_node_ids_carry_the_model(pytester, calibration_dir, world_dir,
                                                                         tmp_path):
    out = tmp_path / "results"
    result = run_cells(pytester, calibration_dir, world_dir, out, "--model", "scripted:oracle",
                       "--model", "scripted:invents", "--levels", "advanced", "-k", "G05 or T01", "-v")
    assert result.ret == 0, "\n".join(result.outlines[-30:])
    params = node_params(result)
    assert "oracle-G05__advanced__r1" in params and "invents-G05__advanced__r1" in params
    result.stdout.fnmatch_lines(["*cells.py::test_cell[[]oracle-G05__advanced__r1[]] PASSED*"])
    assert sorted(p.name for p in out.iterdir()) == ["invents", "oracle"]
    for model in ("oracle", "invents"):
        folder = out / model
        run = json.loads((folder / "run.json").read_text(encoding="utf-8"))
        assert run["identity"]["model"] == model
        written = records(folder)
        assert sorted(f"{model}-{c}" for c in written) == sorted(p for p in params if p.startswith(model + "-"))
        for cell_id, record in written.items():
            assert record["cell"] == cell_id and CELL_ID.match(cell_id)
            assert record["model"]["model"] == model


# -- the plugin is opt-in ------------------------------------------------------------------------
def test_the_repository_test_run_never_collects_the_calibration():
    repo = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "no:xdist"], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    collected = [line for line in proc.stdout.splitlines() if "::" in line]
    assert any(line.startswith("tests/") for line in collected)
    assert not [line for line in collected if line.startswith("calibration") or "test_cell[" in line]
    assert "calibration/cells.py" not in proc.stdout and "assistant-eval:" not in proc.stdout
