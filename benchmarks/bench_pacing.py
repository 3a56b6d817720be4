"""How close pacing gets to a provider's binding limit, with one or two processes on one route.

Fake servers on 127.0.0.1 enforce a limit the way providers do (a fixed window aligned to the
clock, or a sliding one) and state it in their own dialect: OpenAI's ``x-ratelimit-*`` with Go
durations, Anthropic's ``anthropic-ratelimit-*`` with RFC 3339 resets and token buckets,
OpenRouter's ``X-RateLimit-*`` with epoch milliseconds on its 429s only. Spawned processes
share one ledger and send streamed requests through the real providers and pacers. The limit
binds on requests (20 per 10 s) or on tokens (20,000 per 10 s with ~1,700-token requests).

Printed per case: the share of the binding limit used (:func:`used_share`; goal >= 95%) and
the 429s received (goal <= 1 per run).

    python benchmarks/bench_pacing.py [--seconds 30] [--only openai]
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
                "connections": fake.connections, "errors": sum(len(r["errors"]) for r in results)}
    finally:
        fake.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="how long each case sends")
    parser.add_argument("--only", help="run only the cases of this preset")
    args = parser.parse_args(argv)
    print("| limit | preset | window | workers | served | share of binding limit | 429s | connections |")
    print("|---|---|---|---|---|---|---|---|")
    failed = 0
    for case in cases():
        if args.only and case.preset != args.only:
            continue
        result = run(case, args.seconds)
        lim = case.binding
        ok = result["share"] >= 0.95 and result["rate_limited"] <= 1
        failed += not ok
        print(f"| {lim.amount} {lim.dimension.replace('_', ' ')} per {lim.window:g} s | {case.preset} | {lim.kind} | "
              f"{case.workers} | {result['served']} | {result['share']:.1%} | {result['rate_limited']} | "
              f"{result['connections']} |{'' if ok else ' MISSED'}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
