"""Which fake serves which preset, at which address, with which model; and the planted key."""

from __future__ import annotations

from tests.providers.fakes.anthropic_fake import AnthropicFake
from tests.providers.fakes.gemini_fake import GeminiFake
from tests.providers.fakes.ollama_fake import OllamaFake
from tests.providers.fakes.openai_fake import OpenAIFake, OpenRouterFake

#: A key that must never appear in anything the provider layer keeps or raises.
PLANTED_KEY = "sk-planted-0123456789abcdefSECRET"

#: preset -> (fake server class, address suffix of the preset on that fake, model)
PRESET_FAKES = {
    "openai": (OpenAIFake, "/v1", "gpt-test"),
    "openrouter": (OpenRouterFake, "/api/v1", "vendor/model-test:free"),
    "openai-compatible": (OpenAIFake, "/v1", "local-model"),
    "anthropic": (AnthropicFake, "", "claude-test"),
    "gemini": (GeminiFake, "", "gemini-test"),
    "ollama": (OllamaFake, "", "llama-test"),
}
