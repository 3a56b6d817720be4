"""How fast the world builds and answers (S9.4). A plain script: python benchmarks/bench_world.py"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from pytest_assistant_eval.suites.calibration.world import build_world, open_world, verify_world


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        builds, verifies = [], []
        world = None
        for i in range(5):
            t = time.perf_counter()
            world = build_world(root / f"b{i}")
            builds.append(time.perf_counter() - t)
            t = time.perf_counter()
            verify_world(world)
            verifies.append(time.perf_counter() - t)
        assert world is not None
        t = time.perf_counter()
        w = open_world(world, "base", root / "cell")
        opened = time.perf_counter() - t
        calls = []
        for i in range(1000):
            t = time.perf_counter()
            w.call("search_listings", {"kind": "rent", "max_price": 100}, turn=1, round=i)
            calls.append(time.perf_counter() - t)
        snaps = []
        for _ in range(100):
            t = time.perf_counter()
            w.snapshot()
            snaps.append(time.perf_counter() - t)
        w.close()
    print(f"build_world            median of 5:    {statistics.median(builds) * 1000:8.1f} ms")
    print(f"verify_world           median of 5:    {statistics.median(verifies) * 1000:8.1f} ms")
    print(f"open_world (copy)      once:           {opened * 1000:8.1f} ms")
    print(f"search_listings call   median of 1000: {statistics.median(calls) * 1e6:8.1f} us")
    print(f"snapshot               median of 100:  {statistics.median(snaps) * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
