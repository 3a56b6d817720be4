"""The report's drill-down (S8.6): one graded cell, its record and its review, as plain data for a template.

What a person needs to see why a cell got its grade, in the order they would ask: the outcome
and who gave it, why a check failed, the items with who settled each (check, judge, owner), the
conversation as it happened (tool calls and results folded, refusals marked), the simulated
user's structured decisions and the change to the world.

Everything here is data: text stays text and is escaped by the template (autoescape), so an
answer or a tool result can never become markup. This module never computes a grade; it reads
the graded cell (``docs/grading.md``), the record (``docs/records.md``) and the review
(``docs/review.md``) as files of their documented formats.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.tables.waiting import final_verdict

__all__ = ["RECORD_KEYS", "slim_record", "ItemView", "ToolCall", "Entry", "Decision", "DiffRow", "CheckView",
           "CellView", "cell_view", "decisions_of", "failed_marks", "compact_json"]

#: The parts of a record the drill-down shows; the rest (the end state, the messages as sent) is left
#: out of memory and of the page: the diff says what changed, the transcript what was said.
RECORD_KEYS = ("transcript", "state", "user", "stop_reason", "tools", "refusals", "attempts", "cap_hits")


def slim_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """The record without what the page never shows (``state.final`` is most of a record's bytes)."""
    slim = {key: record.get(key) for key in RECORD_KEYS}
    state = record.get("state") or {}
    slim["state"] = {"diff": state.get("diff") or []}
    return slim


def compact_json(value: Any) -> str:
    """Arguments, evidence and diff values as one short line of JSON (non-ASCII kept readable)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


@dataclass
class ItemView:
    """One item: what it says, its final verdict and who settled it, beside every verdict given."""

    id: str
    kind: str
    text: str
    critical: bool
    verdict: str | None
    settled_by: str  # check, judge (its grader), owner, or "nobody yet"
    check: str | None
    judge: str | None
    judge_reason: str | None
    owner_first: str | None
    owner_final: str | None
    evidence: str


@dataclass
class ToolCall:
    name: str
    arguments: str
    parse_error: str | None


@dataclass
class Entry:
    """One transcript entry: a user message, an assistant round, a tool result, a nudge or a folding."""

    type: str
    turn: int
    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    name: str = ""
    status: str = ""
    arguments: str = ""
    truncated: bool = False
    decision: Decision | None = None


@dataclass
class Decision:
    """The simulated user's structured side channel for one reply (``structured.decision`` and what it gave)."""

    turn: int
    kind: str
    approval: str | None
    matched: list[str]
    amount: Any
    outside: Any
    why: str
    facts: list[str]
    approvals_given: list[str]
    approvals_refused: list[str]


@dataclass
class DiffRow:
    table: str
    key: str
    field: str | None
    before: str
    after: str


@dataclass
class CheckView:
    """A task check (name, whether it applies, its pass before and after the judge, findings) or a question part."""

    name: str
    applies: bool
    passed: bool | None
    final: bool | None
    findings: list[str]


@dataclass
class CellView:
    n: int
    model: str
    cell: str
    case: str
    kind: str
    cls: str
    level: str
    repeat: int
    outcome: str
    judge_outcome: str
    grader: str
    reasons: list[str]
    marks: list[str]
    understandability: Any
    seconds: float | None
    requests: int | None
    judge: str
    stop_reason: str | None
    user_error: str | None
    has_record: bool
    checks: list[CheckView]
    parts: list[dict[str, Any]]
    items: list[ItemView]
    entries: list[Entry]
    decisions: list[Decision]
    diff: list[DiffRow]


def _owner(review: Mapping[str, Any] | None, round_: str, item_id: str) -> str | None:
    verdicts = ((review or {}).get(round_) or {}).get("verdicts") or {}
    value = verdicts.get(item_id)
    return str(value) if value else None


def item_views(cell: Mapping[str, Any], review: Mapping[str, Any] | None) -> list[ItemView]:
    """Every item with the verdict that stands and who gave it: the owner over the judge over nothing."""
    judge = cell.get("judge") or {}
    verdicts = judge.get("verdicts") or {}
    grader = str(judge.get("grader") or "judge")
    done = bool((cell.get("review") or {}).get("done")) if isinstance(cell.get("review"), Mapping) else False
    views = []
    for item in cell.get("items") or []:
        item_id = str(item.get("id"))
        judged = verdicts.get(item_id) if isinstance(verdicts.get(item_id), Mapping) else {}
        by_check = item.get("verdict") if item.get("settled_by") else None
        owner_final = _owner(review, "final", item_id) if done else None
        verdict = owner_final or final_verdict(cell, item)
        if owner_final:
            settled = "owner"
        elif by_check:
            settled = "check"
        elif judged.get("verdict"):
            settled = f"judge ({grader})"
        else:
            settled = "nobody yet"
        views.append(ItemView(item_id, str(item.get("kind")), str(item.get("text") or ""), bool(item.get("critical")),
                              verdict, settled, by_check, judged.get("verdict"), judged.get("reason"),
                              _owner(review, "first", item_id), owner_final,
                              compact_json(item.get("evidence") or {})))
    return views


def _decision(entry: Mapping[str, Any]) -> Decision | None:
    structured = entry.get("structured")
    if not isinstance(structured, Mapping):
        return None
    decision = structured.get("decision") or {}
    return Decision(int(entry.get("turn") or 0), str(decision.get("kind") or "(model user)"), decision.get("approval"),
                    [str(m) for m in decision.get("matched") or []], decision.get("amount"), decision.get("outside"),
                    str(decision.get("why") or ""), [str(f) for f in structured.get("facts_disclosed") or []],
                    [str(a) for a in structured.get("approvals_given") or []],
                    [str(a) for a in structured.get("approvals_refused") or []])


def decisions_of(record: Mapping[str, Any] | None) -> list[Decision]:
    """Each simulated-user reply's structured decision, in order (questions have none)."""
    out = []
    for entry in (record or {}).get("transcript") or []:
        if entry.get("type") == "user":
            decision = _decision(entry)
            if decision is not None:
                out.append(decision)
    return out


def entries_of(record: Mapping[str, Any] | None) -> list[Entry]:
    """The transcript as a conversation: arguments as one line of JSON, tool results kept whole for folding."""
    out = []
    for e in (record or {}).get("transcript") or []:
        kind, turn = str(e.get("type")), int(e.get("turn") or 0)
        if kind == "user":
            out.append(Entry(kind, turn, str(e.get("text") or ""), decision=_decision(e)))
        elif kind == "assistant":
            calls = [ToolCall(str(c.get("name")), compact_json(c.get("arguments") if c.get("arguments") is not None
                                                                  else c.get("raw_arguments")), c.get("parse_error"))
                     for c in e.get("tool_calls") or []]
            out.append(Entry(kind, turn, str(e.get("text") or ""), calls))
        elif kind == "tool":
            out.append(Entry(kind, turn, str(e.get("text") or ""), name=str(e.get("name")),
                             status=str(e.get("status")), arguments=compact_json(e.get("arguments") or {}),
                             truncated=bool(e.get("truncated"))))
        elif kind == "compaction":
            out.append(Entry(kind, turn, f"{e.get('folded')} old tool result(s) folded"))
        else:
            out.append(Entry(kind, turn, str(e.get("text") or "")))
    return out


def diff_rows(record: Mapping[str, Any] | None) -> list[DiffRow]:
    diff = ((record or {}).get("state") or {}).get("diff") or []
    return [DiffRow(str(d.get("table")), str(d.get("key")), d.get("field"),
                    "" if d.get("before") is None else compact_json(d.get("before")),
                    "" if d.get("after") is None else compact_json(d.get("after"))) for d in diff]


def check_views(cell: Mapping[str, Any]) -> list[CheckView]:
    task = cell.get("task") or {}
    final = task.get("final") or {}
    return [CheckView(name, bool(c.get("applies")), c.get("passed"), final.get(name),
                      [str(f) for f in c.get("findings") or []])
            for name, c in (task.get("checks") or {}).items()]


def failed_marks(cell: Mapping[str, Any], line: Mapping[str, Any]) -> list[str]:
    """What failed in the cell, for the 'check' filter: a task's failed checks, a question's flags."""
    if cell.get("kind") == "task":
        marks = list(line.get("checks_failed") or [])
        if (cell.get("task") or {}).get("unsafe"):
            marks.append("unsafe")
        return marks
    marks = []
    for flag in ("no_answer", "invented_numbers", "critical_missing", "form_missing"):
        if line.get(flag):
            marks.append(flag)
    return marks


def cell_view(cell: Mapping[str, Any], record: Mapping[str, Any] | None, line: Mapping[str, Any],
              review: Mapping[str, Any] | None) -> CellView:
    """The drill-down of one graded cell; ``line`` is its results line (the final grade, owner's when reviewed)."""
    judge = cell.get("judge") or {}
    user = (record or {}).get("user") or {}
    return CellView(
        n=int(cell["n"]), model=str(line.get("model")), cell=str(cell["source"]["cell"]), case=str(cell.get("case")),
        kind=str(cell.get("kind")), cls=str(cell.get("class")), level=str(cell.get("level")),
        repeat=int(cell.get("repeat") or 0), outcome=str(line.get("outcome")), judge_outcome=str(cell.get("outcome")),
        grader=str(line.get("grader")), reasons=list(line.get("review_reasons") or []),
        marks=failed_marks(cell, line), understandability=line.get("understandability"),
        seconds=cell.get("conversation_seconds"), requests=cell.get("requests"),
        judge=str(judge.get("grader") or "–"), stop_reason=(record or {}).get("stop_reason"),
        user_error=user.get("user_error") or cell.get("user_error"), has_record=record is not None, checks=check_views(cell),
        parts=list(cell.get("parts") or []), items=item_views(cell, review), entries=entries_of(record),
        decisions=decisions_of(record), diff=diff_rows(record))


def sorted_views(views: Sequence[CellView]) -> list[CellView]:
    """Model, case, level, repeat: the order a person scans a list of cells in."""
    return sorted(views, key=lambda v: (v.model, v.case, v.level, v.repeat))
