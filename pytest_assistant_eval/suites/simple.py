"""What a small suite gets for free (issue 32, docs/suites.md): grade-ai by its checks, its board, its page.

A suite whose grading is a few named checks of each finished record (``check(record) ->
{name: True | False | None}``, None: the check does not apply) writes no grading of its own:
its module's ``grade``, ``leaderboard`` and ``report`` are made here by :func:`checks_grading`.
``grade-ai`` keeps the folder rules every grading keeps (``judging.folders``) and writes
``GRADING/<suite>.json`` (``assistant-eval.suite-grading/1``); ``leaderboard --dir`` prints one
row per model, each check's pass rate with its Wilson interval; ``report --dir`` writes the
same board as one offline page (a Jinja2 template, autoescaped). The calibration and AgentDojo
grade their own way; this is the floor a third suite starts from.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from pytest_assistant_eval.judging.errors import GradingError
from pytest_assistant_eval.judging.folders import check_folders
from pytest_assistant_eval.records import RecordError, read_json, write_json_atomic
from pytest_assistant_eval.stats import wilson
from pytest_assistant_eval.tabular.formats import Column, DataTable, emit, rate_columns, rate_values
from pytest_assistant_eval.tabular.render import format_rate, render_table

__all__ = ["SUITE_GRADING_FORMAT", "ChecksGrading", "checks_grading"]

SUITE_GRADING_FORMAT = "assistant-eval.suite-grading/1"
Check = Callable[[Mapping[str, Any]], Mapping[str, "bool | None"]]


@dataclass
class ChecksGrading:
    """A suite module's ``grade``, ``leaderboard`` and ``report``, from its name, checks and check."""

    suite: str
    checks: tuple[str, ...]
    check: Check
    record_format: str
    run_format: str

    @property
    def file_name(self) -> str:
        return f"{self.suite}.json"

    def grade(self, results: list[Path], grading_dir: Path) -> int:
        """``grade-ai RESULTS --dir GRADING`` of this suite's folders; the exit code."""
        try:
            check_folders([Path(f) for f in results], Path(grading_dir))
            cells, runs = [], []
            for folder in map(Path, results):
                run = read_json(folder / "run.json", self.run_format)
                runs.append({"folder": folder.name, "model": run["identity"]["model"]})
                for path in sorted((folder / "cells").glob("*.json")):
                    record = read_json(path, self.record_format)
                    verdicts = dict(self.check(record))
                    cells.append({"folder": folder.name, "cell": record["cell"],
                                  "model": record["model"]["label"],
                                  "checks": {name: verdicts.get(name) for name in self.checks}})
        except (GradingError, RecordError, OSError) as exc:
            print(f"assistant-eval grade-ai: {exc}", file=sys.stderr)
            return 2
        Path(grading_dir).mkdir(parents=True, exist_ok=True)
        write_json_atomic(Path(grading_dir) / self.file_name, {
            "format": SUITE_GRADING_FORMAT, "suite": self.suite, "checks": list(self.checks), "runs": runs,
            "cells": cells})
        print(f"Graded {len(cells)} {self.suite} cell(s) into {Path(grading_dir) / self.file_name}\n"
              f"Next: assistant-eval leaderboard --dir {grading_dir}")
        return 0

    def rows(self, grading_dir: Path) -> list[dict[str, Any]] | None:
        """Per model: its cells and each check's rate over the cells it applies to; None: no such grading."""
        path = Path(grading_dir) / self.file_name
        if not path.exists():
            return None
        data = read_json(path, SUITE_GRADING_FORMAT)
        by_model: dict[str, list[Mapping[str, Any]]] = {}
        for cell in data["cells"]:
            by_model.setdefault(cell["model"], []).append(cell)
        rows = []
        for model, cells in sorted(by_model.items()):
            row: dict[str, Any] = {"model": model, "cells": len(cells)}
            for name in self.checks:
                applied = [c["checks"][name] for c in cells if c["checks"].get(name) is not None]
                row[name] = wilson(sum(1 for v in applied if v), len(applied))
            rows.append(row)
        return rows

    def tables(self, rows: list[dict[str, Any]]) -> list[DataTable]:
        columns = [Column("model", "string"), Column("cells", "integer"),
                   *(c for name in self.checks for c in rate_columns(name, f"cells passing {name}"))]
        values = [{"model": r["model"], "cells": r["cells"],
                   **{k: v for name in self.checks for k, v in rate_values(name, r[name]).items()}} for r in rows]
        return [DataTable(f"{self.suite}-board", 1, f"{self.suite}: each check's pass rate", columns, values)]

    def text(self, rows: list[dict[str, Any]]) -> str:
        return render_table(["model", "cells", *self.checks],
                            [[r["model"], r["cells"], *(format_rate(r[n]) for n in self.checks)] for r in rows],
                            ["l", "r", *("r" for _ in self.checks)], title=f"{self.suite}: each check's pass rate")

    def leaderboard(self, grading_dir: Path, fmt: str, out: TextIO) -> int | None:
        """``leaderboard --dir GRADING`` of this suite's grading; None for any other grading folder."""
        rows = self.rows(grading_dir)
        if rows is None:
            return None
        if fmt != "text":
            emit(fmt, self.tables(rows), None, out)
        else:
            print(self.text(rows), file=out)
        return 0

    def report(self, grading_dir: Path) -> str | None:
        """The board as one offline HTML page; None for any other grading folder."""
        rows = self.rows(grading_dir)
        if rows is None:
            return None
        from importlib.resources import files

        from jinja2 import Environment

        template = files("pytest_assistant_eval.suites").joinpath("templates", "board.html.j2").read_text("utf-8")
        page = Environment(autoescape=True).from_string(template)
        return page.render(suite=self.suite, checks=self.checks,
                           rows=[{"model": r["model"], "cells": r["cells"],
                                  "rates": [format_rate(r[n]) for n in self.checks]} for r in rows])


def checks_grading(suite: str, checks: tuple[str, ...], check: Check, *, record_format: str | None = None,
                   run_format: str | None = None) -> ChecksGrading:
    """A module's grading from its checks (the formats default to ``SuiteBase``'s; docs/suites.md)."""
    return ChecksGrading(suite, checks, check, record_format or f"assistant-eval.{suite}-cell/1",
                         run_format or f"assistant-eval.{suite}-run/1")
