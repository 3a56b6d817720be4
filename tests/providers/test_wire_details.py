"""Wire-format details: reasoning kept apart, signatures sent back, unreadable arguments, bodies."""

from __future__ import annotations

import pytest

from pytest_assistant_eval.messages import ChatRequest, Message, ToolDefinition
from pytest_assistant_eval.providers.http import split_reasoning
from pytest_assistant_eval.providers.ollama import applicable, probe
from pytest_assistant_eval.providers.errors import ProviderError
from tests.providers.fakes import Answer, Call, Fault
from tests.providers.fakes.ollama_fake import OllamaFake

STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
SEARCH = ToolDefinition("search", "Search", {"type": "object", "properties": {"query": {"type": "string"}}})


def request(model, messages=None, tool_choice="auto"):
    return ChatRequest(model=model, messages=messages or [Message(role="system", content="Be brief."),
                                                          Message(role="user", content="hi")],
                       tools=[SEARCH], max_output_tokens=100, tool_choice=tool_choice)


# -- unreadable tool calls -------------------------------------------------------------------


@STREAMS
@pytest.mark.parametrize("preset", ["openai", "openrouter", "anthropic", "ollama"])
def test_unreadable_tool_call_arguments_become_a_parse_error_not_an_exception(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Answer(calls=[Call("search", '{"query": "Ana')]))
    response = provider.complete(request(provider.model))
    [call] = response.message.tool_calls
    assert (call.name, call.arguments, call.raw_arguments) == ("search", {}, '{"query": "Ana')
    assert "not valid JSON" in call.parse_error
    assert response.stop_reason == "tool_calls"


@STREAMS
def test_gemini_malformed_function_call_becomes_a_parse_error(preset_provider, stream):
    fake, provider = preset_provider("gemini", stream=stream)
    fake.add(Fault("malformed_call"), Answer(text="done"))
    first = provider.complete(request(provider.model))
    [call] = first.message.tool_calls
    assert call.parse_error and call.raw_arguments.startswith("Malformed function call")
    # The loop answers it with a tool error; the next request must still be well formed.
    messages = request(provider.model).messages + [
        first.message, Message(role="tool", tool_call_id=call.id, name=call.name, content="unreadable call")]
    assert provider.complete(request(provider.model, messages)).message.content == "done"
    sent = fake.requests[1].json()["contents"]
    assert sent[-1] == {"role": "user", "parts": [{"text": "(tool error) unreadable call"}]}


def test_a_json_array_as_arguments_is_unreadable_too(preset_provider):
    fake, provider = preset_provider("openai")
    fake.add(Answer(calls=[Call("search", "[1, 2]")]))
    [call] = provider.complete(request(provider.model)).message.tool_calls
    assert call.parse_error == "arguments are a JSON list, not an object"


# -- reasoning --------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "answer", "reasoning"), [
    ("<think>plan it</think>The answer.", "The answer.", "plan it"),
    ("<thought>hmm</thought>\nYes.", "Yes.", "hmm"),
    ("reasoning first</think>Final.", "Final.", "reasoning first"),
    ("<think>never closed", "", "never closed"),
    ("No reasoning here.", "No reasoning here.", None),
])
def test_split_reasoning(text, answer, reasoning):
    assert split_reasoning(text) == (answer, reasoning)


@STREAMS
@pytest.mark.parametrize("preset", ["openai", "openrouter", "ollama", "anthropic", "gemini"])
def test_think_blocks_in_the_text_are_kept_out_of_the_answer(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Answer(text="<think>check the contacts</think>Ana is in Berlin."))
    message = provider.complete(request(provider.model)).message
    assert (message.content, message.reasoning) == ("Ana is in Berlin.", "check the contacts")


@STREAMS
@pytest.mark.parametrize("preset", ["openrouter", "ollama", "anthropic", "gemini"])
def test_reasoning_fields_and_blocks_go_to_message_reasoning(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Answer(text="Berlin.", reasoning="The record says Berlin.", signature="SIG-1"))
    message = provider.complete(request(provider.model)).message
    assert (message.content, message.reasoning) == ("Berlin.", "The record says Berlin.")


@STREAMS
def test_anthropic_signed_thinking_blocks_are_sent_back_first_and_unchanged(preset_provider, stream):
    fake, provider = preset_provider("anthropic", stream=stream)
    fake.add(Answer(reasoning="Look it up.", signature="EqQBCkYI-signed", calls=[Call("search", {"query": "Ana"})]),
             Answer(text="Found."))
    first = provider.complete(request(provider.model))
    assert first.message.provider_data == {"anthropic": {"thinking": [
        {"type": "thinking", "thinking": "Look it up.", "signature": "EqQBCkYI-signed"}]}}
    call = first.message.tool_calls[0]
    messages = request(provider.model).messages + [
        first.message, Message(role="tool", tool_call_id=call.id, name="search", content="Ana: Berlin")]
    provider.complete(request(provider.model, messages))
    body = fake.requests[1].json()
    assert body["system"] == "Be brief."
    assert body["messages"][1]["content"][0] == {"type": "thinking", "thinking": "Look it up.",
                                                 "signature": "EqQBCkYI-signed"}
    assert body["messages"][1]["content"][1]["type"] == "tool_use"
    assert body["messages"][2] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": call.id, "content": "Ana: Berlin"}]}


@STREAMS
def test_gemini_thought_signatures_stay_on_their_part_when_sent_back(preset_provider, stream):
    fake, provider = preset_provider("gemini", stream=stream)
    fake.add(Answer(reasoning="Think.", signature="CiQBjz1rX-sig",
                    calls=[Call("search", {"query": "Ana"}), Call("search", {"query": "Bo"})]),
             Answer(text="Found both."))
    first = provider.complete(request(provider.model))
    assert [c.arguments for c in first.message.tool_calls] == [{"query": "Ana"}, {"query": "Bo"}]
    assert first.message.reasoning == "Think."
    messages = request(provider.model).messages + [first.message] + [
        Message(role="tool", tool_call_id=c.id, name=c.name, content=f"result {i}")
        for i, c in enumerate(first.message.tool_calls)]
    provider.complete(request(provider.model, messages))
    body = fake.requests[1].json()
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    model_turn = body["contents"][1]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][1] == {"functionCall": {"name": "search", "args": {"query": "Ana"}},
                                      "thoughtSignature": "CiQBjz1rX-sig"}
    assert "thoughtSignature" not in model_turn["parts"][2]
    assert body["contents"][2] == {"role": "user", "parts": [
        {"functionResponse": {"name": "search", "response": {"output": "result 0"}}},
        {"functionResponse": {"name": "search", "response": {"output": "result 1"}}}]}


@STREAMS
@pytest.mark.parametrize("preset", ["openai", "anthropic", "gemini", "ollama", "openrouter"])
def test_a_restored_conversation_gives_the_same_request_bytes(preset_provider, preset, stream):
    fake, provider = preset_provider(preset, stream=stream)
    fake.add(Answer(reasoning="r", signature="S", calls=[Call("search", {"query": "Ana"})]), Answer(text="a"),
             Answer(text="b"))
    first = provider.complete(request(provider.model))
    call = first.message.tool_calls[0]
    messages = request(provider.model).messages + [
        first.message, Message(role="tool", tool_call_id=call.id, name=call.name, content="x")]
    provider.complete(request(provider.model, messages))
    restored = [Message.from_dict(m.to_dict()) for m in messages]
    provider.complete(request(provider.model, restored))
    assert fake.requests[1].body == fake.requests[2].body


# -- bodies -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("relax", "expected"), [(False, "deny"), (True, "allow")])
def test_openrouter_asks_for_its_data_collection_policy(preset_provider, relax, expected):
    fake, provider = preset_provider("openrouter", relax_data_collection=relax)
    fake.add(Answer(text="ok"))
    provider.complete(request(provider.model))
    body = fake.requests[0].json()
    assert body["provider"] == {"data_collection": expected}
    assert body["max_tokens"] == 100 and "max_completion_tokens" not in body


def test_openai_body_shape(preset_provider):
    fake, provider = preset_provider("openai")
    fake.add(Answer(text="ok"))
    provider.complete(request(provider.model, tool_choice="required"))
    body = fake.requests[0].json()
    assert list(body) == ["model", "messages", "tools", "tool_choice", "max_completion_tokens", "stream",
                          "stream_options"]
    assert body["tool_choice"] == "required" and body["stream_options"] == {"include_usage": True}
    assert fake.requests[0].path == "/v1/chat/completions"


@pytest.mark.parametrize(("preset", "field", "expected"), [
    ("anthropic", ("tool_choice",), {"type": "any"}),
    ("gemini", ("toolConfig", "functionCallingConfig", "mode"), "ANY"),
])
def test_tool_choice_required_is_mapped(preset_provider, preset, field, expected):
    fake, provider = preset_provider(preset)
    fake.add(Answer(text="ok"))
    provider.complete(request(provider.model, tool_choice="required"))
    value = fake.requests[0].json()
    for key in field:
        value = value[key]
    assert value == expected


def test_ollama_sends_num_ctx_and_tool_results_by_name(preset_provider):
    fake, provider = preset_provider("ollama", options={"num_ctx": 16384, "keep_alive": "10m"})
    fake.add(Answer(calls=[Call("search", {"query": "Ana"})]), Answer(text="ok"))
    first = provider.complete(request(provider.model))
    call = first.message.tool_calls[0]
    provider.complete(request(provider.model, request(provider.model).messages + [
        first.message, Message(role="tool", tool_call_id=call.id, content="x")]))
    body = fake.requests[1].json()
    assert body["options"] == {"num_ctx": 16384, "num_predict": 100}
    assert body["keep_alive"] == "10m"
    assert body["messages"][-1] == {"role": "tool", "tool_name": "search", "content": "x"}
    assert fake.requests[1].path == "/api/chat"


def test_gemini_streams_use_alt_sse_and_send_the_key_in_a_header(preset_provider):
    fake, provider = preset_provider("gemini")
    fake.add(Answer(text="ok"))
    provider.complete(request(provider.model))
    assert fake.requests[0].path == "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    assert "x-goog-api-key" not in fake.requests[0].headers  # recorded without keys


# -- the Ollama probe -------------------------------------------------------------------------


MODELS = {
    "full": {"trained_ctx": 131072, "size": 6_000_000_000, "vram": 6_000_000_000},
    "short": {"trained_ctx": 131072, "max_ctx": 32768},
    "offload": {"trained_ctx": 131072, "size": 8_000_000_000, "vram": 6_000_000_000},
    "tiny-trained": {"trained_ctx": 8192},
    "gpt-oss:120b-cloud": {"remote_host": "https://ollama.com:443", "remote_model": "gpt-oss:120b"},
}


@pytest.fixture
def ollama(make_fake):
    return make_fake(OllamaFake, models=MODELS)


def test_probe_loads_the_variant_and_reads_its_context_and_memory(ollama):
    result = probe(ollama.url, "full", 65536)
    assert (result.context, result.size, result.size_vram, result.cpu_share, result.forwarded_to) == (
        65536, 6_000_000_000, 6_000_000_000, 0.0, None)
    assert ollama.requests[0].json() == {"model": "full", "messages": [], "stream": False, "keep_alive": "10m",
                                         "options": {"num_ctx": 65536}}
    assert [r.path for r in ollama.requests] == ["/api/chat", "/api/show", "/api/ps"]
    assert applicable(result, 65536, allow_cpu_offload=False) == (True, "")
    assert result.cpu_offload is None


def test_a_smaller_context_than_asked_is_never_applicable(ollama):
    result = probe(ollama.url, "short", 65536)
    ok, reason = applicable(result, 65536, allow_cpu_offload=True)
    assert not ok and reason.startswith("not applicable (context)") and "32768" in reason
    ok, _ = applicable(probe(ollama.url, "tiny-trained", 16384), 16384, allow_cpu_offload=True)
    assert not ok


def test_cpu_offload_is_applicable_only_when_allowed_and_then_recorded(ollama):
    result = probe(ollama.url, "offload", 16384)
    assert result.cpu_share == 0.25
    assert applicable(result, 16384, allow_cpu_offload=False)[0] is False
    assert applicable(result, 16384, allow_cpu_offload=True) == (True, "")
    assert result.cpu_offload == {"size": 8_000_000_000, "size_vram": 6_000_000_000, "cpu_share": 0.25}


def test_the_probe_sees_a_model_forwarded_to_a_cloud(ollama):
    result = probe(ollama.url, "gpt-oss:120b-cloud", 16384)
    assert result.forwarded_to == "https://ollama.com:443"


def test_probing_an_unknown_model_is_a_model_error(ollama):
    with pytest.raises(ProviderError) as caught:
        probe(ollama.url, "nope", 4096)
    assert caught.value.code == "model"
