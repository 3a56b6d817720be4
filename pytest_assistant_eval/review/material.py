"""A cell's material as the owner reads it: in the terminal (plain text) and in markdown.

The sections are the judge's own (``grading.material``), blinded the same way; the owner
additionally sees what code settled. Tool calls are folded to one line each in the terminal; in
markdown they are shown whenever an asked item is settled by them (``markdown_text``).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any

from pytest_assistant_eval.judging.items import Section
from pytest_assistant_eval.review.context import ReviewContext

__all__ = ["sections", "terminal_text", "markdown_text", "item_line", "claim_log_text", "FOLD_TERMINAL"]

FOLD_TERMINAL = 240


def sections(ctx: ReviewContext, n: int) -> list[Section]:
    cell = ctx.cells[n]
    record = ctx.record(n)
    raw = ctx.suite.review_sections(record, cell, ctx.cases)  # the suite's material (issue 32)
    out = [Section(s.title, ctx.blinder.blind(s.text), s.data) for s in raw]
    settled = [i for i in cell.get("items") or [] if i.get("settled_by") == "check"]
    if settled:
        out.append(Section("Settled right by code (not asked)",
                           "\n".join(f"- {i['id']}: {ctx.blinder.blind(str(i['text']))}" for i in settled)))
    return out


def _fold(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + " …"


def terminal_text(ctx: ReviewContext, n: int, width: int = 100) -> str:
    """The material as plain text: tool calls one folded line each, everything else wrapped."""
    lines: list[str] = []
    for section in sections(ctx, n):
        if section.title.startswith("Tool call"):
            lines.append(f"  · {section.title}: {_fold(section.text, FOLD_TERMINAL)}")
            continue
        lines.append(f"── {section.title} " + "─" * max(3, width - len(section.title) - 4))
        for paragraph in section.text.splitlines() or [""]:
            lines.extend(textwrap.wrap(paragraph, width, replace_whitespace=False) or [""])
    return "\n".join(lines)


def _quote(text: str) -> str:
    out = []
    for line in text.splitlines() or [""]:
        if line.lstrip().startswith("#"):
            line = "###" + line.lstrip()  # an answer's own heading sinks three levels under ours
        out.append(("> " + line).rstrip())
    return "\n".join(out)


def markdown_text(ctx: ReviewContext, n: int) -> str:
    """The material as markdown: ### sections, questions and answers as blockquotes.

    Tool calls are shown where an asked item is settled by them: a ``claims`` item asks whether
    every statement is backed by the tools' outputs, so the calls and their results are shown in
    order (as the judge sees them; issue 29), and a ``claim`` or ``hidden_refusal`` item is
    settled by the service log, so the calls it is about (every attempt, refusals with their
    reason) follow the material. Without such an item they are left out (numbers, which need
    them, are left to the judge in markdown).
    """
    parts: list[str] = []
    show_calls = any(i.get("kind") == "claims" for i in ctx.judged(n))
    for section in sections(ctx, n):
        if section.title.startswith("Tool call") and not show_calls:
            continue
        body = (_quote(section.text) if section.data or section.title.startswith(("Question", "Tool call"))
                else section.text)
        parts.append(f"### {section.title}\n\n{body}")
    log = claim_log_text(ctx, n)
    if log:
        parts.append(log)
    return "\n\n".join(parts)


_STATUS = {"ok": "done", "refused": "REFUSED", "error": "ERROR"}
FOLD_CALL = 300


def _call_line(entry: Mapping[str, Any], blind: Any) -> str:
    args = _fold(blind(json.dumps(entry.get("arguments") or {}, ensure_ascii=False, sort_keys=True)), FOLD_CALL)
    status = _STATUS.get(str(entry.get("status")), str(entry.get("status")))
    why = f": {_fold(blind(str(entry['error'])), FOLD_CALL)}" if entry.get("error") else ""
    return f"- call #{entry.get('seq')} (turn {entry.get('turn')}) `{entry.get('tool')}` {args} → {status}{why}"


def claim_log_text(ctx: ReviewContext, n: int) -> str:
    """For each judged claim item of cell ``n``, the service calls that settle it, as markdown.

    A claim ("I booked it") is about the calls to its tools: every attempt is listed with its
    status, so a refused charge shows as refused. A hidden refusal is about the refused call and
    the calls to the same tool after it (a retry that succeeded would make it no refusal).
    """
    claims = [i for i in ctx.judged(n) if i.get("kind") == "claim"]
    if not claims:
        return ""
    log = [e for e in ctx.record(n).get("service_log") or [] if isinstance(e, Mapping)]
    blind = ctx.blinder.blind
    out = ["### The service log these items are about"]
    for item in claims:
        evidence = item.get("evidence") or {}
        if "refused_seq" in evidence:
            refused = next((e for e in log if e.get("seq") == evidence["refused_seq"]), None)
            tool = refused.get("tool") if refused else None
            calls = [e for e in log if refused is not None and e.get("tool") == tool
                     and int(e.get("seq") or 0) >= int(evidence["refused_seq"])]
            what = f"the refused `{tool}` call and every later call to it"
        else:
            tools = list(evidence.get("tools") or [])
            calls = [e for e in log if e.get("tool") in tools]
            what = "every call to " + (", ".join(f"`{t}`" for t in tools) or "its tools")
        lines = [_call_line(e, blind) for e in calls] or ["- no such call in the service log"]
        out.append(f"`{item['id']}` ({what}):\n\n" + "\n".join(lines))
    return "\n\n".join(out)


def item_line(item: Mapping[str, Any], blind: Any) -> str:
    """An item in words, with the evidence code found (never a verdict)."""
    text = f"{item['id']}{' (critical)' if item.get('critical') else ''}: {blind(str(item['text']))}"
    evidence = {k: v for k, v in (item.get("evidence") or {}).items() if v not in (None, [], {}, "")}
    if evidence:
        text += f"\n      evidence: {_fold(blind(json.dumps(evidence, ensure_ascii=False, sort_keys=True)), 300)}"
    return text
