"""The owner's review (issue 12, S7): the queue, the terminal review as a person uses it, the
markdown and helpfulness reviews, the owner's grade in the results lines, and the demo's loop.

The graded folder is real: three reference assistants at the basic level, graded by the
offline judge, built once per session; each test reviews its own copy.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from pytest_assistant_eval.review.command import ReviewOptions, review_command
from pytest_assistant_eval.tables.grading_source import open_grading  # as the front door hands it in
from pytest_assistant_eval.review.queue import LOW_CONFIDENCE, draw_queue, family, reasons_for
from pytest_assistant_eval.tables.summary import summary_command
from tests.graded_helpers import run_and_grade

REPO = Path(__file__).resolve().parent.parent
CALIBRATION = REPO / "calibration"
MODELS = ("oracle", "invents", "false-claims")


@pytest.fixture(scope="session")
def graded_base(tmp_path_factory: pytest.TempPathFactory, world_dir: Path) -> Path:
    """results/<model> and grading/ of three reference assistants at the basic level."""
    base = tmp_path_factory.mktemp("reviewed")
    run_and_grade(base, world_dir, MODELS, seed=3)
    return base


@pytest.fixture()
def grading(graded_base: Path, tmp_path: Path) -> Path:
    shutil.copytree(graded_base, tmp_path / "copy")
    return tmp_path / "copy" / "grading"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *args], capture_output=True, text=True,
                          cwd=REPO)


def review_file(grading: Path, n: int) -> dict[str, Any] | None:
    path = grading / "reviews" / f"{n}.json"
    return json.loads(path.read_text()) if path.exists() else None


def queue_of(grading: Path) -> list[dict[str, Any]]:
    return json.loads((grading / "review.json").read_text())["queue"]


def cell(grading: Path, n: int) -> dict[str, Any]:
    return json.loads((grading / "cells" / f"{n}.json").read_text())


def judged(grading: Path, n: int) -> list[dict[str, Any]]:
    return [i for i in cell(grading, n)["items"] if i["settled_by"] != "check"]


# -- the queue (S7.1) ---------------------------------------------------------------------------------
def test_the_queue_is_drawn_once_with_the_gradings_seed(grading: Path):
    assert cli("review", "--dir", str(grading), "--export-md", str(grading.parent / "R.md")).returncode == 0
    first = (grading / "review.json").read_bytes()
    queue = queue_of(grading)
    numbers = [c["n"] for c in map(lambda p: json.loads(p.read_text()), (grading / "cells").glob("*.json"))
               if any(i["kind"] == "number" and i["settled_by"] != "check" for i in c["items"])]
    assert numbers and set(numbers) <= {e["n"] for e in queue}
    sample = [e for e in queue if e["sample"]]
    assert len(sample) == 35  # 15% of the rest is fewer than 35
    assert cli("review", "--dir", str(grading), "--export-md", str(grading.parent / "R2.md")).returncode == 0
    assert (grading / "review.json").read_bytes() == first  # never drawn again
    cells = [json.loads(p.read_text()) for p in (grading / "cells").glob("*.json")]
    index = json.loads((grading / "grading.json").read_text())
    again = draw_queue(cells, index)
    assert [(e.n, e.sample) for e in again.queue] == [(e["n"], e["sample"]) for e in queue]


def graded_cell(**judge: Any) -> dict[str, Any]:
    return {"n": 1, "outcome": "answered", "model": {"preset": "openrouter", "model": "anthropic/claude-x"},
            "items": [{"id": "G01/fact:a", "kind": "fact", "settled_by": None}],
            "judge": {"verdicts": {"G01/fact:a": {"verdict": "right", "confidence": 0.9}}, "understandability": 1,
                      **judge}}


def test_a_cell_is_queued_for_each_reason_a_person_should_look():
    assert reasons_for(graded_cell(), None) == []
    low = graded_cell(verdicts={"G01/fact:a": {"verdict": "right", "confidence": LOW_CONFIDENCE - 0.1}})
    assert reasons_for(low, None) == ["low confidence"]
    assert reasons_for(graded_cell(unparsed=True), None) == ["unparsed reply"]
    hinted = graded_cell(to_owner=["the answer seems to address a grader (names a grader: 'grader')"])
    assert reasons_for(hinted, None) == ["injection hint"]
    assert reasons_for(graded_cell(), family("anthropic", "claude-opus-5")) == ["self-preference"]
    assert reasons_for({**graded_cell(), "history": [{"outcome": "failed"}]}, None) == ["changed"]


def test_model_families_are_read_from_any_route():
    assert family("openrouter", "anthropic/claude-3.5-sonnet") == family("anthropic", "claude-opus-5") == "anthropic"
    assert family("openai", "gpt-4o-mini") == "openai" and family("ollama", "gemma3:4b") == "google"
    assert family("scripted", "oracle") is None


# -- the terminal review (S7.2), in a real pseudo-terminal ----------------------------------------------
ITEM = r"\[[rmw] [a-z]+(?: / [rmw] [a-z]+)*\]: "
UNDERSTAND = r"\[1/2/3\]: "
KEEP = r"\[Enter keeps; [^\]]+\]: "


def spawn(grading: Path, *extra: str) -> pexpect.spawn:
    env = {**os.environ, "COLUMNS": "110", "PYTHONUNBUFFERED": "1"}
    return pexpect.spawn(sys.executable, ["-m", "pytest_assistant_eval", "review", "--dir", str(grading), *extra],
                         cwd=str(REPO), env=env, encoding="utf-8", timeout=60, dimensions=(40, 110))


def first_pending_with_items(grading: Path) -> list[int]:
    return [e["n"] for e in queue_of(grading) if judged(grading, e["n"])]


def test_a_person_types_letters_enter_keeps_and_q_stops_keeping_every_answer(grading: Path):
    child = spawn(grading, "--sitting", "0")
    child.expect(r"═══ Cell #(\d+)")
    n = int(child.match.group(1))
    items = judged(grading, n)
    assert items, "the queue starts with a cell that has judged items (numbers)"
    child.expect("Your verdicts")
    assert "random sample" not in child.before and "number without" not in child.before  # reasons never shown
    # Letters that differ from every verdict of the offline judge (it calls open numbers wrong, a
    # traced claims item right) and from its understandability 1: every answer differs.
    judge = cell(grading, n)["judge"]["verdicts"]
    mine = {i["id"]: ("wrong" if judge[i["id"]]["verdict"] == "right" else "right") for i in items}
    child.expect(ITEM)
    child.sendline("x")  # not a letter this item allows
    child.expect("only ")
    for k, item in enumerate(items):
        if k:
            child.expect(ITEM)
        child.sendline(mine[item["id"]][0])
    child.expect(UNDERSTAND)
    child.sendline("2")
    child.expect("The judge's verdicts")
    saved = review_file(grading, n)
    assert saved["first"]["verdicts"] == mine and saved["final"] is None
    child.expect(KEEP)
    assert "≠" in child.before
    child.sendline("")  # Enter keeps mine
    for _ in items[1:]:
        child.expect(KEEP)
        child.sendline("w")  # a letter changes it
    child.expect(KEEP)  # understandability
    child.sendline("1")
    child.expect(rf"Cell #{n} reviewed")
    done = review_file(grading, n)
    first_id = items[0]["id"]
    assert done["first"]["verdicts"][first_id] == mine[first_id] and done["final"]["verdicts"][first_id] == mine[first_id]
    assert all(done["final"]["verdicts"][i["id"]] == "wrong" for i in items[1:])
    assert done["first"]["understandability"] == 2 and done["final"]["understandability"] == 1
    assert "understandability" in done["final"]["changed"] and done["grade"]["outcome"]
    child.expect(r"═══ Cell #(\d+)")
    second = int(child.match.group(1))
    child.expect(ITEM + "|" + UNDERSTAND)
    child.sendline("q")
    child.expect("Stopped: every answer given is kept")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert review_file(grading, second) is None or review_file(grading, second)["final"] is None


def test_ctrl_c_keeps_what_was_given_and_the_next_review_continues_there(grading: Path):
    child = spawn(grading)
    child.expect(r"═══ Cell #(\d+)")
    n = int(child.match.group(1))
    child.expect(ITEM)
    child.sendline("m" if "m missing" in child.after else "r")
    child.expect(ITEM + "|" + UNDERSTAND)  # the next question: the answer is written by now
    given = review_file(grading, n)["first"]["verdicts"]
    assert len(given) == 1
    child.sendintr()  # Ctrl-C
    child.expect("Stopped: every answer given is kept")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert review_file(grading, n)["first"]["verdicts"] == given
    again = spawn(grading)
    again.expect(rf"═══ Cell #{n}")
    again.expect(r"\(given earlier\)")
    again.sendline("q")
    again.expect(pexpect.EOF)


def test_a_killed_review_loses_nothing_already_given(grading: Path):
    child = spawn(grading)
    child.expect(r"═══ Cell #(\d+)")
    n = int(child.match.group(1))
    child.expect(ITEM)
    child.sendline("r")
    child.expect(ITEM + "|" + UNDERSTAND)
    os.kill(child.pid, signal.SIGKILL)
    child.expect(pexpect.EOF)
    child.close()
    saved = review_file(grading, n)
    assert list(saved["first"]["verdicts"].values()) == ["right"]


def test_a_sitting_stops_after_its_cells_and_regrade_reviews_a_cell_again(grading: Path):
    assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted"), out=open(os.devnull, "w"), open_grading=open_grading) == 0
    n = first_pending_with_items(grading)[0]
    before = review_file(grading, n)
    child = spawn(grading, "--regrade", f"#{n}")
    child.expect(rf"═══ Cell #{n}")
    judge = cell(grading, n)["judge"]["verdicts"]
    for item in judged(grading, n):
        child.expect(ITEM)
        child.sendline(judge[item["id"]]["verdict"][0])  # the judge's own letter: nothing differs
    child.expect(UNDERSTAND)
    child.sendline("1")
    child.expect(pexpect.EOF)
    after = review_file(grading, n)
    assert after["by"] == "terminal" and after["history"][-1]["by"] == before["by"]


# -- the markdown review (S7.3) --------------------------------------------------------------------------
def fill(path: Path, letters: dict[str, str], understandability: str | None = None, cells: int | None = None) -> None:
    """Write letters after the colons of the first ``cells`` cells (None: all)."""
    out, seen = [], 0
    for line in path.read_text().splitlines():
        if line.startswith("# Cell #"):
            seen += 1
        if cells is None or seen <= cells:
            if line.startswith("- `") and line.endswith("]:"):
                item = line[3:line.index("`", 3)]
                kind = next((k for k in letters if k in item), "*" if "*" in letters else None)
                if kind:
                    line += " " + letters[kind]
            elif line == "- understandability [1 / 2 / 3]:" and understandability:
                line += " " + understandability
        out.append(line)
    path.write_text("\n".join(out) + "\n")


def test_markdown_round_trip_part_filled_then_final(grading: Path):
    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    assert (grading.parent / "REVIEW.key.md").read_text().startswith("# The letters")
    text = review_md.read_text()
    assert text.count("# Cell #") == len(queue_of(grading))
    asked_lines = [line for line in text.splitlines() if line.startswith("- `")]
    assert asked_lines and not [line for line in asked_lines if "/number:" in line]  # numbers stay the judge's
    assert "judge" not in text.lower().replace("left to the judge", "")  # nothing of the judge's
    # part-filled: only the understandability of the first three cells
    fill(review_md, {}, "1", cells=3)
    done = cli("review", "--dir", str(grading), "--import-md", str(review_md))
    assert done.returncode == 0, done.stderr
    reviewed = [e["n"] for e in queue_of(grading) if (review_file(grading, e["n"]) or {}).get("final")]
    # cells with only understandability to give (no asked items) that the judge agrees with are done at
    # once; since every answer carries a claims item the owner is asked about (issue 21), there may be none
    assert all(not [i for i in judged(grading, n) if i["kind"] != "number"] for n in reviewed)
    # an export now refuses nothing: every letter written was imported
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    fill(review_md, {"claim": "r", "*": "r"}, "2")
    out = cli("review", "--dir", str(grading), "--import-md", str(review_md))
    assert out.returncode == 0, out.stderr
    final_md = grading.parent / "REVIEW.final.md"
    assert final_md.exists() and "The judge's verdicts where they differ" in final_md.read_text()
    final_text = final_md.read_text()
    assert "- understandability [1 / 2 / 3]: 2" in final_text  # my letter already there: leaving it keeps it
    assert cli("review", "--dir", str(grading), "--import-md", str(final_md)).returncode == 0
    pending = [e["n"] for e in queue_of(grading) if not (review_file(grading, e["n"]) or {}).get("final")]
    assert pending == []
    some = next(e["n"] for e in queue_of(grading) if any(i["kind"] == "claim" for i in judged(grading, e["n"])))
    saved = review_file(grading, some)
    assert saved["first"]["understandability"] == 2 and saved["final"]["understandability"] == 2
    numbers = [i["id"] for i in judged(grading, some) if i["kind"] == "number"]
    assert saved["left_to_judge"] == numbers


def test_a_letter_not_allowed_is_reported_with_file_and_line_and_its_cell_left_as_it_was(grading: Path):
    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    lines = review_md.read_text().splitlines()
    at = next(k for k, line in enumerate(lines) if line == "- understandability [1 / 2 / 3]:")
    lines[at] += " 7"
    n = int(next(line for line in reversed(lines[:at]) if line.startswith("# Cell #"))[len("# Cell #"):])
    review_md.write_text("\n".join(lines) + "\n")
    out = cli("review", "--dir", str(grading), "--import-md", str(review_md))
    assert out.returncode == 1
    assert f"{review_md}:{at + 1}: cell #{n}: '7' is not allowed here" in out.stderr
    assert (review_file(grading, n) or {"first": {"understandability": None}})["first"]["understandability"] is None


def test_an_export_never_overwrites_letters_not_yet_imported(grading: Path):
    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    fill(review_md, {}, "3", cells=1)
    written = review_md.read_text()
    out = cli("review", "--dir", str(grading), "--export-md", str(review_md))
    assert out.returncode == 2 and "holds letters not imported yet" in out.stderr and f"{review_md}:" in out.stderr
    assert review_md.read_text() == written


def test_a_cell_whose_material_changed_since_the_export_is_refused(grading: Path):
    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    fill(review_md, {}, "1", cells=1)
    n = int(next(line for line in review_md.read_text().splitlines() if line.startswith("# Cell #"))[8:])
    path = grading / "cells" / f"{n}.json"
    data = json.loads(path.read_text())
    data["material_sha256"] = "0" * 64  # graded again from other material
    path.write_text(json.dumps(data))
    out = cli("review", "--dir", str(grading), "--import-md", str(review_md))
    assert out.returncode == 1 and f"cell #{n} changed since this file was written" in out.stderr
    assert f"{review_md}:" in out.stderr


# -- the helpfulness review (S7.4) -------------------------------------------------------------------------
def test_the_helpfulness_review_draws_once_makes_the_judge_final_and_saves_ratings(grading: Path, tmp_path: Path):
    helpful = grading.parent / "HELPFUL.md"
    assert cli("review", "--dir", str(grading), "--helpfulness", "--export-md", str(helpful), "--per-level",
               "4").returncode == 0
    index = json.loads((grading / "review.json").read_text())
    assert index["judge_final"] is True and len(index["helpfulness"]["sample"]) == 4
    picked = [cell(grading, n) for n in index["helpfulness"]["sample"]]
    assert {c["class"] for c in picked} >= {"diagnose", "interpret", "lookup"}
    assert len({c["model"]["label"] for c in picked}) == 3  # the least-picked model first
    refused = cli("review", "--dir", str(grading), "--helpfulness", "--export-md", str(helpful), "--per-level", "5")
    assert refused.returncode == 2 and "never drawn again" in refused.stderr
    text = helpful.read_text().replace("- helpfulness [1 / 2 / 3]:", "- helpfulness [1 / 2 / 3]: 2", 1)
    text = text.replace("- note:", "- note: clear, but buries the total", 1)
    helpful.write_text(text)
    assert cli("review", "--dir", str(grading), "--helpfulness", "--import-md", str(helpful)).returncode == 0
    target = tmp_path / "results.jsonl"
    out = tmp_path / "summary.txt"
    with out.open("w") as handle:
        assert summary_command(grading, CALIBRATION, record=True, results_file=target, out=handle) == 0
    assert "2 (partly helpful): clear, but buries the total" in out.read_text()
    lines = [json.loads(line) for line in target.read_text().splitlines()]
    rated = [ln for ln in lines if ln["helpfulness"] is not None]
    assert len(rated) == 1 and rated[0]["helpfulness_note"] == "clear, but buries the total"


# -- the owner's grade in the results lines (S8.3) ---------------------------------------------------------
def test_record_waits_for_the_queue_then_records_the_owners_grade(grading: Path, tmp_path: Path, capsys):
    target = tmp_path / "results.jsonl"
    devnull = open(os.devnull, "w")
    assert summary_command(grading, CALIBRATION, record=True, results_file=target, out=devnull) == 2
    assert "queued for review, not reviewed yet" in capsys.readouterr().err and not target.exists()
    from pytest_assistant_eval.review.context import open_review
    from pytest_assistant_eval.review.terminal import TerminalReview

    ctx = open_review(grading, CALIBRATION, open_grading=open_grading)  # draws the queue, as the first review does
    n = first_pending_with_items(grading)[0]
    # the owner disagrees with the judge on one cell: every number is right after all
    answers = iter(["r"] * len(judged(grading, n)) + ["1"] + [""] * len(judged(grading, n)))
    TerminalReview(ctx, out=devnull, read=lambda prompt: next(answers)).run(regrade=n)
    assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted"), out=devnull, open_grading=open_grading) == 0
    assert summary_command(grading, CALIBRATION, record=True, results_file=target, out=devnull) == 0
    lines = {ln["blind_n"]: ln for ln in map(json.loads, target.read_text().splitlines())}
    mine = lines[n]
    assert mine["grader"] == "owner" and mine["judge_outcome"] == "failed" and mine["outcome"] != "failed"
    assert mine["review_reasons"] == ["number without a tool source"]
    assert (grading / "agreement.txt").exists()


# -- the demo's loop ----------------------------------------------------------------------------------------
def test_the_scripted_owner_closes_the_loop_offline_and_agreement_is_written(grading: Path):
    out = cli("review", "--dir", str(grading), "--owner", "scripted")
    assert out.returncode == 0 and "The scripted owner reviewed" in out.stdout
    summary = cli("summary", "--dir", str(grading))
    assert summary.returncode == 0 and "agreement.txt" in summary.stdout
    text = (grading / "agreement.txt").read_text()
    assert "== Random sample ==" in text and "Outcome disagreement in the random sample" in text
    assert "Items: n=" in text and "Understandability: n=" in text and "linear-weighted kappa" in text
    assert "Self-preference" in text


# -- the tables' digests draw and count as the whole files do (docs/digests.md) ----------------------------
def lines_three_ways(grading: Path, fields: tuple[str, ...]) -> list[Any]:
    """build_lines from the whole files, from slim cells, and from summary cells (the summary's own digest)."""
    from datetime import datetime, timezone

    from pytest_assistant_eval.suites.calibration.levels import load_levels
    from pytest_assistant_eval.tables.grading_source import open_grading
    from pytest_assistant_eval.tables.lines import build_lines

    levels = load_levels(CALIBRATION / "levels.yaml", known_tools=None)
    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    out = []
    for slim, narrow in ((False, False), (True, False), (True, True)):
        built = build_lines(open_grading(grading, slim=slim, narrow=narrow), levels, now=now, fields=fields)
        out.append((built.lines, sorted(built.waiting), built.warnings))
    return out


def test_the_summary_counts_the_same_lines_from_its_digests_as_from_the_whole_files(grading: Path):
    from pytest_assistant_eval.review.context import open_review
    from pytest_assistant_eval.tables.results_file import FIELDS
    from pytest_assistant_eval.tables.summary import SHOWN_FIELDS

    devnull = open(os.devnull, "w")
    states = []
    for step in ("queue drawn in memory", "queue drawn, one cell regraded", "every queued cell reviewed"):
        if step == "queue drawn, one cell regraded":
            ctx = open_review(grading, CALIBRATION, open_grading=open_grading)
            from pytest_assistant_eval.review.terminal import TerminalReview

            n = first_pending_with_items(grading)[0]
            answers = iter(["r"] * len(judged(grading, n)) + ["1"] + [""] * len(judged(grading, n)))
            TerminalReview(ctx, out=devnull, read=lambda prompt: next(answers)).run(regrade=n)
        if step == "every queued cell reviewed":
            assert review_command(grading, CALIBRATION, ReviewOptions(owner="scripted"), out=devnull, open_grading=open_grading) == 0
        whole, slim, narrow = lines_three_ways(grading, FIELDS)
        assert whole == slim == narrow, step
        # input_tokens is the summary's alone (no results.jsonl field, issue 24): compared with every other
        in_file = [f for f in SHOWN_FIELDS if f in FIELDS]
        shown = [([{f: ln[f] for f in in_file} for ln in lines], waiting, warnings)
                 for lines, waiting, warnings in (whole,)]
        narrowed, waiting, warnings = lines_three_ways(grading, SHOWN_FIELDS)[2]
        assert ([{f: ln[f] for f in in_file} for ln in narrowed], waiting, warnings) == shown[0], step
        states.append(len(whole[1]))
    assert states[0] > states[1] >= states[2] == 0  # cells waited, then fewer, then none


@pytest.mark.parametrize("low,unparsed,hint,number,claude,changed,judge", [
    (low, unparsed, hint, number, claude, changed, judge)
    for low in (False, True) for unparsed in (False, True) for hint in (False, True) for number in (False, True)
    for claude in (False, True) for changed in (False, True) for judge in (None, "anthropic")])
def test_the_queue_facts_a_digest_keeps_give_the_reasons_of_the_whole_cell(low, unparsed, hint, number, claude,
                                                                           changed, judge):
    from pytest_assistant_eval.review.queue import _reasons, queue_facts

    cell = graded_cell(verdicts={"G01/fact:a": {"verdict": "right", "confidence": 0.5 if low else 0.9}},
                       **({"unparsed": True} if unparsed else {}),
                       **({"to_owner": ["the answer seems to address a grader"]} if hint else {}))
    if number:
        cell["items"].append({"id": "G01/number:x", "kind": "number", "settled_by": None})
    cell["model"] = {"preset": "openrouter", "model": "anthropic/claude-x" if claude else "qwen/qwen3-8b"}
    if changed:
        cell["history"] = [{"outcome": "failed"}]
    facts = queue_facts(cell)
    assert facts[0] is True
    assert _reasons(facts, judge) == reasons_for(cell, judge)


def test_the_markdown_review_shows_the_service_calls_a_claim_item_is_about(grading: Path):
    # An owner once guessed "right" on a claim whose charge had been refused: the log settles it (issue 24).
    review_md = grading.parent / "REVIEW.md"
    assert cli("review", "--dir", str(grading), "--export-md", str(review_md)).returncode == 0
    text = review_md.read_text()
    blocks = text.split("\n# Cell #")[1:]
    with_claims = [b for b in blocks if "- `claim:" in b or "- `hidden_refusal:" in b]
    assert with_claims, "the queue holds no cell with a claim item"
    for block in with_claims:
        assert "### The service log these items are about" in block
        asked = [ln[3:ln.index("`", 3)] for ln in block.splitlines()
                 if ln.startswith("- `claim:") or ln.startswith("- `hidden_refusal:")]
        log = block[block.index("### The service log these items are about"):]
        for item in asked:
            assert f"`{item}` (" in log
        assert "- call #" in log or "- no such call in the service log" in log
    assert not [b for b in blocks if b not in with_claims and "### The service log these items are about" in b]
