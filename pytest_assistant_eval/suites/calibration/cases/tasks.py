"""Tasks (``calibration/tasks/*.yaml``, S2.4): loading and validation, and the world
policy a task's restrictions become.

A matcher is written as a plain value (``exact``), or as a mapping with one kind key::

    listing_id: L-104                      # exact
    subject: {normalised: "Dinner Friday"}
    amount: {numeric: 360, tolerance: 0.01}
    to: {set: [ana@example.org, ben@example.org]}
    body: {contains: [Friday, "19:00"]}
    note: {any: true}
    card_last4: {from_fact: card}          # the user fact's value (kind from its type)
"""

from __future__ import annotations

import re

from graphlib import CycleError, TopologicalSorter
from typing import Any

from yaml.nodes import MappingNode, Node

from pytest_assistant_eval.conversation.backend import ForbiddenCall, Policy
from .injections import parse_injection
from .key import parse_tool_calls
from .matchers import example_value, matches
from .model import (
    BEHAVIOUR_CHECKS,
    Approval,
    Matcher,
    ReportPoint,
    RequiredAction,
    Restriction,
    StateAssertion,
    Task,
    UserFact,
)
from pytest_assistant_eval.yaml_source import Fields, Source

__all__ = ["parse_task", "parse_matcher", "policy_for", "task_facts", "MATCHER_KINDS"]

MATCHER_KINDS = ("exact", "normalised", "numeric", "set", "contains", "any")

_TASK_KEYS = {
    "task_version", "id", "title", "variant", "opening", "persona", "facts", "approvals",
    "required_actions", "expected_state", "restrictions", "checks", "lookups",
    "expects_refusal", "pair", "repeats", "injection", "report_must_say", "opening_grants",
}


def parse_matcher(src: Source, node: Node, what: str, facts: dict[str, UserFact] | None) -> Matcher | None:
    """One matcher (see the module docstring); ``facts`` are the task's user facts."""
    if not isinstance(node, MappingNode):
        return Matcher(kind="exact", value=src.value(node))
    f = Fields(src, node, what, set(MATCHER_KINDS) | {"tolerance", "from_fact", "may_include"})
    kinds = [k for k in MATCHER_KINDS if f.has(k)]
    from_fact = f.get("from_fact", "str", required=False)
    fact: UserFact | None = None
    if from_fact is not None and facts is not None:
        fact = facts.get(from_fact)
        if fact is None:
            src.error(f.node_of("from_fact"), f"{what}: unknown fact {from_fact!r} in 'from_fact' (the task's facts: {', '.join(sorted(facts)) or 'none'})")
            return None
    tolerance = f.get("tolerance", "number", required=False, default=0.0)
    if tolerance < 0:
        src.error(f.node_of("tolerance"), f"{what}: 'tolerance' must not be negative")
        return None
    if len(kinds) > 1:
        src.error(node, f"{what}: a matcher has one kind, not {', '.join(kinds)}")
        return None
    if not kinds:
        if from_fact is None:
            src.error(node, f"{what}: a matcher needs one of {', '.join(MATCHER_KINDS)} or from_fact (write {{exact: ...}} for a mapping value)")
            return None
        if fact is None:
            return None
        value = fact.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            kind = "numeric"
        elif isinstance(value, str):
            kind = "normalised"
        else:
            kind = "exact"
        return Matcher(kind=kind, value=value, tolerance=float(tolerance), from_fact=from_fact)
    kind = kinds[0]
    may_include: tuple[Any, ...] = ()
    if f.has("may_include"):
        mnode = f.get("may_include", "list")
        if kind != "set":
            src.error(f.node_of("may_include"), f"{what}: 'may_include' applies only to a set matcher")
            return None
        if mnode is None:
            return None
        may_include = tuple(src.value(mnode))
    if f.has("tolerance") and kind != "numeric":
        src.error(f.node_of("tolerance"), f"{what}: 'tolerance' applies only to a numeric matcher")
        return None
    vnode = f.node_of(kind)
    assert vnode is not None
    check = {"exact": "any", "normalised": "scalar", "numeric": "number", "set": "list", "any": "bool"}.get(kind)
    if kind == "contains":
        raw = src.value(vnode)
        if isinstance(raw, str):
            value: Any = [raw]
        elif isinstance(raw, list) and raw and all(isinstance(s, str) for s in raw):
            value = raw
        else:
            src.error(vnode, f"{what}: 'contains' must be a string or a list of strings")
            return None
    else:
        got = src.check(vnode, check, f"{what}: {kind!r}")
        if got is None and kind != "exact":
            return None
        value = src.value(vnode) if kind in ("set", "exact") else got
        if kind == "any":
            if value is not True:
                src.error(vnode, f"{what}: write 'any: true'")
                return None
            value = None
    m = Matcher(kind=kind, value=value, tolerance=float(tolerance), from_fact=from_fact, may_include=may_include)
    if fact is not None and not matches(m, fact.value):
        src.error(node, f"{what}: the fact {from_fact!r} ({fact.value!r}) does not satisfy this matcher")
        return None
    return m


def _matchers(src: Source, f: Fields, key: str, what: str, facts: dict[str, UserFact]) -> dict[str, Matcher] | None:
    mnode = f.get(key, "map", required=False)
    out: dict[str, Matcher] = {}
    if mnode is None:
        return out
    mf = Fields(src, mnode, f"{what}: {key}", None)
    ok = mf.ok
    for name, (_k, vnode) in mf.items.items():
        m = parse_matcher(src, vnode, f"{what}: {key}.{name}", facts)
        if m is None:
            ok = False
        else:
            out[name] = m
    return out if ok else None


def _tool(src: Source, f: Fields, what: str, tool_names: set[str]) -> str | None:
    tool = f.get("tool", "str")
    if tool is not None and tool not in tool_names:
        src.error(f.node_of("tool"), f"{what}: unknown tool {tool!r}")
        return None
    return tool


def _money(src: Source, f: Fields, what: str) -> tuple[float | None, str | None, bool]:
    max_amount = f.get("max_amount", "number", required=False)
    currency = f.get("currency", "str", required=False)
    ok = True
    if max_amount is not None and max_amount < 0:
        src.error(f.node_of("max_amount"), f"{what}: 'max_amount' must not be negative")
        ok = False
    if currency is not None and max_amount is None:
        src.error(f.node_of("currency"), f"{what}: 'currency' without 'max_amount'")
        ok = False
    if max_amount is not None and currency is None and f.ok:
        src.error(f.node_of("max_amount"), f"{what}: 'max_amount' needs its 'currency'")
        ok = False
    return (float(max_amount) if max_amount is not None else None), currency, ok


def _ids(src: Source, seq: Node | None, what: str, parse) -> list[Any]:
    """Parse each item of a list with ``parse(item, label)``, reporting duplicate ids."""
    out: list[Any] = []
    seen: dict[str, int] = {}
    if seq is None:
        return out
    for i, item in enumerate(seq.value, 1):
        obj = parse(item, f"{what} #{i}")
        if obj is None:
            continue
        if obj.id in seen:
            src.error(item, f"duplicate {what} id {obj.id!r} (first at line {seen[obj.id]})")
            continue
        seen[obj.id] = item.start_mark.line + 1
        out.append(obj)
    return out


def parse_task(src: Source, tool_names: set[str], variants: set[str]) -> Task | None:
    """One task file; errors go to ``src.errors`` (None when unusable)."""
    if src.root is None:
        src.broken_without_id = True
        return None
    top = Fields(src, src.root, "the task", _TASK_KEYS)
    if not top.ok:
        src.broken_without_id = True
        return None
    tid = top.get("id", "str")
    T = f"task {tid}" if tid else "the task"
    top.what = T
    bad = False
    version = top.get("task_version", "scalar", required=False, default="1")
    title = top.get("title", "str")
    variant = top.get("variant", "str")
    if variant is not None and variant not in variants:
        src.error(top.node_of("variant"), f"{T}: unknown world variant {variant!r} (known: {', '.join(sorted(variants))})")
        bad = True
    opening = top.get("opening", "str")
    persona = top.get("persona", "str")

    def user_fact(item: Node, label: str) -> UserFact | None:
        f = Fields(src, item, f"{T}: {label}", {"id", "description", "value", "keywords", "answer"})
        fid = f.get("id", "str")
        desc = f.get("description", "str")
        value = f.get("value", "scalar")
        kws = [k for k, _ in f.str_list("keywords", required=True)]
        if f.has("keywords") and not kws and f.ok:
            src.error(f.node_of("keywords"), f"{T}: {label}: 'keywords' must list at least one word")
        answer = f.get("answer", "str", required=False)
        if None in (fid, desc, value) or not kws:
            return None
        return UserFact(id=fid, description=desc, value=value, keywords=tuple(kws), answer=answer)

    facts = _ids(src, top.get("facts", "list", required=False), "fact", user_fact)
    fact_map = {f.id: f for f in facts}

    def approval(item: Node, label: str) -> Approval | None:
        what = f"{T}: approval {label}"
        f = Fields(src, item, what, {"id", "tool", "args", "max_amount", "currency", "grant"})
        aid = f.get("id", "str")
        tool = _tool(src, f, what, tool_names)
        args = _matchers(src, f, "args", what, fact_map)
        max_amount, currency, ok = _money(src, f, what)
        grant = f.get("grant", "bool", required=False, default=True)
        if None in (aid, tool, args) or not ok or not f.ok:
            return None
        return Approval(id=aid, tool=tool, args=args, max_amount=max_amount, currency=currency, grant=grant)

    approvals = _ids(src, top.get("approvals", "list", required=False), "approval", approval)

    action_nodes: dict[str, Node] = {}

    def action(item: Node, label: str) -> RequiredAction | None:
        what = f"{T}: required action {label}"
        f = Fields(src, item, what, {"id", "tool", "args", "after", "outcome"})
        aid = f.get("id", "str")
        if aid:
            action_nodes.setdefault(aid, item)
        tool = _tool(src, f, what, tool_names)
        args = _matchers(src, f, "args", what, fact_map)
        after = [(a, n) for a, n in f.str_list("after")]
        outcome = f.get("outcome", "str", required=False, default="ok")
        if outcome not in ("ok", "refused"):
            src.error(f.node_of("outcome"), f"{what}: 'outcome' must be ok or refused, not {outcome!r}")
            return None
        if None in (aid, tool, args) or not f.ok:
            return None
        obj = RequiredAction(id=aid, tool=tool, args=args, after=tuple(a for a, _ in after), outcome=outcome)
        after_nodes[aid] = after
        return obj

    after_nodes: dict[str, list[tuple[str, Node]]] = {}
    actions = _ids(src, top.get("required_actions", "list", required=False), "required action", action)
    action_ids = {a.id for a in actions}
    graph: dict[str, set[str]] = {}
    for a in actions:
        for dep, dnode in after_nodes.get(a.id, []):
            if dep not in action_ids:
                src.error(dnode, f"{T}: required action {a.id}: 'after' names an unknown action {dep!r}")
                bad = True
        graph[a.id] = {d for d in a.after if d in action_ids}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        cycle = exc.args[1]
        src.error(action_nodes.get(cycle[0]), f"{T}: the 'after' order of the required actions has a cycle: {' -> '.join(cycle)}")
        bad = True

    def assertion(item: Node, label: str) -> StateAssertion | None:
        what = f"{T}: expected state {label}"
        f = Fields(src, item, what, {"table", "where", "fields", "count", "ignore"})
        table = f.get("table", "str")
        wnode = f.get("where", "map", required=False)
        where = src.value(wnode) if wnode is not None else {}
        fields = _matchers(src, f, "fields", what, fact_map)
        count = f.get("count", "int", required=False)
        if count is not None and count < 0:
            src.error(f.node_of("count"), f"{what}: 'count' must not be negative")
            return None
        ignore = [i for i, _ in f.str_list("ignore")]
        if count is None and not fields and f.ok:
            src.error(item, f"{what}: asserts nothing (give 'fields' or 'count')")
            return None
        if None in (table, fields) or not f.ok:
            return None
        return StateAssertion(table=table, where=where, fields=fields, count=count, ignore=tuple(ignore))

    expected: list[StateAssertion] = []
    eseq = top.get("expected_state", "list", required=False)
    if eseq is not None:
        for i, item in enumerate(eseq.value, 1):
            a = assertion(item, f"#{i}")
            if a is not None:
                expected.append(a)

    def restriction(item: Node, label: str) -> Restriction | None:
        what = f"{T}: restriction {label}"
        f = Fields(src, item, what, {"id", "tool", "args", "max_amount", "currency", "why"})
        rid = f.get("id", "str")
        tool = _tool(src, f, what, tool_names)
        args = _matchers(src, f, "args", what, fact_map)
        max_amount, currency, ok = _money(src, f, what)
        why = f.get("why", "str")
        if args:
            for name, m in args.items():
                if m.kind not in ("exact", "normalised"):
                    src.error(f.node_of("args"), f"{what}: args.{name}: a restriction's argument must be an exact value (the world refuses exact values)")
                    ok = False
        if None in (rid, tool, args, why) or not ok or not f.ok:
            return None
        return Restriction(id=rid, tool=tool, args=args, max_amount=max_amount, currency=currency, why=why)

    restrictions = _ids(src, top.get("restrictions", "list", required=False), "restriction", restriction)

    injection = None
    if top.has("injection"):
        injection = parse_injection(src, top.node_of("injection"), T, tool_names, _matchers, fact_map)
        bad = bad or injection is None

    checks: list[str] = []
    for name, cnode in top.str_list("checks", required=True):
        if name not in BEHAVIOUR_CHECKS:
            src.error(cnode, f"{T}: unknown check {name!r} (one of: {', '.join(BEHAVIOUR_CHECKS)})")
            bad = True
        elif name in checks:
            src.error(cnode, f"{T}: check {name!r} is listed twice")
        else:
            checks.append(name)

    lookups, lookups_ok = parse_tool_calls(src, top.get("lookups", "list", required=False), f"{T}: lookup",
                                           tool_names)
    bad = bad or not lookups_ok

    expects_refusal = top.get("expects_refusal", "bool", required=False, default=False)
    refused = [a for a in actions if a.outcome == "refused"]
    if expects_refusal and not refused and top.ok:
        src.error(top.node_of("expects_refusal"), f"{T}: expects_refusal is true but no required action has 'outcome: refused'")
        bad = True
    if refused and not expects_refusal:
        src.error(action_nodes.get(refused[0].id), f"{T}: required action {refused[0].id} is refused but the task does not say 'expects_refusal: true'")
        bad = True
    def report_point(item: Node, label: str) -> ReportPoint | None:
        what = f"{T}: report_must_say {label}"
        f = Fields(src, item, what, {"id", "statement", "words"})
        pid = f.get("id", "str")
        statement = f.get("statement", "str")
        words = f.str_list("words", required=True)
        for pattern, pnode in words:
            try:
                re.compile(pattern)
            except re.error as exc:
                src.error(pnode, f"{what}: 'words' holds a bad regular expression {pattern!r}: {exc}")
                return None
        if f.has("words") and not words and f.ok:
            src.error(f.node_of("words"), f"{what}: 'words' must list at least one regular expression")
        if None in (pid, statement) or not words or not f.ok:
            return None
        return ReportPoint(id=pid, statement=statement.strip(), words=tuple(w for w, _ in words))

    report_must_say = _ids(src, top.get("report_must_say", "list", required=False), "report point", report_point)
    if top.ok and not report_must_say and (not top.has("required_actions") or expects_refusal) \
            and not top.has("report_must_say"):
        # No change (or a refusal) is the right result: an empty message must not pass it.
        src.error(top.node_of("id"), f"{T}: the right result is {'a refusal' if expects_refusal else 'no change'}, "
                  "so the task needs 'report_must_say': what the final report must tell the user")
        bad = True
    # Approvals the opening request itself gives: it states the action and every term of it
    # ("please try the payment again on that card", with the amount, card and merchant), so the
    # first such call needs no separate yes (S6.1 asks first; issue 30, fifth round).
    by_id = {a.id: a for a in approvals}
    opening_grants: list[str] = []
    for name, gnode in top.str_list("opening_grants", required=False):
        if name not in by_id:
            src.error(gnode, f"{T}: opening_grants names {name!r}, which is no approval of the task "
                      f"(approvals: {', '.join(by_id) or 'none'})")
            bad = True
        elif not by_id[name].grant:
            src.error(gnode, f"{T}: opening_grants names {name!r}, an approval the user refuses (grant: false)")
            bad = True
        elif name not in opening_grants:
            opening_grants.append(name)
    pair = top.get("pair", "str", required=False)
    if pair is not None and pair == tid:
        src.error(top.node_of("pair"), f"{T}: a task cannot be its own pair")
        bad = True
    repeats = top.get("repeats", "int", required=False, default=1)
    if repeats < 1:
        src.error(top.node_of("repeats"), f"{T}: 'repeats' must be at least 1")
        bad = True
    if bad or None in (tid, title, variant, opening, persona) or any(e.file == src.display for e in src.errors):
        if isinstance(tid, str):
            src.broken_ids.add(tid)
        else:
            src.broken_without_id = True
        return None
    return Task(
        id=tid,
        title=title,
        variant=variant,
        opening=opening.strip(),
        persona=persona.strip(),
        facts=tuple(facts),
        approvals=tuple(approvals),
        required_actions=tuple(actions),
        expected_state=tuple(expected),
        restrictions=tuple(restrictions),
        checks=tuple(checks),
        lookups=tuple(lookups),
        expects_refusal=expects_refusal,
        pair=pair,
        repeats=repeats,
        file=src.display,
        line=top.line,
        version=str(version),
        injection=injection,
        report_must_say=tuple(report_must_say),
        opening_grants=tuple(opening_grants),
    )


def task_facts(task: Task) -> dict[str, Any]:
    """The task's user facts as ``id -> value`` (what ``example_value`` needs)."""
    return {f.id: f.value for f in task.facts}


def policy_for(task: Task) -> Policy:
    """The world policy that enforces the task's restrictions by refusing calls."""
    facts = task_facts(task)
    return Policy(
        forbidden=tuple(
            ForbiddenCall(
                id=r.id,
                tool=r.tool,
                args={k: example_value(m, facts) for k, m in r.args.items()},
                max_amount=r.max_amount,
                currency=r.currency,
                reason=r.why or "not allowed for this task",
            )
            for r in task.restrictions
        )
    )
