"""Numbers written in words ("three nights", "twelve hundred euros", "two and a half km").

The cardinals are read by a library (text2num: its Rust parser knows "three hundred and
forty-two", "twelve hundred", "ninety-nine point nine" and tells ordinals apart, so "the
twenty-first" is a day, not a count). Only the fractions people say of a unit ("and a half",
"half an hour", "a quarter of an hour", "½") are read here: the library does not know them.

``spelled_numbers`` reports spans and values; ``quantities`` decides whether a unit follows
and whether a small number ("one", "two") is a quantity at all. It never decides a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Spelled", "spelled_numbers", "fraction_after", "FRACTION_WORDS"]


@dataclass(frozen=True)
class Spelled:
    """A number in words: ``text[start:end]`` reads ``value``."""

    value: float
    start: int
    end: int


class _Token:
    """The token protocol text2num reads (only ``text`` carries meaning here)."""

    __slots__ = ("_text",)

    def __init__(self, text: str) -> None:
        self._text = text

    def text(self) -> str:
        return self._text

    def nt_separated(self, previous: object) -> bool:
        return False

    def not_a_number_part(self) -> bool:
        return False


# Words (any letters: "São" is one word, not "S" and a zero "o"), and every other character on
# its own, so a digit or a comma breaks a number.
_TOKEN_RE = re.compile(r"[^\W\d_]+|[^\s]")
# Words the library reads as numbers that in prose are not: "o" and "oh" (zero), "nil".
_NOT_NUMBERS = {"o", "oh", "nil", "naught", "nought"}
_NUMBER_WORDS = re.compile(
    r"(?i:\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|"
    r"sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|hundred|"
    r"thousand|million|billion|half|quarters?)\b)"
)
FRACTION_WORDS = {"half": 0.5, "quarter": 0.25, "quarters": 0.25}
_VULGAR = {"½": 0.5, "¼": 0.25, "¾": 0.75}
_SP = r"[ \u00a0\u202f\u2009]+"
# After a number: "two and a half", "2 and a quarter", "1½".
_AND_FRACTION_RE = re.compile(rf"(?:{_SP}and{_SP}an?{_SP}(?P<f>half|quarter)(?![A-Za-z])|(?P<v>[½¼¾]))")
# On its own, before a unit: "half an hour", "a quarter of an hour", "three quarters of an hour".
_FRACTION_RE = re.compile(
    rf"(?<![A-Za-z])(?:(?P<lead>a|one|three){_SP})?(?P<f>half|quarters?)(?:{_SP}of)?(?:{_SP}an?)?(?={_SP}[A-Za-z])"
    r"|(?<![0-9A-Za-z])(?P<v>[½¼¾])"
)


def spelled_numbers(text: str) -> list[Spelled]:
    """Cardinal numbers in words, in order (ordinals are left out). Cached by text."""
    if not _NUMBER_WORDS.search(text):
        return []
    return list(_spelled_cached(text))


@lru_cache(maxsize=8192)
def _spelled_cached(text: str) -> tuple[Spelled, ...]:
    from text_to_num import find_numbers  # a compiled parser: about 1 ms to import

    tokens = list(_TOKEN_RE.finditer(text))
    found: list[Spelled] = []
    for occ in find_numbers([_Token(m.group()) for m in tokens], "en", 0):
        if occ.is_ordinal:
            continue
        start, end = tokens[occ.start].start(), tokens[occ.end - 1].end()
        if not any(ch.isalpha() for ch in text[start:end]) or text[start:end].lower() in _NOT_NUMBERS:
            continue  # digits the library passed through are the digit reader's
        found.append(Spelled(float(occ.value), start, end))
    for m in _FRACTION_RE.finditer(text):
        if m.group("v"):
            found.append(Spelled(_VULGAR[m.group("v")], m.start(), m.end()))
            continue
        lead = (m.group("lead") or "a").lower()
        share = FRACTION_WORDS[m.group("f").lower()]
        if m.group("f").lower() == "quarters" and lead != "three":
            continue
        found.append(Spelled(share * (3 if lead == "three" else 1), m.start(), m.end()))
    found.sort(key=lambda s: (s.start, -s.end))
    out: list[Spelled] = []
    for s in found:
        if out and s.start < out[-1].end:
            continue  # "one half": the fraction's own reading stands over the library's "one"
        out.append(s)
    return tuple(out)


def fraction_after(text: str, end: int) -> tuple[float, int] | None:
    """A fraction that continues a number ending at ``end``: ``(share, new end)``, else None."""
    m = _AND_FRACTION_RE.match(text, end)
    if not m:
        return None
    share = _VULGAR[m.group("v")] if m.group("v") else FRACTION_WORDS[m.group("f").lower()]
    return share, m.end()
