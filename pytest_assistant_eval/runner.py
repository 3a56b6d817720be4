"""Run one cell: the plain module the plugin delegates to.

Nothing here imports pytest. A ``RunSession`` is made once per process (controller or
xdist worker) from ``RunOptions`` (see ``planning``); it loads and validates the cases
and levels, verifies the world, checks keys and data notices, writes each results
folder's ``run.json`` (controller only) and runs cells one at a time: a checkpoint
before every request, one record per finished cell, a kept checkpoint or nothing when
a provider stops it.

Size: `RunSession` gathers every job of a run (folders, providers, Ollama variants,
checkpoints, stops, records, usage); issue 25 gives each its own module, the session only
sequencing them.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pytest_assistant_eval import levels as levels_mod
from pytest_assistant_eval.cases.model import KeyEntry, Question, Task
from pytest_assistant_eval.cases.tasks import policy_for
from pytest_assistant_eval.conversation.checkpoint import (
    CHECKPOINT_FORMAT,
    RESTART_REASONS,
    changed_tables,
    CheckpointJournal,
    checkpoint_path,
    counted_requests,
    read_checkpoint,
    setting_reason,
    write_checkpoint,
)
from pytest_assistant_eval.conversation.loop import Conversation, Limits, LoopState, request_body_sha256
from pytest_assistant_eval.conversation.user import ScriptedUser, check_user_reply
from pytest_assistant_eval.world.names import Names
from pytest_assistant_eval.providers.scripted import CellContext, make_scripted
from pytest_assistant_eval.providers.secret import Secret, Secrets
from pytest_assistant_eval.records import (
    RecordError,
    CELL_FORMAT,
    HARNESS_VERSION,
    RUN_FORMAT,
    git_commit,
    read_json,
    redact_data,
    set_aside,
    write_json_atomic,
)
from pytest_assistant_eval.providers.errors import BudgetUsed, ProviderError
from pytest_assistant_eval.results_folder import refuse_grading_folder, remove_harness_temporaries
from pytest_assistant_eval.world.backend import LogEntry, Policy
from pytest_assistant_eval.world.build import WorldIdentity, verify_world
from pytest_assistant_eval.world.services import open_world
from pytest_assistant_eval.world.state import diff_states, state_digest
from pytest_assistant_eval.world.tools import tool_specs
from pytest_assistant_eval.planning import (  # noqa: F401 - re-exported: the plugin and the CLI plan through runner
    CELL_ID,
    KNOWN_PRESETS,
    CellResult,
    CellSpec,
    ModelSpec,
    RunOptions,
    UsageError,
    check_route,
    automatic_level,
    check_world_path,
    level_setting,
    load_calibration,
    parse_models,
    plan_cells,
    results_dir,
    tool_definitions,
)

def skip_cells(options: RunOptions, skip: list[str], reason: str, unskip: list[str]) -> list[str]:
    """``--skip`` / ``--unskip``: needs the folder's identity options only (no key, no notice)."""
    from pytest_assistant_eval import skips

    if len(options.models) != 1:
        raise UsageError("--skip and --unskip work on one results folder: name one model")
    cases, levels = load_calibration(options.calibration)
    spec = options.models[0]
    folder = results_dir(options, spec)
    if not (folder / "run.json").exists():
        raise UsageError(f"{folder}: not a results folder (no run.json)")
    identity = read_json(folder / "run.json", RUN_FORMAT)["identity"]
    if (identity["preset"], identity["model"]) != (spec.preset, spec.model):
        raise UsageError(f"{folder.name}: this results folder is of {identity['preset']}:{identity['model']}")
    planned = [c.cell_id for c in plan_cells(cases, levels, options)]
    from pytest_assistant_eval.writer_lock import WriterLock

    lock = WriterLock(folder)  # one writer per results folder: never beside a live run
    lock.acquire()
    try:
        lines = [skips.skip(folder, cell, reason, planned) for cell in skip]
        lines += [skips.unskip(folder, cell, planned) for cell in unskip]
    finally:
        lock.release()
    return lines


def _provider_words(exc: ProviderError, attempts: list[dict[str, Any]]) -> str:
    """The provider's own words after ours (S4.10): status, code, message, then earlier texts once.

    With no answer at all (no connection, a timeout, a stream cut short) our own description,
    which names the address, says what happened; "HTTP - -: (no answer)" said nothing.
    """
    if isinstance(exc, BudgetUsed):
        return ""
    status = getattr(exc, "status", None)
    message = getattr(exc, "provider_message", None)
    address = getattr(exc, "address", None)
    if status is None:
        what = exc.message if not address or address in exc.message else f"{exc.message} ({address})"
        lines = [f"\n  provider: no answer: {what}" if not message else f"\n  provider: {what}; it sent: {message}"]
    else:
        lines = [f"\n  provider: HTTP {status} {getattr(exc, 'provider_code', None) or '-'}: "
                 f"{message or '(an empty body)'}" + (f" ({address})" if address else "")]
    seen = {message}
    for attempt in attempts:
        earlier = attempt.get("message")
        if earlier and earlier not in seen:
            seen.add(earlier)
            lines.append(f"\n  earlier attempt ({attempt.get('code')}): {earlier}")
    return "".join(lines)


def _unsaved_advice(exc: ProviderError, spec: ModelSpec) -> str:
    """What to do before --resume can help: a refused key or a wrong model is not fixed by asking again."""
    from pytest_assistant_eval.providers.keys import ENV_VARS, KEYRING_SERVICE

    names = " or ".join(ENV_VARS.get(spec.preset, ()))
    advice = {
        "key": f": the key was refused. Store a valid key (keyring service {KEYRING_SERVICE!r}, username "
               f"{spec.preset!r}, or {names}), then run again with --resume.",
        "permission": ": the key has no access to this model. Use a key or plan that has, then run again with "
                      "--resume.",
        "credit": ": the account has no credit left. Add credit, then run again with --resume.",
        "model": f": the service does not know the model {spec.model!r}. Check the name (another model is "
                 "another results folder: another --out).",
        "routing": ": no provider serves the model under the data policy (see --relax-data-collection), then "
                   "run again with --resume.",
    }
    return advice.get(exc.code, ". Run again with --resume.")


USER_LABEL = "(user)"
WORK_DIR = ".work"  # the cells' world copies, in their results folder (under its writer lock)
BROKEN_DIR = "broken"  # records that did not parse, moved aside by --resume  # the provider cache and key entry of the --user-model


def _retry_extra() -> dict[str, Any]:
    """ASSISTANT_EVAL_RETRY_DELAY (seconds, for tests) shortens the retry backoff of every provider."""
    import os

    delay = os.environ.get("ASSISTANT_EVAL_RETRY_DELAY")
    if not delay:
        return {}
    from pytest_assistant_eval.providers.errors import RetryPolicy

    return {"retry": RetryPolicy(base_delay=float(delay), max_delay=float(delay))}


def _input_estimate(request: Any, previous: dict[str, Any] | None,
                    requests_log: list[dict[str, Any]]) -> dict[str, Any]:
    """The request's input-token estimate, corrected by the provider's own count of the last one (S4.9)."""
    from pytest_assistant_eval.conversation.loop import estimate_tokens

    raw = estimate_tokens(list(request.messages), tuple(request.tools))
    ratio = (previous or {}).get("estimate_ratio")
    if previous and requests_log and previous.get("input_tokens_raw"):
        reported = (requests_log[-1].get("usage") or {}).get("input_tokens")
        if reported:
            ratio = reported / previous["input_tokens_raw"]
    corrected = round(raw * ratio) if ratio else raw
    return {"input_tokens_raw": raw, "estimate_ratio": ratio, "input_tokens_estimate": corrected}


def _same_request_stops(stops: list[dict[str, Any]]) -> int:
    """How many stops in a row, up to the last one, stopped the same request."""
    count = 0
    for stop in reversed(stops):
        if stop.get("request_sha256") != stops[-1].get("request_sha256"):
            break
        count += 1
    return count


def _tpm_refusals(stops: list[dict[str, Any]]) -> int:
    """Refusals in a row of the last stop's request for the per-minute input-token quota (S4.9)."""
    sha = stops[-1].get("request_sha256")
    count = 0
    for stop in reversed(stops):
        if stop.get("request_sha256") != sha:
            break
        attempts = stop.get("attempts") or [{"code": stop.get("code")}]
        for attempt in reversed(attempts):
            if attempt.get("code") != "tpm_input":
                return count
            count += 1
    return count


def _take_attempts(provider: Any) -> list[dict[str, Any]]:
    """A provider's failed attempts since the last take, as dicts (emptying its list)."""
    if provider is None:
        return []
    take = getattr(provider, "take_attempts", None)
    if take is not None:
        raw = take()
    else:
        raw = list(getattr(provider, "attempts", []) or [])
        if hasattr(provider, "attempts"):
            provider.attempts = []
    return [a.to_dict() if hasattr(a, "to_dict") else dict(a) for a in raw]


def _today() -> str:
    """The day requests are counted on (UTC); ASSISTANT_EVAL_TODAY overrides it for tests."""
    import os

    return os.environ.get("ASSISTANT_EVAL_TODAY") or datetime.now(timezone.utc).date().isoformat()


def _na_reason(path: Path) -> str | None:
    """Why a saved record is not applicable (``context``, ``provider quota per request``), or None."""
    try:
        data = read_json(path)
    except RecordError:
        return None
    return data.get("na_reason") if isinstance(data, dict) and data.get("status") == "na" else None


def _user_error(path: Path) -> bool:
    try:
        return bool((read_json(path).get("user") or {}).get("user_error"))
    except RecordError:
        return False


def _clock() -> float:
    """Wall-clock seconds for pacing and daily budgets, shifted to ASSISTANT_EVAL_TODAY if set.

    Tests set the day to see a used budget continue "tomorrow"; the shift is whole days,
    so spacing between requests is unchanged.
    """
    import os
    from datetime import date

    now = time.time()
    override = os.environ.get("ASSISTANT_EVAL_TODAY")
    if not override:
        return now
    real = datetime.fromtimestamp(now, timezone.utc).date()
    return now + (date.fromisoformat(override) - real).days * 86400.0


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RunSession:
    """Everything one process needs to run cells; made once per process."""

    def __init__(self, options: RunOptions) -> None:
        self.options = options
        self.today = _today
        check_world_path(options.world)
        self.world_identity: WorldIdentity = verify_world(options.world)
        self.cases, self.levels = load_calibration(options.calibration, options.world)
        self.cells = plan_cells(self.cases, self.levels, options)
        self.models = {spec.label: spec for spec in options.models}
        self.questions: dict[str, Question] = {q.id: q for q in self.cases.questions.questions}
        self.scenario = self.cases.questions.scenario
        self.tasks: dict[str, Task] = {t.id: t for t in self.cases.tasks}
        self.keys: dict[str, KeyEntry] = self.cases.key.entries
        self.commit = git_commit()
        self._providers: dict[str, Any] = {}
        self._keys: dict[str, Secret | None] = {}
        self._run_secrets: Secrets | None = None
        self.quota_used: set[str] = set()  # routes whose daily budget or quota ran out in this process
        self.routes_stopped: dict[str, str] = {}  # routes a temporary or fatal error stopped, and why
        self._probes: dict[tuple[str, str], tuple[Any, str]] = {}  # (model, level) -> (Ollama probe, why not)
        self.start_lines: list[str] = []  # what the run says once at its start: notices, where keys go
        self.requests_sent = 0  # requests this process sent (or was about to send), for the progress line
        from pytest_assistant_eval.skips import read_skips

        self._skips = {label: read_skips(results_dir(options, spec)) for label, spec in self.models.items()}
        self.check_routes()
        self._settings = {name: level_setting(level) for name, level in self.levels.levels.items()}
        self._keys_of_setting = {
            name: levels_mod.setting_key(level, tool_definitions(level)) for name, level in self.levels.levels.items()
        }

    # -- the folder ---------------------------------------------------------------
    def identity(self, spec: ModelSpec) -> dict[str, Any]:
        return {
            "preset": spec.preset,
            "model": spec.model,
            "address": spec.base_url,
            "route": spec.route,
            "free_plan": spec.model.endswith(":free"),
            "data_collection": "allow" if self.options.relax_data_collection else None,
            "ollama_contexts": (dict(self.options.ollama_contexts)
                                if spec.preset == "ollama" and self.options.ollama_contexts else None),
            "cpu_offload": ("allowed" if spec.preset == "ollama" and self.options.allow_cpu_offload else None),
            "world": self.world_identity.fingerprint,
        }

    def prepare_folders(self) -> None:
        """Write or extend each model's run.json before any cell runs (controller only)."""
        folders = [results_dir(self.options, spec) for spec in self.models.values()]
        for folder in {self.options.out, *folders}:
            refuse_grading_folder(folder, UsageError)  # a grading folder is never a results folder
        # Only the folders this run writes (and holds the lock of) are cleaned: a parent --out of
        # several models may hold another live run's folders beside ours.
        for folder in folders:
            remove_harness_temporaries(folder)  # a killed run's half-written temporaries, nothing else
            shutil.rmtree(folder / WORK_DIR, ignore_errors=True)  # and the world copies of its cells
        for label, spec in self.models.items():
            folder = results_dir(self.options, spec)
            path = folder / "run.json"
            planned = [c for c in self.cells if c.model == label]
            matrix = self._matrix(planned)
            entry = {"started_at": _now(), "pace": self.options.pace, "stream": self.options.stream,
                     "resume": self.options.resume, "matrix": matrix, "git_commit": self.commit}
            identity = self.identity(spec)
            if path.exists():
                data = read_json(path, RUN_FORMAT)
                if data["identity"] != identity:
                    differs = sorted(k for k in identity if data["identity"].get(k) != identity[k])
                    raise UsageError(f"{folder.name}: this results folder belongs to another run "
                                     f"(it differs in {', '.join(differs)}); choose another --out")
                if not self.options.resume and any((folder / "cells").glob("*.json")):
                    raise UsageError(f"{folder.name}: the results folder already holds records; "
                                     "run again with --resume to continue it, or choose another --out")
                data["runs"].append(entry)
            else:
                data = {"format": RUN_FORMAT, "harness_version": HARNESS_VERSION,
                        "identity": identity, "world_identity": self.world_identity.to_dict(), "runs": [entry]}
            write_json_atomic(path, redact_data(data))

    def _matrix(self, cells: list[CellSpec]) -> dict[str, Any]:
        return {
            "questions": sorted({c.case_id for c in cells if c.kind != "task"}),
            "tasks": sorted({c.case_id for c in cells if c.kind == "task"}),
            "levels": sorted({c.level for c in cells}),
            "repeats": self.options.repeats,
            "cells": [c.cell_id for c in cells],
        }

    def record_selection(self, selected: list[CellSpec], keyword: str | None, markexpr: str | None) -> None:
        """The run asks only the selected cells (-k, -m): that is its plan in each run.json (controller only).

        run.json is written before collection with every planned cell; a plan of cells the run never
        asks would leave the folder "unfinished" for grade-ai for ever. The selection is recorded so
        the plan can be told from a smaller matrix.
        """
        from pytest_assistant_eval.usage import update_run_entry

        for label, spec in self.models.items():
            mine = [c for c in selected if c.model == label]
            everything = [c for c in self.cells if c.model == label]
            selection = {"keyword": keyword or None, "markexpr": markexpr or None, "cells": len(mine),
                         "of": len(everything)}

            def change(entry: dict[str, Any], mine: list[CellSpec] = mine, selection: dict[str, Any] = selection) -> None:
                entry["matrix"] = self._matrix(mine)
                entry["selection"] = selection

            update_run_entry(results_dir(self.options, spec) / "run.json", change)

    # -- one cell -----------------------------------------------------------------
    def record_path(self, cell: CellSpec) -> Path:
        return results_dir(self.options, self.models[cell.model]) / "cells" / f"{cell.cell_id}.json"

    def ledger_path(self) -> Path:
        """One ledger for the whole run (every model, every worker): budgets and pacing per route."""
        return self.options.out / ".ledger.json"

    def check_routes(self) -> None:
        """Keys and data notices, before any cell: a clear usage error instead of a failed cell."""
        user = self.options.user_model
        for name, spec in [*self.models.items(), *([(USER_LABEL, user)] if user is not None else [])]:
            if spec.preset == "scripted":
                continue
            self._keys[name], lines = check_route(spec, self.options.accept_data_notice)
            lines = [*lines, *self._hold_lines(spec)]
            for line in lines:
                if line not in self.start_lines:  # said once, however many models share the route
                    self.start_lines.append(line)

    def _hold_lines(self, spec: ModelSpec) -> list[str]:
        """A resume that must first wait for a provider's hold says until when (issue 23)."""
        from pytest_assistant_eval.providers.holds import hold_notice
        from pytest_assistant_eval.providers.ledger import read_routes

        line = hold_notice(read_routes(self.ledger_path()), spec.route, time.time())
        return [line] if line else []

    def provider(self, spec: ModelSpec, name: str | None = None, options: dict[str, Any] | None = None) -> Any:
        """The provider of a model (``name``: its cache and key entry, the model's label by default)."""
        name = name or spec.label
        if name in self._providers:
            return self._providers[name]
        if spec.preset == "scripted":
            provider = make_scripted(spec.model)
        else:
            from pytest_assistant_eval.providers.ledger import Ledger
            from pytest_assistant_eval.providers.pacing import Pacer
            from pytest_assistant_eval.providers.presets import (
                default_daily_budget,
                is_local_address,
                make_provider,
                resolve_base_url,
                start_interval,
            )

            local = is_local_address(resolve_base_url(spec.preset, spec.base_url))
            budget = self.options.max_requests_per_day or default_daily_budget(spec.preset, spec.model)
            pacer = Pacer(Ledger(self.ledger_path()), spec.route, pace=self.options.pace,
                          start_interval=start_interval(spec.preset, spec.model),
                          max_requests_per_day=budget, local=local, clock=_clock)
            provider = make_provider(spec.preset, spec.model, base_url=spec.base_url, stream=self.options.stream,
                                     key=self._keys.get(name), pacer=pacer,
                                     relax_data_collection=self.options.relax_data_collection,
                                     **({"options": options} if options else {}), **_retry_extra(),
                                     **({"deadline": self.options.request_deadline}
                                        if self.options.request_deadline else {}))
        self._providers[name] = provider
        return provider

    def _secrets(self) -> Secrets:
        """The run's keys as every writer redacts with them; a key that is also one of the run's own
        names (a model, a label, an address) is never searched for (issue 23, item 16)."""
        if self._run_secrets is None:
            specs = [*self.models.values(), *([self.options.user_model] if self.options.user_model else [])]
            names = [str(v) for s in specs for v in (s.model, s.label, s.preset, s.base_url, s.route) if v]
            self._run_secrets = Secrets(self._keys.values(), identity=names)
        return self._run_secrets

    def _user(self, task: Task | None, spec: ModelSpec, names: Names) -> Any:
        """The simulated user of a task cell: a model with --user-model (not for scripted assistants)."""
        if task is None:
            return None
        user = self.options.user_model
        if user is None or spec.preset == "scripted":
            return ScriptedUser(task, names)
        from pytest_assistant_eval.conversation.model_user import ModelUser

        return ModelUser(self.provider(user, USER_LABEL), task, model=user.model, stream=self.options.stream)

    # -- Ollama variants (S4.5) ----------------------------------------------------------
    def _ollama_context(self, spec: ModelSpec, level: str) -> int | None:
        if spec.preset != "ollama" or not self.options.ollama_contexts:
            return None
        return dict(self.options.ollama_contexts).get(level)

    def _ollama_setting(self, spec: ModelSpec, level: str, num_ctx: int) -> tuple[Any, str]:
        """Load and probe the setting's variant once per process; record it in run.json."""
        key = (spec.label, level)
        if key not in self._probes:
            from pytest_assistant_eval.providers.ollama import applicable, probe
            from pytest_assistant_eval.providers.presets import resolve_base_url
            from pytest_assistant_eval.usage import update_run_entry

            try:
                found = probe(resolve_base_url(spec.preset, spec.base_url), spec.model, num_ctx)
            except ProviderError as exc:
                self._probes[key] = (None, f"the Ollama variant could not be loaded: {exc}")
                return self._probes[key]
            if found.forwarded_to:
                # A model the server forwards to a cloud service needs that route's notice too (S4.4).
                from pytest_assistant_eval.providers.errors import NoticeRequired
                from pytest_assistant_eval.providers.notices import check_notice

                try:
                    check_notice(spec.preset, spec.model, spec.base_url, self.options.accept_data_notice,
                                 world_verified=True, forwarded_to=found.forwarded_to)
                except NoticeRequired as exc:
                    self._probes[key] = (None, str(exc))
                    return self._probes[key]
            ok, why = applicable(found, num_ctx, self.options.allow_cpu_offload)
            self._probes[key] = (found, "" if ok else why)
            entry = {**found.to_dict(), "applicable": ok, "reason": why or None, "cpu_offload": found.cpu_offload}
            update_run_entry(results_dir(self.options, spec) / "run.json",
                             lambda run: run.setdefault("ollama", {}).__setitem__(level, entry))
        return self._probes[key]

    def _not_applicable_context(self, cell: CellSpec, spec: ModelSpec, why: str, probe: Any) -> CellResult:
        """A setting whose variant does not fit: every cell of it is not applicable (context)."""
        if probe is None:  # the variant could not even be loaded: nothing is known, nothing is saved
            self.routes_stopped.setdefault(spec.route, f"{cell.cell_id}: {why}")
            return CellResult("unsaved", f"{cell.cell_id}: nothing was saved for this cell: {why}", code="model")
        record = {
            "format": CELL_FORMAT, "cell": cell.cell_id, "case": cell.case_id, "kind": cell.kind,
            "class": cell.cls, "level": cell.level, "repeat": cell.repeat,
            "model": {"preset": spec.preset, "model": spec.model, "route": spec.route, "label": spec.label},
            "status": "na", "na_reason": "context", "why": why, "scope": "setting",
            "setting_key": self._keys_of_setting[cell.level],
            "world": {"fingerprint": self.world_identity.fingerprint, "built_at": self.world_identity.built_at},
            "ollama": {"num_ctx": self._ollama_context(spec, cell.level), **probe.to_dict()},
            "cpu_offload": probe.cpu_offload, "finished_at": _now(),
        }
        write_json_atomic(self.record_path(cell), record, compact=True, redacted=True)
        return CellResult("na", f"{cell.cell_id}: {why}")

    def usage(self) -> dict[str, dict[str, Any]]:
        """Requests and tokens this process spent per provider route, labelled "(calibration)" (S4.16)."""
        out: dict[str, dict[str, Any]] = {}
        for name, provider in self._providers.items():
            total = getattr(provider, "usage_total", None)
            if total is None:
                continue
            user = name == USER_LABEL
            preset, model = (self.options.user_model.preset, self.options.user_model.model) if user else (
                getattr(provider, "preset", None), getattr(provider, "model", None))
            key = f"{preset}:{model}" + (" (user)" if user else "")
            data = out.setdefault(key, {"label": f"{preset}:{model} (calibration)"})
            for field_name, value in total.to_dict().items():
                if field_name != "label":
                    data[field_name] = data.get(field_name, 0) + (value or 0)  # Ollama variants add up
        return out

    def usage_lines(self) -> list[str]:
        """The run's requests and tokens per provider, as every process of it added them to run.json."""
        from pytest_assistant_eval.usage import read_usage, usage_lines

        lines: list[str] = []
        for spec in self.models.values():
            lines += usage_lines(read_usage(results_dir(self.options, spec) / "run.json"))
        return lines

    def waited_seconds(self) -> float:
        """Seconds this process has waited for pacing and rate limits, over every route."""
        return sum(float(getattr(getattr(p, "pacer", None), "waited_total", 0.0) or 0.0)
                   for p in self._providers.values())

    def close(self) -> None:
        usage = self.usage()
        if usage and any(u["requests"] for u in usage.values()):
            from pytest_assistant_eval.usage import add_usage

            for index, spec in enumerate(self.models.values()):
                mine = {k: v for k, v in usage.items() if k == f"{spec.preset}:{spec.model}"}
                if index == 0:  # the user model's use is counted once, in the first model's folder
                    mine.update({k: v for k, v in usage.items() if k.endswith(" (user)")})
                if mine:
                    add_usage(results_dir(self.options, spec) / "run.json", mine)
        for provider in self._providers.values():
            provider.close()
        self._providers.clear()
        for spec in self.models.values():
            try:
                self.work_dir(spec).rmdir()  # only when empty: another worker may still be running a cell
            except OSError:
                pass

    def checkpoint_path(self, cell: CellSpec) -> Path:
        return checkpoint_path(results_dir(self.options, self.models[cell.model]), cell.cell_id)

    def _setup(self, cell: CellSpec) -> tuple[str, list[str], tuple[KeyEntry, ...], tuple[Question, ...], Policy, Task | None]:
        task = self.tasks.get(cell.case_id) if cell.kind == "task" else None
        if task is not None:
            return task.variant, [task.opening], (), (), policy_for(task), task
        if cell.kind == "scenario":
            questions = self.scenario.turns
            keys = tuple(self.keys[q.id] for q in questions)
            return questions[0].variant, [q.text for q in questions], keys, tuple(questions), Policy(), None
        q = self.questions[cell.case_id]
        return q.variant, [q.text], (self.keys[q.id],), (q,), Policy(), None

    def _set_aside_unreadable(self, cell: CellSpec, path: Path) -> str | None:
        """A record that does not parse is no finished cell: move it aside (kept) and say where."""
        try:
            read_json(path, CELL_FORMAT)
            return None
        except RecordError as exc:
            folder = results_dir(self.options, self.models[cell.model])
            moved = set_aside(path, folder / BROKEN_DIR)
            why = str(exc).replace(str(path), path.name)
            return (f"{cell.cell_id}: its record could not be read ({why}); it was moved aside to "
                    f"{BROKEN_DIR}/{moved.name} and the cell is asked again")

    def work_dir(self, spec: ModelSpec) -> Path:
        """Where a model's cells copy the world: inside its results folder, so the next run of the
        folder removes what a killed one left (and no run touches another's copies)."""
        return results_dir(self.options, spec) / WORK_DIR

    def _cell_work_dir(self, spec: ModelSpec) -> Path:
        """A new folder for one cell's world copy. Another worker that finishes removes the shared
        folder when it is empty, possibly between our mkdir and mkdtemp: make it again then."""
        work = self.work_dir(spec)
        for _ in range(5):
            work.mkdir(parents=True, exist_ok=True)
            try:
                return Path(tempfile.mkdtemp(prefix="assistant-eval-cell-", dir=work))
            except FileNotFoundError:
                continue
        work.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(prefix="assistant-eval-cell-", dir=work))

    def run_cell(self, cell: CellSpec) -> CellResult:
        path = self.record_path(cell)
        cp_path = self.checkpoint_path(cell)
        notes: list[str] = []
        if path.exists() and self.options.resume:
            moved = self._set_aside_unreadable(cell, path)
            if moved:
                notes.append(moved)
        na = _na_reason(path) if path.exists() and self.options.resume else None
        if na == "provider quota per request":  # S4.9: no later resume asks it (--unskip takes it back)
            return CellResult("na", f"{cell.cell_id}: not applicable (provider quota per request) in an earlier run")
        if path.exists() and self.options.resume and not _user_error(path) and na != "context":  # S4.12: a
            # cell not applicable for its context is probed again and asked once its setting fits
            cp_path.unlink(missing_ok=True)  # killed between writing the record and dropping the checkpoint
            return CellResult("done")  # finished in an earlier run: nothing to say
        # A run whose simulated user erred is asked again (S5.2); its record stays until replaced.
        skipped = self._skips.get(cell.model, {}).get(cell.cell_id)
        if skipped is not None:
            return CellResult("skipped", f"{cell.cell_id}: skipped by owner: {skipped['reason']}")
        route = self.models[cell.model].route
        if route in self.quota_used:
            return CellResult("left", f"{cell.cell_id}: not asked today (the daily quota is used)", code="daily_quota")
        if route in self.routes_stopped:  # S4.7: a temporary or fatal error stops the run on its route
            return CellResult("left", f"{cell.cell_id}: not asked: {self.routes_stopped[route]}")
        spec = self.models[cell.model]
        setting = self._settings[cell.level]
        level = self.levels.levels[cell.level]
        setting_key = self._keys_of_setting[cell.level]
        variant, turns, keys, questions, policy, task = self._setup(cell)
        variant_ctx = self._ollama_context(spec, cell.level)
        probe = None
        if variant_ctx is not None:
            probe, why = self._ollama_setting(spec, cell.level, variant_ctx)
            if why:
                return self._not_applicable_context(cell, spec, why, probe)
        assistant = (self.provider(spec, f"{spec.label}@{variant_ctx}", {"num_ctx": variant_ctx})
                     if variant_ctx is not None else self.provider(spec))
        if hasattr(assistant, "begin_cell"):
            assistant.begin_cell(CellContext(cell.kind, cell.level, setting.escalation_sentence,
                                             tuple(questions), keys, task))
        _take_attempts(assistant)  # nothing of an earlier cell is counted as this cell's
        started_at = _now()
        workdir = self._cell_work_dir(spec)
        try:
            world = open_world(self.options.world, variant, workdir, policy)
            try:
                start_state = world.snapshot()
                names = Names.of(start_state)
                user = self._user(task, spec, names)
                conversation = Conversation(assistant=assistant, world=world, level=setting, model=spec.model,
                                            user=user, state=Conversation.start(setting, turns), limits=Limits(),
                                            stream=self.options.stream)
                if task is not None:
                    conversation.user_check = lambda reply, visible, _t=task: (
                        getattr(reply, "problem", None) or check_user_reply(_t, reply, visible, names))
                cp = self._fresh_checkpoint(cell, spec, setting_key)
                if self.options.resume and cp_path.exists():
                    restored, why = self._restore(cp_path, cell, spec, setting_key, conversation, world)
                    if restored is not None:
                        cp = restored
                    else:
                        notes.append(f"{cell.cell_id}: started again: {why}")
                        # The requests it already sent stay counted (S4.8: once each). The old file
                        # stays until the first request's whole checkpoint replaces it (a rename), so a
                        # kill in between loses no count either.
                        cp["requests_by_day"] = counted_requests(cp_path)
                journal = CheckpointJournal(cp_path, durable=spec.preset != "scripted", secrets=self._secrets())
                conversation.before_request = lambda state, request: self._save_checkpoint(
                    journal, cp, state, request, conversation, world, start_state)
                try:
                    final = conversation.run()
                except ProviderError as exc:
                    stopped = self._stopped(cell, cp_path, cp, conversation, exc, notes)
                    # Said whether the cell then finishes or stops again.
                    stopped.message = "\n".join([*notes, stopped.message]) if notes else stopped.message
                    return stopped
                end_state = world.snapshot()
                log = [entry.to_dict() for entry in world.log]
            finally:
                world.close()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        record = self._record(cell, spec, level, variant, final, conversation, start_state, end_state, log, started_at)
        record["resume"] = cp["resume"]
        record["requests_by_day"] = cp["requests_by_day"]
        self._file_attempts(cp, conversation)
        record["attempts"] = cp.get("saved_attempts", [])
        if probe is not None:  # S4.5: the variant's context and where it ran
            record["ollama"] = {"num_ctx": variant_ctx, "context": probe.context}
            record["cpu_offload"] = probe.cpu_offload
        if record["attempts"]:
            from pytest_assistant_eval.spent import record_saved_attempts

            record_saved_attempts(results_dir(self.options, spec), cell.cell_id, record["attempts"],
                                  pace=self.options.pace, stream=self.options.stream, secrets=self._secrets())
        write_json_atomic(path, record, compact=True, redacted=True, secrets=self._secrets())
        cp_path.unlink(missing_ok=True)  # the checkpoint goes when the record is written
        return CellResult("done", "\n".join(notes))

    # -- checkpoints ----------------------------------------------------------------
    def _fresh_checkpoint(self, cell: CellSpec, spec: ModelSpec, setting_key: dict[str, Any]) -> dict[str, Any]:
        return {
            "format": CHECKPOINT_FORMAT, "cell": cell.cell_id,
            "model": {"preset": spec.preset, "model": spec.model, "route": spec.route},
            "world": self.world_identity.fingerprint, "setting_key": setting_key, "git_commit": self.commit,
            "state": None, "world_state": {}, "service_log": [], "requests_log": [], "pending": None,
            "attempts": [], "stop": None, "requests_by_day": {}, "resume": {"count": 0, "points": []},
            "seconds_so_far": 0.0, "updated_at": _now(),
        }

    def _save_checkpoint(self, journal: CheckpointJournal, cp: dict[str, Any], state: LoopState, request: Any,
                         conversation: Conversation, world: Any, start_state: Any) -> None:
        today = self.today()
        cp["requests_by_day"][today] = cp["requests_by_day"].get(today, 0) + 1
        self.requests_sent += 1
        cp["state"] = state.to_dict()
        # The world changes only through writes: take a new snapshot only after one (a lookup,
        # most calls, changes nothing; a snapshot reads every table).
        written = world.changes() if hasattr(world, "changes") else len(world.log)
        if cp.get("_written") != written:
            cp["world_state"] = changed_tables(start_state, world.snapshot())
            cp["_written"] = written
        cp["service_log"] = [entry.to_dict() for entry in world.log]
        cp["requests_log"] = list(conversation.requests_log)
        self._file_attempts(cp, conversation)  # the failed attempts of the request just answered
        cp["pending"] = {"request_sha256": conversation.pending_request_sha256 or request_body_sha256(request),
                         "turn": state.turn,
                         "round": state.round + 1, "request": state.requests + 1, "at": _now(),
                         **_input_estimate(request, cp.get("pending"), conversation.requests_log)}
        cp["attempts"] = []
        cp["stop"] = None
        cp["updated_at"] = _now()
        # Only what changed since the last request is appended (format 2's journal).
        journal.write({k: v for k, v in cp.items() if not k.startswith("_")})

    def _restore(self, path: Path, cell: CellSpec, spec: ModelSpec, setting_key: dict[str, Any],
                 conversation: Conversation, world: Any) -> tuple[dict[str, Any] | None, str | None]:
        data, why = read_checkpoint(path)
        if data is None:
            return None, why
        if data["model"] != {"preset": spec.preset, "model": spec.model, "route": spec.route}:
            return None, RESTART_REASONS["model"]
        if data["world"] != self.world_identity.fingerprint:
            return None, RESTART_REASONS["world"]
        why = setting_reason(data["setting_key"], setting_key)
        if why:
            return None, why
        if data["state"] is None or data["pending"] is None:
            return None, RESTART_REASONS["request"]
        try:
            state = LoopState.from_dict(data["state"])
            log = [LogEntry.from_dict(entry) for entry in data["service_log"]]
        except (KeyError, TypeError, AttributeError):
            return None, RESTART_REASONS["format"]
        # Nothing is restored before the checkpoint is known to give the request that was sent:
        # a cell started again starts from the fresh conversation and world, never a mix.
        if request_body_sha256(conversation.request_for(state)) != data["pending"]["request_sha256"]:
            return None, RESTART_REASONS["request"]
        world.restore(data["world_state"])
        world.log.extend(log)
        conversation.state = state
        conversation.requests_log = list(data["requests_log"])
        stop = data["stop"] or {}
        data["resume"]["count"] += 1
        data["resume"]["points"].append({
            "turn": data["pending"]["turn"], "round": data["pending"]["round"],
            "request": data["pending"]["request"], "code": stop.get("code", "killed"),
            "provider": spec.route, "lost_usage": None,
            "stopped_at": stop.get("at", data.get("updated_at")), "resumed_at": _now(),
            "pace": self.options.pace, "stream": self.options.stream,
            "git_commits": {"stopped": data.get("git_commit"), "resumed": self.commit},
            "request_sha256": data["pending"]["request_sha256"],
        })
        return data, None

    def _file_attempts(self, cp: dict[str, Any], conversation: Conversation) -> None:
        """Move failed attempts (the assistant's and the user model's, and those a resumed stop
        kept) into ``saved_attempts``, tagged with the request they belong to (S4.10)."""
        pending = cp.get("pending") or {}
        user_provider = getattr(conversation.user, "provider", None)
        found = [*(cp.get("attempts") or []),
                 *_take_attempts(conversation.assistant),
                 *({**a, "role": "user"} for a in _take_attempts(user_provider))]
        if not found:
            return
        saved = cp.setdefault("saved_attempts", [])
        for attempt in found:
            if "turn" not in attempt:
                attempt = {**attempt, "turn": pending.get("turn"), "request": pending.get("request")}
            saved.append(attempt)
        cp["attempts"] = []

    def _stopped(self, cell: CellSpec, cp_path: Path, cp: dict[str, Any], conversation: Conversation,
                 exc: ProviderError, notes: list[str]) -> CellResult:
        """A provider error stopped the cell: keep its checkpoint (temporary, format) or drop it.

        Every stop goes to spent.json with its failed attempts (S4.10). A request refused twice
        in a row for the per-minute input-token quota makes the cell not applicable (S4.9).
        """
        from pytest_assistant_eval import spent

        spec = self.models[cell.model]
        folder = results_dir(self.options, spec)
        user_provider = getattr(conversation.user, "provider", None)
        attempts = [*_take_attempts(conversation.assistant),
                    *({**a, "role": "user"} for a in _take_attempts(user_provider))]
        earlier = [*(cp.get("saved_attempts") or []),
                   *(a for stop in cp.get("stops") or [] for a in stop.get("attempts", []))]
        if isinstance(exc, BudgetUsed) and cp.get("pending") is not None:
            # Our own budget stopped the request before it was sent: it does not count.
            today = self.today()
            cp["requests_by_day"][today] = max(0, cp["requests_by_day"].get(today, 0) - 1)
        if exc.code == "daily_quota":
            self.quota_used.add(spec.route)
        pending = cp.get("pending") or {}
        sha = pending.get("request_sha256")
        stop = {"code": exc.code, "at": _now(), "status": getattr(exc, "status", None),
                "provider_code": getattr(exc, "provider_code", None),
                "message": getattr(exc, "provider_message", None), "request_sha256": sha,
                "input_tokens_estimate": pending.get("input_tokens_estimate"),
                "quota": getattr(exc, "quota", None), "attempts": attempts}
        stops = cp.setdefault("stops", [])
        stops.append(stop)
        same = _same_request_stops(stops)
        words = _provider_words(exc, [*earlier, *attempts])
        if sha:  # S4.9: every stop names its request and the request's corrected input-token estimate
            words += (f"\n  request {pending.get('request')} ({sha[:12]}), about "
                      f"{pending.get('input_tokens_estimate')} input tokens")
        keep = exc.kind in ("temporary", "format") and cp.get("pending") is not None
        na = keep and exc.code == "tpm_input" and _tpm_refusals(stops) >= 2
        outcome = "na" if na else "kept" if keep else "unsaved"
        if exc.kind in ("temporary", "fatal") and exc.code != "daily_quota" and not na:
            # S4.7: the run stops on this route (an unreadable tool call and a cell not applicable do not stop it)
            self.routes_stopped.setdefault(spec.route, f"the run stopped after {cell.cell_id}'s {exc.code}")
        spent.record_stop(folder, cell.cell_id, exc, attempts, outcome=outcome, pace=self.options.pace,
                          stream=self.options.stream, turn=pending.get("turn"), request=pending.get("request"),
                          request_sha256=sha, input_tokens_estimate=pending.get("input_tokens_estimate"),
                          secrets=self._secrets())
        if na:
            self._write_na(cell, spec, cp, conversation, exc)
            cp_path.unlink(missing_ok=True)
            return CellResult("na", f"{cell.cell_id}: not applicable (provider quota per request): the provider "
                              f"refused the same request twice in a row for its per-minute input-token quota"
                              f"{words}", code=exc.code)
        if keep:
            cp["stop"] = {k: stop[k] for k in ("code", "at", "status", "provider_code", "message")}
            cp["attempts"] = attempts
            write_checkpoint(cp_path, {k: v for k, v in cp.items() if not k.startswith("_")},
                             secrets=self._secrets())
            again = (f"\n  {cell.cell_id}: the same request failed {same} times; --skip it or wait"
                     if same >= 3 else "")
            return CellResult("kept", f"{cell.cell_id}: kept up to turn {pending['turn'] + 1}, request "
                              f"{pending['request']}; run again with --resume to continue it{words}{again}",
                              code=exc.code)
        cp_path.unlink(missing_ok=True)
        return CellResult("unsaved", f"{cell.cell_id}: nothing was saved for this cell{_unsaved_advice(exc, spec)}"
                          f"{words}", code=exc.code)

    def _write_na(self, cell: CellSpec, spec: ModelSpec, cp: dict[str, Any], conversation: Conversation,
                  exc: ProviderError) -> None:
        """The record of a cell not applicable for the provider's per-request input quota (S4.9)."""
        state = conversation.state
        pending = cp.get("pending") or {}
        refused = {"index": pending.get("request"), "turn": pending.get("turn"), "round": pending.get("round"),
                   "seconds": None, "usage": None, "stop_reason": "tpm_input",
                   "request_sha256": pending.get("request_sha256")}
        record = {
            "format": CELL_FORMAT, "cell": cell.cell_id, "case": cell.case_id, "kind": cell.kind,
            "class": cell.cls, "level": cell.level, "repeat": cell.repeat,
            "model": {"preset": spec.preset, "model": spec.model, "route": spec.route, "label": spec.label},
            "status": "na", "na_reason": "provider quota per request", "scope": "cell",
            "setting_key": self._keys_of_setting[cell.level],
            "world": {"fingerprint": self.world_identity.fingerprint, "built_at": self.world_identity.built_at},
            "versions": {"harness": HARNESS_VERSION, "set_version": self.cases.questions.set_version,
                         "key_version": self.cases.key.key_version, "levels_version": self.levels.version,
                         "git_commit": self.commit},
            "user": {"kind": getattr(conversation.user, "kind", None), "user_error": state.user_error},
            "stop_reason": "tpm_input",
            "turns": state.turns,
            "transcript": state.transcript,
            "quota": getattr(exc, "quota", None),
            "stops": cp.get("stops", []),
            "requests": [*conversation.requests_log, refused],
            "attempts": cp.get("saved_attempts", []),
            "resume": cp.get("resume"),
            "requests_by_day": cp.get("requests_by_day"),
            "finished_at": _now(),
        }
        write_json_atomic(self.record_path(cell), record, compact=True, redacted=True, secrets=self._secrets())

    def _record(self, cell: CellSpec, spec: ModelSpec, level: levels_mod.Level, variant: str, final: LoopState,
                conversation: Conversation, start_state: Any, end_state: Any, log: list[dict[str, Any]],
                started_at: str) -> dict[str, Any]:
        seconds = None
        if conversation.first_request_at is not None and conversation.last_response_at is not None:
            seconds = round(conversation.last_response_at - conversation.first_request_at, 6)
        return {
            "format": CELL_FORMAT,
            "cell": cell.cell_id,
            "case": cell.case_id,
            "kind": cell.kind,
            "class": cell.cls,
            "level": cell.level,
            "repeat": cell.repeat,
            "model": {"preset": spec.preset, "model": spec.model, "route": spec.route, "label": spec.label},
            "setting_key": self._keys_of_setting[cell.level],
            "world": {"fingerprint": self.world_identity.fingerprint, "variant": variant,
                      "built_at": self.world_identity.built_at},
            "versions": {"harness": HARNESS_VERSION, "set_version": self.cases.questions.set_version,
                         "key_version": self.cases.key.key_version, "levels_version": self.levels.version,
                         "git_commit": self.commit},
            "user": {"kind": getattr(conversation.user, "kind", None), "user_error": final.user_error,
                     **({"model": f"{self.options.user_model.preset}:{self.options.user_model.model}"}
                        if getattr(conversation.user, "kind", None) == "model" and self.options.user_model else {})},
            "stop_reason": final.stop,
            "turns": final.turns,
            "transcript": final.transcript,
            "messages": [m.to_dict() for m in final.messages],
            "service_log": log,
            "tools": [{"name": t.name, "consequential": t.consequential, "affects_others": t.affects_others,
                       "spends_money": t.spends_money} for t in tool_specs() if t.name in set(level.tools)],
            "refusals": [e for e in log if e["status"] == "refused"],
            "state": {
                "start_digest": state_digest(start_state),
                "final_digest": state_digest(end_state),
                "diff": [change.to_dict() for change in diff_states(start_state, end_state)],
                "final": end_state,
            },
            "requests": conversation.requests_log,
            "cap_hits": final.cap_hits,
            "compactions": final.compactions,
            "conversation_seconds": seconds,
            "started_at": started_at,
            "finished_at": _now(),
            "resume": {"count": 0, "points": []},
        }
