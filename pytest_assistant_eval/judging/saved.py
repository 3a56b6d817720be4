"""Saved judgments (S6.8): a valid judgment is kept under the hash of what the judge saw.

The store lives outside any one grading folder (default: ``judgments/`` beside the grading
folder) so that grading unchanged material again, in this folder or another, costs no
request. It also keeps the secret the fence tags are derived from: the same store gives the
same tags, hence the same requests, hence the same keys. Files are written atomically;
an unreadable file is treated as absent (the judgment is asked again), never repaired.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

from pytest_assistant_eval.records import write_json_atomic

JUDGMENT_FORMAT = "assistant-eval.judgment/1"


class SavedJudgments:
    def __init__(self, root: Path) -> None:
        self.root = root

    def secret(self) -> bytes:
        """The fence secret of this store, made once (0600); never shown or sent."""
        path = self.root / "fence.key"
        if not path.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass  # another grade-ai made it first; read theirs
            else:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(secrets.token_hex(32).encode())
                    handle.flush()
                    os.fsync(handle.fileno())
        return path.read_bytes().strip()

    def _path(self, grader: str, key: str) -> Path:
        return self.root / hashlib.sha256(grader.encode()).hexdigest()[:12] / key[:2] / f"{key}.json"

    def get(self, grader: str, key: str) -> dict[str, Any] | None:
        path = self._path(grader, key)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict) or data.get("format") != JUDGMENT_FORMAT or data.get("key_sha256") != key:
            return None
        return data

    def put(self, grader: str, key: str, judgment: dict[str, Any]) -> None:
        write_json_atomic(self._path(grader, key), {"format": JUDGMENT_FORMAT, "grader": grader, "key_sha256": key,
                                                    **judgment})

