"""grade-ai from the command line: the lock between two graders, and an unfinished folder's resume command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.judge_fakes import Replier, judge_fake
from tests.provider_runs_helpers import console, run_env, run_eval

REPO = Path(__file__).resolve().parent.parent


def grade_ai(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pytest_assistant_eval", "grade-ai", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


class SlowReplier(Replier):
    def __call__(self, body):
        time.sleep(0.4)
        return super().__call__(body)


@pytest.fixture(scope="module")
def two_results(world_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "results"
    result = run_eval(world_dir, out, "--model", "scripted:oracle", "--model", "scripted:invents",
                      "--levels", "basic", "--repeats", "1", "-k", "G01 or G11 or G21")
    assert result.ret == 0, console(result)
    return out


def test_a_second_grade_ai_on_the_same_folder_is_refused_while_the_first_works(two_results, tmp_path):
    fake, url, model = judge_fake("openai", SlowReplier())
    env = {**run_env(), "PYTHONPATH": str(REPO)}
    args = [str(two_results / "oracle"), str(two_results / "invents"), "--dir", str(tmp_path / "grading"),
            "--judge", f"openai:{model}", "--base-url", url, "--accept-data-notice",
            "--saved-judgments", str(tmp_path / "judgments")]
    with fake:
        first = grade_ai(*args, cwd=tmp_path, env=env)
        deadline = time.monotonic() + 600  # a loaded machine may take long to start the first
        while not fake.requests and time.monotonic() < deadline:  # the first holds the lock while it asks
            time.sleep(0.05)
        second = grade_ai(*args, cwd=tmp_path, env=env)
        out2, err2 = second.communicate(timeout=120)
        out1, err1 = first.communicate(timeout=120)
    assert first.returncode == 0, err1
    assert second.returncode == 2 and "is in use by another grade-ai, review or summary --record" in err2
    assert "Graded 6 cell(s)" in out1


def test_an_unfinished_folder_names_each_checkpoint_and_its_printed_resume_command_works(world_dir, tmp_path):
    results = tmp_path / "results"
    # The usual layout, worlds beside results: the session's world is linked in next to them
    # (in the shared temporary folder it may sit among more folders than the search looks at).
    (tmp_path / "worlds").symlink_to(world_dir.parent, target_is_directory=True)
    assert run_eval(world_dir, results, "--model", "scripted:oracle", "--levels", "basic", "--repeats", "1",
                    "-k", "G01 or G11").ret == 0
    (results / "cells" / "G11__basic__r1.json").unlink()
    (results / "partial").mkdir(exist_ok=True)
    (results / "partial" / "G11__basic__r1.json").write_text(json.dumps({"pending": {"turn": 1, "request": 7}}))
    env = {**run_env(), "PYTHONPATH": str(REPO)}
    refused = grade_ai(str(results), "--single-model", "--dir", str(tmp_path / "grading"), cwd=tmp_path, env=env)
    _, err = refused.communicate(timeout=120)
    assert refused.returncode == 2 and "G11__basic__r1 (unfinished: checkpoint at turn 2, request 7)" in err
    command = err.split("finish them first: ", 1)[1].strip()
    assert command.startswith("assistant-eval run --world ") and "WORLD" not in command.split("--model")[0]
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run(command, shell=True, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    graded = grade_ai(str(results), "--single-model", "--dir", str(tmp_path / "grading"), cwd=tmp_path, env=env)
    out, err = graded.communicate(timeout=120)
    assert graded.returncode == 0, err
    assert "Graded 2 cell(s)" in out
