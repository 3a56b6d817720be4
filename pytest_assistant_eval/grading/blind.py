"""Blinding and the leak scan (S6.5): a judge must not learn who wrote a cell, at which level.

``Blinder`` rewrites every text that goes into a judge's request: model and family names
become ``[assistant]``, the levels' escalation sentences ``[escalation sentence]``, phrases
naming a level ``[level]``, and the sizes of cut tool results are hidden. ``leaks`` then
reads the request exactly as it will be sent and names whatever still gives away a model, a
level, a cap or the time of a run; the caller sends nothing when any request has one. The
scan is deliberately separate from the rewriting: a rewrite that misses a form is caught by
the scan instead of reaching the judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

ASSISTANT = "[assistant]"
LEVEL = "[level]"
ESCALATION = "[escalation sentence]"
CAP = "[cap]"

#: Family names of models a judge could recognise; matched as the start of a word, with any
#: version suffix (gpt-4o-mini, claude-3.5, llama3.1:8b).
FAMILIES = ("chatgpt", "gpt", "openai", "claude", "anthropic", "gemini", "gemma", "llama", "mistral", "mixtral",
            "codestral", "qwen", "qwq", "deepseek", "grok", "cohere", "command-r", "phi-", "granite", "nemotron",
            "kimi", "olmo", "falcon", "opus", "sonnet", "haiku")
_FAMILY = re.compile(r"(?i)(?<![A-Za-z0-9])(?:" + "|".join(re.escape(f) for f in FAMILIES) + r")(?:[\w.:/-]*\w)?")

#: Names of the level setting's fields: a text holding one is talking about the setting.
CAP_FIELDS = ("max_tool_calls", "max_rounds", "max_output_tokens", "result_cap_chars", "context_window",
              "compact_at", "keep_last_rounds", "cap_hits", "setting_key")
_CAP_WORDS = r"(?:limit|cap|caps|capped|maximum|max|budget|allowance|quota|allowed|at most|up to)"
_CAP_UNITS = r"(?:tool[ -]?calls?|calls?|rounds?|(?:output )?tokens?|characters?|chars?)"
_CUT = re.compile(r"\[\.\.\. ?\d[\d,]* characters cut by the result cap\]")
# Record fields that hold a run's times. "started_at" and "finished_at" are not among them: the world's
# background runs have fields of those names, which a tool result shows rightly.
_TIME_FIELDS = ("conversation_seconds", "stopped_at", "resumed_at", "requests_by_day")


def _cap_pattern(cap_values: Iterable[int]) -> re.Pattern[str] | None:
    """A cap stated with its value: "limit of 8 tool calls", "8 tool calls max", "2000 characters cut"."""
    values = "|".join(str(v) for v in sorted(set(cap_values), reverse=True))
    if not values:
        return None
    return re.compile(r"(?i)\b" + _CAP_WORDS + r"\s+(?:of\s+)?(?:" + values + r")\s+" + _CAP_UNITS + r"\b"
                      r"|\b(?:" + values + r")[\s-]+" + _CAP_UNITS + r"\s+" + _CAP_WORDS + r"\b"
                      r"|\b(?:" + values + r")\s+characters cut\b")


def _phrase(texts: Iterable[str]) -> str:
    return "|".join(re.escape(t) for t in sorted({t for t in texts if t}, key=len, reverse=True))


@dataclass
class Blinder:
    """What to hide for one grading: the models of every folder, the levels and their sentences, run times."""

    model_names: tuple[str, ...]
    level_names: tuple[str, ...]
    escalation_sentences: tuple[str, ...]
    cap_values: tuple[int, ...] = ()
    _models: re.Pattern[str] | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        names: set[str] = set()
        for name in self.model_names:
            for part in {name, *re.split(r"[/:]", name)}:
                part = part.strip()
                if len(part) >= 3:
                    names.add(part)
        self._models = (re.compile(r"(?i)(?<![\w-])(?:" + _phrase(names) + r")(?![\w-])") if names else None)
        levels = _phrase(self.level_names)
        self._level_phrases = re.compile(
            r"(?i)(?:\b(?:the\s+)?(?:" + levels + r")[\s-]+(?:level|setting|tier|mode)s?\b"
            r"|\blevels?\s*[:=]\s*[\"']?(?:" + levels + r")\b"
            r"|\blevel\s+(?:" + levels + r")\b"
            r"|__(?:" + levels + r")__)") if levels else None
        self._sentences = [re.compile(r"(?i)" + r"\s+".join(re.escape(w) for w in s.split()))
                           for s in sorted(self.escalation_sentences, key=len, reverse=True) if s.strip()]
        self._caps = _cap_pattern(self.cap_values)

    def blind(self, text: str) -> str:
        """The text as a judge may see it."""
        for sentence in self._sentences:
            text = sentence.sub(ESCALATION, text)
        text = _CUT.sub("[... the rest of this result was cut]", text)
        if self._models is not None:
            text = self._models.sub(ASSISTANT, text)
        text = _FAMILY.sub(ASSISTANT, text)
        if self._level_phrases is not None:
            text = self._level_phrases.sub(LEVEL, text)
        if self._caps is not None:
            # "I reached my limit of 8 tool calls" tells the level: hidden like a level phrase.
            text = self._caps.sub(CAP, text)
        return text


@dataclass(frozen=True)
class LeakContext:
    """What would give a cell away: every model and level of the grading, the caps, the run's times."""

    model_names: tuple[str, ...]
    level_names: tuple[str, ...]
    cap_values: tuple[int, ...]
    times: tuple[str, ...]  # ISO timestamps of the runs, the cell and its resumes


def time_forms(stamp: str) -> set[str]:
    """The forms a run's time may be written in: the stamp itself and its minute, with T or a space."""
    m = re.match(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})", stamp or "")
    if not m:
        return {stamp} if stamp else set()
    return {stamp, f"{m.group(1)}T{m.group(2)}", f"{m.group(1)} {m.group(2)}"}


def leaks(text: str, context: LeakContext) -> list[str]:
    """Everything in ``text`` that still names a model, a level, a cap or the time of a run."""
    found: list[str] = []
    blinder = Blinder(context.model_names, context.level_names, ())
    if blinder._models is not None:
        found += [f"names a model ({m.group(0)!r})" for m in blinder._models.finditer(text)]
    found += [f"names a model family ({m.group(0)!r})" for m in _FAMILY.finditer(text)]
    if blinder._level_phrases is not None:
        found += [f"names a level ({m.group(0)!r})" for m in blinder._level_phrases.finditer(text)]
    lowered = text.lower()
    found += [f"names a cap ({name})" for name in CAP_FIELDS if name in lowered]
    caps = _cap_pattern(context.cap_values)
    if caps is not None:
        found += [f"names a cap ({m.group(0)!r})" for m in caps.finditer(text)]
    found += [f"names the time of a run ({name})" for name in _TIME_FIELDS if name in lowered]
    for stamp in context.times:
        for form in sorted(time_forms(stamp)):
            if form and form in text:
                found.append(f"names the time of a run ({form!r})")
                break
    return list(dict.fromkeys(found))
