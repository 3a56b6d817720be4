"""Plain-text tables that print the same in a terminal, a pipe, a file and a test.

Dependency-free on purpose: the calibration and leaderboard tables are compared
in tests and pasted into issues, so their bytes must not depend on a terminal's
width, colour support or a library's version. Widths are display widths (East
Asian wide characters count two columns, combining marks none), so a table of
names with "ä", "ß" or "模型" still lines up.

This module only lays text out; it never computes a rate (see ``stats``).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import Literal

from pytest_assistant_eval.stats import Interval

__all__ = ["display_width", "pad", "render_table", "format_rate", "format_count", "format_percent"]

Align = Literal["l", "r", "c"]

_ZERO_WIDTH = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}


def _char_width(ch: str) -> int:
    if ch in _ZERO_WIDTH or unicodedata.combining(ch):
        return 0
    category = unicodedata.category(ch)
    if category in ("Mn", "Me", "Cf"):
        return 0
    if category == "Cc":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospaced terminal."""
    return sum(_char_width(ch) for ch in text)


def pad(text: str, width: int, align: Align = "l") -> str:
    """``text`` padded with spaces to ``width`` columns (never cut)."""
    gap = max(0, width - display_width(text))
    if align == "r":
        return " " * gap + text
    if align == "c":
        left = gap // 2
        return " " * left + text + " " * (gap - left)
    return text + " " * gap


def _cell(value: object) -> str:
    if value is None:
        return ""
    # A cell is one line: a newline would break every column after it.
    return " ".join(str(value).split()) if ("\n" in str(value) or "\t" in str(value)) else str(value)


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    align: Sequence[Align] | None = None,
    title: str | None = None,
    *,
    box: bool = False,
) -> str:
    """Lay out a table as text.

    ``align`` gives each column 'l' (left), 'r' (right, for numbers) or 'c';
    by default every column is left-aligned. The simple style puts a rule under
    the headers and two spaces between columns; ``box=True`` draws Unicode box
    lines. The result has no trailing spaces and ends without a newline.
    """
    ncols = len(headers)
    align = list(align) if align is not None else ["l"] * ncols
    if len(align) != ncols:
        raise ValueError(f"align has {len(align)} entries for {ncols} columns")
    for a in align:
        if a not in ("l", "r", "c"):
            raise ValueError(f"align must be 'l', 'r' or 'c', got {a!r}")
    cells = [[_cell(h) for h in headers]]
    for i, row in enumerate(rows):
        if len(row) != ncols:
            raise ValueError(f"row {i} has {len(row)} cells for {ncols} columns")
        cells.append([_cell(v) for v in row])
    widths = [max(display_width(r[c]) for r in cells) for c in range(ncols)]

    lines: list[str] = []
    if title:
        lines.append(title)
    if box:
        def rule(left: str, mid: str, right: str) -> str:
            return left + mid.join("─" * (w + 2) for w in widths) + right

        def line(r: list[str], header: bool) -> str:
            parts = [pad(v, w, "l" if header and a != "r" else a) for v, w, a in zip(r, widths, align)]
            return "│ " + " │ ".join(parts) + " │"

        lines.append(rule("┌", "┬", "┐"))
        lines.append(line(cells[0], True))
        lines.append(rule("├", "┼", "┤"))
        lines.extend(line(r, False) for r in cells[1:])
        lines.append(rule("└", "┴", "┘"))
    else:
        def line(r: list[str], header: bool) -> str:  # type: ignore[misc]
            parts = [pad(v, w, "l" if header and a != "r" else a) for v, w, a in zip(r, widths, align)]
            return "  ".join(parts).rstrip()

        lines.append(line(cells[0], True))
        lines.append("  ".join("─" * w for w in widths))
        lines.extend(line(r, False) for r in cells[1:])
    return "\n".join(lines)


def format_percent(value: float | None, digits: int = 0) -> str:
    """``0.8333`` -> ``83%``; None -> ``–``."""
    if value is None:
        return "–"
    return f"{value * 100:.{digits}f}%"


def format_rate(interval: Interval, digits: int = 0) -> str:
    """A rate with its n and interval: ``83% (n=12, 55–95%)``; with nothing counted ``– (n=0)``."""
    if interval.rate is None or interval.n == 0:
        return f"– (n={interval.n})"
    low, high = _bound(interval.low, digits), _bound(interval.high, digits)
    return f"{format_percent(interval.rate, digits)} (n={interval.n}, {low}–{high}%)"


def _bound(value: float, digits: int) -> str:
    """An interval's bound in percent; a bound that is not 0 or 1 is never rounded onto 0% or
    100%: 949 of 949 has a lower bound of 99.6%, and "100–100%" would claim a certainty it lacks."""
    text = f"{value * 100:.{digits}f}"
    while 0.0 < value < 1.0 and float(text) in (0.0, 100.0) and digits < 6:
        digits += 1
        text = f"{value * 100:.{digits}f}"
    return text


def format_count(count: int | None, total: int | None = None) -> str:
    """A count with thousands separators, out of a total when given: ``1,234`` or ``10/12``; None -> ``–``."""
    if count is None:
        return "–"
    if total is None:
        return f"{count:,}"
    return f"{count:,}/{total:,}"
