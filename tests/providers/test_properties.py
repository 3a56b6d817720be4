"""Properties of the parsing and redaction helpers, and the transport seam (httpx.MockTransport)."""

from __future__ import annotations

import json

import httpx
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.messages import ChatRequest, Message
from pytest_assistant_eval.providers.http import iter_sse, parse_arguments, parse_duration
from pytest_assistant_eval.providers.presets import make_provider
from pytest_assistant_eval.redact import redact
from pytest_assistant_eval.secret import Secret

plain = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<>\r\n"), max_size=80)


@given(st.text(max_size=200))
def test_parse_arguments_never_raises_and_keeps_what_it_cannot_read(raw):
    arguments, raw_arguments, error = parse_arguments(raw)
    assert isinstance(arguments, dict)
    if error is not None:
        assert arguments == {} and raw_arguments == raw


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=8, max_size=40), plain, plain)
def test_a_given_secret_never_survives_redaction(secret, before, after):
    assume(Secret(secret).weakness() is None)  # a word, a phrase or a number is a placeholder (issue 31 B)
    assert secret not in redact(before + secret + after, [secret])


@given(st.lists(st.tuples(st.sampled_from([None, "message_start", "ping"]), plain), max_size=10))
def test_sse_events_come_back_as_sent(events):
    lines: list[str] = []
    for name, data in events:
        if name:
            lines.append(f"event: {name}")
        lines += [": keep-alive", f"data: {data}", ""]
    parsed = [(e.event, e.data) for e in iter_sse(lines)]
    assert parsed == [(name, data) for name, data in events]


@given(st.floats(min_value=0, max_value=10_000, allow_nan=False).map(lambda x: round(x, 3)))
def test_durations_in_seconds_and_milliseconds(seconds):
    assert parse_duration(f"{seconds}s") == seconds
    assert abs(parse_duration(f"{int(seconds * 1000)}ms") - int(seconds * 1000) / 1000) < 1e-9


def test_go_style_durations():
    assert parse_duration("1m2.5s") == 62.5
    assert parse_duration("6m0s") == 360
    assert parse_duration("soon") is None


@settings(max_examples=40, deadline=None)
@given(st.lists(plain, min_size=1, max_size=12))
def test_streamed_text_in_any_pieces_is_joined_exactly(pieces):
    chunks = [{"id": "c", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    chunks.append({"id": "c", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    transport = httpx.MockTransport(lambda request: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=body.encode()))
    provider = make_provider("openai", "m", key="k", transport=transport)
    try:
        response = provider.complete(ChatRequest(model="m", messages=[Message(role="user", content="x")], tools=[],
                                                 max_output_tokens=8))
    finally:
        provider.close()
    assert response.message.content == "".join(pieces)
