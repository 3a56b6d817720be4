"""How long ``assistant-eval report`` takes on the demo's grading, and how big the page is (issue 14).

The bar: the demo's grading (the whole calibration set for every reference assistant, about
1,300 cells) gives a page under 10 MB in at most 5 s. Each measurement is the command as a
person runs it, a fresh process (interpreter start and every import included, matplotlib's
too), timed from outside; the CPU seconds of the process are shown beside the wall time, so
a figure taken on a busy machine can be told from a slow report.

    python benchmarks/bench_report.py                   # runs the demo first (about a minute and a half)
    python benchmarks/bench_report.py --demo DIR        # an earlier demo folder (its grading/ is read)
    python benchmarks/bench_report.py --repeats 5

Exit 1 when the page is 10 MB or more, or the fastest run took more than 5 s.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZE_BAR = 10 * 1000 * 1000
SECONDS_BAR = 5.0


def run_demo(out: Path) -> None:
    print(f"Running the demo into {out} ...", flush=True)
    subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "demo", "--out", str(out), "-n", "2"],
                   check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def one_report(grading: Path, page: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one ``assistant-eval report`` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "report", "--dir", str(grading), "--out",
                    str(page)], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo", type=Path, help="an earlier demo folder (default: run the demo in a temporary one)")
    parser.add_argument("--repeats", type=int, default=3, help="reports to time (default: 3)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        demo = args.demo or Path(tmp) / "demo"
        if args.demo is None:
            run_demo(demo)
        grading = demo / "grading"
        cells = len(list((grading / "cells").glob("*.json")))
        page = Path(tmp) / "report.html"
        runs = [one_report(grading, page) for _ in range(max(1, args.repeats))]
        size = page.stat().st_size
    walls = [w for w, _ in runs]
    print(f"report of {cells} graded cells: page {size / 1e6:.2f} MB (bar {SIZE_BAR / 1e6:.0f} MB)")
    print(f"  wall s: fastest {min(walls):.2f}, median {statistics.median(walls):.2f}  (bar {SECONDS_BAR:.0f} s); "
          f"CPU s: {', '.join(f'{c:.2f}' for _, c in runs)}; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} core(s)")
    return 0 if size < SIZE_BAR and min(walls) <= SECONDS_BAR else 1


if __name__ == "__main__":
    raise SystemExit(main())
