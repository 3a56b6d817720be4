"""A text cell no spreadsheet runs as a formula (issue 31, item M).

Folder names such as ``=HYPERLINK(...)`` and ``@SUM(1+1)`` reached ``--format csv`` as they were:
a spreadsheet opening the file runs them. A text cell that starts with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return is written with a leading apostrophe (OWASP's advice for CSV
injection), in CSV and markdown alike. Only text cells: a number stays a number (a negative
rate difference is ``-0.25``, not ``'-0.25``), so the tables still load with their declared types.
"""

from __future__ import annotations

from typing import Any

#: What a spreadsheet takes as the start of a formula (or a cell-splitting control character).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(value: str) -> str:
    """A text cell for CSV: neutral, and a lone CR made a line break (the writer ends lines with LF
    only, so it would leave a CR unquoted and split the row for every reader)."""
    return neutral(value).replace("\r\n", "\n").replace("\r", "\n")


def neutral(value: Any) -> Any:
    """``value`` as a table cell: a text that a spreadsheet would run gets a leading apostrophe."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value
