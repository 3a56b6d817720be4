"""Shown arithmetic in a text (S6.1): ``3 × 95 EUR = 285 EUR``, whether it holds.

Split from ``quantities`` (issue 32).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from pytest_assistant_eval.reading.compare import to_base
from pytest_assistant_eval.reading.numbers import Quantity, find_quantities
from pytest_assistant_eval.reading.sources import _within_rounding
from pytest_assistant_eval.reading.units import SPACE as _SPACE, UNITS

__all__ = ["Calculation", "find_calculations"]


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
