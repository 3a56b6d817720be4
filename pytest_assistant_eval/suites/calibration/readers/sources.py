"""Numbers in tool results and whether a stated number came from one (S6.1 provenance).

Split from ``quantities`` (issue 32): ``numbers_in_json`` reads a tool result with unit hints
from its keys; ``is_sourced`` says whether a stated quantity copies (or converts) one of them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping

from pytest_assistant_eval.suites.calibration.readers.compare import _close
from pytest_assistant_eval.suites.calibration.readers.numbers import Quantity, find_quantities
from pytest_assistant_eval.suites.calibration.readers.units import UNITS, canonical_unit

__all__ = ["numbers_in_json", "unit_from_key", "is_sourced", "prepared", "Prepared"]



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


class Prepared(tuple):  # type: ignore[type-arg]
    """Sources as ``is_sourced`` reads each, (value, canonical unit): read once for the many
    numbers of one answer checked against them (issue 32: each call read every source again)."""


def prepared(sources: Iterable[tuple[float, str | None] | Quantity]) -> Prepared:
    """``sources`` read once for many ``is_sourced`` calls (a tuple: it cannot go stale)."""
    return sources if type(sources) is Prepared else Prepared(_pairs(sources))  # type: ignore[return-value]


def _pairs(sources: Iterable[tuple[float, str | None] | Quantity]) -> Iterator[tuple[float, str | None]]:
    for src in sources:
        yield (src.value, src.unit) if isinstance(src, Quantity) else (float(src[0]), canonical_unit(src[1]))


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
    of 95 EUR" is sourced by ``amount: -95``. ``sources`` may be ``prepared`` once for many calls.

    The loop is ``_is_sourced_each`` with what depends on ``q`` alone computed once (the same
    floats from the same operations, so the same answers); a ``q`` whose rounding step or unit
    does not compute goes the long way, which raises where it always did.
    """
    pairs = sources if type(sources) is Prepared else _pairs(sources)
    unit = q.unit
    try:
        step = 0.5 * 10.0 ** (-q.decimals)
        dim_q, factor_q = UNITS[unit] if unit is not None else (None, 1.0)
    except (OverflowError, KeyError):
        return _is_sourced_each(q, pairs, rel_tol)
    shown = abs(q.value)
    isclose = math.isclose
    percent = unit == "%"
    for sv, su in pairs:
        if unit is not None and su is not None:
            dim_s, factor_s = UNITS[su]
            if dim_q != dim_s:
                continue
            source = abs(sv) * factor_s / factor_q  # in the stated unit: the rounding rule uses its decimals
            if isclose(shown, source, rel_tol=rel_tol, abs_tol=1e-9) or \
                    abs(source - shown) <= step + 1e-9 * max(1.0, abs(source)):
                return True
            continue
        source = abs(sv)
        if isclose(shown, source, rel_tol=rel_tol, abs_tol=1e-9) or \
                abs(source - shown) <= step + 1e-9 * max(1.0, abs(source)):
            return True
        if percent and su is None:
            source = abs(sv) * 100.0
            if isclose(shown, source, rel_tol=rel_tol, abs_tol=1e-9) or \
                    abs(source - shown) <= step + 1e-9 * max(1.0, abs(source)):
                return True
    return False


def _is_sourced_each(q: Quantity, pairs: Iterable[tuple[float, str | None]], rel_tol: float) -> bool:
    """``is_sourced`` step by step (as it was written first), for a ``q`` its fast loop cannot take."""
    for sv, su in pairs:
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
