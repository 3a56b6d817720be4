"""Outside text reaches the console only through one sanitiser, after redaction (issue 31, item C).

A provider's error text with ESC sequences, a CR and line breaks cleared the screen, set the
terminal's title and forged a ``==== 3 passed ====`` line; ``--skip-reason`` holding a key was
redacted in skips.json but printed whole, escapes and all.
"""

from __future__ import annotations

import json
import subprocess
import sys

from hypothesis import given, strategies as st

from pytest_assistant_eval.console import one_line, shown, visible
from tests.provider_runs_helpers import CALIBRATION, console, run_env, run_eval
from tests.providers.fakes.base import Raw
from tests.reference_fake import REFERENCE_FAKES

HOSTILE = "\x1b]0;pwned\x07\x1b[2J\x1b[H\rall good\n==== 3 passed in 0.01s ====\n\u202egnirts"
KEY = "sk-proj-Qx7Wv93mKt2LpZr8hN4cYd6Tt"


def _controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c != "\n") or 0x7f <= ord(c) < 0xa0 or 0x202a <= ord(c) <= 0x202e]


@given(st.text())
def test_shown_text_is_one_line_without_a_control_character(text):
    out = shown(text)
    assert "\n" not in out and _controls(out) == []


def test_escapes_are_shown_visibly_and_text_kept():
    out = one_line(HOSTILE)
    assert out.startswith("\\x1b]0;pwned\\x07\\x1b[2J") and "\\r" in out and "\\n==== 3 passed" in out
    assert "\\u202e" in out
    assert visible("a\nb\x1b[2J") == "a\nb\\x1b[2J"


def test_a_key_is_redacted_before_it_is_shown():
    assert shown(f"bad key {KEY}\r\n", [KEY]) == "bad key [key]\\r\\n"


def test_a_providers_hostile_error_text_is_shown_on_one_visible_line(calibration_dir, world_dir, tmp_path):
    cls, suffix = REFERENCE_FAKES["openai"]
    body = json.dumps({"error": {"message": HOSTILE, "type": "invalid_request_error", "code": "x\x1b[31m"}})
    raw = Raw(status=400, headers={"content-type": "application/json"}, body=body.encode())
    with cls(calibration_dir, world_dir) as fake:
        fake.add(raw)
        result = run_eval(world_dir, tmp_path / "results", "--model", "openai:oracle", f"--base-url={fake.url}{suffix}",
                          "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", "G01",
                          "--no-stream", env=run_env())
    text = console(result)
    assert "pwned" in text, text  # the provider's words are shown ...
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text  # ... visibly
    assert not any(line.startswith("==== 3 passed") for line in text.splitlines())


def test_a_skip_reason_is_shown_redacted_and_visible(tmp_path, world_dir):
    out = tmp_path / "results"
    base = [sys.executable, "-m", "pytest", "-c", str(CALIBRATION / "pytest.ini"), "--rootdir", str(CALIBRATION),
            f"--world={world_dir}", f"--out={out}", "-q", "-p", "no:cacheprovider", "--model", "scripted:oracle"]
    first = subprocess.run([*base, "-k", "G01", str(CALIBRATION / "cells.py")], capture_output=True, text=True)
    assert first.returncode == 0, first.stdout + first.stderr
    skipped = subprocess.run([*base, "--skip", "G02__basic__r1", "--skip-reason", f"the key {KEY} {HOSTILE}",
                              str(CALIBRATION / "cells.py")], capture_output=True, text=True,
                             env=run_env(key=KEY))
    text = skipped.stdout + skipped.stderr
    assert skipped.returncode == 0, text
    assert "G02__basic__r1: recorded as not applicable" in text
    assert "Qx7Wv93m" not in text and "\x1b" not in text and "\r" not in text
    assert not any(line.startswith("==== 3 passed") for line in text.splitlines())
    assert "Qx7Wv93m" not in (out / "skips.json").read_text(encoding="utf-8")


def test_the_terminal_review_shows_a_models_answer_with_its_escapes_visible():
    import io

    from pytest_assistant_eval.review.terminal import TerminalReview

    out = io.StringIO()
    TerminalReview(ctx=None, out=out).say(f"The answer:\n{HOSTILE}")  # type: ignore[arg-type]
    text = out.getvalue()
    assert text.startswith("The answer:\n") and "\x1b" not in text and "\r" not in text and "\u202e" not in text
    assert "\\x1b]0;pwned" in text  # shown, not obeyed
