"""How close pacing gets to a provider's allowed rate, with several processes on one route.

A fake OpenAI-compatible server on 127.0.0.1 allows N requests per window (a sliding window,
answering 429 beyond it) and states its limit in ``x-ratelimit-limit-requests`` like the real
service. Several spawned processes share one ledger and send requests through real providers
and pacers. Printed: the achieved rate as a share of the allowed one (goal >= 95%) and the
429s received (goal <= 1).

    python benchmarks/bench_pacing.py [--limit 20] [--window 2] [--workers 2] [--requests 30]
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.providers.fakes import Answer  # noqa: E402
from tests.providers.fakes.openai_fake import OpenAIFake  # noqa: E402
from tests.providers.fakes.workers import paced_requests  # noqa: E402


def run(limit: int, window: float, workers: int, requests: int, headers: bool = True,
        start_interval: float = 0.0) -> dict[str, float]:
    fake = OpenAIFake(rate_window=(limit, window), default=Answer(text="ok"), limit_headers=headers)
    try:
        with tempfile.TemporaryDirectory() as folder:
            route = f"openai-compatible@{fake.url}/v1"
            work = partial(paced_requests, str(Path(folder) / "ledger.json"), route, fake.url + "/v1",
                           start_interval=start_interval)
            started = time.monotonic()
            with multiprocessing.get_context("spawn").Pool(workers) as pool:
                results = pool.map(work, [requests] * workers)
            elapsed = time.monotonic() - started
        ok = sum(r["ok"] for r in results)
        served = sorted(r.at for r in fake.requests)
        span = served[-1] - served[0] if len(served) > 1 else float("nan")
        # The rate is measured between the first and the last start, as the server saw them.
        achieved = (len(served) - 1) / span if span else float("nan")
        allowed = limit / window
        return {"requests": len(served), "ok": ok, "rate_limited": fake.rate_limited, "achieved_per_s": achieved,
                "allowed_per_s": allowed, "share": achieved / allowed, "elapsed_s": elapsed}
    finally:
        fake.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=20, help="requests allowed per window")
    parser.add_argument("--window", type=float, default=2.0, help="window length in seconds")
    parser.add_argument("--workers", type=int, default=2, help="processes sharing the route")
    parser.add_argument("--requests", type=int, default=30, help="requests per process")
    parser.add_argument("--no-limit-headers", action="store_true",
                        help="the server does not state its limit: pacing learns from 429s alone")
    parser.add_argument("--start-interval", type=float, default=0.0, help="the preset's starting interval")
    args = parser.parse_args(argv)
    result = run(args.limit, args.window, args.workers, args.requests, headers=not args.no_limit_headers,
                 start_interval=args.start_interval)
    print(f"route allows {args.limit} requests per {args.window:g} s ({result['allowed_per_s']:.2f}/s); "
          f"{args.workers} processes sent {result['requests']} requests in {result['elapsed_s']:.1f} s")
    print(f"achieved rate: {result['achieved_per_s']:.2f}/s = {result['share']:.1%} of the allowed rate (goal >= 95%)")
    print(f"429s received: {result['rate_limited']} (goal <= 1)")
    return 0 if result["share"] >= 0.95 and result["rate_limited"] <= 1 else 1


if __name__ == "__main__":
    raise SystemExit(main())
