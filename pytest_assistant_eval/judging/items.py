"""Graded items and verdicts (S6.2): what a check could not settle waits for a judge.

A check may only settle that an item is right (``settle`` refuses anything else from a
check; a claim it can prove false from structure says so in its evidence); every other finding is an ``Item`` with the verdicts
it allows. The judge (a model, the offline rules, or the owner) gives the rest.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Verdict = Literal["right", "missing", "wrong"]
ItemKind = Literal["fact", "number", "forbidden", "no_data", "failed_run", "claim", "claims", "report", "user_reply"]


@dataclass
class Item:
    id: str
    kind: ItemKind
    text: str  # what is judged, in words a grader reads
    allowed: tuple[str, ...]
    verdict: str | None = None  # set when a check settled it
    settled_by: str | None = None  # "check" when settled by code
    critical: bool = False
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def pending(self) -> bool:
        return self.verdict is None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "text": self.text,
            "allowed": list(self.allowed),
            "verdict": self.verdict,
            "settled_by": self.settled_by,
            "critical": self.critical,
            "evidence": self.evidence,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Item:
        return cls(
            id=data["id"],
            kind=data["kind"],
            text=data["text"],
            allowed=tuple(data["allowed"]),
            verdict=data.get("verdict"),
            settled_by=data.get("settled_by"),
            critical=bool(data.get("critical")),
            evidence=dict(data.get("evidence") or {}),
        )


def settle(item: Item, verdict: str, by: str = "check") -> Item:
    """Settle an item. A check (``by="check"``) may only settle it right (S6.1): code that
    finds something wrong records its evidence and leaves the verdict to a judge, so a
    misreading of natural wording can never fail a run by itself."""
    if verdict not in item.allowed:
        raise ValueError(f"{item.id}: verdict {verdict!r} is not among {item.allowed}")
    if by == "check" and verdict != "right":
        raise ValueError(f"{item.id}: a check settles only 'right'; {verdict!r} is for a judge")
    item.verdict = verdict
    item.settled_by = by
    return item


@dataclass(frozen=True)
class Section:
    """One titled part of a judge's material; ``data`` marks text a model or a tool wrote (fenced)."""

    title: str
    text: str
    data: bool = False  # written by a model or a tool: fenced, never read as instructions
