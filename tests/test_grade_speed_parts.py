"""The pieces grade-ai was made faster with (issue 32) read exactly what they replaced.

``records.loads_exact`` must give ``json.loads``'s values for any JSON text (orjson reads an
integer beyond 64 bits as a float and refuses NaN, which json reads); ``Names.reading`` must
give, for one state object, the index ``Names.of`` builds for it, and forget it on leaving; a
message's reading read once must be ``read_message``'s for that task, index, facts and year.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.records import RecordError, loads_exact, read_json
from pytest_assistant_eval.suites.calibration.world.names import Names

_SCALARS = (st.none() | st.booleans() | st.floats(allow_nan=True, allow_infinity=True)
            | st.integers(min_value=-(2**80), max_value=2**80) | st.text())
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=5), inner, max_size=4), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(value=_VALUES, ascii_only=st.booleans())
def test_exact_loads_reads_every_json_text_as_json_does(value, ascii_only):
    text = json.dumps(value, ensure_ascii=ascii_only)
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate written raw: no UTF-8 file holds it
        raw = json.dumps(value, ensure_ascii=True).encode()
    assert repr(loads_exact(raw)) == repr(json.loads(raw.decode("utf-8")))


@pytest.mark.parametrize("raw", [b"18446744073709551616", b"-9223372036854775809", b"[1234567890123456789012, 1]",
                                 b"NaN", b"[Infinity]", b"1e400", b'"\\ud800"'])
def test_what_orjson_reads_otherwise_or_refuses_is_read_by_json(raw):
    assert repr(loads_exact(raw)) == repr(json.loads(raw))


def test_a_file_that_is_no_json_is_refused_naming_the_file(tmp_path):
    bad = tmp_path / "cell.json"
    bad.write_bytes(b'{"format": "x", ')
    with pytest.raises(RecordError, match="cell.json: not readable JSON"):
        read_json(bad)
    bad.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(RecordError, match="not readable JSON"):
        read_json(bad)


def _state(name: str) -> dict:
    return {"contacts": [{"id": "c-1", "name": name, "email": "x@example.com"}]}


def test_names_reading_gives_one_index_per_state_object_and_forgets_it_after():
    state = _state("João Silva")
    with Names.reading():
        first = Names.of(state)
        assert Names.of(state) is first
        assert [m.id for m in first.mentions("ask joao silva")] == ["c-1"]
        other = Names.of(_state("Maria Costa"))  # another state: its own index
        assert [m.id for m in other.mentions("ask maria costa")] == ["c-1"]
        assert other.mentions("ask joao silva") == []
    state["contacts"][0]["name"] = "Maria Costa"  # changed once the scope is left: read afresh
    assert [m.id for m in Names.of(state).mentions("ask maria costa")] == ["c-1"]
    with Names.reading():
        assert Names.of(state).mentions("ask joao silva") == []


# -- a message's reading, read once (checks/user_replies._read) ------------------------------

def _corpus_task_messages() -> list[tuple[str, str, dict]]:
    """(task id, an assistant message, the final state) of every task cell in the corpus."""
    out = []
    for path in sorted((Path(__file__).parent / "corpus" / "cells").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(record, dict) or record.get("kind") != "task":
            continue
        for entry in record.get("transcript") or []:
            if entry.get("type") == "assistant" and (entry.get("text") or "").strip():
                out.append((record["case"], entry["text"], (record.get("state") or {}).get("final") or {}))
    return out


_MESSAGES = _corpus_task_messages()


@settings(max_examples=150, deadline=None)
@given(picked=st.sampled_from(_MESSAGES), facts=st.lists(st.sampled_from(["F1", "F2", "budget", "diet"]), max_size=2),
       twice=st.booleans())
def test_a_reading_read_once_is_the_reading_of_the_message(picked, facts, twice):
    from pytest_assistant_eval.suites.calibration.checks import user_replies
    from pytest_assistant_eval.suites.calibration.user.proposals import read_message

    cases, _ = _calibration()
    case, text, final = picked
    task = next(t for t in cases.tasks if t.id == case)
    names = Names.of(final)
    disclosed = list(dict.fromkeys(facts + [f.id for f in task.facts][:1]))
    if twice:
        user_replies._read(text, task, names, disclosed, 2026)
    got = user_replies._read(text, task, names, disclosed, 2026)
    assert got == read_message(text, task, names, disclosed, 2026)
    # Another year, other facts disclosed or another task's approvals are another reading.
    assert user_replies._read(text, task, names, disclosed, 2025) == read_message(text, task, names, disclosed, 2025)
    assert user_replies._read(text, task, names, [], 2026) == read_message(text, task, names, [], 2026)
    other = next(t for t in cases.tasks if t.id != case and t.approvals)
    assert user_replies._read(text, other, names, disclosed, 2026) == read_message(text, other, names, disclosed, 2026)
    assert len(user_replies._READINGS) <= user_replies._READINGS_MAX


_CAL: list = []


def _calibration():
    """The shipped calibration, loaded once for the examples."""
    if not _CAL:
        from pytest_assistant_eval.suites.calibration.plan import load_calibration

        _CAL.append(load_calibration(Path(__file__).resolve().parent.parent / "calibration"))
    return _CAL[0]


# -- a text's English share and unread paragraphs, kept per text (readers/language.py) -----------

_PROSE = st.lists(st.sampled_from(["the", "of", "la", "le", "de", "card", "is", "est", "L-101", "4821", "\n", "\n\n",
                                   "Paid", "EUR", "nous", "avons", "you", "réservé"]), max_size=40).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(text=_PROSE | st.text(max_size=80))
def test_kept_language_readings_are_the_plain_ones_and_hand_out_copies(text):
    import re

    from pytest_assistant_eval.suites.calibration.readers import language

    words = [w for w in language._words(text) if len(w) <= 4 and w == w.lower()]
    plain = (sum(w in language.ENGLISH_FUNCTION_WORDS for w in words) / len(words), len(words)) if words else (0.0, 0)
    assert language.english_share(text) == plain
    parts = [p.strip() for p in re.split(r"\n+", text)
             if language.english_share.__wrapped__(p)[1] >= language.MIN_PART_WORDS
             and language.english_share.__wrapped__(p)[0] < language.MIN_SHARE]
    first = language.unread_parts(text)
    assert first == parts
    first.append("changed by a caller")
    assert language.unread_parts(text) == parts


def test_a_graded_cell_is_written_as_write_bytes_writes_it(tmp_path):
    from pytest_assistant_eval.suites.calibration.grade.folder import _write_new

    data = ("é" * 70000).encode() + b"\n"
    _write_new(tmp_path / "a.json", data)
    (tmp_path / "b.json").write_bytes(data)
    a, b = (tmp_path / "a.json").stat(), (tmp_path / "b.json").stat()
    assert (tmp_path / "a.json").read_bytes() == data and a.st_mode == b.st_mode
    _write_new(tmp_path / "a.json", b"short")  # a file left by a killed run is written over whole
    assert (tmp_path / "a.json").read_bytes() == b"short"
