"""The fakes answer the official SDKs too, so they cannot drift into a dialect only our client speaks."""

from __future__ import annotations

import json

import pytest

from tests.providers.fakes import Answer, Call, Fault
from tests.providers.fakes.anthropic_fake import AnthropicFake
from tests.providers.fakes.gemini_fake import GeminiFake
from tests.providers.fakes.ollama_fake import OllamaFake
from tests.providers.fakes.openai_fake import OpenAIFake, OpenRouterFake

TOOL_SCHEMA = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
TEXT = Answer(text="Ana's phone number is 555-0101.")
CALL = Answer(calls=[Call("search_contacts", {"query": "Ana"})])
STREAMS = pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])


# -- OpenAI and OpenRouter -------------------------------------------------------------------


def _openai_answer(fake, stream, tools):
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(api_key="sdk-key", base_url=fake.url + "/v1", max_retries=0)
    kwargs = {}
    if tools:
        kwargs["tools"] = [{"type": "function", "function": {"name": "search_contacts", "description": "Find",
                                                             "parameters": TOOL_SCHEMA}}]
    messages = [{"role": "user", "content": "What is Ana's number?"}]
    if not stream:
        message = client.chat.completions.create(model="gpt-test", messages=messages, **kwargs).choices[0].message
        calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls or []]
        return message.content, calls
    text, args, names = [], {}, {}
    for chunk in client.chat.completions.create(model="gpt-test", messages=messages, stream=True, **kwargs):
        for choice in chunk.choices:
            text.append(choice.delta.content or "")
            for frag in choice.delta.tool_calls or []:
                if frag.function.name:
                    names[frag.index] = frag.function.name
                args[frag.index] = args.get(frag.index, "") + (frag.function.arguments or "")
    return "".join(text) or None, [(names[i], json.loads(args[i])) for i in sorted(args)]


@STREAMS
@pytest.mark.parametrize("fake_class", [OpenAIFake, OpenRouterFake], ids=["openai", "openrouter"])
def test_openai_sdk_reads_a_plain_answer_and_a_tool_call(make_fake, fake_class, stream):
    fake = make_fake(fake_class)
    fake.add(TEXT, CALL)
    assert _openai_answer(fake, stream, tools=False) == (TEXT.text, [])
    assert _openai_answer(fake, stream, tools=True) == (None, [("search_contacts", {"query": "Ana"})])


def test_openai_sdk_sees_the_rate_limit_fault_as_a_rate_limit(make_fake):
    openai = pytest.importorskip("openai")
    fake = make_fake(OpenAIFake)
    fake.add(Fault("rate_limit", retry_after=1))
    client = openai.OpenAI(api_key="sdk-key", base_url=fake.url + "/v1", max_retries=0)
    with pytest.raises(openai.RateLimitError):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])


# -- Anthropic --------------------------------------------------------------------------------


def _anthropic_answer(fake, stream, tools):
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(api_key="sdk-key", base_url=fake.url, max_retries=0)
    kwargs = dict(model="claude-test", max_tokens=128, messages=[{"role": "user", "content": "What is Ana's number?"}])
    if tools:
        kwargs["tools"] = [{"name": "search_contacts", "description": "Find", "input_schema": TOOL_SCHEMA}]
    if stream:
        with client.messages.stream(**kwargs) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(**kwargs)
    text = "".join(b.text for b in message.content if b.type == "text") or None
    calls = [(b.name, b.input) for b in message.content if b.type == "tool_use"]
    return text, calls, message.stop_reason


@STREAMS
def test_anthropic_sdk_reads_a_plain_answer_and_a_tool_call(make_fake, stream):
    fake = make_fake(AnthropicFake)
    fake.add(TEXT, CALL)
    assert _anthropic_answer(fake, stream, tools=False) == (TEXT.text, [], "end_turn")
    assert _anthropic_answer(fake, stream, tools=True) == (None, [("search_contacts", {"query": "Ana"})], "tool_use")


def test_anthropic_sdk_sees_the_overloaded_fault(make_fake):
    anthropic = pytest.importorskip("anthropic")
    fake = make_fake(AnthropicFake)
    fake.add(Fault("overloaded"))
    client = anthropic.Anthropic(api_key="sdk-key", base_url=fake.url, max_retries=0)
    with pytest.raises(anthropic.APIStatusError) as caught:
        client.messages.create(model="m", max_tokens=8, messages=[{"role": "user", "content": "x"}])
    assert caught.value.status_code == 529


# -- Gemini -----------------------------------------------------------------------------------


def _gemini_answer(fake, stream, tools):
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="sdk-key", http_options=types.HttpOptions(base_url=fake.url))
    config = None
    if tools:
        config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[
            types.FunctionDeclaration(name="search_contacts", description="Find", parameters_json_schema=TOOL_SCHEMA)])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    if stream:
        text, calls = [], []
        for chunk in client.models.generate_content_stream(model="gemini-test", contents="What is Ana's number?",
                                                           config=config):
            for part in (chunk.candidates[0].content.parts or []):
                if part.text:
                    text.append(part.text)
                if part.function_call:
                    calls.append((part.function_call.name, dict(part.function_call.args)))
        return "".join(text) or None, calls
    response = client.models.generate_content(model="gemini-test", contents="What is Ana's number?", config=config)
    calls = [(c.name, dict(c.args)) for c in response.function_calls or []]
    return (response.text if not calls else None), calls


@STREAMS
def test_google_genai_sdk_reads_a_plain_answer_and_a_tool_call(make_fake, stream):
    fake = make_fake(GeminiFake)
    fake.add(TEXT, CALL)
    assert _gemini_answer(fake, stream, tools=False) == (TEXT.text, [])
    assert _gemini_answer(fake, stream, tools=True) == (None, [("search_contacts", {"query": "Ana"})])
    assert all("/models/gemini-test:" in r.path for r in fake.requests)


def test_google_genai_sdk_sees_the_quota_fault_as_resource_exhausted(make_fake):
    pytest.importorskip("google.genai")
    from google import genai
    from google.genai import errors, types

    fake = make_fake(GeminiFake)
    fake.add(Fault("tpm_input"))
    client = genai.Client(api_key="sdk-key", http_options=types.HttpOptions(base_url=fake.url))
    with pytest.raises(errors.ClientError) as caught:
        client.models.generate_content(model="gemini-test", contents="x")
    assert caught.value.code == 429 and caught.value.status == "RESOURCE_EXHAUSTED"


# -- Ollama -----------------------------------------------------------------------------------


def _ollama_answer(fake, stream, tools):
    ollama = pytest.importorskip("ollama")
    client = ollama.Client(host=fake.url)
    kwargs = dict(model="llama-test", messages=[{"role": "user", "content": "What is Ana's number?"}])
    if tools:
        kwargs["tools"] = [{"type": "function", "function": {"name": "search_contacts", "description": "Find",
                                                             "parameters": TOOL_SCHEMA}}]
    if stream:
        text, calls = [], []
        for chunk in client.chat(stream=True, **kwargs):
            text.append(chunk.message.content or "")
            calls += [(c.function.name, dict(c.function.arguments)) for c in chunk.message.tool_calls or []]
        return "".join(text) or None, calls
    message = client.chat(stream=False, **kwargs).message
    return message.content or None, [(c.function.name, dict(c.function.arguments)) for c in message.tool_calls or []]


@STREAMS
def test_ollama_sdk_reads_a_plain_answer_and_a_tool_call(make_fake, stream):
    fake = make_fake(OllamaFake)
    fake.add(TEXT, CALL)
    assert _ollama_answer(fake, stream, tools=False) == (TEXT.text, [])
    assert _ollama_answer(fake, stream, tools=True) == (None, [("search_contacts", {"query": "Ana"})])


def test_ollama_sdk_reads_show_and_ps_from_the_fake(make_fake):
    ollama = pytest.importorskip("ollama")
    fake = make_fake(OllamaFake, models={"llama-test": {"trained_ctx": 65536, "size": 100, "vram": 100}})
    client = ollama.Client(host=fake.url)
    client.chat(model="llama-test", messages=[], options={"num_ctx": 8192})
    assert client.show("llama-test").modelinfo["llama.context_length"] == 65536
    [running] = client.ps().models
    assert (running.model, running.size, running.size_vram) == ("llama-test", 100, 100)
