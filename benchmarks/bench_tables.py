"""How long ``calibrate``, ``summary``, ``leaderboard`` and ``compare`` take on 100,000 results (S9.4: seconds).

Generates, in a temporary folder, a results file of N lines (default 100,000) and a grading
folder of N graded cells with their results folders (one record per cell, small but of the
documented shapes), then times each command in this process, reading its files from disk,
with its output thrown away. The bar is 3 s each on a 2-core machine.

    python benchmarks/bench_tables.py [--lines 100000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CLASSES = {"lookup": 11, "interpret": 11, "diagnose": 10}
LEVELS = ("basic", "standard", "advanced")
TASKS = tuple(f"T{i:02}" for i in range(1, 15))
QUESTION_OUTCOMES = ("answered", "answered", "answered", "incomplete", "escalated", "failed")


def _cells(n: int, models: int) -> list[tuple[str, str, str, str, str, int]]:
    """(model, cell, case, kind, class, repeat) for n cells spread over the models."""
    out = []
    questions = [(f"G{i:02}", cls) for i, cls in enumerate(
        [c for c, k in CLASSES.items() for _ in range(k)], start=1)]
    per_model = n // models
    for m in range(models):
        model = f"model-{m}"
        made = 0
        repeat = 1
        while made < per_model:
            for level in LEVELS:
                for case, cls in questions + [(t, "task") for t in TASKS]:
                    if made >= per_model:
                        break
                    kind = "task" if cls == "task" else "question"
                    out.append((model, f"{case}__{level}__r{repeat}", case, kind, cls, repeat))
                    made += 1
            repeat += 1
    return out


def make_results_file(path: Path, cells, rng: random.Random) -> None:
    from pytest_assistant_eval.tables.results_file import FIELDS

    with open(path, "w", encoding="utf-8") as handle:
        for model, cell, case, kind, cls, repeat in cells:
            level = cell.split("__")[1]
            outcome = rng.choice(QUESTION_OUTCOMES) if kind == "question" else rng.choice(("pass", "pass", "fail"))
            line = {f: None for f in FIELDS}
            line.update({
                "line_format": 2, "recorded_at": "2026-01-02T03:04:05+00:00", "date": "2026-01-02", "model": model,
                "preset": "openai", "model_name": model, "route": "openai", "free_plan": model.endswith("9"),
                "automatic_level": "standard", "cell": cell, "case": case, "kind": kind, "class": cls, "level": level,
                "repeat": repeat, "setting": f"{level[:4]}00000000", "set_version": "s1", "key_version": "k1",
                "outcome": outcome, "grader": "judge", "review_reasons": [], "judge_outcome": outcome,
                "understandability": rng.choice((1, 1, 2, 3)), "no_answer": False, "escalated": outcome == "escalated",
                "invented_numbers": int(rng.random() < 0.05), "critical_missing": 0, "form_missing": 0,
                "checks_failed": [], "requests": 3, "calls": 2, "turn_calls": [rng.randint(1, 9)], "rounds": 3,
                "output_tokens": rng.randint(50, 900), "prompt_tokens_reported": 1200, "prompt_tokens_estimated": 1000,
                "cap_hits": 0, "length_stops": 0, "compactions": 0, "truncations": 0, "failed_attempts": [],
                "resumes": 0, "resume_points": [], "resume_codes": [], "knobs_relaxed": [],
            })
            handle.write(json.dumps(line, separators=(",", ":")) + "\n")


def make_grading(base: Path, cells, rng: random.Random) -> Path:
    grading = base / "grading"
    (grading / "cells").mkdir(parents=True)
    models = sorted({c[0] for c in cells})
    identities = {}
    for model in models:
        identity = {"preset": "openai", "model": model, "address": None, "route": "openai", "free_plan": False,
                    "ollama_contexts": None, "cpu_offload": None, "data_collection": None, "world": "w"}
        identities[model] = identity
        folder = base / "results" / model
        (folder / "cells").mkdir(parents=True)
        (folder / "run.json").write_text(json.dumps({"format": "assistant-eval.run/1", "identity": identity,
                                                     "runs": []}), encoding="utf-8")
    key = {"level": "basic", "max_tool_calls": 8, "system_hash": "a" * 64, "tools_hash": "b" * 64, "behaviour": "b1"}
    order = []
    for n, (model, cell, case, kind, cls, repeat) in enumerate(cells, start=1):
        level = cell.split("__")[1]
        order.append({"n": n, "folder": model, "cell": cell})
        if kind == "task":
            outcome = rng.choice(("pass", "pass", "fail"))
            graded = {"task": {"final": {"required_actions": outcome == "pass", "truthful": True, "asks_first": True,
                                         "asks_for_info": None, "real_info": True, "reports_back": True}}}
        else:
            outcome = rng.choice(QUESTION_OUTCOMES)
            graded = {"parts": [{"question": case, "outcome": outcome, "no_answer": False, "escalated": False,
                                 "critical_missing": [], "invented_numbers": 0, "form_missing": [], "items": []}]}
        doc = {"format": "assistant-eval.graded-cell/1", "n": n, "source": {"folder": model, "cell": cell},
               "material_sha256": "0" * 64, "model": {"preset": "openai", "model": model, "route": "openai",
                                                       "label": model},
               "level": level, "case": case, "kind": kind, "class": cls, "repeat": repeat,
               "conversation_seconds": 1.5, "requests": 3, "resumes": 0, "resume_points": [], "resume_codes": [],
               "outcome": outcome, "items": [], "judge": {"grader": "judge", "route": "api", "deterministic": False,
                                                          "verdicts": {}, "understandability": 1}, **graded}
        (grading / "cells" / f"{n}.json").write_text(json.dumps(doc), encoding="utf-8")
        record = {"format": "assistant-eval.cell/1", "cell": cell, "setting_key": {**key, "level": level},
                  "versions": {"harness": "0.1.0", "git_commit": None, "levels_version": "2"},
                  "finished_at": "2026-01-02T03:04:05+00:00",
                  "turns": [{"turn": 0, "final": "x", "stop": "end_turn", "rounds": 3, "tool_calls": 2}],
                  "requests": [{"index": i, "usage": {"input_tokens": 900, "output_tokens": 40},
                                "stop_reason": "end_turn"} for i in range(1, 4)],
                  "messages": [{"role": "user", "content": "q" * 200}], "tools": [], "transcript": [],
                  "cap_hits": [], "compactions": [], "attempts": []}
        (base / "results" / model / "cells" / f"{cell}.json").write_text(json.dumps(record), encoding="utf-8")
    index = {"format": "assistant-eval.grading/1",
             "folders": [{"name": m, "path_hint": m, "identity": identities[m]} for m in models],
             "judge": {"grader": "judge", "route": "api", "deterministic": False}, "rubric_version": "r1", "seed": 0,
             "order": order, "key_version": "k1", "set_version": "s1"}
    (grading / "grading.json").write_text(json.dumps(index), encoding="utf-8")
    return grading


def timed(what: str, call) -> float:
    """Wall time (the bar) and this process's CPU time: on a shared machine the two part."""
    started, cpu = time.perf_counter(), time.process_time()
    code = call()
    seconds = time.perf_counter() - started
    print(f"  {what:<50} {seconds:6.2f} s wall, {time.process_time() - cpu:6.2f} s CPU  (exit {code})", flush=True)
    return seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000, help="results lines and graded cells (default 100,000)")
    parser.add_argument("--models", type=int, default=10, help="models the cells are spread over (default 10)")
    parser.add_argument("--keep", type=Path, help="generate into this folder and keep it")
    args = parser.parse_args()
    base = args.keep or Path(tempfile.mkdtemp(prefix="bench-tables-"))
    base.mkdir(parents=True, exist_ok=True)
    rng = random.Random(13)
    cells = _cells(args.lines, args.models)
    calibration = ROOT / "calibration"
    try:
        started = time.perf_counter()
        results_file = base / "results.jsonl"
        make_results_file(results_file, cells, rng)
        grading = make_grading(base, cells, rng)
        print(f"Generated {len(cells):,} results lines and graded cells (with records) in "
              f"{time.perf_counter() - started:.1f} s under {base}", flush=True)

        t0 = time.perf_counter()
        from pytest_assistant_eval.tables.calibrate import calibrate_command
        from pytest_assistant_eval.tables.compare import compare_command
        from pytest_assistant_eval.tables.leaderboard import leaderboard_command
        from pytest_assistant_eval.tables.summary import summary_command
        print(f"  {'import of the four commands':<40} {time.perf_counter() - t0:6.2f} s")

        sink = io.StringIO()
        print(f"  load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores; repeat when high)")
        # This grading folder is written directly, not by grade-ai, so nothing primed its digests
        # (docs/digests.md): the first run of summary and leaderboard builds them from the files,
        # every later one reads them (as the first after a grade-ai does). Both are shown; the bar
        # is held on the later one.
        figures = {}
        for round_ in ("first", "again"):
            figures["calibrate"] = timed(f"calibrate ({len(cells):,} lines), {round_}",
                                         lambda: calibrate_command(results_file, calibration, out=sink))
            figures["summary"] = timed(f"summary ({len(cells):,} graded cells), {round_}",
                                       lambda: summary_command(grading, calibration, out=sink))
            figures["leaderboard"] = timed(f"leaderboard ({len(cells):,} graded cells), {round_}",
                                           lambda: leaderboard_command(grading, calibration, out=sink))
            figures["compare"] = timed(f"compare (two of {len(cells):,} graded cells' models), {round_}",
                                       lambda: compare_command(grading, "model-0", "model-1", out=sink))
        # Every table as data (issue 24): the same figures written as CSV and JSON, within the same bar.
        for name, call in (
                ("calibrate --format csv", lambda: calibrate_command(results_file, calibration, out=sink, fmt="csv")),
                ("summary --format json --table cells",
                 lambda: summary_command(grading, calibration, out=sink, fmt="json", table="cells")),
                ("leaderboard --format csv", lambda: leaderboard_command(grading, calibration, out=sink, fmt="csv"))):
            figures[name] = timed(f"{name} ({len(cells):,})", call)
        print(f"  load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        slow = [name for name, seconds in figures.items() if seconds > 3.0]
        print("every command within 3 s" if not slow else f"over 3 s: {', '.join(slow)}")
        return 1 if slow else 0
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
