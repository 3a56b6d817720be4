"""Checkpoints of a cell's conversation (S4.8): written before every request.

``RESULTS/partial/<cell>.json`` (mode 0600, written atomically) holds everything a
later ``--resume`` needs to send the same request again: the loop's state, the
world's changed tables and service log, the pending request's hash, the failed
attempts, and the requests counted per day. A checkpoint is continued only when it is
of this format, model, world and level setting and gives the same request byte for
byte; it is never filled with defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_assistant_eval.records import RecordError, read_json, write_json_atomic

CHECKPOINT_FORMAT = "assistant-eval.checkpoint/1"

RESTART_REASONS = {
    "format": "a checkpoint of another format",
    "instructions_or_tools": "the instructions or tools changed",
    "behaviour": "the assistant's behaviour changed since this checkpoint",
    "request": "the checkpoint no longer gives the same request",
    "model": "the checkpoint is of another model",
    "world": "the checkpoint is of another world",
    "unreadable": "the checkpoint could not be read",
}

REQUIRED = ("format", "cell", "model", "world", "setting_key", "state", "world_state", "service_log",
            "requests_log", "pending", "attempts", "stop", "requests_by_day", "resume", "seconds_so_far")


@dataclass(frozen=True)
class Checkpoint:
    path: Path
    data: dict[str, Any]


def checkpoint_path(results: Path, cell_id: str) -> Path:
    return results / "partial" / f"{cell_id}.json"


def write_checkpoint(path: Path, data: dict[str, Any], *, durable: bool = True) -> None:
    """Write atomically (temp file, rename): a killed process leaves the old or the new one.

    ``durable`` also fsyncs the file, so the checkpoint survives a power cut too. The
    runner asks for it on every route whose requests cost quota or money; the built-in
    ``scripted`` assistants' requests cost nothing, and a disk flush per request would
    be most of their run time. The folder is not fsynced per request.
    """
    write_json_atomic(path, data, mode=0o600, compact=True, redacted=True, sync_dir=False, sync=durable)


def read_checkpoint(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The checkpoint's data, or None and why it cannot be continued."""
    try:
        data = read_json(path)
    except RecordError:
        return None, RESTART_REASONS["unreadable"]
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        return None, RESTART_REASONS["format"]
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        return None, RESTART_REASONS["format"]
    return data, None


def setting_reason(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why a checkpoint of setting ``old`` cannot continue under ``new`` (S4.8's words)."""
    if old.get("behaviour") != new.get("behaviour"):
        return RESTART_REASONS["behaviour"]
    if old.get("system_hash") != new.get("system_hash") or old.get("tools_hash") != new.get("tools_hash"):
        return RESTART_REASONS["instructions_or_tools"]
    changed = [k for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
    if changed:
        names = {"context_window": "window", "history": "history policy"}
        return "the level setting changed: " + ", ".join(names.get(k, k) for k in changed)
    return None


def changed_tables(start: dict[str, list[dict[str, Any]]], now: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Only the tables that differ from the start state (a cell changes few of them)."""
    return {table: rows for table, rows in now.items() if start.get(table) != rows}
