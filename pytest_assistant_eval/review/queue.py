"""The review queue (S7.1): which graded cells the owner reviews, drawn once with the grading's seed.

A cell is queued for a reason the owner must never see (S7.2: knowing why would bias the
verdict): the judge was unsure (a verdict's confidence below ``LOW_CONFIDENCE``), its reply
could not be read, the answer seems to address a grader, a number has no tool source, the
cell was written by the judge's own model family (self-preference), a simulated user's reply
was found wrong (``user error``, S6.12), or it was graded again with ``--changed``. Of the rest, a random 15% (at least 35, all when fewer) is the random
sample whose agreement estimates the cells the judge alone graded (S8.2).

Only reviewable cells are queued: a user error the run's own check found, or a cell with
nothing a judge read (no answer and no item), has nothing to give a verdict on.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

from pytest_assistant_eval.review.store import QueueEntry, ReviewIndex, now

__all__ = ["LOW_CONFIDENCE", "SAMPLE_SHARE", "SAMPLE_AT_LEAST", "reviewable", "judged_items", "family",
           "reasons_for", "queue_facts", "draw_queue", "refresh_queue", "contested"]

LOW_CONFIDENCE = 0.7
SAMPLE_SHARE = 0.15
SAMPLE_AT_LEAST = 35

# Vendors by the names their models go by: a judge is partial to its own vendor's answers.
_FAMILIES = {
    "anthropic": ("anthropic", "claude", "opus", "sonnet", "haiku"),
    "openai": ("openai", "chatgpt", "gpt", "o1", "o3", "o4"),
    "google": ("gemini", "gemma", "google"),
    "meta": ("llama",), "mistral": ("mistral", "mixtral", "codestral", "ministral"), "qwen": ("qwen", "qwq"),
    "deepseek": ("deepseek",), "xai": ("grok",), "microsoft": ("phi",), "ibm": ("granite",), "nvidia": ("nemotron",),
    "cohere": ("cohere", "command"),
}
_VENDOR_PRESETS = {"anthropic": "anthropic", "openai": "openai", "gemini": "google"}


@lru_cache(maxsize=256)
def family(preset: str | None, model: str | None) -> str | None:
    """The model's vendor family, from its name (any route: an OpenRouter ``anthropic/claude-…`` too)."""
    name = (model or "").lower()
    for fam, words in _FAMILIES.items():
        for word in words:
            if re.search(r"(?<![a-z0-9])" + re.escape(word) + r"(?![a-z])", name):
                return fam
    return _VENDOR_PRESETS.get(preset or "")


def contested(cell: Mapping[str, Any]) -> set[str]:
    """Ids of items code settled right that the judge contested (issue 21)."""
    verdicts = (cell.get("judge") or {}).get("verdicts") or {}
    return {k for k, v in verdicts.items() if isinstance(v, Mapping) and v.get("verdict") == "contested"}


def judged_items(cell: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The items code did not settle, and those it settled that the judge contested: what the
    owner gives a verdict on."""
    disputed = contested(cell)
    return [i for i in cell.get("items") or [] if i.get("settled_by") != "check" or i.get("id") in disputed]


def reviewable(cell: Mapping[str, Any]) -> bool:
    # A user error the run's own check found has nothing to judge; one the grading found (a
    # reply judged wrong, S6.12) goes to the owner, whose verdict on the reply decides.
    if (cell.get("outcome") == "user_error" and not cell.get("user_replies")) or not cell.get("judge"):
        return False
    judge = cell["judge"]
    return bool(judged_items(cell)) or judge.get("understandability") is not None or bool(judge.get("unparsed"))


def reasons_for(cell: Mapping[str, Any], judge_family: str | None) -> list[str]:
    """Why a cell goes to the owner whatever the random draw (empty: it is one of 'the rest')."""
    judge = cell.get("judge") or {}
    reasons: list[str] = []
    confidences = [v.get("confidence") for v in (judge.get("verdicts") or {}).values() if isinstance(v, Mapping)]
    verdicts = [v for v in (judge.get("verdicts") or {}).values() if isinstance(v, Mapping)]
    if any(v.get("unsure") or ("verdict" in v and v.get("verdict") is None) for v in verdicts):
        reasons.append("unsure")
    elif any(c is not None and float(c) < LOW_CONFIDENCE for c in confidences):
        reasons.append("low confidence")
    if any(v.get("verdict") == "contested" for v in verdicts):
        reasons.append("contested")
    if judge.get("unparsed"):
        reasons.append("unparsed reply")
    if any("address a grader" in str(r) for r in judge.get("to_owner") or []):
        reasons.append("injection hint")
    if any(i.get("kind") == "number" for i in judged_items(cell)):
        reasons.append("number without a tool source")
    model = cell.get("model") or {}
    if judge_family is not None and family(model.get("preset"), model.get("model")) == judge_family:
        reasons.append("self-preference")
    if cell.get("user_replies"):
        reasons.append("user error")
    if cell.get("user_replies_noted"):
        reasons.append("off-persona reply")  # harmless, graded as it is; the owner sees it (issue 30)
    if cell.get("history"):
        reasons.append("changed")
    return reasons


def queue_facts(cell: Mapping[str, Any]) -> list[Any]:
    """What the draw reads of a cell, whoever the judge: ``[reviewable, reasons but self-preference, family]``.

    The tables' digest keeps these per cell (``docs/digests.md``), so drawing the queue over
    100,000 cells reads three values each instead of walking every verdict and item again.
    """
    model = cell.get("model") or {}
    return [reviewable(cell), reasons_for(cell, None), family(model.get("preset"), model.get("model"))]


def _reasons(facts: Sequence[Any], judge_fam: str | None) -> list[str]:
    """``reasons_for`` from a cell's ``queue_facts``: self-preference goes in where ``reasons_for`` puts it."""
    reasons = list(facts[1])
    if judge_fam is not None and facts[2] == judge_fam:
        at = reasons.index("changed") if "changed" in reasons else len(reasons)
        reasons.insert(at, "self-preference")
    return reasons


def _facts(cell: Mapping[str, Any]) -> list[Any]:
    facts = cell.get("_queue")  # a slim cell's, computed once by its digest
    return facts if facts is not None else queue_facts(cell)


def judge_family(grading: Mapping[str, Any]) -> str | None:
    judge = grading.get("judge") or {}
    if judge.get("deterministic") and not judge.get("preset"):
        return None  # the offline rules are nobody's model
    return family(judge.get("preset"), judge.get("model") or judge.get("grader"))


def draw_queue(cells: Sequence[Mapping[str, Any]], grading: Mapping[str, Any], *, all_cells: bool = False
               ) -> ReviewIndex:
    """The queue: every cell with a reason, then the random sample of the rest (the grading's seed)."""
    fam = judge_family(grading)
    queue: list[QueueEntry] = []
    rest: list[int] = []
    for cell in sorted(cells, key=itemgetter("n")):
        facts = _facts(cell)
        if not facts[0]:
            continue
        reasons = _reasons(facts, fam) if facts[1] or (fam is not None and facts[2] == fam) else None
        if reasons:
            queue.append(QueueEntry(cell["n"], reasons))
        else:
            rest.append(cell["n"])
    size = min(len(rest), max(SAMPLE_AT_LEAST, math.ceil(SAMPLE_SHARE * len(rest))))
    sample = set(random.Random(grading["seed"]).sample(rest, size))
    queue += [QueueEntry(n, ["random sample"], sample=True) for n in rest if n in sample]
    index = ReviewIndex(seed=grading["seed"], drawn_at=now(), queue=queue)
    if all_cells:
        refresh_queue(index, cells, grading, all_cells=True)
    return index


def refresh_queue(index: ReviewIndex, cells: Sequence[Mapping[str, Any]], grading: Mapping[str, Any], *,
                  all_cells: bool = False) -> bool:
    """Add what the drawn queue lacks: cells graded again with --changed, and every cell under --all.

    The draw itself is never repeated (its random sample stays the estimate it was). Returns
    whether anything was added.
    """
    queued = index.queued()
    added = False
    index.all = index.all or all_cells
    for cell in sorted(cells, key=itemgetter("n")):
        if cell["n"] in queued or not _facts(cell)[0]:
            continue
        if cell.get("history"):
            index.queue.append(QueueEntry(cell["n"], ["changed"]))
            added = True
        elif index.all:
            index.queue.append(QueueEntry(cell["n"], ["all"]))
            added = True
    return added
