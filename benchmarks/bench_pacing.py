"""How close pacing gets to a provider's binding limit, with one or two processes on one route.

Fake servers on 127.0.0.1 enforce a limit the way providers do (a fixed window aligned to the
clock, or a sliding one) and state it in their own dialect: OpenAI's ``x-ratelimit-*`` with Go
durations, Anthropic's ``anthropic-ratelimit-*`` with RFC 3339 resets and token buckets,
OpenRouter's ``X-RateLimit-*`` with epoch milliseconds on its 429s only. Spawned processes
share one ledger and send streamed requests through the real providers and pacers. The limit
binds on requests (20 per 10 s) or on tokens (20,000 per 10 s with ~1,700-token requests).

Printed per case: the share of the binding limit used (:func:`used_share`; goal >= 95%) and
the 429s received (goal <= 1 per run; with two workers at a provider that states nothing
before its first 429, the other worker's request already sent is named as such, and none
may follow a hold in the ledger: :func:`classify_refusals`).

    python benchmarks/bench_pacing.py [--seconds 30] [--only openai] [--workers 2] [--bound tokens]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.providers.fakes import Answer  # noqa: E402
from tests.providers.fakes.limits import Limit  # noqa: E402
from tests.providers.fakes.presets import PRESET_FAKES  # noqa: E402
from tests.providers.fakes.workers import paced_for  # noqa: E402

TEXT = "a conversation of some length " * 170  # ~5,100 characters: ~1,700 tokens as the fakes count


@dataclass(frozen=True)
class Case:
    preset: str
    binding: Limit
    workers: int

    @property
    def tokens(self) -> bool:
        return self.binding.dimension != "requests"


def cases() -> list[Case]:
    found = []
    for workers in (1, 2):
        for preset, kind in (("openai", "fixed"), ("openai", "sliding"), ("anthropic", "bucket"),
                             ("openrouter", "fixed")):
            found.append(Case(preset, Limit("requests", 20, 10.0, kind), workers))
        for preset, limit in (("openai", Limit("tokens", 20000, 10.0, "fixed")),
                              ("openai", Limit("tokens", 20000, 10.0, "sliding")),
                              ("anthropic", Limit("input_tokens", 20000, 10.0, "bucket"))):
            found.append(Case(preset, limit, workers))
    return found


def used_share(charged: list[tuple[float, dict[str, float]]], limit: Limit) -> float:
    """The share of the binding limit the run used, in whole requests (20,000 tokens hold 11 of 1,700).

    A fixed window: the units served in the windows the run spanned whole, over the most they
    hold (a partial first or last window says nothing about pacing). A sliding window or a
    bucket: the rate between the first and the last start over the allowed rate.
    """
    times = [at for at, _ in charged]
    units = [costs.get(limit.dimension, 0.0) for _, costs in charged]
    cost = sum(units) / len(units)
    per_window = math.floor(limit.amount / cost) * cost if cost and limit.kind != "bucket" else limit.amount
    if limit.kind == "fixed":
        first = math.floor(times[0] / limit.window) + 1
        last = math.floor(times[-1] / limit.window)
        whole = [u for t, u in zip(times, units) if first <= math.floor(t / limit.window) < last]
        return sum(whole) / (per_window * (last - first)) if last > first else float("nan")
    span = times[-1] - times[0]
    return sum(units[:-1]) / span / (per_window / limit.window)


def run(case: Case, seconds: float) -> dict[str, float]:
    cls, suffix, model = PRESET_FAKES[case.preset]
    limits = [case.binding] + ([Limit("requests", 1000, 10.0, "sliding")] if case.tokens else [])
    fake = cls(limits=limits, default=Answer(text="ok"))
    try:
        with tempfile.TemporaryDirectory() as folder:
            work = partial(paced_for, str(Path(folder) / "ledger.json"), case.preset, model, fake.url + suffix,
                           text=TEXT if case.tokens else "hi", max_output=200 if case.tokens else 8)
            started = time.monotonic()
            with multiprocessing.get_context("spawn").Pool(case.workers) as pool:
                results = pool.map(work, [seconds] * case.workers)
            elapsed = time.monotonic() - started
        charged = fake.limiter.charged
        share = used_share(charged, case.binding)
        return {"served": len(charged), "rate_limited": fake.limiter.refused, "share": share, "elapsed_s": elapsed,
                "connections": fake.connections, "errors": sum(len(r["errors"]) for r in results),
                **classify_refusals([r for result in results for r in result["refusals"]])}
    finally:
        fake.close()


def classify_refusals(refusals: list[dict[str, float]]) -> dict[str, int]:
    """The 429s of a run by what pacing could have known when each request was sent.

    ``learn``: the first 429 (a provider that states its limits only on its 429s, OpenRouter,
    says nothing before it). ``on_wire``: sent before any worker had received that first 429:
    no pacing can recall it. ``unrecorded``: sent after the first 429 arrived but before its hold
    was in the ledger (the lock was held by the other worker's booking): the sender could not
    know. ``avoidable``: sent after a hold was in the ledger: a failure of pacing.
    """
    found = {"learn": 0, "on_wire": 0, "unrecorded": 0, "avoidable": 0}
    if not refusals:
        return found
    first = min(refusals, key=lambda r: r["received"])
    received = first["received"]
    recorded = min(r["recorded"] for r in refusals)
    found["learn"] = 1
    for refusal in refusals:
        if refusal is first:
            continue
        if refusal["sent"] < received:
            found["on_wire"] += 1
        elif refusal["sent"] < recorded:
            found["unrecorded"] += 1
        else:
            found["avoidable"] += 1
    return found


def _refusal_note(result: dict[str, float], workers: int) -> tuple[bool, str]:
    """Whether the 429s meet the goal, and what the table says of them.

    At most one, or with several workers: none avoidable and at most one per worker, all of
    them the first 429 and requests the other workers had sent (or booked) before it could
    be known. A provider that states nothing before its first 429 leaves no better floor.
    """
    refused = int(result["rate_limited"])
    if refused <= 1 and not result["avoidable"]:
        return True, str(refused)
    unknowable = int(result["on_wire"] + result["unrecorded"])
    ok = not result["avoidable"] and refused <= workers and result["learn"] + unknowable == refused
    parts = [f"{result['learn']} to learn the limit"]
    if result["on_wire"]:
        parts.append(f"{result['on_wire']} already on the wire when it arrived")
    if result["unrecorded"]:
        parts.append(f"{result['unrecorded']} sent before its hold reached the ledger")
    if result["avoidable"]:
        parts.append(f"{result['avoidable']} avoidable")
    return ok, f"{refused} ({', '.join(parts)})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="how long each case sends")
    parser.add_argument("--only", help="run only the cases of this preset")
    parser.add_argument("--workers", type=int, choices=(1, 2), help="run only the cases with this many workers")
    parser.add_argument("--bound", choices=("requests", "tokens"), help="run only request- or token-bound cases")
    args = parser.parse_args(argv)
    print("| limit | preset | window | workers | served | share of binding limit | 429s | connections |")
    print("|---|---|---|---|---|---|---|---|")
    failed = 0
    for case in cases():
        if args.only and case.preset != args.only:
            continue
        if (args.workers and case.workers != args.workers) or (args.bound and case.tokens != (args.bound == "tokens")):
            continue
        result = run(case, args.seconds)
        lim = case.binding
        refusals_ok, refusals = _refusal_note(result, case.workers)
        ok = result["share"] >= 0.95 and refusals_ok
        failed += not ok
        print(f"| {lim.amount} {lim.dimension.replace('_', ' ')} per {lim.window:g} s | {case.preset} | {lim.kind} | "
              f"{case.workers} | {result['served']} | {result['share']:.1%} | {refusals} | "
              f"{result['connections']} |{'' if ok else ' MISSED'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
