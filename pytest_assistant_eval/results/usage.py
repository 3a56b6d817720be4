"""Requests and tokens per provider, labelled with the suite ("(calibration)", S4.16), kept in ``run.json``.

Every process of a run (the controller or each xdist worker) adds what its providers spent
to the latest run entry's ``usage`` when it closes, under the folder's lock; the plugin's
terminal summary reads the sum back. Counts only ever add up: nothing here resets them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from filelock import FileLock

from pytest_assistant_eval.records import RUN_FORMAT, RecordError, read_json, write_json_atomic

COUNTS = ("requests", "input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens")


def add_usage(run_json: Path, usage: dict[str, dict[str, Any]]) -> None:
    """Add one process's usage per provider to the latest run entry of ``run_json``."""

    def merge(entry: dict[str, Any]) -> None:
        total = entry.setdefault("usage", {})
        for name, counts in usage.items():
            mine = total.setdefault(name, {"label": counts.get("label", f"{name} (calibration)"),
                                           **{k: 0 for k in COUNTS}})
            for key in COUNTS:
                mine[key] = (mine.get(key) or 0) + (counts.get(key) or 0)

    update_run_entry(run_json, merge)


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
    """Apply ``change(data)`` to the whole of ``run_json`` under the folder's lock."""
    if not run_json.exists():
        return
    with FileLock(str(run_json.parent / ".run.lock")):
        try:
            data = read_run(run_json)
        except RecordError:
            return  # never rewrite a run.json we cannot read
        change(data)
        write_json_atomic(run_json, data)


def update_run_entry(run_json: Path, change: Any) -> None:
    """Apply ``change(entry)`` to the latest run entry of ``run_json`` under the folder's lock."""
    update_run(run_json, lambda data: change(data["runs"][-1]))


def read_usage(run_json: Path) -> dict[str, dict[str, Any]]:
    """The latest run entry's usage per provider (empty when none was spent)."""
    try:
        data = read_run(run_json)
    except RecordError:
        return {}
    return dict(data["runs"][-1].get("usage") or {})


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
