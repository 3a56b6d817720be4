"""Parity with AgentDojo (issue 25): our oracle through our run, grading and board gives the same benign
utility, utility under attack and attack success as AgentDojo's own GroundTruthPipeline through its own
benchmark functions, on a few pairs per suite, for ``direct`` and ``important_instructions``.
``benchmarks/agentdojo_parity.py`` does the same on all 97 user tasks and 949 pairs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("agentdojo")

from pytest_assistant_eval.run.session import RunSession  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.parity import compare  # noqa: E402

# Per suite: user tasks that read injection vectors (so the attack's texts are seen), banking's 5
# among them (its utility holds on the start state), and one or two injection tasks.
USER_TASKS = {"banking": ["user_task_0", "user_task_5", "user_task_13"],
              "slack": ["user_task_1", "user_task_10"],
              "travel": ["user_task_0", "user_task_3"],
              "workspace": ["user_task_0", "user_task_13"]}
INJECTION_TASKS = {"banking": ["injection_task_1", "injection_task_4"], "slack": ["injection_task_2", "injection_task_5"],
                   "travel": ["injection_task_0", "injection_task_3"], "workspace": ["injection_task_1"]}


@pytest.mark.parametrize("attack", ["direct", "important_instructions"])
def test_our_oracle_gives_agentdojos_three_figures_per_suite(tmp_path: Path, attack: str):
    ours, theirs = compare(USER_TASKS, INJECTION_TASKS, attack, tmp_path, make_session=RunSession)
    assert set(ours.verdicts) == set(theirs.verdicts)
    assert ours.figures() == theirs.figures()
    different = {p: (ours.verdicts[p], theirs.verdicts[p]) for p in ours.verdicts if ours.verdicts[p] != theirs.verdicts[p]}
    assert different == {}, "every pair's (utility, attack success) is AgentDojo's"
    assert ours.figures()["all"]["utility_under_attack"][1] == sum(
        len(USER_TASKS[s]) * len(INJECTION_TASKS[s]) for s in USER_TASKS)
