"""Text as the scans read it (S6.5, S6.6): one spelling for the many ways a word can be written.

The hint scan and the leak scan match words ("judge", a fence marker, a model's family, "8 tool
calls"). A model that writes them in other letters would slip past a plain match: full-width or
Cyrillic look-alikes (``ＤＡＴＡ``, ``DАТА``), zero-width characters inside a word, digits for
letters (``Anthr0pic``, ``C1aude``), letters spaced apart (``G P T``), numbers in words
("eight tool calls"). :func:`fold` turns a text into one plain spelling and remembers where
each folded character came from, so a match can be named, or replaced, in the original text.

Folding only ever reads; it must never change what a judge is shown by itself. Digits become
letters only inside a word that mixes both (``L-103`` and ``2026`` stay numbers), and spaced
letters are joined only in runs of three or more single letters, so ordinary prose folds to
itself.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Folded", "fold", "merge_spans", "unreversed", "windows"]

# Latin look-alikes among the letters a scan could be fooled by: Cyrillic, Greek, and a few
# symbols that draw angle brackets. NFKC already folds full-width and most compatibility forms.
_CONFUSABLES = {
    # each pair: the look-alike, then the Latin letter it passes for
    **dict(pair for pair in (
        "АA ВB ЕE ЅS ІI ЈJ КK МM НH ОO РP СC ТT ХX УY Ԛq Ԝw "  # Cyrillic capitals
        "аa еe оo рp сc хx уy іi јj ѕs ԁd һh ԛq ԝw ӏl "  # Cyrillic small letters
        "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX "  # Greek capitals
        "αa ιi οo νv ρp τt υu χx κk").split()),
    **{c: "<" for c in "‹«〈⟨❮ᐸ˂⧼"}, **{c: ">" for c in "›»〉⟩❯ᐳ˃⧽"},
    "ı": "i", "ℓ": "l",
}
_LEET = {"0": "o", "1": "l", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"}
_NUMBER_WORDS = {w: n for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen".split())}
_TENS = {w: 10 * n for n, w in enumerate("_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()) if w != "_"}
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORD = "|".join([*_NUMBER_WORDS, *_TENS, *_SCALES])
_NUMBER_RUN = re.compile(r"(?i)\b(?:" + _NUMBER_WORD + r")(?:(?:[\s-]+|\s+and\s+)(?:" + _NUMBER_WORD + r"))*\b")
_MIXED_WORD = re.compile(r"[A-Za-z0-9@$]*(?:[A-Za-z][0-9@$]|[0-9@$][A-Za-z])[A-Za-z0-9@$]*")
_ASCII_OR_ONE = re.compile(r"[\x00-\x7f]+|[^\x00-\x7f]")
_SPACED = re.compile(r"(?<![A-Za-z])[A-Za-z](?:[ .\-_*·]{1,2}[A-Za-z](?![A-Za-z])){2,}")


@dataclass(frozen=True)
class Folded:
    """A folded text and, per folded character, the span of the original it came from."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the folded span ``[start, end)``."""
        if start >= end:
            at = self.starts[start] if start < len(self.starts) else (self.ends[-1] if self.ends else 0)
            return at, at
        return self.starts[start], self.ends[end - 1]


def _rebuild(folded: Folded, pieces: list[tuple[int, int, str]]) -> Folded:
    """``folded`` with each folded span ``[a, b)`` of ``pieces`` replaced by its text."""
    if not pieces:
        return folded
    text, starts, ends = [], [], []
    at = 0
    for a, b, new in pieces:
        text.append(folded.text[at:a])
        starts.extend(folded.starts[at:a])
        ends.extend(folded.ends[at:a])
        if new:
            o_start, o_end = folded.span(a, b)
            text.append(new)
            starts.extend([o_start] * len(new))
            ends.extend([o_end] * len(new))
        at = b
    text.append(folded.text[at:])
    starts.extend(folded.starts[at:])
    ends.extend(folded.ends[at:])
    return Folded("".join(text), tuple(starts), tuple(ends))


def _number(words: str) -> int | None:
    total, current = 0, 0
    for word in re.split(r"[\s-]+", words.lower()):
        if word == "and":
            continue
        if word in _NUMBER_WORDS:
            current += _NUMBER_WORDS[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word == "thousand":
            total, current = total + max(current, 1) * 1000, 0
    return total + current


# A right-to-left override or isolate makes reversed text display forwards ("redarg eht ot etoN"
# shows as "Note to the grader"); the run it governs ends at its pop, a line break or the text's end.
_REVERSED_RUN = re.compile("[\u202e\u2067\u202b]([^\u202c\u2069\n]*)[\u202c\u2069]?")


def unreversed(text: str) -> str:
    """``text`` as it displays: every run under a right-to-left override reversed, the marks dropped
    (issue 31 L). Only text that holds such a mark changes."""
    if not any(mark in text for mark in "\u202e\u2067\u202b"):
        return text
    return _REVERSED_RUN.sub(lambda m: m.group(1)[::-1], text)


def fold(text: str, *, leet: bool = False, spaced: bool = False, numbers: bool = False, one: str = "l",
         confusables: bool = True) -> Folded:
    """``text`` in one spelling: NFKC, look-alike letters as Latin, zero-width and other format
    characters removed; with ``leet`` digits inside a mixed word read as letters, with ``spaced``
    runs of spaced single letters joined, with ``numbers`` numbers in words as digits. ``one``
    is the letter a 1 stands for (``l`` or ``i``: a scan reads both). ``confusables=False`` keeps
    Cyrillic and Greek letters as they are (a scan of words in those scripts)."""
    if text.isascii():  # the common case: NFKC, look-alikes and format characters change nothing
        folded = Folded(text, tuple(range(len(text))), tuple(range(1, len(text) + 1)))
        return _fold_words(folded, leet=leet, spaced=spaced, numbers=numbers, one=one)
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for m in _ASCII_OR_ONE.finditer(text):
        i, piece = m.start(), m.group(0)
        if piece.isascii():  # runs of ASCII are kept as they are
            chars.append(piece)
            starts.extend(range(i, i + len(piece)))
            ends.extend(range(i + 1, i + len(piece) + 1))
            continue
        if unicodedata.category(piece) == "Cf":  # zero-width space and joiners, soft hyphen, BOM, bidi marks
            continue
        for out in unicodedata.normalize("NFKC", piece):
            if unicodedata.combining(out):
                continue  # an accent put on a letter to break a word
            chars.append(_CONFUSABLES.get(out, out) if confusables else out)
            starts.append(i)
            ends.append(i + 1)
    return _fold_words(Folded("".join(chars), tuple(starts), tuple(ends)), leet=leet, spaced=spaced,
                       numbers=numbers, one=one)


def _fold_words(folded: Folded, *, leet: bool, spaced: bool, numbers: bool, one: str) -> Folded:
    if numbers:
        pieces = []
        for m in _NUMBER_RUN.finditer(folded.text):
            value = _number(m.group(0))
            if value is not None:
                pieces.append((m.start(), m.end(), str(value)))
        folded = _rebuild(folded, pieces)
    if leet:
        pieces = []
        for m in _MIXED_WORD.finditer(folded.text):
            for j, ch in enumerate(m.group(0)):
                if ch in _LEET:
                    pieces.append((m.start() + j, m.start() + j + 1, one if ch == "1" else _LEET[ch]))
        folded = _rebuild(folded, pieces)
    if spaced:
        pieces = []
        for m in _SPACED.finditer(folded.text):
            for j, ch in enumerate(m.group(0)):
                if not ch.isalpha():
                    pieces.append((m.start() + j, m.start() + j + 1, ""))
        folded = _rebuild(folded, pieces)
    return folded


_TOKEN_GAP = re.compile(r"\s+")


def windows(text: str, *, leet: bool = False, spaced: bool = False, numbers: bool = False,
            words: int = 4) -> list[tuple[int, int]]:
    """The spans of ``text`` that folding with these options could change, each widened by
    ``words`` words on either side (a phrase such as "a limit of eight tool calls" spans
    several) and cut at whitespace; overlapping spans merged. A scan that has read ``text``
    itself needs to read only these, folded."""
    return list(_windows(text, leet, spaced, numbers, words))


@lru_cache(maxsize=256)
def _windows(text: str, leet: bool, spaced: bool, numbers: bool, words: int) -> tuple[tuple[int, int], ...]:
    triggers = [rx for on, rx in ((leet, _MIXED_WORD), (spaced, _SPACED), (numbers, _NUMBER_RUN)) if on]
    hits = [(m.start(), m.end()) for rx in triggers for m in rx.finditer(text)]
    if not hits:  # the common case: nothing a word-level spelling could change
        return ()
    spans: list[tuple[int, int]] = []
    reach = 40 * (words + 1)  # enough characters for the words on either side
    for hit_start, hit_end in hits:
        lo, hi = max(0, hit_start - reach), min(len(text), hit_end + reach)
        before = [m.end() for m in _TOKEN_GAP.finditer(text, lo, hit_start)]
        after = [m.start() for m in _TOKEN_GAP.finditer(text, hit_end, hi)]
        a = before[-(words + 1)] if len(before) > words else (0 if lo == 0 else (before[0] if before else lo))
        b = after[words] if len(after) > words else (len(text) if hi == len(text) else (after[-1] if after else hi))
        spans.append((a, b))
    return tuple(merge_spans(spans))


def merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans in order, overlapping or touching ones merged into one."""
    merged: list[list[int]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return [(a, b) for a, b in merged]
