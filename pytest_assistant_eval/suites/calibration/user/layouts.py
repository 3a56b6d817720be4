"""A message written as data, read as the lines a person reads (issue 30, third round).

An assistant may answer with a JSON object (``{"proposal": {...}, "next_step": "Reply yes to book
..."}``): its values are what the message says, its keys are labels. ``readable`` turns each JSON
object of a message into lines, a sentence-like string on a line of its own ("Reply yes to book
L-103 ... and charge 288.00 EUR ...") and a short value after its key as a label ("card id:
card-visa-4821"), and keeps the text around it, so the proposal reader reads a proposal in JSON
as it reads one in prose. Written against the fresh held-out cell s11-T17 (now looked at); the
rule is the general reading of JSON. Text with no JSON object comes back unchanged.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["readable"]

#: A string of at least this many words is a sentence of its own, not a labelled value.
SENTENCE_WORDS = 5
_DECODER = json.JSONDecoder()


def _lines(value: Any, label: str, out: list[str]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            _lines(inner, str(key).replace("_", " "), out)
    elif isinstance(value, list):
        for inner in value:
            _lines(inner, label, out)
    elif isinstance(value, str):
        text = " ".join(value.split())
        if len(text.split()) >= SENTENCE_WORDS:
            out.append(text if text[-1:] in ".?!" else f"{text}.")
        elif text:
            out.append(f"{label}: {text}" if label else text)
    elif value is not None and not isinstance(value, bool):
        out.append(f"{label}: {value}" if label else str(value))


def readable(text: str) -> str:
    """``text`` with every JSON object in it written as lines (see the module's docstring)."""
    if "{" not in text:
        return text
    parts: list[str] = []
    at = 0
    while True:
        start = text.find("{", at)
        if start == -1:
            break
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            parts.append(text[at:start + 1])
            at = start + 1
            continue
        lines: list[str] = []
        _lines(value, "", lines)
        parts.append(text[at:start])
        parts.append("\n".join(lines) + "\n")
        at = end
    parts.append(text[at:])
    return "".join(parts)
