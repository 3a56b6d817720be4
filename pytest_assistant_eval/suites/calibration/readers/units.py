"""Units and their dimensions: the domain's own table first, then a unit registry (pint).

The world states quantities in a few units whose meaning is this domain's convention (a MB is
10^6 bytes, a night is a unit of stay, EUR is never converted, "kb" is a kilobyte and not a
kilobarn). Those stay in a small table here. Every other unit a careful writer may use
("square feet", "ft²", "sq ft", "acres", "miles", "litres", "kg") is looked up in pint's
registry, loaded only when a text first names a unit the table does not know, so that the
run path's start never pays for it (the registry takes about 0.3 s to build).

A unit found through the registry is given a canonical name and added to ``UNITS`` with its
dimension and its factor to that dimension's base unit, so all comparisons read one table:
``UNITS["ft²"] == ("area", 0.0929...)``. A registry unit of a dimension the table knows gets
the table's name when it is the same unit ("kilometres" -> ``km``, "days" -> ``day``).

This module only names units; it never decides whether a number is right.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

__all__ = ["UNITS", "SPACE", "canonical_unit", "table_unit", "unit_dimension", "registry_unit", "looks_like_unit"]

SPACE = "[ \u00a0\u202f\u2009]"

#: canonical unit -> (dimension, factor to the dimension's base unit); registry units are added on use.
UNITS: dict[str, tuple[str, float]] = {
    "mm": ("length", 1e-3),
    "cm": ("length", 1e-2),
    "m": ("length", 1.0),
    "km": ("length", 1e3),
    "cm²": ("area", 1e-4),
    "m²": ("area", 1.0),
    "ha": ("area", 1e4),
    "km²": ("area", 1e6),
    "Wh": ("energy", 1.0),
    "kWh": ("energy", 1e3),
    "MWh": ("energy", 1e6),
    "GWh": ("energy", 1e9),
    "TWh": ("energy", 1e12),
    "B": ("data", 1.0),
    "kB": ("data", 1e3),
    "MB": ("data", 1e6),
    "GB": ("data", 1e9),
    "TB": ("data", 1e12),
    "KiB": ("data", 2.0**10),
    "MiB": ("data", 2.0**20),
    "GiB": ("data", 2.0**30),
    "TiB": ("data", 2.0**40),
    "ms": ("time", 1e-3),
    "s": ("time", 1.0),
    "min": ("time", 60.0),
    "h": ("time", 3600.0),
    "day": ("time", 86400.0),
    "week": ("time", 604800.0),
    "night": ("nights", 1.0),
    "%": ("percent", 1.0),
    "EUR": ("currency:EUR", 1.0),
    "USD": ("currency:USD", 1.0),
    "GBP": ("currency:GBP", 1.0),
}
_DOMAIN_UNITS = frozenset(UNITS)

# Spellings matched case-insensitively: the world's own units and the words the table is
# measurably better at than the registry (it reads "kilowatt-hours", "kb" and "nights").
_CI_SPELLINGS: dict[str, str] = {}


def _add(canonical: str, *spellings: str) -> None:
    for s in spellings:
        _CI_SPELLINGS[s.lower()] = canonical


_add("mm", "mm", "millimetres", "millimeters", "millimetre", "millimeter")
_add("cm", "cm", "centimetres", "centimeters", "centimetre", "centimeter")
_add("m", "metres", "meters", "metre", "meter")
_add("km", "km", "kilometres", "kilometers", "kilometre", "kilometer")
_add("cm²", "cm²", "cm2", "square centimetres", "square centimeters")
_add(
    "m²", "m²", "m2", "sqm", "sq m", "sq. m", "sq.m.", "sq.m", "square metres", "square meters",
    "square metre", "square meter",
)
_add("ha", "ha", "hectares", "hectare")
_add("km²", "km²", "km2", "sq km", "square kilometres", "square kilometers")
_add("Wh", "wh", "watt-hours", "watt hours", "watt-hour", "watt hour")
_add("kWh", "kwh", "kilowatt-hours", "kilowatt hours", "kilowatt-hour", "kilowatt hour")
_add("MWh", "mwh", "megawatt-hours", "megawatt hours", "megawatt-hour", "megawatt hour")
_add("GWh", "gwh", "gigawatt-hours", "gigawatt hours", "gigawatt-hour", "gigawatt hour")
_add("TWh", "twh", "terawatt-hours", "terawatt hours", "terawatt-hour", "terawatt hour")
_add("B", "bytes", "byte")
_add("kB", "kb", "kilobytes", "kilobyte")
_add("MB", "mb", "megabytes", "megabyte")
_add("GB", "gb", "gigabytes", "gigabyte")
_add("TB", "tb", "terabytes", "terabyte")
_add("KiB", "kib", "kibibytes", "kibibyte")
_add("MiB", "mib", "mebibytes", "mebibyte")
_add("GiB", "gib", "gibibytes", "gibibyte")
_add("TiB", "tib", "tebibytes", "tebibyte")
_add("ms", "ms", "milliseconds", "millisecond")
_add("s", "seconds", "second", "secs", "sec")
_add("min", "minutes", "minute", "mins", "min")
_add("h", "hours", "hour", "hrs", "hr")
_add("day", "days", "day")
_add("week", "weeks", "week")
_add("night", "nights", "night")
_add("%", "%", "percent", "per cent")
_add("EUR", "eur", "euros", "euro", "€")
_add("USD", "usd", "dollars", "dollar", "$")
_add("GBP", "gbp", "£")

# Single letters whose case matters (M is mega, m is metre; b is a bit, B a byte).
_CS_SPELLINGS: dict[str, str] = {"m": "m", "h": "h", "s": "s", "B": "B"}


def alternation(spellings: Iterable[str]) -> str:
    """A regex alternation of spellings, longest first, any kind of space where one is written."""
    parts = []
    for s in sorted(spellings, key=len, reverse=True):
        parts.append(re.escape(s).replace("\\ ", " ").replace(" ", SPACE))
    return "|".join(parts)


#: A table unit right after a number (``gap`` is the space, if any).
UNIT_RE = re.compile(
    rf"(?P<gap>{SPACE}?)(?P<unit>(?i:{alternation(_CI_SPELLINGS)})|{alternation(_CS_SPELLINGS)})"
    r"(?![A-Za-z0-9²³])"
)
CI_SPELLINGS = _CI_SPELLINGS
CS_SPELLINGS = _CS_SPELLINGS


def canonical_unit(spelling: str | None) -> str | None:
    """The canonical unit name for a spelling (``"sqm"`` -> ``"m²"``, ``"sq ft"`` -> ``"ft²"``),
    or None when neither the table nor the registry knows it."""
    if spelling is None:
        return None
    known = table_unit(spelling)
    return known if known is not None else registry_unit(spelling.strip())


def table_unit(spelling: str) -> str | None:
    """The canonical unit of a spelling the domain's table knows (no registry), else None."""
    s = spelling.strip()
    if s in UNITS:
        return s
    if s in _CS_SPELLINGS:
        return _CS_SPELLINGS[s]
    return _CI_SPELLINGS.get(re.sub(f"{SPACE}+", " ", s).lower())


def unit_dimension(unit: str) -> str:
    """The dimension of a canonical unit ("area", "currency:EUR", "[mass]")."""
    return UNITS[unit][0]


# ---------------------------------------------------------------------------
# The registry (pint), for every unit the table does not know
# ---------------------------------------------------------------------------

# English words that pint also defines as units ("3 are free", "2 points", "at 5 in the
# morning", "1 a day"): after a number they are words, not units.
_NOT_UNITS = frozenset(
    """a an at are as in is it no or on of per pi by to me we us be do go up so if the and for
    from into out over point points pt turn turns cycle cycles count counts hand hands bar bars
    cup cups line lines grain grains stone stones degree degrees rad radian radians percent
    pixel pixels px dot dots bit bits baud tab tabs tex den lea rod rods chain chains link links
    mil mils drop drops shot shots pinch pinches gross dozen century centuries galileo
    planck board boards cord cords quad quads franklin gamma gauss galileos ton_TNT
    night nights times x person persons people guest guests seat seats""".split()
)
# Dimensions the table names, with the registry's unit for the table's base.
_TABLE_BASES = {"length": "meter", "area": "meter ** 2", "energy": "watt_hour", "time": "second"}
_lock = threading.Lock()
_registry: Any = None


def _pint() -> Any:
    """The unit registry, built once per process on first need (about 0.3 s)."""
    global _registry
    if _registry is None:
        with _lock:
            if _registry is None:
                import pint

                _registry = pint.UnitRegistry(autoconvert_offset_to_baseunit=False)
    return _registry


_SQ_RE = re.compile(r"^(?i:sq)(?!uare)\.?\s?")
_CU_RE = re.compile(r"^(?i:cu\.?)\s+")
_SUPER = {"²": "**2", "³": "**3", "^2": "**2", "^3": "**3"}


@lru_cache(maxsize=4096)
def registry_unit(spelling: str) -> str | None:
    """A canonical name for a unit the registry knows, registered in ``UNITS``; None otherwise.

    Refuses what is a word rather than a unit after a number (see ``_NOT_UNITS``), units
    without a dimension (turns, counts) and units with an offset (°C: no single factor).
    """
    s = re.sub(f"{SPACE}+", " ", spelling.strip())
    if not s or not re.fullmatch(r"[A-Za-zµ°Ω][A-Za-z .\-µ°Ω²³^/0-9]*", s) or s.lower() in _NOT_UNITS:
        return None
    if any(w.lower() in _NOT_UNITS for w in re.split(r"[ \-/]", s)):
        return None
    text = _SQ_RE.sub("square ", s)
    text = _CU_RE.sub("cubic ", text)
    for sup, power in _SUPER.items():
        text = text.replace(sup, power)
    text = text.replace("-", " ")
    reg = _pint()
    try:
        unit = reg.parse_units(text)
    except Exception:  # pint raises several kinds for text that is no unit
        return None
    dims = dict(unit.dimensionality)
    if not dims:
        return None
    try:
        if not reg.Quantity(1, unit)._is_multiplicative:
            return None
    except AttributeError:  # pragma: no cover - pint internals
        pass
    dimension = _dimension_name(dims)
    base = _TABLE_BASES.get(dimension)
    factor = float(reg.Quantity(1, unit).to(base).magnitude if base else reg.Quantity(1, unit).to_base_units().magnitude)
    if not math.isfinite(factor) or factor <= 0:
        return None
    with _lock:
        for name in _DOMAIN_UNITS:
            dim, f = UNITS[name]
            if dim == dimension and math.isclose(f, factor, rel_tol=1e-9):
                return name  # "kilometres" through the registry is the table's km
        name = f"{unit:~P}".replace(" ", "")
        if len(name) < 2:
            name = str(unit)  # "a" and "l" are words: "year", "liter"
        if name in UNITS and UNITS[name] != (dimension, factor):
            name = str(unit)
        UNITS.setdefault(name, (dimension, factor))
    return name


def _dimension_name(dims: dict[str, float]) -> str:
    simple = {
        (("[length]", 1.0),): "length",
        (("[length]", 2.0),): "area",
        (("[length]", 3.0),): "volume",
        (("[mass]", 1.0),): "mass",
        (("[time]", 1.0),): "time",
        (("[length]", 2.0), ("[mass]", 1.0), ("[time]", -2.0)): "energy",
        (("[length]", 2.0), ("[mass]", 1.0), ("[time]", -3.0)): "power",
        (("[length]", 1.0), ("[time]", -1.0)): "speed",
    }
    key = tuple(sorted((k, float(v)) for k, v in dims.items()))
    return simple.get(key, " ".join(f"{k}^{v:g}" for k, v in key))


# What a unit the reader does not know looks like: a power sign, "square"/"cubic" before a
# word, a currency-like code, or letters mixing cases the way symbols do ("kWp", "MVA").
_LOOKS_LIKE_UNIT = re.compile(
    r"^(?:.*(?:[²³]|\^[0-9])|(?i:square|sq\.?|cubic|cu\.?)\s?[A-Za-z]+|[A-Z]{3}|[a-zµ][A-Z][A-Za-z]{0,3}|[A-Z]{2,3}[a-z]{1,2}"
    r"|[a-zA-Z]{1,4}/[a-zA-Z]{1,4})$"
)


def looks_like_unit(word: str) -> bool:
    """Whether a word after a number is written as a unit is (so an unknown one is a unit the
    reader does not know, not a count of things): ``ft³``, ``sq yd``, ``CHF``, ``kWp``, ``m³/h``."""
    return bool(_LOOKS_LIKE_UNIT.match(word.strip()))
