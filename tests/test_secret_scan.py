"""A planted key reaches no file, no console line and no junit report (issue 23, items 13-16; S9.3).

The scan (``tests/secret_scan.py``) runs the fault modes that echo a key through fake servers on
127.0.0.1 and searches everything written for the key and every 8-character piece of it; its
short form runs here. The tests before it pin each item's behaviour at the layer that holds it.
"""

from __future__ import annotations

import json
import pickle

import pytest

from pytest_assistant_eval.conversation.checkpoint import CheckpointJournal, load_checkpoint
from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import ConfigurationError, ProviderError, RetryPolicy
from pytest_assistant_eval.providers.keys import get_key
from pytest_assistant_eval.providers.openai_compat import classify_openai
from pytest_assistant_eval.providers.presets import make_provider
from pytest_assistant_eval.redact import redact, redact_clip
from pytest_assistant_eval.secret import Secret, Secrets, weak_key_line
from pytest_assistant_eval.records import write_json_atomic
from pytest_assistant_eval.run.report_redaction import redact_report
from tests.providers.fakes.openai_fake import OpenAIFake
from tests.provider_runs_helpers import console, records, run_env, run_eval
from tests.reference_fake import REFERENCE_FAKES
from tests.secret_scan import (
    KEY,
    echoed_headers,
    garbled_event_near_300,
    pieces,
    plain_text_near_300,
    scan_all,
)


def _leaks(text: str, key: str = KEY) -> list[str]:
    return [p for p in pieces(key) if p in text]


def _error_of(raw, *, stream: bool) -> ProviderError:
    """The error a provider raises for one reply of a fake server on 127.0.0.1."""
    with OpenAIFake() as fake:
        fake.add(raw)
        provider = make_provider("openai", "m", base_url=f"{fake.url}/v1", key=KEY, stream=stream,
                                 retry=RetryPolicy(max_attempts=1))
        try:
            with pytest.raises(ProviderError) as caught:
                provider.complete(ChatRequest(model="m", messages=[Message(role="user", content="x")], tools=[],
                                              max_output_tokens=8, stream=stream))
        finally:
            provider.close()
    return caught.value


# -- item 13: checkpoints are redacted with the run's keys -----------------------------------------


def test_a_checkpoint_is_redacted_with_the_runs_key_in_a_kept_cells_tool_arguments(tmp_path):
    path = tmp_path / "partial" / "T07__basic__r1.json"
    journal = CheckpointJournal(path, durable=False, secrets=Secrets([KEY]))
    call = {"id": "c1", "name": "search_contacts", "arguments": {"query": KEY}}
    data = {"format": "x", "state": {"messages": [{"role": "assistant", "tool_calls": [call]}]},
            "service_log": [{"tool": "search_contacts", "arguments": {"query": KEY}}]}
    journal.write(data)
    journal.write({**data, "service_log": [*data["service_log"], {"tool": "read_contact", "arguments": {"id": KEY}}]})
    assert _leaks(path.read_text(encoding="utf-8")) == []
    assert load_checkpoint(path)["service_log"][1]["arguments"]["id"] == "[key]"


def test_an_echoed_authorization_header_is_no_part_of_an_errors_quota():
    raw = echoed_headers(KEY, 429)
    error = classify_openai(429, raw.body, raw.headers, "openrouter")
    assert "authorization" not in error.quota and error.quota["x-ratelimit-limit"] == "20"


def test_an_echoed_key_header_is_redacted_even_when_the_key_is_not_the_runs():
    text = json.dumps({"headers": {"Authorization": "Bearer Zz9Yy8Xx7Ww6Vv5Uu4", "x-api-key": "Qq1Ww2Ee3Rr4Tt5Yy6"}})
    out = redact(text)
    assert "Zz9Yy8Xx" not in out and "Qq1Ww2Ee" not in out and out.count("[key]") == 2


# -- item 14: redact first, cut after ---------------------------------------------------------------


def test_a_plain_text_error_with_the_key_at_character_288_keeps_no_piece_of_it():
    error = _error_of(plain_text_near_300(KEY), stream=False)
    assert error.code == "overloaded" and len(error.provider_message) <= 300
    assert _leaks(error.provider_message) == [] and _leaks(str(error)) == []


def test_a_garbled_stream_event_with_the_key_at_character_288_keeps_no_piece_of_it():
    error = _error_of(garbled_event_near_300(KEY), stream=True)
    assert error.code == "unreadable_answer" and len(error.provider_message) <= 300
    assert _leaks(error.provider_message) == [] and _leaks(str(error)) == []


def test_a_cut_made_after_redaction_never_splits_the_mark_into_a_key_piece():
    for at in range(270, 300):
        assert _leaks(redact_clip("a" * at + KEY + "b" * 40, [KEY])) == []


# -- item 15: secrets in objects no repr shows, never in a printable local ---------------------------


def test_no_repr_of_a_secret_a_provider_or_its_request_shows_the_key():
    secret = Secret(KEY)
    with OpenAIFake() as fake:
        provider = make_provider("openai", "m", base_url=f"{fake.url}/v1", key=KEY)
        try:
            wire = provider._wire(ChatRequest(model="m", messages=[Message(role="user", content="x")], tools=[],
                                              max_output_tokens=8), False)
            shown = " ".join([repr(secret), str(secret), repr(Secrets([KEY])), repr(wire), repr(vars(provider))])
        finally:
            provider.close()
    assert _leaks(shown) == [] and secret.reveal() == KEY
    with pytest.raises(TypeError):
        pickle.dumps(secret)


def test_a_key_an_http_header_cannot_carry_is_refused_before_any_request_without_showing_it(monkeypatch):
    from pytest_assistant_eval.providers import keys

    monkeypatch.setattr(keys, "_from_keyring", lambda preset: None)  # the variable, whatever keyring this process has
    with pytest.raises(ConfigurationError) as caught:
        get_key("openai", environ={"OPENAI_API_KEY": "Qx7Wv93mKt2LpZr8-hÑ4cÿd6"})
    assert "OPENAI_API_KEY" in str(caught.value) and "character 19" in str(caught.value)
    assert _leaks(str(caught.value), "Qx7Wv93mKt2LpZr8-hÑ4cÿd6") == []


def test_a_cells_report_is_redacted_before_pytest_prints_it_or_writes_junit():
    report = pytest.TestReport("cells.py::test_cell[G01]", ("cells.py", 1, "test_cell"), {}, "failed",
                               f"E   RuntimeError: the server said Bearer {KEY} at /work/x.py:3", "call",
                               sections=[("Captured stdout call", f"sent {KEY}")],
                               user_properties=[("assistant_eval_message", f"kept: {KEY}")])
    redact_report(report, Secrets([KEY]))
    assert _leaks(str(report.longrepr) + repr(report.sections) + repr(report.user_properties)) == []
    assert "/work/x.py:3" in str(report.longrepr)  # a traceback keeps its file names


# -- item 16: a key that is a word is sent, never searched for ---------------------------------------


@pytest.mark.parametrize("key", ["replay", "ollama", "EMPTY", "none", "not-needed", "password"])
def test_a_short_or_dictionary_key_is_accepted_but_never_replaced(key):
    record = json.dumps({"model": {"preset": "openai-compatible", "model": key}, "text": f"a {key} here"})
    assert redact(record, Secrets([key])) == record
    assert redact(record, [key]) == record  # plain strings go through the same policy
    assert "not searched for" in weak_key_line("openai-compatible", "OPENAI_COMPATIBLE_API_KEY", Secret(key))


def test_a_key_that_is_part_of_the_runs_own_names_is_never_replaced_in_its_records(tmp_path):
    secrets = Secrets(["mistral-large-2411"], identity=["mistral-large-2411-instruct", "http://127.0.0.1:8000/v1"])
    path = tmp_path / "cell.json"
    write_json_atomic(path, {"model": {"model": "mistral-large-2411-instruct"}}, redacted=True, secrets=secrets)
    assert json.loads(path.read_text())["model"]["model"] == "mistral-large-2411-instruct"
    assert secrets.weak_reasons == ("part of the run's own names (a model, an address)",)


def test_a_run_whose_key_is_the_models_name_keeps_the_model_in_its_records_and_says_so_once(
        calibration_dir, world_dir, tmp_path):
    cls, suffix = REFERENCE_FAKES["openai"]
    out = tmp_path / "results"
    with cls(calibration_dir, world_dir) as fake:
        result = run_eval(world_dir, out, "--model", "openai:oracle", f"--base-url={fake.url}{suffix}",
                          "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", "G01 or G02",
                          env=run_env(key="oracle"))
    assert result.ret == 0, console(result)
    cells = records(out)
    assert len(cells) == 2 and {c["model"]["model"] for c in cells.values()} == {"oracle"}
    assert console(result).count("is shorter than 8 characters") == 1


# -- the scan ---------------------------------------------------------------------------------------


def test_a_planted_key_leaves_no_8_character_piece_in_any_file_console_or_junit(calibration_dir, world_dir,
                                                                               tmp_path):
    scan = scan_all(calibration_dir, world_dir, tmp_path, short=True)
    assert scan.pieces_found == 0, "\n".join(scan.found[:20])
    consoles = "\n".join(scan.consoles)
    assert scan.runs == 10 and scan.files >= 30
    assert consoles.count("$ report (exit 0)") == 1, "the graded case was graded and reported"
    assert consoles.count("kept up to turn") >= 5, "the faults kept their cells (checkpoints were written)"
    assert "-l (--showlocals) is off for cells" in consoles
    assert "holds a character an HTTP header cannot carry" in consoles
    assert "[key]" in consoles, "the echoed key was shown redacted"
