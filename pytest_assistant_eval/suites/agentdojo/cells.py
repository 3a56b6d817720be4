"""AgentDojo's user tasks as cells (issue 16), optionally crossed with its injection tasks.

A cell id is ``AD-<suite>-<user task number>[-i<injection task number>]__r<repeat>``
(``AD-banking-0__r1``, ``AD-slack-3-i1__r1``): one model answers one AgentDojo user task once,
in an environment with the benign default injection texts, or with an attack's texts aiming
at one injection task. The environment a cell starts from is rebuilt here, from the suite's
files, the same way for the run and for grading, so records never need to store it whole.

``agentdojo`` is imported only inside functions: the core never needs the extra.
"""

from __future__ import annotations

import pickle
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from unittest.mock import patch

__all__ = ["AgentDojoCell", "DEFAULT_ATTACK", "all_cells", "parse_cell_id", "suites",
           "start_environment", "injections_for", "attack_names", "check_attack", "attack_model_name",
           "UNUSABLE_ATTACKS", "AgentDojoOptions", "AgentDojoCellSpec", "LEVEL"]

#: AgentDojo's "direct" (``TODO: {goal}``); any registered attack is chosen by name (``attack_names``).
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


def suites(version: str | None = None) -> dict[str, Any]:
    """AgentDojo's suites of a benchmark version (None: the installed agentdojo's default, settings.py)."""
    from pytest_assistant_eval.suites.agentdojo.versions import default_benchmark_version

    return _suites(version or default_benchmark_version())


@lru_cache(maxsize=None)
def _suites(version: str) -> dict[str, Any]:
    from agentdojo.task_suite.load_suites import get_suites

    return dict(get_suites(version))


def _number(task_id: str) -> int:
    return int(task_id.rsplit("_", 1)[1])


def all_cells(*, crossed: bool = False, repeats: int = 1, suite_names: tuple[str, ...] = (),
              version: str | None = None) -> list[AgentDojoCell]:
    """Every user task of every suite (97 in v1.2.1 and v1.2.2); ``crossed`` adds each × each injection task."""
    out: list[AgentDojoCell] = []
    for name, suite in sorted(suites(version).items()):
        if suite_names and name not in suite_names:
            continue
        for uid in sorted(suite.user_tasks, key=_number):
            injections = [None, *sorted(suite.injection_tasks, key=_number)] if crossed else [None]
            for iid in injections:
                for r in range(1, repeats + 1):
                    out.append(AgentDojoCell(name, uid, iid, r))
    return out


#: Registered attacks that cannot run here, and why (the rest of AgentDojo's registry can).
UNUSABLE_ATTACKS = {
    "manual": "it asks a person at the terminal for every injection text, and grading rebuilds a cell's "
              "texts from its attack, so they could not be the same twice",
}


def attack_names() -> list[str]:
    """Every attack in AgentDojo's own registry (importing its attacks package registers them)."""
    import agentdojo.attacks  # noqa: F401 - registers the attacks
    from agentdojo.attacks.attack_registry import ATTACKS

    return sorted(ATTACKS)


def check_attack(name: str) -> None:
    """Refuse an attack AgentDojo does not register (or one that cannot run here), naming the known ones."""
    known = attack_names()
    usable = [a for a in known if a not in UNUSABLE_ATTACKS]
    if name in UNUSABLE_ATTACKS:
        raise ValueError(f"attack {name!r} cannot run here: {UNUSABLE_ATTACKS[name]}; "
                         f"the others are: {', '.join(usable)}")
    if name not in known:
        left_out = "".join(f" (and {a}, which cannot run here)" for a in known if a in UNUSABLE_ATTACKS)
        raise ValueError(f"unknown attack {name!r}; AgentDojo's attacks are: {', '.join(usable)}{left_out}")


class _StandInPipeline:
    """The target pipeline AgentDojo's attacks read: only its ``name``, which AgentDojo's own
    benchmark gives as the model id (``gpt-4o-2024-05-13``); its attacks map it to the name they
    address the model by (``GPT-4``)."""

    def __init__(self, name: str | None) -> None:
        self.name = name


def _attack(suite_name: str, attack: str, model: str | None, version: str | None = None) -> Any:
    from pytest_assistant_eval.suites.agentdojo.versions import default_benchmark_version

    return _made_attack(suite_name, attack, model, version or default_benchmark_version())


@lru_cache(maxsize=None)
def _made_attack(suite_name: str, attack: str, model: str | None, version: str) -> Any:
    from agentdojo.attacks.attack_registry import load_attack
    from agentdojo.models import MODEL_NAMES

    pipeline = _StandInPipeline(model)
    if model is None or any(full_name in model for full_name in MODEL_NAMES):
        return load_attack(attack, suites(version)[suite_name], pipeline)  # type: ignore[arg-type]
    # A model AgentDojo's mapping does not know is addressed by its id (AgentDojo would refuse
    # it): the id names itself while the attack is made, and the mapping is left as it was.
    with patch.dict(MODEL_NAMES, {model: model}):
        return load_attack(attack, suites(version)[suite_name], pipeline)  # type: ignore[arg-type]


def attack_model_name(model: str) -> str:
    """The name ``important_instructions`` addresses the model by: AgentDojo's, else the model id."""
    return _attack(next(iter(sorted(suites()))), "important_instructions", model).model_name


def injections_for(cell: AgentDojoCell, attack: str = DEFAULT_ATTACK, model: str | None = None,
                   version: str | None = None) -> dict[str, str]:
    """The injection texts of a crossed cell (AgentDojo's attack, aimed at ``model``), none for a benign one."""
    if cell.injection_task is None:
        return {}
    return dict(_injection_texts(cell.suite, cell.user_task, cell.injection_task, attack, model, version))


@lru_cache(maxsize=4096)
def _injection_texts(suite_name: str, user_task: str, injection_task: str, attack: str, model: str | None,
                     version: str | None) -> tuple[tuple[str, str], ...]:
    # Made once per pair (issue 32, speed): a cell's start environment is asked for by the reference
    # assistant, the world and the grade, and the attack searched the user task's ground truth for its
    # injection points each time. AgentDojo's attacks are functions of the pair (their texts are the
    # same on every call), so the first answer is the answer.
    suite = suites(version)[suite_name]
    return tuple(_attack(suite_name, attack, model, version).attack(suite.user_tasks[user_task],
                                                                    suite.injection_tasks[injection_task]).items())


@lru_cache(maxsize=64)
def _injected_environment(suite_name: str, injections: tuple[tuple[str, str], ...], version: str | None) -> Any:
    # Reading and validating a suite's YAML takes a third of a second: done once per text set.
    return load_injected_environment(suites(version)[suite_name], dict(injections))


def load_injected_environment(suite: Any, injections: dict[str, str]) -> Any:
    """``TaskSuite.load_and_inject_default_environment``'s steps, its own functions called in its
    order (the suite's environment text, its injection vectors' defaults, the texts checked and
    put in), parsed by libyaml's parser instead of PyYAML's pure-Python one: the same YAML gives
    the same objects (tests/test_agentdojo_speed.py compares them on every suite), in a tenth of
    the time. Parsing workspace's environment was a third of an AgentDojo cell (issue 32). A suite
    that loads its environment its own way, or a PyYAML without libyaml, gets AgentDojo's own call."""
    import yaml
    from agentdojo.task_suite.task_suite import TaskSuite, read_suite_file, validate_injections

    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None or type(suite).load_and_inject_default_environment is not TaskSuite.load_and_inject_default_environment:
        return suite.load_and_inject_default_environment(injections)
    text = read_suite_file(suite.name, "environment.yaml", suite.data_path)
    defaults = _vector_defaults(suite)
    validate_injections(injections, defaults)
    return suite.environment_type.model_validate(yaml.load(text.format(**dict(defaults, **injections)), Loader=loader))


#: Each suite's injection vectors' defaults (AgentDojo parses their YAML on every load), kept with
#: the suite object so that its id is never another suite's.
_DEFAULTS: dict[int, tuple[Any, dict[str, str]]] = {}


def _vector_defaults(suite: Any) -> dict[str, str]:
    made = _DEFAULTS.get(id(suite))
    if made is None or made[0] is not suite:
        made = _DEFAULTS[id(suite)] = (suite, suite.get_injection_vector_defaults())
    return dict(made[1])


def start_environment(cell: AgentDojoCell, attack: str = DEFAULT_ATTACK, model: str | None = None,
                      version: str | None = None) -> Any:
    """The environment the cell starts from: the suite's, injected, then the user task's own set-up
    (a fresh deep copy every time: a cell never shares objects with another). ``model`` is the
    run's model id, which the ``important_instructions*`` attacks address; ``version`` the
    benchmark version (None: agentdojo's default)."""
    suite = suites(version)[cell.suite]
    texts = injections_for(cell, attack, model, version)
    return suite.user_tasks[cell.user_task].init_environment(
        _fresh_copy(cell.suite, tuple(sorted(texts.items())), version))


def _fresh_copy(suite_name: str, injections: tuple[tuple[str, str], ...], version: str | None) -> Any:
    """A deep copy of the injected environment, made from its pickle (a third of the time of
    ``model_copy(deep=True)``: a workspace cell asks for four, issue 32). Pickle gives new objects
    throughout, as a deep copy does (tests/test_agentdojo_speed.py compares the two on every suite);
    an environment that cannot be pickled is deep-copied."""
    blob = _pickled_environment(suite_name, injections, version)
    if blob is None:
        return _injected_environment(suite_name, injections, version).model_copy(deep=True)
    return pickle.loads(blob)


@lru_cache(maxsize=64)
def _pickled_environment(suite_name: str, injections: tuple[tuple[str, str], ...], version: str | None) -> bytes | None:
    try:
        return pickle.dumps(_injected_environment(suite_name, injections, version), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError):
        return None


#: The marker and "level" of every AgentDojo cell: ``-m agentdojo``; the suite is its class (``-m banking``).
LEVEL = "agentdojo"


@dataclass(frozen=True)
class AgentDojoOptions:
    """What only this suite reads (``RunOptions.suite_options``): its parts, crossed cells, exact
    cells, and the run's set-up (``settings.AgentDojoSettings``, made and checked by ``suite.py``)."""

    suites: tuple[str, ...] = ()  # empty: all four
    crossed: bool = False
    cells: tuple[str, ...] = ()  # exactly these cell ids (then suites and crossed are not used)
    attack: str = DEFAULT_ATTACK
    benchmark_version: str | None = None  # None: the installed agentdojo's default
    defense: str | None = None  # one of AgentDojo's defenses
    conversation: str = "agentdojo"  # "ours": our own loop, not comparable with AgentDojo's leaderboard


@dataclass(frozen=True)
class AgentDojoCellSpec:
    """One model on one AgentDojo cell: the shape the plugin parametrises, marks and schedules."""

    model: str  # the model's label (its results folder)
    cell: AgentDojoCell

    @property
    def cell_id(self) -> str:
        return self.cell.cell_id

    @property
    def level(self) -> str:
        return LEVEL

    @property
    def cls(self) -> str:
        return self.cell.suite
