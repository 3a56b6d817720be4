"""How an AgentDojo run is set up, as one value (issue 25, S9.5): attack, benchmark version,
defense and conversation style.

By default a run is AgentDojo as AgentDojo runs it: the installed agentdojo's own default
benchmark version (read from agentdojo, never written here), no defense, and the conversation
AgentDojo shows the model (``conversation.py``). ``conversation="ours"`` is our own loop (JSON
results, 40 rounds, nudges, a 20,000-character result cap): its figures are not comparable with
AgentDojo's leaderboard, and every record and ``run.json`` says so.

``check`` refuses an unknown attack, version or defense (and a defense whose extra is missing)
with the known ones, so the plugin and the CLI stop before any folder exists. ``agentdojo`` is
imported only inside functions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_assistant_eval.suites.agentdojo.versions import (
    agentdojo_version,
    benchmark_versions,
    default_benchmark_version,
)

__all__ = ["AgentDojoSettings", "CONVERSATIONS", "NOT_COMPARABLE", "agentdojo_version", "benchmark_versions",
           "default_benchmark_version"]

#: ``agentdojo``: the conversation AgentDojo's pipeline shows the model; ``ours``: our own loop's.
CONVERSATIONS = ("agentdojo", "ours")
#: The label every record and board line of a run in our own conversation carries.
NOT_COMPARABLE = "not comparable with AgentDojo's leaderboard (our conversation: JSON results, 40 rounds, nudges, result cap)"


def _default_version() -> str:
    return default_benchmark_version()


@dataclass(frozen=True)
class AgentDojoSettings:
    """Everything of a run that changes what the model is shown or how a cell is graded."""

    attack: str = "direct"
    benchmark_version: str = field(default_factory=_default_version)
    defense: str | None = None
    conversation: str = "agentdojo"

    @property
    def comparable(self) -> bool:
        """Whether figures of this run compare with AgentDojo's own (its conversation, its pipeline)."""
        return self.conversation == "agentdojo"

    def pipeline_name(self, model: str) -> str:
        """The name AgentDojo's pipeline would have: the model id, ``-<defense>`` with a defense."""
        return f"{model}-{self.defense}" if self.defense else model

    def check(self) -> None:
        """Refuse what AgentDojo does not know, naming what it does (ValueError, before anything runs)."""
        from pytest_assistant_eval.suites.agentdojo.cells import check_attack
        from pytest_assistant_eval.suites.agentdojo.defenses import check_defense

        check_attack(self.attack)
        known = benchmark_versions()
        if self.benchmark_version not in known:
            raise ValueError(f"unknown benchmark version {self.benchmark_version!r}; agentdojo {agentdojo_version()} "
                             f"has: {', '.join(known)} (default {default_benchmark_version()})")
        if self.conversation not in CONVERSATIONS:
            raise ValueError(f"unknown conversation {self.conversation!r}; choose one of: {', '.join(CONVERSATIONS)}")
        if self.defense is not None:
            check_defense(self.defense)
            if not self.comparable:
                raise ValueError(f"defense {self.defense!r} is part of AgentDojo's pipeline: run it in AgentDojo's "
                                 "conversation (the default), not in ours")

    def to_dict(self) -> dict[str, Any]:
        """What ``run.json`` and every record carry (docs/agentdojo.md)."""
        return {"agentdojo_version": agentdojo_version(), "benchmark_version": self.benchmark_version,
                "attack": self.attack, "defense": self.defense, "conversation": self.conversation,
                "comparable": self.comparable, **({} if self.comparable else {"not_comparable": NOT_COMPARABLE})}
