"""What every HTTP provider shares: the httpx client, stream parsing, retries and accounting.

:class:`HTTPProvider` owns the loop around one request: encode the body once (the exact
bytes are kept in ``last_request_body`` and hashed), ask the pacer for a start slot, send,
parse the streamed or whole answer, classify failures into :mod:`.errors`, retry within a
bounded budget and record every failed attempt. A wire-format module only says how a
``ChatRequest`` becomes a body and how an answer or an error body becomes ours.

Time is injected (``sleep``, ``clock``) so tests never sleep for real; the transport is
injectable (``httpx.BaseTransport``) like ``httpx.MockTransport``. Nothing here may log or
store a key: headers holding one are built per request and never kept.

Size: the request loop (`HTTPProvider`) and the wire readers it needs (SSE and NDJSON
streams, retry hints, reasoning text) are together; the stream parsers (`SSEEvent`,
`iter_sse`, `iter_ndjson`) and the retry hints would split off first.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import re
import ssl
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from pytest_assistant_eval.providers.reply_bounds import MAX_TOOL_CALLS
from pytest_assistant_eval.providers.reply_bounds import loads as bounded_loads
from pytest_assistant_eval.messages import ChatRequest, ChatResponse, Message, Usage, once_per_definitions
from pytest_assistant_eval.providers.durations import parse_duration
from pytest_assistant_eval.providers.errors import (
    Attempt,
    ConfigurationError,
    ProviderError,
    RetryPolicy,
    UnsupportedMode,
    make_error,
)
from pytest_assistant_eval.providers.limits import (
    CONNECT_TIMEOUT,
    DEFAULT_DEADLINE,
    Deadline,
    Reading,
    bind_deadline,
    body_cap,
    chars_cap,
    fold,
)
from pytest_assistant_eval.providers.pacing import need_for
from pytest_assistant_eval.redact import provider_text, redact, redact_clip
from pytest_assistant_eval.providers.replies import checked_response, guarded_error
from pytest_assistant_eval.secret import Secret, Secrets, unsendable_at

USER_AGENT = "pytest-assistant-eval"


# ---------------------------------------------------------------------------------------------
# Bytes of a request


def encode_body(body: dict[str, Any]) -> bytes:
    """The exact bytes sent: key order as built (never sorted), fixed separators, UTF-8.

    A value that is an :class:`EncodedList` (a level's tools, the same in every request) is spliced
    in as the text it was encoded to once: the same bytes as encoding it again."""
    if not any(type(value) is EncodedList for value in body.values()) or not all(type(k) is str for k in body):
        return _dumps(body).encode("utf-8")
    return ("{" + ",".join(f"{_dumps(key)}:{value.text if type(value) is EncodedList else _dumps(value)}"
                           for key, value in body.items()) + "}").encode("utf-8")


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=False, allow_nan=False)


class EncodedList(list):  # type: ignore[type-arg]
    """A JSON array built once and sent in every request (a level's tool definitions as a wire format
    gives them), with its encoded text: ``encode_body`` splices the text in instead of encoding the
    array again (the tools were half of every request body's encoding). Never changed once built."""

    text: str

    @classmethod
    def of(cls, items: Iterable[Any]) -> EncodedList:
        made = cls(items)
        made.text = _dumps(list(made))
        return made


def wire_tools(wire_format: str, tools: Iterable[Any], build: Callable[[Any], Any]) -> EncodedList:
    """``[build(t) for t in tools]`` as an :class:`EncodedList`, built once per set of definitions."""
    return once_per_definitions(f"wire {wire_format}", tools, lambda held: EncodedList.of(build(t) for t in held))


def request_sha256(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def dumps_arguments(arguments: dict[str, Any]) -> str:
    """Tool-call arguments as a JSON string (for formats that carry them as text)."""
    return json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None, str | None]:
    """``(arguments, raw_arguments, parse_error)`` from what a provider sent; never raises."""
    if isinstance(raw, dict):
        return raw, None, None
    if raw is None or (isinstance(raw, str) and raw.strip() == ""):
        return {}, None, None
    if not isinstance(raw, str):
        return {}, json.dumps(raw, ensure_ascii=False), f"arguments are a {type(raw).__name__}, not an object"
    try:
        value = bounded_loads(raw)
    except ValueError as exc:
        return {}, raw, f"arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, raw, f"arguments are a JSON {type(value).__name__}, not an object"
    return value, None, None


# ---------------------------------------------------------------------------------------------
# Reasoning kept apart from the answer

_THINK = re.compile(r"<(think|thinking|thought)>(.*?)</\1>\s*", re.DOTALL | re.IGNORECASE)
_OPEN = re.compile(r"^\s*<(think|thinking|thought)>(.*)$", re.DOTALL | re.IGNORECASE)
_CLOSE_ONLY = re.compile(r"^(.*?)</(think|thinking|thought)>\s*", re.DOTALL | re.IGNORECASE)


def split_reasoning(text: str) -> tuple[str, str | None]:
    """``(answer, reasoning)``: ``<think>``/``<thought>`` blocks moved out of the answer.

    Also handles a closing tag without its opening one (templates that open the block in the
    prompt) and an opening tag never closed (an answer cut off while thinking).
    """
    if not text or "<" not in text:
        return text, None
    reasoning: list[str] = []
    m = _CLOSE_ONLY.match(text)
    if m and not re.search(r"<(think|thinking|thought)>", m.group(1), re.IGNORECASE):
        reasoning.append(m.group(1).strip())
        text = text[m.end():]

    def take(match: re.Match[str]) -> str:
        reasoning.append(match.group(2).strip())
        return ""

    text = _THINK.sub(take, text)
    m = _OPEN.match(text)
    if m:
        reasoning.append(m.group(2).strip())
        text = ""
    joined = "\n\n".join(r for r in reasoning if r)
    return text.strip() if reasoning else text, (joined or None)


def join_reasoning(*parts: str | None) -> str | None:
    joined = "\n\n".join(p for p in parts if p)
    return joined or None


# ---------------------------------------------------------------------------------------------
# Durations and headers


def retry_after_from_headers(headers: httpx.Headers | dict[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date)."""
    lower = {k.lower(): v for k, v in dict(headers).items()}
    if "retry-after-ms" in lower:
        try:
            return float(lower["retry-after-ms"]) / 1000.0
        except ValueError:
            pass
    value = lower.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
        return max(0.0, when.timestamp() - (now if now is not None else time.time()))
    except (TypeError, ValueError, OverflowError):
        return None


_MESSAGE_RETRY = re.compile(r"(?:try again|retry) in ((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)", re.IGNORECASE)


def retry_after_from_message(message: str | None) -> float | None:
    if not message or not isinstance(message, str):
        return None
    m = _MESSAGE_RETRY.search(message)
    return parse_duration(m.group(1)) if m else None


_KEPT_HEADERS = re.compile(r"^(retry-after(-ms)?|(x-)?ratelimit-.*|anthropic-ratelimit-.*|x-should-retry)$",
                           re.IGNORECASE)


def rate_headers(headers: httpx.Headers | dict[str, str] | None) -> dict[str, str]:
    """Only the rate-limit headers (lower-cased): what pacing learns from, never a key."""
    if not headers:
        return {}
    return {k.lower(): v for k, v in dict(headers).items() if _KEPT_HEADERS.match(k)}


def json_or_none(data: bytes | str | None) -> Any:
    if data is None:
        return None
    try:
        return bounded_loads(data)
    except (ValueError, UnicodeDecodeError):
        return None


# ---------------------------------------------------------------------------------------------
# Stream framing


@dataclass
class SSEEvent:
    event: str | None
    data: str


def iter_sse(lines: Iterable[str]) -> Iterator[SSEEvent]:
    """Server-sent events from text lines: comments skipped, ``data:`` lines of one event joined."""
    event: str | None = None
    data: list[str] = []
    for line in lines:
        line = line.rstrip("\r")
        if line == "":
            if data:
                yield SSEEvent(event, "\n".join(data))
            event, data = None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
    if data:
        yield SSEEvent(event, "\n".join(data))


def unreadable(what: str, sample: str | bytes | None = None) -> ProviderError:
    """The fault of an answer that is not the wire format; ``sample`` (its start) is the provider's words."""
    if isinstance(sample, bytes):
        sample = sample.decode("utf-8", "replace")
    return make_error("unreadable_answer", message=what, provider_message=provider_text(sample))


def event_json(data: str) -> dict[str, Any]:
    """One stream event's JSON object; anything else is raised, never skipped.

    Skipping a line that does not parse would save a changed answer as the model's (a cut chunk
    drops a number from the text; garbage then the end of the stream becomes an empty answer).
    """
    try:
        value = bounded_loads(data)
    except ValueError:
        raise unreadable("the answer stream held an event that is not JSON", data) from None
    if not isinstance(value, dict):
        raise unreadable(f"the answer stream held a JSON {type(value).__name__}, not an object", data)
    return value


def iter_ndjson(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for line in lines:
        line = line.strip()
        if not line:
            continue
        try:
            value = bounded_loads(line)
        except ValueError:
            raise unreadable("the answer stream held a line that is not JSON", line) from None
        if not isinstance(value, dict):
            raise unreadable(f"the answer stream held a JSON {type(value).__name__}, not an object", line)
        yield value


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def html_title(body: bytes | None) -> str | None:
    """``"an HTML page: <title>"`` when ``body`` is a web page (a proxy's or portal's), else None."""
    if not body:
        return None
    head = body[:2048].lstrip().lower()
    if not (head.startswith(b"<!doctype html") or head.startswith(b"<html") or b"<html" in head[:512]):
        return None
    m = _TITLE.search(body[:8192])
    title = re.sub(r"\s+", " ", m.group(1).decode("utf-8", "replace")).strip() if m else ""
    return f"an HTML page: {title}" if title else "an HTML page"


# ---------------------------------------------------------------------------------------------
# Accounting


@dataclass
class UsageTotal:
    """Requests and tokens spent by one provider object, labelled as calibration use (S4.16)."""

    label: str
    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0

    def add(self, usage: Usage | None) -> None:
        if usage is None:
            return
        self.input_tokens += usage.input_tokens or 0
        self.output_tokens += usage.output_tokens or 0
        self.reasoning_tokens += usage.reasoning_tokens or 0
        self.cached_input_tokens += usage.cached_input_tokens or 0
        self.cache_write_tokens += usage.cache_write_tokens or 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "requests": self.requests,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cached_input_tokens": self.cached_input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
        }


# ---------------------------------------------------------------------------------------------
# The provider base

_SSL_CONTEXT: ssl.SSLContext | None = None


def shared_ssl_context() -> ssl.SSLContext:
    """One verifying SSL context for every provider (building one costs ~0.1 s)."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        _SSL_CONTEXT = httpx.create_ssl_context()
    return _SSL_CONTEXT



@dataclass
class Wire:
    """What one wire-format request looks like: where to send which bytes with which headers."""

    url: str
    headers: dict[str, str] = field(repr=False)  # holds the key: never in a repr pytest's -l would print
    body: dict[str, Any]
    stream: bool
    params: dict[str, str] = field(default_factory=dict)


class HTTPProvider:
    """Base of the HTTP providers; subclasses implement the ``_wire``/``_parse*``/``classify`` hooks."""

    preset: str = ""
    wire_format: str = ""
    can_stream: bool = True
    can_whole: bool = True

    def __init__(
        self,
        model: str,
        *,
        base_url: str,
        key: str | None = None,
        preset: str | None = None,
        stream: bool = True,
        pacer: Any = None,
        transport: httpx.BaseTransport | None = None,
        options: dict[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        timeout: float | httpx.Timeout | None = None,
        deadline: float | None = None,
    ) -> None:
        if preset:
            self.preset = preset
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.route = f"{self.preset}@{self.base_url}"
        self.stream = stream
        if stream and not self.can_stream:
            raise UnsupportedMode(f"The {self.preset} preset cannot stream answers; run with --no-stream.")
        if not stream and not self.can_whole:
            raise UnsupportedMode(f"The {self.preset} preset can only stream answers; run without --no-stream.")
        self._key = Secret.of(key)  # its repr never shows it; revealed only where a header is built
        if self._key is not None and (at := unsendable_at(self._key)) is not None:
            raise ConfigurationError(
                f"the {self.preset} key holds a character an HTTP header cannot carry (character {at} is not a "
                "visible ASCII character): check the keyring entry or the variable it comes from")
        self._secrets = Secrets((self._key,), identity=(self.model, self.base_url))
        self.pacer = pacer
        self.options = dict(options or {})
        self.retry = retry or RetryPolicy()
        self.sleep = sleep
        self.clock = clock
        #: The longest one attempt may take, connect and whole answer (issue 23): a ``timeout`` after it.
        self.deadline = Deadline(float(deadline) if deadline else DEFAULT_DEADLINE)
        if timeout is None:
            timeout = httpx.Timeout(self.deadline.seconds, connect=min(CONNECT_TIMEOUT, self.deadline.seconds))
        self._client = httpx.Client(transport=transport, timeout=timeout, headers={"user-agent": USER_AGENT},
                                    verify=shared_ssl_context())
        bind_deadline(self._client, self.deadline)
        self.attempts: list[Attempt] = []
        #: Called after each failed attempt is appended to ``attempts``, before any wait (the cell files it).
        self.on_attempt: Callable[[], None] | None = None
        #: Seconds slept between attempts (the retry backoff a pacer does not do).
        self.retry_waited = 0.0
        self.last_request_body: bytes = b""
        self.last_request_sha256: str | None = None
        self.last_response_headers: dict[str, str] = {}
        self._received = [0]  # characters of the current stream read so far
        self._unsent = False  # the last attempt made no connection: the service never saw it
        self.usage_total = UsageTotal(label=f"{self.preset} (calibration)")

    # -- hooks -----------------------------------------------------------------------------

    def _wire(self, request: ChatRequest, stream: bool) -> Wire:  # pragma: no cover - abstract
        raise NotImplementedError

    def _parse_whole(self, data: Any, headers: httpx.Headers) -> ChatResponse:  # pragma: no cover
        raise NotImplementedError

    def _parse_stream(self, lines: Iterator[str], headers: httpx.Headers) -> ChatResponse:  # pragma: no cover
        raise NotImplementedError

    def _closing_lines(self) -> list[str]:  # pragma: no cover - abstract
        """Lines that end this wire's stream as a length stop: the parser then returns what it read."""
        raise NotImplementedError

    def classify(self, status: int, body: bytes, headers: httpx.Headers | dict[str, str]) -> ProviderError:
        raise NotImplementedError  # pragma: no cover

    # -- public ----------------------------------------------------------------------------

    @property
    def secrets(self) -> Secrets:
        """The provider's key as every writer redacts with it (a weak key is never searched for)."""
        return self._secrets

    def redact(self, text: str | None) -> str:
        return redact(text, self.secrets)

    def read_whole(self, data: Any, headers: httpx.Headers | dict[str, str]) -> ChatResponse:
        """A whole answer as ours, or ``unreadable_answer``: no shape of JSON escapes as another error."""
        return checked_response(lambda: self._parse_whole(data, httpx.Headers(headers)), self.wire_format,
                                lambda: json.dumps(data, ensure_ascii=False, default=str))

    def read_stream(self, lines: Iterable[str], headers: httpx.Headers | dict[str, str]) -> ChatResponse:
        """A streamed answer as ours, or ``unreadable_answer`` (see :meth:`read_whole`)."""
        seen: list[str] = []

        def parse() -> ChatResponse:
            return self._parse_stream(_remember_last(iter(lines), seen), httpx.Headers(headers))

        return checked_response(parse, self.wire_format, lambda: seen[-1] if seen else None)

    def build_body(self, request: ChatRequest) -> bytes:
        """The exact bytes ``complete(request)`` would send (for hashing and resume checks)."""
        return encode_body(self._wire(request, self._stream_for(request)).body)

    def take_attempts(self) -> list[Attempt]:
        """The failed attempts recorded so far, emptying the list."""
        attempts, self.attempts = self.attempts, []
        return attempts

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> HTTPProvider:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete(self, request: ChatRequest) -> ChatResponse:
        stream = self._stream_for(request)
        wire = self._wire(request, stream)
        body = encode_body(wire.body)
        sha = request_sha256(body)
        self.last_request_body = body
        self.last_request_sha256 = sha
        codes: list[str] = []
        attempt = 0
        while True:
            attempt += 1
            if self.pacer is not None:
                self.pacer.before_request(need_for(request))
            started = self.clock()
            try:
                self.usage_total.requests += 1
                response = self._send(wire, body, request.max_output_tokens)
            except ProviderError as caught:
                from pytest_assistant_eval.providers.holds import bound_hold

                error = bound_hold(caught)  # a wait beyond a day is a daily quota, never a stored hold
                self._fill(error)
                self.attempts.append(
                    Attempt(
                        code=error.code,
                        kind=error.kind,
                        status=error.status,
                        provider_code=error.provider_code,
                        message=error.provider_message,
                        seconds=max(0.0, self.clock() - started),
                        retry_after=error.retry_after,
                        request_sha256=sha,
                    )
                )
                if self.on_attempt is not None:
                    self.on_attempt()  # filed before any sleep or retry: a kill loses no attempt (issue 31 G)
                if self.pacer is not None and error.code in ("rate_limit", "tpm_input"):
                    self.pacer.on_rate_limited(error.retry_after, error.headers, quota=error.quota)
                if self._unsent:  # no connection was made: the service never saw it, no count has it (issue 31 K)
                    self.usage_total.requests -= 1
                if self.pacer is not None and self._unsent and hasattr(self.pacer, "not_sent"):
                    self.pacer.not_sent()  # no connection was made: the service never saw it
                decision = self.retry.decide(error, attempt, codes)
                codes.append(error.code)
                if not decision.retry:
                    raise error
                paced = self.pacer is not None and decision.kind == "rate_limit" and error.retry_after is not None
                if decision.delay > 0 and not paced:  # with a pacer, its hold does the waiting for every worker
                    self.sleep(decision.delay)
                    self.retry_waited += decision.delay  # shown with the pacer's waits (issue 31 K)
                continue
            if self.pacer is not None:
                self.pacer.after_response(self.last_response_headers, usage=response.usage)
            self.usage_total.add(response.usage)
            response.provider.setdefault("request_sha256", sha)
            return response

    # -- internals -------------------------------------------------------------------------

    def _stream_for(self, request: ChatRequest) -> bool:
        return bool(self.stream and request.stream)

    def _fill(self, error: ProviderError) -> None:
        error.preset = self.preset
        error.address = self.redact(self.base_url)
        error.provider_message = redact_clip(error.provider_message, self.secrets)
        error.message = self.redact(error.message)
        if isinstance(error.provider_code, str) and len(error.provider_code) > 100:  # a code of any shape (issue 23)
            error.provider_code = redact_clip(error.provider_code, self.secrets, 100)

    def _send(self, wire: Wire, body: bytes, max_output_tokens: int = 0) -> ChatResponse:
        def address() -> str:  # for error messages only: not redacted on every request
            return self.redact(self.base_url)

        reading = Reading(body_cap(max_output_tokens), self.deadline)
        self._unsent = False
        self.deadline.start()
        try:
            with self._client.stream(
                "POST", wire.url, content=body, headers=wire.headers, params=wire.params or None
            ) as response:
                self.last_response_headers = rate_headers(response.headers)
                if response.status_code >= 400:
                    try:
                        raw = reading.body(response.iter_bytes())
                    except httpx.TimeoutException:
                        raise
                    except httpx.HTTPError:
                        raw = b""
                    error = self._classified(response.status_code, raw, response.headers)
                    page = html_title(raw)
                    if page:  # a proxy's or gateway's page: its title says what happened, its markup nothing
                        error.provider_message = page
                    raise error
                try:
                    if wire.stream and not _is_html(response.headers):
                        lines = _counting(reading.lines(response.iter_bytes()), self._received)
                        parsed = self.read_stream(_closed_if_capped(lines, reading, self._closing_lines),
                                                  response.headers)
                        if not reading.capped:
                            _drain(lines)
                        return self._bounded(parsed, reading, max_output_tokens)
                    raw = reading.body(response.iter_bytes())
                except httpx.TimeoutException:
                    raise
                except (httpx.RemoteProtocolError, httpx.ReadError) as exc:
                    received = self._received[0]
                    raise make_error("stream_cut", message=f"the answer stream from {address()} was cut short "
                                     f"after {received} characters ({type(exc).__name__})") from None
                finally:
                    self._received[0] = 0
                if reading.capped:  # a whole answer cut by the cap is no JSON: nothing of it can be kept
                    return self._bounded(None, reading, max_output_tokens)
                page = html_title(raw)
                if page:
                    raise unreadable(f"{address()} answered with {page}, not the API's answer: is the address "
                                     "the API's (--base-url), and is no portal or proxy in the way?")
                data = json_or_none(raw)
                if data is None:
                    raise unreadable(f"the answer from {address()} is not JSON", raw)
                return self._bounded(self.read_whole(data, response.headers), reading, max_output_tokens)
        except ProviderError as error:
            if error.code == "stream_cut" and address() not in error.message:
                error.message = f"{error.message} (from {address()})"
            raise
        except httpx.TimeoutException as exc:
            self._unsent = isinstance(exc, httpx.ConnectTimeout)
            if self.deadline.passed():
                raise make_error("timeout", message=f"{address()} took longer than the deadline of "
                                 f"{self.deadline.seconds:g} s for the whole answer (--request-deadline)") from None
            raise make_error("timeout", message=f"{address()} did not answer in time ({type(exc).__name__})") from None
        except httpx.ConnectError as exc:
            self._unsent = True
            what = ("was refused" if "refused" in str(exc).lower()
                    else f"could not be made ({type(exc).__name__})")  # never "was failed" (issue 24)
            raise make_error("no_connection", message=f"the connection to {address()} {what}: is the service "
                             "running at this address?") from None
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            raise make_error("no_connection", message=f"{address()} closed the connection before answering "
                             f"({type(exc).__name__})") from None
        except httpx.HTTPError as exc:
            raise make_error("no_connection", message=f"the request to {address()} failed ({type(exc).__name__})") from None
        finally:
            self.deadline.stop()

    def _classified(self, status: int, raw: bytes, headers: httpx.Headers) -> ProviderError:
        """The format's classification of an error answer; one it cannot read is classified by its status."""
        return guarded_error(lambda: self.classify(status, raw, headers),
                             lambda: make_error(status_code_for(status), status=status,
                                                provider_message=provider_text(raw),
                                                headers=rate_headers(headers)))

    def _bounded(self, response: ChatResponse | None, reading: Reading, max_output_tokens: int) -> ChatResponse:
        """The answer, or a graded ``oversized`` stop when it ran far beyond its output limit (issue 23).

        Far beyond: more bytes than :func:`body_cap` (no more were read), or more characters of
        text, reasoning and tool arguments than :func:`chars_cap`. What is kept is folded to a
        fixed size; its tool calls and the parts a provider wants back verbatim are dropped,
        since nothing of such an answer is sent again or acted on.
        """
        if response is not None and not reading.capped:
            chars = _answer_chars(response)
            if chars <= chars_cap(max_output_tokens) and len(response.message.tool_calls) <= MAX_TOOL_CALLS:
                return response
        else:
            chars = _answer_chars(response) if response is not None else None
        message = response.message if response is not None else Message(role="assistant")
        info = dict(response.provider) if response is not None else {}
        info["oversized"] = {"bytes_read": reading.received, "body_cap": reading.cap, "capped": reading.capped,
                             "characters": chars, "max_output_tokens": max_output_tokens,
                             "tool_calls_dropped": len(message.tool_calls), "max_tool_calls": MAX_TOOL_CALLS}
        folded = Message(role="assistant", content=fold(message.content) or "", reasoning=fold(message.reasoning))
        return ChatResponse(message=folded, stop_reason="oversized",
                            usage=response.usage if response is not None else Usage(), provider=info)


def _answer_chars(response: ChatResponse) -> int:
    message = response.message
    return (len(message.content or "") + len(message.reasoning or "")
            + sum(len(c.raw_arguments or "") + len(json.dumps(c.arguments, default=str)) for c in message.tool_calls))


def _closed_if_capped(lines: Iterator[str], reading: Reading, closing: Callable[[], list[str]]) -> Iterator[str]:
    """The stream's lines; when the cap stopped the reading, the wire's own end of a length stop after them.

    A plain loop, not ``yield from``: a parser done at its terminator drops this generator, and
    ``yield from`` would close ``lines`` with it, before :func:`_drain` reads the rest.
    """
    for line in lines:
        yield line
    if reading.capped:
        yield from closing()


def _remember_last(lines: Iterator[str], seen: list[str]) -> Iterator[str]:
    """The lines, the last non-empty one kept in ``seen`` (the provider's words when it is unreadable).

    Kept as :func:`provider_text` keeps a provider's words, longer than shown: it is redacted
    before it is cut to 300 characters, never after (issue 23, item 14).
    """
    for line in lines:
        if line.strip():
            seen[:] = [provider_text(line) or ""]
        yield line


def _is_html(headers: httpx.Headers) -> bool:
    return "text/html" in headers.get("content-type", "").lower()


def _drain(lines: Iterator[str]) -> None:
    """Read a stream to its end after its answer is whole (S9.4).

    A parser stops at its terminator (``[DONE]``, ``message_stop``), before the last chunk of
    the body; a response closed unread takes its connection with it, so every streamed request
    would open a new one (a TLS handshake each against a real provider). Read to the end, the
    connection goes back to the pool. A failure after a whole answer changes nothing.
    """
    try:
        for _ in lines:
            pass
    except httpx.HTTPError:
        pass


def _counting(lines: Iterator[str], counter: list[int]) -> Iterator[str]:
    """The stream's lines, counting the characters read (a cut stream says how far it got)."""
    for line in lines:
        counter[0] += len(line) + 1
        yield line


def status_code_for(status: int) -> str:
    """A fallback code from the HTTP status alone, when the body says nothing better."""
    if status in (401,):
        return "key"
    if status == 402:
        return "credit"
    if status == 403:
        return "permission"
    if status == 404:
        return "model"
    if status in (408, 504):
        return "timeout"
    if status == 413:
        return "context_too_long"
    if status == 429:
        return "rate_limit"
    if status in (503, 529):
        return "overloaded"
    if status >= 500:
        return "busy"
    return "internal"
