"""Soak: kill a run with SIGKILL at random moments hundreds of times; resume each time.

    python benchmarks/soak_resume.py [--kills 500] [--seed 1]

Prints the runs started, the kills, the cells lost or different from an uninterrupted
run, files that did not parse after a kill, and the accounting: requests the fake server
received against requests the records count (a killed request counts at most once) and
against run.json's usage over every run entry (never more; at most the one in flight lost per kill).
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.crash_harness import crash_cycle, reference_run  # noqa: E402
from tests.reference_fake import ReferenceOpenAIFake  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    import os

    os.environ.setdefault("OPENAI_API_KEY", "sk-soak-test-key-0123456789")
    from pytest_assistant_eval.suites.calibration.world.build import build_world

    calibration = REPO / "calibration"
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        world = build_world(root / "world", calibration / "world")
        fake = ReferenceOpenAIFake(calibration, world, delay=0.03)
        try:
            reference = reference_run(world, root / "uninterrupted", fake, calibration)
            rng = random.Random(args.seed)
            totals = {"cycles": 0, "runs": 0, "kills": 0, "lost": 0, "unreadable": 0, "received": 0, "counted": 0,
                      "over": 0, "under": 0, "usage": 0, "usage_over": 0, "usage_lost": 0}
            while totals["kills"] < args.kills:
                totals["cycles"] += 1
                r = crash_cycle(world, root / f"c{totals['cycles']}", fake, calibration, reference, rng,
                                max_kills=min(12, args.kills - totals["kills"]), window=(0.4, 2.6))
                totals["runs"] += r.runs
                totals["kills"] += r.kills
                totals["lost"] += len(r.lost)
                for cell, fields in r.differences.items():
                    print(f"  different after resume: {cell}: {', '.join(fields) or 'missing'}", flush=True)
                totals["unreadable"] += len(r.unreadable)
                totals["received"] += r.received
                totals["counted"] += r.counted
                totals["over"] += max(0, r.counted - r.received - r.kills)  # counted twice beyond the kills
                # run.json's usage over every run entry (each process's journal folded once, issue 32):
                # never more than the server received, and at most one request lost per kill (the one
                # in flight, or answered but not yet journalled); no xdist here, so one per kill
                used = folder_usage(root / f"c{totals['cycles']}" / "run.json")
                totals["usage"] += used
                totals["usage_over"] += max(0, used - r.received)
                totals["usage_lost"] += max(0, r.received - used - r.kills)
                totals["under"] += max(0, r.received - r.counted)  # sent but not counted
                print(f"cycle {totals['cycles']:3d}: kills {totals['kills']:4d}, lost {totals['lost']}, "
                      f"received {totals['received']}, counted {totals['counted']}", flush=True)
        finally:
            fake.close()
    print()
    print(f"runs started          {totals['runs']}")
    print(f"SIGKILLs              {totals['kills']}")
    print(f"cells lost/different  {totals['lost']}")
    print(f"unreadable files      {totals['unreadable']}")
    print(f"requests received     {totals['received']}")
    print(f"requests counted      {totals['counted']}  (killed before sending, counted once: "
          f"{totals['counted'] - totals['received']})")
    print(f"double counts         {totals['over']}")
    print(f"uncounted requests    {totals['under']}")
    print(f"run.json usage        {totals['usage']} request(s); beyond those received {totals['usage_over']}, "
          f"lost beyond one per kill {totals['usage_lost']}")
    print(f"time                  {time.monotonic() - started:.0f} s")
    return 0 if totals["lost"] == totals["unreadable"] == totals["over"] == totals["under"] == totals["usage_over"] \
        == totals["usage_lost"] == 0 else 1


def folder_usage(run_json: Path) -> int:
    """The requests every run entry of ``run_json`` counts, a killed process's journal folded in first."""
    import json

    from pytest_assistant_eval.results.usage import fold_journals

    fold_journals(run_json)
    runs = json.loads(run_json.read_text(encoding="utf-8"))["runs"]
    return sum(int(u.get("requests") or 0) for entry in runs for u in (entry.get("usage") or {}).values())


if __name__ == "__main__":
    raise SystemExit(main())
