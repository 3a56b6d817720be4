"""The fault matrix: each provider failure becomes its code and kind, in the provider's own words."""

from __future__ import annotations

import json
import os

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.errors import CODES, ProviderError, RetryPolicy
from tests.providers.fakes.presets import PLANTED_KEY
from tests.providers.fakes import Answer, Fault, Raw

ONE_TRY = RetryPolicy(max_attempts=1)

# (preset, fault, streamed?) -> (code, status, provider_code)
MATRIX = [
    ("openai", "rate_limit", False, "rate_limit", 429, "rate_limit_exceeded"),
    ("openai", "credit", False, "credit", 429, "insufficient_quota"),
    ("openai", "overloaded", False, "overloaded", 503, "server_is_overloaded"),
    ("openai", "server_error", False, "busy", 500, "server_error"),
    ("openai", "context_too_long", False, "context_too_long", 400, "context_length_exceeded"),
    ("openai", "refusal", False, "refusal", 400, "invalid_prompt"),
    ("openai", "bad_key", False, "key", 401, "invalid_api_key"),
    ("openai", "unknown_model", False, "model", 404, "model_not_found"),
    ("openai", "permission", True, "permission", 403, None),
    ("openai", "mid_stream_error", True, "busy", 200, "server_error"),
    ("openai", "cut", True, "stream_cut", None, None),
    ("openai", "drop", False, "no_connection", None, None),
    ("openrouter", "daily_quota", True, "daily_quota", 429, "429"),
    ("openrouter", "rate_limit", True, "rate_limit", 429, "rate_limit_exceeded"),
    ("openrouter", "bad_key", False, "key", 401, "401"),
    ("openrouter", "credit", False, "credit", 402, "402"),
    ("openrouter", "unknown_model", False, "model", 400, "model_not_found"),
    ("openrouter", "routing", False, "routing", 404, "404"),
    ("openrouter", "context_too_long", False, "context_too_long", 400, "context_length_exceeded"),
    ("openrouter", "overloaded", False, "overloaded", 503, "provider_overloaded"),
    ("openrouter", "mid_stream_error", True, "busy", 502, "provider_unavailable"),
    ("openrouter", "cut", True, "stream_cut", None, None),
    ("anthropic", "rate_limit", True, "rate_limit", 429, "rate_limit_error"),
    ("anthropic", "overloaded", True, "overloaded", 529, "overloaded_error"),
    ("anthropic", "server_error", False, "busy", 500, "api_error"),
    ("anthropic", "context_too_long", False, "context_too_long", 400, "invalid_request_error"),
    ("anthropic", "bad_key", False, "key", 401, "authentication_error"),
    ("anthropic", "unknown_model", False, "model", 404, "not_found_error"),
    ("anthropic", "permission", False, "permission", 403, "permission_error"),
    ("anthropic", "credit", False, "credit", 400, "invalid_request_error"),
    ("anthropic", "mid_stream_error", True, "overloaded", 200, "overloaded_error"),
    ("anthropic", "cut", True, "stream_cut", None, None),
    ("gemini", "tpm_input", True, "tpm_input", 429, "RESOURCE_EXHAUSTED"),
    ("gemini", "rate_limit", False, "rate_limit", 429, "RESOURCE_EXHAUSTED"),
    ("gemini", "daily_quota", False, "daily_quota", 429, "RESOURCE_EXHAUSTED"),
    ("gemini", "overloaded", True, "overloaded", 503, "UNAVAILABLE"),
    ("gemini", "server_error", False, "busy", 500, "INTERNAL"),
    ("gemini", "context_too_long", False, "context_too_long", 400, "INVALID_ARGUMENT"),
    ("gemini", "bad_key", False, "key", 400, "INVALID_ARGUMENT"),
    ("gemini", "unknown_model", False, "model", 404, "NOT_FOUND"),
    ("gemini", "permission", False, "permission", 403, "PERMISSION_DENIED"),
    ("gemini", "mid_stream_error", True, "overloaded", 503, "UNAVAILABLE"),
    ("gemini", "cut", True, "stream_cut", None, None),
    ("ollama", "busy", False, "busy", 503, None),
    ("ollama", "server_error", True, "busy", 500, None),
    ("ollama", "context_too_long", False, "context_too_long", 400, None),
    ("ollama", "unknown_model", True, "model", 404, None),
    ("ollama", "tools", False, "tools", 400, None),
    ("ollama", "mid_stream_error", True, "busy", 200, None),
    ("ollama", "cut", True, "stream_cut", None, None),
    ("ollama", "drop", True, "no_connection", None, None),
]


def ask(provider):
    return provider.complete(ChatRequest(model=provider.model, messages=[Message(role="user", content="hi")],
                                         tools=[], max_output_tokens=32))


@pytest.mark.parametrize(("preset", "fault", "stream", "code", "status", "provider_code"), MATRIX,
                         ids=[f"{m[0]}-{m[1]}" for m in MATRIX])
def test_each_fault_has_its_code_kind_and_the_providers_words(preset_provider, preset, fault, stream, code, status,
                                                              provider_code):
    fake, provider = preset_provider(preset, stream=stream, retry=ONE_TRY)
    fake.add(Fault(fault))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    error = caught.value
    assert (error.code, error.kind, error.status, error.provider_code) == (code, CODES[code], status, provider_code)
    if status is None:  # no answer from the provider: nothing in its words
        assert error.provider_message is None and error.provider_code is None
    else:
        assert error.provider_message and len(error.provider_message) <= 300
    [attempt] = provider.attempts
    assert (attempt.code, attempt.status, attempt.provider_code, attempt.message) == (
        code, status, provider_code, error.provider_message)
    assert attempt.request_sha256 == provider.last_request_sha256


@pytest.mark.parametrize("preset", ["anthropic", "gemini"])
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_refusal_in_a_normal_answer_is_a_graded_stop_reason(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Fault("refusal"))
    assert ask(provider).stop_reason == "refusal"


@pytest.mark.parametrize("preset", ["openai", "openrouter", "anthropic", "gemini", "ollama"])
@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_a_cut_off_answer_is_returned_with_stop_reason_max_tokens(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Answer(text="It was the best of", stop="max_tokens"))
    response = ask(provider)
    assert (response.stop_reason, response.message.content) == ("max_tokens", "It was the best of")


@pytest.mark.parametrize("preset", ["openai", "openrouter", "anthropic", "gemini", "ollama"])
def test_a_key_echoed_by_the_provider_never_appears_in_errors_or_attempts(preset_provider, preset):
    fake, provider = preset_provider(preset, retry=ONE_TRY)
    fake.add(Fault("bad_key", echo_key=True))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    seen = " ".join([str(caught.value), repr(caught.value.to_dict()),
                     json.dumps([a.to_dict() for a in provider.attempts])])
    assert caught.value.code == "key"
    assert PLANTED_KEY not in seen
    assert "[key]" in seen


def test_local_paths_and_key_parameters_are_redacted_from_provider_messages(preset_provider, tmp_path):
    fake, provider = preset_provider("openai", retry=ONE_TRY)
    text = (f"failed to open {os.getcwd()}/secret.txt and {tmp_path}/x.json; "
            f"see https://example.test/v1?key={PLANTED_KEY[:12]}xyz&x=1 " + "y" * 500)
    fake.add(Raw(status=400, headers={"content-type": "application/json"},
                 body=json.dumps({"error": {"message": text, "type": "invalid_request_error"}}).encode()))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    message = caught.value.provider_message
    assert len(message) <= 300
    assert os.getcwd() not in message and str(tmp_path) not in message and "/tmp/" not in message
    assert "key=[key]" in message


def test_an_unknown_fault_status_still_classifies(preset_provider):
    fake, provider = preset_provider("openai", retry=ONE_TRY)
    fake.add(Raw(status=418, headers={"content-type": "text/plain"}, body=b"I'm a teapot"))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.status, caught.value.provider_message) == ("internal", 418,
                                                                                      "I'm a teapot")


def test_a_service_that_does_not_answer_in_time_is_a_timeout(preset_provider):
    fake, provider = preset_provider("anthropic", retry=ONE_TRY, timeout=0.2)
    fake.add(Raw(status=200, body=b"{}", delay=1.0))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert (caught.value.code, caught.value.kind, caught.value.status, caught.value.provider_message) == (
        "timeout", "temporary", None, None)


ENV_VARS = {"openai": "OPENAI_API_KEY", "openrouter": "OPENROUTER_API_KEY", "anthropic": "ANTHROPIC_API_KEY",
            "gemini": "GEMINI_API_KEY"}


@pytest.mark.parametrize("preset", sorted(ENV_VARS))
def test_a_key_planted_in_the_environment_never_reaches_any_record(preset_provider, monkeypatch, preset):
    import keyring
    from keyring.backends.fail import Keyring as NoKeyring

    previous = keyring.get_keyring()
    keyring.set_keyring(NoKeyring())
    monkeypatch.setenv(ENV_VARS[preset], PLANTED_KEY)
    try:
        fake, provider = preset_provider(preset, key=None)
    finally:
        keyring.set_keyring(previous)
    fake.add(Fault("rate_limit", retry_after=1), Fault("bad_key", echo_key=True))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    assert fake.keys_seen == [PLANTED_KEY, PLANTED_KEY]  # it was used ...
    records = [str(caught.value), repr(caught.value.to_dict()), repr(caught.value.headers),
               json.dumps([a.to_dict() for a in provider.attempts]), provider.last_request_body.decode(),
               json.dumps(provider.usage_total.to_dict()), json.dumps(provider.last_response_headers)]
    records += [r.path + json.dumps(r.headers) + r.body.decode() for r in fake.requests]
    assert PLANTED_KEY not in "\n".join(records)  # ... and is nowhere in what we keep


OLLAMA_TOOL_PARSE = "error parsing tool call: raw='{\"name\": \"search_contacts\", \"arguments\": {\"query\": \"Jo' err=unexpected end of JSON input"


@pytest.mark.parametrize(("preset", "body"), [
    ("ollama", {"error": OLLAMA_TOOL_PARSE}),
    ("openai-compatible", {"error": {"message": OLLAMA_TOOL_PARSE, "type": "api_error", "param": None,
                                     "code": None}}),  # Ollama's /v1 endpoint
], ids=["ollama", "openai-compatible"])
def test_a_server_that_cannot_parse_the_models_tool_call_is_an_unreadable_tool_call_not_busy(preset_provider, preset,
                                                                                             body):
    fake, provider = preset_provider(preset, stream=False)
    fake.add(Raw(status=500, headers={"content-type": "application/json"}, body=json.dumps(body).encode()))
    with pytest.raises(ProviderError) as caught:
        ask(provider)
    error = caught.value
    assert (error.code, error.kind, error.status) == ("tool_call_unreadable", "format", 500)
    assert "error parsing tool call" in error.provider_message
    assert len(provider.attempts) == 1  # one answer's format problem: the runner keeps the cell, the route goes on
