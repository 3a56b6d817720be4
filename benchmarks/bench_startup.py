"""Worker startup: what one xdist worker pays before its first cell, as a fresh process.

    python benchmarks/bench_startup.py [--runs 5] [--model openai-compatible:m --base-url http://127.0.0.1:9/v1]

Each run is a new interpreter that imports pytest and the plugin and makes the run session a
worker makes (the case files read and checked, the world verified, the route's key looked up),
timed from the interpreter's start (wall). Also the slowest import of the table commands'
statistics (``-X importtime``), which must stay under 50 ms. Issue 15's target: <= 0.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

WORKER = """
import sys
from pathlib import Path
import pytest  # noqa: F401 - a worker runs inside pytest
import assistant_eval  # noqa: F401 - the plugin's shim
from pytest_assistant_eval.run import session as runner
preset, model = sys.argv[3].split(":", 1)
options = runner.RunOptions(world=Path(sys.argv[1]), out=Path(sys.argv[2]), calibration=Path(sys.argv[5]),
                            models=(runner.ModelSpec(preset, model, base_url=sys.argv[4] or None),))
runner.RunSession(options)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--model", default="openai-compatible:bench")
    parser.add_argument("--base-url", default="http://127.0.0.1:9/v1")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from pytest_assistant_eval.suites.calibration.world.build import build_world

    with tempfile.TemporaryDirectory() as tmp:
        world = build_world(Path(tmp) / "world", REPO / "calibration" / "world")
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", WORKER, str(world), str(Path(tmp) / "out"), args.model,
                            args.base_url, str(REPO / "calibration")], check=True, cwd=REPO)
            times.append(time.perf_counter() - started)
    print(f"worker startup ({args.model}): median {statistics.median(times):.3f} s, "
          f"min {min(times):.3f} s over {args.runs} runs")
    out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pytest_assistant_eval.stats, "
                          "pytest_assistant_eval.tables.leaderboard"], capture_output=True, text=True, cwd=REPO)
    stats_modules = ("statistics", "scipy", "numpy", "pytest_assistant_eval.stats")
    worst = max(((int(line.split("|")[1]), line.split("|")[2].strip()) for line in out.stderr.splitlines()
                 if line.startswith("import time:") and "|" in line and line.split("|")[1].strip().isdigit()
                 and line.split("|")[2].strip().startswith(stats_modules)), default=(0, "-"))
    print(f"slowest statistics import: {worst[1]} {worst[0] / 1000:.1f} ms (cumulative)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
