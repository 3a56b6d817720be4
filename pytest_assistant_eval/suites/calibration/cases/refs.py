"""References to earlier results in a case's read calls.

Some ids exist only in a built world (a background run's id is a fresh uuid on every
build), so an oracle call or a task lookup may take an argument from the result of an
earlier call of the same list, as a careful assistant would::

    - tool: list_runs
      args: {kind: payments_batch}
    - tool: get_run
      args: {run_id: "${0[status=failed].id}"}

``${N...}`` starts at the result of call ``N`` (0-based, an earlier one); ``.key``
takes a mapping key, ``.3`` a list item, ``[key=value]`` the first list item whose
``key`` equals ``value`` (compared as text). The reference oracle resolves them with
:func:`resolve_args` before it calls the tool.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["RefError", "find_refs", "resolve_args", "is_ref", "plan_rounds"]

_REF = re.compile(r"^\$\{(\d+)((?:\.[^.\[\]{}]+|\[[^\]=]+=[^\]]*\])*)\}$")
_STEP = re.compile(r"\.([^.\[\]{}]+)|\[([^\]=]+)=([^\]]*)\]")


class RefError(ValueError):
    """A reference that cannot be followed in the results at hand."""


def is_ref(value: Any) -> bool:
    return isinstance(value, str) and value.startswith("${")


def _walk(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if is_ref(value) else []
    if isinstance(value, dict):
        return [r for v in value.values() for r in _walk(v)]
    if isinstance(value, (list, tuple)):
        return [r for v in value for r in _walk(v)]
    return []


def find_refs(args: dict[str, Any]) -> list[tuple[str, int | None]]:
    """Every reference in ``args`` with the call index it names (None when malformed)."""
    out: list[tuple[str, int | None]] = []
    for ref in _walk(args):
        m = _REF.match(ref)
        out.append((ref, int(m.group(1)) if m else None))
    return out


def _unwrap(result: Any) -> Any:
    """A tool result as the assistant saw it (``{"ok": true, "result": ...}``) or its data."""
    if isinstance(result, dict) and "ok" in result and "result" in result:
        return result["result"]
    return result


def _follow(ref: str, results: list[Any]) -> Any:
    m = _REF.match(ref)
    if m is None:
        raise RefError(f"{ref!r} is not a reference like ${{0[status=failed].id}}")
    index = int(m.group(1))
    if index >= len(results):
        raise RefError(f"{ref!r} names call {index}, but only {len(results)} came before it")
    value = _unwrap(results[index])
    for step in _STEP.finditer(m.group(2)):
        key, fkey, fval = step.groups()
        if key is not None:
            if isinstance(value, list) and key.isdigit() and int(key) < len(value):
                value = value[int(key)]
            elif isinstance(value, dict) and key in value:
                value = value[key]
            else:
                raise RefError(f"{ref!r}: no {key!r} in {str(value)[:80]}")
        else:
            if not isinstance(value, list):
                raise RefError(f"{ref!r}: [{fkey}={fval}] needs a list")
            found = [v for v in value if isinstance(v, dict) and str(v.get(fkey)) == fval]
            if not found:
                raise RefError(f"{ref!r}: no item with {fkey} = {fval}")
            value = found[0]
    return value


def resolve_args(args: Any, results: list[Any]) -> Any:
    """``args`` with every reference replaced by the value it names in ``results``
    (the earlier calls' results in order: each their ``data``, or the JSON the assistant
    saw, ``{"ok": true, "result": ...}``)."""
    if is_ref(args):
        return _follow(args, results)
    if isinstance(args, dict):
        return {k: resolve_args(v, results) for k, v in args.items()}
    if isinstance(args, list):
        return [resolve_args(v, results) for v in args]
    return args


def plan_rounds(calls: list[Any]) -> list[list[int]]:
    """Indexes of ``calls`` (ToolCallSpec) cut into consecutive rounds: a call that refers
    to a result of the current round starts the next one. Sending each round at once and
    resolving the next round's arguments with :func:`resolve_args` over the results so
    far (in call order) makes the calls a careful assistant makes::

        results = []
        for round_ in plan_rounds(calls):
            batch = [(calls[i].tool, resolve_args(calls[i].args, results)) for i in round_]
            results += send(batch)
    """
    rounds: list[list[int]] = []
    start = 0  # index of the first call of the current round
    for i, call in enumerate(calls):
        deps = [t for _, t in find_refs(call.args) if t is not None and t < i]
        if not rounds or any(d >= start for d in deps):
            rounds.append([])
            start = i
        rounds[-1].append(i)
    return rounds
