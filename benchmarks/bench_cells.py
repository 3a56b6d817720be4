"""The harness's own cost per cell and per request round, with the oracle (no model latency).

    python benchmarks/bench_cells.py [--levels basic,standard,advanced]

Runs every cell of the calibration set in one process with the built-in oracle (so the
time is the harness's: world copy, tool calls, checkpoints before every request, the
record) and prints the median and 90th percentile per cell and per request round, by kind.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_assistant_eval.run import session as runner  # noqa: E402
from pytest_assistant_eval.stats import percentile  # noqa: E402
from pytest_assistant_eval.suites.calibration.world.build import build_world  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="basic,standard,advanced")
    args = parser.parse_args()
    calibration = REPO / "calibration"
    with tempfile.TemporaryDirectory() as tmp:
        world = build_world(Path(tmp) / "world", calibration / "world")
        options = runner.RunOptions(world=world, out=Path(tmp) / "results",
                                    models=(runner.ModelSpec("scripted", "oracle"),), calibration=calibration,
                                    levels=tuple(args.levels.split(",")))
        started = time.perf_counter()
        session = runner.RunSession(options)
        setup = time.perf_counter() - started
        session.prepare_folders()
        per_cell: dict[str, list[float]] = {}
        per_round: list[float] = []
        for cell in session.cells:
            t = time.perf_counter()
            result = session.run_cell(cell)
            seconds = time.perf_counter() - t
            assert result.status == "done", result
            record = json.loads((options.out / "cells" / f"{cell.cell_id}.json").read_text())
            per_cell.setdefault(cell.kind, []).append(seconds)
            per_round.append(seconds / max(1, len(record["requests"])))
    print(f"session set-up (load and validate cases, verify world): {setup * 1000:.0f} ms")
    print(f"{'kind':10} {'cells':>6} {'median ms':>10} {'p90 ms':>8}")
    for kind, values in sorted(per_cell.items()):
        print(f"{kind:10} {len(values):6d} {statistics.median(values) * 1000:10.1f} {percentile(values, 90) * 1000:8.1f}")
    every = [v for values in per_cell.values() for v in values]
    print(f"{'all':10} {len(every):6d} {statistics.median(every) * 1000:10.1f} {percentile(every, 90) * 1000:8.1f}")
    print(f"per request round: median {statistics.median(per_round) * 1000:.1f} ms, "
          f"p90 {percentile(per_round, 90) * 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
