"""Checkpoints of a cell's conversation (S4.8): written before every request.

``RESULTS/partial/<cell>.json`` (mode 0600) holds everything a later ``--resume`` needs
to send the same request again: the loop's state, the world's changed tables and service
log, the pending request's hash, the failed attempts, and the requests counted per day. A
checkpoint is continued only when it is of this format, model, world and level setting and
gives the same request byte for byte; it is never filled with defaults.

Format 2 is a journal (issue 15): its first line is a whole checkpoint, written atomically
(temporary file, rename); each later line, appended before a request, holds only what
changed since the line before it (messages, transcript entries and service calls added,
fields set). Rewriting and fsyncing the whole conversation before every request cost more
than the rest of the harness's work per request. A line is appended with one ``write`` and,
on routes whose requests cost quota or money, one ``fsync``; a killed process leaves a
whole journal or one torn last line, which the reader drops: a torn line was never
followed by its request (it is written before the request is sent), so the checkpoint
before it is the one to continue, exactly as format 1's atomic rename gave. Format 1 (one
whole JSON object) is still read and continued; the next write makes it a format 2 journal.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_assistant_eval.secret import Secrets
from pytest_assistant_eval.redact import KEY_MARK, redact_keys, redact_keys_each  # noqa: F401 - KEY_MARK re-exported
from pytest_assistant_eval.records import dumps, redact, write_all, write_text_atomic

CHECKPOINT_FORMAT = "assistant-eval.checkpoint/2"
#: Formats a resume continues: format 1 is the same whole checkpoint, without a journal.
READABLE_FORMATS = (CHECKPOINT_FORMAT, "assistant-eval.checkpoint/1")
#: Past this many lines the next write starts the journal again from a whole checkpoint.
MAX_JOURNAL_LINES = 256
#: Fields whose dictionaries are compared key by key (each key a list that only grows, mostly).
NESTED = ("state", "world_state")

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


#: The conversation and the world as the loop holds them. They are written whole (only the run's
#: own secrets are replaced): redacting a path or a key-shaped string in an answer changed the
#: request a resume sends, so the cell could never continue (issue 23). The file is 0600 and
#: local, and goes when the record (redacted as every record) is written.
WHOLE = ("state", "world_state", "service_log", "requests_log", "pending")


def _secrets_only(text: str, secrets: Secrets | None) -> str:
    """Only the run's own keys replaced, in every form (weak keys never searched for: see Secrets)."""
    return redact_keys(text, secrets)


def _redact_field(key: str, text: str, secrets: Secrets | None) -> str:
    """A field's JSON text as a checkpoint keeps it: the conversation whole, the rest redacted."""
    return _secrets_only(text, secrets) if key in WHOLE else redact(text, secrets or ())


def checkpoint_text(data: dict[str, Any], secrets: Secrets | None = None) -> str:
    """One whole checkpoint as one JSON line (the journal's first); the conversation's fields scanned
    for the run's keys in one pass, as a journal line's are."""
    texts = {key: dumps(value, compact=True)[:-1] for key, value in {**data, "format": CHECKPOINT_FORMAT}.items()}
    whole = [key for key in texts if key in WHOLE]
    texts.update(zip(whole, redact_keys_each([texts[key] for key in whole], secrets)))
    fields = [f"{json.dumps(key, ensure_ascii=False)}:{text if key in WHOLE else redact(text, secrets or ())}"
              for key, text in texts.items()]
    return "{" + ",".join(fields) + "}\n"


def write_checkpoint(path: Path, data: dict[str, Any], *, durable: bool = True, secrets: Secrets | None = None) -> None:
    """Write a whole checkpoint atomically (temp file, rename): the old or the new one survives.

    ``durable`` also fsyncs the file, so the checkpoint survives a power cut too. The
    runner asks for it on every route whose requests cost quota or money; the built-in
    ``scripted`` assistants' requests cost nothing. The folder is not fsynced per request.
    ``secrets``: the run's keys, redacted like every other writer's (an echoed header, a tool
    argument holding the key); without them only key-shaped strings would go.
    """
    _write_whole(path, data, durable, secrets)


def _write_whole(path: Path, data: dict[str, Any], durable: bool, secrets: Secrets | None = None) -> str:
    text = checkpoint_text(data, secrets)
    write_text_atomic(path, text, mode=0o600, sync_dir=False, sync=durable)
    return text


def _journal_line(n: int, changes: dict[str, list[Any]], secrets: Secrets | None) -> str:
    """One journal line, each change redacted as the field it changes (``checkpoint_text``): the
    redacted texts are joined as they are (each change serialised once, not parsed and dumped again).
    The conversation's changes have only the run's keys replaced, all scanned in one pass."""
    texts = {kind: [dumps(entry, compact=True)[:-1] for entry in entries] for kind, entries in changes.items()}
    whole = [(kind, at) for kind, entries in changes.items() for at, entry in enumerate(entries) if entry[0][0] in WHOLE]
    for (kind, at), text in zip(whole, redact_keys_each([texts[kind][at] for kind, at in whole], secrets)):
        texts[kind][at] = text
    for kind, entries in changes.items():
        for at, entry in enumerate(entries):
            if entry[0][0] not in WHOLE:
                texts[kind][at] = redact(texts[kind][at], secrets or ())
    kinds = ",".join(f"{json.dumps(kind)}:[" + ",".join(texts[kind]) + "]" for kind in changes)
    return f'{{"journal":{n},{kinds}}}\n'


class CheckpointJournal:
    """Writes one cell's checkpoint: a whole one first, then only what changed, line by line.

    ``written`` mirrors the file as a reader will fold it (redacted, as JSON gives it back),
    so a field is compared with what was written, not with what the loop holds now.
    """

    def __init__(self, path: Path, *, durable: bool = True, secrets: Secrets | None = None) -> None:
        self.path = path
        self.durable = durable
        self.secrets = secrets or Secrets()
        self.written: dict[str, Any] | None = None
        self.lines = 0

    def restart(self) -> None:
        """The next write is a whole checkpoint (after a resume, a stop, or to drop a torn tail)."""
        self.written = None

    def write(self, data: dict[str, Any]) -> None:
        if self.written is None or self.lines >= MAX_JOURNAL_LINES or not self.path.exists():
            self.written = json.loads(_write_whole(self.path, data, self.durable, self.secrets))
            self.lines = 1
            return
        changes = changes_between(self.written, data)
        if not changes["set"] and not changes["add"]:
            return
        line = _journal_line(self.lines, changes, self.secrets)  # one line, newline-ended
        parsed = json.loads(line)  # what a reader gets back; a line that would not parse is never written
        try:
            self._append(line.encode("utf-8"))
        except BaseException:
            self.written = None  # whatever reached the file, the next write starts whole
            raise
        apply_changes(self.written, parsed)
        self.lines += 1

    def _append(self, raw: bytes) -> None:
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            write_all(fd, raw)
            if self.durable:
                os.fdatasync(fd) if hasattr(os, "fdatasync") else os.fsync(fd)
        finally:
            os.close(fd)


def _grown(old: Any, new: Any) -> bool:
    return isinstance(old, list) and isinstance(new, list) and len(new) > len(old) and new[:len(old)] == old


def changes_between(old: dict[str, Any], new: dict[str, Any]) -> dict[str, list[Any]]:
    """``set``: ``[path, value]`` for every field that differs; ``add``: ``[path, items]`` for lists
    that only grew. Paths are one key, or two for the fields of ``state`` and ``world_state``."""
    sets: list[Any] = []
    adds: list[Any] = []
    for key, value in new.items():
        if key == "format":
            continue
        before = old.get(key, _MISSING)
        if before == value:
            continue
        if key in NESTED and isinstance(value, dict) and isinstance(before, dict):
            for sub, item in value.items():
                was = before.get(sub, _MISSING)
                if was == item:
                    continue
                if _grown(was, item):
                    adds.append([[key, sub], item[len(was):]])
                else:
                    sets.append([[key, sub], item])
            sets.extend([[key, sub], _DELETE] for sub in before if sub not in value)
        elif _grown(before, value):
            adds.append([[key], value[len(before):]])
        else:
            sets.append([[key], value])
    sets.extend([[key], _DELETE] for key in old if key not in new and key != "format")
    return {"set": sets, "add": adds}


_MISSING = object()
#: A field that is gone: written as this marker (no checkpoint field holds it as a value).
_DELETE = {"$deleted": True}


def apply_changes(data: dict[str, Any], line: dict[str, Any]) -> None:
    """Fold one journal line into the checkpoint it follows."""
    for path, value in line["set"]:
        target = data
        for key in path[:-1]:
            target = target.setdefault(key, {})
        if value == _DELETE:
            target.pop(path[-1], None)
        else:
            target[path[-1]] = value
    for path, items in line["add"]:
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = [*target[path[-1]], *items]


def load_checkpoint(path: Path) -> dict[str, Any]:
    """The checkpoint a file holds, its journal folded in; ``ValueError`` when it cannot be read.

    A last line that does not parse is a write a killed process never finished: dropped.
    Any other damage (a line in the middle, a line out of order) makes the file unreadable.
    """
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    if lines and lines[-1].strip() == b"":
        lines.pop()
    if not lines:
        raise ValueError("empty")
    data = json.loads(lines[0])
    if not isinstance(data, dict):
        raise ValueError("not an object")
    for n, text in enumerate(lines[1:], start=1):
        try:
            line = json.loads(text)
        except ValueError:
            if n == len(lines) - 1:
                break  # torn by a kill
            raise
        if not isinstance(line, dict) or line.get("journal") != n:
            raise ValueError(f"journal line {n} out of order")
        try:
            apply_changes(data, line)
        except (KeyError, TypeError, IndexError) as exc:
            raise ValueError(f"journal line {n}: {exc}") from None
    return data


def read_checkpoint(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The checkpoint's data, or None and why it cannot be continued."""
    try:
        data = load_checkpoint(path)
    except (OSError, ValueError, UnicodeDecodeError):
        return None, RESTART_REASONS["unreadable"]
    if data.get("format") not in READABLE_FORMATS:
        return None, RESTART_REASONS["format"]
    missing = [k for k in REQUIRED if k not in data]
    if missing:
        return None, RESTART_REASONS["format"]
    return data, None


def counted_requests(path: Path) -> dict[str, int]:
    """The requests a checkpoint counted per day, read however little else of it can be trusted.

    A cell started again keeps them: they were sent (or may have been), and a budget or a
    record that forgot them would say the cell cost less than it did.
    """
    try:
        by_day = load_checkpoint(path).get("requests_by_day")
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    if not isinstance(by_day, dict):
        return {}
    return {str(day): n for day, n in by_day.items() if isinstance(n, int) and not isinstance(n, bool) and n > 0}


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
