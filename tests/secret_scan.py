"""The secret scan (issue 23, items 13-16): a planted key, the fault modes that echo it, every output searched.

A key is planted in the provider's environment variable; runs go to fake servers on
127.0.0.1 that echo it back the ways real services and proxies do (a 500 or 429 echoing the
request's headers in ``error.metadata.headers``, a plain-text error and a garbled stream event
carrying it near character 300, a malformed answer under ``-l -vv``, a kept cell whose tool
arguments hold it); every run writes ``--junitxml``. Then every file written (results
folders, their hidden and temporary files, the junit file) and every console line is searched
for the key and for every 8-character piece of it. Used by ``tests/test_secret_scan.py`` (the
short form, in CI) and ``benchmarks/secret_scan.py`` (the whole matrix, with its figures).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.provider_runs_helpers import console, run_env, run_eval
from tests.providers.fakes.base import Answer, Call, Fault, Raw
from tests.reference_fake import REFERENCE_FAKES

#: Shaped like no service's keys, so only the run's own secrets can find it (not a key pattern).
KEY = "Qx7Wv93mKt2LpZr8-hN4cYd6"
#: The same with non-ASCII letters (an HTTP header cannot carry it).
KEY_NON_ASCII = "Qx7Wv93mKt2LpZr8-hÑ4cÿd6"
PIECE = 8


def pieces(key: str, size: int = PIECE) -> list[str]:
    """The key and every ``size``-character piece of it, also as JSON and XML escape them."""
    found = {key, *(key[i:i + size] for i in range(len(key) - size + 1))}
    escaped = {json.dumps(p)[1:-1] for p in found} | {"".join(c if ord(c) < 128 else f"&#{ord(c)};" for c in p)
                                                      for p in found}
    return sorted(found | escaped)


def key_forms(key: str) -> dict[str, str]:
    """Every form a key is given back in (issue 31, item A): by name."""
    cut = len(key) // 2
    return {
        "whole": key,
        "masked with stars and an ellipsis": f"{key[:9]}****…{key[-4:]}",
        "masked with dots": f"{key[:4]}...{key[-4:]}",
        "its tail": key[6:],
        "missing its first character": key[1:],
        "upper-cased": key.upper(),
        "lower-cased": key.lower(),
        "split by a line break": key[:cut] + "\n" + key[cut:],
        "split by a space": key[:cut - 3] + " " + key[cut - 3:],
        "split by an escaped line break": key[:cut] + "\\n" + key[cut:],
        "JSON-escaped": "".join(f"\\u{ord(c):04x}" for c in key),
        "one letter JSON-escaped": f"\\u{ord(key[0]):04x}" + key[1:],
        "URL-escaped": "".join(f"%{ord(c):02X}" for c in key),
        "XML-escaped": "".join(f"&#{ord(c)};" for c in key),
        "XML-escaped in hex": "".join(f"&#x{ord(c):x};" for c in key),
        "URL-escaped twice": "".join(f"%25{ord(c):02X}" for c in key),
        "full-width": "".join(chr(ord(c) + 0xFEE0) if 33 <= ord(c) <= 126 else c for c in key),
        "every character spaced": " ".join(key),
        "split by a zero-width space": key[:cut] + "\u200b" + key[cut:],
    }


def _views(text: str) -> list[str]:
    """The text as a reader could see a key in it: folded, without whitespace, unescaped (independent of
    the harness's own redaction, so the scan checks it rather than repeats it)."""
    import html
    import re
    import urllib.parse

    import unicodedata

    folded = unicodedata.normalize("NFKC", text).lower()
    squeezed = re.sub(r"\s+|(?:\\+[nrt])|\u200b", "", folded)
    unescaped = re.sub(r"\\+u([0-9a-f]{4})", lambda m: chr(int(m.group(1), 16)), squeezed)
    return [folded, squeezed, unescaped, urllib.parse.unquote(urllib.parse.unquote(squeezed)),
            html.unescape(squeezed)]


def leaked_pieces(text: str, key: str, size: int = PIECE) -> list[str]:
    """Every ``size``-character piece of ``key`` found in any view of ``text``."""
    views = _views(text)
    found = []
    for at in range(len(key) - size + 1):
        piece = key[at:at + size].lower()
        if any(piece in view for view in views):
            found.append(piece)
    return found


def _json(status: int, data: Any, headers: dict[str, str] | None = None) -> Raw:
    return Raw(status=status, headers={"content-type": "application/json", **(headers or {})},
               body=json.dumps(data).encode())


def echoed_headers(key: str, status: int) -> Raw:
    """An error whose metadata echoes the request's headers (an OpenRouter-style upstream error)."""
    reset = str(int((time.time() + 600) * 1000))
    headers = {"Authorization": f"Bearer {key}", "X-RateLimit-Limit": "20", "X-RateLimit-Remaining": "0",
               "X-RateLimit-Reset": reset}
    reply_headers = {"retry-after": "500"} if status == 429 else {}
    return _json(status, {"error": {"message": "Upstream error", "code": status,
                                    "metadata": {"headers": headers, "provider_name": "Fake"}}}, reply_headers)


def plain_text_near_300(key: str, status: int = 503) -> Raw:
    """A proxy's plain-text error with the key straddling character 300."""
    text = "upstream said: " + "x" * 265 + f" token {key} " + "y" * 200  # the key from character 288
    return Raw(status=status, headers={"content-type": "text/plain"}, body=text.encode())


def garbled_event_near_300(key: str) -> Raw:
    """A stream whose one event is not JSON and carries the key near its character 300."""
    data = '{"choices": [{"delta": {"content": "' + "z" * 250 + f' {key} ' + "w" * 100  # the key from 288
    return Raw(status=200, headers={"content-type": "text/event-stream"},
               chunks=[f"data: {data}\n\n".encode(), b"data: [DONE]\n\n"])


def malformed_answer() -> Raw:
    """An answer that is JSON but not the wire format."""
    return _json(200, {"choices": ["surprise"], "usage": {"prompt_tokens": "lots"}})


@dataclass(frozen=True)
class Case:
    name: str
    preset: str
    items: tuple[Any, ...]
    extra: tuple[str, ...] = ()
    key: str = KEY
    select: str = "G01"
    grade: bool = False  # grade the folder and write its report too (both scanned)


def forms_text(key: str) -> str:
    """One text holding every form of ``key`` (issue 31, item A), one form a line."""
    return "\n".join(f"{name}: {form}" for name, form in key_forms(key).items())


def forms_error(key: str, status: int = 500) -> Raw:
    """A provider error whose message gives the key back in every form."""
    return _json(status, {"error": {"message": "The key ending " + key[6:] + " is revoked.\n" + forms_text(key),
                                    "code": status}})


def forms_cases(presets: Iterable[str]) -> list[Case]:
    """Every key form through each provider path: an error text, an answer's text and reasoning, tool arguments."""
    busy = 4
    out = []
    for preset in presets:
        out += [
            Case(f"every key form in an error, {preset}", preset, (forms_error(KEY),) * busy),
            Case(f"every key form in an answer and its reasoning, {preset}", preset,
                 (Answer(text=forms_text(KEY), reasoning=forms_text(KEY)),), grade=True),
            Case(f"every key form in tool arguments, {preset}", preset,
                 (Answer(calls=[Call("search_contacts", {"query": forms_text(KEY)})]),
                  Fault("rate_limit", retry_after=500)), (), KEY, "T07"),
        ]
    return out


def cases(short: bool) -> list[Case]:
    """The fault matrix; ``short`` is the CI form (one case per fault mode, one provider)."""
    busy = 4  # every attempt of a request answers the same (the retry budget is 4 sends)
    out = [*forms_cases(["openai"] if short else ["openai", "openrouter", "anthropic", "gemini"]),
        Case("429 echoing headers", "openrouter", (echoed_headers(KEY, 429),)),
        Case("500 echoing headers", "openai", (echoed_headers(KEY, 500),) * busy),
        Case("plain text near 300", "openai", (plain_text_near_300(KEY),) * busy, ("--no-stream",)),
        Case("garbled event near 300", "openai", (garbled_event_near_300(KEY),) * busy),
        Case("malformed answer -l -vv", "openai", (malformed_answer(),) * busy, ("--no-stream",)),
        Case("kept cell's tool arguments", "openai",
             (Answer(calls=[Call("search_contacts", {"query": KEY})]), Fault("rate_limit", retry_after=500)),
             (), KEY, "T07"),
        Case("non-ASCII key", "openai", (), (), KEY_NON_ASCII),
    ]
    if short:
        return out
    more = [
        Case("429 echoing headers, openai", "openai", (echoed_headers(KEY, 429),)),
        Case("500 echoing headers, openrouter", "openrouter", (echoed_headers(KEY, 500),) * busy),
        Case("plain text near 300, streamed", "openai", (plain_text_near_300(KEY),) * busy),
        Case("plain text near 300, anthropic", "anthropic", (plain_text_near_300(KEY),) * busy),
        Case("plain text near 300, gemini", "gemini", (plain_text_near_300(KEY),) * busy),
        Case("plain text near 300, fatal", "openai", (plain_text_near_300(KEY, 400),)),
        Case("malformed answer, streamed", "openai", (malformed_answer(),) * busy),
        Case("kept cell's tool arguments, openrouter", "openrouter",
             (Answer(calls=[Call("search_contacts", {"query": KEY})]), Fault("rate_limit", retry_after=500)),
             (), KEY, "T07"),
        Case("non-ASCII key, anthropic", "anthropic", (), (), KEY_NON_ASCII),
        Case("user model with the key", "openai", (), ("--user-model", "openai:user-sim"), KEY, "T07"),
    ]
    return out + more


@dataclass
class Scan:
    runs: int = 0
    files: int = 0
    found: list[str] = field(default_factory=list)  # "<where>: <piece>"
    consoles: list[str] = field(default_factory=list)

    @property
    def pieces_found(self) -> int:
        return len(self.found)


def _search(text: str, where: str, key: str, scan: Scan) -> None:
    for piece in leaked_pieces(text, key):
        scan.found.append(f"{where}: {piece!r}")


def run_case(case: Case, calibration: Path, world: Path, tmp: Path, scan: Scan) -> None:
    cls, suffix = REFERENCE_FAKES[case.preset]
    out = tmp / f"results-{scan.runs}"
    junit = tmp / f"junit-{scan.runs}.xml"
    scan.runs += 1
    env = run_env(key=case.key)
    with cls(calibration, world) as fake:
        fake.add(*case.items)
        extra = case.extra
        if "--user-model" in extra:
            extra = (*extra, f"--user-base-url={fake.url}{suffix}")
        result = run_eval(world, out, "--model", f"{case.preset}:oracle", f"--base-url={fake.url}{suffix}",
                          "--accept-data-notice", "--levels", "basic", "--repeats", "1", "-k", case.select,
                          "-l", "-vv", f"--junitxml={junit}", *extra, env=env)
    text = console(result)
    written = [*(p for p in out.rglob("*") if p.is_file()), junit]
    if case.grade:
        grading = tmp / f"grading-{scan.runs}"
        for argv in (["grade-ai", str(out), "--dir", str(grading), "--single-model"],
                     ["report", "--dir", str(grading)]):
            done = subprocess.run([sys.executable, "-m", "pytest_assistant_eval", *argv], capture_output=True,
                                  text=True, env=env, cwd=tmp, timeout=240)
            text += f"\n$ {argv[0]} (exit {done.returncode})\n{done.stdout}{done.stderr}"
        written += [p for p in grading.rglob("*") if p.is_file()]
    scan.consoles.append(f"== {case.name} (exit {result.ret})\n{text}")
    _search(text, f"{case.name}: console", case.key, scan)
    for path in written:
        if not path.exists():
            continue
        scan.files += 1
        _search(path.read_bytes().decode("utf-8", "replace"), f"{case.name}: {path.relative_to(tmp)}",
                case.key, scan)


def scan_all(calibration: Path, world: Path, tmp: Path, *, short: bool) -> Scan:
    scan = Scan()
    for case in cases(short):
        run_case(case, calibration, world, tmp, scan)
    return scan
