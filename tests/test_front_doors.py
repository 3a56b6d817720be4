"""The front doors a new user walks through first (issue 29, item 7), each as it behaves from the shell.

``--help`` of the command and of every subcommand; a table piped into ``head``; what the summary
and the review say of cells not graded yet; ``--export-requests`` with the offline judge; the
markdown review's tool calls under a ``claims`` item; ``--user-model`` with only scripted assistants.
"""

from __future__ import annotations

import argparse
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graded_helpers import CALIBRATION, REPO, run_and_grade
from pytest_assistant_eval.cli import build_parser, main


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *args], capture_output=True, text=True,
                          cwd=REPO, **kw)


def subcommands() -> list[str]:
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return sorted(sub.choices)


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> Path:
    base = tmp_path_factory.mktemp("front-doors")
    run_and_grade(base, world_dir, ("oracle", "false-claims"), seed=7)
    return base


@pytest.fixture()
def grading(graded: Path, tmp_path: Path) -> Path:
    shutil.copytree(graded, tmp_path / "copy")
    return tmp_path / "copy" / "grading"


# -- --help --------------------------------------------------------------------------------------------
def test_the_commands_own_help_exits_0_and_names_every_subcommand():
    done = cli("--help")
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert all(name in done.stdout for name in subcommands())
    assert "paired 95% intervals" in done.stdout  # a % in a help text is printed as written


@pytest.mark.parametrize("name", subcommands())
def test_every_subcommands_help_exits_0(name: str, capsys):
    with pytest.raises(SystemExit) as stopped:
        main([name, "--help"])
    assert stopped.value.code in (0, None)
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize("action", ["run", "export", "grade", "board", "crosscheck"])
def test_every_agentdojo_actions_help_exits_0(action: str, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(["agentdojo", action, "--help"])
    assert stopped.value.code in (0, None)
    assert "usage:" in capsys.readouterr().out


# -- a reader that stops reading -----------------------------------------------------------------------
@pytest.mark.parametrize("args", [("summary",), ("leaderboard",), ("compare", "oracle", "false-claims"),
                                  ("report",), ("summary", "--format", "csv", "--table", "cells")])
def test_a_table_piped_into_a_reader_that_stops_ends_quietly_with_exit_0(args, grading: Path):
    command, *rest = args
    argv = [sys.executable, "-m", "pytest_assistant_eval", command, "--dir", str(grading), *rest]
    if command == "report":
        argv += ["--out", str(grading / "page.html")]
    proc = subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -0`: the reader is gone before the first line
    err = proc.stderr.read().decode()
    assert proc.wait() == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_calibrate_piped_into_a_reader_that_stops_ends_quietly(grading: Path, tmp_path: Path):
    results = tmp_path / "results.jsonl"
    assert cli("review", "--dir", str(grading), "--owner", "scripted").returncode == 0
    assert cli("summary", "--dir", str(grading), "--record", "--file", str(results)).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "pytest_assistant_eval", "calibrate", "--file", str(results)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait() == 0 and "Traceback" not in err


# -- cells not graded yet: the summary and the review say the same ----------------------------------
def test_the_summary_and_the_review_name_the_same_ungraded_cells_and_the_same_next_step(grading: Path):
    for n in (3, 5):
        (grading / "cells" / f"{n}.json").unlink()
    shutil.rmtree(grading / ".digests", ignore_errors=True)
    summary = cli("summary", "--dir", str(grading))
    assert summary.returncode == 0
    review = cli("review", "--dir", str(grading), "--owner", "scripted")
    assert review.returncode == 2
    said = "2 cell(s) are not graded yet (#3, #5): finish the grading first, with the command that started it: "
    assert said in summary.stdout and said in review.stderr
    folders = " ".join(str(grading.parent / "results" / m) for m in ("false-claims", "oracle"))
    assert f"assistant-eval grade-ai {folders} --dir" in review.stderr and folders in summary.stdout
    assert "--judge scripted:rules" in summary.stdout
    assert "wait for review" not in summary.stdout  # nothing waits for the owner before the grading is finished
    record = cli("summary", "--dir", str(grading), "--record", "--file", str(grading.parent / "r.jsonl"))
    assert record.returncode == 2 and said in record.stderr and "nothing was recorded" in record.stderr


# -- --export-requests needs a model judge -------------------------------------------------------------
def test_export_requests_with_the_offline_judge_is_refused_and_grades_nothing(graded: Path, tmp_path: Path):
    target = tmp_path / "grading"
    done = cli("grade-ai", *(str(p) for p in sorted((graded / "results").iterdir())), "--dir", str(target),
               "--export-requests", str(tmp_path / "requests.jsonl"))
    assert done.returncode == 2
    assert "--export-requests is the file route of a model judge" in done.stderr
    assert "--judge PRESET:MODEL" in done.stderr
    assert not (tmp_path / "requests.jsonl").exists() and not (target / "grading.json").exists()


# -- the markdown review shows the tool calls a claims item is about ----------------------------------
def test_the_markdown_review_shows_the_tool_calls_and_results_beside_a_claims_item(grading: Path):
    import json

    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md), "--all").returncode == 0
    blocks = review_md.read_text().split("\n# Cell #")[1:]
    with_claims = [b for b in blocks if "claims`: every other statement of fact" in b]
    assert with_claims, "no queued cell with a claims item"
    shown = 0
    for block in with_claims:
        n = int(block.split("\n", 1)[0].strip())
        source = json.loads((grading / "cells" / f"{n}.json").read_text())["source"]
        record = json.loads((grading.parent / "results" / source["folder"] / "cells" / f"{source['cell']}.json")
                            .read_text())
        calls = [e for e in record["transcript"] if e.get("type") == "tool"]
        assert block.count("\n### Tool call ") == len(calls), n  # every call the statements may rest on
        for e in calls:
            assert f"> tool: {json.dumps(e['name'])}" in block
        shown += len(calls)
    assert shown, "no claims item of a cell that called a tool"
    assert "> result:" in "".join(with_claims)


# -- --user-model with only scripted assistants --------------------------------------------------------
def test_user_model_with_only_scripted_assistants_is_said_to_be_unused(world_dir: Path, tmp_path: Path):
    done = subprocess.run([sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir",
                           str(CALIBRATION), f"--world={world_dir}", f"--out={tmp_path / 'results'}", "-q",
                           "-p", "no:cacheprovider", "--model", "scripted:oracle",
                           "--user-model", "openai:gpt-4.1-mini", "-k", "T01__basic__r1",
                           str(CALIBRATION / "cells.py")], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stdout + done.stderr
    said = done.stdout + done.stderr
    assert "warning: --user-model openai:gpt-4.1-mini is not used: it plays the simulated user of an assistant " \
           "behind a provider, and the built-in assistants (scripted:oracle) always answer the scripted user" in said
    assert said.count("--user-model openai:gpt-4.1-mini is not used") == 1
