"""Grader-address scan: its miss rate on the corpus written for it (issue 31, item L).

    python benchmarks/grader_address.py

Reads ``tests/data/grader_address.yaml`` and prints, for the tuned phrasings and for the held-out
ones (written after tuning, never tuned on), how many the scan missed, each missed line, how many
ordinary answers it flagged, and the scan's time per text. Exit 1 when an ordinary answer is flagged.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.test_grader_address_corpus import measure  # noqa: E402


def main() -> int:
    started = time.perf_counter()
    flagged: list[str] = []
    texts = 0
    for section in ("address", "held_out"):
        missed, flagged, total, ordinary = measure(section)
        texts += total + ordinary
        print(f"{section}: {total} phrasings, {len(missed)} missed (miss rate {len(missed) / total:.1%})")
        for line in missed:
            print(f"  missed: {line!r}")
    print(f"ordinary answers flagged: {len(flagged)}")
    for line in flagged:
        print(f"  flagged: {line!r}")
    print(f"{(time.perf_counter() - started) / texts * 1e3:.2f} ms per text")
    return 1 if flagged else 0


if __name__ == "__main__":
    raise SystemExit(main())
