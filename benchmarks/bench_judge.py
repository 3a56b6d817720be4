"""The judge path's own cost per cell: checks, material, blinding, leak scan, fences, parsing, writing.

Runs a scripted run of the reference assistants (basic level), then grades it with a model
judge against a local fake OpenAI server on 127.0.0.1 that answers at once, so what is
measured is the harness's time, not a model's. Reports the harness time per graded cell
(the scan pass and the grading pass included), requests per graded cell, and the share of
cells that needed no request. A second grading into another folder shows the saved
judgments (0 requests).

    python benchmarks/bench_judge.py [--levels basic] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

MODELS = ("oracle", "acts-without-approval", "guesses-facts", "invents", "false-claims", "escalates-everything",
          "answers-nothing")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="basic")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-judge-"))
    root.mkdir(parents=True, exist_ok=True)
    world = root / "world" / "Grounding world ä"
    if not world.exists():
        subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "build", "--out", str(root / "world")],
                       check=True, capture_output=True)
    results = root / "results"
    if not results.exists():
        argv = [sys.executable, "-m", "pytest_assistant_eval", "run", "--world", str(world), "--out", str(results),
                "--levels", args.levels, "-n", "1", "-q", "-p", "no:randomly"]
        for m in MODELS:
            argv += ["--model", f"scripted:{m}"]
        subprocess.run(argv, check=True, capture_output=True)

    import keyring
    import keyring.backends.null

    keyring.set_keyring(keyring.backends.null.Keyring())
    os.environ["OPENAI_API_KEY"] = "sk-bench-0000000000000000"
    from pytest_assistant_eval.suites.calibration.grade.folder import JudgeOptions, grade, read_grading
    from tests.judge_fakes import Replier, judge_fake

    folders = [results / m for m in MODELS]
    fake, url, model = judge_fake("openai", Replier())
    with fake:
        for name in ("grading", "grading-again"):
            out = root / name
            options = JudgeOptions(base_url=url, accept_data_notice=True, saved=root / f"judgments-{time.time_ns()}"
                                   if name == "grading" else None, stream=False)
            if name == "grading-again":
                options.saved = first_saved
            first_saved = options.saved
            started = time.perf_counter()
            summary = grade(folders, out, f"openai:{model}", seed=1, options=options)
            seconds = time.perf_counter() - started
            _, cells = read_grading(out)
            asked = [c for c in cells if c["judge"]["route"]]
            print(f"{name}: {len(cells)} cells, {summary['requests']} request(s) sent "
                  f"({summary['reused']} saved judgment(s) reused), {seconds:.2f} s in all, "
                  f"{seconds / len(cells) * 1000:.1f} ms per cell (harness and a local fake answering at once)")
            if name == "grading":
                print(f"  cells that needed no judge request: {len(cells) - len(asked)}/{len(cells)} "
                      f"({(len(cells) - len(asked)) / len(cells):.1%}); requests per graded cell "
                      f"(canary and retries included): {summary['requests'] / len(cells):.2f}; "
                      f"judged cells per request sent: {len(asked) / max(1, summary['requests'] - 1):.2f}")
    if args.keep is None:
        print(f"(work folder {root})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
