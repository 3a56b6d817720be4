"""Worker functions run in child processes (spawned) by the pacing tests and the benchmark."""

from __future__ import annotations

import time
from typing import Any


def paced_requests(ledger_path: str, route: str, base_url: str, count: int, *, max_per_day: int | None = None,
                   start_interval: float = 0.0, pace: float = 0.0, margin: float = 0.03) -> dict[str, Any]:
    """Send up to ``count`` requests through a real provider and pacer; report what happened."""
    from pytest_assistant_eval.messages import ChatRequest, Message
    from pytest_assistant_eval.providers.errors import BudgetUsed, ProviderError, RetryPolicy
    from pytest_assistant_eval.providers.ledger import Ledger
    from pytest_assistant_eval.providers.pacing import Pacer
    from pytest_assistant_eval.providers.presets import make_provider

    pacer = Pacer(Ledger(ledger_path), route, pace=pace, start_interval=start_interval,
                  max_requests_per_day=max_per_day, margin=margin)
    provider = make_provider("openai-compatible", "paced-model", base_url=base_url, key="test-key", pacer=pacer,
                             stream=False, retry=RetryPolicy(max_attempts=1))
    request = ChatRequest(model="paced-model", messages=[Message(role="user", content="hi")], tools=[],
                          max_output_tokens=8)
    result: dict[str, Any] = {"ok": 0, "errors": [], "budget_used": None, "started": time.time()}
    try:
        for _ in range(count):
            try:
                provider.complete(request)
                result["ok"] += 1
            except BudgetUsed as used:
                result["budget_used"] = str(used)
                break
            except ProviderError as error:
                result["errors"].append(error.code)
    finally:
        provider.close()
    result["finished"] = time.time()
    return result


def paced_for(ledger_path: str, preset: str, model: str, base_url: str, seconds: float, *, text: str = "hi",
              max_output: int = 8, stream: bool = True, margin: float = 0.03) -> dict[str, Any]:
    """Send requests through a real provider and pacer of ``preset`` for ``seconds``; report what happened."""
    from pytest_assistant_eval.messages import ChatRequest, Message
    from pytest_assistant_eval.providers.errors import ProviderError, RetryPolicy
    from pytest_assistant_eval.providers.ledger import Ledger
    from pytest_assistant_eval.providers.pacing import Pacer
    from pytest_assistant_eval.providers.presets import make_provider, route

    pacer = Pacer(Ledger(ledger_path), route(preset, base_url), margin=margin)
    provider = make_provider(preset, model, base_url=base_url, key="test-key", pacer=pacer, stream=stream,
                             retry=RetryPolicy(max_attempts=3))
    request = ChatRequest(model=model, messages=[Message(role="user", content=text)], tools=[],
                          max_output_tokens=max_output)
    result: dict[str, Any] = {"ok": 0, "errors": [], "waited": 0.0, "refusals": []}
    _time_refusals(pacer, result["refusals"])
    deadline = time.time() + seconds
    try:
        while time.time() < deadline:
            try:
                provider.complete(request)
                result["ok"] += 1
            except ProviderError as error:
                result["errors"].append(error.code)
    finally:
        provider.close()
    result["waited"] = pacer.waited_total
    return result


def _time_refusals(pacer: Any, refusals: list[dict[str, float]]) -> None:
    """Note per 429 when its request was sent, when the 429 arrived and when its hold was in the ledger.

    The benchmark tells from these which refusals no pacing could have avoided: a request sent
    before any worker had received the first 429 was on the wire, one sent before the first hold
    was in the ledger was booked by a worker that could not know of it.
    """
    sent = [0.0]
    before_request, on_rate_limited = pacer.before_request, pacer.on_rate_limited

    def timed_before_request(*args: Any, **kwargs: Any) -> float:
        slot = before_request(*args, **kwargs)
        sent[0] = time.time()
        return slot

    def timed_on_rate_limited(*args: Any, **kwargs: Any) -> None:
        received = time.time()
        on_rate_limited(*args, **kwargs)
        refusals.append({"sent": sent[0], "received": received, "recorded": time.time()})

    pacer.before_request, pacer.on_rate_limited = timed_before_request, timed_on_rate_limited
