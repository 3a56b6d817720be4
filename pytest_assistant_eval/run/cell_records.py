"""A cell's record: the finished one, and the records of cells not applicable (S4.5, S4.8, S4.9).

The suite writes a finished record's own fields (``PreparedCell.record``); here the session's
fields are added to every suite's record alike: how often and where the cell was continued
(``resume``), the requests it took per day (``requests_by_day``), its failed attempts, and
a variant's context and where it ran (``providers/variants.py``). A not-applicable record is the suite's
identity fields (``Suite.record_base``) plus why. Records are written atomically and
redacted with the run's keys; the checkpoint goes only after its record is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_assistant_eval.run.cell_checkpoints import now
from pytest_assistant_eval.providers.errors import ProviderError
from pytest_assistant_eval.secret import Secrets
from pytest_assistant_eval.records import RecordError, read_json, write_json_atomic

__all__ = ["add_session_fields", "quota_na_record", "context_na_record", "na_reason", "user_error", "write_record"]


def add_session_fields(record: dict[str, Any], cp: dict[str, Any],
                       variant_fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """The session's part of a finished record (the suite wrote the rest)."""
    record["resume"] = cp["resume"]
    record["requests_by_day"] = cp["requests_by_day"]
    record["attempts"] = cp.get("saved_attempts", [])
    record.update(variant_fields or {})  # S4.5: the variant's context and where it ran (providers/variants.py)
    return record


def quota_na_record(base: dict[str, Any], cp: dict[str, Any], conversation: Any, exc: ProviderError) -> dict[str, Any]:
    """The record of a cell not applicable for the provider's per-request input quota (S4.9): the
    finished turns, the quota, the stops and every request it took, the refused one last."""
    state = conversation.state
    pending = cp.get("pending") or {}
    refused = {"index": pending.get("request"), "turn": pending.get("turn"), "round": pending.get("round"),
               "seconds": None, "usage": None, "stop_reason": "tpm_input",
               "request_sha256": pending.get("request_sha256")}
    return {
        **base,
        "status": "na", "na_reason": "provider quota per request", "scope": "cell",
        "user": {"kind": getattr(conversation.user, "kind", None), "user_error": state.user_error},
        "stop_reason": "tpm_input",
        "turns": state.turns,
        "transcript": state.transcript,
        "quota": getattr(exc, "quota", None),
        "stops": cp.get("stops", []),
        "requests": [*conversation.requests_log, refused],
        "attempts": cp.get("saved_attempts", []),
        "resume": cp.get("resume"),
        "requests_by_day": cp.get("requests_by_day"),
        "finished_at": now(),
    }


def context_na_record(base: dict[str, Any], why: str, variant_fields: dict[str, Any]) -> dict[str, Any]:
    """A setting whose variant does not fit: each of its cells is not applicable (context)."""
    return {**base, "status": "na", "na_reason": "context", "why": why, "scope": "setting",
            **variant_fields, "finished_at": now()}


def write_record(path: Path, record: dict[str, Any], secrets: Secrets | None = None) -> None:
    write_json_atomic(path, record, compact=True, redacted=True, **({"secrets": secrets} if secrets else {}))


def na_reason(path: Path) -> str | None:
    """Why a saved record is not applicable (``context``, ``provider quota per request``), or None."""
    try:
        data = read_json(path)
    except RecordError:
        return None
    return data.get("na_reason") if isinstance(data, dict) and data.get("status") == "na" else None


def user_error(path: Path) -> bool:
    """Whether a saved record's simulated user erred (then the cell is asked again, S5.2)."""
    try:
        return bool((read_json(path).get("user") or {}).get("user_error"))
    except RecordError:
        return False
