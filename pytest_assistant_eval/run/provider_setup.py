"""The providers of a run: keys and notices, one provider per model, Ollama variants, usage (S4.3-S4.6, S4.16).

One ``Providers`` is made per process (controller or xdist worker). It checks every route
before any cell (its data notice accepted, its key found: a clear usage error instead of a
failed cell), makes each model's provider once (through the run's shared pacer and daily
budget ledger), loads and probes an Ollama variant once per setting, and adds up what the
providers spent. It knows nothing of suites or cells: the session asks it for a provider.
It must never print a key or write one to a file (``secrets`` redacts every writer).
"""

from __future__ import annotations

import os
import time
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

from pytest_assistant_eval.suites.plan import ModelSpec, RunOptions, check_route, results_dir
from pytest_assistant_eval.providers.generation import provider_options
from pytest_assistant_eval.providers.variants import Variants
from pytest_assistant_eval.secret import Secret, Secrets

__all__ = ["Providers", "USER_LABEL", "clock", "today", "retry_extra", "take_attempts"]

USER_LABEL = "(user)"  # the provider cache and key entry of the --user-model


def retry_extra() -> dict[str, Any]:
    """ASSISTANT_EVAL_RETRY_DELAY (seconds, for tests) shortens the retry backoff of every provider."""
    delay = os.environ.get("ASSISTANT_EVAL_RETRY_DELAY")
    if not delay:
        return {}
    from pytest_assistant_eval.providers.errors import RetryPolicy

    return {"retry": RetryPolicy(base_delay=float(delay), max_delay=float(delay))}


def generation_options(spec: ModelSpec) -> dict[str, Any]:
    """The provider options a model's generation settings ask for (issue 33; checked when parsed)."""
    return provider_options(spec.preset, spec.generation)


def today() -> str:
    """The day requests are counted on (UTC); ASSISTANT_EVAL_TODAY overrides it for tests."""
    return os.environ.get("ASSISTANT_EVAL_TODAY") or datetime.now(timezone.utc).date().isoformat()


def clock() -> float:
    """Wall-clock seconds for pacing and daily budgets, shifted to ASSISTANT_EVAL_TODAY if set.

    Tests set the day to see a used budget continue "tomorrow"; the shift is whole days,
    so spacing between requests is unchanged.
    """
    now = time.time()
    override = os.environ.get("ASSISTANT_EVAL_TODAY")
    if not override:
        return now
    real = datetime.fromtimestamp(now, timezone.utc).date()
    return now + (date.fromisoformat(override) - real).days * 86400.0


def take_attempts(provider: Any) -> list[dict[str, Any]]:
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


class Providers:
    """Every provider one process uses, made on first use and closed once."""

    def __init__(self, options: RunOptions, models: dict[str, ModelSpec], ledger: Path,
                 scripted: Any, data_source: str | None = None) -> None:
        self.options = options
        self.data_source = data_source  # the suite's words for where the data comes from (data notices)
        self.models = models
        self.ledger = ledger
        self.scripted = scripted  # the suite's reference assistants (``Suite.scripted(name)``) -> provider
        self.cache: dict[str, Any] = {}
        self.keys: dict[str, Secret | None] = {}
        self._secrets: Secrets | None = None
        self.variants = Variants(options.ollama_contexts, allow_cpu_offload=options.allow_cpu_offload,
                                 accept_data_notice=options.accept_data_notice, data_source=data_source,
                                 run_json=lambda spec: results_dir(options, spec) / "run.json")
        self.start_lines: list[str] = []  # what the run says once at its start: notices, where keys go
        self._flushed: dict[str, dict[str, Any]] = {}  # the usage already journalled, per provider
        self._journals: dict[str, Any] = {}  # model label -> its folder's UsageJournal (this process's)

    # -- routes -------------------------------------------------------------------
    def check_routes(self) -> None:
        """Keys and data notices, before any cell: a clear usage error instead of a failed cell."""
        user = self.options.user_model
        for name, spec in [*self.models.items(), *([(USER_LABEL, user)] if user is not None else [])]:
            if spec.preset == "agent":  # no key, no notice: its model calls are its own; its factory must load
                from pytest_assistant_eval.agents.loading import check_factory

                check_factory(spec.model, self.options.agent_path)
                continue
            if spec.preset == "scripted":
                continue
            self.keys[name], lines = check_route(spec, self.options.accept_data_notice, self.data_source)
            for line in [*lines, *self._hold_lines(spec)]:
                if line not in self.start_lines:  # said once, however many models share the route
                    self.start_lines.append(line)

    def _hold_lines(self, spec: ModelSpec) -> list[str]:
        """A resume that must first wait for a provider's hold says until when (issue 23)."""
        from pytest_assistant_eval.providers.holds import hold_notice
        from pytest_assistant_eval.providers.ledger import read_routes

        line = hold_notice(read_routes(self.ledger), spec.route, time.time())
        return [line] if line else []

    def secrets(self) -> Secrets:
        """The run's keys as every writer redacts with them; a key that is also one of the run's own
        names (a model, a label, an address) is never searched for (issue 23, item 16)."""
        if self._secrets is None:
            specs = [*self.models.values(), *([self.options.user_model] if self.options.user_model else [])]
            names = [str(v) for s in specs for v in (s.model, s.label, s.preset, s.base_url, s.route) if v]
            self._secrets = Secrets(self.keys.values(), identity=names)
        return self._secrets

    # -- providers ----------------------------------------------------------------
    def provider(self, spec: ModelSpec, name: str | None = None, options: dict[str, Any] | None = None) -> Any:
        """The provider of a model (``name``: its cache and key entry, the model's label by default)."""
        name = name or spec.label
        if name in self.cache:
            return self.cache[name]
        if spec.preset == "scripted":
            provider = self.scripted(spec.model)
        elif spec.preset == "agent":
            from pytest_assistant_eval.agents.provider import AgentProvider

            provider = AgentProvider(spec.model, self.options.agent_path, self.options.request_deadline)
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
            pacer = Pacer(Ledger(self.ledger), spec.route, pace=self.options.pace,
                          start_interval=start_interval(spec.preset, spec.model),
                          max_requests_per_day=budget, local=local, clock=clock)
            provider = make_provider(spec.preset, spec.model, base_url=spec.base_url, stream=self.options.stream,
                                     key=self.keys.get(name), pacer=pacer,
                                     relax_data_collection=self.options.relax_data_collection,
                                     **({"options": {**generation_options(spec), **(options or {})}}
                                        if options or spec.generation else {}), **retry_extra(),
                                     **({"deadline": self.options.request_deadline}
                                        if self.options.request_deadline else {}))
        self.cache[name] = provider
        return provider

    def user_provider(self) -> Any:
        """The --user-model's provider (one for the whole process)."""
        assert self.options.user_model is not None
        return self.provider(self.options.user_model, USER_LABEL)

    # -- a model's variant per setting (S4.5: the provider layer's, providers/variants.py) ---------
    def variant(self, spec: ModelSpec, level: str) -> Any:
        """The variant a cell of ``level`` runs ``spec`` on (``Variant``), or None: the model as it is."""
        return self.variants.of(spec, level)

    # -- what was spent -------------------------------------------------------------
    def usage(self, label: str = "calibration") -> dict[str, dict[str, Any]]:
        """Requests and tokens this process spent per provider route, labelled "(<suite>)" (S4.16)."""
        out: dict[str, dict[str, Any]] = {}
        for name, provider in self.cache.items():
            total = getattr(provider, "usage_total", None)
            if total is None:
                continue
            user = name == USER_LABEL
            preset, model = (self.options.user_model.preset, self.options.user_model.model) if user else (
                getattr(provider, "preset", None), getattr(provider, "model", None))
            key = f"{preset}:{model}" + (" (user)" if user else "")
            data = out.setdefault(key, {"label": f"{preset}:{model} ({label})"})
            for field_name, value in total.to_dict().items():
                if field_name != "label":
                    data[field_name] = data.get(field_name, 0) + (value or 0)  # Ollama variants add up
        return out

    def add_usage_to_folders(self, label: str = "calibration") -> None:
        """Add this process's usage not yet added to each model's folder (the user model's once, in the
        first folder). Called as the usage grows (before each request, after each failed attempt and
        each cell) and at the end, so a killed run's folder holds what it spent up to its last request
        (issue 31 G): appended to this process's usage journal (``results/usage.py``), folded into
        run.json by ``fold_usage`` when the process closes."""
        from pytest_assistant_eval.results.usage import COUNTS

        current = self.usage(label)
        flushed = self._flushed
        usage: dict[str, dict[str, Any]] = {}
        for key, counts in current.items():
            before = flushed.get(key, {})
            delta = {k: (counts.get(k) or 0) - (before.get(k) or 0) for k in COUNTS}
            if any(delta.values()):
                usage[key] = {"label": counts["label"], **delta}
        if not usage:
            return
        flushed.update({k: dict(v) for k, v in current.items()})
        for index, spec in enumerate(self.models.values()):
            mine = {k: v for k, v in usage.items() if k == f"{spec.preset}:{spec.model}"}
            if index == 0:
                mine.update({k: v for k, v in usage.items() if k.endswith(" (user)")})
            if mine:
                self._journal(spec).add(mine)

    def _journal(self, spec: ModelSpec) -> Any:
        from pytest_assistant_eval.results.usage import UsageJournal

        if spec.label not in self._journals:
            # fsynced where requests cost quota or money, as the checkpoints are
            self._journals[spec.label] = UsageJournal(results_dir(self.options, spec) / "run.json",
                                                      durable=spec.preset != "scripted")
        return self._journals[spec.label]

    def fold_usage(self) -> None:
        """This process's journals into their run.json entries (when it closes)."""
        for journal in self._journals.values():
            journal.fold()

    def waited_seconds(self) -> float:
        """Seconds this process has waited for pacing, rate limits and retry backoffs, over every route."""
        return sum(float(getattr(getattr(p, "pacer", None), "waited_total", 0.0) or 0.0)
                   + float(getattr(p, "retry_waited", 0.0) or 0.0) for p in self.cache.values())

    def close(self) -> None:
        for provider in self.cache.values():
            close = getattr(provider, "close", None)
            if close is not None:
                close()
        self.cache.clear()
