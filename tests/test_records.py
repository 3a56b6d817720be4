"""Atomic writes, format checks and redaction of everything the harness writes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import assume, given, strategies as st

from pytest_assistant_eval.secret import Secret
from pytest_assistant_eval.records import RecordError, read_json, redact, redact_data, write_json_atomic


def test_an_atomic_write_leaves_no_temporary_file_and_sets_the_mode(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "cell.json"
    write_json_atomic(path, {"format": "x/1", "a": 1}, mode=0o600)
    assert json.loads(path.read_text()) == {"format": "x/1", "a": 1}
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["cell.json"]


def test_a_failed_write_keeps_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    write_json_atomic(path, {"format": "x/1", "n": 1})
    with pytest.raises(TypeError):
        write_json_atomic(path, {"format": "x/1", "bad": object()})
    assert json.loads(path.read_text()) == {"format": "x/1", "n": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]


def test_a_file_of_another_format_is_refused_with_its_name(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    path.write_text('{"format": "other/2"}')
    with pytest.raises(RecordError, match="c.json: format 'other/2'"):
        read_json(path, "x/1")
    path.write_text("{half")
    with pytest.raises(RecordError, match="c.json: not readable JSON"):
        read_json(path, "x/1")


def test_keys_and_local_paths_are_redacted() -> None:
    text = "key sk-or-v1-abcdef0123456789abcdef at /home/mara/worlds/Grounding world ä and /tmp/x/y"
    out = redact(text, ("sk-or-v1-abcdef0123456789abcdef",))
    assert "sk-or" not in out and "/home/mara" not in out and "/tmp/x" not in out


@given(st.text(min_size=12, max_size=40, alphabet=st.characters(min_codepoint=48, max_codepoint=122)))
def test_a_planted_secret_never_survives_redaction_anywhere_in_a_record(secret: str) -> None:
    assume(Secret(secret).weakness() is None)  # a word or a date is a placeholder, never searched (issue 31 B)
    record = {"messages": [{"content": f"use {secret} now"}], secret: [secret, {"x": secret}]}
    assert secret not in json.dumps(redact_data(record, (secret,)))
