"""The answer key (``calibration/answer_key.yaml``, S2.3): loading and validation.

Derivations are only checked for form here; running them against a built world is
the job of the content tests (and of anyone who disputes a value).
"""

from __future__ import annotations

import re
from typing import Any

from yaml.nodes import Node

from .refs import find_refs
from .model import AnswerKey, Derivation, Fact, ForbiddenClaim, KeyEntry, ToolCallSpec
from pytest_assistant_eval.yaml_source import Fields, Source

__all__ = ["parse_answer_key", "parse_tool_call", "parse_tool_calls", "DEFAULT_LEVELS"]

DEFAULT_LEVELS = frozenset({"basic", "standard", "advanced"})

_ENTRY_KEYS = {"facts", "forbidden", "data_does_not_answer", "failed_run", "escalation_ok", "oracle_calls"}
_FACT_KEYS = {"id", "statement", "value", "unit", "critical", "derivation", "calculation"}
_CALC = re.compile(r"^[\d\s.:+\-*/()×÷−=]+$")  # ":" for clock times (14:30 - 01:00 = 13:30)


def parse_tool_call(src: Source, node: Node, what: str, tool_names: set[str], index: int = 0) -> ToolCallSpec | None:
    """``{tool: NAME, args: {...}}`` with a known tool; args are plain values, and may
    refer to the result of an earlier call of the same list (``index`` is this one's)."""
    f = Fields(src, node, what, {"tool", "args"})
    tool = f.get("tool", "str")
    args_node = f.get("args", "map", required=False)
    args: dict[str, Any] = src.value(args_node) if args_node is not None else {}
    if tool is not None and tool not in tool_names:
        src.error(f.node_of("tool"), f"{what}: unknown tool {tool!r}")
        return None
    bad_ref = False
    for ref, target in find_refs(args):
        if target is None:
            src.error(args_node, f"{what}: {ref!r} is not a reference like ${{0[status=failed].id}}")
            bad_ref = True
        elif target >= index:
            src.error(args_node, f"{what}: {ref!r} refers to call {target}, which does not come before this one")
            bad_ref = True
    if tool is None or not f.ok or bad_ref:
        return None
    return ToolCallSpec(tool=tool, args=args)


def parse_tool_calls(src: Source, seq: Node | None, what: str, tool_names: set[str]) -> tuple[list[ToolCallSpec], bool]:
    """A list of read calls (oracle calls, lookups); returns the calls and whether all parsed."""
    calls: list[ToolCallSpec] = []
    ok = True
    for i, item in enumerate(seq.value if seq is not None else [], 1):
        call = parse_tool_call(src, item, f"{what} #{i}", tool_names, i - 1)
        if call is None:
            ok = False
        else:
            calls.append(call)
    return calls, ok


def _fact(src: Source, node: Node, what: str, variants: set[str]) -> Fact | None:
    f = Fields(src, node, what, _FACT_KEYS)
    fid = f.get("id", "str")
    if fid:
        f.what = what = f"{what.rsplit(' ', 1)[0]} {fid}"
    statement = f.get("statement", "str")
    value = f.get("value", "scalar")
    unit_node = f.node_of("unit")
    unit: str | None = None
    if unit_node is None:
        if f.ok:
            src.error(node, f"{what}: missing field 'unit' (write unit: null for a unitless fact)")
    else:
        raw = src.value(unit_node)
        if raw is not None and not (isinstance(raw, str) and raw.strip()):
            src.error(unit_node, f"{what}: 'unit' must be a string or null, not {raw!r}")
        unit = raw if isinstance(raw, str) else None
    critical = f.get("critical", "bool")
    calculation = f.get("calculation", "str", required=False)
    if calculation is not None and ("=" not in calculation or not _CALC.match(calculation)):
        src.error(f.node_of("calculation"), f"{what}: 'calculation' must be arithmetic like '120.00 + 292.50 = 412.50', not {calculation!r}")
    derivation: Derivation | None = None
    dnode = f.get("derivation", "map")
    if dnode is not None:
        df = Fields(src, dnode, f"{what}: derivation", {"sql", "variant"})
        sql = df.get("sql", "str")
        variant = df.get("variant", "str", required=False, default="base")
        if variant not in variants:
            src.error(df.node_of("variant"), f"{what}: derivation: unknown world variant {variant!r} (known: {', '.join(sorted(variants))})")
        elif sql is not None:
            derivation = Derivation(sql=sql.strip(), variant=variant)
    if None in (fid, statement, value, critical, derivation) or not f.ok or (unit_node is None):
        return None
    return Fact(id=fid, statement=statement, value=value, unit=unit, critical=critical, derivation=derivation, calculation=calculation)


def _entry(src: Source, qid: str, node: Node, variants: set[str], tool_names: set[str], levels: set[str]) -> KeyEntry | None:
    what = f"key entry {qid}"
    f = Fields(src, node, what, _ENTRY_KEYS)
    if not f.ok:
        return None
    facts: list[Fact] = []
    seen: dict[str, int] = {}
    seq = f.get("facts", "list")
    if seq is not None:
        for i, item in enumerate(seq.value, 1):
            fact = _fact(src, item, f"{what}: fact #{i}", variants)
            if fact is None:
                continue
            if fact.id in seen:
                src.error(item, f"{what}: duplicate fact id {fact.id!r} (first at line {seen[fact.id]})")
                continue
            seen[fact.id] = item.start_mark.line + 1
            facts.append(fact)
    forbidden: list[ForbiddenClaim] = []
    fseq = f.get("forbidden", "list", required=False)
    if fseq is not None:
        for i, item in enumerate(fseq.value, 1):
            ff = Fields(src, item, f"{what}: forbidden claim #{i}", {"pattern", "why", "claim"})
            pattern = ff.get("pattern", "str")
            why = ff.get("why", "str")
            if pattern is not None:
                try:
                    re.compile(pattern, re.IGNORECASE)
                except re.error as exc:
                    src.error(ff.node_of("pattern"), f"{what}: forbidden claim #{i}: bad regular expression: {exc}")
                    continue
            claim = ff.get("claim", "str", required=False, default="")
            if pattern is not None and why is not None:
                forbidden.append(ForbiddenClaim(pattern=pattern, why=why, claim=claim))
    ddna = f.get("data_does_not_answer", "bool", required=False, default=False)
    failed_run = f.get("failed_run", "bool", required=False, default=False)
    esc: list[str] = []
    for level, lnode in f.str_list("escalation_ok"):
        if level not in levels:
            src.error(lnode, f"{what}: unknown level {level!r} in 'escalation_ok' (known: {', '.join(sorted(levels))})")
        else:
            esc.append(level)
    calls, _ = parse_tool_calls(src, f.get("oracle_calls", "list", required=False), f"{what}: oracle call",
                                tool_names)
    if seq is not None and not seq.value and not ddna:
        src.error(node, f"{what}: no facts (an entry without facts must say data_does_not_answer: true)")
    return KeyEntry(
        question_id=qid,
        facts=tuple(facts),
        forbidden=tuple(forbidden),
        data_does_not_answer=ddna,
        failed_run=failed_run,
        escalation_ok=tuple(esc),
        oracle_calls=tuple(calls),
        line=f.line,
    )


def parse_answer_key(
    src: Source, variants: set[str], tool_names: set[str], levels: set[str] | frozenset[str] = DEFAULT_LEVELS
) -> AnswerKey | None:
    """The answer key of ``src``; errors go to ``src.errors`` (None when unusable)."""
    if src.root is None:
        return None
    top = Fields(src, src.root, "the answer key", {"key_version", "entries"})
    if not top.ok:
        return None
    version = top.get("key_version", "scalar")
    entries: dict[str, KeyEntry] = {}
    enode = top.get("entries", "map")
    if enode is not None:
        # any key is allowed here: they are question ids, checked against the set later
        ef = Fields(src, enode, "'entries'", None)
        for qid, (key_node, value_node) in ef.items.items():
            entry = _entry(src, qid, value_node, variants, tool_names, set(levels))
            if entry is None:
                src.broken_ids.add(qid)
            else:
                entries[qid] = KeyEntry(**{**entry.__dict__, "line": key_node.start_mark.line + 1})
    if version is None:
        return None
    return AnswerKey(key_version=str(version), entries=entries)
