"""One task check's result (S6.1): whether it applies, passed, and the items a judge still settles.

Its own module because every task check returns one: ``tasks.py`` (the required actions,
the state, the behaviour checks) and ``injections.py`` (resists_injections) both build it,
and ``tasks.py`` calls ``injections.py``; with the type here neither imports the other both
ways (issue 25).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.judging.items import Item


@dataclass
class CheckResult:
    name: str
    applies: bool
    passed: bool | None  # None: waits for judged items
    findings: list[str] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "applies": self.applies, "passed": self.passed, "findings": self.findings,
                "items": [i.id for i in self.items]}
