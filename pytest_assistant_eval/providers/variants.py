"""A model's variant for one setting (S4.5, S4.12): today an Ollama model loaded with the setting's context.

The session asks ``Variants.of(model, level)`` for every cell and gets either None (the model
runs as it is: every remote preset, and Ollama without ``--ollama-context``) or a
:class:`Variant`: the provider name and options the cell's assistant is made with, the fields a
finished record says of it, and, when the variant does not fit, why (the cell is then not
applicable for its context). Everything Ollama-specific (the probe, a forwarded model's
notice, the CPU-offload rule, the ``ollama`` entry of ``run.json``) is here, behind the
provider layer, so the session's path of a cell names no provider (issue 32).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_assistant_eval.providers.errors import ProviderError

__all__ = ["Variant", "Variants"]


@dataclass
class Variant:
    """The variant a cell of one setting runs on."""

    name: str  # the provider's cache (and key) name: ``label@num_ctx``
    options: dict[str, Any]  # what the provider is made with (``{"num_ctx": ...}``)
    record_fields: dict[str, Any] = field(default_factory=dict)  # what a finished record says of it
    why: str = ""  # not empty: the variant does not fit, every cell of the setting is not applicable
    na_fields: dict[str, Any] | None = None  # what a not-applicable record says; None: nothing is known


class Variants:
    """The variants of one process's models, each loaded and probed once per (model, setting)."""

    def __init__(self, contexts: tuple[tuple[str, int], ...] | None, *, allow_cpu_offload: bool,
                 accept_data_notice: bool, data_source: str | None,
                 run_json: Callable[[Any], Path]) -> None:
        self.contexts = dict(contexts) if contexts else {}
        self.allow_cpu_offload = allow_cpu_offload
        self.accept_data_notice = accept_data_notice
        self.data_source = data_source  # the suite's words for where the data comes from (notices)
        self.run_json = run_json  # a model's results folder's run.json (the probe is recorded there)
        self.probes: dict[tuple[str, str], tuple[Any, str]] = {}  # (model, level) -> (Ollama probe, why not)

    def context(self, spec: Any, level: str) -> int | None:
        """The context a model's setting asks (``--ollama-context``); None: no variant."""
        if spec.preset != "ollama" or not self.contexts:
            return None
        return self.contexts.get(level)

    def of(self, spec: Any, level: str) -> Variant | None:
        """The variant of ``spec`` for ``level``; None when the model runs as it is."""
        num_ctx = self.context(spec, level)
        if num_ctx is None:
            return None
        probe, why = self._probe(spec, level, num_ctx)
        variant = Variant(f"{spec.label}@{num_ctx}", {"num_ctx": num_ctx}, why=why)
        if probe is not None:
            variant.record_fields = {"ollama": {"num_ctx": num_ctx, "context": probe.context},
                                     "cpu_offload": probe.cpu_offload}
            variant.na_fields = {"ollama": {"num_ctx": num_ctx, **probe.to_dict()}, "cpu_offload": probe.cpu_offload}
        return variant

    def _probe(self, spec: Any, level: str, num_ctx: int) -> tuple[Any, str]:
        """Load and probe the setting's variant once per process; record it in run.json."""
        key = (spec.label, level)
        if key not in self.probes:
            from pytest_assistant_eval.providers.ollama import applicable, probe
            from pytest_assistant_eval.providers.presets import resolve_base_url
            from pytest_assistant_eval.results.usage import update_run_entry

            try:
                found = probe(resolve_base_url(spec.preset, spec.base_url), spec.model, num_ctx)
            except ProviderError as exc:
                self.probes[key] = (None, f"the Ollama variant could not be loaded: {exc}")
                return self.probes[key]
            if found.forwarded_to:
                # A model the server forwards to a cloud service needs that route's notice too (S4.4).
                from pytest_assistant_eval.providers.errors import NoticeRequired
                from pytest_assistant_eval.providers.notices import check_notice

                try:
                    check_notice(spec.preset, spec.model, spec.base_url, self.accept_data_notice,
                                 world_verified=True, forwarded_to=found.forwarded_to,
                                 **({"data_source": self.data_source} if self.data_source else {}))
                except NoticeRequired as exc:
                    self.probes[key] = (None, str(exc))
                    return self.probes[key]
            ok, why = applicable(found, num_ctx, self.allow_cpu_offload)
            self.probes[key] = (found, "" if ok else why)
            entry = {**found.to_dict(), "applicable": ok, "reason": why or None, "cpu_offload": found.cpu_offload}
            update_run_entry(self.run_json(spec), lambda run: run.setdefault("ollama", {}).__setitem__(level, entry))
        return self.probes[key]
