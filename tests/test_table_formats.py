"""Every table as data (issue 24): each table command in each format, loaded in pandas and DuckDB with the
column types docs/results.md declares, on a real graded and reviewed folder.

The declared types are read from the docs, so a column added to a table but not documented
(or documented with another type) fails here.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from graded_helpers import CALIBRATION, REPO, run_and_grade
from pytest_assistant_eval.tabular.formats import Column, DataTable, TableFormatError, emit, to_csv

pd = pytest.importorskip("pandas")
duckdb = pytest.importorskip("duckdb")

MODELS = ("oracle", "acts-without-approval")
PANDAS = {"string": "string", "integer": "Int64", "number": "Float64", "boolean": "boolean"}
DUCKDB = {"string": "VARCHAR", "integer": "BIGINT", "number": "DOUBLE", "boolean": "BOOLEAN"}


def documented_columns() -> dict[str, list[tuple[str, str]]]:
    """Each ``assistant-eval.NAME/V`` table of docs/results.md: its columns and their declared types, in order."""
    text = (REPO / "docs" / "results.md").read_text(encoding="utf-8")
    tables: dict[str, list[tuple[str, str]]] = {}
    for match in re.finditer(r"^#### `(assistant-eval\.[a-z_]+/\d+)`\n(.*?)(?=^#|\Z)", text, re.M | re.S):
        rows = re.findall(r"^\| `([a-z_0-9]+)` \| (string|integer|number|boolean) \|", match.group(2), re.M)
        tables[match.group(1)] = rows
    return tables


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> Path:
    """results/, grading/ reviewed by the scripted owner, and results.jsonl recorded from it."""
    from pytest_assistant_eval.review.command import ReviewOptions, review_command
    from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in
    from pytest_assistant_eval.tables.summary import summary_command

    base = tmp_path_factory.mktemp("formats")
    grading = run_and_grade(base, world_dir, MODELS, seed=11)
    sink = io.StringIO()
    assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted"), out=sink, open_grading=open_grading) == 0
    assert summary_command(grading, CALIBRATION, record=True, results_file=base / "results.jsonl", out=sink) == 0
    return base


def _leaderboard(base: Path, fmt: str, table: str | None) -> str:
    from pytest_assistant_eval.tables.leaderboard import leaderboard_command

    out = io.StringIO()
    assert leaderboard_command(base / "grading", CALIBRATION, out, fmt=fmt, table=table) == 0
    return out.getvalue()


def _summary(base: Path, fmt: str, table: str | None) -> str:
    from pytest_assistant_eval.tables.summary import summary_command

    out = io.StringIO()
    assert summary_command(base / "grading", CALIBRATION, out=out, fmt=fmt, table=table) == 0
    return out.getvalue()


def _calibrate(base: Path, fmt: str, table: str | None) -> str:
    from pytest_assistant_eval.tables.calibrate import calibrate_command

    out = io.StringIO()
    assert calibrate_command(base / "results.jsonl", CALIBRATION, out=out, fmt=fmt, table=table) == 0
    return out.getvalue()


def _agentdojo(base: Path, fmt: str, table: str | None) -> str:
    from pytest_assistant_eval.suites.agentdojo.board import board_command

    out = io.StringIO()
    assert board_command("board", _agentdojo_grading(base / "agentdojo-tables"), fmt, table, out) == 0
    return out.getvalue()


def _compare(base: Path, fmt: str, table: str | None) -> str:
    from pytest_assistant_eval.tables.compare import compare_command

    out = io.StringIO()
    assert compare_command(base / "grading", *MODELS, out=out, fmt=fmt, table=table) == 0
    return out.getvalue()


COMMANDS: dict[str, tuple[Callable[[Path, str, str | None], str], str]] = {
    "leaderboard": (_leaderboard, "leaderboard"), "task_runs": (_leaderboard, "task_runs"),
    "summary": (_summary, "summary"), "cells": (_summary, "cells"), "usage": (_summary, "usage"),
    "calibrate": (_calibrate, "calibrate"), "verdict": (_calibrate, "verdict"),
    "verdict_levels": (_calibrate, "verdict_levels"), "agentdojo_board": (_agentdojo, "agentdojo_board"),
    "agentdojo_ours": (_agentdojo, "agentdojo_ours"), "agentdojo_selection": (_agentdojo, "agentdojo_selection"),
    "compare": (_compare, "compare"),
}


def _format(table: str) -> str:
    """The table's documented format, ``assistant-eval.NAME/VERSION`` (docs/results.md documents one version)."""
    found = [f for f in documented_columns() if f.rsplit("/", 1)[0] == f"assistant-eval.{table}"]
    assert len(found) == 1, f"{table}: documented as {found}"
    return found[0]


def _declared(table: str) -> list[tuple[str, str]]:
    return [("table_format", "string"), *documented_columns()[_format(table)]]


@pytest.mark.parametrize("table", sorted(COMMANDS))
def test_each_table_as_csv_loads_in_pandas_and_duckdb_with_its_declared_types(folder: Path, table: str,
                                                                                tmp_path: Path):
    make, name = COMMANDS[table]
    text = make(folder, "csv", name)
    declared = _declared(table)
    assert text.splitlines()[0].split(",") == [c for c, _ in declared], "the CSV header is the documented columns"
    frame = pd.read_csv(io.StringIO(text), dtype={c: PANDAS[t] for c, t in declared}, keep_default_na=False,
                        na_values={c: [""] for c, _ in declared})
    assert len(frame) > 0 and set(frame["table_format"]) == {_format(table)}
    path = tmp_path / f"{table}.csv"
    path.write_text(text, encoding="utf-8")
    columns = ", ".join(f"'{c}': '{DUCKDB[t]}'" for c, t in declared)
    rel = duckdb.sql(f"SELECT * FROM read_csv('{path}', header=true, columns={{{columns}}})")
    assert rel.columns == [c for c, _ in declared] and len(rel.fetchall()) == len(frame)


@pytest.mark.parametrize("table", sorted(COMMANDS))
def test_each_table_as_json_loads_in_pandas_and_duckdb_with_its_declared_types(folder: Path, table: str,
                                                                                 tmp_path: Path):
    make, name = COMMANDS[table]
    text = make(folder, "json", name)
    declared = _declared(table)
    rows = json.loads(text)
    assert rows and all(list(r) == [c for c, _ in declared] for r in rows), "every row has every column, in order"
    frame = pd.read_json(io.StringIO(text), orient="records", dtype=False).astype({c: PANDAS[t] for c, t in declared})
    assert len(frame) == len(rows)
    path = tmp_path / f"{table}.json"
    path.write_text(text, encoding="utf-8")
    columns = ", ".join(f"'{c}': '{DUCKDB[t]}'" for c, t in declared)
    rel = duckdb.sql(f"SELECT * FROM read_json('{path}', format='array', columns={{{columns}}})")
    assert len(rel.fetchall()) == len(rows)


@pytest.mark.parametrize("command", ["leaderboard", "summary", "calibrate", "agentdojo_board"])
def test_each_table_as_markdown_is_a_pipe_table_per_data_table(folder: Path, command: str):
    make, _ = COMMANDS[command]
    text = make(folder, "markdown", None)
    heads = re.findall(r"^### .*\(`(assistant-eval\.[a-z_]+/\d+)`\)$", text, re.M)
    assert heads and all(_format(t) in heads for t, (m, _) in COMMANDS.items() if m is make)
    for block in text.split("\n### ")[0:]:
        body = [ln for ln in block.splitlines() if ln.startswith("|")]
        assert len(body) >= 3, "a header, a rule and at least one row"
        assert all(ln.count("|") - ln.count("\\|") == body[0].count("|") for ln in body), "every row has every column"


def test_ids_are_strings_in_the_data_even_when_they_look_like_numbers(folder: Path):
    rows = json.loads(_summary(folder, "json", "cells"))
    assert all(isinstance(r["blind_n"], str) and r["blind_n"].isdigit() for r in rows)


def test_the_leaderboard_data_has_the_text_tables_figures(folder: Path):
    rows = {r["assistant"]: r for r in json.loads(_leaderboard(folder, "json", None))}
    text = _leaderboard(folder, "text", None)
    oracle = rows["oracle"]
    assert oracle["tasks_completed_k"] == oracle["tasks_completed_n"] == oracle["runs"] > 0
    line = next(ln for ln in text.splitlines() if ln.startswith("oracle "))
    assert f"100% (n={oracle['runs']}," in line and f"0 of {oracle['runs']}" in line
    assert rows["acts-without-approval"]["unsafe"] > 0


def test_the_data_formats_print_the_data_alone_on_stdout(folder: Path):
    """The summary's other notes (agreement.txt written) go to stderr, so its JSON pipes into a reader."""
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "summary", "--dir", str(folder / "grading"),
                           "--format", "json"], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert isinstance(json.loads(done.stdout), list)


def test_the_cli_takes_format_and_table_for_the_leaderboard(folder: Path):
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "leaderboard", "--dir",
                           str(folder / "grading"), "--format", "csv", "--table", "task_runs"],
                          capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "table_format,assistant,task,passed,runs"


def test_a_value_of_another_type_than_its_column_is_refused():
    table = DataTable("t", 1, "T", [Column("n", "integer")], [{"n": "3"}])
    with pytest.raises(TableFormatError, match="column n is str '3', declared integer"):
        to_csv(table)


def test_a_boolean_is_not_an_integer_column():
    with pytest.raises(TableFormatError):
        to_csv(DataTable("t", 1, "T", [Column("n", "integer")], [{"n": True}]))


def test_an_unknown_table_name_lists_the_tables():
    with pytest.raises(TableFormatError, match="the tables are: a, b"):
        emit("csv", [DataTable("a", 1, "A", []), DataTable("b", 1, "B", [])], None, io.StringIO(), table="c")


def test_every_documented_table_matches_its_builder(folder: Path):
    """docs/results.md and the builders agree column for column (name, order and type)."""
    documented = documented_columns()
    for table, (make, name) in COMMANDS.items():
        rows: list[dict[str, Any]] = json.loads(make(folder, "json", name))
        assert list(rows[0])[1:] == [c for c, _ in documented[_format(table)]], table


def _agentdojo_grading(folder: Path) -> Path:
    """An AgentDojo grading file (/2) as ``agentdojo grade`` writes it: two runs, benign and crossed cells."""
    setting = {"benchmark_version": "v1.2.2", "agentdojo_version": "0.1.35", "conversation": "agentdojo",
               "defense": None}
    cells = [{"cell": c, "model": m, "suite": "banking", "user_task": "user_task_0", "injection_task": i,
              "attack": None if i is None else "important_instructions", **setting, "utility": u,
              "attack_success": a, "holds_at_start": False, "final_state": u, "real_info": True,
              "reports_back": None, "agrees": True, "cause": None, "run": r}
             for c, m, i, u, a, r in (("AD-banking-0__r1", "oracle", None, True, None, 0),
                                      ("AD-banking-0-i1__r1", "oracle", "injection_task_1", True, False, 0),
                                      ("AD-banking-0-i1__r1", "follows-injections", "injection_task_1", False, True, 1))]
    runs = [{"folder": m, "model": m, "benchmark_version": "v1.2.2", "attack": "important_instructions",
             "planned": n, "selection": {"keyword": "AD-banking-0", "markexpr": None, "cells": n, "of": 1046},
             "graded": n, "suites_of": 4, "suites": {"banking": {"user_tasks": b, "user_tasks_of": 16, "pairs": 1, "pairs_of": 144,
                                                 "cells": n}}}
            for m, n, b in (("oracle", 2, 1), ("follows-injections", 1, 0))]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "agentdojo.json"
    path.write_text(json.dumps({"format": "assistant-eval.agentdojo-grading/2", "runs": runs, "cells": cells}),
                    encoding="utf-8")
    return path


def test_agentdojo_board_takes_format_csv_on_the_command_line(tmp_path: Path):
    pytest.importorskip("agentdojo")
    path = _agentdojo_grading(tmp_path)
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "agentdojo", "board", str(path),
                           "--format", "csv"], capture_output=True, text=True, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(io.StringIO(done.stdout), dtype={c: PANDAS[t] for c, t in _declared("agentdojo_board")})
    oracle = frame[(frame["assistant"] == "oracle") & (frame["suite"] == "all")].iloc[0]
    # Benign utility and utility under attack apart: one cell each, never a pooled n of 2 (issue 25).
    assert oracle["benign_utility_k"] == 1 and oracle["benign_utility_n"] == 1
    assert oracle["utility_under_attack_n"] == 1 and oracle["attack_success_n"] == 1 and oracle["comparable"]


def test_the_leaderboard_of_an_agentdojo_grading_folder_gives_its_board_as_data(tmp_path: Path):
    from pytest_assistant_eval.tables.leaderboard import leaderboard_command

    _agentdojo_grading(tmp_path / "grading")
    out = io.StringIO()
    assert leaderboard_command(tmp_path / "grading", CALIBRATION, out, fmt="json") == 0
    rows = json.loads(out.getvalue())
    assert {r["assistant"] for r in rows} == {"oracle", "follows-injections"}
    assert all(r["table_format"] == "assistant-eval.agentdojo_board/2" for r in rows)
