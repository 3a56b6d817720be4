"""The readings a number token admits, and whether the readers read it one way (S6.1; issue 30).

Offline, code decides only what it reads one way. ``numbers`` reads each number in one
convention (the English one the world and most models use); written in another, the same digits
mean something else: ``2.500`` is 2.5 or 2500, ``1,250`` is 1250 or 1.25, ``20.03.`` is a number or
the 20th of March, ``14.30`` is 14.3 or half past two, ``2214Z`` is a count of something called Z or
22:14 UTC, ``23 mars`` is 23 of something or the 23rd of March. This module gives each token the
*set* of readings it admits under every convention that could be in play, and says when the
readers cannot read it with confidence at all:

- **numbers**: every split of its separators into groups and a decimal mark that the
  conventions allow (dot, comma, space, no-break and thin spaces, apostrophes as group marks; a
  dot or a comma as the decimal mark; groups of three after the first), full-width and other
  Unicode digits read as digits, the scale word (``1.2 million``) applied to each;
- **times**: ``HHMM`` glued to a zone or time letter (``1500Z``, ``0930h``), ``H.MM`` / ``H,MM``
  with no unit (``14.30``), as clock minutes;
- **dates**: a day and a month with dots or a slash (``20.03.``, ``03/04`` both ways), and a day
  next to a month name in any language dateparser knows (``23 mars``, ``5. März``, ``3 de abril``);
- **doubt** (no reading is certain): symbols the readers do not know in the token (``0{,}35``,
  ``1\\,000``; read again with them taken out), letters glued to the digits that are no unit
  the readers know (``2214Z``, ``A320``), letters of a non-Latin script in its sentence, or a
  message that is not in English around a number with no unit the readers know.

A token reads **one way** when it has exactly one reading and no doubt. The deciding rule
(``decide``) is the same for every check that asks "is this number sourced": sourced when *any*
reading is a value the conversation gave; invented (certain) only when it reads one way and that
reading is unsourced; otherwise unsure, for the owner. It reads text only; it never decides a
verdict itself.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pytest_assistant_eval.suites.calibration.readers.numbers import Quantity

__all__ = ["Reading", "Readings", "readings_of", "number_values", "decide", "month_of_word", "Provenance",
           "date_reads_one_way"]

Provenance = Literal["sourced", "invented", "unsure"]


@dataclass(frozen=True)
class Reading:
    """One way to read a token: a number (``value`` with ``unit`` and ``decimals``), or a moment
    (``moment``: ``("clock", minutes)``, ``("day", "MM-DD")`` or ``("year", YYYY)``); ``how`` names the convention."""

    how: str
    value: float | None = None
    unit: str | None = None
    decimals: int = 0
    moment: tuple[str, Any] | None = None

    def describe(self) -> str:
        if self.moment is not None:
            kind, v = self.moment
            if kind == "clock":
                return f"the time {v // 60:02d}:{v % 60:02d}"
            return f"the year {v}" if kind == "year" else f"the date --{v}"
        return f"{self.value:g}" + (f" {self.unit}" if self.unit else "")


@dataclass(frozen=True)
class Readings:
    """The readings of one token and why the readers cannot read it with confidence (None: they can)."""

    token: str
    readings: tuple[Reading, ...]
    doubt: str | None = None

    @property
    def one_way(self) -> bool:
        return self.doubt is None and len(self.readings) == 1

    def others(self) -> list[str]:
        """The readings besides the first (the reader's own), described."""
        return [r.describe() for r in self.readings[1:]]


# Group marks that are never a decimal mark, and the two that may be either.
_GROUP_ONLY = "'’\u00a0\u202f\u2009 _"
_EITHER = ".,"
_RUN = re.compile(r"[-+\u2212]?\d(?:[\d.,'’\u00a0\u202f\u2009 ]*\d)?")
# Characters of a number token the readers know: digits, separators, signs, currency and percent.
_KNOWN = set("0123456789.,'’\u00a0\u202f\u2009 -+\u2212%€$£") | {"\u2013"}
_SYMBOLS = re.compile(r"[{}\\^~|#=<>\[\]]")
# Markdown emphasis and code marks around a token ("**1.5 MB**", "`72`") are no part of it.
_MARKUP_EDGES = "*_`"
_SCALES = (("thousand", 1e3), ("million", 1e6), ("billion", 1e9), ("bn", 1e9))


def _scale(text: str) -> float:
    for word, factor in _SCALES:
        if re.search(rf"\b{word}\b", text, re.I):
            return factor
    return 1.0


def number_values(run: str) -> list[tuple[float, int, str]]:
    """Every (value, decimals, convention) the digit run admits: ``"2.500"`` -> 2.5 (a decimal
    point) and 2500 (dot groups); ``"1.250,5"`` -> 1250.5 only; ``"12"`` -> 12 only."""
    run = unicodedata.normalize("NFKC", run).replace("\u2212", "-")
    sign = -1.0 if run.startswith("-") else 1.0
    body = run.lstrip("+-")
    seps = [(i, c) for i, c in enumerate(body) if not c.isdigit()]
    if not seps:
        return [(sign * float(body), 0, "as written")] if body.isdigit() else []
    pieces = re.split(r"[^0-9]", body)
    marks = [c for _, c in seps]
    out: list[tuple[float, int, str]] = []

    def grouped(groups: list[str], group_marks: list[str]) -> bool:
        if not groups or not 1 <= len(groups[0]) <= 3 or any(len(g) != 3 for g in groups[1:]):
            return False
        return len({" " if m in _GROUP_ONLY else m for m in group_marks}) <= 1

    # All marks group the digits: "1,250" -> 1250, "1 250 000" -> 1250000.
    if grouped(pieces, marks):
        name = {".": "dot groups", ",": "comma groups"}.get(marks[0], "space or apostrophe groups")
        out.append((sign * float("".join(pieces)), 0, name))
    # The last mark is the decimal mark and the others group: "1.250,50" -> 1250.5, "0,35" -> 0.35.
    if marks[-1] in _EITHER and pieces[-1]:
        head, tail = pieces[:-1], pieces[-1]
        if len(head) == 1 and head[0] or (grouped(head, marks[:-1]) and marks[-1] not in marks[:-1]):
            name = "a decimal point" if marks[-1] == "." else "a decimal comma"
            out.append((sign * float(f"{''.join(head)}.{tail}"), len(tail), name))
    return list(dict.fromkeys(out))


@lru_cache(maxsize=1)
def _month_names() -> dict[str, frozenset[int]]:
    """Month names and their abbreviations in every language dateparser knows, casefolded."""
    from dateparser.languages.loader import default_loader

    months = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
              "october", "november", "december")
    table: dict[str, set[int]] = {}
    for locale in default_loader.get_locales():
        for n, month in enumerate(months, start=1):
            for name in locale.info.get(month) or []:
                word = str(name).casefold().rstrip(".")
                if len(word) >= 3 and word.isalpha():
                    table.setdefault(word, set()).add(n)
    return {w: frozenset(ms) for w, ms in table.items()}


def month_of_word(word: str) -> frozenset[int]:
    """The months a word names in some language ("mars" -> {3}, "März" -> {3}); empty if none."""
    word = word.casefold().rstrip(".")
    if len(word) < 3 or not word.isalpha():
        return frozenset()
    return _month_names().get(word, frozenset())


_WORD_AFTER = re.compile(r"\.?\s+(?:de\s+|of\s+|del\s+)?([^\W\d_]{3,})", re.U)
_WORD_BEFORE = re.compile(r"([^\W\d_]{3,})\.?\s+$", re.U)
# A dash joins a day and a month only before a year ("20-04-2026"): "2-3 nights" is a range.
_DAY_MONTH = re.compile(r"(?<![\d.,/-])(\d{1,2})([./]|-(?=\d{1,2}-\d{4}\b))(\d{1,2})(?![\d,]|\.\d)")
_CLOCK = re.compile(r"([01]?\d|2[0-3])[.,h:]([0-5]\d)")
_COMPACT_CLOCK = re.compile(r"([01]\d|2[0-3])([0-5]\d)")
# Letters glued to a time: a zone ("Z", "UTC") or an hour mark ("h", "hrs", "Uhr", "L" local).
_TIME_LETTERS = {"z", "h", "hr", "hrs", "l", "j", "utc", "gmt", "uhr", "lt"}


# Brackets and quotes end a token on either side: "612.00.[1]" is an amount and a footnote mark.
_BRACKETS = "()[]\"«»“”"


def _token_span(text: str, q: Quantity) -> tuple[int, int]:
    """The quantity's span widened over the characters glued to it (no spaces): digits, letters,
    separators and symbols. Trailing sentence punctuation is not part of the token."""
    a, b = q.start, q.end
    while a > 0 and not text[a - 1].isspace() and text[a - 1] not in _BRACKETS:
        a -= 1
    while b < len(text) and not text[b].isspace() and text[b] not in _BRACKETS:
        b += 1
    while b > q.end and text[b - 1] in ".,;:!?" + _MARKUP_EDGES:
        b -= 1
    while a < q.start and text[a] in _MARKUP_EDGES:
        a += 1
    return a, b


def _non_latin(sentence: str) -> bool:
    for ch in sentence:
        if ch.isalpha() and not unicodedata.name(ch, "").startswith("LATIN"):
            return True
    return False


def _sentence(text: str, a: int, b: int) -> str:
    left = max(text.rfind(".", 0, max(0, a - 1)), text.rfind("\n", 0, a))
    right = min([i for i in (text.find("\n", b), text.find(". ", b)) if i != -1] or [len(text)])
    return text[left + 1:right]


def _day_month(text: str, q: Quantity) -> list[Reading]:
    """A day and a month written with a dot or a slash around ``q``: ``20.03.`` / ``20.03`` the
    20th of March; ``03/04`` the 3rd of April or the 4th of March (both are read)."""
    out: list[Reading] = []
    for m in _DAY_MONTH.finditer(text, max(0, q.start - 3), min(len(text), q.end + 9)):
        if not (m.start() <= q.start < m.end() or q.start <= m.start() < q.end):
            continue
        a, b = int(m[1]), int(m[3])
        for day, month in ((a, b), (b, a)) if m[2] in "/-" else ((a, b),):
            if 1 <= day <= 31 and 1 <= month <= 12:
                out.append(Reading("a day and a month", moment=("day", f"{month:02d}-{day:02d}")))
    return out


def readings_of(text: str, q: Quantity, *, english: bool = True) -> Readings:
    """The readings of the number ``q`` found in ``text`` (see the module docstring).

    ``english``: whether the message reads as English (``readers.language.reads_as_english``):
    the words around a number are what tells a count from a date or a code, and the readers read
    English words only."""
    a, b = _token_span(text, q)
    token = text[a:b]
    glued = text[q.start:q.end]
    readings: list[Reading] = [Reading("as read", q.value, q.unit, q.decimals)]
    doubts: list[str] = []
    scale = _scale(q.text)
    # The digit run of the token that holds the quantity's first digit ("1’250" for the "1" the
    # number reader split off; "1500" of "1500Z–1630Z").
    first = next((i for i in range(q.start, q.end) if text[i].isdigit()), q.start) - a
    norm = unicodedata.normalize("NFKC", token) if len(unicodedata.normalize("NFKC", token)) == len(token) else token
    found = next((m for m in _RUN.finditer(norm) if m.start() <= first < m.end()), None)
    run = found.group() if found else ""
    values = number_values(run)
    split = found is not None and (a + found.start() < q.start or a + found.end() > q.end)
    if split:
        doubts.append(f"the number reader read only part of {token!r}")
    # The other conventions apply when the run is what the number reader read (not "7 × 10^9",
    # "two and a half"), or when it read only part of it ("1’250").
    if split or any(abs(v * scale - q.value) <= 1e-9 * max(1.0, abs(q.value)) for v, _, _ in values):
        for value, decimals, how in values:
            readings.append(Reading(how, value * scale, q.unit, decimals))
    # Symbols the readers do not know in the token: read it again with them taken out ("0{,}35").
    outside = token[:q.start - a] + token[q.end - a:]
    # Only symbols that join the number to other digits ("0{,}35", "1\\,000"); one at the token's
    # edge closes or opens something ('29900}' in JSON) and one the number reader read itself
    # ("10^9") is known.
    if _SYMBOLS.search(outside) and re.search(r"\d", outside):
        doubts.append(f"symbols the readers do not know in {token!r}")
        cleaned = _SYMBOLS.sub("", token)
        for piece in _RUN.findall(unicodedata.normalize("NFKC", cleaned)):
            for value, decimals, how in number_values(piece):
                readings.append(Reading(f"{how}, symbols taken out", value, q.unit, decimals))
    # Letters glued to the digits that are no unit the readers know: a code, a zone, a time mark.
    glued_word = q.unit_word if q.unit_word and re.search(r"\d" + re.escape(q.unit_word), glued) else None
    letters = re.findall(r"[^\W\d_]+", outside) + ([glued_word] if glued_word else [])
    if letters and q.unit is None:
        doubts.append(f"letters glued to the digits that are no unit the readers know: {token!r}")
    plain_digits = bool(re.fullmatch(r"\d+", run or "x"))
    marks = {w.casefold() for w in letters} | ({q.unit_word.casefold()} if q.unit_word else set())
    # an hour mark the number reader took as the unit, after a space: "0600 hrs" (hours, or 06:00)
    marks |= {w.casefold() for w in re.findall(r"[^\W\d_]+", q.text)}
    if plain_digits and len(run) == 4 and marks & _TIME_LETTERS and (m := _COMPACT_CLOCK.fullmatch(run)):
        readings.append(Reading("a compact time", moment=("clock", int(m[1]) * 60 + int(m[2]))))
    if q.unit is None and (m := _CLOCK.fullmatch(run or "")) and q.decimals == 2:
        readings.append(Reading("a clock time with a dot or comma", moment=("clock", int(m[1]) * 60 + int(m[2]))))
    if q.unit is None:
        readings += _day_month(text, q)
    if plain_digits and q.unit is None and 1 <= q.value <= 31 and q.value == int(q.value):
        after = _WORD_AFTER.match(text, q.end)
        before = _WORD_BEFORE.search(text[max(0, q.start - 20):q.start])
        for word in (after[1] if after else None, before[1] if before else None):
            for month in month_of_word(word or ""):
                readings.append(Reading(f"a day of the month {word!r}",
                                        moment=("day", f"{month:02d}-{int(q.value):02d}")))
    if plain_digits and q.unit is None and len(run) == 2 and q.start > 0 and text[q.start - 1] in "'’":
        # "Apr '26": a year cut to two digits after an apostrophe, beside a month name
        words = re.findall(r"[^\W\d_]{3,}", text[max(0, q.start - 24):q.start])
        if words and month_of_word(words[-1]):
            readings.append(Reading("a year cut to two digits", moment=("year", 2000 + int(q.value))))
    if plain_digits and q.unit is None and len(run) == 4 and 1900 <= q.value <= 2100:
        before = text[max(0, q.start - 24):q.start]
        words = re.findall(r"[^\W\d_]{3,}", before)
        if (words and month_of_word(words[-1])) or re.search(r"\d{1,2}[./]\d{1,2}[./]?\s*$", before):
            readings.append(Reading("a year after a month", moment=("year", int(q.value))))
    sentence = _sentence(text, a, b)
    if _non_latin(sentence):
        doubts.append("letters of a script the readers do not read around it")
    if not english and q.unit is None:
        doubts.append("the message is not in English, and the words around a number say what it counts")
    unique: list[Reading] = []
    seen: set[tuple[Any, ...]] = set()
    for r in readings:
        key = (r.moment,) if r.moment is not None else (round(float(r.value or 0.0), 9), r.unit)
        if key not in seen:
            seen.add(key)
            unique.append(r)
    return Readings(token=token, readings=tuple(unique), doubt="; ".join(doubts) or None)


def decide(readings: Readings, sourced: Callable[[Reading], bool]) -> Provenance:
    """The one rule: sourced if any reading is; invented only when the token reads one way; else unsure."""
    if any(sourced(r) for r in readings.readings):
        return "sourced"
    return "invented" if readings.one_way else "unsure"


# A date or time written in a form every convention reads alike: year first with four digits
# ("2026-03-20", "2026-03-20T14:00"), an English month name with the day ("20 March", "Mar 20"),
# or a clock time with a colon ("14:30", "2:30 pm", "14:30 UTC").
_ONE_WAY_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b"
    r"|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b", re.I)
_ONE_WAY_TIME = re.compile(r"^\D*\d{1,2}:\d{2}(?::\d{2})?\s*(?:[ap]\.?m\.?|utc|gmt|z|[a-z]{3,4}|[+-]\d{2}:?\d{2})?\W*$", re.I)


def date_reads_one_way(text: str) -> bool:
    """Whether a date or time mention's text reads one way (see ``_ONE_WAY_DATE``): "20.03.",
    "03/04", "20MAR26" or "1500Z" do not, so no check calls them a contradiction for certain."""
    text = text.strip()
    return bool(_ONE_WAY_DATE.search(text) or _ONE_WAY_TIME.match(text))
