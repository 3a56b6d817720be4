"""Requests and tokens per provider, labelled with the suite ("(calibration)", S4.16), kept in ``run.json``.

Every process of a run (the controller or each xdist worker) counts what its providers spent
as it grows (issue 31 G: a kill loses no count) and adds it to its run entry's ``usage`` when
it closes; the plugin's terminal summary reads the sum back. Counts only ever add up.

Why a journal (issue 32, speed): rewriting run.json under its lock before every request (read,
indented dump of the whole file, fsync of file and folder) was the largest part of the
harness's CPU per request. The records and checkpoints cannot stand in for it: run.json
counts per *run*, failed attempts included, while a record spans every run that asked its
cell and a checkpoint goes when its record is written. So each process appends its totals to
its own journal, ``RESULTS/.usage/<run>.<pid>.<token>.jsonl`` (``<run>``: the index of its run
entry in ``runs``): one small JSON line per change, ``{"format": JOURNAL_FORMAT, "usage":
{...}}``, each holding the process's whole totals so far (not a delta), written with one
``O_APPEND`` write and, on routes that cost quota or money, one fdatasync. A kill leaves the
journal whole or with one torn last line; the line before it holds every count up to then.

When the process closes, its last line is *folded* into its run entry under the folder's lock:
the counts are added and the journal's name goes into the entry's ``usage_folded`` in the same
atomic write, then the journal is deleted. ``read_usage`` adds the last line of every journal
of the entry whose name ``usage_folded`` does not list, so a kill between the write and the
delete counts nothing twice. A killed process's journal is folded by the next run's
``prepare`` (``fold_journals``), before that run adds its own entry.
"""

from __future__ import annotations

import json
import os
import secrets as _random
from pathlib import Path
from typing import Any

from filelock import FileLock

from pytest_assistant_eval.records import RUN_FORMAT, RecordError, fsync_dir, read_json, write_all, write_json_atomic

COUNTS = ("requests", "input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens", "cache_write_tokens")
JOURNAL_DIR = ".usage"
JOURNAL_FORMAT = "assistant-eval.usage-journal/1"


def _merge(total: dict[str, Any], usage: dict[str, dict[str, Any]]) -> None:
    """Add ``usage`` (per provider key) into ``total`` in place."""
    for name, counts in usage.items():
        mine = total.setdefault(name, {"label": counts.get("label", f"{name} (calibration)"),
                                       **{k: 0 for k in COUNTS}})
        for key in COUNTS:
            mine[key] = (mine.get(key) or 0) + (counts.get(key) or 0)


def add_usage(run_json: Path, usage: dict[str, dict[str, Any]]) -> None:
    """Add one process's usage per provider to the latest run entry of ``run_json``."""
    update_run_entry(run_json, lambda entry: _merge(entry.setdefault("usage", {}), usage))


class UsageJournal:
    """One process's usage for one results folder, appended as it grows (the module docstring).

    ``add`` takes what was spent since the last call; nothing is written while the folder has no
    run.json (a session whose folders were never prepared counts nothing there, as before).
    """

    def __init__(self, run_json: Path, *, durable: bool = True) -> None:
        self.run_json = run_json
        self.durable = durable
        self.path: Path | None = None
        self.totals: dict[str, dict[str, Any]] = {}
        self._fd: int | None = None

    def add(self, delta: dict[str, dict[str, Any]]) -> None:
        if not delta:
            return
        if self._fd is None and not self._open():
            return
        _merge(self.totals, delta)
        raw = (json.dumps({"format": JOURNAL_FORMAT, "usage": self.totals}, ensure_ascii=False,
                          separators=(",", ":")) + "\n").encode("utf-8")
        assert self._fd is not None
        write_all(self._fd, raw)
        if self.durable:
            os.fdatasync(self._fd) if hasattr(os, "fdatasync") else os.fsync(self._fd)

    def _open(self) -> bool:
        try:
            runs = read_run(self.run_json)["runs"]
        except (RecordError, OSError):
            return False
        folder = self.run_json.parent / JOURNAL_DIR
        made = not folder.is_dir()
        folder.mkdir(exist_ok=True)
        if made:
            fsync_dir(self.run_json.parent)
        self.path = folder / f"{len(runs) - 1}.{os.getpid()}.{_random.token_hex(4)}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        fsync_dir(folder)  # the journal's name survives a power cut too, once
        return True

    def fold(self) -> None:
        """Add the totals to the run entry (naming this journal there) and delete the journal."""
        if self._fd is None or self.path is None:
            return
        os.close(self._fd)
        self._fd = None
        fold_journal(self.run_json, self.path)
        self.path, self.totals = None, {}


def _journal_name(path: Path) -> tuple[int, str] | None:
    """(run entry index, name) of a journal file, None for anything else."""
    head = path.name.split(".", 1)[0]
    return (int(head), path.name) if path.suffix == ".jsonl" and head.isdigit() else None


def journal_totals(path: Path) -> dict[str, dict[str, Any]]:
    """The totals a journal's last whole line holds (a torn last line dropped); {} when none."""
    try:
        lines = path.read_bytes().split(b"\n")
    except OSError:
        return {}
    for raw in reversed(lines):
        try:
            line = json.loads(raw)
        except ValueError:
            continue
        if isinstance(line, dict) and line.get("format") == JOURNAL_FORMAT and isinstance(line.get("usage"), dict):
            return line["usage"]
    return {}


def _fold_into(data: dict[str, Any], index: int, path: Path) -> bool:
    """Add ``path``'s totals to ``runs[index]`` of ``data`` unless it is folded already."""
    entry = data["runs"][index]
    folded = entry.setdefault("usage_folded", [])
    if path.name in folded:
        return False
    _merge(entry.setdefault("usage", {}), journal_totals(path))
    folded.append(path.name)
    return True


def fold_journal(run_json: Path, path: Path) -> None:
    """Fold one journal into its run entry (one atomic write under the lock), then delete it. A
    journal whose run.json cannot be read, or whose entry is not in it, is left as it is."""
    named = _journal_name(path)
    counted = []

    def change(data: dict[str, Any]) -> bool:
        if named is None or not 0 <= named[0] < len(data["runs"]):
            return False
        counted.append(True)  # folded now, or by an earlier fold that was killed before the delete
        return _fold_into(data, named[0], path)

    update_run(run_json, change)
    if not counted:
        return
    path.unlink(missing_ok=True)
    try:
        path.parent.rmdir()  # the last one out leaves no folder
    except OSError:
        pass


def fold_journals(run_json: Path) -> None:
    """Fold every journal left in the folder (a killed process's) into its run entry; called by
    the controller before a run adds its entry, while no other process writes the folder."""
    folder = run_json.parent / JOURNAL_DIR
    if not folder.is_dir():
        return
    for path in sorted(folder.glob("*.jsonl")):
        fold_journal(run_json, path)


def read_run(run_json: Path) -> dict[str, Any]:
    """A run.json of this harness, of any suite (each suite names its own format; all share
    ``identity`` and ``runs``); ``RecordError`` for anything else."""
    data = read_json(run_json)
    if not (isinstance(data, dict) and str(data.get("format", "")).startswith("assistant-eval.")
            and isinstance(data.get("runs"), list) and data["runs"]):
        found = data.get("format") if isinstance(data, dict) else None
        raise RecordError(f"{run_json}: format {found!r}, expected a run.json such as {RUN_FORMAT!r}")
    return data


def update_run(run_json: Path, change: Any) -> None:
    """Apply ``change(data)`` to the whole of ``run_json`` under the folder's lock (not written
    when ``change`` returns False)."""
    if not run_json.exists():
        return
    with FileLock(str(run_json.parent / ".run.lock")):
        try:
            data = read_run(run_json)
        except RecordError:
            return  # never rewrite a run.json we cannot read
        if change(data) is not False:
            write_json_atomic(run_json, data)


def update_run_entry(run_json: Path, change: Any) -> None:
    """Apply ``change(entry)`` to the latest run entry of ``run_json`` under the folder's lock."""
    update_run(run_json, lambda data: change(data["runs"][-1]))


def read_usage(run_json: Path) -> dict[str, dict[str, Any]]:
    """The latest run entry's usage per provider (empty when none was spent): what is folded into
    it and every journal of it not folded yet, each counted once."""
    if not run_json.exists():
        return {}
    with FileLock(str(run_json.parent / ".run.lock")):  # no fold between reading run.json and the journals
        try:
            data = read_run(run_json)
        except RecordError:
            return {}
        index = len(data["runs"]) - 1
        entry = data["runs"][index]
        usage = json.loads(json.dumps(entry.get("usage") or {}))
        folded = set(entry.get("usage_folded") or ())
        folder = run_json.parent / JOURNAL_DIR
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
            named = _journal_name(path)
            if named is not None and named[0] == index and named[1] not in folded:
                _merge(usage, journal_totals(path))
    return usage


def usage_lines(usage: dict[str, dict[str, Any]]) -> list[str]:
    return [f"usage {counts['label']}: {counts['requests']} request(s), {counts['input_tokens']} input and "
            f"{counts['output_tokens']} output token(s)" + (f" ({counts['reasoning_tokens']} reasoning)"
                                                          if counts.get("reasoning_tokens") else "")
            for _, counts in sorted(usage.items())]


def add_rate_limits(run_json: Path, limits: dict[str, dict[str, Any]]) -> None:
    """Record the limits the run learned from its provider (per dimension: limit and window in seconds).

    What a later run learns replaces what an earlier one did in its own entry; each run entry
    keeps its own, so a provider that changed its limits shows it by date.
    """
    if limits:
        update_run_entry(run_json, lambda entry: entry.__setitem__("rate_limits", limits))
