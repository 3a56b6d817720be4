"""The messages an owner reads, item 8 of issue 24: each says what is the case and what to run.

Each test fails on the wording (or count) the issue found and passes on the fix.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.suites.calibration.grade.folder import GradingError, grade
from pytest_assistant_eval.judging.unfinished import unfinished_message
from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
from pytest_assistant_eval.providers.ledger import Ledger
from pytest_assistant_eval.providers.pacing import Pacer, ledger_view
from pytest_assistant_eval.providers.presets import make_provider
from pytest_assistant_eval.records import RUN_FORMAT
from tests.test_review import cli, fill, graded_base, grading, queue_of, review_file  # noqa: F401 - fixtures

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"


def _run_json(folder: Path, model: str, runs: list[dict]) -> Path:
    folder.mkdir(parents=True)
    (folder / "cells").mkdir()
    (folder / "run.json").write_text(json.dumps({
        "format": RUN_FORMAT, "identity": {"preset": "scripted", "model": model, "world": "w", "route": None},
        "runs": runs}), encoding="utf-8")
    return folder


def _ask(provider):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=64))


# -- grade-ai -------------------------------------------------------------------------------------------------------

def test_grading_the_parent_folder_of_a_two_model_run_names_the_model_folders_inside(tmp_path: Path):
    parent = tmp_path / "run"
    for model in ("oracle", "invents"):
        _run_json(parent / model, model, [{"matrix": {"cells": []}}])
    with pytest.raises(GradingError) as caught:
        grade([parent], tmp_path / "grading", "scripted:rules", seed=1, calibration=CALIBRATION)
    message = str(caught.value)
    assert "parent folder of a run of 2 model(s)" in message and "invents, oracle" in message
    assert f"assistant-eval grade-ai {parent / 'invents'} {parent / 'oracle'} --dir" in message
    assert "--single-model" not in message and "no such file" not in message


def test_an_unfinished_folder_of_hundreds_of_cells_gets_a_short_one_line_resume_command(tmp_path: Path):
    cells = [f"G{i:02d}__basic__r{r}" for i in range(1, 60) for r in range(1, 6)]
    run = {"identity": {"preset": "scripted", "model": "oracle", "world": "w"},
           "runs": [{"matrix": {"cells": cells, "repeats": 5}, "selection": {"keyword": "basic", "markexpr": None,
                                                                           "cells": len(cells), "of": 900}}]}
    message = unfinished_message(tmp_path / "oracle", run, cells[1:], None)
    assert len(message) < 1200, len(message)  # it listed every cell: 3 KB on one line
    assert message.endswith("--resume -k basic  (WORLD: the grounding world of fingerprint w, not found near "
                            "the folder)") or " -k basic" in message
    assert "G58__basic__r5" not in message.split("finish them first")[1]


def test_an_unfinished_folder_of_a_whole_matrix_run_resumes_without_any_k(tmp_path: Path):
    run = {"identity": {"preset": "scripted", "model": "oracle", "world": "w"},
           "runs": [{"matrix": {"cells": ["G01__basic__r1"]}, "selection": {"keyword": None, "markexpr": None}}]}
    command = unfinished_message(tmp_path / "oracle", run, ["G01__basic__r1"], None).split("finish them first: ")[1]
    assert " -k " not in command and "--resume" in command


# -- providers -------------------------------------------------------------------------------------------------------

def test_a_connection_that_could_not_be_made_is_said_so_never_was_failed():
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("[Errno -2] Name or service not known", request=request)

    provider = make_provider("openai-compatible", "m", base_url="http://127.0.0.1:9/v1",
                             transport=httpx.MockTransport(unreachable), retry=RetryPolicy(max_attempts=1))
    with pytest.raises(ProviderError) as caught:
        _ask(provider)
    assert "was failed" not in caught.value.message
    assert "the connection to http://127.0.0.1:9/v1 could not be made (ConnectError)" in caught.value.message


def test_requests_that_never_reached_the_service_are_not_counted_as_requests_today(tmp_path: Path):
    with socket.socket() as s:  # a port on this machine with nothing listening: every connection is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ledger_path = tmp_path / "ledger.json"
    pacer = Pacer(Ledger(ledger_path), f"openai-compatible@http://127.0.0.1:{port}/v1", max_requests_per_day=45)
    provider = make_provider("openai-compatible", "m", base_url=f"http://127.0.0.1:{port}/v1", pacer=pacer,
                             retry=RetryPolicy(max_attempts=4, base_delay=0, max_delay=0))
    provider.sleep = lambda s: None
    with pytest.raises(ProviderError) as caught:
        _ask(provider)
    assert caught.value.code == "no_connection" and len(provider.attempts) == 4
    assert ledger_view(ledger_path).requests_today == 0  # it said "4 request(s) today"
    assert pacer.requests_today() == 0


# -- tables ----------------------------------------------------------------------------------------------------------

def test_leaderboard_given_a_results_folder_says_it_is_one_and_what_to_run(tmp_path: Path, capsys):
    from pytest_assistant_eval.tables.leaderboard import leaderboard_command

    results = _run_json(tmp_path / "oracle", "oracle", [{"matrix": {"cells": []}}])
    assert leaderboard_command(results, CALIBRATION) == 2
    err = capsys.readouterr().err
    assert f"{results} is a results folder (it holds run.json), not a grading folder" in err
    assert f"assistant-eval grade-ai {results} OTHER_RESULTS... --dir GRADING" in err
    assert "no such file" not in err


def test_leaderboard_given_a_runs_parent_folder_names_its_results_folders(tmp_path: Path, capsys):
    from pytest_assistant_eval.tables.leaderboard import leaderboard_command

    for model in ("a", "b"):
        _run_json(tmp_path / "run" / model, model, [{"matrix": {"cells": []}}])
    assert leaderboard_command(tmp_path / "run", CALIBRATION) == 2
    err = capsys.readouterr().err
    assert "holds results folders (a, b), not a grading" in err and "assistant-eval grade-ai" in err


def test_dash_capital_v_is_the_version():
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "-V"], capture_output=True, text=True,
                          cwd=REPO)
    assert done.returncode == 0 and re.fullmatch(r"assistant-eval \S+\n", done.stdout), done.stdout + done.stderr


def test_the_summary_list_of_waiting_cells_names_the_command_to_run(tmp_path: Path):
    from pytest_assistant_eval.tables.lines import BuiltLines
    from pytest_assistant_eval.tables.summary import render_summary

    built = BuiltLines([], waiting=[(3, "m", "G01__basic__r1", ["queued"])])
    text = render_summary(built, ["basic"], grading_dir=tmp_path / "grading")
    assert f"1 cell(s) wait for review: #3; review them with: assistant-eval review --dir {tmp_path / 'grading'}" \
        in text


# -- review ----------------------------------------------------------------------------------------------------------

def test_a_markdown_reimport_prints_no_line_per_reviewed_cell(grading: Path):  # noqa: F811 - the fixture
    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    kept = review_md.read_text()
    fill(review_md, {"*": "r"}, "1")
    first = cli("review", "--dir", str(grading), "--import-md", str(review_md))
    assert first.returncode == 0, first.stderr
    done = [e["n"] for e in queue_of(grading) if (review_file(grading, e["n"]) or {}).get("final")]
    assert len(done) >= 2
    review_md.write_text(kept)
    fill(review_md, {"*": "r"}, "1")
    again = cli("review", "--dir", str(grading), "--import-md", str(review_md))
    assert again.returncode == 0, again.stderr
    assert "is reviewed already" not in again.stdout + again.stderr
    assert f"{len(done)} cell(s) of {review_md} were reviewed already and are left as they are" in again.stdout
    assert len((again.stdout + again.stderr).splitlines()) < 8


def test_the_final_import_counts_the_letters_that_changed(grading: Path):  # noqa: F811 - the fixture
    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    fill(review_md, {"*": "r"}, "1")
    assert cli("review", "--dir", str(grading), "--import-md", str(review_md)).returncode == 0
    final_md = grading.parent / "REVIEW.final.md"
    text = final_md.read_text()
    judge = dict(re.findall(r"^\| `([^`]+)` ≠ \| \w+ \| (\w+) \|", text, re.M))
    assert judge, "some verdict of the judge differs from the owner's"
    letter = {"right": "r", "missing": "m", "wrong": "w"}
    changed, out = 0, []
    for line in text.splitlines():
        m = re.match(r"^- `([^`]+)`.*\]: r$", line)
        if m and m.group(1) in judge and letter[judge[m.group(1)]] != "r" and changed < 2:
            line = line[:-1] + letter[judge[m.group(1)]]
            changed += 1
        out.append(line)
    final_md.write_text("\n".join(out) + "\n")
    done = cli("review", "--dir", str(grading), "--import-md", str(final_md))
    assert done.returncode == 0, done.stderr
    assert f"{changed} letter(s) changed from your first verdicts" in done.stdout, done.stdout
    assert "Imported 0 letter(s)" not in done.stdout


# -- summary --record ------------------------------------------------------------------------------------------------

def test_summary_record_into_the_calibration_file_leaves_out_the_reference_assistants(grading: Path,  # noqa: F811
                                                                                         tmp_path: Path):
    from pytest_assistant_eval.review.command import ReviewOptions, review_command
    from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in
    from pytest_assistant_eval.tables.summary import summary_command

    calibration = tmp_path / "calibration"
    shutil.copytree(CALIBRATION, calibration, ignore=shutil.ignore_patterns("results.jsonl*"))
    sink = io.StringIO()
    assert review_command(grading, calibration, ReviewOptions(owner="scripted"), out=sink, open_grading=open_grading) == 0
    out = io.StringIO()
    assert summary_command(grading, calibration, record=True, out=out) == 0
    target = calibration / "results.jsonl"
    lines = target.read_text().splitlines() if target.exists() else []
    assert not [ln for ln in lines if json.loads(ln)["preset"] == "scripted"]
    assert "Left out" in out.getvalue() and "built-in reference assistants (false-claims, invents, oracle)" \
        in out.getvalue()
    elsewhere = tmp_path / "demo-results.jsonl"  # as the demo does: its own file holds them
    assert summary_command(grading, calibration, record=True, results_file=elsewhere, out=sink) == 0
    assert elsewhere.read_text().count("\n") > 0
