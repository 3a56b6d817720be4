"""``assistant-eval demo``: the main job on the embedded default, with no network or key.

Builds the grounding world, runs the oracle and every planted-fault assistant over the
whole calibration set in one pytest run (several models, spread over the cores with
xdist), grades the records with the offline judge; then a scripted owner reviews the queue
(answering from the key), the leaderboard is printed from the final grades, the summary writes
agreement.txt and records the lines, and the report page is written beside them (``--owner none`` leaves the queue to a
person and records nothing).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from pytest_assistant_eval.run.progress import NO_NEXT_COMMAND
from pytest_assistant_eval.suites import suite_part
FAULTS = suite_part("calibration", "reference").FAULTS


#: The file that makes a folder a demo folder: only such a folder is written into again.
DEMO_MARK = ".assistant_eval_demo"
#: What the demo writes inside its folder, and all it ever removes there.
DEMO_PARTS = ("world", "results", "grading")
#: The demo's own results file: its lines are the demo's, never calibration/results.jsonl's.
DEMO_RESULTS_FILE = "results.jsonl"
#: The demo's report page, beside its results file.
REPORT_FILE = "report.html"


class DemoFolderRefused(Exception):
    """``--out`` names a folder the demo did not make; nothing was touched."""


def prepare_demo_folder(out: Path) -> None:
    """Make ``out`` ready for a demo, deleting only what an earlier demo wrote in it.

    A folder holding anything but an earlier demo is refused, never emptied: ``--out .`` once
    removed a whole project, ``.git`` included.
    """
    if out.exists() and not out.is_dir():
        raise DemoFolderRefused(f"{out} is not a folder; choose another --out")
    if out.is_dir() and not (out / DEMO_MARK).is_file() and any(out.iterdir()):
        raise DemoFolderRefused(f"{out} is not empty and not a demo folder; the demo deletes nothing it did not "
                                "write: choose a new or empty folder for --out (default: _eval_reports/demo)")
    for part in DEMO_PARTS:
        shutil.rmtree(out / part, ignore_errors=True)
    for name in (DEMO_RESULTS_FILE, DEMO_RESULTS_FILE + ".lock", REPORT_FILE):
        (out / name).unlink(missing_ok=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / DEMO_MARK).write_text("A folder written by 'assistant-eval demo'; the next demo replaces its "
                                 f"{', '.join(DEMO_PARTS)} folders and its {DEMO_RESULTS_FILE}.\n", encoding="utf-8")


def write_report(out: Path, calibration: Path, step: str) -> int:
    """The demo's last step: the page to look at (DEMO/report.html), its path printed."""
    from pytest_assistant_eval.tables.report import report_command

    print(f"\n{step} Report: one page to open in a browser, offline", flush=True)
    return report_command(out / "grading", calibration, out / REPORT_FILE)


def demo_command(out: Path, calibration: Path, workers: str, owner: str = "scripted") -> int:
    started = time.monotonic()
    out = out.resolve()
    try:
        prepare_demo_folder(out)
    except DemoFolderRefused as exc:
        print(f"assistant-eval demo: {exc}", file=sys.stderr)
        return 2
    print(f"[1/8] Building the grounding world in {out / 'world'} ...", flush=True)
    from pytest_assistant_eval.suites import suite_part

    build_world = suite_part("calibration", "world.build").build_world

    world = build_world(out / "world", calibration / "world")
    results = out / "results"
    print(f"[2/8] Running {len(FAULTS)} reference assistants over the calibration set on {workers} worker(s) ...",
          flush=True)
    argv = [sys.executable, "-m", "pytest", "-c", str(calibration / "pytest.ini"), "--rootdir", str(calibration),
            "--world", str(world), "--out", str(results), "-q", "-n", str(workers)]
    for model in FAULTS:
        argv += ["--model", f"scripted:{model}"]
    argv.append(str(calibration / "cells.py"))
    # The demo grades its own run next: the run's closing "Next: grade-ai ..." line would be a step to skip.
    code = subprocess.call(argv, env={**os.environ, NO_NEXT_COMMAND: "1"})
    if code != 0:
        print(f"assistant-eval demo: the run stopped with exit code {code}", file=sys.stderr)
        return code
    print("[3/8] Grading with the offline judge scripted:rules ...", flush=True)
    from pytest_assistant_eval.suites import suite_part

    grade_command = suite_part("calibration", "grade.folder").grade_command

    folders = sorted(p for p in results.iterdir() if (p / "run.json").exists())
    from pytest_assistant_eval.tables import priming

    code = grade_command(folders, out / "grading", "scripted:rules", seed=0, calibration=calibration,
                         priming=priming)  # the tables' digests, primed as it grades
    if code != 0:
        return code
    from pytest_assistant_eval.tables.leaderboard import leaderboard_command
    from pytest_assistant_eval.tables.summary import summary_command

    if owner == "none":  # the queued cells wait for a person: nothing is recorded
        print("[4/8] Leaderboard (the cells queued for review wait: counted apart, in no rate)\n", flush=True)
        code = leaderboard_command(out / "grading", calibration)
        if code != 0:
            return code
        print("\n[5/8] Summary (the queued cells wait for your review: assistant-eval review --dir "
              f"{out / 'grading'})\n", flush=True)
        code = summary_command(out / "grading", calibration)
        return code if code != 0 else write_report(out, calibration, "[8/8]")
    # A scripted owner answering from the key: grade -> review -> agreement runs offline (a stand-in, no evidence).
    print("[4/8] Review of the queued cells by the scripted owner (review --owner scripted)", flush=True)
    from pytest_assistant_eval.review.command import ReviewOptions, review_command
    from pytest_assistant_eval.tables.grading_source import open_grading

    code = review_command(out / "grading", calibration, ReviewOptions(owner="scripted"), open_grading=open_grading)
    if code != 0:
        return code
    # After the review: the board counts each cell's final grade, the owner's where reviewed (issue 29).
    print("\n[5/8] Leaderboard (each cell's final grade: the owner's where reviewed)\n", flush=True)
    code = leaderboard_command(out / "grading", calibration)
    if code != 0:
        return code
    # The demo records into its own file: its reference assistants are no evidence about real models.
    results_file = out / DEMO_RESULTS_FILE
    print(f"\n[6/8] Summary, recorded in {results_file}; agreement in {out / 'grading' / 'agreement.txt'}\n",
          flush=True)
    code = summary_command(out / "grading", calibration, record=True, results_file=results_file)
    if code != 0:
        return code
    print("\n[7/8] Calibration\n", flush=True)
    from pytest_assistant_eval.tables.calibrate import calibrate_command

    code = calibrate_command(results_file, calibration)
    if code != 0:
        return code
    code = write_report(out, calibration, "[8/8]")
    print(f"\nDemo finished in {time.monotonic() - started:.1f} s; everything is in {out}")
    return code
