"""``RESULTS/spent.json``: what each cell's failed requests cost (S4.10).

One file per results folder, format ``assistant-eval.spent/1``, shared by every xdist
worker: each change is a read-modify-write under a file lock, written atomically. Per
cell it keeps a list of entries in the order they happened:

- a **stop** (``"event": "stop"``): the answer that stopped the cell (code, kind, HTTP
  status, the provider's code and message) and every failed attempt before it, with what
  became of the cell (``kept``, ``unsaved``, ``na``), the request's hash and corrected
  input-token estimate, and the run's pace and stream;
- the **attempts of a saved cell** (``"event": "saved"``): a cell whose record was written
  after its provider had retried keeps those failed attempts here too (and in the record).

Messages are redacted (no key, no local path) and cut to 300 characters; an error with no
provider answer (no connection, timeout, a stream cut short) has null status, code and
message. This module never holds a key: callers pass the secrets to remove.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from filelock import FileLock

from pytest_assistant_eval.redact import redact_clip
from pytest_assistant_eval.secret import Secrets
from pytest_assistant_eval.records import SPENT_FORMAT, RecordError, read_json, write_json_atomic

MESSAGE_LIMIT = 300
ATTEMPT_FIELDS = ("code", "kind", "status", "provider_code", "message", "seconds", "retry_after", "request_sha256", "at")


def spent_path(results: Path) -> Path:
    return results / "spent.json"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def clean_attempt(attempt: Any, secrets: Secrets | Iterable[str | None] = ()) -> dict[str, Any]:
    """One failed attempt as spent.json keeps it: the known fields, the message redacted and clipped."""
    data = attempt.to_dict() if hasattr(attempt, "to_dict") else dict(attempt)
    out = {name: data.get(name) for name in ATTEMPT_FIELDS}
    out.update({name: data[name] for name in ("role", "turn", "request") if name in data})
    out["message"] = redact_clip(out["message"], secrets, MESSAGE_LIMIT)
    return out


def stop_of(exc: Any, secrets: Secrets | Iterable[str | None] = ()) -> dict[str, Any]:
    """The stopping answer of a provider error (no answer: status, code and message are null)."""
    return {
        "code": getattr(exc, "code", None),
        "kind": getattr(exc, "kind", None),
        "status": getattr(exc, "status", None),
        "provider_code": getattr(exc, "provider_code", None),
        "message": redact_clip(getattr(exc, "provider_message", None), secrets, MESSAGE_LIMIT),
        "retry_after": getattr(exc, "retry_after", None),
        "quota": getattr(exc, "quota", None),
    }


def read_spent(results: Path) -> dict[str, Any]:
    path = spent_path(results)
    if not path.exists():
        return {"format": SPENT_FORMAT, "cells": {}}
    return read_json(path, SPENT_FORMAT)


def add_entry(results: Path, cell_id: str, entry: dict[str, Any], secrets: Secrets | Iterable[str | None] = ()) -> None:
    """Append one entry to a cell's list, under the folder's lock (workers share the file)."""
    results.mkdir(parents=True, exist_ok=True)
    entry = {"at": _now(), **entry}
    with FileLock(str(results / ".spent.lock")):
        try:
            data = read_spent(results)
        except RecordError:
            # Never reset a file we cannot read: keep it aside and start a new one beside it.
            broken = spent_path(results)
            broken.replace(broken.with_name(f"spent.unreadable-{datetime.now(timezone.utc):%Y%m%dT%H%M%S}.json"))
            data = {"format": SPENT_FORMAT, "cells": {}}
        data["cells"].setdefault(cell_id, []).append(entry)
        write_json_atomic(spent_path(results), data, redacted=True, secrets=Secrets.of(secrets))


def record_stop(results: Path, cell_id: str, exc: Any, attempts: list[Any], *, outcome: str, pace: float,
                stream: bool, turn: int | None, request: int | None, request_sha256: str | None,
                input_tokens_estimate: int | None, secrets: Secrets | Iterable[str | None] = (),
                note: str | None = None) -> dict[str, Any]:
    """Keep the answer that stopped a cell and every failed attempt before it."""
    secrets = Secrets.of(secrets)
    entry = {
        "event": "stop",
        "outcome": outcome,
        "stop": stop_of(exc, secrets),
        "attempts": [clean_attempt(a, secrets) for a in attempts],
        "turn": turn,
        "request": request,
        "request_sha256": request_sha256,
        "input_tokens_estimate": input_tokens_estimate,
        "pace": pace,
        "stream": stream,
        "note": note,
    }
    add_entry(results, cell_id, entry, secrets)
    return entry


def record_saved_attempts(results: Path, cell_id: str, attempts: list[dict[str, Any]], *, pace: float,
                          stream: bool, secrets: Secrets | Iterable[str | None] = ()) -> None:
    """A saved cell whose provider retried: its failed attempts, kept beside the record's own copy."""
    if not attempts:
        return
    secrets = Secrets.of(secrets)
    add_entry(results, cell_id, {"event": "saved", "outcome": "done",
                                 "attempts": [clean_attempt(a, secrets) for a in attempts],
                                 "pace": pace, "stream": stream}, secrets)
