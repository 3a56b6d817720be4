"""Checkpoint format 2: a journal of what changed before each request (issue 15)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, strategies as st

from pytest_assistant_eval.conversation.checkpoint import (
    CHECKPOINT_FORMAT,
    REQUIRED,
    CheckpointJournal,
    load_checkpoint,
    read_checkpoint,
)


def checkpoint(requests: int) -> dict:
    messages = [{"role": "system", "content": "instructions " * 200}, {"role": "user", "content": "question"}]
    for n in range(requests):
        messages += [{"role": "assistant", "content": "", "tool_calls": [{"id": f"c{n}"}]},
                     {"role": "tool", "content": f"result {n} " * 100}]
    data = {key: None for key in REQUIRED}
    data.update(format=CHECKPOINT_FORMAT, cell="G01__basic__r1", world_state={"contacts": [{"id": "c-1"}]},
                state={"messages": messages, "turn": 0, "round": requests, "transcript": list(range(requests))},
                service_log=[{"seq": n + 1} for n in range(requests)], requests_log=[],
                requests_by_day={"2026-11-30": requests + 1}, pending={"request": requests + 1}, attempts=[],
                resume={"count": 0, "points": []}, seconds_so_far=0.0)
    return data


def written(path, requests: int) -> CheckpointJournal:
    journal = CheckpointJournal(path, durable=False)
    for n in range(requests):
        journal.write(checkpoint(n))
    return journal


def test_each_request_appends_only_what_changed(tmp_path):
    path = tmp_path / "G01.json"
    written(path, 6)
    lines = path.read_bytes().splitlines()
    assert len(lines) == 6
    assert json.loads(lines[0])["format"] == CHECKPOINT_FORMAT
    whole = len(json.dumps(checkpoint(5)))
    assert all(len(line) < whole / 4 for line in lines[1:]), "a later line holds only the change"
    later = json.loads(lines[-1])
    assert later["journal"] == 5
    assert [path for path, _ in later["add"]] == [["state", "messages"], ["state", "transcript"], ["service_log"]]
    assert load_checkpoint(path) == checkpoint(5)


def test_a_torn_last_line_is_the_request_that_never_left(tmp_path):
    path = tmp_path / "G01.json"
    written(path, 4)
    whole = path.read_bytes()
    path.write_bytes(whole[:-25])  # killed in the middle of the last append
    data, why = read_checkpoint(path)
    assert why is None and data == checkpoint(2)


def test_a_damaged_line_before_the_last_makes_the_checkpoint_unreadable(tmp_path):
    path = tmp_path / "G01.json"
    written(path, 4)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = b"{not json\n"
    path.write_bytes(b"".join(lines))
    assert read_checkpoint(path) == (None, "the checkpoint could not be read")


def test_a_checkpoint_of_format_1_is_continued_and_its_next_write_makes_it_a_journal(tmp_path):
    path = tmp_path / "G01.json"
    old = {**checkpoint(3), "format": "assistant-eval.checkpoint/1"}
    path.write_text(json.dumps(old))
    data, why = read_checkpoint(path)
    assert why is None and data == old
    journal = CheckpointJournal(path, durable=False)  # a resumed cell starts its journal whole
    journal.write(checkpoint(4))
    journal.write(checkpoint(5))
    assert json.loads(path.read_bytes().splitlines()[0])["format"] == CHECKPOINT_FORMAT
    assert load_checkpoint(path) == checkpoint(5)


def test_a_field_that_changed_in_place_is_set_whole(tmp_path):
    path = tmp_path / "G01.json"
    journal = CheckpointJournal(path, durable=False)
    first = checkpoint(3)
    journal.write(first)
    folded = checkpoint(4)
    folded["state"]["messages"][3]["content"] = "[folded]"  # history compaction rewrites an old result
    del folded["world_state"]["contacts"]
    journal.write(folded)
    assert load_checkpoint(path) == folded


def test_nothing_changed_writes_nothing(tmp_path):
    path = tmp_path / "G01.json"
    journal = CheckpointJournal(path, durable=False)
    journal.write(checkpoint(2))
    size = path.stat().st_size
    journal.write(checkpoint(2))
    assert path.stat().st_size == size


def test_the_runs_key_is_redacted_in_journal_lines_too(tmp_path):
    path = tmp_path / "G01.json"
    journal = CheckpointJournal(path, durable=False, secrets=("sk-proj-abcdefghijklmnop0123",))
    journal.write(checkpoint(1))
    leaking = checkpoint(2)
    leaking["state"]["messages"][-1]["content"] = "the key sk-proj-abcdefghijklmnop0123 again"
    leaking["attempts"] = [{"message": "bad key sk-proj-abcdefghijklmnop0123"}]
    journal.write(leaking)
    text = path.read_text()
    assert "sk-proj-abcdefghijklmnop0123" not in text
    assert "[key]" in load_checkpoint(path)["state"]["messages"][-1]["content"]


def test_the_conversation_is_kept_whole_so_a_resume_gives_the_request_that_was_sent(tmp_path):
    # Redacting a path or a key-shaped string of an answer changed the request a resume sends
    # (issue 23): the conversation and the world are written as the loop holds them.
    path = tmp_path / "G01.json"
    journal = CheckpointJournal(path, durable=False)
    said = "sk-proj-abcdefghijklmnop0123 at /home/someone/x"
    first = checkpoint(1)
    first["state"]["messages"][1]["content"] = said
    journal.write(first)
    later = checkpoint(2)
    later["state"]["messages"][1]["content"] = said
    later["state"]["messages"][-1]["content"] = said
    later["world_state"] = {"contacts": [{"id": "c-1", "note": said}]}
    later["attempts"] = [{"message": said}]  # the provider's words are no conversation: redacted
    journal.write(later)
    back = load_checkpoint(path)
    assert back["state"] == later["state"] and back["world_state"] == later["world_state"]
    assert "/home/someone" not in json.dumps(back["attempts"]) and "sk-proj" not in json.dumps(back["attempts"])


@pytest.mark.parametrize("cut", range(1, 40, 3))
def test_any_cut_of_the_last_append_reads_as_the_checkpoint_before_or_after_it(tmp_path, cut):
    path = tmp_path / "G01.json"
    written(path, 3)
    before = path.read_bytes()
    CheckpointJournal(path, durable=False)  # (not used: the next write of the same journal appends)
    journal = written(tmp_path / "other.json", 3)
    journal.path = path
    journal.write(checkpoint(3))
    after = path.read_bytes()
    path.write_bytes(after[:len(before) + cut])
    assert load_checkpoint(path) in (checkpoint(2), checkpoint(3))


# -- the conversation's fields are scanned for keys in one pass (issue 32): the text of each alone ----

_PLANTED = "sk-ckpt-9f8e7d6c5b4a39281706"
_FIELD_TEXT = st.lists(st.sampled_from([_PLANTED, _PLANTED[:12], _PLANTED[12:], "/root/x", "Bearer abc.def1",
                                        "é", " ", "\\n", "…", "ok"]), max_size=5).map("".join)


def _per_field_whole(data, secrets):
    from pytest_assistant_eval.conversation import checkpoint as ck
    from pytest_assistant_eval.records import dumps

    fields = [f"{json.dumps(key, ensure_ascii=False)}:{ck._redact_field(key, dumps(value, compact=True)[:-1], secrets)}"
              for key, value in {**data, "format": CHECKPOINT_FORMAT}.items()]
    return "{" + ",".join(fields) + "}\n"


def _per_field_line(n, changes, secrets):
    from pytest_assistant_eval.conversation import checkpoint as ck
    from pytest_assistant_eval.records import dumps

    kinds = ",".join(f"{json.dumps(kind)}:[" + ",".join(
        ck._redact_field(entry[0][0], dumps(entry, compact=True)[:-1], secrets) for entry in entries) + "]"
        for kind, entries in changes.items())
    return f'{{"journal":{n},{kinds}}}\n'


@given(st.dictionaries(st.sampled_from(list(REQUIRED)), _FIELD_TEXT, max_size=8),
       st.lists(st.tuples(st.sampled_from(["set", "add"]), st.sampled_from(list(REQUIRED)), _FIELD_TEXT), max_size=8))
def test_a_checkpoint_and_a_journal_line_are_what_redacting_each_field_alone_gives(fields, entries):
    from pytest_assistant_eval.conversation import checkpoint as ck
    from pytest_assistant_eval.secret import Secrets

    secrets = Secrets.of([_PLANTED])
    assert ck.checkpoint_text(fields, secrets) == _per_field_whole(fields, secrets)
    changes = {"set": [[[key], text] for kind, key, text in entries if kind == "set"],
               "add": [[[key], [text]] for kind, key, text in entries if kind == "add"]}
    assert ck._journal_line(3, changes, secrets) == _per_field_line(3, changes, secrets)
