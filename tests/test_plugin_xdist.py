"""xdist scheduling of cells by provider route (S4.14).

Written against pytest 9.2.0 and pytest-xdist 3.8.0 (execnet 2.1.2): with ``-v`` each
finished item is reported on the controller as ``[gw0] [ 12%] PASSED cells.py::test_cell[...]``,
which is what these tests read to learn which worker ran which cell.
"""

from __future__ import annotations

import re
import shutil
from collections import defaultdict
from pathlib import Path

import pytest

from pytest_assistant_eval.run.scheduling import scope_for

pytest_plugins = ["pytester"]

WORKER_LINE = re.compile(r"^\[(?P<worker>gw\d+)\].*\bPASSED\b.*test_cell\[(?P<param>[^\]]+)\]")


def run_on_two_workers(pytester: pytest.Pytester, calibration: Path, world: Path, out: Path,
                       *extra: str) -> pytest.RunResult:
    shutil.copy(calibration / "cells.py", pytester.path / "cells.py")
    return pytester.runpytest_subprocess(
        "-p", "assistant_eval", "-p", "no:cacheprovider", f"--calibration-dir={calibration}", f"--world={world}",
        f"--out={out}", "--levels", "basic", "-k", "G0", "-n", "2", "-v", *extra, "cells.py")


def workers_by_cell(result: pytest.RunResult) -> dict[str, str]:
    found = {m.group("param"): m.group("worker") for line in result.outlines for m in [WORKER_LINE.match(line)] if m}
    assert found, "\n".join(result.outlines)
    return found


def test_group_by_route_keeps_every_cell_of_a_model_on_one_worker(pytester, calibration_dir, world_dir, tmp_path):
    result = run_on_two_workers(pytester, calibration_dir, world_dir, tmp_path / "results",
                                "--model", "scripted:oracle", "--model", "scripted:invents", "--group-by-route")
    assert result.ret == 0, "\n".join(result.outlines[-30:])
    workers: dict[str, set[str]] = defaultdict(set)
    for param, worker in workers_by_cell(result).items():
        workers[param.split("-", 1)[0]].add(worker)
    assert set(workers) == {"oracle", "invents"}
    assert all(len(used) == 1 for used in workers.values()), dict(workers)
    # Both models use the one route "scripted" (preset and address), so they share its worker.
    assert workers["oracle"] == workers["invents"]


def test_without_grouping_scripted_cells_spread_over_both_workers(pytester, calibration_dir, world_dir, tmp_path):
    result = run_on_two_workers(pytester, calibration_dir, world_dir, tmp_path / "results",
                                "--provider", "scripted", "--model", "oracle")
    assert result.ret == 0, "\n".join(result.outlines[-30:])
    ran = workers_by_cell(result)
    assert len(ran) >= 9
    assert set(ran.values()) == {"gw0", "gw1"}
    # The controller's tally counts what the workers collected after -k, not every planned cell.
    result.stdout.fnmatch_lines([f"assistant-eval: {len(ran)}/{len(ran)} cells · done {len(ran)} *· left 0"])


# -- scope_for ---------------------------------------------------------------------------------
def test_one_limited_route_is_one_scope_for_every_cell():
    routes, limited = {"gpt-4o": "openai"}, {"gpt-4o": True}
    assert scope_for("cells.py::test_cell[G01__basic__r1]", routes, limited) == "route:openai"
    assert scope_for("cells.py::test_cell[T03__advanced__r2]", routes, limited) == "route:openai"


def test_a_limit_free_cell_is_its_own_scope():
    nodeid = "cells.py::test_cell[G01__basic__r1]"
    assert scope_for(nodeid, {"oracle": "scripted"}, {"oracle": False}) == nodeid


def test_several_models_are_told_apart_by_the_longest_label_first():
    routes = {"m": "openai", "m-large": "ollama@http://127.0.0.1:11434"}
    limited = {"m": True, "m-large": True}
    assert scope_for("cells.py::test_cell[m-large-G05__advanced__r1]", routes, limited) == \
        "route:ollama@http://127.0.0.1:11434"
    assert scope_for("cells.py::test_cell[m-G05__advanced__r1]", routes, limited) == "route:openai"


def test_a_mixed_run_groups_limited_models_and_spreads_the_scripted_one():
    routes = {"oracle": "scripted", "gpt-4o": "openai"}
    limited = {"oracle": False, "gpt-4o": True}
    scripted = "cells.py::test_cell[oracle-G05__advanced__r1]"
    assert scope_for(scripted, routes, limited) == scripted
    assert scope_for("cells.py::test_cell[gpt-4o-G05__advanced__r1]", routes, limited) == "route:openai"


def test_a_node_id_of_no_known_model_is_its_own_scope():
    nodeid = "cells.py::test_cell[other-G01__basic__r1]"
    assert scope_for(nodeid, {"a": "openai", "b": "anthropic"}, {"a": True, "b": True}) == nodeid
    assert scope_for("cells.py::test_something", {"a": "openai", "b": "anthropic"}, {"a": True}) == \
        "cells.py::test_something"
