"""``assistant-eval demo``: the main job on the embedded default, with no network or key.

Builds the grounding world, runs the oracle and every planted-fault assistant over the
whole calibration set in one pytest run (several models, spread over the cores with
xdist), grades the records with the offline judge and prints the leaderboard.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

from pytest_assistant_eval.providers.scripted import FAULTS


def demo_command(out: Path, calibration: Path, workers: str) -> int:
    started = time.monotonic()
    out = out.resolve()
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    print(f"[1/4] Building the grounding world in {out / 'world'} ...", flush=True)
    from pytest_assistant_eval.world.build import build_world

    world = build_world(out / "world", calibration / "world")
    results = out / "results"
    print(f"[2/4] Running {len(FAULTS)} reference assistants over the calibration set on {workers} worker(s) ...",
          flush=True)
    argv = [sys.executable, "-m", "pytest", "-c", str(calibration / "pytest.ini"), "--rootdir", str(calibration),
            "--world", str(world), "--out", str(results), "-q", "-n", str(workers)]
    for model in FAULTS:
        argv += ["--model", f"scripted:{model}"]
    argv.append(str(calibration / "cells.py"))
    code = subprocess.call(argv)
    if code != 0:
        print(f"assistant-eval demo: the run stopped with exit code {code}", file=sys.stderr)
        return code
    print("[3/4] Grading with the offline judge scripted:rules ...", flush=True)
    from pytest_assistant_eval.grading.folder import grade_command

    folders = sorted(p for p in results.iterdir() if (p / "run.json").exists())
    code = grade_command(folders, out / "grading", "scripted:rules", seed=0, calibration=calibration)
    if code != 0:
        return code
    print("[4/4] Leaderboard\n", flush=True)
    from pytest_assistant_eval.tables.leaderboard import leaderboard_command

    code = leaderboard_command(out / "grading", calibration)
    print(f"\nDemo finished in {time.monotonic() - started:.1f} s; everything is in {out}")
    return code
