"""Graded cells and their records, turned into results lines (line format 2, ``docs/results.md``).

The summary prints these lines and ``summary --record`` appends them, so what is printed
is exactly what is recorded. A line joins a graded cell's grade (``docs/grading.md``) with
what its record measured (``docs/records.md``); a cell the owner skipped or one not
applicable gets a line too, with its reason and no grade.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from operator import itemgetter
from pathlib import Path
from typing import Any, Protocol

from pytest_assistant_eval.providers.generation import identity_words
from pytest_assistant_eval.suites.recorded import get_suite, grading_suite, suite_of_record
from pytest_assistant_eval.tables.model_names import display_names
from pytest_assistant_eval.tables.results_file import FIELDS, LINE_FORMAT
from pytest_assistant_eval.tabular.usage import LINE_USAGE_FIELDS
from pytest_assistant_eval.tables.waiting import (
    NOT_GRADED,
    WAITING_RULES,
    final_verdict,
    review_marker,
    unsettled_items,
    waiting_reasons,
)

from pytest_assistant_eval.tabular.setting_keys import setting_id, setting_mix


class GradingSource(Protocol):
    """What the lines read of a grading (``grading_source.GradingSource`` is one): named here, not
    imported, because grading_source reads this module's ``line_base`` and ``measured`` (issue 32:
    even a type-only import back was a circle)."""

    path: Path
    index: dict[str, Any]
    cells: list[dict[str, Any]]
    folders: dict[str, Path | None]
    identities: dict[str, dict[str, Any]]
    ungraded: list[dict[str, Any]]
    digests: dict[str, dict[str, Any]] | None

    @property
    def missing_folders(self) -> list[str]: ...

    def record_digest(self, folder: str) -> dict[str, Any]: ...

    def record(self, folder: str, cell: str) -> dict[str, Any] | None: ...

    def extra_records(self, folder: str) -> Iterator[dict[str, Any]]: ...

    def skips(self, folder: str) -> dict[str, dict[str, Any]]: ...


__all__ = ["BuiltLines", "build_lines", "measured", "graded_fields", "recordable", "LINE_FIELDS"]


@dataclass
class BuiltLines:
    """The lines of one grading folder, the cells that wait (blind number, folder, cell, reasons), warnings."""

    lines: list[dict[str, Any]]
    waiting: list[tuple[int, str, str, list[str]]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: Per graded results folder, its model's name in every table (``model_names.display_names``).
    names: dict[str, str] = field(default_factory=dict)


#: Record format -> the tool specs of the suite that writes it (``Suite.tool_specs``), asked once per format.
_SPECS_OF_FORMAT: dict[Any, Mapping[str, Any]] = {}


@lru_cache(maxsize=64)
def _tool_chars(fmt: Any, tools: tuple[str, ...]) -> int:
    specs = _SPECS_OF_FORMAT.get(fmt)
    if specs is None:  # the suite the record names by its format (issue 32), never one by name
        specs = _SPECS_OF_FORMAT[fmt] = get_suite(suite_of_record(fmt)).tool_specs()

    total = 0
    for name in tools:
        spec = specs.get(name)
        if spec is not None:
            total += len(json.dumps({"name": spec.name, "description": spec.description,
                                     "parameters": spec.parameters}))
    return total


def _estimate_prompt(record: Mapping[str, Any]) -> int | None:
    """The harness's own estimate of the last prompt: 4 characters a token, as the loop folds history by.

    Computed from the messages as last sent and the level's tool definitions; the ratio of the
    provider's reported count to it says how far the fit decisions were off (S8.4).
    """
    messages = record.get("messages")
    if not messages:
        return None
    chars = 0
    for m in messages:
        chars += len(m.get("content") or "")
        for call in m.get("tool_calls") or []:
            chars += len(json.dumps(call.get("arguments"))) + len(call.get("name") or "")
    chars += _tool_chars(record.get("format"), tuple(t.get("name", "") for t in record.get("tools") or []))
    return chars // 4 + 4 * len(messages)


#: The line fields a record gives, in the order ``measured`` returns them (a record digest row keeps their values).
MEASURED_FIELDS = (
    "date", "setting", "system_hash", "tools_hash", "behaviour", "harness_version", "git_commit", "levels_version",
    "requests", "calls", "turn_calls", "rounds", "output_tokens", "prompt_tokens_reported", "prompt_tokens_estimated",
    "cap_hits", "length_stops", "compactions", "truncations", "cpu_offload", "context_window", "failed_attempts",
    # Not results.jsonl fields (line format 2 stays as it is): the tables' tokens and cost (issues 24, 29).
    "input_tokens", "cached_input_tokens", "cache_write_tokens")
#: Every field of a line as the tables hold it: a results line's (``FIELDS``) and the usage only the
#: tables read (``usage.LINE_USAGE_FIELDS``); ``recordable`` keeps a line's ``FIELDS`` for the file.
LINE_FIELDS = (*FIELDS, *LINE_USAGE_FIELDS)
#: What ``setting_keys.setting_mix`` compares of the cells of one model at one level (S3.4).
_MIX_FIELDS = ("system_hash", "tools_hash", "behaviour")


def measured(record: Mapping[str, Any] | None) -> dict[str, Any]:
    """The line fields a record gives: dates, versions, setting, usage, caps, attempts, offload."""
    out: dict[str, Any] = dict.fromkeys(MEASURED_FIELDS)
    out["failed_attempts"] = []
    out["turn_calls"] = []
    if not record:
        return out
    key = record.get("setting_key") or None
    versions = record.get("versions") or {}
    turns = record.get("turns") or []
    requests = record.get("requests") or []
    usages = [r.get("usage") for r in requests if r.get("usage")]
    reported = next((u.get("input_tokens") for u in reversed(usages) if u.get("input_tokens") is not None), None)
    offload = record.get("cpu_offload")
    out.update({
        "date": (record.get("finished_at") or record.get("started_at") or "")[:10] or None,
        "setting": setting_id(key),
        "system_hash": (key or {}).get("system_hash"),
        "tools_hash": (key or {}).get("tools_hash"),
        "behaviour": (key or {}).get("behaviour"),
        "harness_version": versions.get("harness"),
        "git_commit": versions.get("git_commit"),
        "levels_version": versions.get("levels_version"),
        "requests": len(requests),
        "calls": sum(int(t.get("tool_calls") or 0) for t in turns),
        "turn_calls": [int(t.get("tool_calls") or 0) for t in turns],
        "rounds": sum(int(t.get("rounds") or 0) for t in turns),
        "output_tokens": sum(int(u.get("output_tokens") or 0) for u in usages) if usages else None,
        "prompt_tokens_reported": reported,
        "prompt_tokens_estimated": _estimate_prompt(record),
        "cap_hits": len(record.get("cap_hits") or []),
        "length_stops": sum(1 for r in requests if r.get("stop_reason") in ("max_tokens", "oversized")),
        "compactions": len(record.get("compactions") or []),
        "truncations": sum(1 for e in record.get("transcript") or [] if e.get("type") == "tool" and e.get("truncated")),
        "failed_attempts": [str(a.get("code")) for a in record.get("attempts") or []],
        "cpu_offload": offload.get("cpu_share") if isinstance(offload, Mapping) else None,
        "context_window": (record.get("ollama") or {}).get("context"),
        "input_tokens": sum(int(u.get("input_tokens") or 0) for u in usages) if usages else None,
        "cached_input_tokens": sum(int(u.get("cached_input_tokens") or 0) for u in usages) if usages else None,
        "cache_write_tokens": sum(int(u.get("cache_write_tokens") or 0) for u in usages) if usages else None,
    })
    return out


def graded_fields(cell: Mapping[str, Any], reasons: list[str]) -> dict[str, Any]:
    """The grade part of a line, read from a graded cell: the final grade beside the judge's own."""
    judge = cell.get("judge") or {}
    parts = cell.get("parts") or []
    items = cell.get("items") or []
    outcome = cell.get("outcome")
    no_answer = any(p.get("no_answer") for p in parts)
    if cell.get("kind") == "task":
        final = (cell.get("task") or {}).get("final") or {}
        checks_failed = sorted(name for name, value in final.items() if value is False)
        # The checks that applied (a value, not null): which applies is the record's, never a verdict's,
        # so the owner's review changes checks_failed but not these (the trust verdict's n, issue 29).
        checks_applied = sorted(name for name, value in final.items() if value is not None)
        invented = sum(1 for i in items if i.get("kind") == "number" and final_verdict(cell, i) == "wrong")
    else:
        checks_failed = []
        checks_applied = []
        invented = sum(int(p.get("invented_numbers") or 0) for p in parts)
    judged = bool(judge) and (outcome != "user_error" or bool(cell.get("user_replies"))) and not (no_answer and not items)
    # The final grade is the judge's until the owner reviews the cell (the ``review`` marker the
    # review puts on it, docs/review.md); then the owner's, with the judge's kept beside it.
    fields = {
        "outcome": "waiting" if reasons else outcome,
        "grader": judge.get("grader") if judged else "none",
        "review_reasons": list(reasons),
        "judge_outcome": outcome,
        "understandability": judge.get("understandability"),
        "judge_understandability": judge.get("understandability"),
        "judge_route": judge.get("route"),
        "no_answer": no_answer,
        "escalated": outcome == "escalated" or any(p.get("escalated") for p in parts),
        "invented_numbers": invented,
        "critical_missing": sum(len(p.get("critical_missing") or []) for p in parts),
        "form_missing": sum(len(p.get("form_missing") or []) for p in parts),
        "checks_failed": checks_failed,
        "checks_applied": checks_applied,
    }
    return _owner_grade(cell, reasons, fields)


#: The fields an owner's review decides (the rest stay the judge's).
OWNER_FIELDS = ("outcome", "understandability", "no_answer", "escalated", "invented_numbers", "critical_missing",
                "form_missing", "checks_failed")


def _owner_grade(cell: Mapping[str, Any], reasons: list[str], fields: dict[str, Any]) -> dict[str, Any]:
    """A reviewed cell's line carries the owner's grade (grader ``owner``) and why it was queued."""
    marker = cell.get("review")
    if not isinstance(marker, Mapping):
        return fields
    if not reasons and marker.get("queued_for"):
        fields["review_reasons"] = list(marker["queued_for"])
    grade = marker.get("grade")
    if grade and not reasons:
        fields.update({k: grade[k] for k in OWNER_FIELDS if k in grade})
        fields["grader"] = "owner"
    return fields


def _ungraded_fields(outcome: str) -> dict[str, Any]:
    return {"outcome": outcome, "grader": "none", "review_reasons": [], "judge_outcome": None,
            "understandability": None, "judge_understandability": None, "judge_route": None, "no_answer": False,
            "escalated": False, "invented_numbers": 0, "critical_missing": 0, "form_missing": 0, "checks_failed": [],
            "checks_applied": []}


def _helpfulness(cell: Mapping[str, Any]) -> dict[str, Any]:
    rated = (cell.get("review") or {}).get("helpfulness") if isinstance(cell.get("review"), Mapping) else None
    return {"helpfulness": rated.get("rating") if rated else None, "helpfulness_note": rated.get("note") if rated else None}


def cell_part(cell: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]]:
    """Why the cell waits, and the fields of its line read from the graded cell (the grade, what and where)."""
    reasons = waiting_reasons(cell)
    return reasons, _part(cell, reasons)


def _part(cell: Mapping[str, Any], reasons: list[str]) -> dict[str, Any]:
    cell_id = cell["source"]["cell"]
    return {**graded_fields(cell, reasons),
            "cell": cell_id, "case": cell["case"], "kind": cell["kind"], "class": cell["class"],
            "level": cell["level"], "repeat": cell["repeat"], "blind_n": cell["n"],
            "conversation_seconds": cell.get("conversation_seconds"),
            "resumes": cell.get("resumes", 0),
            "resume_points": [[p.get("turn"), p.get("round")] for p in cell.get("resume_points") or []],
            "resume_codes": list(cell.get("resume_codes") or []),
            "skip_reason": None, "na_reason": None,
            **_helpfulness(cell)}


#: The fields of a graded cell's line part (``cell_part``), in order: a slim cell's ``_line`` keeps their values.
PART_FIELDS = (
    "outcome", "grader", "review_reasons", "judge_outcome", "understandability", "judge_understandability",
    "judge_route", "no_answer", "escalated", "invented_numbers", "critical_missing", "form_missing", "checks_failed",
    "checks_applied", "cell", "case", "kind", "class", "level", "repeat", "blind_n", "conversation_seconds", "resumes", "resume_points",
    "resume_codes", "skip_reason", "na_reason", "helpfulness", "helpfulness_note")


def line_base(cell: Mapping[str, Any]) -> list[Any]:
    """A graded cell's line part before any review marker: ``[unsettled reasons, values]`` (a slim cell's ``_line``).

    ``values`` are the part's in ``PART_FIELDS`` order (a list: 100,000 parts of 28 named
    fields were a third of what the summary held). ``line_part`` puts a marker on it later
    exactly as ``cell_part`` would on the whole cell: the marker changes only the waiting
    reasons, the outcome (waiting), the review reasons, the owner's grade and the helpfulness.
    """
    bare = {k: v for k, v in cell.items() if k != "review"}
    part = _part(bare, [])
    if tuple(part) != PART_FIELDS:
        raise ValueError(f"a line part of other fields than PART_FIELDS: {sorted(set(part) ^ set(PART_FIELDS))}")
    return [unsettled_items(bare), list(part.values())]


def _fast_rules() -> bool:
    """Whether a line part from ``line_base`` is whole: no waiting rule reads more of the cell than it keeps."""
    return WAITING_RULES == [unsettled_items, review_marker]


def line_part(base: Sequence[Any], cell: Mapping[str, Any]) -> tuple[list[str], dict[str, Any]] | None:
    """``cell_part`` of the cell from its ``line_base`` and its review marker now; None when the rules changed."""
    if not _fast_rules():
        return None  # another rule reads more of the cell: the caller reads the whole cell
    unsettled, values = base
    part = dict(zip(PART_FIELDS, values))
    marker = cell.get("review")
    if marker is None and not unsettled:
        return [], part
    reasons = list(unsettled) + review_marker(cell)
    if reasons:
        part["outcome"] = "waiting"
    part["review_reasons"] = list(reasons)
    part = _owner_grade(cell, reasons, part)
    part.update(_helpfulness(cell))
    return reasons, part


def _cell_parts(cell_id: str) -> tuple[str, str, int]:
    case, level, repeat = cell_id.split("__")
    return case, level, int(repeat.lstrip("r") or 0)


def recordable(line: Mapping[str, Any]) -> dict[str, Any]:
    """A line as ``results.jsonl`` holds it: its ``FIELDS`` (the tables' own usage fields left out)."""
    return {f: line[f] for f in FIELDS}


def build_lines(source: GradingSource, levels: Any, *, now: datetime | None = None,
                fields: tuple[str, ...] = LINE_FIELDS, suite: Any = None) -> BuiltLines:
    """One line per graded cell, skipped cell and cell not applicable of every graded results folder.

    ``fields``: the fields each line has (all of ``LINE_FIELDS`` unless a caller that only counts asks
    for fewer, as the summary's tables do: 100,000 lines of 63 fields cost a second to build). Every
    line has the usage fields (``usage.USAGE_FIELDS``), whatever is asked: usage is counted once, from
    the records, in every table (issue 29). ``suite``: the suite whose grading it is (its ``Suite.automatic_level``
    places each model; default: the suite the folder recorded, ``suites.grading_suite``); ``levels``: its levels.
    """
    suite = suite if suite is not None else grading_suite(source.path)
    fields = (*fields, *(f for f in (*LINE_USAGE_FIELDS, "requests", "output_tokens") if f not in fields))
    recorded_at = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    index = source.index
    grading_name = source.path.name
    built = BuiltLines(lines=[])
    per_folder: dict[str, list[dict[str, Any]]] = defaultdict(list)
    windows_of: dict[str, list[Any]] = defaultdict(list)  # the context windows the records measured
    template = dict.fromkeys(fields)
    every_field = fields == LINE_FIELDS
    mixes: dict[tuple[str, str], set[tuple[Any, ...]]] = defaultdict(set)  # what setting_mix compares
    mix_of = itemgetter(*(MEASURED_FIELDS.index(f) for f in _MIX_FIELDS))
    window_at = MEASURED_FIELDS.index("context_window")
    no_record = list(measured(None).values())
    # The summary's tables read a few fields: a cell with no marker and nothing unsettled (nearly
    # every cell) gets them straight from its digest rows' values, without a dict of every field.
    fast = not every_field and source.digests is not None and _fast_rules()
    part_at, measured_at = {f: i for i, f in enumerate(PART_FIELDS)}, {f: i for i, f in enumerate(MEASURED_FIELDS)}
    plan = [(f, 0, part_at[f]) if f in part_at else (f, 1, measured_at[f]) if f in measured_at else (f, 2, 0)
            for f in fields]
    nothing = (None,)

    for cell in source.cells:
        folder, cell_id = cell["source"]["folder"], cell["source"]["cell"]
        if source.digests is not None:  # slim: the record's digest row (docs/digests.md), not the record
            row = source.record_digest(folder).get(f"{cell_id}.json")
            got_values = row[0] if row is not None else no_record
        else:
            row = source.record(folder, cell_id)
            got_values = list(measured(row).values())
        if row is not None:
            mixes[(folder, cell["level"])].add(mix_of(got_values))
        if got_values[window_at]:
            windows_of[folder].append(got_values[window_at])
        base = cell.get("_line")  # a slim cell's line part, computed once by its digest
        if fast and base is not None and not base[0] and "review" not in cell:
            sources = (base[1], got_values, nothing)
            per_folder[folder].append({f: sources[src][at] for f, src, at in plan})
            continue
        done = line_part(base, cell) if base is not None else None
        if done is not None:
            reasons, part = done
        elif "_line" not in cell:  # a whole graded cell
            reasons, part = cell_part(cell)
        else:  # a waiting rule this digest does not know: the whole cell, with the marker the review put on it
            full = json.loads((source.path / "cells" / f"{cell['n']}.json").read_bytes())
            reasons, part = cell_part({**full, **({"review": cell["review"]} if "review" in cell else {})})
        if reasons:
            built.waiting.append((cell["n"], folder, cell_id, reasons))
        got = dict(zip(MEASURED_FIELDS, got_values))
        line = {**got, **part} if every_field else {f: part[f] if f in part else got.get(f) for f in fields}
        per_folder[folder].append(line)

    def apart(folder: str, ln: dict[str, Any]) -> None:  # a skipped cell's line, or one not applicable
        if ln.get("context_window"):
            windows_of[folder].append(ln["context_window"])
        per_folder[folder].append(ln if every_field else {f: ln.get(f) for f in fields})

    for entry in source.ungraded:
        built.waiting.append((entry["n"], entry["folder"], entry["cell"], [NOT_GRADED]))

    for folder in source.folders:
        for cell_id, skip in source.skips(folder).items():
            case, level, repeat = _cell_parts(cell_id)
            apart(folder, {**measured(None), **_ungraded_fields("skipped"), "cell": cell_id, "case": case,
                                       "kind": None, "class": None, "level": level, "repeat": repeat, "blind_n": None,
                                       "conversation_seconds": None, "resumes": 0, "resume_points": [],
                                       "resume_codes": [], "skip_reason": skip.get("reason"), "na_reason": None,
                                       "date": (skip.get("at") or "")[:10] or None})
        for record in source.extra_records(folder):
            apart(folder, {**(record["_measured"] if "_measured" in record else measured(record)),
                                       **_ungraded_fields("not_applicable"), "cell": record["cell"],
                                       "case": record.get("case"), "kind": record.get("kind"),
                                       "class": record.get("class"), "level": record.get("level"),
                                       "repeat": record.get("repeat"), "blind_n": None, "conversation_seconds": None,
                                       "resumes": 0, "resume_points": [], "resume_codes": [], "skip_reason": None,
                                       "na_reason": record.get("na_reason")})

    built.names = display_names(source.identities)
    for folder, lines in per_folder.items():
        identity = source.identities[folder]
        preset, model_name = identity.get("preset"), identity.get("model")
        windows = windows_of[folder]
        window = max(windows) if windows else None
        name = f"scripted:{model_name}" if preset == "scripted" else str(model_name)
        automatic = suite.automatic_level(name, window, levels, preset)
        relaxed = [f"data_collection: {identity['data_collection']}"] if identity.get("data_collection") else []
        settings = identity_words(identity.get("generation"))  # issue 33: two settings are two identities
        common = {"line_format": LINE_FORMAT, "recorded_at": recorded_at, "model": built.names[folder], "preset": preset,
                  "model_name": f"{model_name} ({settings})" if settings else model_name,
                  "route": identity.get("route"),
                  "free_plan": bool(identity.get("free_plan")), "automatic_level": automatic,
                  "set_version": index.get("set_version"), "key_version": index.get("key_version"),
                  "knobs_relaxed": relaxed, "grading": grading_name}
        if not every_field:
            common = {k: v for k, v in common.items() if k in template}
        for ln in lines:
            # Every field in FIELDS order, absent ones None: a copy of the template updated in place
            # (100,000 lines: a third of the time of building each line field by field).
            if every_field:
                line = template.copy()
                line.update(ln)
                if len(line) != len(template):
                    line = {f: line.get(f) for f in fields}  # a key that is no field: never written
            else:
                line = ln  # already of the fields asked for
            line.update(common)
            if "context_window" in line:
                line["context_window"] = line["context_window"] or window
            built.lines.append(line)

    for (folder, level), found in sorted(mixes.items()):
        mix = setting_mix([dict(zip(_MIX_FIELDS, values)) for values in found])
        if mix:
            built.warnings.append(f"{folder} at {level}: its cells were asked with {'; '.join(mix)}: "
                                  "their grades are not of one setting")
    for name in source.missing_folders:
        built.warnings.append(f"the results folder {name!r} was not found beside {source.path} (give it with "
                              "--results): its lines have no setting, usage, dates or skipped cells")
    return built
