"""What a provider's stop does to a cell: kept, nothing saved, or not applicable (S4.6, S4.7, S4.9, S4.10).

``stopped`` is called with the error that ended a cell's conversation. Every stop goes to
``spent.json`` with its failed attempts; a temporary or format error keeps the checkpoint for
``--resume`` (the cell is "kept"), any other error drops it ("unsaved", with what to do
first); a request refused twice in a row for the per-minute input-token quota makes the cell
not applicable. A temporary or fatal error also stops the run on the cell's route
(``Stops.routes``), a used daily quota leaves the route's other cells for tomorrow
(``Stops.quota_used``). The console text gives our words, then the provider's own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pytest_assistant_eval.run.cell_checkpoints import now
from pytest_assistant_eval.conversation.checkpoint import write_checkpoint
from pytest_assistant_eval.suites.plan import CellResult, ModelSpec
from pytest_assistant_eval.run.provider_setup import take_attempts
from pytest_assistant_eval.providers.errors import BudgetUsed, ProviderError
from pytest_assistant_eval.secret import Secrets

__all__ = ["Stops", "provider_words", "unsaved_advice", "same_request_stops", "tpm_refusals"]


def provider_words(exc: ProviderError, attempts: list[dict[str, Any]]) -> str:
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


def unsaved_advice(exc: ProviderError, spec: ModelSpec) -> str:
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


def same_request_stops(stops: list[dict[str, Any]]) -> int:
    """How many stops in a row, up to the last one, stopped the same request."""
    count = 0
    for stop in reversed(stops):
        if stop.get("request_sha256") != stops[-1].get("request_sha256"):
            break
        count += 1
    return count


def tpm_refusals(stops: list[dict[str, Any]]) -> int:
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


@dataclass
class Stops:
    """The routes this process stopped asking, and why (S4.6, S4.7)."""

    quota_used: set[str] = field(default_factory=set)  # routes whose daily budget or quota ran out
    routes: dict[str, str] = field(default_factory=dict)  # routes a temporary or fatal error stopped

    def left(self, cell_id: str, route: str) -> CellResult | None:
        """A cell not asked because its route stopped earlier in this process, or None."""
        if route in self.quota_used:
            return CellResult("left", f"{cell_id}: not asked today (the daily quota is used)", code="daily_quota")
        if route in self.routes:  # S4.7: a temporary or fatal error stops the run on its route
            return CellResult("left", f"{cell_id}: not asked: {self.routes[route]}")
        return None

    def stopped(self, cell_id: str, spec: ModelSpec, folder: Path, cp_path: Path, cp: dict[str, Any],
                conversation: Any, exc: ProviderError, *, day: str, pace: float, stream: bool, secrets: Secrets,
                write_na: Callable[[dict[str, Any], Any, ProviderError], None]) -> CellResult:
        """A provider error stopped the cell: keep its checkpoint (temporary, format) or drop it.

        Every stop goes to spent.json with its failed attempts (S4.10). A request refused twice
        in a row for the per-minute input-token quota makes the cell not applicable (S4.9):
        ``write_na(cp, conversation, exc)`` writes its record.
        """
        from pytest_assistant_eval.run import spent

        user_provider = getattr(conversation.user, "provider", None)
        attempts = [*take_attempts(conversation.assistant),
                    *({**a, "role": "user"} for a in take_attempts(user_provider))]
        earlier = [*(cp.get("saved_attempts") or []),
                   *(a for stop in cp.get("stops") or [] for a in stop.get("attempts", []))]
        if isinstance(exc, BudgetUsed) and cp.get("pending") is not None:
            # Our own budget stopped the request before it was sent: it does not count.
            cp["requests_by_day"][day] = max(0, cp["requests_by_day"].get(day, 0) - 1)
        if exc.code == "daily_quota":
            self.quota_used.add(spec.route)
        pending = cp.get("pending") or {}
        sha = pending.get("request_sha256")
        stop = {"code": exc.code, "at": now(), "status": getattr(exc, "status", None),
                "provider_code": getattr(exc, "provider_code", None),
                "message": getattr(exc, "provider_message", None), "request_sha256": sha,
                "input_tokens_estimate": pending.get("input_tokens_estimate"),
                "quota": getattr(exc, "quota", None), "attempts": attempts}
        stops = cp.setdefault("stops", [])
        stops.append(stop)
        same = same_request_stops(stops)
        words = provider_words(exc, [*earlier, *attempts])
        if sha:  # S4.9: every stop names its request and the request's corrected input-token estimate
            words += (f"\n  request {pending.get('request')} ({sha[:12]}), about "
                      f"{pending.get('input_tokens_estimate')} input tokens")
        keep = exc.kind in ("temporary", "format") and cp.get("pending") is not None
        na = keep and exc.code == "tpm_input" and tpm_refusals(stops) >= 2
        outcome = "na" if na else "kept" if keep else "unsaved"
        if exc.kind in ("temporary", "fatal") and exc.code != "daily_quota" and not na:
            # S4.7: the run stops on this route (an unreadable tool call and a cell not applicable do not stop it)
            self.routes.setdefault(spec.route, f"the run stopped after {cell_id}'s {exc.code}")
        spent.record_stop(folder, cell_id, exc, attempts, outcome=outcome, pace=pace,
                          stream=stream, turn=pending.get("turn"), request=pending.get("request"),
                          request_sha256=sha, input_tokens_estimate=pending.get("input_tokens_estimate"),
                          secrets=secrets)
        if na:
            write_na(cp, conversation, exc)
            cp_path.unlink(missing_ok=True)
            return CellResult("na", f"{cell_id}: not applicable (provider quota per request): the provider "
                              f"refused the same request twice in a row for its per-minute input-token quota"
                              f"{words}", code=exc.code)
        if keep:
            cp["stop"] = {k: stop[k] for k in ("code", "at", "status", "provider_code", "message")}
            cp["attempts"] = attempts
            write_checkpoint(cp_path, {k: v for k, v in cp.items() if not k.startswith("_")}, secrets=secrets)
            again = (f"\n  {cell_id}: the same request failed {same} times; --skip it or wait"
                     if same >= 3 else "")
            return CellResult("kept", f"{cell_id}: kept up to turn {pending['turn'] + 1}, request "
                              f"{pending['request']}; run again with --resume to continue it{words}{again}",
                              code=exc.code)
        cp_path.unlink(missing_ok=True)
        return CellResult("unsaved", f"{cell_id}: nothing was saved for this cell{unsaved_advice(exc, spec)}"
                          f"{words}", code=exc.code)
