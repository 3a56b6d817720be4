"""Skipping cells by the owner (S4.13): ``--skip CELL --skip-reason "..."`` and ``--unskip CELL``.

``RESULTS/skips.json`` (format ``assistant-eval.skips/1``) holds the cells recorded as
"not applicable (skipped by owner)", each with its reason, the time and the attempts
its checkpoint had spent. The runner never asks a skipped cell; grading counts it as no
gap. Only a cell the folder can have may be skipped (an unknown id is refused with the
closest ids named), and never a finished or not-applicable one.

The attempts come from the cell's checkpoint, read by the reader the run hands in
(``load_checkpoint``: the conversation's journal): a results folder's shared files sit below
the conversation and never import it (issue 32).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from filelock import FileLock

from pytest_assistant_eval.console import shown
from pytest_assistant_eval.records import RecordError, read_json, write_json_atomic

SKIPS_FORMAT = "assistant-eval.skips/1"


class SkipError(Exception):
    """Why a cell cannot be skipped or taken back; nothing was changed."""


def skips_path(results: Path) -> Path:
    return results / "skips.json"


def read_skips(results: Path) -> dict[str, dict[str, Any]]:
    path = skips_path(results)
    if not path.exists():
        return {}
    return dict(read_json(path, SKIPS_FORMAT)["cells"])


def _write(results: Path, cells: dict[str, dict[str, Any]]) -> None:
    write_json_atomic(skips_path(results), {"format": SKIPS_FORMAT, "cells": cells}, redacted=True)


def _known(cell_id: str, planned: list[str]) -> None:
    if cell_id in planned:
        return
    close = difflib.get_close_matches(cell_id, planned, n=3, cutoff=0.5)
    hint = f"; the closest are: {', '.join(close)}" if close else ""
    raise SkipError(f"{cell_id}: this folder has no such cell{hint}")


def skip(results: Path, cell_id: str, reason: str, planned: list[str], *,
         load_checkpoint: Callable[[Path], dict[str, Any]]) -> str:
    """Record ``cell_id`` as skipped by the owner; ``load_checkpoint`` reads its checkpoint
    (``conversation.checkpoint.load_checkpoint``) for the attempts it had spent."""
    if not reason.strip():
        raise SkipError("--skip needs --skip-reason \"...\": say why the cell is skipped")
    _known(cell_id, planned)
    with FileLock(str(results / ".skips.lock")):
        record = results / "cells" / f"{cell_id}.json"
        if record.exists():
            try:
                status = read_json(record).get("status", "finished")
            except RecordError:
                status = "finished"
            what = "not applicable" if status == "na" else "finished"
            raise SkipError(f"{cell_id}: the cell is {what}; only a cell still to be asked can be skipped")
        cells = read_skips(results)
        attempts: list[Any] = []
        checkpoint = results / "partial" / f"{cell_id}.json"
        if checkpoint.exists():
            try:
                data = load_checkpoint(checkpoint)
                attempts = list(data.get("attempts") or [])
                spent = sum((data.get("requests_by_day") or {}).values())
            except (OSError, ValueError, AttributeError):
                spent = None
        else:
            spent = 0
        cells[cell_id] = {"reason": reason.strip(), "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                          "attempts": attempts, "requests_spent": spent}
        _write(results, cells)
    return f"{cell_id}: recorded as not applicable (skipped by owner): {shown(reason.strip())}"


def unskip(results: Path, cell_id: str, planned: list[str]) -> str:
    _known(cell_id, planned)
    with FileLock(str(results / ".skips.lock")):
        cells = read_skips(results)
        if cell_id in cells:
            del cells[cell_id]
            _write(results, cells)
            return f"{cell_id}: taken back; the next run asks it"
        record = results / "cells" / f"{cell_id}.json"
        if record.exists():
            data = read_json(record)
            if data.get("status") == "na" and data.get("na_reason", "").startswith("provider quota per request"):
                record.unlink()
                return f"{cell_id}: taken back from not applicable (provider quota per request); the next run asks it"
        raise SkipError(f"{cell_id}: the cell is not skipped")
