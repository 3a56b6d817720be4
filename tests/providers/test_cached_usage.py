"""Cached input tokens (issue 29, item 2): each provider's report of them reaches the record and the cost.

OpenAI (and OpenRouter) report ``usage.prompt_tokens_details.cached_tokens`` inside the prompt
tokens; Anthropic ``cache_read_input_tokens`` and ``cache_creation_input_tokens`` beside its
``input_tokens``; Gemini ``cachedContentTokenCount`` inside ``promptTokenCount``. Each fake speaks
its dialect over a real socket; the usage the loop records is measured as the tables measure a
record, and priced with a cached-input price.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.tables.lines import measured
from pytest_assistant_eval.tables.prices import Price, Prices
from pytest_assistant_eval.tabular.usage import count_usage
from tests.providers.fakes import Answer

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])


def request(model: str) -> ChatRequest:
    return ChatRequest(model=model, messages=[Message(role="system", content="Be brief."),
                                              Message(role="user", content="hi")],
                       tools=[], max_output_tokens=100)


@STREAMS
@pytest.mark.parametrize("preset, written", [("openai", 0), ("openrouter", 0), ("anthropic", 20), ("gemini", 0)])
def test_cached_input_tokens_reach_the_record_and_are_priced_at_the_cached_price(preset_provider, preset, written,
                                                                                 stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Answer(text="done", usage=(1_000, 50), cached=(600, written)))
    response = provider.complete(request(provider.model))
    usage = response.usage
    assert (usage.input_tokens, usage.cached_input_tokens, usage.output_tokens) == (1_000, 600, 50)
    assert (usage.cache_write_tokens or 0) == written
    record = {"requests": [{"usage": usage.to_dict()}, {"usage": usage.to_dict()}]}  # as the loop records them
    counted = count_usage([measured(record)])
    assert (counted.input_tokens, counted.cached_input_tokens, counted.cache_write_tokens) == (2_000, 1_200,
                                                                                               2 * written)
    key = f"{preset}:{provider.model}"
    prices = Prices(Path("prices.yaml"), "USD", {key: Price(2.0, 8.0, cached_input_per_million=0.5,
                                                            cache_write_per_million=2.5)})
    plain = 2_000 - 1_200 - 2 * written
    assert prices.cost_of(key, counted) == pytest.approx((plain * 2.0 + 1_200 * 0.5 + 2 * written * 2.5
                                                          + 100 * 8.0) / 1_000_000)
    # without a cached price a cached token costs the input price: never nothing
    full = Prices(Path("prices.yaml"), "USD", {key: Price(2.0, 8.0)})
    assert full.cost_of(key, counted) == pytest.approx((2_000 * 2.0 + 100 * 8.0) / 1_000_000)


def test_a_prices_file_of_format_2_gives_cached_prices_and_format_1_may_not(tmp_path: Path):
    from pytest_assistant_eval.tables.prices import PricesError, load_prices

    path = tmp_path / "prices.yaml"
    path.write_text("format: assistant-eval.prices/2\nmodels:\n"
                    "  anthropic:claude-x: {input: 3, output: 15, cached_input: 0.3, cache_write: 3.75}\n"
                    "  openai:gpt-x: {input: 1, output: 4}\n", encoding="utf-8")
    prices = load_prices(path)
    assert prices.models["anthropic:claude-x"] == Price(3.0, 15.0, 0.3, 3.75)
    assert prices.models["openai:gpt-x"].cached_input_per_million is None
    path.write_text("format: assistant-eval.prices/1\nmodels:\n"
                    "  openai:gpt-x: {input: 1, output: 4, cached_input: 0.5}\n", encoding="utf-8")
    with pytest.raises(PricesError, match="unknown key 'cached_input'"):
        load_prices(path)
