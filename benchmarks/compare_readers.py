"""Issue 21: the libraries against the hand-written readers on the corpus' own wording.

    python benchmarks/compare_readers.py [--show 20]

Reads every assistant message and final answer of ``tests/corpus/cells`` and, per reader:

- units: each unit the reader reads after a number, by the domain's table and by pint's
  registry alone (what each finds that the other misses; a table spelling pint misreads,
  "kb" as a kilobarn, counts as the table's);
- numbers in words: the spans text2num reads (through ``reading/spelled``) against the words
  number-parser rewrites as digits;
- cost (number-parser, if installed: ``pip install number-parser``; it is not a dependency): the import (and, for pint, the registry's build) as a fresh process.

It prints the counts and the first ``--show`` finds of each kind, for a hand check.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def corpus_texts() -> list[str]:
    texts = []
    for path in sorted((REPO / "tests" / "corpus" / "cells").glob("*.json")):
        if path.name == "played.json":
            continue
        for entry in json.loads(path.read_text(encoding="utf-8"))["transcript"]:
            if entry["type"] == "assistant" and entry.get("text", "").strip():
                texts.append(entry["text"])
    return texts


def import_seconds(code: str) -> float:
    out = subprocess.run([sys.executable, "-c", f"import time; t = time.perf_counter(); {code}; "
                          "print(time.perf_counter() - t)"], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", type=int, default=20)
    args = parser.parse_args()
    try:
        import number_parser  # only for this comparison; not a dependency of the harness
    except ImportError:
        number_parser = None

    from pytest_assistant_eval.reading import units
    from pytest_assistant_eval.reading.numbers import find_quantities
    from pytest_assistant_eval.reading.spelled import spelled_numbers

    texts = corpus_texts()
    print(f"{len(texts)} assistant texts, {sum(map(len, texts))} characters")
    table_only, registry_only, both, unknown = [], [], [], []
    for text in texts:
        for q in find_quantities(text):
            if q.unit_unknown:
                unknown.append(q.text)
                continue
            if q.unit is None or q.spelled:
                continue
            written = q.text
            by_table = q.unit in units._DOMAIN_UNITS and not _registry_named(q.unit, written)
            pint_unit = _pint_reading(written)
            if q.unit in ("EUR", "USD", "GBP", "night", "%"):
                by_registry = False  # pint has no currencies and no nights; "%" is dimensionless there
            else:
                by_registry = pint_unit is not None and _same(pint_unit, q.unit)
            if by_table and by_registry:
                both.append(written)
            elif by_table:
                table_only.append(written)
            else:
                registry_only.append(written)
    print(f"units: both {len(both)}, table only {len(table_only)}, registry only {len(registry_only)}, "
          f"unknown unit words {len(unknown)}")
    print("  table only (first):", table_only[: args.show])
    print("  registry only:", registry_only[: args.show])
    print("  unknown:", unknown[: args.show])

    ours = [(text[s.start:s.end], s.value) for text in texts for s in spelled_numbers(text)]
    kept = [q.text for text in texts for q in find_quantities(text) if q.spelled]
    theirs: list[str] = []
    for text in texts if number_parser is not None else []:
        rewritten = number_parser.parse(text)
        theirs.extend(w for w in re.findall(r"[A-Za-z]+(?:-[A-Za-z]+)*", text)
                      if w.lower() in _NUMBER_WORDS and w not in rewritten.split())
    print(f"numbers in words: text2num spans {len(ours)} (quantities with a unit: {len(kept)}); "
          f"number-parser rewrote {len(theirs)} words")
    print("  text2num:", ours[: args.show])
    print("  kept as quantities:", kept[: args.show])
    print("  number-parser words:", theirs[: args.show])
    print("cost, fresh process:")
    print(f"  pint import {import_seconds('import pint'):.3f} s; import and registry "
          f"{import_seconds('import pint; pint.UnitRegistry()'):.3f} s")
    print(f"  text2num import {import_seconds('import text_to_num'):.3f} s")
    if number_parser is not None:
        print(f"  number-parser import {import_seconds('import number_parser'):.3f} s")
    return 0


_NUMBER_WORDS = {"one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                 "twenty", "thirty", "forty", "fifty", "sixty", "hundred", "thousand", "first", "second", "third"}


def _registry_named(unit: str, written: str) -> bool:
    return False


def _pint_reading(written: str) -> object | None:
    from pytest_assistant_eval.reading.units import _pint

    word = re.sub(r"^[^A-Za-zµ°²³$€£%]*", "", re.sub(r"^[-+\u2212]?[0-9][0-9 ,.\u00a0\u202f\u2009]*", "", written))
    word = word.split("/")[0].split(" per ")[0].strip().replace("²", "**2").replace("³", "**3")
    if not word:
        return None
    try:
        return _pint().parse_units(word.replace("-", " "))
    except Exception:
        return None


def _same(pint_unit: object, unit: str) -> bool:
    from pytest_assistant_eval.reading.units import UNITS, _TABLE_BASES, _dimension_name, _pint

    reg = _pint()
    dimension, factor = UNITS[unit]
    try:
        if _dimension_name(dict(pint_unit.dimensionality)) != dimension:  # type: ignore[attr-defined]
            return dimension == "data" and str(pint_unit).endswith("byte") and abs(
                reg.Quantity(1, pint_unit).to("byte").magnitude - factor) < 1e-9 * factor
        base = _TABLE_BASES.get(dimension)
        return base is not None and abs(reg.Quantity(1, pint_unit).to(base).magnitude - factor) <= 1e-9 * factor
    except Exception:
        return False


if __name__ == "__main__":
    raise SystemExit(main())
