"""Numbers that read more than one way (S6.1; issue 30 item 8).

``numbers`` reads ``2.500`` as 2.5 and ``1,250`` as 1250 (the English convention the world and
most models use), ``20.03.`` as the number 20.03 and ``14.30 Uhr`` as 14.3. Written in another convention they mean
2500, 1.25 and the 20th of March. Code may decide only what it reads one way: a number with
another reading is handed to the owner as unsure when that other reading is one the
conversation gave, never counted as invented. It reads text only; it never decides a verdict.
"""

from __future__ import annotations

import re

from pytest_assistant_eval.reading.numbers import Quantity

__all__ = ["other_readings", "day_month_reading", "clock_reading"]

_DOT_GROUP = re.compile(r"^[-+\u2212]?(?P<a>[0-9]{1,3})\.(?P<b>[0-9]{3})$")
_COMMA_GROUP = re.compile(r"^[-+\u2212]?(?P<a>[0-9]{1,3}),(?P<b>[0-9]{3})$")
_DECIMAL_COMMA = re.compile(r"^[-+\u2212]?(?P<a>[0-9]+),(?P<b>[0-9]{1,2})$")
# "20.03." / "20.3." and "am 5.4.": a day and a month with a trailing dot, no year.
_DAY_MONTH = re.compile(r"(?<![0-9.,])(?P<d>[0-9]{1,2})\.(?P<m>[0-9]{1,2})\.(?![0-9])")


def _digits(q: Quantity) -> str:
    """The number as written, without its currency or unit."""
    m = re.search(r"[-+\u2212]?[0-9][0-9.,\u00a0\u202f\u2009 ]*[0-9]|[0-9]", q.text)
    return m.group() if m else ""


def other_readings(q: Quantity) -> list[float]:
    """The values the digits of ``q`` have in the other convention: ``2.500`` -> [2500],
    ``1,250`` -> [1.25], ``12,5`` (a decimal comma) -> [125]."""
    digits = _digits(q)
    sign = -1.0 if q.value < 0 else 1.0
    out: list[float] = []
    if (m := _DOT_GROUP.match(digits)) and abs(abs(q.value) - float(f"{m['a']}.{m['b']}") * _power(q)) < 1e-9:
        out.append(sign * float(m["a"] + m["b"]) * _power(q))
    elif (m := _COMMA_GROUP.match(digits)) and abs(abs(q.value) - float(m["a"] + m["b"]) * _power(q)) < 1e-9:
        out.append(sign * float(f"{m['a']}.{m['b']}") * _power(q))
    elif (m := _DECIMAL_COMMA.match(digits)) and abs(abs(q.value) - float(f"{m['a']}.{m['b']}") * _power(q)) < 1e-9:
        out.append(sign * float(m["a"] + m["b"]) * _power(q))
    return out


def _power(q: Quantity) -> float:
    """The scale word's factor ("1.2 million"): the other reading scales alike."""
    for word, factor in (("thousand", 1e3), ("million", 1e6), ("billion", 1e9), ("bn", 1e9)):
        if re.search(rf"\b{word}\b", q.text, re.I):
            return factor
    return 1.0


def day_month_reading(text: str, q: Quantity) -> str | None:
    """``--MM-DD`` when the number at ``q`` is a day and a month with a trailing dot ("20.03.")."""
    m = _DAY_MONTH.match(text, q.start) or _DAY_MONTH.match(text, max(0, q.start - 1))
    if not m or not (m.start() <= q.start < m.end()):
        return None
    day, month = int(m["d"]), int(m["m"])
    if 1 <= day <= 31 and 1 <= month <= 12:
        return f"--{month:02d}-{day:02d}"
    return None


# "14.30 Uhr", "um 9.15", "von 14.30 bis 15.15": a clock time written with a dot, the way several
# locales write it; the dot makes it a number to a reader of the English convention.
_CLOCK_AFTER = re.compile(r"\s?(?:Uhr|h\b|o'clock|UTC|GMT|WES?T|CES?T)", re.I)
_CLOCK_BEFORE = re.compile(r"(?:\b(?:um|bis|von|ab|gegen|at|from|to|till|until|by|à|às|de|a)|[–-])\s*$", re.I)
_CLOCK = re.compile(r"(?<![0-9.,])(?P<h>[01]?[0-9]|2[0-3])\.(?P<m>[0-5][0-9])(?![0-9]|[.,][0-9])")


def clock_reading(text: str, q: Quantity) -> str | None:
    """``HH:MM`` when the number at ``q`` is a clock time written with a dot ("14.30 Uhr", "bis 15.15")."""
    if q.unit is not None:
        return None
    m = _CLOCK.match(text, q.start)
    if m is None:
        return None
    if not (_CLOCK_AFTER.match(text, m.end()) or _CLOCK_BEFORE.search(text[max(0, m.start() - 12):m.start()])):
        return None
    return f"{int(m['h']):02d}:{m['m']}"
