"""No key ever reaches a file or the console (S4.3, S4.10, S5.5, S9.3).

A distinctive key is planted in every provider's environment variable. Runs against the
fake servers finish cells, keep cells and lose cells, with faults whose error texts echo
the key back; then every file written under RESULTS (records, checkpoints, spent.json,
run.json, the ledger, lock and temporary files alike) and every line of the captured
console are searched for the key and for long pieces of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.provider_runs_helpers import console, run_env, run_eval
from tests.providers.fakes.base import Answer, Call, Fault
from tests.reference_fake import REFERENCE_FAKES

KEY = "sk-planted-0123456789abcdefSECRET"
PIECES = [KEY, KEY[3:], "0123456789abcdef", "abcdefSECRET"]

# (preset, the items queued before the reference answers, extra options)
RUNS = [
    ("openai", [Fault("bad_key", echo_key=True)], ()),                  # fatal: the key echoed in a 401
    ("openrouter", [Fault("bad_key", echo_key=True)], ("--no-stream",)),
    ("gemini", [Fault("bad_key", echo_key=True)], ()),
    ("openai", [Fault("rate_limit", retry_after=500)], ()),            # kept: a checkpoint and its stop
    ("anthropic", [Fault("overloaded")], ()),                          # saved after a retry: attempts kept
    ("openai", [Answer(calls=[Call("search_contacts", '{"q": "' + KEY)])] * 3, ()),  # unreadable, echoing the key
    ("openrouter", [Fault("daily_quota")], ()),
    ("openai", [], ("--user-model", "openai:user-sim")),               # a user model with the same key
]


def test_a_planted_key_appears_in_no_file_and_no_console_line(calibration_dir, world_dir, tmp_path):
    env = run_env(key=KEY)
    written: list[Path] = []
    texts: list[str] = []
    for index, (preset, items, extra) in enumerate(RUNS):
        cls, suffix = REFERENCE_FAKES[preset]
        out = tmp_path / f"results-{index}"
        with cls(calibration_dir, world_dir) as fake:
            fake.add(*items)
            if "--user-model" in extra:
                extra = (*extra, f"--user-base-url={fake.url}{suffix}")
            result = run_eval(world_dir, out, "--model", f"{preset}:oracle", f"--base-url={fake.url}{suffix}",
                              "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", "G01 or T07",
                              *extra, env=env)
            assert KEY in fake.keys_seen, "the key was sent (so it could leak)"
        texts.append(console(result))
        written += [p for p in out.rglob("*") if p.is_file()]
    names = {p.name for p in written}
    assert {"run.json", "spent.json", ".ledger.json"} <= names
    assert any(p.parent.name == "partial" for p in written) and any(p.parent.name == "cells" for p in written)
    for path in written:
        data = path.read_bytes().decode("utf-8", "replace")
        for piece in PIECES:
            assert piece not in data, f"{piece!r} in {path}"
    for text in texts:
        for piece in PIECES:
            assert piece not in text, f"{piece!r} on the console:\n{text}"
    assert "[key]" in "\n".join(texts), "the echoed key was shown redacted"
