"""Scale: grade-ai, leaderboard, summary and calibrate over 100,000 cells, with time and peak memory.

    python benchmarks/bench_scale.py [--cells 100000] [--work DIR] [--keep]

From the demo's real records (``assistant-eval demo``, made once into ``WORK/seed``), it builds
synthetic results folders of ``--cells`` records in all (each model's records repeated with new
repeat numbers: the same material, so every cell is graded for real) and a results file of as
many lines (the demo's lines, repeated the same way). Then it times, each as a fresh process, with
its peak resident memory (the child's ``ru_maxrss``):

- ``grade-ai`` of every folder with the offline judge (and seconds per 1,000 cells);
- ``leaderboard`` and ``summary`` of the grading folder it made;
- ``calibrate`` of the results file.

Targets (issue 15): grade-ai <= 1 s per 1,000 cells and <= 250 MB at 100,000; the tables <= 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_measured(argv: list[str], log: Path) -> tuple[float, float, int, float]:
    """(wall seconds, peak MB, exit code, CPU seconds) of one command as its own process.

    CPU is user + system of the process and the workers it waited for: on a shared machine it
    moves much less with the load than the wall time does."""
    started = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=REPO)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss / 1024, proc.returncode, usage.ru_utime + usage.ru_stime


def seed(work: Path) -> Path:
    folder = work / "seed"
    if not (folder / "grading" / "grading.json").exists():
        print(f"making the seed records: assistant-eval demo --out {folder} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "demo", "--out", str(folder)], check=True,
                       cwd=REPO, stdout=subprocess.DEVNULL)
    return folder


def build_results(seed_dir: Path, out: Path, cells: int) -> list[Path]:
    """Results folders holding ``cells`` records in all: each seed record under new repeat numbers."""
    folders = sorted(p for p in (seed_dir / "results").iterdir() if (p / "run.json").exists())
    per_folder = -(-cells // len(folders))
    made = []
    total = 0
    for source in folders:
        records = [json.loads(p.read_text()) for p in sorted((source / "cells").glob("*.json"))]
        target = out / source.name
        (target / "cells").mkdir(parents=True, exist_ok=True)
        names = []
        copies = -(-per_folder // len(records))
        for copy in range(copies):
            for record in records:
                if len(names) >= per_folder or total >= cells:
                    break
                repeat = record["repeat"] + 1000 * copy if copy else record["repeat"]
                name = f"{record['case']}__{record['level']}__r{repeat}"
                if copy:
                    record = {**record, "cell": name, "repeat": repeat}
                (target / "cells" / f"{name}.json").write_text(json.dumps(record, ensure_ascii=False,
                                                                          separators=(",", ":")))
                names.append(name)
                total += 1
        run = json.loads((source / "run.json").read_text())
        run["runs"] = [{**run["runs"][0], "matrix": {**run["runs"][0]["matrix"], "cells": sorted(names)}}]
        (target / "run.json").write_text(json.dumps(run, ensure_ascii=False))
        made.append(target)
    return made


def build_lines(seed_dir: Path, out: Path, lines: int) -> Path:
    """A results file of ``lines`` lines: the demo's lines under new repeat numbers."""
    source = [json.loads(line) for line in (seed_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    path = out / "results.jsonl"
    with path.open("w") as handle:
        n = 0
        copy = 0
        while n < lines:
            for line in source:
                if n >= lines:
                    break
                if copy:
                    line = dict(line)
                    for key in ("cell", "cell_id"):
                        if isinstance(line.get(key), str) and "__r" in line[key]:
                            base, _, rep = line[key].rpartition("__r")
                            line[key] = f"{base}__r{int(rep) + 1000 * copy}" if rep.isdigit() else line[key]
                    if isinstance(line.get("repeat"), int):
                        line["repeat"] += 1000 * copy
                handle.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
                n += 1
            copy += 1
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "assistant-eval-bench-scale")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic folders (the seed is always kept)")
    parser.add_argument("--grade-only", action="store_true", help="time grade-ai alone, not the tables")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    seed_dir = seed(args.work)
    scale = args.work / f"scale-{args.cells}"
    shutil.rmtree(scale, ignore_errors=True)
    started = time.perf_counter()
    folders = build_results(seed_dir, scale / "results", args.cells)
    results_file = build_lines(seed_dir, scale, args.cells)
    print(f"built {args.cells} records in {len(folders)} folders and {args.cells} result lines "
          f"in {time.perf_counter() - started:.0f} s", flush=True)
    cli = [sys.executable, "-m", "pytest_assistant_eval"]
    grading = scale / "grading"
    rows = []
    print(f"load average before grade-ai: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)", flush=True)
    seconds, peak, code, cpu = run_measured([*cli, "grade-ai", *map(str, folders), "--dir", str(grading),
                                             "--judge", "scripted:rules", "--seed", "1"], scale / "grade-ai.log")
    rows.append(("grade-ai (offline)", seconds, peak, code, cpu,
                 f"{seconds / args.cells * 1000:.2f} s, CPU {cpu / args.cells * 1000:.2f} s per 1,000 cells"))
    print(f"load average before the tables: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores)", flush=True)
    # grade-ai primes the grading folder's digests (docs/digests.md): the first leaderboard and
    # summary read them as every later one does. Both runs are shown.
    for round_ in () if args.grade_only else ("first", "again"):
        for name, argv in [("leaderboard", [*cli, "leaderboard", "--dir", str(grading)]),
                           ("summary", [*cli, "summary", "--dir", str(grading),
                                        *(a for f in folders for a in ("--results", str(f)))]),
                           ("calibrate", [*cli, "calibrate", "--file", str(results_file)])]:
            seconds, peak, code, cpu = run_measured(argv, scale / f"{name}.log")
            rows.append((f"{name} ({round_})", seconds, peak, code, cpu, ""))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    print(f"{'command':22} {'seconds':>8} {'CPU s':>8} {'peak MB':>8} {'exit':>5}")
    for name, seconds, peak, code, cpu, note in rows:
        print(f"{name:22} {seconds:8.2f} {cpu:8.2f} {peak:8.0f} {code:5d}  {note}")
    bad = [name for name, _, _, code, _, _ in rows if code != 0]
    if bad:
        print("failed: " + ", ".join(bad) + f" (logs in {scale})")
    if not args.keep and not bad:
        shutil.rmtree(scale, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
