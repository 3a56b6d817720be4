"""The one redaction policy of every writer (S4.10, S5.5, S9.3; issue 23 items 13-16).

Checkpoints, spent.json, records, run.json, the console, junit and grade-ai's messages all pass
through :func:`redact` (``records.redact`` is this function). It removes the run's own keys
(a :class:`~pytest_assistant_eval.secret.Secrets`: weak keys are never searched for,
see that module), anything shaped like a bearer token, an API key or a key header, ``key=``
query parameters, and absolute local paths. It must never raise.

Redact first, cut after (:func:`redact_clip`): a text cut before it is redacted keeps the
part of a key before the cut, which no longer matches the whole key. Callers that hold a long
provider text keep it whole up to :data:`PROVIDER_TEXT_LIMIT` characters and cut it only after
redacting.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from pytest_assistant_eval.secret import Secret, Secrets
from pytest_assistant_eval.secret_forms import replace_keys, replace_keys_each

KEY_MARK = "[key]"
PATH_MARK = "[path]"

#: How much of a provider's error text or unreadable answer is kept before it is redacted and cut
#: to 300 characters. Far beyond 300, so the final cut falls inside text already redacted.
PROVIDER_TEXT_LIMIT = 64 * 1024

# Shapes of keys the supported services hand out; redacted even when not given as a secret,
# because a provider may echo a key we never held (another one in the same error, say).
_KEY_SHAPES = re.compile(
    r"(?:\bsk-(?:or-v1-|ant-(?:api\d\d-)?|proj-)?[A-Za-z0-9_\-]{12,}"
    r"|AIza[0-9A-Za-z_\-]{20,}"
    r"|\bsk-[A-Za-z0-9_\-]{0,12}\.\.\.[A-Za-z0-9_\-]{2,8})"
)
# A token: with a digit or a symbol, or long; so "the basic level" is text, "Bearer abc.def" a token.
_TOKEN = r"(?:(?=[A-Za-z0-9._~+/=\-]*[0-9._~+/=\-])[A-Za-z0-9._~+/=\-]+|[A-Za-z0-9._~+/=\-]{16,})"
_BEARER = re.compile(r"(?i)\b(bearer|basic)(\s+)" + _TOKEN)
_QUERY_KEY = re.compile(r"(?i)([?&](?:key|api_key|apikey|api-key|access_token|token)=)[^&\s\"'#\\]+")
# A key header as text (``x-api-key: ...``) or as JSON (``"x-api-key":"..."``, an echoed header map).
_HEADER_KEY = re.compile(
    r"(?i)\b(x-api-key|x-goog-api-key|api-key|authorization|proxy-authorization|cookie)"
    r"(\"?\s*[:=]\s*\"?)(?!(?:bearer|basic)\s)(?=[^\s\",}\\]*\d)[^\s\",}\\]{12,}")
_HEADER_WORDS = ("api-key", "authorization", "cookie")
_HOME = str(Path.home())
_ROOTS = ("home", "root", "tmp", "Users", "var", "private", "work", "mnt", "opt")
_ABS_PATH = re.compile(r"(?<![\w.:/])/(?:" + "|".join(_ROOTS) + r")(?:/[^\s\"'<>\\]*)?")
_ROOT_MARKS = tuple(f"/{root}" for root in _ROOTS)
#: Whether any of ``_ROOT_MARKS`` is in a text, in one search (its leading ``/`` is found at C speed;
#: nine ``in`` tests of a record took 0.25 ms, this 0.013).
_ROOT_MARK = re.compile("/(?:" + "|".join(_ROOTS) + ")")


def _local_prefixes() -> list[str]:
    """The home folder and the current folder (longest first: the cwd inside home goes whole)."""
    prefixes = {p for p in (_HOME, _cwd()) if p and p != "/" and len(p) > 1}
    return sorted(prefixes, key=len, reverse=True)


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:  # the folder was removed under us
        return ""


def redact(text: str | None, secrets: Secrets | Iterable[str | Secret | None] = (), *, paths: bool = True) -> str:
    """``text`` without the run's keys, key-shaped strings, key headers and parameters, local paths
    (``paths=False``: keys only, for a traceback whose file names help whoever reads it).

    Cheap substring tests come first: most texts hold none of these, and the regular
    expressions then never run (records and checkpoints are redacted before every write).
    """
    if not text:
        return text or ""
    out = str(text)
    held = Secrets.of(secrets)
    needles = tuple(held.needles())
    if needles:
        out = replace_keys(out, needles, KEY_MARK, held.names)  # every form: pieces, masked, folded, split, escaped
    lowered = out.lower()
    held_text = out
    if "bearer" in lowered or "basic" in lowered:
        out = _BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{KEY_MARK}", out)
    if "=" in out and ("?" in out or "&" in out):
        out = _QUERY_KEY.sub(lambda m: f"{m.group(1)}{KEY_MARK}", out)
    if any(word in lowered for word in _HEADER_WORDS):
        seen = lowered if out is held_text and out.isascii() else _case_blind(out)
        if _header_word_then_separator(seen):
            out = _HEADER_KEY.sub(lambda m: f"{m.group(1)}{m.group(2)}{KEY_MARK}", out)
    if "sk-" in out or "AIza" in out:
        out = _KEY_SHAPES.sub(KEY_MARK, out)
    if not paths:
        return out
    for prefix in _local_prefixes():
        if prefix in out:
            out = out.replace(prefix, "~" if prefix == _HOME else PATH_MARK)
    if _ROOT_MARK.search(out) is not None:
        out = _ABS_PATH.sub(PATH_MARK, out)
    return out


def _case_blind(text: str) -> str:
    """``text`` lowered so that every character ``(?i)`` matches to a letter of a header word is that
    letter (the dotted and dotless capital and small i are the two ``str.lower`` leaves otherwise;
    checked over every code point by tests/test_agentdojo_speed.py)."""
    return text.replace("\u0130", "i").replace("\u0131", "i").lower()


def _header_word_then_separator(lowered: str) -> bool:
    r"""Whether a key header's word (``api-key``, ``authorization``, ``cookie``, which every header name
    of ``_HEADER_KEY`` ends with) is followed by its separator (``"?\s*[:=]``) somewhere in the
    text lowered by ``_case_blind``: without one ``_HEADER_KEY`` cannot match. A record that only says "cookie"
    (an e-mail about cookies) was scanned by the case-blind alternation at every position, most of
    redacting a large record (issue 32); ``str.find`` checks it at C speed."""
    for word in _HEADER_WORDS:
        at = lowered.find(word)
        while at >= 0:
            end = at + len(word)
            if lowered.startswith('"', end):
                end += 1
            while end < len(lowered) and lowered[end].isspace():
                end += 1
            if end < len(lowered) and lowered[end] in ":=":
                return True
            at = lowered.find(word, at + 1)
    return False


def redact_keys(text: str, secrets: Secrets | Iterable[str | Secret | None] = ()) -> str:
    """``text`` with only the run's own keys replaced, in every form (no shapes, no paths)."""
    held = Secrets.of(secrets)
    needles = tuple(held.needles())
    return replace_keys(text, needles, KEY_MARK, held.names) if needles and text else text


def redact_keys_each(texts: list[str], secrets: Secrets | Iterable[str | Secret | None] = ()) -> list[str]:
    """``[redact_keys(t, secrets) for t in texts]``, scanned in one pass (``replace_keys_each``)."""
    held = Secrets.of(secrets)
    needles = tuple(held.needles())
    return replace_keys_each(texts, needles, KEY_MARK, held.names) if needles else list(texts)


def clip(text: str | None, limit: int = 300) -> str | None:
    """At most ``limit`` characters, marked with an ellipsis when cut."""
    if text is None:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redact_clip(text: str | None, secrets: Secrets | Iterable[str | Secret | None] = (),
                limit: int = 300) -> str | None:
    """Redact, then cut to ``limit`` characters (in this order: a cut must not expose half a key)."""
    if text is None:
        return None
    return clip(redact(text, secrets), limit)


def provider_text(raw: bytes | str | None) -> str | None:
    """A provider's text as it is kept until redacted: decoded, at most :data:`PROVIDER_TEXT_LIMIT`."""
    if raw is None:
        return None
    if isinstance(raw, (bytes, bytearray)):
        raw = bytes(raw[:PROVIDER_TEXT_LIMIT * 4]).decode("utf-8", "replace")
    return raw[:PROVIDER_TEXT_LIMIT] or None
