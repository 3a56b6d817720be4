"""run.json's usage as it grows, through each process's usage journal (issue 31 G, issue 32 speed).

A process appends its whole totals to ``RESULTS/.usage/<run>.<pid>.<token>.jsonl`` as they grow
and folds them into its run entry when it closes; ``read_usage`` counts run.json plus every
journal not folded, never both. Here: the totals read back at every stage, a torn last line, a
kill between the fold's write and the journal's delete, a journal of an earlier run folded into
that run's entry, and a process killed with SIGKILL while it appends.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.results.usage import (
    JOURNAL_DIR,
    UsageJournal,
    fold_journals,
    journal_totals,
    read_usage,
)

KEY = "openai:m"


def _run_json(folder: Path, runs: int = 1) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.json"
    path.write_text(json.dumps({"format": "assistant-eval.run/1", "identity": {},
                                "runs": [{"started_at": f"run {i}"} for i in range(runs)]}), encoding="utf-8")
    return path


def _spent(requests: int, tokens: int = 10) -> dict[str, dict[str, int | str]]:
    return {KEY: {"label": f"{KEY} (calibration)", "requests": requests, "input_tokens": tokens}}


def _runs(run_json: Path) -> list[dict]:
    return json.loads(run_json.read_text(encoding="utf-8"))["runs"]


def test_the_journal_counts_as_it_grows_and_the_fold_moves_it_into_run_json_once(tmp_path):
    run_json = _run_json(tmp_path)
    journal = UsageJournal(run_json, durable=False)
    journal.add(_spent(1))
    journal.add(_spent(2, 30))
    assert "usage" not in _runs(run_json)[0], "run.json is not rewritten per request"
    assert read_usage(run_json)[KEY]["requests"] == 3
    assert read_usage(run_json)[KEY]["input_tokens"] == 40
    journal.fold()
    entry = _runs(run_json)[0]
    assert entry["usage"][KEY]["requests"] == 3 and entry["usage"][KEY]["label"] == f"{KEY} (calibration)"
    assert not (tmp_path / JOURNAL_DIR).exists(), "the last journal out leaves no folder"
    assert read_usage(run_json)[KEY]["requests"] == 3
    journal.add(_spent(1))  # spent after a fold: a new journal, counted on top
    assert read_usage(run_json)[KEY]["requests"] == 4


def test_nothing_is_journalled_for_a_folder_without_run_json(tmp_path):
    journal = UsageJournal(tmp_path / "run.json", durable=False)
    journal.add(_spent(1))
    assert not (tmp_path / JOURNAL_DIR).exists()
    assert read_usage(tmp_path / "run.json") == {}


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(min_value=0, max_value=5), min_size=1, max_size=8), cut=st.integers(min_value=0))
def test_a_journal_cut_anywhere_gives_the_totals_of_its_last_whole_line(tmp_path_factory, counts, cut):
    run_json = _run_json(tmp_path_factory.mktemp("cut"))
    journal = UsageJournal(run_json, durable=False)
    ends, totals = [], []
    for n in counts:
        journal.add(_spent(n))
        ends.append(journal.path.stat().st_size)
        totals.append(sum(counts[:len(ends)]))
    raw = journal.path.read_bytes()
    at = cut % (len(raw) + 1)
    journal.path.write_bytes(raw[:at])  # a kill mid-write leaves any prefix
    # A line is whole once its JSON is: a cut that takes only its newline leaves its totals, which were
    # spent, whole (a strict prefix of a JSON object never parses). Hypothesis found that cut (issue 32).
    whole = [t for end, t in zip(ends, totals) if end - 1 <= at]
    got = journal_totals(journal.path).get(KEY, {}).get("requests")
    assert got == (whole[-1] if whole else None)


def test_a_kill_between_the_folds_write_and_the_delete_counts_nothing_twice(tmp_path):
    run_json = _run_json(tmp_path)
    journal = UsageJournal(run_json, durable=False)
    journal.add(_spent(5))
    path = journal.path
    kept = path.read_bytes()
    journal.fold()
    path.parent.mkdir()
    path.write_bytes(kept)  # as if killed after run.json was written, before the journal went
    assert read_usage(run_json)[KEY]["requests"] == 5
    fold_journals(run_json)
    assert _runs(run_json)[0]["usage"][KEY]["requests"] == 5
    assert not path.exists()


def test_an_earlier_runs_journal_is_folded_into_that_runs_entry_not_the_latest(tmp_path):
    run_json = _run_json(tmp_path)
    killed = UsageJournal(run_json, durable=False)
    killed.add(_spent(7))  # a process of run 0, killed: never folded
    data = json.loads(run_json.read_text(encoding="utf-8"))
    data["runs"].append({"started_at": "run 1"})
    run_json.write_text(json.dumps(data), encoding="utf-8")
    assert read_usage(run_json) == {}, "the latest run spent nothing yet"
    fold_journals(run_json)
    runs = _runs(run_json)
    assert runs[0]["usage"][KEY]["requests"] == 7 and "usage" not in runs[1]


def test_a_journal_whose_run_json_cannot_be_read_is_kept(tmp_path):
    run_json = _run_json(tmp_path)
    journal = UsageJournal(run_json, durable=False)
    journal.add(_spent(2))
    run_json.write_text("{not json", encoding="utf-8")
    fold_journals(run_json)
    assert journal.path.exists(), "a count is never dropped because run.json could not take it"


CHILD = """
import sys
from pathlib import Path
from pytest_assistant_eval.results.usage import UsageJournal
journal = UsageJournal(Path(sys.argv[1]), durable=True)
n = 0
while True:
    journal.add({"openai:m": {"label": "openai:m (calibration)", "requests": 1}})
    n += 1
    print(n, flush=True)
"""


def test_a_process_killed_while_it_appends_leaves_every_count_it_made_but_the_last_at_most(tmp_path):
    run_json = _run_json(tmp_path)
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(run_json)], stdout=subprocess.PIPE, text=True,
                            cwd=Path(__file__).resolve().parent.parent)
    seen = 0
    deadline = time.monotonic() + 60
    while seen < 40 and time.monotonic() < deadline:
        seen = int(proc.stdout.readline() or seen)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    rest = proc.stdout.read().split()
    acknowledged = int(rest[-1]) if rest else seen
    counted = read_usage(run_json)[KEY]["requests"]
    # every add it finished is there; one more at most (written, killed before it said so)
    assert acknowledged <= counted <= acknowledged + 1
    fold_journals(run_json)
    assert _runs(run_json)[0]["usage"][KEY]["requests"] == counted
    assert read_usage(run_json)[KEY]["requests"] == counted
