"""The one session that runs cells of any suite: the plain module the plugin delegates to.

Nothing here imports pytest, and no suite's internals: a ``RunSession`` is made once per
process (controller or xdist worker) from ``RunOptions`` (``planning``); the suite
``options.suite`` names (``suites.make_suite``) plans its cells and answers for each cell.
The session only sequences the run's jobs, each in its own module:

* ``folders``: run.json and its plan, the selection, skips, set-aside records, world copies;
* ``provider_setup``: keys and data notices, the providers (pacer, ledger), a model's variants
  (``providers/variants.py``), usage;
* ``cell_checkpoints``: a fresh, saved (before every request) and restored checkpoint;
* ``cell_stops``: what a provider's stop does (kept, unsaved, not applicable; spent.json);
* ``cell_records``: the session's fields of every record, and the not-applicable records.

So skips, ``--resume``, stops and kept checkpoints, ``spent.json``, usage in ``run.json``,
daily budgets and pacing, ``--request-deadline`` and the progress counters are the same for
every suite.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from pytest_assistant_eval.console import shown
from pytest_assistant_eval.run import cell_checkpoints
from pytest_assistant_eval.run import cell_records
from pytest_assistant_eval.run import folders as run_folders
from pytest_assistant_eval.run.cell_stops import Stops
from pytest_assistant_eval.conversation.checkpoint import CheckpointJournal, checkpoint_path, counted_requests
from pytest_assistant_eval.conversation.loop import Conversation, Limits
from pytest_assistant_eval.suites.plan import (  # noqa: F401 - re-exported: the plugin and the CLI plan through runner
    KNOWN_PRESETS,
    CellResult,
    ModelSpec,
    RunOptions,
    UsageError,
    check_route,
    parse_models,
    results_dir,
)
from pytest_assistant_eval.run.provider_setup import USER_LABEL, Providers, take_attempts, today
from pytest_assistant_eval.providers.errors import ProviderError
from pytest_assistant_eval.providers.generation import apply_to_level
from pytest_assistant_eval.secret import Secrets
from pytest_assistant_eval.records import git_commit
from pytest_assistant_eval.run.folders import BROKEN_DIR, WORK_DIR  # noqa: F401 - re-exported
from pytest_assistant_eval.suites import make_suite, suite_module
from pytest_assistant_eval.suites.base import FinishedCell

__all__ = ["RunSession", "RunOptions", "ModelSpec", "CellResult", "UsageError", "skip_cells",
           "parse_models", "results_dir", "USER_LABEL"]


def skip_cells(options: RunOptions, skip: list[str], reason: str, unskip: list[str]) -> list[str]:
    """``--skip`` / ``--unskip``: needs the folder's identity options only (no key, no notice)."""
    if len(options.models) != 1:
        raise UsageError("--skip and --unskip work on one results folder: name one model")
    return run_folders.skip_cells(options, _plan_only(options), skip, reason, unskip)


def _plan_only(options: RunOptions) -> Any:
    """The suite's plan without what a run needs beyond the cell ids (skips need only them): the
    suite module's ``plan_only(options)`` where it has one, else the suite itself."""
    plan_only = getattr(suite_module(options.suite), "plan_only", None)
    return plan_only(options) if plan_only is not None else make_suite(options)


class RunSession:
    """Everything one process needs to run cells of one suite; made once per process."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self.today = today
        self.commit = git_commit()
        self.suite = make_suite(options, self.commit)
        self.cells = self.suite.cells
        self.marker_names = list(self.suite.marker_names)
        self.models = {spec.label: spec for spec in options.models}
        self.providers = Providers(options, self.models, self.ledger_path(), scripted=self.suite.scripted,
                                   data_source=self.suite.data_source)
        self.stops = Stops()
        self.requests_sent = 0  # requests this process sent (or was about to send), for the progress line
        from pytest_assistant_eval.results.skips import read_skips

        self._skips = {label: read_skips(results_dir(options, spec)) for label, spec in self.models.items()}
        self.providers.check_routes()

    # -- what the plugin and tests read ---------------------------------------------
    @property
    def start_lines(self) -> list[str]:
        return self.providers.start_lines

    @property
    def _providers(self) -> dict[str, Any]:
        return self.providers.cache

    @property
    def quota_used(self) -> set[str]:
        return self.stops.quota_used

    @property
    def routes_stopped(self) -> dict[str, str]:
        return self.stops.routes

    @property
    def world_identity(self) -> Any:
        return getattr(self.suite, "world_identity", None)

    def _secrets(self) -> Secrets:
        return self.providers.secrets()

    def identity(self, spec: ModelSpec) -> dict[str, Any]:
        return self.suite.identity(spec)

    def provider(self, spec: ModelSpec, name: str | None = None, options: dict[str, Any] | None = None) -> Any:
        return self.providers.provider(spec, name, options)

    # -- the folders (controller only) ------------------------------------------------
    def prepare_folders(self) -> None:
        """Write or extend each model's run.json before any cell runs (controller only)."""
        run_folders.prepare(self.options, self.suite, self.models, self.commit)

    def record_selection(self, selected: list[Any], keyword: str | None, markexpr: str | None) -> None:
        """The cells -k/-m selected are this run's plan in each run.json (controller only)."""
        run_folders.record_selection(self.options, self.suite, self.models, selected, keyword, markexpr)

    def record_path(self, cell: Any) -> Path:
        return run_folders.record_path(self.options, self.models[cell.model], cell.cell_id)

    def checkpoint_path(self, cell: Any) -> Path:
        return checkpoint_path(results_dir(self.options, self.models[cell.model]), cell.cell_id)

    def ledger_path(self) -> Path:
        """One ledger for the whole run (every model, every worker): budgets and pacing per route."""
        return self.options.out / ".ledger.json"

    def work_dir(self, spec: ModelSpec) -> Path:
        return run_folders.work_dir(self.options, spec)

    # -- one cell ---------------------------------------------------------------------
    def _before(self, cell: Any, path: Path, cp_path: Path, notes: list[str]) -> CellResult | None:
        """A cell that needs no conversation: finished earlier, not applicable, skipped, or left."""
        folder = results_dir(self.options, self.models[cell.model])
        if path.exists() and self.options.resume:
            moved = run_folders.set_aside_unreadable(folder, cell.cell_id, path, self.suite.record_format)
            if moved:
                notes.append(moved)
        na = cell_records.na_reason(path) if path.exists() and self.options.resume else None
        if na == "provider quota per request":  # S4.9: no later resume asks it (--unskip takes it back)
            return CellResult("na", f"{cell.cell_id}: not applicable (provider quota per request) in an earlier run")
        if path.exists() and self.options.resume and not cell_records.user_error(path) and na != "context":
            # S4.12: a cell not applicable for its context is probed again and asked once its setting fits
            cp_path.unlink(missing_ok=True)  # killed between writing the record and dropping the checkpoint
            return CellResult("done")  # finished in an earlier run: nothing to say
        # A run whose simulated user erred is asked again (S5.2); its record stays until replaced.
        skipped = self._skips.get(cell.model, {}).get(cell.cell_id)
        if skipped is not None:
            return CellResult("skipped", f"{cell.cell_id}: skipped by owner: {shown(skipped['reason'])}")
        return self.stops.left(cell.cell_id, self.models[cell.model].route)

    def _not_applicable_context(self, cell: Any, spec: ModelSpec, variant: Any) -> CellResult:
        """A setting whose variant does not fit: every cell of it is not applicable (context)."""
        if variant.na_fields is None:  # the variant could not even be loaded: nothing is known, nothing is saved
            self.stops.routes.setdefault(spec.route, f"{cell.cell_id}: {variant.why}")
            return CellResult("unsaved", f"{cell.cell_id}: nothing was saved for this cell: {variant.why}",
                              code="model")
        record = cell_records.context_na_record(self.suite.record_base(cell, spec), variant.why, variant.na_fields)
        cell_records.write_record(self.record_path(cell), record)
        return CellResult("na", f"{cell.cell_id}: {variant.why}")

    def run_cell(self, cell: Any) -> CellResult:
        try:
            return self._run_cell(cell)
        finally:
            self.providers.add_usage_to_folders(self.suite.name)  # run.json's usage as it grows (issue 31 G)

    def _run_cell(self, cell: Any) -> CellResult:
        path = self.record_path(cell)
        cp_path = self.checkpoint_path(cell)
        notes: list[str] = []
        early = self._before(cell, path, cp_path, notes)
        if early is not None:
            return early
        spec = self.models[cell.model]
        prepared = self.suite.prepare(cell, spec)
        variant = self.providers.variant(spec, cell.level)  # a provider's own variant of the setting, or None
        if variant is not None and variant.why:
            return self._not_applicable_context(cell, spec, variant)
        assistant = (self.provider(spec, variant.name, variant.options) if variant is not None
                     else self.provider(spec))
        prepared.begin(assistant)
        take_attempts(assistant)  # nothing of an earlier cell is counted as this cell's
        started_at = cell_checkpoints.now()
        workdir = run_folders.cell_work_dir(self.options, spec) if getattr(self.suite, "uses_work_dir", True) else None
        fingerprint = self.suite.fingerprint()
        try:
            world = prepared.open_world(workdir)
            try:
                start_state = world.snapshot()
                model_user = self.providers.user_provider if self.options.user_model is not None else None
                side = prepared.user(start_state, model_user)
                conversation = Conversation(assistant=assistant, world=world,
                                            level=apply_to_level(prepared.setting, spec.generation),
                                            model=spec.model, user=side.user,
                                            state=Conversation.start(prepared.setting, prepared.turns),
                                            limits=getattr(prepared, "limits", None) or Limits(),
                                            stream=self.options.stream)
                if side.check is not None:
                    conversation.user_check = side.check
                cp = cell_checkpoints.fresh(cell.cell_id, spec, fingerprint, prepared.setting_key, self.commit)
                is_restored = False
                if self.options.resume and cp_path.exists():
                    restored, why = cell_checkpoints.restore(
                        cp_path, spec, fingerprint, prepared.setting_key, conversation, world,
                        pace=self.options.pace, stream=self.options.stream, commit=self.commit,
                        start=prepared.start)
                    if restored is not None:
                        cp = restored
                        is_restored = True
                    else:
                        notes.append(f"{cell.cell_id}: started again: {why}")
                        # The requests it already sent stay counted (S4.8: once each). The old file
                        # stays until the first request's whole checkpoint replaces it (a rename), so a
                        # kill in between loses no count either.
                        cp["requests_by_day"] = counted_requests(cp_path)
                journal = CheckpointJournal(cp_path, durable=spec.preset != "scripted", secrets=self._secrets())

                def before_request(state: Any, request: Any) -> None:
                    self.providers.add_usage_to_folders(self.suite.name)  # run.json's usage as it grows (G)
                    self.requests_sent += 1
                    cell_checkpoints.save(journal, cp, state, request, conversation, world, start_state,
                                          self.today())

                conversation.before_request = before_request

                def on_attempt() -> None:
                    cell_checkpoints.file_attempt_now(journal, cp, conversation)
                    self.providers.add_usage_to_folders(self.suite.name)

                for provider in (assistant, getattr(side.user, "provider", None)):
                    if provider is not None and hasattr(provider, "on_attempt"):
                        provider.on_attempt = on_attempt
                try:
                    prepared.start(conversation, is_restored)  # a suite's own first step (a tool filter)
                    if hasattr(assistant, "bind_cell"):  # an agent (issue 33): its tools record into this cell
                        assistant.bind_cell(conversation, cell, is_restored)
                    final = conversation.run()
                except ProviderError as exc:
                    stopped = self._stopped(cell, spec, cp_path, cp, conversation, exc)
                    # Said whether the cell then finishes or stops again.
                    stopped.message = "\n".join([*notes, stopped.message]) if notes else stopped.message
                    return stopped
                end_state = world.snapshot()
                log = [entry.to_dict() for entry in world.log]
            finally:
                if hasattr(assistant, "end_cell"):
                    agent_fields = assistant.end_cell()  # the agent closed, its MCP server stopped
                world.close()
        finally:
            if workdir is not None:
                shutil.rmtree(workdir, ignore_errors=True)
        cell_checkpoints.file_attempts(cp, conversation)
        done = FinishedCell(cell, spec, final, conversation, world, start_state, end_state, log, started_at, cp)
        record = cell_records.add_session_fields(prepared.record(done), cp,
                                                 variant.record_fields if variant is not None else None)
        if hasattr(assistant, "end_cell"):
            record["agent"] = agent_fields  # docs/agents.md: which instructions, its usage, its error
            if agent_fields.get("error"):
                notes.append(f"{cell.cell_id}: the agent's turn raised ({agent_fields['error']}): the cell ended there")
        if record["attempts"]:
            from pytest_assistant_eval.run.spent import record_saved_attempts

            record_saved_attempts(results_dir(self.options, spec), cell.cell_id, record["attempts"],
                                  pace=self.options.pace, stream=self.options.stream, secrets=self._secrets())
        cell_records.write_record(path, record, self._secrets())
        cp_path.unlink(missing_ok=True)  # the checkpoint goes when the record is written
        return CellResult("done", "\n".join(notes))

    def _stopped(self, cell: Any, spec: ModelSpec, cp_path: Path, cp: dict[str, Any], conversation: Any,
                 exc: ProviderError) -> CellResult:
        def write_na(cp: dict[str, Any], conversation: Any, exc: ProviderError) -> None:
            record = cell_records.quota_na_record(self.suite.record_base(cell, spec), cp, conversation, exc)
            cell_records.write_record(self.record_path(cell), record, self._secrets())

        return self.stops.stopped(cell.cell_id, spec, results_dir(self.options, spec), cp_path, cp, conversation,
                                  exc, day=self.today(), pace=self.options.pace, stream=self.options.stream,
                                  secrets=self._secrets(), write_na=write_na)

    # -- what the plugin asks at the end ------------------------------------------------
    def usage(self) -> dict[str, dict[str, Any]]:
        """Requests and tokens this process spent per provider route, labelled with the suite (S4.16)."""
        return self.providers.usage(self.suite.name)

    def usage_lines(self) -> list[str]:
        """The run's requests and tokens per provider, as every process of it added them to run.json."""
        from pytest_assistant_eval.results.usage import read_usage, usage_lines

        lines: list[str] = []
        for spec in self.models.values():
            lines += usage_lines(read_usage(results_dir(self.options, spec) / "run.json"))
        return lines

    def waited_seconds(self) -> float:
        """Seconds this process has waited for pacing and rate limits, over every route."""
        return self.providers.waited_seconds()

    def close(self) -> None:
        self.providers.add_usage_to_folders(self.suite.name)
        self.providers.fold_usage()  # this process's usage journal into run.json, once
        self.providers.close()
        run_folders.remove_work_dirs(self.options, self.models)
