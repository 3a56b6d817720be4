"""One count of usage and cost (issue 29, item 2): the same tokens and cost in every view of one folder.

``summary --prices`` once said 332,417 input tokens where ``summary --record --prices`` and
``report --prices`` said 0: the recording and the page built their lines of other fields. Here
one graded and reviewed folder (reference assistants, priced by the file so their cost is not 0)
is read by each, and each gives the same requests, input and output tokens and cost per model,
the same as the records themselves say.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from graded_helpers import CALIBRATION, run_and_grade
from pytest_assistant_eval.review.command import ReviewOptions, review_command
from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in
from pytest_assistant_eval.tables.summary import summary_command

MODELS = ("oracle", "invents")


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> Path:
    base = tmp_path_factory.mktemp("one-count")
    grading = run_and_grade(base, world_dir, MODELS, seed=11)
    assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted"), out=io.StringIO(), open_grading=open_grading) == 0
    (base / "prices.yaml").write_text("format: assistant-eval.prices/2\ncurrency: USD\nmodels:\n"
                                      "  scripted:oracle: {input: 3.0, output: 15.0, cached_input: 0.3}\n"
                                      "  scripted:invents: {input: 1.0, output: 4.0}\n", encoding="utf-8")
    return grading


def from_records(grading: Path, model: str) -> tuple[int, int, int]:
    """(requests, input, output) of a results folder, read straight from its records."""
    requests = given = made = 0
    for path in (grading.parent / "results" / model / "cells").glob("*.json"):
        for r in json.loads(path.read_text(encoding="utf-8")).get("requests") or []:
            requests += 1
            given += int((r.get("usage") or {}).get("input_tokens") or 0)
            made += int((r.get("usage") or {}).get("output_tokens") or 0)
    return requests, given, made


USAGE = re.compile(r"^    usage: ([\d,]+) request\(s\), ([\d,]+) input and ([\d,]+) output token\(s\).*?; cost ([\d.,]+) USD",
                   re.M)


def summary_figures(text: str) -> dict[str, tuple[int, int, int, str]]:
    """Per model (in the summary's 'Per model' notes): requests, input, output, cost."""
    out = {}
    for model in MODELS:
        block = text[text.index(f"  {model} (automatic level"):]
        found = USAGE.search(block)
        assert found is not None, block[:400]
        out[model] = (*(int(found.group(i).replace(",", "")) for i in (1, 2, 3)), found.group(4))
    return out


def test_summary_summary_record_report_and_the_data_tables_give_the_same_tokens_and_cost(reviewed: Path,
                                                                                       tmp_path: Path):
    prices = reviewed.parent / "prices.yaml"
    plain = io.StringIO()
    assert summary_command(reviewed, CALIBRATION, out=plain, prices_file=prices) == 0
    recorded = io.StringIO()
    assert summary_command(reviewed, CALIBRATION, out=recorded, prices_file=prices, record=True,
                           results_file=tmp_path / "results.jsonl") == 0
    shown, shown_recording = summary_figures(plain.getvalue()), summary_figures(recorded.getvalue())
    assert shown == shown_recording
    total = re.search(r"Cost of this run \(.*\): the models ([\d.,]+ USD)", plain.getvalue())
    assert total is not None and total.group(0) in recorded.getvalue()
    for model in MODELS:
        assert shown[model][:3] == from_records(reviewed, model)
        assert shown[model][1] > 0 and float(shown[model][3]) > 0
    data = io.StringIO()
    assert summary_command(reviewed, CALIBRATION, out=data, fmt="json", table="usage", prices_file=prices) == 0
    rows = {r["model"]: r for r in json.loads(data.getvalue()) if r["role"] == "model"}
    from pytest_assistant_eval.tables.prices import load_prices

    money = load_prices(prices).money
    for model in MODELS:
        r = rows[model]
        assert (r["requests"], r["input_tokens"], r["output_tokens"]) == shown[model][:3]
        assert money(r["cost"]) == f"{shown[model][3]} USD"
    from pytest_assistant_eval.tables.report import build_report
    from pytest_assistant_eval.tables.prices import load_prices as load

    page = build_report(reviewed, CALIBRATION, prices=load(prices))
    for model in MODELS:
        requests, given, made, cost = shown[model]
        row = re.search(rf"<tr><th>{model}</th><td>\d+</td><td>(\d+)</td><td>(\d+)</td><td>[\d /]+</td>"
                        rf"<td>(\d+)</td><td>[\d /]+</td><td>([^<]+)</td></tr>", page)
        assert row is not None, model
        assert (int(row.group(1)), int(row.group(2)), int(row.group(3))) == (requests, given, made)
        assert row.group(4) == f"{cost} USD"
