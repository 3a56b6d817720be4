"""Numbers and quantities in free text and in tool results.

The automatic checks (S6.1) need to know which numbers an answer states, in which
unit, whether a number came from a tool result (possibly converted: 1200 m from
``distance_km: 1.2``), whether it is a shown calculation or a general constant.
This module does only that reading; it never decides a verdict.

Number formats (``find_quantities``)
-----------------------------------
* ``1050``, ``1,050``, ``1,050.5``: a comma followed by exactly three digits is a
  thousands separator (English convention, the one the world and most models use).
* ``1 050`` / ``1 050,5``: a single space, no-break space (U+00A0), narrow
  no-break space (U+202F) or thin space (U+2009) followed by exactly three digits
  is a thousands separator when the first group has one to three digits.
* ``1.050,5`` and ``1.050.000``: dots are thousands separators only when that is
  unambiguous: either a decimal comma follows, or there are two or more dot groups.
  A single dot is always a decimal point (``1.050`` is 1.05).
* ``12,5`` / ``95,50``: a comma followed by anything but exactly three digits is a
  decimal comma.
* A scale word after the number multiplies it: ``1.2 million kWh`` is 1,200,000
  kWh (thousand, million, billion, bn); its precision scales along.
* A power of ten is one number: ``10^6``, ``10**6``, ``10⁶``, ``1e6``, ``3.4 × 10^8``.
* A denominator after a unit makes a compound unit, kept in ``Quantity.per``:
  ``EUR/m²``, ``€ per m2``, ``kWh/m²/year``, ``km/h``, ``72 EUR a night``.
* A sign (``-``, ``+`` or U+2212 minus) directly before the digits makes a negative
  number unless it follows a letter, digit or separator (``10-20`` is a range, so
  20 is positive).

What is not a quantity (the skipping rule)
------------------------------------------
A number is skipped when it is part of

1. a date or a time (see ``find_dates``): ISO dates and date-times, ``02.04.2026``,
   ``2/4/2026``, ``09:30``, ``9 am``, ``15h00``, ``noon``, ``2 April 2026``, ``April 2``,
   ``April 2026``, ``2026-02``, ``02/2029``, both ends of a range (``7–9 April``, ``1 to 5
   April``, ``April 7-9``, ``3–4 pm``), a time zone after a time (``13:30 UTC``, ``14:30
   Lisbon time (WEST, UTC+1)``, ``+01:00``) or on its own (``UTC+1``), and a year after
   *in, since, until, by, year, of*;
2. an id: a token that starts with a letter and joins segments with ``-``, ``_`` or
   ``#`` (``L-104``, ``card-2``, ``ch-0011``, ``run_2``), or ``#12``;
3. a word: digits glued to letters before (``G05``) or after (``5th``, ``2x``)
   unless the letters after are a unit (``5km``, ``2GB``);
4. card digits: four digits after *ending (in/with), ends in/with, last four
   (digits)*, or after a mask such as ``••••`` or ``****``.

Canonical units and their dimensions (base unit first)
------------------------------------------------------
length ``m``: ``mm cm m km``;  area ``m²``: ``cm² m² ha km²``;
energy ``Wh``: ``Wh kWh MWh GWh TWh``;
data ``B`` (decimal: kB = 10^3 B, MB = 10^6 B, GB = 10^9 B, TB = 10^12 B, the SI
convention that storage vendors and mail limits use; ``KiB MiB GiB TiB`` are
binary and kept apart by name);
time ``s``: ``ms s min h day week``; nights ``night``; percent ``%``;
currencies ``EUR USD GBP``, each its own dimension (``currency:EUR``...), never converted.

Size: more than twice the limit (issue 25 names it): dates and times (`find_dates` and its
helpers), numbers with units, and unit conversion are three readers in one module; dates
would split off first, then units (`split_unit`, `to_base`). The issue also asks that a
reader settle only what it is sure of, which should shrink it more than a split would.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from pytest_assistant_eval.suites.calibration.readers.units import (
    CI_SPELLINGS as _CI_SPELLINGS,
    CS_SPELLINGS as _CS_SPELLINGS,
    SPACE as _SPACE,
    UNIT_RE as _UNIT_RE,
    UNITS,
    alternation as _alternation,
    canonical_unit,
    looks_like_unit,
    registry_unit,
    table_unit,
)
from pytest_assistant_eval.suites.calibration.readers.spelled import fraction_after, spelled_numbers

from pytest_assistant_eval.suites.calibration.readers.relative_dates import RELATIVE_RE, relative_dates

__all__ = [
    "Quantity",
    "DateMention",
    "Calculation",
    "UNITS",
    "CONSTANTS",
    "find_quantities",
    "find_dates",
    "to_base",
    "same_quantity",
    "numbers_in_json",
    "unit_from_key",
    "is_sourced",
    "find_calculations",
    "is_constant",
    "canonical_unit",
    "split_unit",
    "find_definitions",
    "zone_offset",
]


# ---------------------------------------------------------------------------
# Units: the domain's table and the registry live in ``units``; a currency written before a number
# ---------------------------------------------------------------------------

_CURRENCY_PREFIX = {"€": "EUR", "$": "USD", "£": "GBP", "eur": "EUR", "usd": "USD", "gbp": "GBP"}


# ---------------------------------------------------------------------------
# Data classes
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Quantity:
    """A number as stated in a text, with its canonical unit (None when unitless).

    ``text`` is the exact slice ``source[start:end]`` including the unit and any
    currency prefix. ``decimals`` is how many decimals the number was written
    with (used to accept a rounded source value); it is not part of equality.
    ``unit_word`` is a unit the reader does not know, as written ("68 kWp", "120 CHF"):
    then ``unit`` is None but the number is not unit-less (``unit_unknown``), so a check
    must hand it on with the evidence rather than read it as a bare number. ``spelled``
    says the number was written in words ("three nights").
    """

    value: float
    unit: str | None
    text: str
    start: int
    end: int
    decimals: int = field(default=0, compare=False)
    #: the denominator of a compound unit, canonical ("m²" for EUR/m², "m²/year" for kWh/m²/year)
    per: str | None = field(default=None, compare=False)
    unit_word: str | None = field(default=None, compare=False)
    spelled: bool = field(default=False, compare=False)

    @property
    def dimension(self) -> str | None:
        return UNITS[self.unit][0] if self.unit else None

    @property
    def unit_unknown(self) -> bool:
        """A unit is written next to the number, but not one the reader knows."""
        return self.unit is None and self.unit_word is not None


@dataclass(frozen=True)
class Calculation:
    """Shown arithmetic such as ``3 × 95 EUR = 285 EUR``: operands, operators, result."""

    operands: tuple[Quantity, ...]
    operators: tuple[str, ...]
    result: Quantity
    computed: float
    holds: bool
    text: str
    start: int
    end: int


@dataclass(frozen=True)
class DateMention:
    """A date or time in a text. ``kind`` is date, time, datetime, month or year.

    ``value`` is ISO-like: ``2026-04-02``, ``09:30``, ``2026-04-02T09:30``,
    ``--04-02`` (a day without a year), ``2026-04`` (a month), ``2026`` (a year).
    ``offset`` is the stated time zone in minutes east of UTC (``13:30 UTC`` -> 0,
    ``14:30 (WEST, UTC+1)`` -> 60, ``...T14:30+01:00`` -> 60), None when no zone is
    stated; it is not part of equality.
    """

    kind: str
    value: str
    text: str
    start: int
    end: int
    offset: int | None = field(default=None, compare=False)
    #: A clock time said on the 12-hour clock without am or pm ("half past five"): it may be
    #: ``value`` or twelve hours later; a reader that compares times should accept either.
    open_meridiem: bool = field(default=False, compare=False)


# ---------------------------------------------------------------------------
# Dates, ids and other spans that are not quantities
# ---------------------------------------------------------------------------

_MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
}
_MONTH_ABBR = {m[:3]: n for m, n in _MONTHS.items()} | {"sept": 9}
# Month names are matched capitalised only: "3 may be" is not the 3rd of May.
_MONTH_RE = "(?:" + "|".join(
    sorted([m.capitalize() for m in _MONTHS] + [a.capitalize() + r"\.?" for a in _MONTH_ABBR], key=len, reverse=True)
) + r")(?![A-Za-z])"
_WEEKDAY_RE = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?"
_HOUR_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                 "ten": 10, "eleven": 11, "twelve": 12}
_HOUR_WORDS = "(?:" + "|".join(sorted(_HOUR_NUMBERS, key=len, reverse=True)) + ")"
_ORD = r"(?:st|nd|rd|th)?"
_AMPM = r"(?:[ \u00a0]?(?:[ap]\.m\.|[AaPp][Mm])(?![A-Za-z]))"
# What joins the two ends of a range: "7–9 April", "1 to 5 April", "between 7 and 9 April".
_RANGE_SEP = rf"(?:{_SPACE}*(?:[-–—→]|->){_SPACE}*|{_SPACE}+(?:to|until|till|through|thru|and|&){_SPACE}+)"

# Time zones named after a time, with their offsets in minutes east of UTC.
_ZONE_OFFSETS = {"z": 0, "utc": 0, "gmt": 0, "wet": 0, "west": 60, "cet": 60, "bst": 60, "cest": 120,
                 "eet": 120, "eest": 180}
_ZONE_AFTER_RE = re.compile(
    # An optional "Lisbon time" / "local summer time" before the zone: "14:30 Lisbon time (WEST, UTC+1)".
    rf"(?:{_SPACE}*(?:(?:[A-Z][a-z]+|local|summer|winter|standard){_SPACE}+){{1,3}}time)?"
    rf"{_SPACE}*[(,]?{_SPACE}*(?:in{_SPACE}+)?"
    rf"(?:(?P<name>UTC|GMT|WEST|WET|CEST|CET|BST|EEST|EET|Z)(?![A-Za-z])"
    rf"(?:{_SPACE}?(?P<sign>[+\-\u2212]){_SPACE}?(?P<oh>[0-9]{{1,2}})(?::?(?P<om>[0-9]{{2}}))?(?![0-9]))?"
    # A bare offset only with "+": "15:00-16:30" is a range, not 15:00 at UTC-16:30.
    rf"|(?P<bsign>\+)(?P<boh>0[0-9]|1[0-4]):(?P<bom>[0-5][0-9])(?![0-9]))"
)
# An offset written on its own ("Porto is on UTC+1 from 29 March") is neither a time nor an amount.
_ZONE_ALONE_RE = re.compile(
    rf"(?<![A-Za-z])(?:UTC|GMT){_SPACE}?[+\-\u2212]{_SPACE}?[0-9]{{1,2}}(?::?[0-9]{{2}})?(?![0-9])"
)

_DATE_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    (
        "iso",
        re.compile(
            r"(?<![0-9])(?P<y>[0-9]{4})-(?P<m>[0-9]{2})-(?P<d>[0-9]{2})"
            r"(?:[T ](?P<t>[0-9]{1,2}:[0-9]{2}(?::[0-9]{2}(?:\.[0-9]+)?)?)(?P<z>Z|[+-][0-9]{2}:?[0-9]{2})?)?(?![0-9])"
        ),
    ),
    ("iso_month", re.compile(r"(?<![0-9\-./])(?P<y>(?:19|20)[0-9]{2})-(?P<m>0[1-9]|1[0-2])(?![0-9]|-[0-9])")),
    (
        "dmy",
        re.compile(
            r"(?<![0-9.,/])(?P<d>[0-9]{1,2})(?P<sep>[./])(?P<m>[0-9]{1,2})(?P=sep)(?P<y>[0-9]{4}|[0-9]{2})(?![0-9]|[.,/][0-9])"
        ),
    ),
    # "Fri 20/03": a day and month without a year, read as such only after a weekday.
    (
        "weekday_dm",
        re.compile(rf"(?<![A-Za-z]){_WEEKDAY_RE},?{_SPACE}+(?P<d>[0-9]{{1,2}})/(?P<m>[0-9]{{1,2}})(?![0-9/])"),
    ),
    # Card expiry: "02/2029" anywhere; "02/29" only after "expires", "exp." or "valid until".
    ("month_slash", re.compile(r"(?<![0-9./])(?P<m>0?[1-9]|1[0-2])/(?P<y>(?:19|20)[0-9]{2})(?![0-9/])")),
    (
        "expiry",
        re.compile(
            rf"(?i:expir\w*|exp\.?|valid{_SPACE}+(?:until|till|thru|through|to))[: \u00a0\u202f\u2009]+"
            r"(?P<m>0[1-9]|1[0-2])/(?P<y>[0-9]{2})(?![0-9/])"
        ),
    ),
    (
        "day_month",
        re.compile(
            rf"(?<![0-9A-Za-z.,:])(?:(?P<d0>[0-9]{{1,2}}){_ORD}{_RANGE_SEP}(?:{_WEEKDAY_RE},?{_SPACE}+)?)?(?P<d>[0-9]{{1,2}}){_ORD}"
            rf"(?:{_SPACE}+of)?{_SPACE}+(?P<mon>{_MONTH_RE})(?:,?{_SPACE}+(?P<y>[0-9]{{4}}))?(?![0-9])"
        ),
    ),
    (
        "month_day",
        re.compile(
            rf"(?<![A-Za-z])(?P<mon>{_MONTH_RE}){_SPACE}+(?P<d>[0-9]{{1,2}}){_ORD}(?![0-9]|:[0-9])"
            rf"(?:{_RANGE_SEP}(?P<d1>[0-9]{{1,2}}){_ORD}(?![0-9]|:[0-9]|{_AMPM}))?"
            rf"(?:,?{_SPACE}+(?P<y>[0-9]{{4}}))?(?![0-9])"
        ),
    ),
    ("month_year", re.compile(rf"(?<![A-Za-z])(?P<mon>{_MONTH_RE}){_SPACE}+(?P<y>[0-9]{{4}})(?![0-9])")),
    # "half past five", "quarter to 3 pm", "five o'clock in the afternoon".
    ("time_phrase", re.compile(
        rf"(?<![A-Za-z])(?i:(?:(?P<part>half|(?:a{_SPACE}+)?quarter){_SPACE}+(?P<rel>past|to|after){_SPACE}+"
        rf"(?P<h>{_HOUR_WORDS}|[0-9]{{1,2}})|(?P<h2>{_HOUR_WORDS}|[0-9]{{1,2}}){_SPACE}*o'?{_SPACE}?clock))(?![A-Za-z])"
        rf"(?P<ap>{_AMPM}|{_SPACE}+(?i:in{_SPACE}+the{_SPACE}+(?:morning|afternoon|evening)|at{_SPACE}+night|tonight))?")),
    (
        "time_ampm",
        re.compile(
            rf"(?<![0-9.,:])(?:(?P<h0>[0-9]{{1,2}})(?::(?P<m0>[0-9]{{2}}))?{_RANGE_SEP})?(?P<h>[0-9]{{1,2}})(?P<ap>{_AMPM})"
        ),
    ),
    (
        "time",
        re.compile(rf"(?<![0-9:.,])(?P<h>[0-9]{{1,2}}):(?P<mi>[0-9]{{2}})(?::(?P<s>[0-9]{{2}}))?(?P<ap>{_AMPM})?(?![0-9]|:[0-9])"),
    ),
    # "15h00", the French and Portuguese way of writing 15:00.
    ("time_h", re.compile(r"(?<![0-9A-Za-z:.,])(?P<h>[01]?[0-9]|2[0-3])h(?P<mi>[0-5][0-9])(?![0-9A-Za-z])")),
    ("time_word", re.compile(r"(?<![A-Za-z])(?:12[ \u00a0]?)?(?P<word>(?i:noon|midday|midnight))(?![A-Za-z])")),
    (
        "year",
        re.compile(
            rf"(?i:(?<![A-Za-z])(?:in|since|until|till|by|year|of|from|to)){_SPACE}+(?P<y>(?:19|20)[0-9]{{2}})(?![0-9]|[.,][0-9])"
        ),
    ),
]
_TIME_KINDS = ("time", "time_h", "time_ampm", "time_word", "time_phrase")
# Patterns whose match may start with the first end of a range, and the group of the second end.
_RANGE_STARTS = {"day_month": "d0", "time_ampm": "h0"}
_RANGE_MAIN = {"day_month": "d", "time_ampm": "h"}


def _month_number(name: str) -> int:
    key = name.rstrip(".").lower()
    return _MONTHS.get(key) or _MONTH_ABBR[key[:4] if key.startswith("sept") else key[:3]]


def _ampm_hour(h: int, ap: str | None) -> int:
    if not ap:
        return h
    pm = ap.strip().lower().startswith("p")
    if h == 12:
        return 12 if pm else 0
    return h + 12 if pm else h


def _zone_offset(m: re.Match[str]) -> int:
    """Minutes east of UTC of a ``_ZONE_AFTER_RE`` match ("UTC+1" -> 60, "WEST" -> 60, "+01:00" -> 60)."""
    if m.group("bsign"):
        sign = -1 if m.group("bsign") in "-\u2212" else 1
        return sign * (int(m.group("boh")) * 60 + int(m.group("bom")))
    base = _ZONE_OFFSETS[m.group("name").lower()]
    if m.group("sign"):
        sign = -1 if m.group("sign") in "-\u2212" else 1
        base += sign * (int(m.group("oh")) * 60 + int(m.group("om") or 0))
    return base


def zone_offset(zone: str | None) -> int | None:
    """Minutes east of UTC of a written time zone ("UTC" -> 0, "UTC+1" -> 60, "WEST" -> 60,
    "+01:00" -> 60), or None when it names none the reader knows ("Lisbon time")."""
    if not zone:
        return None
    m = _ZONE_AFTER_RE.fullmatch(" " + zone.strip())
    return _zone_offset(m) if m else None


def _iso_offset(z: str | None) -> int | None:
    if not z:
        return None
    if z == "Z":
        return 0
    sign = -1 if z[0] == "-" else 1
    digits = z[1:].replace(":", "")
    return sign * (int(digits[:2]) * 60 + int(digits[2:]))


def _day(year: str | None, month: int, day: int) -> str:
    return f"{year}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"


# One part of a date match: (kind, value, start, end).
_Part = tuple[str, str, int, int]


def _date_parts(kind: str, m: re.Match[str]) -> list[_Part]:
    """The mentions one match makes; a range makes two ("7–9 April" is 7 April and 9 April)."""
    g = m.groupdict()
    start, end = m.span()
    if kind == "iso":
        day = f"{g['y']}-{g['m']}-{g['d']}"
        if g["t"]:
            clock = g["t"] if len(g["t"].split(":")[0]) == 2 else "0" + g["t"]
            return [("datetime", f"{day}T{clock}", start, end)]
        return [("date", day, start, end)]
    if kind in ("iso_month", "month_slash", "expiry"):
        year = g["y"] if len(g["y"]) == 4 else "20" + g["y"]
        return [("month", f"{year}-{int(g['m']):02d}", m.start("m") if kind == "expiry" else start, end)]
    if kind in ("dmy", "weekday_dm"):
        d, mo = int(g["d"]), int(g["m"])
        if mo > 12 >= d:
            d, mo = mo, d  # "2/27/2026": only the US order makes a date
        year = g.get("y")
        if year and len(year) == 2:
            year = "20" + year
        return [("date", _day(year, mo, d), start if kind == "dmy" else m.start("d"), end)]
    if kind == "day_month":
        mon = _month_number(g["mon"])
        parts = [("date", _day(g["y"], mon, int(g["d"])), m.start("d"), end)]
        if g["d0"] and int(g["d0"]) < int(g["d"]):
            parts.insert(0, ("date", _day(g["y"], mon, int(g["d0"])), m.start("d0"), m.end("d0")))
        return parts
    if kind == "month_day":
        mon = _month_number(g["mon"])
        parts = [("date", _day(g["y"], mon, int(g["d"])), start, m.end("d"))]
        if g["d1"] and int(g["d1"]) > int(g["d"]):
            parts.append(("date", _day(g["y"], mon, int(g["d1"])), m.start("d1"), end))
        else:
            parts[0] = ("date", parts[0][1], start, end)
        return parts
    if kind == "month_year":
        return [("month", f"{g['y']}-{_month_number(g['mon']):02d}", start, end)]
    if kind in ("time", "time_h"):
        h = _ampm_hour(int(g["h"]), g.get("ap"))
        value = f"{h:02d}:{g['mi']}" + (f":{g['s']}" if g.get("s") else "")
        return [("time", value, start, end)]
    if kind == "time_ampm":
        h = _ampm_hour(int(g["h"]), g["ap"])
        parts = [("time", f"{h:02d}:00", m.start("h"), end)]
        if g["h0"]:
            h0, h_end = int(g["h0"]), int(g["h"])
            # "3–4 pm" is 15:00 to 16:00; "11–12 pm" and "11–1 pm" start in the morning.
            if h0 <= h_end and not (h_end == 12 and h0 < 12):
                h0 = _ampm_hour(h0, g["ap"])
            parts.insert(0, ("time", f"{h0:02d}:{g['m0'] or '00'}", m.start("h0"), m.end("m0") if g["m0"] else m.end("h0")))
        return parts
    if kind == "time_word":
        return [("time", "00:00" if g["word"].lower() == "midnight" else "12:00", start, end)]
    if kind == "time_phrase":
        h, minute = _phrase_clock(g)
        return [("time", f"{h:02d}:{minute:02d}", start, end)]
    return [("year", g["y"], m.start("y"), end)]


def _phrase_clock(g: dict[str, str | None]) -> tuple[int, int]:
    """"half past five" -> (5, 30), "quarter to 3 pm" -> (14, 45), "five o'clock in the evening" -> (17, 0)."""
    word = (g["h"] or g["h2"] or "").lower()
    h = _HOUR_NUMBERS.get(word) or int(word)
    minute = 0
    if g["rel"]:
        quarter = 15 if "quarter" in (g["part"] or "").lower() else 30
        if g["rel"].lower() == "to":
            h, minute = (h - 1) % 12 or 12, 60 - quarter
        else:
            minute = quarter
    ap = (g.get("ap") or "").strip().lower()
    if ap and h <= 12:
        h = _ampm_hour(h, "am" if ap.startswith("a") or "morning" in ap else "pm")
    return h, minute


def _open_meridiem(kind: str, m: re.Match[str], value: str) -> bool:
    """A spoken clock time without am or pm ("half past five") is on the 12-hour clock: either half of the day."""
    return kind == "time_phrase" and not m.group("ap") and 1 <= int(value[:2]) <= 12


_HAS_DIGIT = re.compile(r"[0-9]")
_HAS_TIME_WORD = re.compile(r"(?i:noon|midday|midnight|past|o'?\s?clock)")


def find_dates(text: str) -> list[DateMention]:
    """Dates and times in ``text``, in order, never overlapping (the earliest, longest wins).

    Texts are read once: tool results recur across turns and cells, so the readings are
    cached by text (mentions are frozen; the list is a fresh copy).
    """
    if not _HAS_DIGIT.search(text) and not _HAS_TIME_WORD.search(text) and not RELATIVE_RE.search(text):
        return []
    return list(_find_dates_cached(text))


@lru_cache(maxsize=16384)
def _find_dates_cached(text: str) -> tuple[DateMention, ...]:
    return tuple(_find_dates(text))


def _find_dates(text: str) -> list[DateMention]:
    """Dates and times in ``text``, in order, never overlapping (the earliest, longest wins).

    A range names both of its ends ("7–9 April", "April 7-9", "1 to 5 April", "3–4 pm");
    a time followed by a zone ("13:30 UTC", "14:30 Lisbon time (WEST, UTC+1)", "+01:00")
    carries its offset, and the zone is part of its span; the start of a time range takes
    the zone of its end ("15:00–16:30 UTC").
    """
    zones = [m.span() for m in _ZONE_ALONE_RE.finditer(text)]
    taken: list[tuple[int, int]] = []
    found: list[DateMention] = []
    for kind, pattern in _DATE_PATTERNS:
        for m in pattern.finditer(text):
            start, end = m.span()
            if kind == "year":
                # "in 2026" is a year; "in 2026 EUR" is an amount.
                if _UNIT_RE.match(text, end):
                    continue
                start = m.start("y")
            if any(start < e and s < end for s, e in taken) and kind in _RANGE_STARTS and m.group(_RANGE_STARTS[kind]):
                # "09:30 to 3 April": the range's first end is taken by another mention; the rest is a date.
                retry = pattern.match(text, m.start(_RANGE_MAIN[kind]))
                if retry:
                    m, (start, end) = retry, retry.span()
            if any(start < e and s < end for s, e in taken) or any(s <= start < e for s, e in zones):
                continue
            offset = _iso_offset(m.group("z")) if kind == "iso" else None
            if kind in _TIME_KINDS:
                zm = _ZONE_AFTER_RE.match(text, end)
                if zm:
                    offset, end = _zone_offset(zm), zm.end()
            taken.append((start, end))
            parts = _date_parts(kind, m)
            for k, value, s, e in parts:
                e = end if e == m.end() else e
                found.append(DateMention(k, value, text[s:e], s, e, offset, _open_meridiem(kind, m, value)))
    found = _slash_dates_in_order(text, taken, found)
    for s, e, iso in relative_dates(text):
        if not any(s < te and ts < e for ts, te in taken):
            found.append(DateMention("date", iso, text[s:e], s, e))
    found.sort(key=lambda d: d.start)
    return _share_range_meridiem(text, _share_range_zones(text, found))


_RANGE_GAP_RE = re.compile(rf"^{_RANGE_SEP}$")
_CLOCK_12_RE = re.compile(rf"^(?P<h>[0-9]{{1,2}})(?::(?P<mi>[0-9]{{2}}))?(?P<ap>{_AMPM})?")


def _share_range_meridiem(text: str, found: list[DateMention]) -> list[DateMention]:
    """"2:00–3:00 pm" is 14:00 to 15:00: the am or pm written after a range's end belongs to its
    start too, as in "3–4 pm"; a start written on the 24-hour clock ("09:30", "14:00") or later
    on the clock than the end ("11:30–1:00 pm") keeps its own half of the day."""
    out = list(found)
    for i in range(len(out) - 1):
        first, second = out[i], out[i + 1]
        if first.kind != "time" or second.kind != "time" or not _RANGE_GAP_RE.match(text[first.end: second.start]):
            continue
        a, b = _CLOCK_12_RE.match(first.text), _CLOCK_12_RE.match(second.text)
        if not a or not b or a["ap"] or not b["ap"] or a["h"].startswith("0") or not 1 <= int(a["h"]) <= 12:
            continue
        h0, h_end = int(a["h"]), int(b["h"])
        if h0 <= h_end and not (h_end == 12 and h0 < 12):
            value = f"{_ampm_hour(h0, b['ap']):02d}:{a['mi'] or '00'}" + first.value[5:]
            out[i] = DateMention(first.kind, value, first.text, first.start, first.end, first.offset)
    return out


# A day and month written with a slash and no year ("4/2") is read only when the text shows
# the order: another slash date whose second number is over 12 ("3/20": month first) or whose
# first is ("20/3": day first). Without it, or with both, "4/2" stays unread.
_SLASH_DM_RE = re.compile(r"(?<![0-9./,:])(?P<a>[0-9]{1,2})/(?P<b>[0-9]{1,2})(?![0-9]|[./,][0-9]|/)")


_SLASH_PAIR_RE = re.compile(r"(?P<a>[0-9]{1,2})/(?P<b>[0-9]{1,2})")
_AFTER_WEEKDAY_RE = re.compile(rf"(?<![A-Za-z]){_WEEKDAY_RE},?{_SPACE}+$")


def _slash_dates_in_order(text: str, taken: list[tuple[int, int]], found: list[DateMention]) -> list[DateMention]:
    """``found`` with the slash dates the text's own order settles: "4/2" beside "3/30" is 2 April;
    "Thu 4/2" (read day first when nothing says otherwise) is 2 April there too."""
    if "/" not in text:
        return found
    slashes = list(_SLASH_DM_RE.finditer(text))
    month_first = any(int(m["b"]) > 12 >= int(m["a"]) for m in slashes)
    day_first = any(int(m["a"]) > 12 >= int(m["b"]) for m in slashes)
    if month_first == day_first:
        return found  # no order shown, or both: "4/2" stays unread, "Thu 4/2" day first
    out = []
    for d in found:
        w = _SLASH_PAIR_RE.fullmatch(d.text) if month_first and d.kind == "date" else None
        if w and int(w["a"]) <= 12 and int(w["b"]) <= 12 and _AFTER_WEEKDAY_RE.search(text, 0, d.start):
            d = DateMention("date", _day(None, int(w["a"]), int(w["b"])), d.text, d.start, d.end)
        out.append(d)
    for m in slashes:
        if any(m.start() < e and s < m.end() for s, e in taken) or not (1 <= int(m["a"]) <= 31 and 1 <= int(m["b"]) <= 31):
            continue
        mo, day = (int(m["a"]), int(m["b"])) if month_first else (int(m["b"]), int(m["a"]))
        if 1 <= mo <= 12:
            out.append(DateMention("date", _day(None, mo, day), m.group(0), m.start(), m.end()))
    return out


def _share_range_zones(text: str, found: list[DateMention]) -> list[DateMention]:
    """"15:00–16:30 UTC": the zone written after a range belongs to both of its ends."""
    out = list(found)
    for i in range(len(out) - 1, 0, -1):
        first, second = out[i - 1], out[i]
        if (first.kind == "time" and second.kind == "time" and first.offset is None and second.offset is not None
                and _RANGE_GAP_RE.match(text[first.end: second.start])):
            out[i - 1] = DateMention(first.kind, first.value, first.text, first.start, first.end, second.offset)
    return out


_ID_RE = re.compile(
    # Bounded by anything but letters and digits: "_L-103_" is markdown italics around an id.
    r"(?<![^\W_])(?<!#)[A-Za-z][A-Za-z0-9]*(?:[-_#][A-Za-z0-9]+)+(?![^\W_])"
    r"|(?<![^\W_])#[0-9]+(?![^\W_])"
)
_CARD_RE = re.compile(
    rf"(?i:(?:ending|ends)(?:{_SPACE}+(?:in|with))?|last{_SPACE}+(?:four|4)(?:{_SPACE}+digits)?(?:{_SPACE}+(?:are|of))?)"
    rf"[:{_SPACE}]*(?P<d>[0-9]{{4}})(?![0-9])"
    # A mask of at least three stars ("**" before digits is markdown bold: "**1000 EUR**").
    rf"|(?:(?:[•·●]{{2,}}|[*xX]{{3,}}){_SPACE}?)(?P<m>[0-9]{{4}})(?![0-9])"
)


# International phone numbers ("+351 217 000 900") are contact details, not amounts.
_PHONE_RE = re.compile(rf"(?<![\w+])\+[0-9]{{1,3}}(?:(?:{_SPACE}|-)?[0-9]{{2,4}}){{2,}}(?![0-9])")


def _blocked_spans(text: str) -> list[tuple[int, int]]:
    spans = [(d.start, d.end) for d in find_dates(text)]
    spans.extend(m.span() for m in _ZONE_ALONE_RE.finditer(text))
    spans.extend(m.span() for m in _PHONE_RE.finditer(text))
    for m in _ID_RE.finditer(text):
        if any(ch.isdigit() for ch in m.group()):
            spans.append(m.span())
    for m in _CARD_RE.finditer(text):
        group = "d" if m.group("d") else "m"
        spans.append(m.span(group))
    return spans


# ---------------------------------------------------------------------------
# Numbers and quantities
# ---------------------------------------------------------------------------

_NUMBER_RE = re.compile(
    rf"""
    (?:(?<![^\W_])(?<![.,])(?P<sign>[-+\u2212]))?
    (?<![^\W_])(?<![.,])                                                # "_144 EUR_" is markdown, not a word
    (?:
        (?P<en>[0-9]{{1,3}}(?:,[0-9]{{3}})+(?:\.[0-9]+)?)               # 1,050 / 1,050.5
      | (?P<dots>[0-9]{{1,3}}(?:\.[0-9]{{3}}){{2,}}(?:,[0-9]+)?)         # 1.050.000 / 1.050.000,5
      | (?P<de>[0-9]{{1,3}}\.[0-9]{{3}},[0-9]+)                          # 1.050,5
      | (?P<sp>[0-9]{{1,3}}(?:{_SPACE}[0-9]{{3}})+(?:[.,][0-9]+)?)       # 1 050 / 1 050,5
      | (?P<plain>[0-9]+(?:[.,][0-9]+)?)                                 # 1050 / 1050.5 / 12,5
    )
    (?![0-9])
    """,
    re.VERBOSE,
)
# Scale words multiply the number: "1.2 million kWh" is 1,200,000 kWh.
_SCALES = {"thousand": 3, "million": 6, "billion": 9, "bn": 9}
_SCALE_RE = re.compile(rf"{_SPACE}(?P<scale>(?i:thousand|million|billion|bn))(?![A-Za-z0-9])")
_PREFIX_RE = re.compile(rf"(?:(?<![A-Za-z])(?i:eur|usd|gbp)|[€$£]){_SPACE}?$")

# Powers of ten: "10^6", "10**6", "10⁶" (after a bare 10), "1e6", "1.5 × 10^9" (after any number).
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_EXPONENT = r"(?:(?:\^|\*\*)(?P<exp>[-+\u2212]?[0-9]{1,3})|(?P<sup>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}))"
_POWER_RE = re.compile(_EXPONENT + r"(?![0-9])")
_E_NOTATION_RE = re.compile(r"[eE](?P<exp>[-+]?[0-9]{1,3})(?![\w])")
_TIMES_TEN_RE = re.compile(rf"{_SPACE}?[×xX*·]{_SPACE}?10{_EXPONENT}(?![0-9])")
# A denominator after a unit: "EUR/m²", "€ per m2", "kWh/m²/year", "km/h", "72 EUR a night".
_PER_WORDS = {"yr": "year", "years": "year", "annum": "year", "year": "year", "month": "month", "months": "month",
              "mo": "month", "person": "person", "people": "person", "guest": "person", "seat": "seat",
              "nt": "night", "pn": "night"}
_PER_RE = re.compile(
    rf"(?:{_SPACE}*/{_SPACE}*|{_SPACE}+(?i:per|an?){_SPACE}+)"
    rf"(?P<den>(?i:{_alternation(list(_CI_SPELLINGS) + list(_PER_WORDS))})|{_alternation(_CS_SPELLINGS)})"
    r"(?![A-Za-z0-9²³])"
)


def _parse_number(m: re.Match[str]) -> tuple[float, int]:
    """The value and the number of decimals written, from a ``_NUMBER_RE`` match."""
    if m.group("en"):
        raw = m.group("en").replace(",", "")
    elif m.group("dots"):
        raw = m.group("dots").replace(".", "").replace(",", ".")
    elif m.group("de"):
        raw = m.group("de").replace(".", "").replace(",", ".")
    elif m.group("sp"):
        raw = re.sub(_SPACE, "", m.group("sp")).replace(",", ".")
    else:
        digits = m.group("plain")
        if "," in digits:
            whole, frac = digits.split(",")
            # A comma with exactly three digits after it is a thousands separator.
            raw = whole + frac if len(frac) == 3 else whole + "." + frac
        else:
            raw = digits
    decimals = len(raw.split(".")[1]) if "." in raw else 0
    value = float(raw)
    if m.group("sign") in ("-", "\u2212"):
        value = -value
    return value, decimals


def find_quantities(text: str) -> list[Quantity]:
    """Every number in ``text`` that is a quantity, in order (see the module doc for the rules).

    Cached by text like ``find_dates``: the same tool results are read for every turn and cell.
    """
    if not _HAS_DIGIT.search(text) and not _HAS_NUMBER_WORD.search(text):
        return []
    return list(_find_quantities_cached(text))


@lru_cache(maxsize=16384)
def _find_quantities_cached(text: str) -> tuple[Quantity, ...]:
    return tuple(_find_quantities(text))


def _find_quantities(text: str) -> list[Quantity]:
    blocked = _blocked_spans(text)
    out: list[Quantity] = []
    last_end = 0
    for cand in _candidates(text):
        if cand.start < last_end or any(s <= cand.digits_start < e for s, e in blocked):
            continue  # inside the previous quantity ("6" of "10^6") or a date, id or card
        q = _read_quantity(text, cand)
        if q is not None:
            out.append(q)
            last_end = q.end
    return out


@dataclass(frozen=True)
class _Candidate:
    """A number before its unit is read: in digits (``match``) or in words (``match`` None)."""

    start: int
    digits_start: int
    end: int
    value: float
    decimals: int
    match: re.Match[str] | None


def _candidates(text: str) -> list[_Candidate]:
    found = []
    for m in _NUMBER_RE.finditer(text):
        value, decimals = _parse_number(m)
        found.append(_Candidate(m.start(), m.start(m.lastgroup) if m.lastgroup else m.start(), m.end(), value,
                                decimals, m))
    for sp in spelled_numbers(text) if _HAS_NUMBER_WORD.search(text) else ():
        found.append(_Candidate(sp.start, sp.start, sp.end, sp.value, _decimals_of(sp.value), None))
    found.sort(key=lambda c: (c.start, -c.end))
    return found


def _decimals_of(value: float) -> int:
    return 0 if float(value).is_integer() else len(repr(float(value)).split(".")[1])


#: A power of ten beyond this is read as no power at all: 10.0**400 raises, and no quantity of
#: a conversation is that large or small (an answer once crashed the grading with "1e999").
_LARGEST_EXPONENT = 300


def _read_quantity(text: str, cand: _Candidate) -> Quantity | None:
    """The quantity a number starts: its powers, scale, fraction, unit, denominator and sign."""
    m, start, end, value, decimals = cand.match, cand.start, cand.end, cand.value, cand.decimals
    unit: str | None = None
    unit_word: str | None = None
    if m is not None:
        digits = m.group(m.lastgroup) if m.lastgroup else ""
        power = _power_after(text, end, digits)
        if power is not None and abs(power[0]) <= _LARGEST_EXPONENT:
            exponent, end = power
            value *= 10.0**exponent
            decimals = max(0, decimals - exponent)
        elif (two := _power_of_two_after(text, end, digits)) is not None:
            value, end = two
    if not math.isfinite(value):
        return None  # "1e308 × 10^5" or 400 nines: no float holds it, so no fact can be checked against it
    q_start, q_end = start, end
    sm = _SCALE_RE.match(text, end) if m is not None else None
    if sm:
        scale = _SCALES[sm.group("scale").lower()]
        value *= 10.0**scale
        decimals -= scale  # "1.2 million" is precise to 0.05 million
        end = q_end = sm.end()
    fraction = fraction_after(text, end)
    if fraction is not None:  # "two and a half", "1½"
        share, end = fraction
        value = math.copysign(abs(value) + share, value) if value else share
        decimals = max(decimals, 1 if share == 0.5 else 2)
        q_end = end
    um = _UNIT_RE.match(text, end) or _HYPHEN_UNIT_RE.match(text, end)
    if um:
        unit = table_unit(um.group("unit"))
        q_end = um.end()
    else:
        unit, unit_word, word_end = _unit_word_after(text, end)
        if unit is not None or unit_word is not None:
            q_end = word_end
        elif m is not None and text[end : end + 1].isalpha() and not sm:
            after = text[end : end + 1]
            # Glued to letters that are no unit: an ordinal or a word ("5th", "2x"), unless "x" is a times sign.
            if not (after in "xX" and not text[end + 1 : end + 2].isalpha()):
                return None
    if unit is None:
        window_start = max(0, start - 4)
        pm = _PREFIX_RE.search(text[window_start:start])
        if pm and not (window_start + pm.start() > 0 and text[window_start + pm.start() - 1].isalpha()):
            unit, unit_word = _CURRENCY_PREFIX[pm.group().strip(" \u00a0\u202f\u2009").lower()], None
            q_start = window_start + pm.start()
    if m is None and unit is None and unit_word is None:
        return None  # "one of them", "the last four digits", "half the time": words, not amounts
    per = None
    if unit is not None:
        per, q_end = _denominator(text, q_end)
        if per is None:
            per, q_end = _per_adverb(text, q_end)
        if per is None and unit in ("EUR", "USD", "GBP"):
            per = _per_before(text, q_start)
    # "-€5" / "€-5" both read as minus five euros.
    if unit in ("EUR", "USD", "GBP") and q_start > 0 and text[q_start - 1] in "-\u2212" and (
        q_start < 2 or not text[q_start - 2].isalnum()
    ):
        value, q_start = -abs(value), q_start - 1
    return Quantity(value, unit, text[q_start:q_end], q_start, q_end, decimals, per, unit_word, m is None)


_HAS_NUMBER_WORD = re.compile(
    r"(?i:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|teen|twenty|thirty|forty|fifty|sixty"
    r"|seventy|eighty|ninety|hundred|thousand|million|half|quarter)|[½¼¾]"
)
# "a 30-minute call", "a five-night stay": a table unit joined by a hyphen (words, not symbols).
_HYPHEN_UNIT_RE = re.compile(
    rf"(?P<gap>-)(?P<unit>(?i:{_alternation(w for w in _CI_SPELLINGS if len(w) > 2 and w.isalpha())}))"
    r"(?![A-Za-z0-9²³])"
)
# A word after a number that may be a unit the table does not know: "square feet", "ft²", "sq ft",
# "acres", "68sqft", "kWp", "CHF". Two words are tried before one ("light years", "feet tall").
_WORD_AFTER_RE = re.compile(
    rf"(?P<gap>{_SPACE}?)(?P<w1>(?:(?i:square|sq\.?|cubic|cu\.?){_SPACE}?)?[A-Za-zµ°Ω]+(?:[²³]|\^[23])?)"
    rf"(?:(?P<sep>{_SPACE}|-)(?P<w2>[A-Za-z]+(?:[²³]|\^[23])?))?(?![A-Za-z0-9])"
)
_ORDINAL_SUFFIX = {"st", "nd", "rd", "th"}


def _unit_word_after(text: str, end: int) -> tuple[str | None, str | None, int]:
    """``(registry unit, unknown unit word, end)`` of the word after a number; ``(None, None, end)``
    when it is no unit (a count of things: "3 rooms", an ordinal: "5th")."""
    wm = _WORD_AFTER_RE.match(text, end)
    if not wm:
        return None, None, end
    glued = not wm.group("gap")
    w1 = wm.group("w1")
    if glued and w1.lower() in _ORDINAL_SUFFIX:
        return None, None, end
    tries = []
    if wm.group("w2"):
        tries.append((w1 + wm.group("sep") + wm.group("w2"), wm.end()))
    tries.append((w1, wm.start("w1") + len(w1)))
    for word, word_end in tries:
        unit = registry_unit(word) if not word[:1].isdigit() else None
        if unit is not None:
            return unit, None, word_end
    if looks_like_unit(w1) or (glued and w1.lower() not in ("x",) and not w1[:1] in "xX"):
        return None, w1, wm.start("w1") + len(w1)
    return None, None, end


# "72 EUR nightly", "95 EUR each night": a rate written as an adverb after the amount.
_PER_ADVERBS = {"nightly": "night", "daily": "day", "weekly": "week", "monthly": "month", "yearly": "year",
                "annually": "year", "hourly": "h"}
_PER_ADVERB_RE = re.compile(
    rf"{_SPACE}+(?:(?P<adv>(?i:nightly|daily|weekly|monthly|yearly|annually|hourly))"
    rf"|(?i:each|every|for{_SPACE}+each|for{_SPACE}+every){_SPACE}+(?P<den>(?i:night|day|week|month|year|hour|person|guest)))"
    r"(?![A-Za-z])"
)
# "a nightly rate of 72 EUR", "per-night price: 72 EUR": the rate named before the amount.
_PER_BEFORE_RE = re.compile(
    rf"(?i:(?P<adv>nightly|daily|weekly|monthly|yearly|annual|hourly)|(?:per|a)[-{_SPACE[1:-1]}](?P<den>night|day|week|month|year|hour|person))"
    rf"{_SPACE}+(?i:rate|price|cost|fee|charge|amount|tariff)?{_SPACE}*(?i:of|is|was|at|:|=)?{_SPACE}*\**$"
)


def _per_adverb(text: str, end: int) -> tuple[str | None, int]:
    pm = _PER_ADVERB_RE.match(text, end)
    if not pm:
        return None, end
    word = (pm.group("adv") or pm.group("den")).lower()
    den = _PER_ADVERBS.get(word) or table_unit(word) or _PER_WORDS.get(word) or word
    return ("person" if word == "guest" else den), pm.end()


def _per_before(text: str, start: int) -> str | None:
    pm = _PER_BEFORE_RE.search(text[max(0, start - 40) : start])
    if not pm:
        return None
    word = (pm.group("adv") or pm.group("den")).lower()
    word = {"annual": "yearly"}.get(word, word)
    return _PER_ADVERBS.get(word) or table_unit(word) or _PER_WORDS.get(word) or word


def _power_of_two_after(text: str, end: int, digits: str) -> tuple[float, int] | None:
    """"2^30", "2**30", "2³⁰", "1024³": a power of a binary or SI base written out
    (``(value, new end)``), else None."""
    bases = {"2": 2, "1000": 1000, "1024": 1024, "1,000": 1000, "1,024": 1024}
    if digits not in bases:
        return None
    pm = _POWER_RE.match(text, end)
    if not pm:
        return None
    exponent = _exponent(pm)
    base = bases[digits]
    if not 0 < exponent <= (64 if base == 2 else 6):
        return None
    return float(base**exponent), pm.end()


def _power_after(text: str, end: int, digits: str) -> tuple[int, int] | None:
    """A power of ten written right after a number: ``(exponent, new end)``, else None.

    "10^6", "10**6" and "10⁶" are read only after a bare 10 (so "2^3" stays two numbers);
    "1e6" and "1.5 × 10^9" after any number.
    """
    if digits == "10":
        pm = _POWER_RE.match(text, end)
        if pm:
            return _exponent(pm) - 1, pm.end()  # 10^6 is 10 × 10^5
    em = _E_NOTATION_RE.match(text, end)
    if em:
        return int(em.group("exp")), em.end()
    tm = _TIMES_TEN_RE.match(text, end)
    if tm:
        return _exponent(tm), tm.end()
    return None


def _exponent(m: re.Match[str]) -> int:
    raw = m.group("exp") if m.group("exp") else m.group("sup").translate(_SUPERSCRIPTS)
    return int(raw.replace("\u2212", "-"))


def _denominator(text: str, end: int) -> tuple[str | None, int]:
    """The denominator of a compound unit after ``end`` ("/m²/year" -> "m²/year") and where it ends."""
    parts: list[str] = []
    while (pm := _PER_RE.match(text, end)) is not None:
        den = pm.group("den")
        canon = table_unit(den) or _PER_WORDS.get(den.lower())
        if canon is None or (pm.group().strip(" \u00a0\u202f\u2009/").lower() in ("a", "an") and canon in "mhsB"):
            break  # "7 EUR a m..." is not a rate; only words follow "a" / "an"
        parts.append(canon)
        end = pm.end()
    return ("/".join(parts) or None), end


def split_unit(unit: str | None) -> tuple[str | None, str | None]:
    """A key's unit split into its canonical numerator and denominator.

    ``"EUR/m²"`` -> ``("EUR", "m²")``, ``"kWh per m2 per year"`` -> ``("kWh", "m²/year")``,
    ``"km"`` -> ``("km", None)``; ``(None, None)`` when the numerator is not a known unit.
    """
    if not unit:
        return None, None
    parts = [p.strip() for p in re.split(r"/|\s+per\s+", unit.strip()) if p.strip()]
    head = canonical_unit(parts[0])
    if head is None:
        return None, None
    dens = [table_unit(p) or _PER_WORDS.get(p.lower()) or registry_unit(p) or p.lower() for p in parts[1:]]
    return head, "/".join(dens) or None


def find_definitions(text: str, quantities: Sequence[Quantity] | None = None) -> list[tuple[Quantity, Quantity]]:
    """Unit definitions written in a text: "1 MB = 10^6 bytes", "1 km (1,000 m)", "1 kWh is 1000 Wh".

    A definition is two quantities of one dimension in different units, one of them 1, that
    agree, joined by "=", "is", "means", "equals" or a parenthesis. Both sides are general
    knowledge, not figures someone has to source.
    """
    qs = list(quantities) if quantities is not None else find_quantities(text)
    found: list[tuple[Quantity, Quantity]] = []
    for a, b in zip(qs, qs[1:]):
        if not _DEF_GAP.match(text[a.end : b.start]):
            continue
        if a.unit is None or b.unit is None or a.unit == b.unit or a.dimension != b.dimension:
            continue
        if 1.0 in (a.value, b.value) and same_quantity(a, b, rel_tol=1e-9):
            found.append((a, b))
    return found


_DEF_GAP = re.compile(rf"^{_SPACE}*(?:=|≡|≈|\(|:|(?i:is|equals|means|is equal to|is the same as)){_SPACE}*$")


# ---------------------------------------------------------------------------
# Conversion and comparison
# ---------------------------------------------------------------------------


def to_base(q: Quantity | tuple[float, str | None] | float) -> tuple[float, str | None]:
    """``(value in the dimension's base unit, dimension)``; a unitless number has dimension None."""
    value, unit = _value_unit(q)
    if unit is None:
        return value, None
    dimension, factor = UNITS[unit]
    return value * factor, dimension


def _value_unit(q: Quantity | tuple[float, str | None] | float) -> tuple[float, str | None]:
    if isinstance(q, Quantity):
        return q.value, q.unit
    if isinstance(q, tuple):
        value, unit = q
        canon = canonical_unit(unit) if unit is not None else None
        if unit is not None and canon is None:
            raise ValueError(f"unknown unit {unit!r}")
        return float(value), canon
    return float(q), None


def same_quantity(
    a: Quantity | tuple[float, str | None] | float,
    b: Quantity | tuple[float, str | None] | float,
    rel_tol: float = 0.005,
    *,
    allow_unitless: bool = False,
) -> bool:
    """Whether two quantities are the same amount: same dimension and base values within ``rel_tol``.

    ``1.2 km`` equals ``1200 m``; ``3 kWh`` does not equal ``3 MWh``; currencies
    are never converted; ``5 kWp`` (a unit the reader does not know) equals only ``5 kWp``. A unitless number equals a united one only with
    ``allow_unitless=True`` (then the raw values are compared).
    """
    wa, wb = (q.unit_word if isinstance(q, Quantity) and q.unit_unknown else None for q in (a, b))
    va, ua = _value_unit(a)
    vb, ub = _value_unit(b)
    if wa is not None or wb is not None:
        # A unit the reader does not know is no unit it can compare: only the same word is.
        return wa == wb and _close(va, vb, rel_tol)
    if ua is None or ub is None:
        if ua != ub and not allow_unitless:
            return False
        return _close(va, vb, rel_tol)
    ba, da = to_base((va, ua))
    bb, db = to_base((vb, ub))
    return da == db and _close(ba, bb, rel_tol)


def _close(x: float, y: float, rel_tol: float) -> bool:
    return math.isclose(x, y, rel_tol=rel_tol, abs_tol=1e-9)


# ---------------------------------------------------------------------------
# Tool results
# ---------------------------------------------------------------------------

# Key tokens that name a unit (``distance_km``, ``area_m2``, ``kwh_per_year``).
_KEY_UNITS: dict[str, str] = {
    "mm": "mm", "cm": "cm", "m": "m", "km": "km", "metres": "m", "meters": "m",
    "m2": "m²", "sqm": "m²", "km2": "km²", "ha": "ha",
    "wh": "Wh", "kwh": "kWh", "mwh": "MWh", "gwh": "GWh", "twh": "TWh",
    "b": "B", "bytes": "B", "kb": "kB", "mb": "MB", "gb": "GB", "tb": "TB",
    "kib": "KiB", "mib": "MiB", "gib": "GiB", "tib": "TiB",
    "ms": "ms", "s": "s", "sec": "s", "secs": "s", "seconds": "s",
    "min": "min", "mins": "min", "minutes": "min", "h": "h", "hrs": "h", "hours": "h",
    "days": "day", "weeks": "week", "nights": "night",
    "pct": "%", "percent": "%",
    "eur": "EUR", "usd": "USD", "gbp": "GBP",
}
# Keys whose number takes the currency named by a sibling "currency" key.
_MONEY_KEYS = {"amount", "price", "total", "limit", "balance", "fee", "cost", "value", "sum", "subtotal"}


def unit_from_key(key: str) -> str | None:
    """The unit a JSON key names, if any. The token right after ``per`` is a denominator and ignored."""
    tokens = [t for t in re.split(r"[_\-\s]+|(?<=[a-z])(?=[A-Z])", key) if t]
    tokens = [t.lower() for t in tokens]
    skip = False
    for t in tokens:
        if skip:
            skip = False
            continue
        if t == "per":
            skip = True
            continue
        if t in _KEY_UNITS:
            return _KEY_UNITS[t]
    return None


def numbers_in_json(obj: object) -> list[tuple[float, str | None]]:
    """Every number in a tool result with a unit hint (a canonical unit name) where one is known.

    Hints come from the key (``distance_km`` -> km), from a sibling ``currency``
    or ``unit`` key (``{"amount": 95, "currency": "EUR"}`` -> EUR), and from the
    unit written in a string (``"95.00 EUR"``). Numbers in strings are read with
    ``find_quantities``, so ids and dates inside strings are skipped. Booleans
    are not numbers.
    """
    out: list[tuple[float, str | None]] = []
    _walk(obj, None, out)
    return out


def _walk(obj: object, hint: str | None, out: list[tuple[float, str | None]]) -> None:
    if isinstance(obj, bool) or obj is None:
        return
    if isinstance(obj, (int, float)):
        if math.isfinite(obj):
            out.append((float(obj), hint))
        return
    if isinstance(obj, str):
        for q in find_quantities(obj):
            out.append((q.value, q.unit or hint))
        return
    if isinstance(obj, Mapping):
        sibling = None
        for name in ("currency", "unit", "units"):
            raw = obj.get(name)
            if isinstance(raw, str) and canonical_unit(raw):
                sibling = canonical_unit(raw)
                break
        for key, value in obj.items():
            key_s = str(key)
            key_hint = unit_from_key(key_s)
            if key_hint is None and sibling is not None:
                tokens = {t.lower() for t in re.split(r"[_\-\s]+", key_s)}
                if sibling in ("EUR", "USD", "GBP"):
                    if tokens & _MONEY_KEYS:
                        key_hint = sibling
                elif tokens & {"value", "amount", "quantity", "size"}:
                    key_hint = sibling
            _walk(value, key_hint, out)
        return
    if isinstance(obj, (list, tuple)):
        for item in obj:
            _walk(item, hint, out)


def _within_rounding(shown: float, decimals: int, source: float) -> bool:
    """Whether ``source`` rounds to ``shown`` at the decimals it was written with."""
    return abs(source - shown) <= 0.5 * 10.0 ** (-decimals) + 1e-9 * max(1.0, abs(source))


def is_sourced(
    q: Quantity,
    sources: Iterable[tuple[float, str | None] | Quantity],
    rel_tol: float = 1e-6,
) -> bool:
    """Whether a stated quantity comes from a source number.

    Sourced when, for some source: both have units of one dimension and their base
    values agree (``1200 m`` from ``distance_km 1.2``; ``1.5 GB`` from
    ``attachment_mb 1500``); or either side has no unit and the raw values agree
    (the unit is the fact check's business, not provenance's); or a percentage
    is a unitless source share times 100 (``25 %`` from ``0.25``). Values agree
    when the source rounds to the number at the decimals it was written with
    (``1.2 km`` and ``1.23 km`` from ``1.2345 km``, not ``1.24 km``), or within
    ``rel_tol`` (tight by default: rounding, not closeness, is what makes a copy). Signs are ignored: "a charge
    of 95 EUR" is sourced by ``amount: -95``.
    """
    for src in sources:
        sv, su = (src.value, src.unit) if isinstance(src, Quantity) else (float(src[0]), canonical_unit(src[1]))
        if q.unit is not None and su is not None:
            if UNITS[q.unit][0] != UNITS[su][0]:
                continue
            # Compare in the stated unit so the rounding rule uses the stated decimals.
            source_in_q = abs(sv) * UNITS[su][1] / UNITS[q.unit][1]
            if _close(abs(q.value), source_in_q, rel_tol) or _within_rounding(abs(q.value), q.decimals, source_in_q):
                return True
            continue
        for candidate in (abs(sv), abs(sv) * 100.0 if q.unit == "%" and su is None else None):
            if candidate is None:
                continue
            if _close(abs(q.value), candidate, rel_tol) or _within_rounding(abs(q.value), q.decimals, candidate):
                return True
    return False


# ---------------------------------------------------------------------------
# Constants and calculations
# ---------------------------------------------------------------------------

# The factors people divide or multiply by without a source: powers of ten (SI prefixes) and of
# 1024 (binary prefixes: 1 073 741 824 = 2^30 bytes in a GiB), and the clock and calendar.
_POWERS = [10.0**k for k in (2, 3, 6, 9, 12)] + [1024.0**k for k in range(1, 5)]
_CLOCK = [0.0, 1.0, 2.0, 7.0, 12.0, 24.0, 52.0, 60.0, 365.0, 366.0, 3600.0, 86400.0, 604800.0]

#: General constants that need no source: (value, canonical unit or None).
CONSTANTS: frozenset[tuple[float, str | None]] = frozenset(
    {(v, None) for v in _POWERS + _CLOCK}
    | {(v, "B") for v in _POWERS} | {(1024.0, u) for u in ("KiB", "MiB", "GiB")}
    | {(1000.0, u) for u in ("m", "Wh", "kWh", "MWh", "kB", "MB", "GB")}
    | {
        (7.0, "day"), (365.0, "day"), (366.0, "day"), (1.0, "day"), (1.0, "week"), (52.0, "week"),
        (24.0, "h"), (1.0, "h"), (60.0, "min"), (1440.0, "min"), (60.0, "s"), (3600.0, "s"), (86400.0, "s"),
        (0.0, "%"), (100.0, "%"),
    }
)
# Calendar spans in registry units (named when first read): 12 months a year.
_CALENDAR = frozenset({(1.0, "month"), (12.0, "month"), (1.0, "year")})


def is_constant(q: Quantity | tuple[float, str | None] | float) -> bool:
    """Whether a quantity is a general constant (see ``CONSTANTS``): 7 days a week, 100 %, 1000,
    1024, 2^30 shown as the divisor for GiB, 3600 seconds in an hour."""
    value, unit = _value_unit(q)
    return (float(abs(value)), unit) in CONSTANTS or (float(abs(value)), unit) in _CALENDAR


_OPS = {"+": "+", "-": "-", "\u2212": "-", "–": "-", "×": "*", "x": "*", "X": "*", "*": "*", "·": "*", "/": "/", "÷": "/"}
# "95 EUR per night × 3 nights": a "per night" or "/night" before the operator belongs to the left operand.
# Markdown emphasis may close or open around an operator or "=": "1,500.00 − 1,457.00 = **43.00 EUR**".
_MARK = r"(?:\*\*|__|\*|_)?"
_OP_GAP = re.compile(
    rf"^{_MARK}{_SPACE}*(?:(?:per{_SPACE}+|/{_SPACE}*)[A-Za-z]+{_SPACE}*)?(?P<op>[-+\u2212–×xX*·/÷]|of){_SPACE}*{_MARK}$"
)
_EQ_GAP = re.compile(rf"^{_MARK}{_SPACE}*(?:=|≈|==){_SPACE}*{_MARK}$")


def _evaluate(values: Sequence[float], ops: Sequence[str]) -> float | None:
    """Left-to-right with × and / before + and -."""
    terms: list[float] = [values[0]]
    signs: list[str] = []
    for op, v in zip(ops, values[1:]):
        if op == "*":
            terms[-1] *= v
        elif op == "/":
            if v == 0:
                return None
            terms[-1] /= v
        else:
            signs.append(op)
            terms.append(v)
    total = terms[0]
    for sign, t in zip(signs, terms[1:]):
        total = total + t if sign == "+" else total - t
    return total


def find_calculations(text: str) -> list[Calculation]:
    """Shown arithmetic: quantities joined by + - × / and ending in ``= result``, and whether it holds.

    It holds when the result agrees with the computed value to the decimals the
    result is written with (``1/3 = 0.33`` holds). ``20 % of 95 EUR = 19 EUR``
    and ``95 EUR per night × 3 nights = 285 EUR`` are read too (a percentage
    multiplies as a share; "per night" belongs to its operand). Additions and subtractions of
    one dimension are also computed in base units, so ``1.2 km + 300 m = 1500 m`` holds.
    """
    qs = find_quantities(text)
    calcs: list[Calculation] = []
    i = 0
    while i < len(qs):
        operands = [qs[i]]
        ops: list[str] = []
        j = i
        result: Quantity | None = None
        while j + 1 < len(qs):
            gap = text[qs[j].end : qs[j + 1].start]
            om = _OP_GAP.match(gap)
            if om:
                if om.group("op") == "of" and qs[j].unit != "%":
                    break
                ops.append(_OPS.get(om.group("op"), "*"))
                operands.append(qs[j + 1])
                j += 1
                continue
            if gap.strip(" \u00a0\u202f\u2009") == "" and qs[j + 1].text[:1] in "-\u2212" and operands:
                # "412.50 -120.00": the sign was read as a negative number; it is a minus.
                nxt = qs[j + 1]
                ops.append("-")
                operands.append(Quantity(-nxt.value, nxt.unit, nxt.text, nxt.start, nxt.end, nxt.decimals))
                j += 1
                continue
            if _EQ_GAP.match(gap) and ops:
                result = qs[j + 1]
                j += 1
            break
        if result is None:
            i = max(i + 1, j if j > i else i + 1)
            continue
        computed = _evaluate([o.value for o in operands], ops)
        holds = computed is not None and _within_rounding(result.value, result.decimals, computed)
        if not holds and result.unit != "%" and any(o.unit == "%" for o in operands) and set(ops) <= {"*", "/"}:
            # "20 % of 95 EUR = 19 EUR": a percentage multiplies as a share.
            shares = _evaluate([o.value / 100 if o.unit == "%" else o.value for o in operands], ops)
            if shares is not None and _within_rounding(result.value, result.decimals, shares):
                computed, holds = shares, True
        dims = {o.dimension for o in operands + [result]}
        if not holds and set(ops) <= {"+", "-"} and len(dims) == 1 and None not in dims:
            base = _evaluate([to_base(o)[0] for o in operands], ops)
            if base is not None:
                computed = base / UNITS[result.unit][1]  # type: ignore[index]
                holds = _within_rounding(result.value, result.decimals, computed)
        calcs.append(
            Calculation(
                operands=tuple(operands),
                operators=tuple(ops),
                result=result,
                computed=computed if computed is not None else math.nan,
                holds=holds,
                text=text[operands[0].start : result.end],
                start=operands[0].start,
                end=result.end,
            )
        )
        i = j + 1
    return calcs
