"""Every form of a key is redacted, and a key that is a word is never searched for (issue 31, items A and B).

A: the forms a provider, a proxy or a model gives a key back in (masked, a tail, case-folded,
split by a line break, JSON- and URL-escaped) leave no 8-character piece of it. B: a key that
is a word, a date or a field name is a placeholder: records keep their fields and stay gradeable.
"""

from __future__ import annotations

import json
import urllib.parse

import pytest
from hypothesis import given, strategies as st

from pytest_assistant_eval.redact import redact
from pytest_assistant_eval.secret import Secret, Secrets
from pytest_assistant_eval.records import redact_data
from tests.secret_scan import key_forms, leaked_pieces

KEY = "sk-atk-PLANTED-1234567890abcdef"


@pytest.mark.parametrize("form", sorted(key_forms(KEY)))
def test_every_form_of_a_key_leaves_no_8_character_piece(form):
    text = key_forms(KEY)[form]
    out = redact(f"provider said: {text} (request 7)", Secrets([KEY]))
    assert leaked_pieces(out, KEY) == [], (form, out)
    assert "[key]" in out and out.startswith("provider said: ") and out.endswith(" (request 7)")


def test_the_issues_own_texts_are_redacted():
    secrets = Secrets([KEY])
    assert redact("The key ending PLANTED-1234567890abcdef is revoked", secrets) == "The key ending [key] is revoked"
    assert redact("Incorrect API key provided: sk-atk-PL****…cdef.", secrets) == "Incorrect API key provided: [key]."
    assert redact(json.dumps({"query": KEY[:14] + "\n" + KEY[14:]}), secrets) == '{"query": "[key]"}'
    assert redact(json.dumps({"q": KEY}).replace("s", "\\u0073", 1), secrets) == '{"q": "[key]"}'
    assert redact(f"<think>the user's key {KEY[1:].upper()}</think>", secrets) == "<think>the user's key [key]</think>"


@given(st.integers(min_value=0, max_value=len(KEY) - 8), st.integers(min_value=8, max_value=len(KEY)),
       st.sampled_from(["", " ", "\n", "\\n", "\r\n"]), st.booleans())
def test_any_piece_of_8_or_more_characters_however_split_or_cased_is_redacted(start, size, gap, upper):
    piece = KEY[start:start + size]
    if len(piece) < 8:
        return
    piece = piece.upper() if upper else piece
    cut = len(piece) // 2
    text = piece[:cut] + gap + piece[cut:]
    assert leaked_pieces(redact(f"x {text} y", Secrets([KEY])), KEY) == []


def test_text_without_the_key_is_left_as_it_is():
    text = "plan the meeting at 12:34 on 2026-12-01; %41 is not a key, nor \\u0041 or &#65; ****…"
    assert redact(text, Secrets([KEY]), paths=False) == text


# -- B: a key that is not secret-shaped is a placeholder ------------------------------------------


@pytest.mark.parametrize("key", ["transcript", "messages", "2026-12-01", "finished_at", "EMPTY", "ollama",
                                 "lm-studio", "key_version", "search_contacts"])
def test_a_key_that_is_a_word_a_date_or_a_field_name_is_never_searched_for(key):
    assert Secret(key).weakness() is not None
    record = {"format": "assistant-eval-cell/1", "transcript": [{"role": "assistant", "text": "ok"}],
              "messages": [{"tool_calls": [{"name": "search_messages"}]}], "key_version": "2026-12-01.2",
              "finished_at": "2026-12-01T10:00:00Z", "model": {"model": key}}
    assert redact_data(record, Secrets([key])) == record


def test_a_record_redacted_with_the_key_transcript_keeps_its_transcript():
    record = {"transcript": [{"text": "see the transcript"}], "key_version": "2026-12-01.2"}
    out = redact_data(record, Secrets(["transcript", "2026-12-01"]))
    assert out == record and "transcript" in out


@pytest.mark.parametrize("key", [KEY, "Qx7Wv93mKt2LpZr8-hN4cYd6", "sk-test-key-0000000000000000",
                                 "QxWvmKtLpZrhNcYdaTyUw"])
def test_a_secret_shaped_key_is_searched_for(key):
    assert Secret(key).weakness() is None
    assert redact(f"a {key} b", Secrets([key])) == "a [key] b"


def test_a_word_inside_a_key_is_not_replaced_alone_but_the_key_around_it_is():
    key = "sk-transcript-Qx7Wv93m"
    secrets = Secrets([key])
    assert redact("the transcript of the call", secrets) == "the transcript of the call"
    assert redact(f"bad key {key}", secrets) == "bad key [key]"


@pytest.mark.parametrize("key", ["transcript", "2026-12-01"])
def test_a_run_whose_key_is_a_field_name_or_a_date_stays_gradeable_and_says_so_once(
        key, calibration_dir, world_dir, tmp_path):
    import subprocess
    import sys

    from tests.provider_runs_helpers import console, records, run_env, run_eval
    from tests.reference_fake import REFERENCE_FAKES

    cls, suffix = REFERENCE_FAKES["openai"]
    out = tmp_path / "results"
    with cls(calibration_dir, world_dir) as fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={fake.url}{suffix}",
                          "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", "G01 or T07",
                          env=run_env(key=key))
    assert result.ret == 0, console(result)
    assert console(result).count("not shaped like a secret") == 1
    cells = records(out)
    assert cells and all("[key]" not in json.dumps(c) for c in cells.values())
    graded = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", "grade-ai", str(out), "--dir",
                             str(tmp_path / "grading"), "--single-model"], capture_output=True, text=True,
                            env=run_env(key=key), timeout=240)
    assert graded.returncode == 0, graded.stdout + graded.stderr


def test_a_piece_of_a_key_that_is_in_the_runs_own_names_never_rewrites_them():
    key = "mistral-large-Qx7Wv93mKt2L"
    secrets = Secrets([key], identity=["mistral-large-2411", "http://127.0.0.1:8000/v1"])
    record = {"model": {"model": "mistral-large-2411"}, "text": "asked mistral-large-2411"}
    assert redact_data(record, secrets) == record
    assert redact(f"bad key {key}", secrets) == "bad key [key]"
    assert redact(f"the key ending {key[-12:]}", secrets) == "the key ending [key]"


# -- the fast paths of the scan (issue 32) find exactly what the plain scan finds ----------------------

_PIECES = st.sampled_from(["sk-atk-PL", "****", "…", "...", "xxxx", "XXXXX", "cdef", " ", "\n", "\\n", "\\u0073",
                           "%2D", "%252D", "&#x73;", "&#115;", "é", "Ｓ", "ß", "İ", "ab_c-9", "1234567890", '"', "•••",
                           "²", "ﬁ", "\u200b", "\t", "\\\\t", "**x"])


@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=30))
def test_the_fast_scan_of_masks_and_views_is_the_plain_one(parts):
    """A record is scanned mark by mark and its view made with one substitution: the same matches
    and the same view as the plain ``finditer`` and the position-mapping view."""
    from pytest_assistant_eval import secret_forms as sf

    text = "".join(parts)
    assert [(m.span(), m.groups()) for m in sf._masked_forms(text)] == \
        [(m.span(), m.groups()) for m in sf._MASKED.finditer(text)]
    assert sf._norm(text) == sf._View(text).norm
    plain = "".join(sf._one(c) for c in text)
    lowered = plain.lower()
    expected = lowered if len(lowered) == len(plain) else "".join(
        c.lower() if len(c.lower()) == 1 else c for c in plain)
    assert sf._fold(text) == expected


@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=30))
def test_the_view_s_passes_are_its_single_substitution(parts):
    """The view without escapes is made in passes (escaped breaks, zero-width marks, whitespace), and
    escapes are looked for one kind at a time: the same as the single regular expressions."""
    from pytest_assistant_eval import secret_forms as sf

    text = "".join(parts)
    assert sf._decodable(text) == (sf._DECODABLE.search(text) is not None)
    assert sf._skipped_removed(text) == sf._SKIPPED.sub("", text)


def test_str_split_removes_exactly_what_the_view_s_whitespace_class_matches():
    import re
    import sys

    space = re.compile(r"\s")
    differ = [hex(c) for c in range(sys.maxunicode + 1) if (space.match(chr(c)) is not None) != chr(c).isspace()]
    assert differ == []


@given(st.lists(st.one_of(_PIECES, st.sampled_from(["sk-atk-pl0123", "pl0123456789abc", "9abcdef"]),
                          st.text(max_size=6)), max_size=30))
def test_a_key_s_pieces_are_in_the_view_exactly_when_its_pattern_finds_one(parts):
    from pytest_assistant_eval import secret_forms as sf

    finder = sf.KeyFinder(["sk-atk-PL0123456789abcdef"], ["atk-model"])
    norm = sf._norm("".join(parts))
    expected = any(k in norm for k in finder._folded) or finder._pattern.search(norm) is not None
    assert finder._in_view(norm) == expected


# Lone surrogates and every whitespace character beyond ASCII, which hypothesis' text rarely draws.
_RARE = st.sampled_from(["\ud800", "\udfff", "\ud83d\ude00", "\x85", "\xa0", "\u1680", "\u2003", "\u2028",
                         "\u2029", "\u202f", "\u205f", "\u3000", "\x1c", "\x0b", "é", "İ", "…", " ", "\\n"])


@given(st.lists(st.one_of(_PIECES, _RARE, st.text(max_size=6)), max_size=40))
def test_the_c_speed_passes_over_utf_8_bytes_are_the_str_ones(parts):
    """Whitespace deleted from the UTF-8 bytes is ``str.split``'s, and the non-ASCII characters left
    after deleting the ASCII bytes are those a character class finds (surrogates included)."""
    import re

    from pytest_assistant_eval import secret_forms as sf

    text = "".join(parts)
    assert sf._without_whitespace(text) == "".join(text.split())
    assert sf._skipped_removed(text) == sf._SKIPPED.sub("", text)
    assert sf._non_ascii_chars(text) == set(re.findall(r"[^\x00-\x7f]", text))


@given(st.lists(st.one_of(_PIECES, _RARE, st.text(max_size=6)), max_size=40),
       st.lists(st.integers(min_value=0, max_value=200), max_size=8))
def test_the_mark_finder_gives_the_alternation_s_first_match_from_every_growing_position(parts, steps):
    from pytest_assistant_eval import secret_forms as sf

    text = "".join(parts)
    marks = sf._MarkFinder(text)
    at = 0
    for step in [0, *steps]:
        at += step
        match = sf._MARK.search(text, at)
        assert marks.first(at) == (match.start() if match else -1)


_KEY_CHARS = st.sampled_from(list("abcXYZ0189_-.") + ["İ", "ß", "é", "Ｓ", "ﬁ"])


@given(st.lists(st.text(_KEY_CHARS, min_size=8, max_size=30), min_size=1, max_size=3),
       st.lists(st.one_of(_PIECES, _RARE, st.text(_KEY_CHARS, max_size=12)), max_size=30),
       st.integers(min_value=0, max_value=30), st.integers(min_value=0, max_value=30))
def test_anchors_find_a_piece_exactly_when_searching_every_piece_does(keys, parts, start, size):
    """Looking only for the pieces that hold an anchor found says what looking for every piece says,
    for keys of any characters (a key whose folding changes its length has no anchors)."""
    from pytest_assistant_eval import secret_forms as sf

    finder = sf.KeyFinder(keys)
    text = "".join(parts[:len(parts) // 2]) + keys[-1][start:start + size] + "".join(parts[len(parts) // 2:])
    norm = sf._norm(text)
    plain = any(k in norm for k in finder._folded) or any(g in norm for g in finder._grams)
    assert finder._in_view(norm) == plain


@given(st.lists(st.sampled_from(["/home", "/ro", "ot", "/tmp", "/Users", "/var", "/private", "/work", "/mnt",
                                 "/opt", "/", "x", "é", "/hom", "e"]), max_size=20))
def test_one_search_for_a_root_folder_says_what_nine_in_tests_say(parts):
    from pytest_assistant_eval import redact as rd

    text = "".join(parts)
    assert (rd._ROOT_MARK.search(text) is not None) == any(mark in text for mark in rd._ROOT_MARKS)


_KEY = "sk-atk-PL0123456789abcdef"
_KEY_BITS = st.sampled_from([_KEY, _KEY[:9], _KEY[9:], _KEY[:4] + "****" + _KEY[-4:], _KEY[-12:], _KEY.upper(),
                             _KEY[:10] + "\n" + _KEY[10:], "\\u0073k-atk", "%2D", "\\", "\\n", "…", "a", "-"])


@given(st.lists(st.lists(st.one_of(_KEY_BITS, _PIECES, _RARE, st.text(max_size=5)), max_size=8), max_size=6))
def test_texts_scanned_as_one_are_redacted_as_each_alone(pieces):
    """A journal line's texts are scanned joined: the same result as each text alone, even when a key,
    a masked form or an escape is cut between two of them."""
    from pytest_assistant_eval import secret_forms as sf

    texts = ["".join(parts) for parts in pieces]
    keys, names = (_KEY,), ("atk-model",)
    assert sf.replace_keys_each(texts, keys, "[key]", names) == [sf.replace_keys(t, keys, "[key]", names) for t in texts]
