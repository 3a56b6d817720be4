"""A cell's material as the owner reads it: in the terminal (plain text) and in markdown.

The sections are the judge's own (``grading.material``), blinded the same way; the owner
additionally sees what code settled. Tool calls are folded to one line each in the terminal
and left out of markdown (numbers, which need them, are left to the judge there).
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from typing import Any

from pytest_assistant_eval.grading.material import Section, question_sections, task_sections
from pytest_assistant_eval.review.context import ReviewContext

__all__ = ["sections", "terminal_text", "markdown_text", "item_line", "FOLD_TERMINAL"]

FOLD_TERMINAL = 240


def sections(ctx: ReviewContext, n: int) -> list[Section]:
    cell = ctx.cells[n]
    record = ctx.record(n)
    if cell["kind"] == "task":
        task = next(t for t in ctx.cases.tasks if t.id == cell["case"])
        raw = task_sections(record, task)
    else:
        raw = question_sections(record, ctx.cases)
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
    """The material as markdown: ### sections, questions and answers as blockquotes, no tool calls."""
    parts: list[str] = []
    for section in sections(ctx, n):
        if section.title.startswith("Tool call"):
            continue
        body = _quote(section.text) if section.data or section.title.startswith("Question") else section.text
        parts.append(f"### {section.title}\n\n{body}")
    return "\n\n".join(parts)


def item_line(item: Mapping[str, Any], blind: Any) -> str:
    """An item in words, with the evidence code found (never a verdict)."""
    text = f"{item['id']}{' (critical)' if item.get('critical') else ''}: {blind(str(item['text']))}"
    evidence = {k: v for k, v in (item.get("evidence") or {}).items() if v not in (None, [], {}, "")}
    if evidence:
        text += f"\n      evidence: {_fold(blind(json.dumps(evidence, ensure_ascii=False, sort_keys=True)), 300)}"
    return text
