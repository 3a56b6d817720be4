"""What each of the project's rules costs per request, taken out one after another (issue 32).

    python benchmarks/rules_cost.py [--conversations 30] [--rounds 3] [--harness-only]

``compare_inspect.py`` sets the target (the harness's CPU per request at most 0.15 of inspect_ai's
on the same conversation); ``floor_per_request.py`` times the rules' own work alone. This one
answers the owner's question the other way round: how far the whole harness comes down when the
work a rule requires is *not done*, cumulatively, in one process, beside inspect_ai measured in the
same run (before and after the harness rows; their mean is the denominator):

1. ``as shipped``;
2. ``no fsync``: every ``fsync``/``fdatasync`` a no-op (a power cut may then lose the last
   checkpoint line, usage line or record; a killed process loses nothing either way);
3. ``no usage journal``: run.json's usage no longer appended before each request (a killed run's
   folder would not hold what it spent since its last finished cell);
4. ``no checkpoint``: nothing saved before a request (``--resume`` could not continue a cell, and a
   request sent before a kill would be counted nowhere);
5. ``record not redacted``: the record written without the key and path scan every writer does.

Rows 2 to 5 patch this process only (the functions the session calls); their records are not
valid records and nothing else reads them. Each row's figure is the best of ``--rounds`` rounds of
``--conversations`` conversations, so a loaded machine's slow round does not count against a row.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))
sys.path.insert(0, str(REPO))

import compare_inspect  # noqa: E402


def _cpu_per_request(session: Any, cell: Any, base_url: str, conversations: int, rounds: int) -> float:
    """The best round's CPU milliseconds per request the server received from the harness."""
    record_path = session.record_path(cell)
    best = float("inf")
    for _ in range(rounds):
        before = compare_inspect.served(base_url, "bench-harness")
        cpu = time.process_time()
        for _ in range(conversations):
            record_path.unlink(missing_ok=True)
            result = session.run_cell(cell)
            assert result.status == "done", result
        cpu = time.process_time() - cpu
        requests = compare_inspect.served(base_url, "bench-harness") - before
        best = min(best, cpu / requests * 1000)
    return best


def _take_out_fsync(session: Any) -> None:
    os.fsync = os.fdatasync = lambda fd: None  # type: ignore[assignment]


def _take_out_usage_journal(session: Any) -> None:
    type(session.providers).add_usage_to_folders = lambda self, label="": None  # type: ignore[method-assign]


def _take_out_checkpoint(session: Any) -> None:
    from pytest_assistant_eval.run import cell_checkpoints

    cell_checkpoints.save = lambda *args, **kwargs: None  # type: ignore[assignment]


def _take_out_record_redaction(session: Any) -> None:
    from pytest_assistant_eval.records import write_json_atomic
    from pytest_assistant_eval.run import cell_records

    cell_records.write_record = (  # type: ignore[assignment]
        lambda path, record, secrets=None: write_json_atomic(path, record, compact=True))


#: The rows after the first, each taking out one more rule's work.
STEPS: list[tuple[str, Callable[[Any], None]]] = [
    ("no fsync", _take_out_fsync),
    ("no usage journal", _take_out_usage_journal),
    ("no checkpoint", _take_out_checkpoint),
    ("record not redacted", _take_out_record_redaction),
]


def _inspect_ms(python: Path, base_url: str, tmp: Path, conversations: int) -> float:
    cpu, requests, _ = compare_inspect.run_inspect(python, base_url, tmp, conversations)
    return cpu / requests * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--harness-only", action="store_true")
    args = parser.parse_args()
    with compare_inspect.fake_server("rules-cost-") as (tmp, base_url):
        python, how = (None, "--harness-only") if args.harness_only else compare_inspect.ensure_inspect()
        theirs: list[float] = []
        if python is not None:
            theirs.append(_inspect_ms(python, base_url, tmp, args.conversations))
        session, cell = compare_inspect.harness_cell(base_url, tmp)
        assert session.run_cell(cell).status == "done"  # a warm-up conversation, not counted
        rows = [("as shipped", _cpu_per_request(session, cell, base_url, args.conversations, args.rounds))]
        for name, take_out in STEPS:
            take_out(session)
            rows.append((name, _cpu_per_request(session, cell, base_url, args.conversations, args.rounds)))
        session.close()
        if python is not None:
            theirs.append(_inspect_ms(python, base_url, tmp, args.conversations))
        inspect_ms = sum(theirs) / len(theirs) if theirs else None
        print(f"CPU per request, each row without the work of its rule and every rule above it "
              f"(best of {args.rounds} rounds of {args.conversations} conversations):")
        for name, ms in rows:
            ratio = f"   {ms / inspect_ms:.2f} of inspect_ai's" if inspect_ms else ""
            print(f"  {name:<22} {ms:6.2f} ms{ratio}")
        if inspect_ms:
            print(f"  {'inspect_ai':<22} {inspect_ms:6.2f} ms   (before and after: "
                  + ", ".join(f"{t:.2f}" for t in theirs) + ")")
        else:
            print(f"inspect_ai: not measured: {how}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
