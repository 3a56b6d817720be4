"""A run's AgentDojo settings (issue 25): versions recorded, the unknown refused before any folder.

The benchmark version defaults to the installed agentdojo's own default (read from agentdojo),
``--benchmark-version`` chooses another for suites, tasks and injection vectors, and
``run.json`` and every record carry the agentdojo package version and the benchmark version.
An unknown version, defense or conversation stops ``agentdojo run`` with exit 2 and the plugin
with a usage error, before any folder exists.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.suites.agentdojo.cells import all_cells, suites  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.settings import (  # noqa: E402
    AgentDojoSettings,
    benchmark_versions,
    default_benchmark_version,
)

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"


def agentdojo_run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "agentdojo", "run", *args],
                          capture_output=True, text=True, cwd=REPO)


def test_the_default_benchmark_version_is_agentdojos_own():
    from agentdojo.scripts.benchmark import main

    from pytest_assistant_eval.suites.agentdojo.light_import import option_default

    [option] = [p for p in main.params if p.name == "benchmark_version"]
    assert default_benchmark_version() == option.default
    # read from the script's source, not by importing it (light_import.option_default)
    assert option_default("agentdojo.scripts.benchmark", "--benchmark-version") == option.default
    assert AgentDojoSettings().benchmark_version == option.default
    assert set(suites()) == set(suites(option.default))


def test_a_chosen_benchmark_version_gives_that_versions_suites():
    from agentdojo.task_suite.load_suites import get_suites

    assert suites("v1")["travel"] is not suites("v1.2.1")["travel"]
    assert suites("v1")["travel"] is get_suites("v1")["travel"]
    assert len(all_cells(version="v1")) == sum(len(s.user_tasks) for s in get_suites("v1").values())


def test_versions_are_in_run_json_and_every_record(tmp_path):
    out = tmp_path / "ad"
    done = agentdojo_run("--model", "scripted:oracle", "--out", str(out), "--benchmark-version", "v1.2.1",
                         "--cells", "AD-banking-0__r1", "AD-slack-1-i2__r1", "--attack", "important_instructions")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / "cells").glob("*.json"))]
    assert len(records) == 2
    for data in (run, *records):
        assert data["agentdojo_version"] == version("agentdojo")
        assert data["benchmark_version"] == "v1.2.1"
        assert data["conversation"] == "agentdojo" and data["comparable"] is True and data["defense"] is None
    assert run["attack"] == "important_instructions"


@pytest.mark.parametrize(("args", "message"), [
    (("--benchmark-version", "v9"), "unknown benchmark version 'v9'"),
    (("--defense", "firewall"), "unknown defense 'firewall'"),
])
def test_agentdojo_run_refuses_an_unknown_version_or_defense_before_any_folder(tmp_path, args, message):
    out = tmp_path / "ad"
    done = agentdojo_run("--model", "scripted:oracle", "--out", str(out), *args)
    assert done.returncode == 2, done.stdout[-2000:] + done.stderr[-2000:]
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


def test_the_refusal_names_the_known_versions():
    with pytest.raises(ValueError) as caught:
        AgentDojoSettings(benchmark_version="v9").check()
    assert all(v in str(caught.value) for v in benchmark_versions())


def test_the_plugin_refuses_an_unknown_version_before_any_folder(tmp_path):
    out = tmp_path / "ad"
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir",
                           str(CALIBRATION), "-p", "no:cacheprovider", "--agentdojo", "banking",
                           "--agentdojo-benchmark-version", "v9", "--model", "scripted:oracle", "--out", str(out),
                           str(CALIBRATION / "cells.py")], capture_output=True, text=True, cwd=REPO)
    assert done.returncode != 0
    assert "unknown benchmark version 'v9'" in done.stdout + done.stderr
    assert not out.exists()
