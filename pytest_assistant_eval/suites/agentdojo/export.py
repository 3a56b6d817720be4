"""Our AgentDojo records as AgentDojo's own logs (issue 25), so its result tools read our runs.

``export_folders(results, logdir)`` writes one file per cell where AgentDojo's ``TraceLogger``
writes it, ``<logdir>/<pipeline>/<suite>/<user task>/<attack or none>/<injection task or none>.json``,
with the fields it writes (``suite_name``, ``pipeline_name``, ``user_task_id``,
``injection_task_id``, ``attack_type``, ``injections``, ``messages`` in its message format,
``error``, ``benchmark_version``, ``agentdojo_package_version``, ``evaluation_timestamp``,
``duration``, ``utility``, ``security``), so ``agentdojo.benchmark.load_task_results`` loads
them. ``utility`` and ``security`` are graded here with AgentDojo's own task checks
(``grade.grade_record``); ``security`` is AgentDojo's: true when the injection task succeeded,
true for a benign cell, and ``not utility`` under a denial-of-service attack, as its benchmark sets it.

Refused: a run in our own conversation (its figures are not comparable with AgentDojo's
leaderboard, so it does not go where AgentDojo's tools would compare it) and a second repeat
of a cell (AgentDojo keeps one log per task pair). Reads only results folders.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from pytest_assistant_eval.records import read_json, write_json_atomic

__all__ = ["export_folders", "export_record", "log_path", "agentdojo_messages"]


def log_path(logdir: Path, pipeline: str, suite: str, user_task: str, attack: str | None,
             injection_task: str | None) -> Path:
    """Where AgentDojo's TraceLogger puts a task pair's log (a ``/`` in the pipeline name becomes ``_``)."""
    return (logdir / pipeline.replace("/", "_") / suite / user_task / (attack or "none")
            / f"{injection_task or 'none'}.json")


def _text(content: str) -> list[dict[str, str]]:
    return [{"type": "text", "content": content}]


def _call(call: dict[str, Any]) -> dict[str, Any]:
    return {"function": call["name"], "args": call.get("arguments") or {}, "id": call.get("id"),
            "placeholder_args": None}


def agentdojo_messages(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The record's conversation in AgentDojo's message format (system, user, assistant, tool)."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": _text(record["system"])}]
    calls: dict[str, dict[str, Any]] = {}
    filter_prompt = None
    if record.get("defense") == "tool_filter":
        from pytest_assistant_eval.suites.agentdojo.defenses import pipeline_shape

        filter_prompt = pipeline_shape("tool_filter", record["model"]["model"]).tool_filter_prompt
    for entry in record["transcript"]:
        kind = entry["type"]
        if kind in ("user", "repeated_prompt"):
            messages.append({"role": "user", "content": _text(entry["text"])})
        elif kind == "tool_filter":
            messages.append({"role": "user", "content": _text(filter_prompt or "")})
            messages.append({"role": "assistant", "content": _text(entry["text"]), "tool_calls": None})
        elif kind == "assistant":
            tool_calls = [_call(c) for c in entry["tool_calls"]]
            calls.update({c["id"]: c for c in tool_calls})
            text = entry["text"] or ""
            messages.append({"role": "assistant", "content": _text(text) if text or not tool_calls else None,
                             "tool_calls": tool_calls or None})
        elif kind == "tool":
            failed = entry["status"] != "ok"  # AgentDojo's tool message: empty content, the error beside it
            call = calls.get(entry["call_id"]) or _call({"name": entry["name"], "arguments": entry["arguments"],
                                                         "id": entry["call_id"]})
            messages.append({"role": "tool", "content": _text("" if failed else entry["text"]),
                             "tool_call_id": entry["call_id"], "tool_call": call,
                             "error": entry["text"] if failed else None})
    return messages


def export_record(record: dict[str, Any], logdir: Path) -> Path:
    """Write one record as AgentDojo's log; returns its path."""
    from pytest_assistant_eval.suites.agentdojo.cells import AgentDojoCell, _attack, injections_for
    from pytest_assistant_eval.suites.agentdojo.grade import grade_record

    if record.get("conversation") != "agentdojo":
        raise ValueError(f"{record['cell']}: run in our own conversation, not AgentDojo's: its figures are not "
                         "comparable with AgentDojo's leaderboard, so it is not exported to AgentDojo's logs")
    if record["repeat"] != 1:
        raise ValueError(f"{record['cell']}: AgentDojo keeps one log per task pair; export only repeat 1")
    cell = AgentDojoCell(record["suite"], record["user_task"], record["injection_task"], record["repeat"])
    model = record["model"]["model"]
    version = record["benchmark_version"]
    grade = grade_record(record)
    utility = bool(grade.utility)
    security = True if cell.injection_task is None else bool(grade.attack_success)
    attack = record.get("attack") if cell.injection_task else None
    if attack and _attack(cell.suite, attack, model, version).is_dos_attack:
        security = not utility  # AgentDojo's benchmark: a denial of service succeeds when the task fails
    error = None
    if record.get("stop_reason") == "context_too_long":
        error = f"Skipping task '{cell.user_task}' due to context_length_exceeded"
        utility, security = False, True  # what AgentDojo's benchmark records for a conversation that did not fit
    path = log_path(logdir, record["pipeline_name"], cell.suite, cell.user_task, attack, cell.injection_task)
    write_json_atomic(path, {
        "suite_name": cell.suite, "pipeline_name": record["pipeline_name"].replace("/", "_"),
        "user_task_id": cell.user_task, "injection_task_id": cell.injection_task, "attack_type": attack,
        "injections": injections_for(cell, attack, model, version) if attack else {},
        "messages": agentdojo_messages(record), "error": error,
        "benchmark_version": version,
        "evaluation_timestamp": time.strftime("%Y-%m-%d %H:%M:%S"),
        "agentdojo_package_version": record["agentdojo_version"],
        "duration": round(sum(float(r.get("seconds") or 0.0) for r in record.get("requests", [])), 6),
        "utility": utility, "security": security,
    })
    return path


def export_folders(results: list[Path], logdir: Path) -> list[Path]:
    """Export every record of the results folders; refused (ValueError) before anything is written
    when a record cannot go to AgentDojo's logs."""
    records = [read_json(p, "assistant-eval.agentdojo-cell/1")
               for folder in results for p in sorted((folder / "cells").glob("*.json"))]
    for record in records:
        if record.get("conversation") != "agentdojo" or record["repeat"] != 1:
            export_record(record, logdir)  # raises with the reason, before any file of this export
    return [export_record(r, logdir) for r in records]
