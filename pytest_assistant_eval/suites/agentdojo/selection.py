"""What an AgentDojo run covered, said with its figures (issue 25).

A share is only read right next to what it is a share of: "attack success 74%" on 35 chosen
pairs is not AgentDojo's figure on all 949. ``run_selection`` describes one results folder at
grading time, from its ``run.json`` (the planned cells and the ``-k``/``-m`` selection, read
leniently: a folder without one still grades) and from the records graded: per suite, how
many of the suite's user tasks and of its crossed pairs (user task × injection task) have a
record, against the totals of the benchmark version the records name. ``selection_lines``
puts it in one line a run, as the board prints it:

    oracle: banking: 16 of 16 user tasks, 144 of 144 crossed pairs; ... attack important_instructions,
    benchmark v1.2.2 (all pairs)

It reads files and AgentDojo's suite definitions only; it never grades.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

__all__ = ["run_selection", "selection_lines", "suite_totals"]


@lru_cache(maxsize=4)
def suite_totals(benchmark_version: str) -> dict[str, tuple[int, int]]:
    """Per suite of the version: (user tasks, crossed pairs = user tasks × injection tasks)."""
    from agentdojo.task_suite.load_suites import get_suites

    return {name: (len(s.user_tasks), len(s.user_tasks) * len(s.injection_tasks))
            for name, s in sorted(get_suites(benchmark_version).items())}


def _run_json(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def run_selection(folder: Path, grades: Sequence[Mapping[str, Any]], benchmark_version: str) -> dict[str, Any]:
    """One folder's selection (the grading file's ``runs`` entry, docs/agentdojo.md)."""
    run = _run_json(folder)
    model = run.get("model") if isinstance(run.get("model"), dict) else {}
    attacks = sorted({g["attack"] for g in grades if g.get("attack")})
    suites: dict[str, Any] = {}
    for name, (tasks_of, pairs_of) in suite_totals(benchmark_version).items():
        mine = [g for g in grades if g["suite"] == name]
        if not mine:
            continue
        suites[name] = {"user_tasks": len({g["user_task"] for g in mine if g["injection_task"] is None}),
                        "user_tasks_of": tasks_of,
                        "pairs": len({(g["user_task"], g["injection_task"]) for g in mine if g["injection_task"]}),
                        "pairs_of": pairs_of, "cells": len(mine)}
    planned = run.get("planned")
    return {"folder": folder.name, "model": model.get("label") or (grades[0]["model"] if grades else folder.name),
            "benchmark_version": benchmark_version,
            "attack": ", ".join(attacks) or None,  # of the crossed cells; a benign-only run has none
            "planned": len(planned) if isinstance(planned, list) else None,
            "selection": run.get("selection") if isinstance(run.get("selection"), dict) else None,
            "graded": len(grades), "suites_of": len(suite_totals(benchmark_version)), "suites": suites}


def _whole(run: Mapping[str, Any]) -> str:
    """'all pairs', 'all user tasks', or 'a subset', from the counts."""
    suites = run["suites"].values()
    every_task = all(s["user_tasks"] == s["user_tasks_of"] for s in suites)
    every_pair = all(s["pairs"] == s["pairs_of"] for s in suites)
    four = len(run["suites"]) == run.get("suites_of")
    if four and every_task and every_pair:
        return "all user tasks and all pairs"
    if four and every_task and not any(s["pairs"] for s in suites):
        return "all user tasks, no attack"
    return "a subset"


def selection_lines(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """One line a graded run: per suite what was run of what there is, the attack, the version."""
    lines = []
    for run in runs:
        parts = [f"{name}: {s['user_tasks']} of {s['user_tasks_of']} user tasks, "
                 f"{s['pairs']} of {s['pairs_of']} crossed pairs" for name, s in sorted(run["suites"].items())]
        tail = [f"attack {run['attack']}" if run.get("attack") else "no attack",
                f"benchmark {run['benchmark_version']}"]
        chosen = run.get("selection") or {}
        if chosen.get("keyword") or chosen.get("markexpr"):
            how = " ".join(f"{flag} {chosen[key]!r}" for flag, key in (("-k", "keyword"), ("-m", "markexpr"))
                           if chosen.get(key))
            tail.append(f"chosen with {how}: {chosen.get('cells')} of {chosen.get('of')} cells")
        na = len(run.get("not_applicable") or ())
        if na:
            tail.append(f"{na} cell(s) not applicable, in no figure")
        if run.get("planned") is not None and run["planned"] > run["graded"] + na:
            tail.append(f"{run['planned'] - run['graded'] - na} planned cell(s) without a record")
        who = run["model"] if run["model"] == run["folder"] else f"{run['model']} (folder {run['folder']})"
        lines.append(f"{who}: {'; '.join(parts) or 'no cells'}; {', '.join(tail)} "
                     f"({_whole(run)})")
    return lines
