"""Tokens and cost in the summary (issue 24): per cell, per model and per run, the judge's requests apart,
priced from a ``--prices`` YAML that is checked with file and line."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from graded_helpers import CALIBRATION, REPO, run_and_grade
from pytest_assistant_eval.tables.prices import Price, Prices, PricesError, load_prices
from pytest_assistant_eval.tables.summary import summary_command
from pytest_assistant_eval.tabular.table_data import summary_tables
from pytest_assistant_eval.tabular.usage import UsageCount

JUDGE = "openai:gpt-4.1-mini"


@pytest.fixture(scope="module")
def graded(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> Path:
    base = tmp_path_factory.mktemp("cost")
    run_and_grade(base, world_dir, ("oracle", "invents"), seed=4)
    return base


@pytest.fixture()
def grading(graded: Path, tmp_path: Path) -> Path:
    """A copy of the grading with a model judge's usage.json (as grade-ai --judge writes it)."""
    shutil.copytree(graded, tmp_path / "copy")
    folder = tmp_path / "copy" / "grading"
    (folder / "usage.json").write_text(json.dumps({"format": "assistant-eval.judge-usage/1", "judges": {JUDGE: {
        "label": f"{JUDGE} (calibration)", "requests": 12, "input_tokens": 1_000_000, "output_tokens": 500_000,
        "reasoning_tokens": 0, "cached_input_tokens": 0}}}), encoding="utf-8")
    return folder


def prices_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def reported_tokens(results: Path) -> tuple[int, int]:
    given = made = 0
    for path in (results / "cells").glob("*.json"):
        for request in json.loads(path.read_text(encoding="utf-8")).get("requests") or []:
            usage = request.get("usage") or {}
            given += int(usage.get("input_tokens") or 0)
            made += int(usage.get("output_tokens") or 0)
    return given, made


def test_the_summary_gives_each_models_input_and_output_tokens_over_every_request(grading: Path):
    out = io.StringIO()
    assert summary_command(grading, CALIBRATION, out=out) == 0
    given, made = reported_tokens(grading.parent / "results" / "invents")
    assert given > 0 and f"{given:,} input and {made:,} output token(s)" in out.getvalue()


def test_the_cells_table_gives_the_tokens_of_each_cell(grading: Path):
    out = io.StringIO()
    assert summary_command(grading, CALIBRATION, out=out, fmt="json", table="cells") == 0
    rows = [r for r in json.loads(out.getvalue()) if r["model"] == "oracle"]
    given, made = reported_tokens(grading.parent / "results" / "oracle")
    assert sum(r["input_tokens"] or 0 for r in rows) == given and sum(r["output_tokens"] or 0 for r in rows) == made


def test_prices_give_the_run_cost_with_the_judges_requests_apart(grading: Path, tmp_path: Path):
    prices = prices_file(tmp_path, f"format: assistant-eval.prices/1\ncurrency: EUR\nmodels:\n"
                                   f"  {JUDGE}: {{input: 0.40, output: 1.60}}\n")
    out = io.StringIO()
    assert summary_command(grading, CALIBRATION, out=out, prices_file=prices) == 0
    text = out.getvalue()
    assert "Judge requests (the grading's usage.json; counted apart from the models')" in text
    assert f"  {JUDGE}: 12 request(s), 1,000,000 input and 500,000 output token(s); cost 1.20 EUR" in text
    # the reference assistants cost nothing; the judge 0.40 + 0.80
    assert f"Cost of this run ({prices}): the models 0.0000 EUR, the judge 1.20 EUR, in all 1.20 EUR" in text


def test_a_model_without_a_price_has_an_unknown_cost_never_zero(grading: Path, tmp_path: Path):
    prices = prices_file(tmp_path, "format: assistant-eval.prices/1\nmodels:\n  openai:other: {input: 1, output: 1}\n")
    out = io.StringIO()
    assert summary_command(grading, CALIBRATION, out=out, prices_file=prices) == 0
    text = out.getvalue()
    assert f"cost unknown: no price for {JUDGE}" in text
    assert "in all – (a price is missing: see above)" in text
    data = io.StringIO()
    assert summary_command(grading, CALIBRATION, out=data, fmt="json", table="usage", prices_file=prices) == 0
    judge = next(r for r in json.loads(data.getvalue()) if r["role"] == "judge")
    assert judge["cost"] is None and judge["currency"] == "USD" and judge["requests"] == 12


def test_the_cost_of_a_cell_and_of_a_model_is_their_tokens_at_the_models_price():
    groups = SimpleNamespace(questions={}, tasks={}, order=lambda k: k, route_of={"m": "openai:m"},
                             model_usage={"m": UsageCount(cells=2, requests=4, input_tokens=2_000_000,
                                                          output_tokens=3_000)})
    prices = Prices(Path("p.yaml"), "USD", {"openai:m": Price(0.5, 2.0)})
    lines = [{"model": "m", "cell": "G01__basic__r1", "input_tokens": 1_500_000, "output_tokens": 1_000},
             {"model": "m", "cell": "G02__basic__r1", "input_tokens": 500_000, "output_tokens": 2_000}]
    _, cells, usage = summary_tables(groups, lines, prices)
    assert [r["cost"] for r in cells.records()] == pytest.approx([0.752, 0.254])
    assert usage.records()[0]["cost"] == pytest.approx(1.006)


def test_every_problem_of_a_prices_file_is_named_with_its_line(tmp_path: Path):
    path = prices_file(tmp_path, "format: assistant-eval.prices/1\nmodels:\n"
                                 "  openai:a: {input: -1, output: 2}\n"
                                 "  nowhere:b: {input: 1, output: 2}\n"
                                 "  openai:c: {input: 1}\n"
                                 "  openai:d: {input: 1, output: two}\n"
                                 "colour: blue\n")
    with pytest.raises(PricesError) as caught:
        load_prices(path)
    message = str(caught.value)
    assert f"{path}:3: openai:a: 'input' must be 0 or more" in message
    assert f"{path}:4: 'nowhere:b' is not PRESET:MODEL with a known preset" in message
    assert f"{path}:5: openai:c: missing field 'output'" in message
    assert f"{path}:6: openai:d: 'output' must be a number" in message
    assert f"{path}:7: the prices file: unknown key 'colour'" in message


def test_a_bad_prices_file_stops_the_summary_before_it_prints_anything(graded: Path, tmp_path: Path):
    path = prices_file(tmp_path, "format: assistant-eval.prices/3\nmodels: {}\n")
    done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "summary", "--dir", str(graded / "grading"),
                           "--prices", str(path)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 2 and done.stdout == ""
    assert f"{path}:1: format 'assistant-eval.prices/3' is not 'assistant-eval.prices/2'" in done.stderr


def test_the_report_counts_tokens_per_model_and_the_judges_apart_with_their_cost(tmp_path):
    # Issue 24: tokens and cost on the page too, from the same lines and usage.json the summary reads.
    import json
    from types import SimpleNamespace

    from pytest_assistant_eval.tables.prices import load_prices
    from pytest_assistant_eval.tables.report import usage_context

    (tmp_path / "usage.json").write_text(json.dumps({"format": "assistant-eval.judge-usage/1", "judges": {
        "openai:gpt-j": {"requests": 3, "input_tokens": 3000, "output_tokens": 300}}}))
    prices_file = tmp_path / "prices.yaml"
    prices_file.write_text("format: assistant-eval.prices/1\nmodels:\n  openai:gpt-x: {input: 1.0, output: 2.0}\n"
                           "  openai:gpt-j: {input: 10.0, output: 20.0}\n")
    lines = [{"model": "gpt-x", "preset": "openai", "model_name": "gpt-x", "requests": 2, "input_tokens": 500_000,
              "output_tokens": 250_000}] * 2
    usage = usage_context(SimpleNamespace(path=tmp_path), lines, load_prices(prices_file))
    (model,) = usage["models"]
    assert (model["cells"], model["requests"], model["input"], model["output"]) == (2, 4, 1_000_000, 500_000)
    assert model["cost"].startswith("2.0") and usage["judges"][0]["requests"] == 3
    assert usage["judges"][0]["cost"].startswith("0.036")
    assert usage_context(SimpleNamespace(path=tmp_path), lines)["models"][0]["cost"] is None
