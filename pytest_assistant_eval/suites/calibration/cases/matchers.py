"""Argument and field matchers (S2.4): does a value satisfy a :class:`Matcher`, and
which value surely does.

``matches`` is used by the checks (required actions, approvals, restrictions, final
state); ``example_value`` by the reference oracle to build the arguments of the calls
it makes, so for every matcher ``matches(m, example_value(m, facts))`` holds (a
property test keeps it so).
"""

from __future__ import annotations

import math
from typing import Any

from .model import Matcher

__all__ = ["canonical", "example_value", "matches", "normalise_text", "describe"]


def normalise_text(text: str) -> str:
    """Casefolded, trimmed, inner whitespace collapsed."""
    return " ".join(text.casefold().split())


def canonical(value: Any) -> Any:
    """A comparable form after JSON normalisation: ``1`` equals ``1.0``, ``True`` is not ``1``,
    tuples are lists, mapping keys are strings."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, (int, float)):
        return ("num", value)
    if value is None:
        return ("null",)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, (list, tuple)):
        return ("list", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((str(k), canonical(v)) for k, v in value.items()), key=lambda kv: kv[0])))
    return ("other", repr(value))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _norm_scalar(value: Any) -> Any:
    """The normalised form used by ``normalised`` and ``set``: text normalised, numbers as
    their JSON text (so ``4242`` and ``"4242"`` agree), anything else canonical."""
    if isinstance(value, str):
        return ("s", normalise_text(value))
    if isinstance(value, bool):
        return ("c", canonical(value))
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer() and math.isfinite(value)):
        return ("s", str(int(value)))
    if isinstance(value, float):
        return ("s", repr(value))
    return ("c", canonical(value))


def _as_strings(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [v if isinstance(v, str) else str(v) for v in value]
    return [value if isinstance(value, str) else str(value)]


def matches(m: Matcher, actual: Any) -> bool:
    """Whether ``actual`` satisfies ``m`` (see :class:`Matcher` for each kind).

    ``None`` stands for an absent value: it satisfies only an ``exact`` matcher of ``None``.
    """
    kind = m.kind
    if kind == "any":
        return actual is not None
    if kind == "exact":
        return canonical(actual) == canonical(m.value)
    if actual is None:
        return False
    if kind == "normalised":
        return _norm_scalar(actual) == _norm_scalar(m.value)
    if kind == "numeric":
        got, want = _number(actual), _number(m.value)
        if got is None or want is None or not math.isfinite(got):
            return False
        return abs(got - want) <= m.tolerance
    if kind == "set":
        if not isinstance(actual, (list, tuple)):
            return False
        want_items = m.value if isinstance(m.value, (list, tuple)) else [m.value]
        got, want = {_norm_scalar(v) for v in actual}, {_norm_scalar(v) for v in want_items}
        return want <= got <= want | {_norm_scalar(v) for v in m.may_include}
    if kind == "contains":
        if not isinstance(actual, str):
            return False
        text = normalise_text(actual)
        return all(normalise_text(s) in text for s in _as_strings(m.value))
    raise ValueError(f"unknown matcher kind {kind!r}")


def example_value(m: Matcher, facts: dict[str, Any] | None = None) -> Any:
    """A value that satisfies ``m``: the user fact it comes from when it names one (and
    ``facts`` has it), else its value (a list for ``set``, one sentence for ``contains``)."""
    if m.from_fact is not None and facts is not None and m.from_fact in facts:
        return facts[m.from_fact]
    if m.kind == "set":
        return list(m.value) if isinstance(m.value, (list, tuple)) else [m.value]
    if m.kind == "contains":
        return " ".join(_as_strings(m.value))
    if m.kind == "any":
        return m.value if m.value is not None else "any"
    return m.value


def describe(m: Matcher) -> str:
    """A short human form for diffs and messages: ``'L-0003'``, ``≈ 360 ± 0.01``, ``contains 'a', 'b'``."""
    if m.kind == "exact":
        return repr(m.value)
    if m.kind == "normalised":
        return f"{m.value!r} (normalised)"
    if m.kind == "numeric":
        return f"{m.value!r} ± {m.tolerance:g}" if m.tolerance else repr(m.value)
    if m.kind == "set":
        return f"the set {sorted(map(str, example_value(m)))!r}"
    if m.kind == "contains":
        return "text containing " + ", ".join(repr(s) for s in _as_strings(m.value))
    return "any value"
