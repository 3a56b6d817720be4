"""The helpfulness review (S7.4): leave the facts to the judge, rate how helpful a sample is.

``--helpfulness --export-md HELPFUL.md [--per-level 8]`` draws the sample once into
``review.json`` and makes the judge's factual grades final (``judge_final``: the factual
queue no longer waits, so ``summary --record`` records the judge's grade, the owner's for a
cell already reviewed). Per level, ``per_level`` cells are drawn with the grading's seed from
the question cells with an answer and a readable judge's grading: classes in turn (diagnose,
interpret, lookup, scenario), each pick of the model picked least often at that level so far,
so a small sample still spreads over models and classes. ``--import-md`` saves each rating
(1 helpful, 2 partly helpful, 3 not helpful) and its free note; a rating not yet given never
makes a cell wait (a later rating adds the cell's new line).
"""

from __future__ import annotations

import random
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.records import write_text_atomic
from pytest_assistant_eval.review.context import ReviewContext
from pytest_assistant_eval.review.markdown import MD_FORMAT, parse_file
from pytest_assistant_eval.review.material import markdown_text
from pytest_assistant_eval.review.queue import reviewable
from pytest_assistant_eval.review.store import ReviewRefused, now

__all__ = ["DEFAULT_PER_LEVEL", "CLASS_TURNS", "draw_sample", "helpfulness_command", "HELPFULNESS"]

DEFAULT_PER_LEVEL = 8
CLASS_TURNS = ("diagnose", "interpret", "lookup", "scenario")
HELPFULNESS = {1: "helpful", 2: "partly helpful", 3: "not helpful"}


def _eligible(cell: dict[str, Any]) -> bool:
    judge = cell.get("judge") or {}
    parts = cell.get("parts") or []
    return (cell.get("kind") in ("question", "scenario") and reviewable(cell) and not judge.get("unparsed")
            and not all(p.get("no_answer") for p in parts))


def draw_sample(cells: list[dict[str, Any]], level_order: list[str], per_level: int, seed: int) -> list[int]:
    rng = random.Random(seed)
    by_level: dict[str, dict[str, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for cell in sorted(cells, key=lambda c: c["n"]):
        if _eligible(cell):
            by_level[cell["level"]][cell["class"]].append(cell)
    rank = {name: i for i, name in enumerate(level_order)}
    sample: list[int] = []
    for level in sorted(by_level, key=lambda lv: (rank.get(lv, len(rank)), lv)):
        pools = by_level[level]
        picked: Counter = Counter()
        taken = 0
        while taken < per_level and any(pools.values()):
            for cls in CLASS_TURNS:
                if taken >= per_level or not pools.get(cls):
                    continue
                models = sorted({c["model"]["label"] for c in pools[cls]})
                fewest = min(picked[m] for m in models)
                model = rng.choice([m for m in models if picked[m] == fewest])
                cell = rng.choice([c for c in pools[cls] if c["model"]["label"] == model])
                pools[cls].remove(cell)
                picked[model] += 1
                sample.append(cell["n"])
                taken += 1
    return sample


def _ensure_sample(ctx: ReviewContext, per_level: int | None) -> dict[str, Any]:
    help_ = ctx.index.helpfulness
    if help_ is not None:
        if per_level is not None and per_level != help_["per_level"]:
            raise ReviewRefused(f"the helpfulness sample was drawn with --per-level {help_['per_level']}; "
                                "a sample is never drawn again")
        return help_
    size = per_level if per_level is not None else DEFAULT_PER_LEVEL
    if size < 1:
        raise ReviewRefused("--per-level must be 1 or more")
    sample = draw_sample(list(ctx.cells.values()), list(ctx.levels.names), size, ctx.index.seed)
    ctx.index.helpfulness = {"per_level": size, "drawn_at": now(), "sample": sample, "ratings": {}}
    ctx.index.judge_final = True
    ctx.save_index()
    return ctx.index.helpfulness


def export_helpfulness(ctx: ReviewContext, path: Path, per_level: int | None, out: TextIO) -> int:
    help_ = _ensure_sample(ctx, per_level)
    todo = [n for n in help_["sample"] if str(n) not in help_["ratings"]]
    if path.exists():
        unsaved = [c for c in parse_file(path).cells if c.rating and str(c.n) not in help_["ratings"]]
        if unsaved:
            raise ReviewRefused(f"{path} holds ratings not imported yet ({path}:{unsaved[0].rating_line}); import it "
                                "first (--helpfulness --import-md), or move it away")
    parts = [f"<!-- {MD_FORMAT} helpfulness -->\n# Helpfulness: {ctx.grading_dir.name}\n\n"
             "Rate how helpful each answer is to the person who asked: 1 helpful, 2 partly helpful, 3 not helpful; "
             "add a note if you like (it may go on over indented lines). The facts are the judge's. Import with "
             f"`assistant-eval review --dir GRADING --helpfulness --import-md {path.name}`.\n"]
    for n in todo:
        parts.append(f"# Cell #{n}\n<!-- cell {n} material {ctx.cells[n]['material_sha256']} -->\n\n"
                     f"{markdown_text(ctx, n)}\n\n**Your rating**\n\n- helpfulness [1 / 2 / 3]:\n- note:\n")
    write_text_atomic(path, "\n".join(parts))
    print(f"Wrote {len(todo)} cell(s) of the helpfulness sample ({len(help_['sample'])} drawn, "
          f"{help_['per_level']} per level) to {path}; the judge's factual grades are final", file=out)
    return 0


def import_helpfulness(ctx: ReviewContext, path: Path, out: TextIO) -> int:
    help_ = ctx.index.helpfulness
    if help_ is None:
        raise ReviewRefused("no helpfulness sample is drawn yet: export one first (--helpfulness --export-md)")
    parsed = parse_file(path)
    if parsed.kind != "helpfulness":
        raise ReviewRefused(f"{path} is not a helpfulness file")
    problems: list[str] = []
    saved = 0
    for block in parsed.cells:
        cell = ctx.cells.get(block.n)
        if cell is None or block.n not in help_["sample"]:
            problems.append(f"{path}:{block.line}: cell #{block.n} is not in the helpfulness sample")
            continue
        if block.material != cell["material_sha256"]:
            problems.append(f"{path}:{block.line}: cell #{block.n} changed since this file was written; export again")
            continue
        if not block.rating:
            continue
        if block.rating not in ("1", "2", "3"):
            problems.append(f"{path}:{block.rating_line}: cell #{block.n}: {block.rating!r} is not allowed here "
                            "(only 1, 2, 3)")
            continue
        help_["ratings"][str(block.n)] = {"rating": int(block.rating), "note": block.note or None, "at": now()}
        saved += 1
    ctx.save_index()
    for line in problems:
        print(line, file=sys.stderr)
    left = sum(1 for n in help_["sample"] if str(n) not in help_["ratings"])
    print(f"Saved {saved} rating(s) from {path}; {left} cell(s) of the sample not rated yet", file=out)
    return 1 if problems else 0


def helpfulness_command(ctx: ReviewContext, options: Any, *, out: TextIO = sys.stdout) -> int:
    if options.export_md is not None:
        return export_helpfulness(ctx, options.export_md, options.per_level, out)
    return import_helpfulness(ctx, options.import_md, out)


def helpfulness_lines(ratings: dict[str, Any]) -> list[str]:
    """Lines for the summary: each rated cell, its rating and note."""
    out = []
    for n in sorted(ratings, key=int):
        r = ratings[n]
        note = f": {r['note']}" if r.get("note") else ""
        out.append(f"  #{n}: {r['rating']} ({HELPFULNESS.get(r['rating'], '?')}){note}")
    return out
