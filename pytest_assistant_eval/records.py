"""Files between stages: atomic writes, redaction and the format tags.

Every file the harness writes goes through ``write_json_atomic`` (temp file in the same
folder, fsync, rename, fsync of the folder), so a process killed at any instant leaves
either the old file or the new one, never half of one. Records are redacted before they
are written: no key, no absolute local path (one policy for every writer: ``redact.py``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import orjson

from pytest_assistant_eval.redact import redact
from pytest_assistant_eval.secret import Secrets

CELL_FORMAT = "assistant-eval.cell/1"
RUN_FORMAT = "assistant-eval.run/1"
SPENT_FORMAT = "assistant-eval.spent/1"
GRADING_FORMAT = "assistant-eval.grading/1"
GRADED_CELL_FORMAT = "assistant-eval.graded-cell/1"
USAGE_FORMAT = "assistant-eval.judge-usage/1"  # a grading's usage.json: the judge's requests and tokens

HARNESS_VERSION = "0.1.0"


class RecordError(Exception):
    """A file of another format, or one that does not parse; the message names the file."""


def dumps(data: Any, *, compact: bool = False) -> str:
    if compact:
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd``: one ``write`` in practice, a short write goes on where it stopped."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_bytes_atomic(path: Path, data: bytes, *, mode: int = 0o644, sync_dir: bool = True,
                       sync: bool = True) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same folder, fsync
    (unless ``sync`` is false), rename over the old file, fsync of the folder."""
    write_chunks_atomic(path, (data,), mode=mode, sync_dir=sync_dir, sync=sync)


def write_chunks_atomic(path: Path, chunks: Iterable[bytes], *, mode: int = 0o644, sync_dir: bool = True,
                        sync: bool = True) -> None:
    """``write_bytes_atomic`` of the chunks' bytes, written as they come (a large file is never one text)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            for data in chunks:
                handle.write(data)
            handle.flush()
            if sync:
                os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    if sync_dir and sync:
        fsync_dir(path.parent)


def write_text_atomic(path: Path, text: str, *, mode: int = 0o644, sync_dir: bool = True, sync: bool = True) -> None:
    write_bytes_atomic(path, text.encode("utf-8"), mode=mode, sync_dir=sync_dir, sync=sync)


def remove_stale_temporaries(folder: Path, ours: Callable[[Path], bool] | None = None, *, deep: bool = True) -> int:
    """Delete the temporary files a killed writer left behind (never a finished file); with
    ``ours``, only those it accepts (a results folder's owner may keep temporaries of their own)."""
    removed = 0
    if not folder.is_dir():
        return 0
    for path in folder.rglob(".*.tmp") if deep else folder.glob(".*.tmp"):
        if ours is not None and not ours(path):
            continue
        try:
            path.unlink()
            removed += 1
        except OSError:
            pass
    return removed


def set_aside(path: Path, folder: Path) -> Path:
    """Move an unreadable file into ``folder`` (kept, named with its time), never delete it.

    A record that does not parse cannot be trusted as finished, and deleting it would lose
    what the owner may want to inspect; the caller asks its cell again.
    """
    folder.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    target = folder / f"{path.stem}.{stamp}{path.suffix}"
    n = 1
    while target.exists():
        n += 1
        target = folder / f"{path.stem}.{stamp}-{n}{path.suffix}"
    os.replace(path, target)
    fsync_dir(folder)
    fsync_dir(path.parent)
    return target


def write_json_atomic(path: Path, data: Any, *, mode: int = 0o644, compact: bool = False,
                      redacted: bool = False, secrets: Secrets | tuple[str, ...] = (), sync_dir: bool = True,
                      sync: bool = True) -> None:
    """Write JSON atomically; ``redacted`` removes keys and local paths from the text first
    (``secrets``: the run's :class:`Secrets`; its weak keys are never searched for).

    Redacting the serialised text is equivalent to redacting every string (the patterns
    never match a quote or a backslash) and much faster than walking the structure.
    """
    text = dumps(data, compact=compact)
    if redacted:
        text = redact(text, secrets)
    write_text_atomic(path, text, mode=mode, sync_dir=sync_dir, sync=sync)


def fsync_dir(folder: Path) -> None:
    """Make a rename in ``folder`` durable (best effort: some file systems refuse)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


#: Every digit as 0, anything else as x: 19 zeros in a row are 19 digits, perhaps an integer beyond
#: 64 bits, which orjson reads as a float (json as an int). (A regular expression took 4 ms a record.)
_DIGITS_AS_ZERO = bytes(48 if 48 <= b <= 57 else 120 for b in range(256))
_LONG_DIGITS = b"0" * 19


def loads_exact(raw: bytes) -> Any:
    """``json.loads`` of UTF-8 bytes, the same values, at orjson's speed (issue 32: grade-ai parses
    100,000 records of 35 KB; json took a fifth of its time).

    orjson reads every JSON value as json does but two: an integer beyond 64 bits (a float to
    orjson) and what it refuses (NaN, Infinity, 1e400, a lone surrogate, a byte-order mark);
    those go to json itself, which also raises the error a caller reports.
    """
    if _LONG_DIGITS not in raw.translate(_DIGITS_AS_ZERO):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw.decode("utf-8"))


def read_json(path: Path, expected_format: str | None = None) -> Any:
    """Read a JSON file, refusing one that does not parse or is of another format."""
    try:
        data = loads_exact(path.read_bytes())
    except FileNotFoundError:
        raise RecordError(f"{path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not readable JSON ({exc})") from None
    if expected_format is not None:
        found = data.get("format") if isinstance(data, dict) else None
        if found != expected_format:
            raise RecordError(f"{path}: format {found!r}, expected {expected_format!r}")
    return data


def redact_data(data: Any, secrets: Secrets | tuple[str, ...] = ()) -> Any:
    """Redact every string of a JSON-able structure (keys included), by the one policy (``providers/redact``)."""
    secrets = Secrets.of(secrets)
    if isinstance(data, str):
        return redact(data, secrets)
    if isinstance(data, list):
        return [redact_data(item, secrets) for item in data]
    if isinstance(data, dict):
        return {redact(str(k), secrets): redact_data(v, secrets) for k, v in data.items()}
    return data


def git_commit(start: Path | None = None) -> str | None:
    """The commit the harness runs from, or None outside a git checkout."""
    here = start or Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", commit) else None


def now() -> str:
    """The time a record says it was made: UTC, to the second (every stage's records alike)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
