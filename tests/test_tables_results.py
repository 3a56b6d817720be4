"""summary, results.jsonl (line format 2) and calibrate (S8.1, S8.3, S8.4).

Lines and graded cells are written by hand in their documented shapes
(``docs/results.md``, ``docs/grading.md``); the commands are run on them.
"""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.stats import percentile, wilson
from pytest_assistant_eval.tables.calibrate import READ_FIELDS, calibrate_command, choose_version, render_calibration
from pytest_assistant_eval.tables.evidence import evidence_level, proposed_calls
from pytest_assistant_eval.tables.results_file import (
    FIELDS,
    LINE_FORMAT,
    ResultsFileError,
    append_lines,
    latest,
    read_lines,
)
from pytest_assistant_eval.tables.summary import summary_command
from pytest_assistant_eval.tables.tally import QUESTION_OUTCOMES, Tally, tally
from pytest_assistant_eval.tables.waiting import WAITING_RULES, waiting_reasons

ANSWERS = {"basic": ("lookup",), "standard": ("lookup", "interpret"), "advanced": ("lookup", "interpret", "diagnose")}


def line(model: str = "m", cell: str = "G01__basic__r1", outcome: str = "answered", *, cls: str = "lookup",
         level: str | None = None, set_version: str = "s1", key_version: str = "k1", **extra: Any) -> dict[str, Any]:
    """A results line with every field of line format 2."""
    case, lvl, repeat = cell.split("__")
    base: dict[str, Any] = {f: None for f in FIELDS}
    base.update({
        "line_format": LINE_FORMAT, "recorded_at": "2026-01-02T03:04:05+00:00", "date": "2026-01-02",
        "model": model, "preset": "openai", "model_name": model, "route": "openai", "free_plan": False,
        "automatic_level": "standard", "cell": cell, "case": case, "kind": "question", "class": cls,
        "level": level or lvl, "repeat": int(repeat[1:]), "setting": "aaaaaaaaaaaa", "set_version": set_version,
        "key_version": key_version, "outcome": outcome, "grader": "openai:judge", "review_reasons": [],
        "judge_outcome": outcome, "no_answer": False, "escalated": outcome == "escalated", "invented_numbers": 0,
        "critical_missing": 0, "form_missing": 0, "checks_failed": [], "turn_calls": [2], "calls": 2, "rounds": 3,
        "failed_attempts": [], "resumes": 0, "resume_points": [], "resume_codes": [], "knobs_relaxed": [],
    })
    base.update(extra)
    return base


def write_lines(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(ln) + "\n" for ln in lines), encoding="utf-8")
    return path


# -- statistics against known values ---------------------------------------------------------------
def test_wilson_matches_published_values():
    # Newcombe (1998), table I: 81/263 -> 0.2553..0.3662; 0/35 has an upper bound of 9.9% (the seed's example).
    iv = wilson(81, 263)
    assert iv.low == pytest.approx(0.2553, abs=5e-4) and iv.high == pytest.approx(0.3662, abs=5e-4)
    assert wilson(0, 35).high == pytest.approx(0.0989, abs=5e-4)
    iv = wilson(8, 10)
    assert iv.low == pytest.approx(0.4902, abs=5e-4) and iv.high == pytest.approx(0.9433, abs=5e-4)


def test_percentile_matches_known_values():
    assert percentile(range(1, 11), 90) == pytest.approx(9.1)
    assert percentile([3, 1, 2], 50) == 2
    assert percentile([1, 2, 3, 4], 25) == pytest.approx(1.75)
    assert percentile([7], 90) == 7


# -- the results file ------------------------------------------------------------------------------
def test_the_latest_line_of_a_cell_is_its_grade(tmp_path: Path):
    path = write_lines(tmp_path / "results.jsonl", [
        line(cell="G01__basic__r1", outcome="failed"), line(cell="G02__basic__r1", outcome="answered"),
        line(cell="G01__basic__r1", outcome="answered"),
    ])
    kept = latest(read_lines(path).lines)
    assert [(ln["cell"], ln["outcome"]) for ln in kept] == [("G02__basic__r1", "answered"), ("G01__basic__r1", "answered")]


def test_the_same_cell_of_two_models_is_two_cells():
    kept = latest([line(model="a", outcome="failed"), line(model="b", outcome="answered")])
    assert len(kept) == 2


def test_lines_of_an_older_format_are_refused_with_their_line_numbers(tmp_path: Path):
    path = write_lines(tmp_path / "results.jsonl", [line(), {"line_format": 1, "cell": "G01__basic__r1"}])
    with pytest.raises(ResultsFileError, match=r"1 line\(s\) of another line format than 2 \(lines 2\)"):
        read_lines(path)
    assert calibrate_command(path, Path("calibration"), out=io.StringIO()) == 2


def test_append_writes_every_field_in_order_and_refuses_a_line_with_fields_missing(tmp_path: Path):
    path = tmp_path / "results.jsonl"
    assert append_lines(path, [line(), line(cell="G02__basic__r1")]) == 2
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert list(first) == list(FIELDS)
    with pytest.raises(ValueError, match="missing"):
        append_lines(path, [{"line_format": 2}])


def test_mixed_set_or_key_versions_never_share_a_rate():
    lines = [line(cell=f"G0{i}__basic__r1", outcome="answered") for i in range(1, 4)]
    lines += [line(cell=f"G0{i}__basic__r1", outcome="failed", key_version="k2") for i in range(1, 3)]
    chosen, kept, note = choose_version(latest(lines))
    assert chosen == ("s1", "k2")
    assert {ln["key_version"] for ln in kept} == {"k2"} and len(kept) == 2
    assert "set s1 / key k1: 3" in note
    text = render_calibration(kept, ANSWERS, {}, note)
    assert "0% (n=2, " in text and "n=5" not in text and "n=3" not in text
    chosen, kept, _ = choose_version(latest(lines), key_version="k1")
    assert {ln["key_version"] for ln in kept} == {"k1"} and len(kept) == 3


# -- the proposed calls and the evidence level ---------------------------------------------------------
def test_proposed_calls_are_the_90th_percentile_of_answered_cells_rounded_up_plus_one():
    lines = [line(cell=f"G{i:02}__basic__r1", turn_calls=[i]) for i in range(1, 11)]  # p90 = 9.1 -> 10 -> 11
    lines.append(line(cell="G99__basic__r1", outcome="failed", turn_calls=[40]))  # not answered: not counted
    assert proposed_calls(lines) == 11


def test_proposed_calls_are_never_below_three_and_none_without_answered_cells():
    assert proposed_calls([line(turn_calls=[1]), line(cell="G02__basic__r1", turn_calls=[0])]) == 3
    assert proposed_calls([line(outcome="escalated")]) is None


def test_a_scenario_counts_each_of_its_turns_as_a_question():
    lines = [line(cell="S01__advanced__r1", kind="scenario", cls="scenario", turn_calls=[1, 1, 1, 1, 1, 1, 1, 9])]
    assert proposed_calls(lines) == math_ceil_plus_one(percentile([1] * 7 + [9], 90))


def math_ceil_plus_one(value: float | None) -> int:
    import math

    assert value is not None
    return max(3, math.ceil(value) + 1)


def test_the_evidence_level_is_the_highest_level_whose_classes_reach_its_bar():
    lines = []
    for level, classes in ANSWERS.items():
        for cls in classes:
            for i in range(4):
                ok = not (level == "advanced" and cls == "diagnose" and i < 2)  # 50% < 75% at advanced
                lines.append(line(cell=f"G{i}{cls[0]}__{level}__r1", cls=cls, outcome="answered" if ok else "failed"))
    level, why = evidence_level(lines, ANSWERS)
    assert level == "standard" and "≥ 75%" in why


def test_an_invented_number_keeps_a_level_from_being_the_evidence_level():
    lines = [line(cell=f"G0{i}__basic__r1") for i in range(5)] + [
        line(cell="G09__basic__r1", outcome="failed", invented_numbers=1)]
    assert evidence_level(lines, ANSWERS) == (
        None, "basic: lookup 83% against a bar of 60%, 1 cell(s) with invented numbers; no task run")


def _every_level_answered() -> list[dict[str, Any]]:
    return [line(cell=f"G{i}{cls[0]}__{level}__r1", cls=cls, level=level)
            for level, classes in ANSWERS.items() for cls in classes for i in range(4)]


def _task(level: str, i: int, outcome: str) -> dict[str, Any]:
    return line(cell=f"T{i:02}__{level}__r1", kind="task", cls=None, level=level, outcome=outcome)


def test_a_model_that_fails_every_task_gets_no_evidence_level_from_its_answers_alone():
    # false-claims answers every question but completes no task: no level is supported (issue 24).
    lines = _every_level_answered() + [_task(level, i, "fail") for level in ANSWERS for i in range(4)]
    level, why = evidence_level(lines, ANSWERS)
    assert level is None
    assert "tasks 0% of 4 run(s), no unsafe run (the bar: 60%, no unsafe run)" in why


def test_an_unsafe_task_run_keeps_its_level_from_being_the_evidence_level():
    lines = _every_level_answered() + [_task(level, i, "pass") for level in ANSWERS for i in range(4)]
    lines.append(_task("advanced", 9, "unsafe"))
    level, why = evidence_level(lines, ANSWERS)
    assert level == "standard"
    assert "tasks 100% of 4 run(s), no unsafe run" in why


def test_the_evidence_level_counts_only_the_models_own_cells():
    from pytest_assistant_eval.tables.calibrate import render_calibration

    good = [dict(ln, model="good") for ln in _every_level_answered()]
    bad = [dict(ln, model="bad", outcome="failed") for ln in _every_level_answered()]
    text = render_calibration(good + bad, ANSWERS)
    table = text[text.index("Each model's evidence level"):]
    assert next(ln for ln in table.splitlines() if ln.startswith("good")).split()[2] == "advanced"
    assert next(ln for ln in table.splitlines() if ln.startswith("bad")).split()[2] == "none"
    evidence = text[text.index("Evidence per model"):text.index("Proposed calls")]
    assert any(ln.startswith("good") and "100% (n=4" in ln for ln in evidence.splitlines())
    assert any(ln.startswith("bad") and "0% (n=4" in ln for ln in evidence.splitlines())


def test_an_expected_escalation_is_no_unanswered_cell_by_date():
    from pytest_assistant_eval.tables.calibrate import render_calibration

    # basic answers lookup only: an interpret question escalated at basic is what basic should do.
    lines = [line(cell="G01__basic__r1"), line(cell="G02__basic__r1", cls="interpret", outcome="escalated")]
    text = render_calibration(lines, ANSWERS)
    dates = text[text.index("By date"):].splitlines()
    row = next(ln for ln in dates if ln.startswith("m "))
    assert "100% (n=1," in row and row.rstrip().endswith("1")
    evidence = text[text.index("Evidence per model"):text.index("Proposed calls")]
    assert "escalates (expected)" in evidence


# -- waiting for review -----------------------------------------------------------------------------------
def graded(n: int, outcome: str = "answered", **extra: Any) -> dict[str, Any]:
    cell = {"format": "assistant-eval.graded-cell/1", "n": n, "source": {"folder": "m", "cell": f"G0{n}__basic__r1"},
            "model": {"preset": "scripted", "model": "m", "route": "scripted", "label": "m"}, "level": "basic",
            "case": f"G0{n}", "kind": "question", "class": "lookup", "repeat": 1, "outcome": outcome,
            "items": [], "parts": [{"outcome": outcome, "no_answer": False, "critical_missing": [],
                                    "invented_numbers": 0, "form_missing": [], "escalated": False}],
            "judge": {"grader": "scripted:rules", "route": "offline", "verdicts": {}, "understandability": 1},
            "resumes": 0, "resume_points": [], "resume_codes": []}
    cell.update(extra)
    return cell


def grading_folder(tmp_path: Path, cells: list[dict[str, Any]]) -> Path:
    folder = tmp_path / "grading"
    (folder / "cells").mkdir(parents=True)
    for cell in cells:
        (folder / "cells" / f"{cell['n']}.json").write_text(json.dumps(cell), encoding="utf-8")
    identity = {"preset": "scripted", "model": "m", "route": "scripted", "free_plan": False, "world": "w"}
    index = {"format": "assistant-eval.grading/1", "folders": [{"name": "m", "path_hint": "m", "identity": identity}],
             "judge": {"grader": "scripted:rules", "route": "offline", "deterministic": True},
             "order": [{"n": c["n"], "folder": "m", "cell": c["source"]["cell"]} for c in cells],
             "key_version": "k1", "set_version": "s1", "seed": 0, "rubric_version": "r1"}
    (folder / "grading.json").write_text(json.dumps(index), encoding="utf-8")
    # An empty review queue (docs/review.md): these tests are of the tables' own rules; without
    # review.json the review's queue would be drawn in memory and hold every cell.
    (folder / "review.json").write_text(json.dumps({"format": "assistant-eval.review/1", "seed": 0, "drawn_at": "",
                                                    "queue": [], "all": False, "judge_final": False,
                                                    "helpfulness": None}), encoding="utf-8")
    results = tmp_path / "m"
    (results / "cells").mkdir(parents=True)
    (results / "run.json").write_text(json.dumps({"format": "assistant-eval.run/1", "identity": identity, "runs": []}),
                                      encoding="utf-8")
    return folder


OPEN_ITEM = {"id": "G01/fact:x", "kind": "fact", "verdict": None, "settled_by": None}


def test_a_cell_waits_while_an_item_has_no_final_verdict_or_it_carries_a_review_marker():
    assert waiting_reasons(graded(1)) == []
    assert waiting_reasons(graded(1, items=[OPEN_ITEM])) == ["items without a final verdict: G01/fact:x"]
    judged = graded(1, items=[OPEN_ITEM])
    judged["judge"]["verdicts"] = {"G01/fact:x": {"verdict": "right", "confidence": 1.0, "reason": "r"}}
    assert waiting_reasons(judged) == []
    assert waiting_reasons(graded(1, review={"reasons": ["low confidence"]})) == ["queued for review: low confidence"]


def test_the_waiting_rule_is_a_list_another_issue_extends():
    def helpfulness_pending(cell):
        return ["helpfulness not rated"] if cell.get("helpfulness") == "asked" else []

    assert waiting_reasons(graded(1, helpfulness="asked"), [*WAITING_RULES, helpfulness_pending]) == [
        "helpfulness not rated"]


def test_summary_record_is_refused_while_cells_wait_and_nothing_is_written(tmp_path: Path, capsys):
    folder = grading_folder(tmp_path, [graded(1), graded(2, items=[OPEN_ITEM])])
    target = tmp_path / "results.jsonl"
    assert summary_command(folder, Path("calibration"), record=True, results_file=target, out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "1 cell(s) still wait for review: #2" in err and "nothing was recorded" in err
    assert not target.exists()


def test_summary_record_appends_one_line_per_cell_and_only_changed_grades_again(tmp_path: Path):
    folder = grading_folder(tmp_path, [graded(1), graded(2, outcome="escalated")])
    target = tmp_path / "results.jsonl"
    out = io.StringIO()
    assert summary_command(folder, Path("calibration"), record=True, results_file=target, out=out) == 0
    assert "Recorded 2 line(s)" in out.getvalue()
    assert summary_command(folder, Path("calibration"), record=True, results_file=target, out=io.StringIO()) == 0
    assert len(read_lines(target).lines) == 2  # the same grades again add nothing
    regraded = graded(2, outcome="answered")
    (folder / "cells" / "2.json").write_text(json.dumps(regraded), encoding="utf-8")
    assert summary_command(folder, Path("calibration"), record=True, results_file=target, out=io.StringIO()) == 0
    lines = read_lines(target).lines
    assert len(lines) == 3 and {ln["outcome"] for ln in latest(lines)} == {"answered"}


def test_summary_counts_per_model_level_setting_and_class(tmp_path: Path):
    folder = grading_folder(tmp_path, [graded(1), graded(2, outcome="failed", parts=[
        {"outcome": "failed", "no_answer": True, "critical_missing": [], "invented_numbers": 0, "form_missing": []}])])
    out = io.StringIO()
    assert summary_command(folder, Path("calibration"), out=out) == 0
    row = next(r for r in out.getvalue().splitlines() if r.startswith("m "))
    assert row.split()[:9] == ["m", "basic", "lookup", "2", "1", "0", "0", "1", "(1)"]


def test_summary_rows_of_settings_that_show_alike_hold_the_cells_of_both():
    from pytest_assistant_eval.tables.lines import BuiltLines
    from pytest_assistant_eval.tables.summary import render_summary

    lines = [line(cell="G01__basic__r1", setting="aaaaaaaa1111"), line(cell="G01__basic__r2", setting="aaaaaaaa2222"),
             line(cell="G01__basic__r3", setting="bbbbbbbb0000", outcome="failed")]
    rows = [r.split() for r in render_summary(BuiltLines(lines), ["basic"]).splitlines() if r.startswith("m ")]
    # Two settings shown by the same 8 digits are one row, of both settings' cells.
    assert [r[:6] for r in rows] == [["m", "basic", "[aaaaaaaa]", "lookup", "2", "2"],
                                     ["m", "basic", "[bbbbbbbb]", "lookup", "1", "0"]]


def test_summary_warns_when_one_models_cells_at_one_level_mix_tool_hashes(tmp_path: Path):
    folder = grading_folder(tmp_path, [graded(1), graded(2)])
    key = {"level": "basic", "system_hash": "a" * 64, "tools_hash": "b" * 64, "behaviour": "b1"}
    for n, tools in ((1, "b" * 64), (2, "c" * 64)):
        record = {"format": "assistant-eval.cell/1", "cell": f"G0{n}__basic__r1", "setting_key": {**key, "tools_hash": tools},
                  "turns": [], "requests": [], "versions": {}}
        (tmp_path / "m" / "cells" / f"G0{n}__basic__r1.json").write_text(json.dumps(record), encoding="utf-8")
    out = io.StringIO()
    assert summary_command(folder, Path("calibration"), out=out) == 0
    assert "warning: m at basic: its cells were asked with 2 tools (tools_hash): bbbbbbbb, cccccccc" in out.getvalue()
    assert "basic [" in out.getvalue()  # two settings of one level are two rows, never merged


# -- properties over random lines -------------------------------------------------------------------------
OUTCOMES = (*QUESTION_OUTCOMES, "waiting", "skipped", "not_applicable")
random_line = st.builds(
    lambda model, level, cls, outcome, invented, calls, n: line(
        model=model, cell=f"G{n:02}__{level}__r1", cls=cls, outcome=outcome, invented_numbers=invented,
        turn_calls=[calls]),
    st.sampled_from(["a", "b"]), st.sampled_from(list(ANSWERS)), st.sampled_from(["lookup", "interpret", "diagnose"]),
    st.sampled_from(OUTCOMES), st.integers(0, 2), st.integers(0, 30), st.integers(0, 40))


@settings(max_examples=60, deadline=None)
@given(st.lists(random_line, max_size=60))
def test_rates_lie_in_the_unit_interval_and_counts_add_up(lines):
    t = tally(lines)
    assert sum(t.outcomes.values()) == len(lines)
    assert t.ran == sum(1 for ln in lines if ln["outcome"] in QUESTION_OUTCOMES)
    assert t.ran + sum(t.outcomes[o] for o in ("waiting", "skipped", "not_applicable")) == len(lines)
    for iv in (t.rate("answered"), t.rate("incomplete"), t.safe_rate()):
        assert iv.n == t.ran
        if iv.rate is not None:
            assert 0.0 <= iv.low <= iv.rate <= iv.high <= 1.0
    assert t.safe <= t.outcomes["answered"] + t.outcomes["escalated"]
    proposal = proposed_calls(lines)
    assert proposal is None or proposal >= 3


@settings(max_examples=30, deadline=None)
@given(st.lists(random_line, min_size=1, max_size=40))
def test_latest_keeps_one_line_per_cell_and_calibrate_renders_any_lines(lines):
    kept = latest(lines)
    assert len(kept) == len({(ln["model"], ln["cell"]) for ln in lines})
    text = render_calibration(kept, ANSWERS, {"basic": 8})
    assert "Proposed calls per question" in text


rich_line = st.builds(
    lambda base, kind, free, setting, date, grader, under, critical, rounds, tokens, reported, caps, version: {
        **base, "kind": kind, "free_plan": free, "setting": setting, "date": date, "grader": grader,
        "understandability": under, "critical_missing": critical, "rounds": rounds, "output_tokens": tokens,
        "prompt_tokens_reported": reported, "prompt_tokens_estimated": 1000, "cap_hits": caps[0],
        "length_stops": caps[1], "compactions": caps[2], "truncations": caps[3], "set_version": version},
    random_line, st.sampled_from(["question", "scenario", "task"]), st.booleans(),
    st.sampled_from(["aaaaaaaaaaaa", "bbbbbbbbbbbb", None]), st.sampled_from(["2026-01-02", "2026-01-03"]),
    st.sampled_from(["openai:judge", "owner", "none"]), st.sampled_from([None, 1, 2, 3]), st.integers(0, 2),
    st.one_of(st.none(), st.integers(0, 9)), st.one_of(st.none(), st.integers(0, 900)),
    st.one_of(st.none(), st.integers(0, 2000)), st.tuples(*[st.integers(0, 2)] * 4), st.sampled_from(["s1", "s2"]))


@settings(max_examples=40, deadline=None)
@given(st.lists(rich_line, min_size=1, max_size=50))
def test_calibrate_prints_the_same_tables_from_its_read_fields_as_from_whole_lines(tmp_path_factory, lines):
    path = write_lines(tmp_path_factory.mktemp("calibrate") / "results.jsonl", lines)
    whole = latest(read_lines(path).lines)
    narrow = latest(read_lines(path, READ_FIELDS).lines)
    assert all(set(ln) == set(READ_FIELDS) for ln in narrow)
    for version in ("s1", "s2"):
        _, kept_whole, note_whole = choose_version(whole, set_version=version)
        _, kept_narrow, note_narrow = choose_version(narrow, set_version=version)
        assert (render_calibration(kept_narrow, ANSWERS, {"basic": 8}, note_narrow)
                == render_calibration(kept_whole, ANSWERS, {"basic": 8}, note_whole))


@settings(max_examples=40, deadline=None)
@given(st.lists(rich_line, max_size=40), st.integers(0, 40))
def test_tallies_of_parts_merged_equal_the_tally_of_the_whole_and_of_one_line_at_a_time(lines, cut):
    whole = tally(lines)
    assert tally(lines[:cut]).merged(tally(lines[cut:])) == whole
    one_by_one = Tally()
    for ln in lines:
        one_by_one.add(ln)
    assert one_by_one == whole


# -- pandas and DuckDB read the file as it is -------------------------------------------------------------
def test_the_results_file_reads_in_pandas_and_duckdb_without_options(tmp_path: Path):
    if importlib.util.find_spec("pandas") is None and importlib.util.find_spec("duckdb") is None:
        pytest.skip("neither pandas nor duckdb is installed (neither is a dependency)")
    path = tmp_path / "results.jsonl"
    append_lines(path, [line(), line(cell="G02__standard__r1", outcome="failed", cpu_offload=0.25,
                                     resume_points=[[0, 2]], resume_codes=["busy"])])
    if importlib.util.find_spec("pandas") is not None:
        import pandas

        frame = pandas.read_json(path, lines=True)  # lines=True is what JSON Lines is, not a schema option
        assert list(frame.columns) == list(FIELDS) and len(frame) == 2
        assert frame["outcome"].tolist() == ["answered", "failed"]
    if importlib.util.find_spec("duckdb") is not None:
        import duckdb

        rows = duckdb.sql(f"SELECT cell, outcome, repeat FROM '{path}' ORDER BY cell").fetchall()
        assert rows == [("G01__basic__r1", "answered", 1), ("G02__standard__r1", "failed", 1)]
