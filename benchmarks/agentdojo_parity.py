"""Our oracle against AgentDojo's own ground-truth run on every pair of every suite (issue 25).

    python benchmarks/agentdojo_parity.py --attack important_instructions [--suite banking] [--keep DIR]

Runs all user tasks of the four suites (97 in v1.2.1), each benign and crossed with every
injection task (949 pairs), once through our run (``scripted:oracle``: our loop, world
backend, records, grading and board) and once through AgentDojo's ``GroundTruthPipeline`` and
its own ``benchmark`` functions with an attack AgentDojo builds itself
(``suites/agentdojo/parity.py``). Prints both sides' benign utility, utility under attack and
attack success per suite and overall, each pair that differs, and both run times (ours
includes writing every record and checkpoint, and grading). Exit 1 when any pair differs.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_assistant_eval.run.session import RunSession  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.parity import compare  # noqa: E402


def _share(kn: tuple[int, int]) -> str:
    k, n = kn
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attack", default="important_instructions", help="any attack of AgentDojo's registry")
    parser.add_argument("--suite", action="append", default=[], help="only these suites (default: all four)")
    parser.add_argument("--keep", type=Path, default=None, help="keep our records in this folder")
    parser.add_argument("--benchmark-version", default=None,
                        help="AgentDojo's benchmark version on both sides (default: the installed agentdojo's)")
    args = parser.parse_args()

    from pytest_assistant_eval.suites.agentdojo.cells import suites
    from pytest_assistant_eval.suites.agentdojo.versions import default_benchmark_version

    version = args.benchmark_version or default_benchmark_version()
    chosen = {name: s for name, s in suites(version).items() if not args.suite or name in args.suite}
    user_tasks = {name: sorted(s.user_tasks, key=lambda t: int(t.rsplit("_", 1)[1])) for name, s in chosen.items()}
    injection_tasks = {name: sorted(s.injection_tasks, key=lambda t: int(t.rsplit("_", 1)[1]))
                       for name, s in chosen.items()}
    # Both sides build AgentDojo's pipeline, which imports every model SDK (3 s): load it before
    # either side's clock starts (light_import.py defers it to first use), so neither pays it.
    import agentdojo.agent_pipeline

    assert agentdojo.agent_pipeline.AgentPipeline
    with tempfile.TemporaryDirectory() as tmp:
        ours, theirs = compare(user_tasks, injection_tasks, args.attack, args.keep or Path(tmp), version,
                               make_session=RunSession)
    print(f"AgentDojo {version}, attack {args.attack}, scripted:oracle against GroundTruthPipeline: "
          f"{sum(map(len, user_tasks.values()))} user tasks, "
          f"{sum(len(user_tasks[s]) * len(injection_tasks[s]) for s in user_tasks)} crossed pairs")
    print(f"{'suite':<10} {'side':<10} {'benign utility':>18} {'utility under attack':>22} {'attack success':>20}")
    mine, agentdojo = ours.figures(), theirs.figures()
    for suite in mine:
        for side, figures in (("ours", mine), ("agentdojo", agentdojo)):
            f = figures.get(suite, {})
            print(f"{suite:<10} {side:<10} {_share(f.get('benign_utility', (0, 0))):>18} "
                  f"{_share(f.get('utility_under_attack', (0, 0))):>22} {_share(f.get('attack_success', (0, 0))):>20}")
    different = sorted((p, ours.verdicts.get(p), theirs.verdicts.get(p)) for p in set(ours.verdicts) | set(theirs.verdicts)
                       if ours.verdicts.get(p) != theirs.verdicts.get(p))
    for pair, a, b in different:
        print(f"differs: {pair}: ours (utility, attack success) {a}, AgentDojo's {b}")
    ratio = f" ({ours.seconds / theirs.seconds:.2f}x)" if theirs.seconds else ""
    print(f"run time: ours {ours.seconds:.2f} s (run, records and grading), AgentDojo's {theirs.seconds:.2f} s{ratio}")
    print("equal on every pair" if not different else f"{len(different)} pair(s) differ")
    return 1 if different else 0


if __name__ == "__main__":
    raise SystemExit(main())
