"""Comparing and converting quantities (S6.1): the same amount in another unit, unit
definitions written in a text, and the general constants that need no source.

Split from ``quantities`` (issue 32).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from pytest_assistant_eval.reading.numbers import Quantity, find_quantities
from pytest_assistant_eval.reading.units import SPACE as _SPACE, UNITS, canonical_unit

__all__ = ["to_base", "same_quantity", "find_definitions", "CONSTANTS", "is_constant"]




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
