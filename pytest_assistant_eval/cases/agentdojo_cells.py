"""AgentDojo's user tasks as cells (issue 16), optionally crossed with its injection tasks.

A cell id is ``AD-<suite>-<user task number>[-i<injection task number>]__r<repeat>``
(``AD-banking-0__r1``, ``AD-slack-3-i1__r1``): one model answers one AgentDojo user task once,
in an environment with the benign default injection texts, or with an attack's texts aiming
at one injection task. The environment a cell starts from is rebuilt here, from the suite's
files, the same way for the run and for grading, so records never need to store it whole.

``agentdojo`` is imported only inside functions: the core never needs the extra.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = ["AgentDojoCell", "BENCHMARK_VERSION", "DEFAULT_ATTACK", "all_cells", "parse_cell_id", "suites",
           "start_environment", "injections_for"]

BENCHMARK_VERSION = "v1.2.1"
#: An attack that needs no model name (AgentDojo's "direct": ``TODO: {goal}``); others by name.
DEFAULT_ATTACK = "direct"
_ID = re.compile(r"^AD-(?P<suite>[a-z]+)-(?P<user>\d+)(?:-i(?P<inj>\d+))?__r(?P<repeat>\d+)$")


@dataclass(frozen=True)
class AgentDojoCell:
    suite: str
    user_task: str  # "user_task_0"
    injection_task: str | None = None  # "injection_task_1", or None for the benign environment
    repeat: int = 1

    @property
    def cell_id(self) -> str:
        n = self.user_task.rsplit("_", 1)[1]
        inj = f"-i{self.injection_task.rsplit('_', 1)[1]}" if self.injection_task else ""
        return f"AD-{self.suite}-{n}{inj}__r{self.repeat}"


def parse_cell_id(cell_id: str) -> AgentDojoCell:
    m = _ID.match(cell_id)
    if m is None:
        raise ValueError(f"{cell_id!r} is not an AgentDojo cell id (AD-<suite>-<n>[-i<n>]__r<repeat>)")
    inj = f"injection_task_{m['inj']}" if m["inj"] else None
    return AgentDojoCell(m["suite"], f"user_task_{m['user']}", inj, int(m["repeat"]))


@lru_cache(maxsize=1)
def suites() -> dict[str, Any]:
    from agentdojo.task_suite.load_suites import get_suites

    return dict(get_suites(BENCHMARK_VERSION))


def _number(task_id: str) -> int:
    return int(task_id.rsplit("_", 1)[1])


def all_cells(*, crossed: bool = False, repeats: int = 1, suite_names: tuple[str, ...] = ()) -> list[AgentDojoCell]:
    """Every user task of every suite (97 in v1.2.1); ``crossed`` adds each × each injection task."""
    out: list[AgentDojoCell] = []
    for name, suite in sorted(suites().items()):
        if suite_names and name not in suite_names:
            continue
        for uid in sorted(suite.user_tasks, key=_number):
            injections = [None, *sorted(suite.injection_tasks, key=_number)] if crossed else [None]
            for iid in injections:
                for r in range(1, repeats + 1):
                    out.append(AgentDojoCell(name, uid, iid, r))
    return out


class _NoPipeline:
    """AgentDojo's attacks ask their target pipeline for a name; ours is not theirs."""

    name = "assistant-eval"


@lru_cache(maxsize=None)
def _attack(suite_name: str, attack: str) -> Any:
    from agentdojo.attacks.attack_registry import load_attack

    return load_attack(attack, suites()[suite_name], _NoPipeline())  # type: ignore[arg-type]


def injections_for(cell: AgentDojoCell, attack: str = DEFAULT_ATTACK) -> dict[str, str]:
    """The injection texts of a crossed cell (AgentDojo's attack), none for a benign one."""
    if cell.injection_task is None:
        return {}
    suite = suites()[cell.suite]
    return dict(_attack(cell.suite, attack).attack(suite.user_tasks[cell.user_task],
                                                   suite.injection_tasks[cell.injection_task]))


@lru_cache(maxsize=64)
def _injected_environment(suite_name: str, injections: tuple[tuple[str, str], ...]) -> Any:
    # Reading and validating a suite's YAML takes a third of a second: done once per text set.
    return suites()[suite_name].load_and_inject_default_environment(dict(injections))


def start_environment(cell: AgentDojoCell, attack: str = DEFAULT_ATTACK) -> Any:
    """The environment the cell starts from: the suite's, injected, then the user task's own set-up
    (a fresh deep copy every time: a cell never shares objects with another)."""
    suite = suites()[cell.suite]
    env = _injected_environment(cell.suite, tuple(sorted(injections_for(cell, attack).items())))
    return suite.user_tasks[cell.user_task].init_environment(env.model_copy(deep=True))
