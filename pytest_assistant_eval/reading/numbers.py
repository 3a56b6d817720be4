"""Numbers and quantities in free text (S6.1): which numbers an answer states, in which unit.

Split from ``quantities`` (issue 32). This module does only that reading; it never decides a
verdict. Comparison and conversion are in ``compare``, tool results in ``sources``, shown
arithmetic in ``calculations``.

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

What is not a quantity
----------------------
A number inside a date, time, id, card digits or phone number (``spans``) is skipped, and so is
a number glued to letters before (``G05``) or after (``5th``, ``2x``) unless the letters after
are a unit (``5km``, ``2GB``).

Canonical units and their dimensions (base unit first)
------------------------------------------------------
------------------------------------------------------
length ``m``: ``mm cm m km``;  area ``m²``: ``cm² m² ha km²``;
energy ``Wh``: ``Wh kWh MWh GWh TWh``;
data ``B`` (decimal: kB = 10^3 B, MB = 10^6 B, GB = 10^9 B, TB = 10^12 B, the SI
convention that storage vendors and mail limits use; ``KiB MiB GiB TiB`` are
binary and kept apart by name);
time ``s``: ``ms s min h day week``; nights ``night``; percent ``%``;
currencies ``EUR USD GBP``, each its own dimension (``currency:EUR``...), never converted.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import lru_cache

from pytest_assistant_eval.reading.dates import _HAS_DIGIT
from pytest_assistant_eval.reading.spans import blocked_spans as _blocked_spans
from pytest_assistant_eval.reading.spelled import fraction_after, spelled_numbers
from pytest_assistant_eval.reading.units import (
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

__all__ = ["Quantity", "find_quantities", "split_unit"]

_CURRENCY_PREFIX = {"€": "EUR", "$": "USD", "£": "GBP", "eur": "EUR", "usd": "USD", "gbp": "GBP"}


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
