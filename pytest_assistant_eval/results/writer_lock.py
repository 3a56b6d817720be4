"""One writer per results folder (S9.2, issue 23): ``RESULTS/.writer.lock``.

Two runs on one ``--out`` sent the same requests twice and lost records to each other, and
``grade-ai`` graded a folder whose run was still writing it. So a run holds an exclusive file
lock on each of its results folders for its whole life (the xdist controller holds it; its
workers run under it and check that the holder is their controller), a second run is refused
at once naming the holder's pid and start time, and every reader that must see a finished
folder (``grade-ai``, ``summary``, ``report``) refuses one whose run is live.

The lock is a ``filelock.FileLock`` (an OS lock: it goes with the process, so a killed run
leaves no stale lock). Who holds it is written beside it in ``RESULTS/.writer.json`` (format
``assistant-eval.writer/1``: pid, host, start time and a token the workers compare); that
file is only read while the lock is taken, so one left by an earlier run says nothing.
This module never deletes or moves a file of the folder.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path

from filelock import FileLock, Timeout

from pytest_assistant_eval.records import write_json_atomic

__all__ = ["WRITER_LOCK", "WRITER_FILE", "WRITER_FORMAT", "Holder", "FolderInUse", "WriterLock", "live_holder",
           "refuse_live"]

WRITER_LOCK = ".writer.lock"
WRITER_FILE = ".writer.json"
WRITER_FORMAT = "assistant-eval.writer/1"
#: A run waits this long for the lock: a reader that checked it a moment ago lets go at once.
RUN_WAIT = 0.5


class FolderInUse(Exception):
    """A results folder is being written by a live run; the message names it and its holder."""


@dataclass(frozen=True)
class Holder:
    """Who holds a results folder's writer lock."""

    pid: int
    host: str
    started_at: str
    token: str

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, started {self.started_at}"


def _read_holder(folder: Path) -> Holder | None:
    try:
        data = json.loads((folder / WRITER_FILE).read_text(encoding="utf-8"))
        if data.get("format") != WRITER_FORMAT:
            return None
        return Holder(int(data["pid"]), str(data["host"]), str(data["started_at"]), str(data["token"]))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _holder_words(folder: Path) -> str:
    holder = _read_holder(folder)
    return holder.describe() if holder is not None else "its pid is not written yet"


class WriterLock:
    """The writer lock of one results folder, held from ``acquire`` to ``release``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = FileLock(str(folder / WRITER_LOCK))
        self.holder: Holder | None = None

    def acquire(self, token: str | None = None) -> Holder:
        """Take the lock and say who holds it; ``FolderInUse`` at once when another run has it."""
        self.folder.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire(timeout=RUN_WAIT)
        except Timeout:
            raise FolderInUse(f"{self.folder} is being written by another run ({_holder_words(self.folder)}); "
                              "wait for it to finish, or choose another --out") from None
        holder = Holder(os.getpid(), socket.gethostname(), datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        token or uuid.uuid4().hex)
        try:
            write_json_atomic(self.folder / WRITER_FILE, {"format": WRITER_FORMAT, **asdict(holder)})
        except BaseException:
            self._lock.release()
            raise
        self.holder = holder
        return holder

    def release(self) -> None:
        if self._lock.is_locked:
            self._lock.release(force=True)
        self.holder = None


def live_holder(folder: Path) -> Holder | str | None:
    """Who is writing ``folder`` now: its holder (or why it is not known), None when no run is live."""
    if not (folder / WRITER_LOCK).exists():
        return None
    probe = FileLock(str(folder / WRITER_LOCK))
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return _read_holder(folder) or "its pid is not written yet"
    probe.release(force=True)
    return None


def refuse_live(folder: Path, command: str, error: type[Exception] = FolderInUse) -> None:
    """Raise ``error`` when a run still writes ``folder``: a reader would see it half made."""
    holder = live_holder(folder)
    if holder is None:
        return
    who = holder.describe() if isinstance(holder, Holder) else holder
    raise error(f"the results folder {folder} is still being written by its run ({who}); "
                f"wait for the run to finish, then run {command} again")


def check_under(folder: Path, token: str) -> None:
    """An xdist worker's check: its controller (the holder of ``token``) holds the folder's lock."""
    holder = live_holder(folder)
    if not isinstance(holder, Holder) or holder.token != token:
        raise FolderInUse(f"{folder}: this worker's controller does not hold the folder's writer lock; "
                          "run the cells through one controller (assistant-eval run, or pytest -n N)")
