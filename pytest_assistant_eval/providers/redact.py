"""Redaction of provider texts before they are shown, saved or raised (S4.10, S5.5, S9.3).

Every message that leaves the provider layer (error messages, failed attempts, request
records) passes through :func:`redact`. It removes the secrets it is given, anything that
looks like a bearer token or an API key, ``key=`` query parameters and absolute local paths
(home directories, ``/tmp/...``, the current directory). It must never raise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

KEY_MARK = "[key]"
PATH_MARK = "[path]"

# Shapes of keys the supported services hand out; redacted even when not given as a secret,
# because a provider may echo a key we never held (another one in the same error, say).
_KEY_SHAPES = re.compile(
    r"(?:sk-(?:or-v1-|ant-(?:api\d\d-)?|proj-)?[A-Za-z0-9_\-]{12,}"
    r"|AIza[0-9A-Za-z_\-]{20,}"
    r"|sk-[A-Za-z0-9_\-]{0,12}\.\.\.[A-Za-z0-9_\-]{2,8})"
)
_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]+")
_QUERY_KEY = re.compile(r"(?i)([?&](?:key|api_key|apikey|api-key|access_token|token)=)[^&\s\"'#]+")
_HEADER_KEY = re.compile(r"(?i)\b(x-api-key|x-goog-api-key|api-key|authorization)(\"?\s*[:=]\s*\"?)[^\s\",}]+")
_PATHS = re.compile(r"(?<![\w.:/])(?:/home/[^/\s\"']+|/Users/[^/\s\"']+|/root|/tmp|/var/folders|/private/tmp)(?:/[^\s\"'<>]*)?")


def _local_prefixes() -> list[str]:
    prefixes: list[str] = []
    for candidate in (os.path.expanduser("~"), os.getcwd()):
        if candidate and candidate not in ("/", "") and len(candidate) > 1:
            prefixes.append(candidate)
    # Longest first so the cwd inside the home directory is replaced as a whole.
    return sorted(set(prefixes), key=len, reverse=True)


def redact(text: str | None, secrets: Iterable[str | None] = ()) -> str:
    """Return ``text`` without keys, tokens, ``key=`` parameters or absolute local paths."""
    if not text:
        return text or ""
    out = str(text)
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        out = out.replace(secret, KEY_MARK)
    out = _BEARER.sub(lambda m: f"{m.group(1)} {KEY_MARK}", out)
    out = _QUERY_KEY.sub(lambda m: f"{m.group(1)}{KEY_MARK}", out)
    out = _HEADER_KEY.sub(lambda m: f"{m.group(1)}{m.group(2)}{KEY_MARK}", out)
    out = _KEY_SHAPES.sub(KEY_MARK, out)
    for prefix in _local_prefixes():
        out = out.replace(prefix, PATH_MARK)
    out = _PATHS.sub(PATH_MARK, out)
    return out


def clip(text: str | None, limit: int = 300) -> str | None:
    """At most ``limit`` characters, marked with an ellipsis when cut."""
    if text is None:
        return None
    return text if len(text) <= limit else text[: limit - 1] + "…"


def redact_clip(text: str | None, secrets: Iterable[str | None] = (), limit: int = 300) -> str | None:
    """Redact, then cut to ``limit`` characters (in this order: a cut must not expose half a key)."""
    if text is None:
        return None
    return clip(redact(text, secrets), limit)
