"""One count of requests, tokens and cost (S8.7, issue 29 item 2): from the records, the same in every table.

A cell's usage is what its record's requests say their providers reported (``lines.measured``):
requests, input tokens (every request, cached ones included), of them the input read from the
provider's cache (OpenAI ``prompt_tokens_details.cached_tokens``, Anthropic
``cache_read_input_tokens``, Gemini ``cachedContentTokenCount``) and written to it (Anthropic
``cache_creation_input_tokens``), and output tokens. ``summary``, ``summary --record``, the
report and the data tables count it here, from the lines ``lines.build_lines`` gives (every
line carries ``USAGE_FIELDS``, whatever else it was built with), and price it here
(``tables/prices.py``). The judge's requests are apart: they are the grading's ``usage.json``,
never a model's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["USAGE_FIELDS", "LINE_USAGE_FIELDS", "UsageCount", "count_usage", "judge_usage", "usage_text"]

#: The usage a line carries: ``requests`` and ``output_tokens`` are results.jsonl fields; the rest
#: (``LINE_USAGE_FIELDS``) are the tables' only (results.jsonl line format 2 stays as it is).
USAGE_FIELDS = ("requests", "input_tokens", "cached_input_tokens", "cache_write_tokens", "output_tokens")
LINE_USAGE_FIELDS = ("input_tokens", "cached_input_tokens", "cache_write_tokens")


@dataclass
class UsageCount:
    """Requests and tokens over some cells; ``cells``: how many of them reported any token count."""

    cells: int = 0
    requests: int = 0
    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0

    def add(self, line: Mapping[str, Any]) -> None:
        """Count one results line's (or record digest's) usage."""
        self.requests += int(line.get("requests") or 0)
        given, taken = line.get("input_tokens"), line.get("output_tokens")
        if given is None and taken is None:
            return
        self.cells += 1
        self.input_tokens += int(given or 0)
        self.output_tokens += int(taken or 0)
        self.cached_input_tokens += int(line.get("cached_input_tokens") or 0)
        self.cache_write_tokens += int(line.get("cache_write_tokens") or 0)

    def merge(self, other: UsageCount) -> None:
        for name in ("cells", "requests", "input_tokens", "cached_input_tokens", "cache_write_tokens",
                     "output_tokens"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def reported(self) -> bool:
        return self.cells > 0


def count_usage(lines: Iterable[Mapping[str, Any]]) -> UsageCount:
    """The usage of ``lines``, counted once."""
    total = UsageCount()
    for line in lines:
        total.add(line)
    return total


def judge_usage(grading_dir: Path) -> dict[str, UsageCount]:
    """The judge's requests and tokens per ``PRESET:MODEL``, from the grading's ``usage.json`` (none: offline)."""
    from pytest_assistant_eval.records import USAGE_FORMAT, RecordError, read_json

    path = grading_dir / "usage.json"
    if not path.exists():
        return {}
    try:
        judges = read_json(path, USAGE_FORMAT).get("judges") or {}
    except RecordError:
        return {}
    out = {}
    for key, v in judges.items():
        if isinstance(v, Mapping):
            count = UsageCount(requests=int(v.get("requests") or 0), input_tokens=int(v.get("input_tokens") or 0),
                               cached_input_tokens=int(v.get("cached_input_tokens") or 0),
                               cache_write_tokens=int(v.get("cache_write_tokens") or 0),
                               output_tokens=int(v.get("output_tokens") or 0))
            count.cells = 1 if (count.input_tokens or count.output_tokens) else 0
            out[str(key)] = count
    return out


def usage_text(u: UsageCount) -> str:
    """``1,200 input (300 cached, 20 written to the cache) and 90 output token(s)``: the cache only when reported."""
    cache = []
    if u.cached_input_tokens:
        cache.append(f"{u.cached_input_tokens:,} cached")
    if u.cache_write_tokens:
        cache.append(f"{u.cache_write_tokens:,} written to the cache")
    shown = f" ({', '.join(cache)})" if cache else ""
    return f"{u.input_tokens:,} input{shown} and {u.output_tokens:,} output token(s)"
