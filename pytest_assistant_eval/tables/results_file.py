"""``calibration/results.jsonl``: the append-only record of graded cells (S8.3, line format 2).

One JSON object a line, every line with the same fields (``FIELDS``), so the file reads
as one table in pandas (``read_json(path, lines=True)``) and DuckDB (``FROM 'results.jsonl'``)
with no schema given. Lines are only ever appended: a later review or regrading of a cell
writes a new line and the latest line of a cell is its grade (``latest``), so the file is
also the history of every grade. Documented in ``docs/results.md``.

This module reads and writes the file; it never computes a rate.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from pytest_assistant_eval.input_files import RESULTS_LIMIT, open_input

__all__ = ["LINE_FORMAT", "FIELDS", "ResultsFileError", "ResultsFile", "read_lines", "latest", "line_key",
           "append_lines", "comparable_versions"]

LINE_FORMAT = 2

#: Every field of a line, in the order written. A line lacking one, or with another, is not format 2.
FIELDS: tuple[str, ...] = (
    "line_format", "recorded_at", "date",
    "model", "preset", "model_name", "route", "free_plan", "automatic_level", "context_window",
    "cell", "case", "kind", "class", "level", "repeat",
    "setting", "system_hash", "tools_hash", "behaviour",
    "harness_version", "git_commit", "set_version", "key_version", "levels_version",
    "outcome", "grader", "review_reasons", "judge_outcome", "understandability", "judge_understandability",
    "judge_route", "no_answer", "escalated", "invented_numbers", "critical_missing", "form_missing",
    "checks_failed", "checks_applied",
    "requests", "calls", "turn_calls", "rounds", "output_tokens", "prompt_tokens_reported",
    "prompt_tokens_estimated", "cap_hits", "length_stops", "compactions", "truncations",
    "conversation_seconds", "failed_attempts",
    "resumes", "resume_points", "resume_codes",
    "skip_reason", "na_reason", "cpu_offload", "knobs_relaxed", "helpfulness", "helpfulness_note",
    "grading", "blind_n",
)  # fmt: skip


class ResultsFileError(ValueError):
    """The results file cannot be used; the message names the file and the line."""


@dataclass(frozen=True)
class ResultsFile:
    """The lines of a results file in file order, with where each came from (1-based line numbers)."""

    path: Path
    lines: list[dict[str, Any]]
    numbers: list[int]


def read_lines(path: Path, fields: tuple[str, ...] | None = None) -> ResultsFile:
    """Every line of ``path``; refuses lines of an older (or unknown) format, naming them.

    An older line is never read with defaults: its fields meant other things (S8.4).
    A missing file is an empty file: nothing was recorded yet. ``fields``: keep only these
    fields of each line (absent ones None), for a reader that counts a few of 63: each whole
    line is dropped as soon as it is read, and every later pass walks small dicts (measured
    on 100,000 lines: each pass over them takes half the time).
    """
    lines: list[dict[str, Any]] = []
    numbers: list[int] = []
    older: list[int] = []
    try:
        handle = open_input(path, RESULTS_LIMIT)  # a regular file only (issue 31 J: /dev/zero hung)
    except FileNotFoundError:
        return ResultsFile(path, [], [])
    from orjson import loads  # four times the json module's speed on 100,000 lines (README: dependencies)

    from pytest_assistant_eval.tables.digest import no_gc

    with handle, no_gc():
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                line = loads(raw)
            except ValueError as exc:
                raise ResultsFileError(f"{path}:{number}: not a JSON line ({getattr(exc, 'msg', exc)})") from None
            if not isinstance(line, dict):
                raise ResultsFileError(f"{path}:{number}: a line must be a JSON object")
            if line.get("line_format") != LINE_FORMAT:
                older.append(number)
                continue
            if fields is not None:
                get = line.get
                line = {f: get(f) for f in fields}
            lines.append(line)
            numbers.append(number)
    if older:
        shown = ", ".join(map(str, older[:8])) + (f" and {len(older) - 8} more" if len(older) > 8 else "")
        raise ResultsFileError(f"{path}: {len(older)} line(s) of another line format than {LINE_FORMAT} "
                               f"(lines {shown}); this version reads only line format {LINE_FORMAT}")
    return ResultsFile(path, lines, numbers)


def line_key(line: Mapping[str, Any]) -> tuple[Any, ...]:
    """What makes two lines grades of the same cell: the model (by route and name) and the cell.

    The set and key versions are part of it, so a cell asked again under a new key is a new
    cell and its old grade stays the latest of the old version (never mixed, S9.1).
    """
    return (line["route"], line["model_name"], line["cell"], line["set_version"], line["key_version"])


def latest(lines: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The latest line of each cell, in the order the cells first appear.

    Latest means last in the file: the file is append-only, so file order is the order grades
    were given (a clock can go back; an append cannot).
    """
    by_key: dict[tuple[Any, ...], dict[str, Any]] = {}
    for line in lines:
        key = line_key(line)
        if key in by_key:
            del by_key[key]  # re-insert: the cell moves to where its latest grade is
        by_key[key] = line
    return list(by_key.values())


def comparable_versions(lines: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], int]:
    """Lines per (set_version, key_version): rates are only ever taken within one of these."""
    counts: dict[tuple[str, str], int] = {}
    for line in lines:
        key = (str(line["set_version"]), str(line["key_version"]))
        counts[key] = counts.get(key, 0) + 1
    return counts


def append_lines(path: Path, lines: Iterable[Mapping[str, Any]]) -> int:
    """Append ``lines`` (each with exactly ``FIELDS``) under a lock, flushed to disk; returns how many.

    Appending one buffer in one write under a cross-process lock keeps two recorders from
    interleaving; a crash can at worst leave a last partial line, which the next append
    completes on its own line (``read_lines`` then names it as not JSON).
    """
    rows = []
    for line in lines:
        extra = set(line) - set(FIELDS)
        missing = [f for f in FIELDS if f not in line]
        if extra or missing:
            raise ValueError(f"a results line must have exactly the format-{LINE_FORMAT} fields; "
                             f"missing {missing}, unknown {sorted(extra)}")
        rows.append(json.dumps({f: line[f] for f in FIELDS}, ensure_ascii=False, separators=(",", ":"),
                               allow_nan=False))
    if not rows:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        prefix = ""
        if path.exists() and path.stat().st_size:
            with open(path, "rb") as handle:
                handle.seek(-1, os.SEEK_END)
                prefix = "" if handle.read(1) == b"\n" else "\n"
        data = (prefix + "\n".join(rows) + "\n").encode("utf-8")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            os.fsync(fd)
        finally:
            os.close(fd)
    return len(rows)
