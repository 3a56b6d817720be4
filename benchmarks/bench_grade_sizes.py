"""grade-ai at several sizes: CPU and wall seconds per 1,000 cells and peak memory, to show both are flat.

    python benchmarks/bench_grade_sizes.py [--sizes 1000,10000,30000] [--work DIR] [--repeat 1]

The cells are ``bench_scale.py``'s (the demo's records under new repeat numbers), built once per
size into ``WORK/sizes-N`` and kept (``--work`` is shared with bench_scale: the demo seed is
made once). Each size is graded into a fresh grading folder by ``grade-ai`` as its own process
with the offline judge; the peak is the largest resident set of that process and its workers
(``ru_maxrss``). On a shared machine compare CPU seconds, not wall seconds, and run the two
versions back to back (issue 32: target 1.0 s per 1,000 cells, memory flat in the cells).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_scale import build_results, run_measured, seed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,30000", help="cell counts, comma-separated")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "assistant-eval-bench-scale")
    parser.add_argument("--repeat", type=int, default=1, help="grade each size this many times (the least CPU is shown too)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    args.work.mkdir(parents=True, exist_ok=True)
    seed_dir = seed(args.work)
    cli = [sys.executable, "-m", "pytest_assistant_eval"]
    print(f"{'cells':>7} {'wall s':>7} {'CPU s':>7} {'CPU/1k':>7} {'wall/1k':>8} {'peak MB':>8} {'exit':>5}")
    bad = 0
    for cells in sizes:
        folder = args.work / f"sizes-{cells}"
        if not (folder / "built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            build_results(seed_dir, folder / "results", cells)
            (folder / "built").write_text("")
        results = sorted(p for p in (folder / "results").iterdir() if (p / "run.json").exists())
        for _ in range(args.repeat):
            grading = folder / "grading"
            shutil.rmtree(grading, ignore_errors=True)
            load = " ".join(f"{x:.1f}" for x in os.getloadavg())
            wall, peak, code, cpu = run_measured([*cli, "grade-ai", *map(str, results), "--dir", str(grading),
                                                  "--judge", "scripted:rules", "--seed", "1"], folder / "grade-ai.log")
            bad += code != 0
            print(f"{cells:7d} {wall:7.2f} {cpu:7.2f} {cpu / cells * 1000:7.2f} {wall / cells * 1000:8.2f} "
                  f"{peak:8.0f} {code:5d}  (load {load})", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
