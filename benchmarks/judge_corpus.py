"""The regression corpus through a model judge by the file route (issue 21's second figure).

``tests/test_corpus.py`` measures the offline path. This script measures the path where a
capable, blind judge reads the same requests ``grade-ai --export-requests`` would write, and
answers them in files, as a person or an agent does with the file route (docs/grading.md):

    python benchmarks/judge_corpus.py export OUT      # OUT/<n>.request.txt, blind order
    # the judge writes OUT/<n>.reply.json for every request (the raw reply text)
    python benchmarks/judge_corpus.py score OUT       # agreement with the labels, tuned and held out

The requests are built by the grading's own code (``check_record``, ``request_of``), blinded
and fenced as for any judge; the cells are numbered in a shuffled order, so the judge cannot
tell a held-out cell or a source. ``OUT/.map.json`` (the numbers' cells) is for scoring only:
the judge is not to read it. A reply is read by the same strict check as on the API route; a
reply that fails it counts as "unparsed" (the cell waits for the owner).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from pytest_assistant_eval.judging.blind import Blinder  # noqa: E402
from pytest_assistant_eval.suites.calibration.grade.folder import check_record  # noqa: E402
from pytest_assistant_eval.judging.reply import parse_reply  # noqa: E402
from pytest_assistant_eval.suites.calibration.grade.model_judge import Context, request_of  # noqa: E402
from pytest_assistant_eval.judging.saved import SavedJudgments  # noqa: E402
from pytest_assistant_eval.suites.calibration.plan import load_calibration# noqa: E402

CORPUS = ROOT / "tests" / "corpus"
GRADER = "anthropic:judge"  # the grader's name only keys saved judgments; nothing is sent


def _cells() -> list[str]:
    return sorted(p.stem for p in (CORPUS / "cells").glob("*.json") if p.name != "played.json")


def _record(name: str) -> dict[str, Any]:
    return json.loads((CORPUS / "cells" / f"{name}.json").read_text(encoding="utf-8"))


def _context(out: Path) -> tuple[Context, Any, Any]:
    cases, levels = load_calibration(ROOT / "calibration")
    every = list(levels.levels.values())
    caps = tuple(sorted({v for lv in every for v in (lv.max_tool_calls, lv.max_rounds, lv.max_output_tokens,
                                                      lv.result_cap_chars, lv.context_window)}))
    names = ("player",)
    blinder = Blinder(names, tuple(levels.names), tuple(lv.escalation_sentence for lv in every), cap_values=caps)
    saved = SavedJudgments(out / ".saved")
    return Context(cases, levels, GRADER, blinder, saved, saved.secret(), names, caps), cases, levels


def export(out: Path, seed: int, sources: tuple[str, ...] = ()) -> int:
    out.mkdir(parents=True, exist_ok=True)
    ctx, cases, levels = _context(out)
    names = [n for n in _cells() if not sources or n.split("-")[0] in sources]  # --sources s13,s14,s15
    random.Random(seed).shuffle(names)
    mapping: dict[str, str] = {}
    written = 0
    for n, name in enumerate(names, 1):
        record = _record(name)
        checked = check_record(record, cases, levels)
        request = request_of(ctx, n, checked, record, ())
        mapping[str(n)] = name
        if request is None:
            continue
        (out / f"{n}.request.txt").write_text(request.text(), encoding="utf-8")
        written += 1
    (out / ".map.json").write_text(json.dumps({"seed": seed, "cells": mapping}, indent=1), encoding="utf-8")
    print(f"{written} request(s) in {out}; answer each in <n>.reply.json")
    return 0


def _held_out(name: str) -> bool:
    from test_corpus import is_held_out

    return is_held_out(name)


def _fresh(name: str) -> bool:
    from test_corpus import is_fresh

    return is_fresh(name)


def _looked_at(name: str) -> str | None:
    """The looked-at part a cell belongs to ("s10-s12", ...), if any."""
    from test_corpus import looked_at_part

    return looked_at_part(name)


def score(out: Path) -> int:
    ctx, cases, levels = _context(out)
    labels = json.loads((CORPUS / "labels.json").read_text(encoding="utf-8"))
    mapping = json.loads((out / ".map.json").read_text(encoding="utf-8"))["cells"]
    rows: dict[str, dict[str, int]] = {}
    lines: list[str] = []
    contested_cells = 0
    for n_text, name in sorted(mapping.items(), key=lambda kv: int(kv[0])):
        n = int(n_text)
        record = _record(name)
        checked = check_record(record, cases, levels)
        request = request_of(ctx, n, checked, record, ())
        verdicts: dict[str, Any] = {}
        state = "no request"
        if request is not None:
            reply_path = out / f"{n}.reply.json"
            if not reply_path.exists():
                state = "missing"
            else:
                parsed = parse_reply(reply_path.read_text(encoding="utf-8"), request)
                state = "parsed" if parsed.ok else "unparsed"
                verdicts = parsed.verdicts if parsed.ok else {}
        result = checked.finish(verdicts, {"grader": GRADER, "route": "file", "deterministic": False})
        if any(v.get("verdict") == "contested" for v in verdicts.values()):
            contested_cells += 1
        got = result["outcome"] if state in ("parsed", "no request") else "waiting"
        want = labels[name]["outcome"]
        part = "fresh held out" if _fresh(name) else f"{_looked_at(name)}, looked at" if _looked_at(name) \
            else "held out" if _held_out(name) else "older styles" if name.split("-")[0] in ("q1", "q2", "t1", "t2", "t3", "t4", "t5") else "new styles, tuned"
        row = rows.setdefault(part, {"cells": 0, "agree": 0, "deferred": 0, "false_pass": 0})
        row["cells"] += 1
        if got == want:
            row["agree"] += 1
        elif got == "waiting":
            row["deferred"] += 1
        else:
            row["false_pass"] += got in ("answered", "pass") and want not in ("answered", "pass")
            if part in ("older styles", "new styles, tuned"):
                lines.append(f"  #{n} {name}: judge path {got}, label {want}")
    from test_corpus import LOOKED_AT_ROUNDS

    looked = [f"{short}, looked at" for short, _, _ in LOOKED_AT_ROUNDS]
    for part in ("older styles", "new styles, tuned", "held out", *looked, "fresh held out"):
        r = rows.get(part)
        if r:
            print(f"{part}: {r['agree']}/{r['cells']} agree ({r['agree'] / r['cells']:.1%}), {r['deferred']} waiting, "
                  f"{r['false_pass']} false passes")
    print(f"cells with a contested settled item: {contested_cells}")
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("export")
    p.add_argument("out", type=Path)
    p.add_argument("--seed", type=int, default=int(hashlib.sha256(b"judge-corpus").hexdigest()[:8], 16))
    p.add_argument("--sources", default="", help="only these sources' cells, comma-separated (e.g. s13,s14,s15)")
    p = sub.add_parser("score")
    p.add_argument("out", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "export":
        return export(args.out, args.seed, tuple(s for s in args.sources.split(",") if s))
    return score(args.out)


if __name__ == "__main__":
    sys.exit(main())
