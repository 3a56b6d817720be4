"""AgentDojo's record, and a programmatic front for one cell (issue 16, 25).

One cell: the cell's start environment behind ``AgentDojoWorld``, the suite's tools offered
with their JSON schemas, the conversation of the run's ``AgentDojoSettings`` (``conversation.py``:
AgentDojo's own by default, with its defense from ``defenses.py``; ``level_for`` lives there),
the user task's prompt as the one user turn (AgentDojo has no simulated user), and any of our
presets as the assistant. The cell runs in the one session every suite shares
(``run.session.RunSession`` with ``suite.py``'s ``AgentDojoSuite``): a checkpoint before every
request (``partial/<cell>.json``), ``--resume`` from the pending request byte for byte, stops,
``spent.json``, usage, budgets and pacing as for the calibration world. The finished record is
``cells/<cell>.json`` (``assistant-eval.agentdojo-cell/1``, docs/agentdojo.md; ``cell_record``).

``AgentDojoRun`` and ``run_cell`` run single cells from Python (tests, notebooks) through that
same session, which the caller hands in (``make_session=run.session.RunSession``): a suite is
below the run and never imports it (issue 32). It reuses the conversation and provider layers;
it never imports the grading stage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_assistant_eval.conversation.loop import Conversation, Limits, LoopState
from pytest_assistant_eval.suites.plan import ModelSpec
from pytest_assistant_eval.suites.agentdojo.backend import diff_environments
from pytest_assistant_eval.suites.agentdojo.cells import AgentDojoCell, AgentDojoCellSpec, AgentDojoOptions
from pytest_assistant_eval.suites.agentdojo.conversation import level_for
from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings

__all__ = ["AgentDojoRun", "RECORD_FORMAT", "RUN_FORMAT", "run_cell", "level_for", "cell_record",
           "settings_fields"]  # level_for: conversation.py's, kept importable here

RECORD_FORMAT = "assistant-eval.agentdojo-cell/1"
#: run.json of an AgentDojo folder: the shared layout (``identity``, ``runs``) plus benchmark,
#: the settings' fields (``settings_fields``), planned and selection (docs/agentdojo.md).
RUN_FORMAT = "assistant-eval.agentdojo-run/2"


def settings_fields(settings: AgentDojoSettings, model: ModelSpec) -> dict[str, Any]:
    """What run.json and every record carry of the run's set-up: agentdojo and benchmark versions,
    attack, defense, conversation, comparable (and not_comparable), and AgentDojo's pipeline name."""
    return {**settings.to_dict(), "pipeline_name": settings.pipeline_name(model.model)}


@dataclass
class AgentDojoRun:
    """Single AgentDojo cells from Python: where they write, which model, how the run is set up.

    Each ``run_cell`` goes through one session of the AgentDojo suite, made on first use by
    ``make_session(RunOptions)`` (``run.session.RunSession``: the caller, a front door, chose
    the run); ``_provider`` may be set to an assistant of one's own before the first cell.
    """

    out: Path
    model: ModelSpec
    make_session: Callable[[Any], Any]
    settings: AgentDojoSettings = field(default_factory=AgentDojoSettings)
    resume: bool = False
    pace: float | None = None
    stream: bool = True
    max_requests_per_day: int | None = None
    limits: Limits | None = None  # unused: the conversation's own (conversation.limits_for)
    ledger: Path | None = None  # unused: the session keeps the run's ledger in out/.ledger.json
    _provider: Any = None
    _session: Any = None

    @property
    def attack(self) -> str:
        return self.settings.attack

    def session(self) -> Any:
        if self._session is None:
            from pytest_assistant_eval.suites.plan import RunOptions

            s = self.settings
            options = RunOptions(world=None, out=self.out, models=(self.model,), calibration=None,
                                 resume=self.resume, stream=self.stream, pace=self.pace or 0.0,
                                 max_requests_per_day=self.max_requests_per_day, suite="agentdojo",
                                 suite_options=AgentDojoOptions(attack=s.attack, benchmark_version=s.benchmark_version,
                                                                defense=s.defense, conversation=s.conversation))
            self._session = self.make_session(options)
        return self._session


def cell_record(cell: AgentDojoCell, model: ModelSpec, settings: AgentDojoSettings, system: str, prompt: str,
                final: LoopState, conversation: Conversation, world: Any, start_state: Any, end_state: Any,
                resumes: int = 0) -> dict[str, Any]:
    """A finished cell's record (``assistant-eval.agentdojo-cell/1``); ``system``: the system
    message sent. The session adds resume, requests_by_day and attempts."""
    answer = next((t["final"] for t in reversed(final.turns) if t.get("final")), "")
    return {
        "format": RECORD_FORMAT, "cell": cell.cell_id, **settings_fields(settings, model),
        "suite": cell.suite, "user_task": cell.user_task, "injection_task": cell.injection_task,
        "attack": settings.attack if cell.injection_task else None, "repeat": cell.repeat,
        "model": {"preset": model.preset, "model": model.model, "route": model.route,
                  "label": model.label},
        "system": system, "prompt": prompt, "answer": answer, "stop_reason": final.stop, "turns": final.turns,
        "transcript": final.transcript, "service_log": [e.to_dict() for e in world.log],
        "tools": [{"name": t.name, **{k: getattr(t, k) for k in ("consequential", "affects_others", "spends_money")}}
                  for t in world.list_tools()],
        "state": {"diff": [c.to_dict() for c in diff_environments(start_state, end_state)], "final": end_state},
        "requests": conversation.requests_log, "resumes": resumes,
    }


def run_cell(run: AgentDojoRun, cell: AgentDojoCell) -> Path:
    """Run one cell (or continue it from its checkpoint) and write its record; returns the record's path.

    A provider's stop keeps the checkpoint (or not) as in any run, and raises ``RuntimeError``
    with the session's words: there is no record to return.
    """
    session = run.session()
    label = run.model.label
    if run._provider is not None:
        session.providers.cache[label] = run._provider
    spec = AgentDojoCellSpec(label, cell)
    result = session.run_cell(spec)
    run._provider = session.providers.cache.get(label)
    path = session.record_path(spec)
    if result.status != "done" or not path.exists():
        raise RuntimeError(result.message or f"{cell.cell_id}: {result.status}")
    return path
