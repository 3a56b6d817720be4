"""Every table as data: ``--format text|json|csv|markdown`` for any table command (issue 24).

A command builds its figures once, as :class:`DataTable` s with declared column types, and
hands them to :func:`emit` with its text rendering. ``text`` prints that rendering unchanged;
``json`` and ``csv`` print one table (``--table NAME``, the first by default) with the columns
its schema declares, in order and typed, ids always strings; ``markdown`` prints every table as
a pipe table under its title. The schemas are documented in ``docs/results.md`` and versioned:
each row's first column ``table_format`` names the table and its version, so a file read back
later says what it holds. This module never computes a figure; it only writes what it is given.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO

from pytest_assistant_eval.tabular.cell_safety import FORMULA_STARTS, csv_text

__all__ = ["FORMATS", "Column", "DataTable", "TableFormatError", "add_format_arguments", "emit", "rate_columns",
           "rate_values", "to_json", "to_csv", "to_markdown"]

FORMATS = ("text", "json", "csv", "markdown")
ColumnType = Literal["string", "integer", "number", "boolean"]


class TableFormatError(ValueError):
    """A table's rows do not fit its declared columns, or no table has the asked name."""


@dataclass(frozen=True)
class Column:
    """One column: its name, its type (``string``, ``integer``, ``number``, ``boolean``; null allowed)."""

    name: str
    type: ColumnType
    doc: str = ""


@dataclass
class DataTable:
    """A named, versioned table: columns with fixed types and rows as mappings of column name to value."""

    name: str
    version: int
    title: str
    columns: Sequence[Column]
    rows: list[Mapping[str, Any]] = field(default_factory=list)

    @property
    def table_format(self) -> str:
        return f"assistant-eval.{self.name}/{self.version}"

    def records(self) -> list[dict[str, Any]]:
        """The rows in column order, each column's values checked against its type (a mismatch is a bug: raise).

        Checked a column at a time by the set of value types: 100,000 rows of a dozen columns
        checked value by value took a second of the summary's 3 s bar.
        """
        names = [c.name for c in self.columns]
        known, in_order = set(names), tuple(names)
        fmt = self.table_format
        out = []
        for i, row in enumerate(self.rows):
            if tuple(row) == in_order:  # as the builders make them: every column, in order
                out.append({"table_format": fmt, **row})
                continue
            if not known.issuperset(row):
                raise TableFormatError(f"table {self.name}: row {i} has undeclared column(s) "
                                       f"{sorted(set(row) - known)}")
            out.append({"table_format": fmt, **{n: row.get(n) for n in names}})
        for col in self.columns:
            name = col.name
            allowed = _ALLOWED[col.type]
            found = {type(r[name]) for r in out}
            if float in found:
                for r in out:
                    value = r[name]
                    if isinstance(value, float) and math.isnan(value):
                        r[name] = None
            wrong = found - allowed
            if wrong:
                i, value = next((i, r[name]) for i, r in enumerate(out) if type(r[name]) in wrong)
                raise TableFormatError(f"table {self.name}: row {i} column {name} is "
                                       f"{type(value).__name__} {value!r}, declared {col.type}")
        return out


_ALLOWED = {"string": {str, type(None)}, "integer": {int, type(None)}, "number": {int, float, type(None)},
            "boolean": {bool, type(None)}}


def rate_columns(prefix: str, what: str) -> list[Column]:
    """A share's columns: ``PREFIX_k`` (counted), ``PREFIX_n`` (out of), ``PREFIX`` and its Wilson 95% bounds."""
    return [Column(f"{prefix}_k", "integer", f"{what}: how many counted"),
            Column(f"{prefix}_n", "integer", f"{what}: out of how many (applicable)"),
            Column(prefix, "number", f"{what}: the share, 0 to 1 (null when n is 0)"),
            Column(f"{prefix}_low", "number", f"{what}: Wilson 95% lower bound"),
            Column(f"{prefix}_high", "number", f"{what}: Wilson 95% upper bound")]


def rate_values(prefix: str, interval: Any) -> dict[str, Any]:
    """The values of ``rate_columns(prefix)`` from a ``stats.Interval``; bounds null when nothing was counted."""
    empty = interval.n == 0 or interval.rate is None
    return {f"{prefix}_k": 0 if empty else int(interval.successes), f"{prefix}_n": int(interval.n),
            prefix: None if empty else float(interval.rate),
            f"{prefix}_low": None if empty else float(interval.low),
            f"{prefix}_high": None if empty else float(interval.high)}


def _pick(tables: Sequence[DataTable], name: str | None) -> DataTable:
    if not tables:
        raise TableFormatError("this command has no table to write")
    if name is None:
        return tables[0]
    for t in tables:
        if t.name == name:
            return t
    raise TableFormatError(f"no table {name!r} here; the tables are: {', '.join(t.name for t in tables)}")


def to_json(table: DataTable) -> str:
    """A JSON array of row objects, one row a line, every key in every row (null where unknown)."""
    import orjson  # 100,000 rows: json.dumps took longer than counting them

    rows = table.records()
    if not rows:
        return "[]"
    return "[\n" + ",\n".join(orjson.dumps(r).decode("utf-8") for r in rows) + "\n]"


def to_csv(table: DataTable) -> str:
    """CSV with a header line: booleans ``true``/``false``, null an empty field, numbers as Python writes them."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    names = ["table_format", *(c.name for c in table.columns)]
    writer.writerow(names)
    text = {"table_format", *(c.name for c in table.columns if c.type == "string")}
    for record in table.records():
        writer.writerow(["" if v is None else ("true" if v is True else "false" if v is False else
                                               csv_text(v) if n in text and isinstance(v, str) else v)
                         for n, v in ((n, record[n]) for n in names)])
    return buffer.getvalue().rstrip("\n")


def _md(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    is_text = isinstance(value, str)
    if isinstance(value, float):
        value = f"{value:.4g}"
    text = " ".join(str(value).split())
    if is_text and (value.startswith(FORMULA_STARTS) or text.startswith(FORMULA_STARTS)):
        text = "'" + text  # a text cell no spreadsheet runs (cell_safety); a number stays a number
    return text.replace("\\", "\\\\").replace("|", "\\|")


def to_markdown(tables: Iterable[DataTable]) -> str:
    """Every table as a pipe table under a ``###`` heading of its title and format."""
    parts = []
    for table in tables:
        names = [c.name for c in table.columns]
        lines = [f"### {table.title} (`{table.table_format}`)", "", "| " + " | ".join(names) + " |",
                 "|" + "|".join("---:" if c.type in ("integer", "number") else "---" for c in table.columns) + "|"]
        lines += ["| " + " | ".join(_md(r[n]) for n in names) + " |" for r in table.records()]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def emit(fmt: str, tables: Sequence[DataTable], text: str | None, out: TextIO, *, table: str | None = None) -> None:
    """Print the command's tables in ``fmt``: ``text`` prints ``text`` as it is; the others the data."""
    if fmt == "text":
        if text is not None:
            print(text, file=out)
        return
    if fmt == "markdown":
        print(to_markdown(tables if table is None else [_pick(tables, table)]), file=out)
        return
    chosen = _pick(tables, table)
    if fmt == "json":
        print(to_json(chosen), file=out)
    elif fmt == "csv":
        print(to_csv(chosen), file=out)
    else:
        raise TableFormatError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def add_format_arguments(p: argparse.ArgumentParser, tables: Sequence[str]) -> None:
    """``--format`` and ``--table`` for a table command whose data tables are ``tables`` (the first is the default)."""
    p.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), or the tables as data: json, csv (one table: --table), markdown "
                        "(columns and their types: docs/results.md)")
    p.add_argument("--table", choices=tables, default=None,
                   help=f"the table json and csv write (default: {tables[0]})")
