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

from functools import lru_cache

from pytest_assistant_eval.judging.normalise import Folded, fold, merge_spans, windows

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
    """A cap stated with its value: "limit of 8 tool calls", "8 tool calls max", "2000 characters cut",
    "only 8 tool calls"."""
    values = "|".join(str(v) for v in sorted(set(cap_values), reverse=True))
    if not values:
        return None
    return re.compile(r"(?i)\b" + _CAP_WORDS + r"\s+(?:of\s+)?(?:" + values + r")\s+" + _CAP_UNITS + r"\b"
                      r"|\b(?:" + values + r")[\s-]+" + _CAP_UNITS + r"\s+" + _CAP_WORDS + r"\b"
                      r"|\b(?:only|just|no more than|not more than)\s+(?:(?:make|use|do|have|get)\s+)?(?:"
                      + values + r")[\s-]+" + _CAP_UNITS + r"\b"
                      r"|\b(?:" + values + r")\s+characters cut\b")


# The spellings a scan reads besides the text itself (judging/normalise.py): names in look-alike
# letters, with digits for letters or spaced apart; caps with their numbers in words.
_PLAIN = ({},)
_NAME_FORMS = ({}, {"leet": True, "spaced": True, "one": "l"}, {"leet": True, "spaced": True, "one": "i"})
_CAP_FORMS = ({}, {"numbers": True})


@lru_cache(maxsize=64)
def _base(text: str) -> Folded:
    return fold(text)


@lru_cache(maxsize=1024)
def _folded(snippet: str, options: tuple[tuple[str, object], ...]) -> Folded:
    return fold(snippet, **dict(options))  # type: ignore[arg-type]


def _spans(pattern: re.Pattern[str], text: str, forms: tuple[dict, ...], *,
           plain_read: bool = False) -> list[tuple[int, int]]:
    """The original spans of every match of ``pattern`` in any folded form of ``text``
    (``plain_read``: the text itself was read already, by the plain pass).

    The text is read whole once in its base spelling (look-alikes, format characters); the
    word-level spellings (digits for letters, spaced letters, numbers in words) change only a
    few places, so only windows around those are read again, folded."""
    found: set[tuple[int, int]] = set()
    base = _base(text)
    if not (plain_read and base.text == text):
        found.update(base.span(m.start(), m.end()) for m in pattern.finditer(base.text) if m.end() > m.start())
    for options in forms:
        if not options:
            continue
        for a, b in windows(base.text, **{k: v for k, v in options.items() if k != "one"}):
            snippet = base.text[a:b]
            folded = _folded(snippet, tuple(sorted(options.items())))
            if folded.text == snippet:
                continue
            for m in pattern.finditer(folded.text):
                if m.end() > m.start():
                    sa, sb = folded.span(m.start(), m.end())
                    found.add(base.span(a + sa, a + sb))
    return sorted(found)


def _replace(text: str, spans: list[tuple[int, int]], token: str) -> str:
    """``text`` with every span (merged where they overlap) replaced by ``token``."""
    for a, b in reversed(merge_spans(spans)):
        text = text[:a] + token + text[b:]
    return text


def _phrase(texts: Iterable[str]) -> str:
    return "|".join(re.escape(t) for t in sorted({t for t in texts if t}, key=len, reverse=True))


# Words a provider appends to a model's name to route or pin it (OpenRouter's variants, Ollama's tags):
# they are ordinary English and say nothing of which model answered, so they are not hidden on their own.
ROUTING_TAGS = frozenset({"free", "latest", "beta", "nitro", "floor", "online", "extended", "thinking"})


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
                # A routing tag (``:free``, ``:latest``) names no model: hiding the word would blank
                # ordinary prose ("free of charge") and flag it as a leak.
                if len(part) >= 3 and part.lower() not in ROUTING_TAGS:
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
        # The same names and phrases in other spellings (C1aude, G P T, ＤＡＴＡ, "eight tool calls"):
        # what the plain passes left, read folded and replaced in the original text.
        if self._models is not None:
            text = _replace(text, _spans(self._models, text, _NAME_FORMS, plain_read=True), ASSISTANT)
        text = _replace(text, _spans(_FAMILY, text, _NAME_FORMS, plain_read=True), ASSISTANT)
        if self._level_phrases is not None:
            text = _replace(text, _spans(self._level_phrases, text, _NAME_FORMS, plain_read=True), LEVEL)
        if self._caps is not None:
            text = _replace(text, _spans(self._caps, text, _CAP_FORMS, plain_read=True), CAP)
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
    """Everything in ``text`` that still names a model, a level, a cap or the time of a run, read
    in every spelling :mod:`normalise` folds (look-alike letters, digits for letters, spacing)."""
    found: list[str] = []
    blinder = Blinder(context.model_names, context.level_names, ())
    if blinder._models is not None:
        found += [f"names a model ({text[a:b]!r})" for a, b in _spans(blinder._models, text, _NAME_FORMS)]
    found += [f"names a model family ({text[a:b]!r})" for a, b in _spans(_FAMILY, text, _NAME_FORMS)]
    if blinder._level_phrases is not None:
        found += [f"names a level ({text[a:b]!r})" for a, b in _spans(blinder._level_phrases, text, _NAME_FORMS)]
    folded = fold(text).text
    lowered = folded.lower()
    found += [f"names a cap ({name})" for name in CAP_FIELDS if name in lowered]
    caps = _cap_pattern(context.cap_values)
    if caps is not None:
        found += [f"names a cap ({text[a:b]!r})" for a, b in _spans(caps, text, _CAP_FORMS)]
    found += [f"names the time of a run ({name})" for name in _TIME_FIELDS if name in lowered]
    for stamp in context.times:
        for form in sorted(time_forms(stamp)):
            if form and form in folded:
                found.append(f"names the time of a run ({form!r})")
                break
    return list(dict.fromkeys(found))
