"""Generation settings on each provider's wire (issue 33): what each body carries, against the fakes."""

from __future__ import annotations

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.generation import parse_settings, provider_options
from tests.providers.fakes import Answer


def _sent(preset_provider, preset: str, **values):
    settings = parse_settings(values)
    fake, provider = preset_provider(preset, stream=False, options=provider_options(preset, settings))
    fake.add(Answer(text="ok"))
    request = ChatRequest(model=provider.model, messages=[Message(role="system", content="Be brief."),
                                                          Message(role="user", content="hi")],
                          tools=[], max_output_tokens=20000)
    assert provider.complete(request).message.content == "ok"
    return fake.requests[-1].json()


@pytest.mark.parametrize("preset", ["openai", "openai-compatible"])
def test_openai_bodies_carry_temperature_top_p_seed_and_reasoning_effort(preset_provider, preset):
    body = _sent(preset_provider, preset, temperature=0.2, top_p=0.9, seed=7, reasoning_effort="low")
    assert (body["temperature"], body["top_p"], body["seed"], body["reasoning_effort"]) == (0.2, 0.9, 7, "low")


def test_openrouter_asks_reasoning_effort_in_its_reasoning_object(preset_provider):
    body = _sent(preset_provider, "openrouter", temperature=0.7, reasoning_effort="high")
    assert body["temperature"] == 0.7 and body["reasoning"] == {"effort": "high"}
    assert "reasoning_effort" not in body


def test_anthropic_maps_reasoning_effort_to_a_thinking_budget(preset_provider):
    body = _sent(preset_provider, "anthropic", top_p=0.95, reasoning_effort="medium", max_output_tokens=12000)
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["top_p"] == 0.95 and "temperature" not in body


def test_gemini_maps_them_to_its_generation_config(preset_provider):
    body = _sent(preset_provider, "gemini", temperature=0.3, top_p=0.8, seed=11, reasoning_effort="low")
    config = body["generationConfig"]
    assert (config["temperature"], config["topP"], config["seed"]) == (0.3, 0.8, 11)
    assert config["thinkingConfig"] == {"thinkingBudget": 2048}


def test_ollama_puts_sampling_in_its_options_and_effort_in_think(preset_provider):
    body = _sent(preset_provider, "ollama", temperature=0.1, top_p=0.5, seed=3, reasoning_effort="high")
    assert {k: body["options"][k] for k in ("temperature", "top_p", "seed")} == {"temperature": 0.1, "top_p": 0.5,
                                                                                  "seed": 3}
    assert body["think"] == "high"


def test_without_settings_no_body_names_any_of_them(preset_provider):
    body = _sent(preset_provider, "openai")
    assert not {"temperature", "top_p", "seed", "reasoning_effort", "reasoning"} & set(body)
