"""Keys, data notices, redaction and the preset factory."""

from __future__ import annotations

import os

import keyring
import pytest
from keyring.backend import KeyringBackend

from pytest_assistant_eval.providers.errors import (
    ConfigurationError,
    MissingKey,
    NoticeRequired,
    UnknownPreset,
    UnsupportedMode,
)
from pytest_assistant_eval.providers.keys import get_key
from pytest_assistant_eval.providers.notices import check_notice
from pytest_assistant_eval.providers.presets import KNOWN_PRESETS, make_provider, route
from pytest_assistant_eval.redact import redact, redact_clip


class MemoryKeyring(KeyringBackend):
    priority = 1

    def __init__(self):
        super().__init__()
        self.store = {}

    def get_password(self, service, username):
        return self.store.get((service, username))

    def set_password(self, service, username, password):
        self.store[(service, username)] = password

    def delete_password(self, service, username):
        self.store.pop((service, username), None)


@pytest.fixture
def memory_keyring():
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


# -- keys ----------------------------------------------------------------------------------


def test_the_keyring_entry_comes_first(memory_keyring):
    memory_keyring.set_password("assistant-eval", "anthropic", "from-keyring")
    assert get_key("anthropic", environ={"ANTHROPIC_API_KEY": "from-env"}).reveal() == "from-keyring"


@pytest.mark.parametrize(("preset", "variable"), [("openai", "OPENAI_API_KEY"), ("openrouter", "OPENROUTER_API_KEY"),
                                                  ("anthropic", "ANTHROPIC_API_KEY"), ("gemini", "GEMINI_API_KEY"),
                                                  ("gemini", "GOOGLE_API_KEY")])
def test_the_providers_environment_variable_is_the_fallback(memory_keyring, preset, variable):
    assert get_key(preset, environ={variable: "from-env"}).reveal() == "from-env"


def test_a_missing_key_names_the_keyring_entry_and_the_variables(memory_keyring):
    with pytest.raises(MissingKey) as caught:
        get_key("gemini", environ={})
    message = str(caught.value)
    assert "'assistant-eval'" in message and "'gemini'" in message
    assert "GEMINI_API_KEY" in message and "GOOGLE_API_KEY" in message
    assert caught.value.code == "key" and caught.value.kind == "fatal"


@pytest.mark.parametrize("preset", ["ollama", "scripted", "openai-compatible"])
def test_local_presets_need_no_key(memory_keyring, preset):
    assert get_key(preset, environ={}) is None


def test_make_provider_reads_the_key_without_ever_storing_it_in_a_record(memory_keyring, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment-123456")
    provider = make_provider("openai", "gpt-test")
    assert list(provider.secrets.needles()) == ["sk-from-environment-123456"]
    assert "sk-from-environment" not in repr(provider.usage_total) + repr(provider.attempts)
    provider.close()


# -- notices -------------------------------------------------------------------------------


@pytest.mark.parametrize("preset", ["openai", "anthropic", "gemini", "openrouter"])
def test_a_remote_route_needs_the_notice_accepted(preset):
    with pytest.raises(NoticeRequired, match="--accept-data-notice"):
        check_notice(preset, "m", None, accepted=False, world_verified=True)
    [notice] = check_notice(preset, "m", None, accepted=True, world_verified=True)
    assert notice.route == preset and "--accept-data-notice" in notice.text


def test_acceptance_only_counts_for_a_verified_world():
    with pytest.raises(NoticeRequired, match="verified grounding world"):
        check_notice("anthropic", "m", None, accepted=True, world_verified=False)


def test_a_local_ollama_model_needs_no_notice():
    assert check_notice("ollama", "llama3", "http://127.0.0.1:11434", accepted=False, world_verified=False) == []
    assert check_notice("openai-compatible", "m", "http://localhost:8000/v1", accepted=False,
                        world_verified=False) == []


@pytest.mark.parametrize(("model", "forwarded"), [("gpt-oss:120b-cloud", None), ("llama3", "ollama.com")])
def test_an_ollama_model_forwarded_to_a_cloud_needs_that_routes_notice(model, forwarded):
    with pytest.raises(NoticeRequired):
        check_notice("ollama", model, "http://127.0.0.1:11434", accepted=False, world_verified=True,
                     forwarded_to=forwarded)
    notices = check_notice("ollama", model, "http://127.0.0.1:11434", accepted=True, world_verified=True,
                           forwarded_to=forwarded)
    assert [n.route for n in notices] == ["ollama-cloud"]


# -- redaction ------------------------------------------------------------------------------


def test_redact_removes_secrets_tokens_key_parameters_and_local_paths(tmp_path):
    home = os.path.expanduser("~")
    text = (f"key sk-abcdefghijklmnopqrstuvwx and my-secret-value-9x7Q, Authorization: Bearer abc.def-ghi, "
            f"https://x.test/v1?alt=sse&key=AIzaSyFAKE123 at {home}/projects/a.txt, {tmp_path}/b and "
            f"{os.getcwd()}/c.py and /tmp/other/d")
    out = redact(text, ["my-secret-value-9x7Q"])  # a phrase of words alone is a placeholder (issue 31 B)
    for gone in ("sk-abcdefghijklmnop", "my-secret-value", "abc.def-ghi", "AIzaSyFAKE123", home + "/",
                 str(tmp_path), os.getcwd(), "/tmp/other"):
        assert gone not in out
    assert "https://x.test/v1?alt=sse&key=[key]" in out


def test_redact_keeps_ordinary_text_and_urls():
    text = "Wait...okay. See https://ai.google.dev/gemini-api/docs/rate-limits (limit 3/min)."
    assert redact(text) == text


def test_redact_clip_cuts_after_redacting():
    clipped = redact_clip("a" * 290 + " sk-abcdefghijklmnopqrstuvwx" + "b" * 50)
    assert len(clipped) <= 300 and "sk-abc" not in clipped


# -- presets ----------------------------------------------------------------------------------


def test_an_unknown_preset_lists_the_known_ones():
    with pytest.raises(UnknownPreset) as caught:
        make_provider("opanai", "m", key="k")
    for name in ("openai", "openrouter", "anthropic", "gemini", "ollama", "openai-compatible", "scripted"):
        assert name in str(caught.value)
    assert set(KNOWN_PRESETS) >= {"openai", "scripted"}


def test_openai_compatible_needs_an_address():
    with pytest.raises(ConfigurationError, match="--base-url"):
        make_provider("openai-compatible", "m", key="k")


def test_routes_are_preset_and_address():
    assert route("openai") == "openai@https://api.openai.com/v1"
    assert route("ollama", "http://127.0.0.1:11434/") == "ollama@http://127.0.0.1:11434"
    assert route("openai-compatible", "http://127.0.0.1:8000/v1") == "openai-compatible@http://127.0.0.1:8000/v1"


def test_scripted_is_imported_lazily_from_the_runners_module():
    try:
        import pytest_assistant_eval.suites.calibration.reference  # noqa: F401
    except ImportError:
        with pytest.raises(ConfigurationError, match="scripted"):
            make_provider("scripted", "oracle")
    else:
        provider = make_provider("scripted", "oracle")
        assert hasattr(provider, "complete")


def test_a_preset_that_cannot_answer_in_a_mode_refuses_clearly():
    from pytest_assistant_eval.providers.ollama import OllamaProvider

    class StreamOnly(OllamaProvider):
        can_whole = False

    with pytest.raises(UnsupportedMode, match="only stream"):
        StreamOnly("m", base_url="http://127.0.0.1:1", stream=False)


def test_provider_errors_survive_pickling_between_processes():
    import pickle

    from pytest_assistant_eval.providers.errors import BudgetUsed, make_error

    error = make_error("rate_limit", status=429, provider_code="rate_limit_exceeded", provider_message="slow down",
                       retry_after=2.0)
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.code, copy.status, copy.retry_after, str(copy)) == (
        type(error), "rate_limit", 429, 2.0, str(error))
    budget = pickle.loads(pickle.dumps(BudgetUsed(local=True)))
    assert str(budget) == "Daily request budget used. Run again with --resume tomorrow."


def test_openai_compatible_servers_get_max_tokens(preset_provider):
    from pytest_assistant_eval.messages import ChatRequest, Message
    from tests.providers.fakes import Answer

    fake, provider = preset_provider("openai-compatible", stream=False)
    fake.add(Answer(text="ok"))
    provider.complete(ChatRequest(model="local-model", messages=[Message(role="user", content="x")], tools=[],
                                  max_output_tokens=9))
    body = fake.requests[0].json()
    assert body["max_tokens"] == 9 and "tools" not in body and body["stream"] is False
    assert provider.route == f"openai-compatible@{fake.url}/v1"


def test_make_pacer_gives_free_models_their_daily_budget_and_starting_interval(tmp_path):
    from pytest_assistant_eval.providers.pacing import NoPacer
    from pytest_assistant_eval.providers.presets import make_pacer

    free = make_pacer(tmp_path / "ledger.json", "openrouter", "meta/llama:free")
    assert (free.max_requests_per_day, free.start_interval, free.local) == (45, 3.0, False)
    assert free.route == "openrouter@https://openrouter.ai/api/v1"
    assert make_pacer(tmp_path / "l.json", "openrouter", "meta/llama", max_requests_per_day=7).max_requests_per_day == 7
    assert make_pacer(tmp_path / "l.json", "openai", "gpt").max_requests_per_day is None
    assert make_pacer(tmp_path / "l.json", "ollama", "llama3").local is True
    assert isinstance(make_pacer(tmp_path / "l.json", "scripted", "oracle"), NoPacer)


def test_gemma_3_gets_its_instructions_in_the_first_user_turn(preset_provider):
    from pytest_assistant_eval.messages import ChatRequest, Message
    from tests.providers.fakes import Answer

    fake, provider = preset_provider("gemini", model="gemma-3-27b-it")
    fake.add(Answer(text="ok"))
    provider.complete(ChatRequest(model="gemma-3-27b-it", messages=[Message(role="system", content="Be brief."),
                                                                   Message(role="user", content="hi")],
                                  tools=[], max_output_tokens=9))
    body = fake.requests[0].json()
    assert "systemInstruction" not in body
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Be brief."}, {"text": "hi"}]}]


@pytest.mark.parametrize("preset", ["openai", "openrouter", "anthropic", "gemini", "ollama"])
def test_every_preset_satisfies_the_provider_protocol(preset):
    from pytest_assistant_eval.providers.base import Provider

    provider = make_provider(preset, "m", key="k")
    try:
        assert isinstance(provider, Provider)
        assert (provider.preset, provider.model) == (preset, "m")
        assert provider.usage_total.label == f"{preset} (calibration)"
    finally:
        provider.close()


def test_an_agentdojo_runs_notice_names_agentdojos_data_not_our_world():
    """A notice says which data is sent: an AgentDojo run sends AgentDojo's suites, not our world."""
    [ours] = check_notice("openai", "m", None, accepted=True, world_verified=True)
    from pytest_assistant_eval.suites.agentdojo.suite import DATA_SOURCE

    [theirs] = check_notice("openai", "m", None, accepted=True, world_verified=True, data_source=DATA_SOURCE)
    assert "grounding world" in ours.text and "AgentDojo" not in ours.text
    assert DATA_SOURCE in theirs.text and "AgentDojo" in theirs.text and "grounding world" not in theirs.text
    [local] = check_notice("openai-compatible", "m", "https://example.org/v1", accepted=True, world_verified=True)
    assert "the server at https://example.org/v1" in local.text and "{" not in local.text
