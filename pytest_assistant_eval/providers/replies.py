"""Every reply shape is ours or ``unreadable_answer`` (issue 23, S4.7, S4.10).

A wire-format parser reads what the format promises: ``choices`` a list of objects, ``content``
a string, token counts integers. A server may send anything else (``{"choices": ["surprise"]}``,
``"content": 42``, ``"prompt_tokens": "lots"``), and an ``AttributeError`` or ``TypeError`` from
the parser would be a pytest error: the cell lost, nothing in ``spent.json``. Here a parser's
failure on a shape it does not know becomes the temporary fault ``unreadable_answer`` (the cell
is kept and resumed, the attempt recorded), and a parsed answer is checked field by field before
the loop sees it, so a wrong type never reaches a record, a checkpoint or the usage totals.

Error bodies are held to the same rule: :func:`guarded_error` classifies any shape of error
answer by its HTTP status when the format's classifier cannot read it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, get_args

from pytest_assistant_eval.messages import ChatResponse, StopReason, Usage
from pytest_assistant_eval.providers.errors import ProviderError, make_error
from pytest_assistant_eval.redact import provider_text

#: What a parser raises on a shape it was not written for.
SHAPE_ERRORS = (AttributeError, TypeError, KeyError, IndexError, ValueError, RecursionError)

_STOPS = set(get_args(StopReason))
_USAGE_FIELDS = ("input_tokens", "output_tokens", "reasoning_tokens", "cached_input_tokens", "cache_write_tokens")


def _sample(sample: str | Callable[[], str | None] | None) -> str | None:
    text = sample() if callable(sample) else sample
    return provider_text(text)  # redacted, then cut to 300, when the provider fills the error in


def unreadable_shape(wire_format: str, why: str, sample: str | Callable[[], str | None] | None) -> ProviderError:
    """The fault of an answer that is JSON but not of the wire format's shape."""
    return make_error("unreadable_answer", message=f"the answer is not of the {wire_format or 'provider'}'s "
                      f"format: {why}", provider_message=_sample(sample))


def checked_response(parse: Callable[[], ChatResponse], wire_format: str,
                     sample: str | Callable[[], str | None] | None = None) -> ChatResponse:
    """``parse()``'s answer, checked; a shape the parser or the check cannot take is ``unreadable_answer``."""
    try:
        response = parse()
    except ProviderError:
        raise
    except SHAPE_ERRORS as exc:
        raise unreadable_shape(wire_format, "a part of it is not of the type the format gives it", sample) from None
    problem = response_problem(response)
    if problem is not None:
        raise unreadable_shape(wire_format, problem, sample)
    return response


def token_count(value: Any) -> int | None:
    """A token count as an int, ``None`` when absent; raises ``ValueError`` for anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"a token count is a {type(value).__name__}")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("a token count is not a whole number")
    if value < 0:
        raise ValueError("a token count is negative")
    return int(value)


def response_problem(response: Any) -> str | None:
    """What is not of our types in a parsed answer (``None`` when all is); integral floats become ints."""
    if not isinstance(response, ChatResponse):
        return "the parser gave no answer"
    message = response.message
    if response.stop_reason not in _STOPS:
        return f"the stop reason {response.stop_reason!r} is not one of ours"
    if not isinstance(message.content, str):
        return f"its text is a {type(message.content).__name__}, not a string"
    if message.reasoning is not None and not isinstance(message.reasoning, str):
        return f"its reasoning is a {type(message.reasoning).__name__}, not a string"
    if not isinstance(message.tool_calls, list):
        return "its tool calls are not a list"
    for call in message.tool_calls:
        for name in ("id", "name"):
            if not isinstance(getattr(call, name), str):
                return f"a tool call's {name} is a {type(getattr(call, name)).__name__}, not a string"
        if not isinstance(call.arguments, dict):
            return "a tool call's arguments are not an object"
        for name in ("raw_arguments", "parse_error"):
            if getattr(call, name) is not None and not isinstance(getattr(call, name), str):
                return f"a tool call's {name} is not a string"
    if not isinstance(message.provider_data, dict) or not isinstance(response.provider, dict):
        return "its provider fields are not objects"
    usage = response.usage if response.usage is not None else Usage()
    if not isinstance(usage, Usage):
        return "its usage is not an object"
    for name in _USAGE_FIELDS:
        try:
            setattr(usage, name, token_count(getattr(usage, name)))
        except ValueError as exc:
            return f"usage {name}: {exc}"
    response.usage = usage
    try:
        json.dumps([message.provider_data, response.provider], allow_nan=False)
    except (TypeError, ValueError):
        return "its provider fields are not plain JSON"
    return None


def guarded_error(classify: Callable[[], ProviderError], fallback: Callable[[], ProviderError]) -> ProviderError:
    """A format's classification of an error answer, or ``fallback()`` (by HTTP status) when it cannot read it.

    The provider's own words must be text: a classifier that kept an object as the message or the
    code gets them as compact JSON.
    """
    try:
        error = classify()
    except SHAPE_ERRORS:
        return fallback()
    for name in ("provider_message", "provider_code"):
        value = getattr(error, name)
        if value is not None and not isinstance(value, str):
            setattr(error, name, provider_text(json.dumps(value, ensure_ascii=False, default=str)))
    return error
