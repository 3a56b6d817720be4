"""Our oracle's AgentDojo figures against AgentDojo's own ground-truth run of the same pairs (issue 25).

Both sides run the same user tasks, crossed with the same injection tasks, under the same
attack and benchmark version:

* **ours**: the ``scripted:oracle`` reference assistant through our run (``run.run_cell``: our
  loop, our world backend, our records), graded by ``grade.grade_record`` and counted by the
  board (``board.board_rows``), exactly as ``agentdojo run | grade | board`` does;
* **AgentDojo's**: its ``GroundTruthPipeline`` through its own ``benchmark`` functions
  (``run_task_without_injection_tasks`` for the benign cells, ``run_task_with_injection_tasks``
  for the crossed ones), the attack made by AgentDojo's ``load_attack`` for a pipeline named as
  our run names the model (``cells.attack_model_name``).

``compare`` returns both sides' benign utility, utility under attack and attack success per
suite (and each pair's verdicts, so a difference can be found), with both run times.
``tests/test_agentdojo_parity.py`` runs a few pairs per suite; ``benchmarks/agentdojo_parity.py``
runs them all. It writes only under the folder it is given.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence
from unittest.mock import patch

__all__ = ["Side", "compare", "ours", "agentdojos", "MODEL"]

#: The reference assistant compared: it replays each user task's ground truth, as AgentDojo's pipeline does.
MODEL = "oracle"

Pair = tuple[str, str, str | None]  # (suite, user task, injection task or None)
Counts = dict[str, tuple[int, int]]  # figure -> (k, n)


@dataclass
class Side:
    """One side's verdicts per pair, its figures per suite (k, n), and how long it took."""

    name: str
    seconds: float
    verdicts: dict[Pair, tuple[bool, bool | None]] = field(default_factory=dict)  # (utility, attack success)

    def figures(self) -> dict[str, Counts]:
        """Per suite and over all suites: benign utility, utility under attack, attack success as (k, n)."""
        out: dict[str, Counts] = {}
        for suite in [*sorted({p[0] for p in self.verdicts}), "all"]:
            mine = {p: v for p, v in self.verdicts.items() if suite in ("all", p[0])}
            benign = [u for p, (u, _) in mine.items() if p[2] is None]
            crossed = [(u, a) for p, (u, a) in mine.items() if p[2] is not None]
            out[suite] = {"benign_utility": (sum(benign), len(benign)),
                          "utility_under_attack": (sum(u for u, _ in crossed), len(crossed)),
                          "attack_success": (sum(bool(a) for _, a in crossed), len(crossed))}
        return out


def _pairs(user_tasks: dict[str, Sequence[str]], injection_tasks: dict[str, Sequence[str]]) -> list[Pair]:
    return [(suite, u, i) for suite, tasks in sorted(user_tasks.items()) for u in tasks
            for i in (None, *injection_tasks.get(suite, ()))]


def ours(pairs: Sequence[Pair], attack: str, out: Path, benchmark_version: str | None = None, *,
         make_session: Callable[[Any], Any]) -> Side:
    """Our oracle through our run and grading; the figures as our board counts them (``make_session``:
    the front door's session maker, ``run.session.RunSession``: a suite never imports the run)."""
    from pytest_assistant_eval.suites.plan import ModelSpec
    from pytest_assistant_eval.suites.agentdojo.board import ALL_SUITES, board_rows
    from pytest_assistant_eval.suites.agentdojo.cells import AgentDojoCell
    from pytest_assistant_eval.suites.agentdojo.grade import grade_record
    from pytest_assistant_eval.suites.agentdojo.run import AgentDojoRun, run_cell
    from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings
    from pytest_assistant_eval.records import read_json

    started = time.perf_counter()
    version = {"benchmark_version": benchmark_version} if benchmark_version else {}
    run = AgentDojoRun(out=out, model=ModelSpec("scripted", MODEL), make_session=make_session,
                       settings=AgentDojoSettings(attack=attack, **version))
    grades = [grade_record(read_json(run_cell(run, AgentDojoCell(s, u, i)))) for s, u, i in pairs]
    side = Side("ours", time.perf_counter() - started)
    side.verdicts = {(g.suite, g.user_task, g.injection_task): (g.utility, g.attack_success) for g in grades}
    # The board must count what the verdicts say: its figures are the ones a user reads.
    board = {(r.suite, f): (r.figures[f].successes or 0, r.figures[f].n) for r in board_rows([g.to_dict() for g in grades])
             for f in r.figures}
    for suite, counts in side.figures().items():
        for figure, kn in counts.items():
            assert board[(ALL_SUITES if suite == "all" else suite, figure)] == kn, (suite, figure)
    return side


def agentdojos(pairs: Sequence[Pair], attack: str, logdir: Path, benchmark_version: str | None = None) -> Side:
    """AgentDojo's GroundTruthPipeline through its own benchmark functions, with its own attack."""
    from agentdojo.agent_pipeline.ground_truth_pipeline import GroundTruthPipeline
    from agentdojo.attacks.attack_registry import load_attack
    from agentdojo.benchmark import run_task_with_injection_tasks, run_task_without_injection_tasks
    from agentdojo.logging import OutputLogger
    from agentdojo.models import MODEL_NAMES
    from agentdojo.task_suite.load_suites import get_suite

    from pytest_assistant_eval.suites.agentdojo.cells import attack_model_name
    from pytest_assistant_eval.suites.agentdojo.versions import default_benchmark_version

    version = benchmark_version or default_benchmark_version()
    logdir.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    side = Side("agentdojo", 0.0)
    by_task: dict[tuple[str, str], list[str | None]] = {}
    for suite, user, injection in pairs:
        by_task.setdefault((suite, user), []).append(injection)
    # AgentDojo's trace logger writes beside its package unless a logger with a folder is active;
    # an unnamed pipeline makes it log nothing (and warn that it cannot, which is said once here).
    with OutputLogger(str(logdir)), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for (suite_name, user), injections in by_task.items():
            suite = get_suite(version, suite_name)
            task = suite.get_user_task_by_id(user)
            pipeline = GroundTruthPipeline(task)
            if None in injections:
                utility, _ = run_task_without_injection_tasks(suite, pipeline, task, None, True, version)
                side.verdicts[(suite_name, user, None)] = (bool(utility), None)
            crossed = [i for i in injections if i is not None]
            if not crossed:
                continue
            named = GroundTruthPipeline(task)
            named.name = MODEL
            with patch.dict(MODEL_NAMES, {MODEL: attack_model_name(MODEL)}):
                attack_object = load_attack(attack, suite, named)
            utilities, securities = run_task_with_injection_tasks(suite, pipeline, task, attack_object, None, True,
                                                                  crossed, version)
            for (u, i), utility in utilities.items():
                side.verdicts[(suite_name, u, i)] = (bool(utility), bool(securities[(u, i)]))
    side.seconds = time.perf_counter() - started
    return side


def compare(user_tasks: dict[str, Sequence[str]], injection_tasks: dict[str, Sequence[str]], attack: str,
            folder: Path, benchmark_version: str | None = None, *,
            make_session: Callable[[Any], Any]) -> tuple[Side, Side]:
    """Both sides on every user task given, benign and crossed with every injection task given,
    at one benchmark version (None: the installed agentdojo's default, on both sides)."""
    pairs = _pairs(user_tasks, injection_tasks)
    return (ours(pairs, attack, folder / "ours", benchmark_version, make_session=make_session),
            agentdojos(pairs, attack, folder / "agentdojo-logs", benchmark_version))
