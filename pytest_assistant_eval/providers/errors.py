"""One error hierarchy for every provider, with the codes the runner acts on (S4.7, S4.10).

A provider never lets an ``httpx`` exception or a vendor's error body escape: it raises a
:class:`ProviderError` whose ``code`` names what happened and whose ``kind`` tells the loop
what to do with the cell:

- ``graded``: an outcome that is saved and graded (``context_too_long``, ``refusal``; a cut-off
  answer is not raised at all but returned with ``stop_reason == "max_tokens"``);
- ``temporary``: the cell is kept and can be resumed (busy, rate limits, quotas, lost connections);
- ``format``: one answer could not be read (``tool_call_unreadable``, raised by the loop);
- ``fatal``: nothing of the cell is saved (key, permission, credit, model, routing, tools,
  history, internal).

``provider_message`` is always redacted and at most 300 characters; it is ``None`` when the
provider gave no answer (no connection, timeout, a stream cut short). This module must never
import a vendor SDK or hold a key.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from pytest_assistant_eval.console import one_line

Kind = Literal["graded", "temporary", "format", "fatal"]

#: Every code and its kind. ``cut_off`` is listed for completeness: it is a stop reason, never raised.
CODES: dict[str, Kind] = {
    "cut_off": "graded",
    "context_too_long": "graded",
    "refusal": "graded",
    "agent_error": "graded",  # an agent's turn() raised (issue 33, docs/agents.md): the cell ends, graded
    "busy": "temporary",
    "overloaded": "temporary",
    "rate_limit": "temporary",
    "tpm_input": "temporary",
    "no_connection": "temporary",
    "timeout": "temporary",
    "stream_cut": "temporary",
    "unreadable_answer": "temporary",
    "daily_quota": "temporary",
    "tool_call_unreadable": "format",
    "key": "fatal",
    "permission": "fatal",
    "credit": "fatal",
    "model": "fatal",
    "routing": "fatal",
    "tools": "fatal",
    "history": "fatal",
    "internal": "fatal",
}

#: What servers say when they could not parse the tool call a model wrote (Ollama, also on its /v1
#: endpoint): one answer's format problem, ``tool_call_unreadable``, never a busy server.
TOOL_PARSE_MARKERS = ("error parsing tool call", "failed to parse tool call")

#: What we say for each code, before the provider's own words.
DESCRIPTIONS: dict[str, str] = {
    "cut_off": "the answer was cut off at the output limit",
    "context_too_long": "the request is too long for the model's context",
    "refusal": "the provider refused to answer",
    "busy": "the service is busy",
    "overloaded": "the service is overloaded",
    "rate_limit": "the service's rate limit was reached",
    "tpm_input": "the per-minute input-token quota was reached",
    "no_connection": "no connection to the service",
    "timeout": "the service did not answer in time",
    "stream_cut": "the answer stream was cut short",
    "unreadable_answer": "the answer could not be read (it is not in the provider's format)",
    "daily_quota": "the daily quota is used",
    "tool_call_unreadable": "a tool call the service could not read",
    "key": "the key was refused",
    "permission": "the key has no permission for this",
    "credit": "no credit left on the account",
    "model": "the model is unknown or not available",
    "routing": "no route to the model matches the request's requirements",
    "tools": "the tools were refused",
    "history": "the conversation history was refused",
    "internal": "an internal fault",
}


class ProviderError(Exception):
    """A request failed; ``code`` and ``kind`` say how, the ``provider_*`` fields in its own words."""

    code: str = "internal"

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        status: int | None = None,
        provider_code: str | None = None,
        provider_message: str | None = None,
        retry_after: float | None = None,
        quota: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
        preset: str | None = None,
    ) -> None:
        if code is not None:
            self.code = code
        if self.code not in CODES:
            raise ValueError(f"unknown provider error code {self.code!r}")
        self.status = status
        self.provider_code = provider_code
        self.provider_message = provider_message
        self.retry_after = retry_after
        self.quota = quota
        self.headers = dict(headers or {})
        self.preset = preset
        #: The service address the request went to (never holds a key); set by the provider.
        self.address: str | None = None
        self.message = message or DESCRIPTIONS[self.code]
        super().__init__(self.message)

    @property
    def kind(self) -> Kind:
        return CODES[self.code]

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only constructors do not unpickle by default; workers may send errors across processes.
        return (_restore, (type(self), self.args, dict(self.__dict__)))

    def __str__(self) -> str:
        parts = [self.message]
        details = []
        if self.status is not None:
            details.append(f"HTTP {self.status}")
        if self.provider_code:
            details.append(one_line(self.provider_code))
        if self.provider_message:
            details.append(one_line(self.provider_message))  # a provider's text, on one visible line (issue 31 C)
        if details:
            parts.append("(" + ": ".join(details) + ")")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "kind": self.kind,
            "status": self.status,
            "provider_code": self.provider_code,
            "message": self.provider_message,
            "retry_after": self.retry_after,
            "quota": self.quota,
        }


def _restore(cls: type[ProviderError], args: tuple[Any, ...], state: dict[str, Any]) -> ProviderError:
    error = cls.__new__(cls)
    Exception.__init__(error, *args)
    error.__dict__.update(state)
    return error


class GradedError(ProviderError):
    """An outcome, not a failure: the loop saves and grades it."""


class TemporaryError(ProviderError):
    """The cell is kept and can be resumed."""

    code = "busy"


class FormatError(ProviderError):
    code = "tool_call_unreadable"


class FatalError(ProviderError):
    """Nothing of the cell is saved."""


class ContextTooLong(GradedError):
    code = "context_too_long"


class Refusal(GradedError):
    code = "refusal"


class Busy(TemporaryError):
    code = "busy"


class Overloaded(TemporaryError):
    code = "overloaded"


class RateLimited(TemporaryError):
    code = "rate_limit"


class InputTokensPerMinute(TemporaryError):
    code = "tpm_input"


class NoConnection(TemporaryError):
    code = "no_connection"


class Timeout(TemporaryError):
    code = "timeout"


class StreamCut(TemporaryError):
    code = "stream_cut"


class UnreadableAnswer(TemporaryError):
    """A line of a stream or a whole answer that is not the wire format (garbage, a cut chunk,
    an HTML page): never skipped, because skipping it would save a changed answer as the model's."""

    code = "unreadable_answer"


class DailyQuota(TemporaryError):
    code = "daily_quota"


class BudgetUsed(DailyQuota):
    """Our own daily request budget is used (S4.6); nothing was sent."""

    def __init__(self, *, local: bool = False, limit: int | None = None, route: str | None = None) -> None:
        flag = "" if local else " --accept-data-notice"
        super().__init__(f"Daily request budget used. Run again with --resume{flag} tomorrow.")
        self.local = local
        self.limit = limit
        self.route = route


class ToolCallUnreadable(FormatError):
    code = "tool_call_unreadable"


class KeyRefused(FatalError):
    code = "key"


class MissingKey(KeyRefused):
    """No key in the keyring nor in the environment (raised before any request)."""

    def __init__(self, preset: str, env_vars: tuple[str, ...], service: str) -> None:
        names = " or ".join(env_vars)
        super().__init__(
            f"No key for {preset}: store one in the system keyring (service {service!r}, username {preset!r}) "
            f"or set {names}."
        )


class PermissionDenied(FatalError):
    code = "permission"


class NoCredit(FatalError):
    code = "credit"


class ModelUnavailable(FatalError):
    code = "model"


class RoutingError(FatalError):
    code = "routing"


class ToolsRefused(FatalError):
    code = "tools"


class HistoryRefused(FatalError):
    code = "history"


class InternalError(FatalError):
    code = "internal"


_CLASSES: dict[str, type[ProviderError]] = {
    "context_too_long": ContextTooLong,
    "refusal": Refusal,
    "busy": Busy,
    "overloaded": Overloaded,
    "rate_limit": RateLimited,
    "tpm_input": InputTokensPerMinute,
    "no_connection": NoConnection,
    "timeout": Timeout,
    "stream_cut": StreamCut,
    "unreadable_answer": UnreadableAnswer,
    "daily_quota": DailyQuota,
    "tool_call_unreadable": ToolCallUnreadable,
    "key": KeyRefused,
    "permission": PermissionDenied,
    "credit": NoCredit,
    "model": ModelUnavailable,
    "routing": RoutingError,
    "tools": ToolsRefused,
    "history": HistoryRefused,
    "internal": InternalError,
}


def make_error(code: str, **kwargs: Any) -> ProviderError:
    """The error class of ``code``, built with ``kwargs`` (see :class:`ProviderError`)."""
    cls = _CLASSES.get(code)
    if cls is None:
        raise ValueError(f"unknown provider error code {code!r}")
    return cls(code=code, **kwargs)


# ---------------------------------------------------------------------------------------------
# Configuration errors: raised before any request, not part of the code table.


class ConfigurationError(ValueError):
    """The provider cannot be set up as asked (unknown preset, missing address, unsupported mode)."""


class UnknownPreset(ConfigurationError):
    def __init__(self, preset: str, known: list[str]) -> None:
        super().__init__(f"Unknown provider preset {preset!r}; known presets: {', '.join(known)}.")
        self.preset = preset
        self.known = known


class UnsupportedMode(ConfigurationError):
    """A preset cannot answer in the mode asked (streamed or whole)."""


class NoticeRequired(ConfigurationError):
    """A remote route was asked for without accepting its data notice (S4.4)."""


# ---------------------------------------------------------------------------------------------
# Attempts and retry decisions.


@dataclass
class Attempt:
    """One failed attempt, as the runner saves it (S4.10): never holds a key or a local path."""

    code: str
    status: int | None
    provider_code: str | None
    message: str | None
    seconds: float
    kind: str = ""
    retry_after: float | None = None
    request_sha256: str | None = None
    at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "kind": self.kind,
            "status": self.status,
            "provider_code": self.provider_code,
            "message": self.message,
            "seconds": round(self.seconds, 3),
            "retry_after": self.retry_after,
            "request_sha256": self.request_sha256,
            "at": self.at,
        }


@dataclass(frozen=True)
class RetryDecision:
    """Whether to send a request again: ``no``, ``transient(delay)`` or ``rate_limit(retry_after)``."""

    kind: Literal["no", "transient", "rate_limit"]
    delay: float = 0.0

    @classmethod
    def no(cls) -> RetryDecision:
        return cls("no")

    @classmethod
    def transient(cls, delay: float) -> RetryDecision:
        return cls("transient", max(0.0, delay))

    @classmethod
    def rate_limit(cls, retry_after: float) -> RetryDecision:
        return cls("rate_limit", max(0.0, retry_after))

    @property
    def retry(self) -> bool:
        return self.kind != "no"


_TRANSIENT = {"busy", "overloaded", "no_connection", "timeout", "stream_cut", "unreadable_answer"}


@dataclass(frozen=True)
class RetryPolicy:
    """The bounded retry budget inside one ``complete()`` call.

    ``max_attempts`` counts every send of the request (the first one too). A ``Retry-After``
    longer than ``max_retry_after`` is not waited for: the error goes to the caller, who keeps
    the cell. Daily quotas and fatal errors are never retried; a per-minute input-token quota
    is retried once, because a second refusal of the same request means it never fits (S4.9).
    """

    max_attempts: int = 4
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 120.0
    default_rate_limit_delay: float = 10.0
    default_tpm_delay: float = 60.0

    def backoff(self, attempt: int) -> float:
        return min(self.base_delay * (2 ** max(0, attempt - 1)), self.max_delay)

    def decide(self, error: ProviderError, attempt: int, previous: list[str] | None = None) -> RetryDecision:
        """Decide after the ``attempt``-th send failed with ``error``; ``previous`` are earlier codes."""
        if attempt >= self.max_attempts:
            return RetryDecision.no()
        code = error.code
        if code == "tpm_input":
            if previous and previous[-1] == "tpm_input":
                return RetryDecision.no()
            wait = error.retry_after if error.retry_after is not None else self.default_tpm_delay
            return RetryDecision.rate_limit(wait) if wait <= self.max_retry_after else RetryDecision.no()
        if code == "rate_limit":
            wait = error.retry_after if error.retry_after is not None else max(
                self.default_rate_limit_delay, self.backoff(attempt)
            )
            return RetryDecision.rate_limit(wait) if wait <= self.max_retry_after else RetryDecision.no()
        if code in _TRANSIENT:
            if error.retry_after is not None:
                if error.retry_after > self.max_retry_after:
                    return RetryDecision.no()
                return RetryDecision.transient(error.retry_after)
            return RetryDecision.transient(self.backoff(attempt))
        return RetryDecision.no()
