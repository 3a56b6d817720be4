"""Secret scan: a planted key through every fault mode that echoes it; every output searched.

    python benchmarks/secret_scan.py [--short]

Runs the fault matrix of ``tests/secret_scan.py`` (17 runs over four wire formats; ``--short``:
the 7 runs the test suite runs) against fake servers on 127.0.0.1, each with ``-l -vv`` and
``--junitxml``, then searches every written file, the console and the junit files for the key
and every 8-character piece of it. Prints the runs, the files scanned and the pieces found
(each with where); exit 1 when any piece is found.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.secret_scan import cases, scan_all  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="only the CI form of the matrix")
    args = parser.parse_args()
    from pytest_assistant_eval.suites.calibration.world.build import build_world

    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        world = build_world(root / "world", REPO / "calibration" / "world")
        scan = scan_all(REPO / "calibration", world, root, short=args.short)
    print(f"fault cases: {len(cases(args.short))}; runs: {scan.runs}; files scanned: {scan.files}; "
          f"key pieces found: {scan.pieces_found} ({time.monotonic() - started:.1f} s)")
    for where in scan.found:
        print(f"  {where}")
    return 1 if scan.found else 0


if __name__ == "__main__":
    raise SystemExit(main())
