"""A cell's checkpoint: a fresh one, one saved before every request, one restored by --resume (S4.8).

The session calls these in order: ``fresh`` when a cell starts, ``save`` from the loop's
``before_request`` hook (the request is counted on today's date before it is sent),
``restore`` when ``--resume`` finds a checkpoint, ``file_attempts`` when a request's failed
attempts are known. A checkpoint is continued only if it is of this format, of this folder's
model and world (a suite's fingerprint), of the same level setting, and the restored
conversation gives the pending request byte for byte; otherwise ``restore`` says why and
restores nothing. The file format is ``conversation/checkpoint.py``'s (docs/checkpoints.md).
"""

from __future__ import annotations

import copy
from pytest_assistant_eval.records import now
from pathlib import Path
from typing import Any, Callable

from pytest_assistant_eval.conversation.checkpoint import (
    CHECKPOINT_FORMAT,
    RESTART_REASONS,
    CheckpointJournal,
    changed_tables,
    read_checkpoint,
    setting_reason,
)
from pytest_assistant_eval.conversation.loop import Conversation, LoopState, request_body_sha256
from pytest_assistant_eval.suites.plan import ModelSpec
from pytest_assistant_eval.run.provider_setup import take_attempts
from pytest_assistant_eval.conversation.backend import LogEntry

__all__ = ["fresh", "save", "restore", "file_attempts", "file_attempt_now", "input_estimate", "now"]


def _model(spec: ModelSpec) -> dict[str, Any]:
    return {"preset": spec.preset, "model": spec.model, "route": spec.route}


def fresh(cell_id: str, spec: ModelSpec, world: str, setting_key: dict[str, Any], commit: str | None) -> dict[str, Any]:
    """The checkpoint of a cell that starts from its first request (``world``: the suite's fingerprint)."""
    return {
        "format": CHECKPOINT_FORMAT, "cell": cell_id, "model": _model(spec),
        "world": world, "setting_key": setting_key, "git_commit": commit,
        "state": None, "world_state": {}, "service_log": [], "requests_log": [], "pending": None,
        "attempts": [], "stop": None, "requests_by_day": {}, "resume": {"count": 0, "points": []},
        "seconds_so_far": 0.0, "updated_at": now(),
    }


def input_estimate(request: Any, previous: dict[str, Any] | None,
                   requests_log: list[dict[str, Any]]) -> dict[str, Any]:
    """The request's input-token estimate, corrected by the provider's own count of the last one (S4.9)."""
    from pytest_assistant_eval.conversation.loop import estimate_tokens

    raw = estimate_tokens(list(request.messages), tuple(request.tools))
    ratio = (previous or {}).get("estimate_ratio")
    if previous and requests_log and previous.get("input_tokens_raw"):
        reported = (requests_log[-1].get("usage") or {}).get("input_tokens")
        if reported:
            ratio = reported / previous["input_tokens_raw"]
    corrected = round(raw * ratio) if ratio else raw
    return {"input_tokens_raw": raw, "estimate_ratio": ratio, "input_tokens_estimate": corrected}


def save(journal: CheckpointJournal, cp: dict[str, Any], state: LoopState, request: Any,
         conversation: Conversation, world: Any, start_state: Any, day: str) -> None:
    """Before a request: count it on ``day``, keep the conversation and the world's changes."""
    cp["requests_by_day"][day] = cp["requests_by_day"].get(day, 0) + 1
    cp["state"] = state.to_dict()
    # The world changes only through writes: take a new snapshot only after one (a lookup,
    # most calls, changes nothing; a snapshot reads every table).
    written = world.changes() if hasattr(world, "changes") else len(world.log)
    if cp.get("_written") != written:
        cp["world_state"] = changed_tables(start_state, world.snapshot())
        cp["_written"] = written
    cp["service_log"] = [entry.to_dict() for entry in world.log]
    cp["requests_log"] = list(conversation.requests_log)
    file_attempts(cp, conversation)  # the failed attempts of the request just answered
    cp["pending"] = {"request_sha256": conversation.pending_request_sha256 or request_body_sha256(request),
                     "turn": state.turn,
                     "round": state.round + 1, "request": state.requests + 1, "at": now(),
                     **input_estimate(request, cp.get("pending"), conversation.requests_log)}
    cp["attempts"] = []
    cp["stop"] = None
    cp["updated_at"] = now()
    # Only what changed since the last request is appended (format 2's journal).
    journal.write({k: v for k, v in cp.items() if not k.startswith("_")})


def restore(path: Path, spec: ModelSpec, world_fingerprint: str, setting_key: dict[str, Any],
            conversation: Conversation, world: Any, *, pace: float, stream: bool,
            commit: str | None, start: Callable[[Conversation, bool], None] | None = None,
            ) -> tuple[dict[str, Any] | None, str | None]:
    """The kept checkpoint, restored into ``conversation`` and ``world``; or None and why not.

    ``start``: the prepared cell's ``start`` hook; the pending request is compared as a copy of the
    conversation gives it after that hook has seen the saved state (a tool filter's choice)."""
    data, why = read_checkpoint(path)
    if data is None:
        return None, why
    if data["model"] != _model(spec):
        return None, RESTART_REASONS["model"]
    if data["world"] != world_fingerprint:
        return None, RESTART_REASONS["world"]
    why = setting_reason(data["setting_key"], setting_key)
    if why:
        return None, why
    if data["state"] is None or data["pending"] is None:
        return None, RESTART_REASONS["request"]
    try:
        state = LoopState.from_dict(data["state"])
        log = [LogEntry.from_dict(entry) for entry in data["service_log"]]
    except (KeyError, TypeError, AttributeError):
        return None, RESTART_REASONS["format"]
    # Nothing is restored before the checkpoint is known to give the request that was sent:
    # a cell started again starts from the fresh conversation and world, never a mix.
    probe = conversation
    if start is not None:
        probe = copy.copy(conversation)  # the hook may narrow the level: only the copy's, until restored
        probe.state = state
        start(probe, True)
    if request_body_sha256(probe.request_for(state)) != data["pending"]["request_sha256"]:
        return None, RESTART_REASONS["request"]
    world.restore(data["world_state"])
    world.log.extend(log)
    conversation.state = state
    conversation.requests_log = list(data["requests_log"])
    stop = data["stop"] or {}
    data["resume"]["count"] += 1
    data["resume"]["points"].append({
        "turn": data["pending"]["turn"], "round": data["pending"]["round"],
        "request": data["pending"]["request"], "code": stop.get("code", "killed"),
        "provider": spec.route, "lost_usage": None,
        "stopped_at": stop.get("at", data.get("updated_at")), "resumed_at": now(),
        "pace": pace, "stream": stream,
        "git_commits": {"stopped": data.get("git_commit"), "resumed": commit},
        "request_sha256": data["pending"]["request_sha256"],
    })
    return data, None


def file_attempts(cp: dict[str, Any], conversation: Conversation,
                  take: Callable[[Any], list[dict[str, Any]]] = take_attempts) -> None:
    """Move failed attempts (the assistant's and the user model's, and those a resumed stop
    kept) into ``saved_attempts``, tagged with the request they belong to (S4.10)."""
    pending = cp.get("pending") or {}
    user_provider = getattr(conversation.user, "provider", None)
    found = [*(cp.get("attempts") or []),
             *take(conversation.assistant),
             *({**a, "role": "user"} for a in take(user_provider))]
    if not found:
        return
    saved = cp.setdefault("saved_attempts", [])
    for attempt in found:
        if "turn" not in attempt:
            attempt = {**attempt, "turn": pending.get("turn"), "request": pending.get("request")}
        saved.append(attempt)
    cp["attempts"] = []


def file_attempt_now(journal: CheckpointJournal, cp: dict[str, Any], conversation: Conversation,
                     take: Callable[[Any], list[dict[str, Any]]] = take_attempts) -> None:
    """A failed attempt, filed in the checkpoint the moment it failed, before any wait or retry
    (issue 31 G): a kill during a backoff then loses none. It joins the pending request's
    ``attempts``, which ``file_attempts`` moves on as every attempt of a stop or a saved cell."""
    user_provider = getattr(conversation.user, "provider", None)
    found = [*take(conversation.assistant), *({**a, "role": "user"} for a in take(user_provider))]
    if not found or cp.get("pending") is None:
        cp["attempts"] = [*(cp.get("attempts") or []), *found]
        return
    pending = cp["pending"]
    cp["attempts"] = [*(cp.get("attempts") or []),
                      *({**a, "turn": pending.get("turn"), "request": pending.get("request")} for a in found)]
    cp["updated_at"] = now()
    journal.write({k: v for k, v in cp.items() if not k.startswith("_")})
