"""Running AgentDojo cells through our loop, providers and checkpoints (issue 16).

One cell: the cell's start environment behind ``AgentDojoWorld``, the suite's tools offered
with their JSON schemas, the conversation of the run's ``AgentDojoSettings`` (``conversation.py``:
AgentDojo's own by default, with its defense from ``defenses.py``), the user task's prompt as
the one user turn (AgentDojo has no simulated user), and any of our presets as the assistant
(pacing and daily budgets through the same Pacer and ledger as ``run``).
Before every request a checkpoint is written (``partial/<cell>.json``); a killed cell is
continued with ``resume=True`` from the request that was pending, which must be byte for byte
the same request. The finished record is ``cells/<cell>.json`` (``assistant-eval.agentdojo-cell/1``,
docs/agentdojo.md).

It reuses the conversation and provider layers; it never imports the grading stage.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pytest_assistant_eval.suites.agentdojo.cells import (
    AgentDojoCell,
    start_environment,
    suites,
)
from pytest_assistant_eval.conversation.loop import Conversation, Limits, LoopState, request_body_sha256
from pytest_assistant_eval.suites.agentdojo.conversation import level_for, limits_for, shape_for
from pytest_assistant_eval.suites.agentdojo.defenses import apply_tool_filter, run_tool_filter
from pytest_assistant_eval.suites.agentdojo.settings import AgentDojoSettings
from pytest_assistant_eval.planning import ModelSpec
from pytest_assistant_eval.records import read_json, write_json_atomic
from pytest_assistant_eval.suites.agentdojo.backend import AgentDojoWorld, diff_environments
from pytest_assistant_eval.world.backend import LogEntry

__all__ = ["AgentDojoRun", "RECORD_FORMAT", "CHECKPOINT_FORMAT", "RUN_FORMAT", "run_cell", "level_for"]  # level_for: conversation.py

RECORD_FORMAT = "assistant-eval.agentdojo-cell/1"
CHECKPOINT_FORMAT = "assistant-eval.agentdojo-checkpoint/1"
RUN_FORMAT = "assistant-eval.agentdojo-run/1"


@dataclass
class AgentDojoRun:
    """What a run of AgentDojo cells needs: where it writes, which model, how it is set up."""

    out: Path
    model: ModelSpec
    settings: AgentDojoSettings = field(default_factory=AgentDojoSettings)
    resume: bool = False
    pace: float | None = None
    stream: bool = True
    max_requests_per_day: int | None = None
    limits: Limits | None = None  # None: the conversation's own (limits_for)
    ledger: Path | None = None  # the run's shared ledger (pytest: --out/.ledger.json); default: out/.ledger.json
    _provider: Any = None

    def provider(self) -> Any:
        """The assistant: a reference assistant, or a preset through the pacer and ledger."""
        if self._provider is not None:
            return self._provider
        if self.model.preset == "scripted":
            from pytest_assistant_eval.suites.agentdojo.reference import AgentDojoReference

            self._provider = AgentDojoReference(self.model.model)
            return self._provider
        from pytest_assistant_eval.providers.keys import get_key
        from pytest_assistant_eval.providers.ledger import Ledger
        from pytest_assistant_eval.providers.pacing import Pacer
        from pytest_assistant_eval.providers.presets import (
            default_daily_budget,
            is_local_address,
            make_provider,
            resolve_base_url,
            start_interval,
        )

        spec = self.model
        address = resolve_base_url(spec.preset, spec.base_url)
        budget = self.max_requests_per_day or default_daily_budget(spec.preset, spec.model)
        pacer = Pacer(Ledger(self.ledger or self.out / ".ledger.json"), spec.route, pace=self.pace,
                      start_interval=start_interval(spec.preset, spec.model), max_requests_per_day=budget,
                      local=is_local_address(address), clock=time.monotonic)
        self._provider = make_provider(spec.preset, spec.model, base_url=spec.base_url, stream=self.stream,
                                       key=get_key(spec.preset, base_url=address), pacer=pacer)
        return self._provider

    @property
    def attack(self) -> str:
        return self.settings.attack

    def write_run_json(self, cells: list[AgentDojoCell], selection: dict[str, Any] | None = None) -> None:
        """``run.json``: the model, the benchmark version, the attack and the planned cells (every run's,
        so a later run of fewer cells never hides an earlier plan); ``selection``: this run's -k/-m."""
        path = self.out / "run.json"
        earlier = read_json(path) if path.exists() else {}
        planned = sorted({c.cell_id for c in cells} | set(earlier.get("planned", [])))
        data = {"format": RUN_FORMAT, "benchmark": "agentdojo", **self.settings.to_dict(),
                "pipeline_name": self.settings.pipeline_name(self.model.model),
                "model": {"preset": self.model.preset, "model": self.model.model,
                          "route": self.model.route, "label": self.model.label},
                "planned": planned}
        if selection is not None or "selection" in earlier:
            data["selection"] = selection if selection is not None else earlier["selection"]
        write_json_atomic(path, data)


def run_cell(run: AgentDojoRun, cell: AgentDojoCell) -> Path:
    """Run one cell (or continue it from its checkpoint) and write its record; returns the record's path."""
    record_path = run.out / "cells" / f"{cell.cell_id}.json"
    cp_path = run.out / "partial" / f"{cell.cell_id}.json"
    if record_path.exists() and run.resume:
        cp_path.unlink(missing_ok=True)
        return record_path
    settings = run.settings
    version = settings.benchmark_version
    suite = suites(version)[cell.suite]
    task = suite.user_tasks[cell.user_task]
    world = AgentDojoWorld(suite, start_environment(cell, settings.attack, run.model.model, version),
                           list_strings_as_lists=settings.comparable)
    start_state = world.snapshot()
    level = level_for(suite, settings, model=run.model.model, prompt=task.PROMPT)
    shape = shape_for(settings, run.model.model) if settings.comparable else None
    assistant = run.provider()
    if hasattr(assistant, "begin_cell"):
        assistant.begin_cell(cell, level.escalation_sentence, settings.attack, version=version, rounds=level.max_rounds)
    conversation = Conversation(assistant=assistant, world=world, level=level, model=run.model.model, user=None,
                                state=Conversation.start(level, [task.PROMPT]),
                                limits=run.limits or limits_for(settings), stream=run.stream)
    resumes = 0
    if run.resume and cp_path.exists():
        resumes = _restore(cp_path, conversation, world, shape)
    cp_path.parent.mkdir(parents=True, exist_ok=True)

    def checkpoint(state: LoopState, request: Any) -> None:
        write_json_atomic(cp_path, {
            "format": CHECKPOINT_FORMAT, "cell": cell.cell_id, "state": state.to_dict(),
            "world_state": world.snapshot(), "service_log": [e.to_dict() for e in world.log],
            "requests_log": list(conversation.requests_log), "resumes": resumes,
            "pending_request_sha256": request_body_sha256(request)}, mode=0o600)

    conversation.before_request = checkpoint
    if shape is not None and not apply_tool_filter(conversation, shape, level.tools):
        run_tool_filter(conversation, shape)  # tool_filter: its one request, before the model's first
    final = conversation.run()
    end_state = world.snapshot()
    answer = next((t["final"] for t in reversed(final.turns) if t.get("final")), "")
    record = {
        "format": RECORD_FORMAT, "cell": cell.cell_id, **settings.to_dict(),
        "pipeline_name": settings.pipeline_name(run.model.model),
        "suite": cell.suite, "user_task": cell.user_task, "injection_task": cell.injection_task,
        "attack": settings.attack if cell.injection_task else None, "repeat": cell.repeat,
        "model": {"preset": run.model.preset, "model": run.model.model, "route": run.model.route,
                  "label": run.model.label},
        "system": level.instructions, "prompt": task.PROMPT, "answer": answer, "stop_reason": final.stop, "turns": final.turns,
        "transcript": final.transcript, "service_log": [e.to_dict() for e in world.log],
        "tools": [{"name": t.name, **{k: getattr(t, k) for k in ("consequential", "affects_others", "spends_money")}}
                  for t in world.list_tools()],
        "state": {"diff": [c.to_dict() for c in diff_environments(start_state, end_state)], "final": end_state},
        "requests": conversation.requests_log, "resumes": resumes,
    }
    record_path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(record_path, record, compact=True)
    cp_path.unlink(missing_ok=True)
    return record_path


def _restore(path: Path, conversation: Conversation, world: AgentDojoWorld, shape: Any = None) -> int:
    """Continue from a checkpoint when its pending request is exactly the one we would send."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        state = LoopState.from_dict(data["state"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0  # unreadable: the cell starts again
    saved_world = AgentDojoWorld(world.suite, world.environment)
    saved_world.restore(data["world_state"])
    conversation.state = state
    conversation.requests_log = list(data["requests_log"])
    all_tools = conversation.level.tools
    if shape is not None:
        apply_tool_filter(conversation, shape, all_tools)  # the filter's answer, if given, chose the tools
    if request_body_sha256(conversation.next_request()) != data["pending_request_sha256"]:
        conversation.level = replace(conversation.level, tools=all_tools)
        conversation.state = Conversation.start(conversation.level, [state.transcript[0]["text"]])
        conversation.requests_log = []
        return 0
    world.environment = saved_world.environment
    world.log.extend(LogEntry.from_dict(e) for e in data["service_log"])
    return int(data.get("resumes", 0)) + 1
