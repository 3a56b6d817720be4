"""Dates and times in free text (S6.1): which spans of an answer are dates, times and zones.

Split from ``quantities`` (issue 32): the checks need to know which numbers are part of a date
or a time, so that they are not read as amounts, and what a stated date or time means.
``find_dates`` reads ISO dates and date-times, ``02.04.2026``, ``2/4/2026``, ``09:30``,
``9 am``, ``15h00``, ``noon``, ``2 April 2026``, ``April 2``, ``April 2026``, ``2026-02``,
``02/2029``, both ends of a range (``7–9 April``, ``1 to 5 April``, ``April 7-9``,
``3–4 pm``), a time zone after a time (``13:30 UTC``, ``14:30 Lisbon time (WEST, UTC+1)``,
``+01:00``) and a year after *in, since, until, by, year, of*. It never decides a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from pytest_assistant_eval.reading.relative_dates import RELATIVE_RE, relative_dates
from pytest_assistant_eval.reading.units import SPACE as _SPACE, UNIT_RE as _UNIT_RE

__all__ = ["DateMention", "find_dates", "zone_offset"]


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


