"""The shared request ledger: one JSON file per results folder, guarded by a file lock (S4.6, S4.14).

Every worker of a run (xdist or not, one process or several) reads and writes the same file
under ``filelock.FileLock``; a write goes to a temporary file in the same folder, is fsynced
and then replaces the ledger (``os.replace``), so a crash at any instant leaves either the old
or the new ledger, never a torn one. Entries are keyed by route (preset and address):

``{"format": 1, "routes": {ROUTE: {"requests_by_day": {DATE: n}, "rate_limited_by_day": {DATE: n},
"learned_interval": s, "last_start": t, "not_before": t, "estimate_ratio": r,
"booked": {DIMENSION: units booked ever}, "limits": {DIMENSION: LIMIT_STATE}}}}``

where a dimension is ``requests``, ``tokens``, ``input_tokens`` or ``output_tokens`` and its state
is what :mod:`.pacing` keeps of the provider's own statements (see :func:`new_limit_state`).
Fields were only ever added, so older ledgers of format 1 read fine.

A ledger that cannot be read is an error, never silently replaced: forgetting the requests of
the day would overspend the budget.
"""

from __future__ import annotations

from pytest_assistant_eval.records import fsync_dir, write_bytes_atomic

import json
import math
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

LEDGER_FORMAT = 1


class LedgerError(RuntimeError):
    pass


def new_route_entry() -> dict[str, Any]:
    return {"requests_by_day": {}, "rate_limited_by_day": {}, "learned_interval": 0.0, "last_start": None,
            "not_before": None, "estimate_ratio": None, "limits": {}, "booked": {}}


def new_limit_state() -> dict[str, Any]:
    """One dimension's limit as learned: the stated limit, what is left until ``reset_at``.

    ``rolled_at`` is the last reset passed and ``carried`` what was over-booked before
    it; ``max_reset``, the ``reset * limit / used`` figures (``min_bucket``, ``max_bucket``, how many)
    and ``window`` (when stated) give the window's length.
    """
    return {"limit": None, "remaining": 0.0, "reset_at": None, "rolled_at": None, "carried": 0.0,
            "max_reset": 0.0, "min_bucket": None, "max_bucket": None, "buckets": 0, "window": None}


class Ledger:
    """A JSON ledger shared by processes; use :meth:`transaction` for every read-modify-write."""

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 120.0) -> None:
        self.path = Path(path)
        self.lock = FileLock(str(self.path) + ".lock", timeout=timeout)

    def _read(self) -> dict[str, Any]:
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {"format": LEDGER_FORMAT, "routes": {}}
        try:
            # Infinity or NaN, as a run before holds were bounded could write them, is read as no time.
            data = json.loads(raw, parse_constant=lambda name: None)
        except ValueError as exc:
            raise LedgerError(f"the request ledger {self.path.name} cannot be read: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != LEDGER_FORMAT:
            raise LedgerError(f"the request ledger {self.path.name} is of another format")
        data.setdefault("routes", {})
        return data

    def _write(self, data: dict[str, Any]) -> None:
        # The folder's fsync (the rename's durability) waits until the lock is released.
        write_bytes_atomic(self.path, json.dumps(_finite(data), indent=1, sort_keys=True, allow_nan=False)
                           .encode("utf-8"), sync_dir=False)

    @contextmanager
    def transaction(self) -> Iterator[dict[str, Any]]:
        """The whole ledger under the lock; written back atomically when the block ends without error.

        Other workers wait for the read, the write of the (fsynced) new ledger and its rename;
        the folder is fsynced after the lock is released (issue 15): a rename is atomic either
        way, and a power cut before that fsync leaves the old ledger, whole.
        """
        with self.lock:
            data = self._read()
            yield data
            self._write(data)
        fsync_dir(self.path.parent)

    def read(self) -> dict[str, Any]:
        with self.lock:
            return self._read()

    @staticmethod
    def entry(data: dict[str, Any], route: str) -> dict[str, Any]:
        entry = data["routes"].setdefault(route, new_route_entry())
        for key, value in new_route_entry().items():
            entry.setdefault(key, value)
        return entry

    def requests_on(self, route: str, day: str) -> int:
        return int(self.read()["routes"].get(route, {}).get("requests_by_day", {}).get(day, 0))

    def requests_by_day(self, route: str) -> dict[str, int]:
        return dict(self.read()["routes"].get(route, {}).get("requests_by_day", {}))


def _finite(value: Any) -> Any:
    """``value`` with every number that is not finite as ``None``: the ledger never stores one (issue 23)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def read_routes(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Every route's entry, for those who only look (the progress line): ``{}`` when unreadable.

    Read without the lock: the file is only ever replaced whole, so a reader sees the old or
    the new ledger; a progress line must never wait for, or fail on, the workers' ledger.
    """
    try:
        data = json.loads(Path(path).read_bytes(), parse_constant=lambda name: None)
    except (OSError, ValueError):
        return {}
    routes = data.get("routes") if isinstance(data, dict) else None
    return routes if isinstance(routes, dict) else {}
