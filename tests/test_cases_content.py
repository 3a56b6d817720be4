"""The shipped cases (S2.6, S2.7): they load cleanly, every answer-key value is derived
again from a freshly built world (with its unit), every oracle call runs and shows each
fact, every task replays on its world variant to its expected state, pairs need
different actions, and doing nothing fails every task that needs an action."""

from __future__ import annotations

import ast
import json
import operator
import re
from graphlib import TopologicalSorter
from pathlib import Path
from typing import Any

import pytest

from pytest_assistant_eval.suites.calibration.cases import (

    CaseSet,
    Fact,
    Task,
    check_state,
    example_value,
    load_cases,
    matches,
    policy_for,
    task_facts,
)
from pytest_assistant_eval.suites.calibration.cases.matchers import normalise_text
from pytest_assistant_eval.suites.calibration.cases.model import BEHAVIOUR_CHECKS, CLASSES
from pytest_assistant_eval.suites.calibration.cases.refs import resolve_args
from pytest_assistant_eval.conversation.backend import Policy, ToolResult
from pytest_assistant_eval.suites.calibration.world.build import build_world, list_variants, query
from pytest_assistant_eval.suites.calibration.world.services import open_world
from pytest_assistant_eval.suites.calibration.world.tools import tool_specs

CALIBRATION = Path(__file__).resolve().parent.parent / "calibration"
SPECS = {s.name: s for s in tool_specs()}


def _load() -> CaseSet:
    # variants come from the fixture folder so that collection needs no built world
    variants = {"base"} | {p.stem for p in (CALIBRATION / "world" / "variants").glob("*.yaml")}
    return load_cases(CALIBRATION, set(SPECS), variants)


CASES = _load()
QUESTIONS = {q.id: q for q in (*CASES.questions.questions, *CASES.questions.scenario.turns)}
ENTRIES = sorted(CASES.key.entries.values(), key=lambda e: e.question_id)
FACTS = [(e.question_id, f) for e in ENTRIES for f in e.facts]
TASKS = {t.id: t for t in CASES.tasks}
ACTING = [t for t in CASES.tasks if any(a.outcome == "ok" for a in t.required_actions)]


@pytest.fixture(scope="module")
def world_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_world(tmp_path_factory.mktemp("world"))


def _open(world_dir: Path, variant: str, tmp_path: Path, policy: Policy = Policy()):
    return open_world(world_dir, variant, tmp_path / f"cell-{variant}", policy)


def _run(world, calls) -> list[ToolResult]:
    results: list[ToolResult] = []
    for call in calls:
        args = resolve_args(call.args, [r.data for r in results])
        results.append(world.call(call.tool, args, turn=1, round=len(results) + 1))
    return results


def _action_args(task: Task, action) -> dict[str, Any]:
    facts = task_facts(task)
    return {k: example_value(m, facts) for k, m in action.args.items()}


def _in_order(task: Task):
    by_id = {a.id: a for a in task.required_actions}
    order = TopologicalSorter({a.id: set(a.after) for a in task.required_actions}).static_order()
    return [by_id[i] for i in order]


# --------------------------------------------------------------------------- loading and counts


def test_the_shipped_cases_load_cleanly_against_the_real_tools_and_variants(world_dir: Path):
    assert load_cases(CALIBRATION, set(SPECS), list_variants(world_dir)) == CASES


def test_the_question_set_has_thirty_questions_ten_per_class_and_an_eight_turn_scenario():
    qs = CASES.questions.questions
    assert len(qs) >= 30
    for cls in CLASSES:
        assert sum(q.cls == cls for q in qs) >= 10, cls
    assert [t.id for t in CASES.questions.scenario.turns] == [f"S01.{i}" for i in range(1, 9)]


def test_lookups_cover_units_the_failed_run_and_unanswerable_questions():
    lookup = [CASES.key.entries[q.id] for q in CASES.questions.questions if q.cls == "lookup"]
    units = {f.unit for e in lookup for f in e.facts}
    assert {"m", "m²", "MWh", "GB", "min", "EUR"} <= units
    assert sum(e.data_does_not_answer for e in lookup) >= 2
    assert any(e.failed_run for e in lookup)
    assert any(f.value is False for e in lookup for f in e.facts), "an inactive record"


def test_escalation_is_acceptable_below_the_class_level_only():
    expected = {"lookup": (), "interpret": ("basic",), "diagnose": ("basic", "standard")}
    for q in CASES.questions.questions:
        assert CASES.key.entries[q.id].escalation_ok == expected[q.cls], q.id


def test_the_tasks_cover_what_the_spec_asks_for():
    tasks = CASES.tasks
    assert len(tasks) >= 12
    pairs = {frozenset((t.id, t.pair)) for t in tasks if t.pair}
    assert len(pairs) >= 4
    assert any(t.expects_refusal for t in tasks)
    assert any(m.from_fact for t in tasks for a in t.required_actions for m in a.args.values())
    assert any(t.restrictions for t in tasks)
    spending = [t for t in ACTING if any(SPECS[a.tool].spends_money and a.outcome == "ok" for a in t.required_actions)]
    assert any(ap.max_amount is not None for t in spending for ap in t.approvals)
    for t in tasks:
        assert 1 <= t.repeats <= 3 and set(t.checks) <= set(BEHAVIOUR_CHECKS) and t.checks, t.id


# --------------------------------------------------------------------------- the answer key


@pytest.mark.parametrize(("qid", "fact"), FACTS, ids=[f.id for _, f in FACTS])
def test_every_key_value_is_derived_again_from_the_built_world(world_dir: Path, qid: str, fact: Fact):
    assert fact.derivation.variant == QUESTIONS[qid].variant, "a fact is derived on its question's world"
    rows = query(world_dir, fact.derivation.variant, fact.derivation.sql)
    assert len(rows) == 1 and len(rows[0]) == 2, f"{fact.id}: the derivation must give one row (value, unit), got {rows}"
    value, unit = rows[0]
    assert unit == fact.unit, f"{fact.id}: unit {unit!r} in the world, {fact.unit!r} in the key"
    if isinstance(fact.value, bool):
        assert value in (0, 1) and bool(value) is fact.value
    elif isinstance(fact.value, (int, float)):
        assert isinstance(value, (int, float)) and value == pytest.approx(fact.value, abs=1e-9), fact.id
    else:
        assert value == fact.value, fact.id


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.question_id for e in ENTRIES])
def test_no_forbidden_claim_matches_a_true_statement(entry):
    for claim in entry.forbidden:
        for fact in entry.facts:
            assert not re.search(claim.pattern, fact.statement, re.IGNORECASE), (claim.pattern, fact.statement)


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?")
_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
CONSTANTS = {1000.0, 100.0, 60.0, 24.0, 1024.0, 1_000_000.0}


def _leaves(obj: Any):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _leaves(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _leaves(v)
    else:
        yield obj


def _numbers(obj: Any) -> set[float]:
    out: set[float] = set()
    for leaf in _leaves(obj):
        if isinstance(leaf, bool):
            continue
        if isinstance(leaf, (int, float)):
            out.add(float(leaf))
        elif isinstance(leaf, str):
            out |= {float(n) for n in _NUMBER.findall(leaf)}
    return out


def _found(value: Any, data: Any) -> bool:
    if isinstance(value, bool):
        return any(leaf is value for leaf in _leaves(data))
    if isinstance(value, (int, float)):
        return any(abs(n - value) <= 1e-9 for n in _numbers(data))
    return normalise_text(str(value)) in normalise_text(json.dumps(data, ensure_ascii=False))


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    raise ValueError(ast.dump(node))


def _clock_to_minutes(text: str) -> str:
    return re.sub(r"\b(\d{1,2}):(\d{2})\b", lambda m: str(int(m.group(1)) * 60 + int(m.group(2))), text)


def _calculation_holds(fact: Fact, data: Any, question: str) -> None:
    calc = fact.calculation
    assert calc is not None
    lhs, rhs = (s.strip() for s in calc.replace("×", "*").replace("÷", "/").replace("−", "-").split("="))
    given = _numbers(data) | CONSTANTS | {float(n) for n in _NUMBER.findall(question)}
    given |= {float(v) for w, v in _WORDS.items() if re.search(rf"\b{w}\b", question, re.IGNORECASE)}
    text = json.dumps(data, ensure_ascii=False)
    for clock in re.findall(r"\b\d{1,2}:\d{2}\b", lhs):
        assert clock in text, f"{fact.id}: {clock} is in no result"
    for n in _NUMBER.findall(re.sub(r"\b\d{1,2}:\d{2}\b", "", lhs)):
        assert abs(float(n)) in given or float(n) in given, f"{fact.id}: {n} in {calc!r} comes from no result"
    got = _eval(ast.parse(_clock_to_minutes(lhs), mode="eval"))
    want_text = _clock_to_minutes(rhs)
    decimals = len(want_text.split(".")[1]) if "." in want_text else 0
    assert abs(got - float(want_text)) <= 0.5 * 10**-decimals + 1e-9, f"{fact.id}: {calc!r} does not hold"
    if isinstance(fact.value, (int, float)):
        assert float(rhs) == pytest.approx(fact.value), f"{fact.id}: the calculation ends in another value"
    else:
        assert rhs == str(fact.value)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.question_id for e in ENTRIES])
def test_oracle_calls_run_and_show_every_fact(world_dir: Path, tmp_path: Path, entry):
    question = QUESTIONS[entry.question_id]
    assert entry.oracle_calls, "a careful assistant makes at least one read call"
    world = _open(world_dir, question.variant, tmp_path)
    try:
        results = _run(world, entry.oracle_calls)
    finally:
        world.close()
    for call, result in zip(entry.oracle_calls, results):
        assert result.status == "ok", f"{call.tool} {call.args}: {result.error}"
        assert not SPECS[call.tool].consequential, f"{call.tool} is not a read call"
    data = [r.data for r in results]
    for fact in entry.facts:
        if fact.calculation:
            _calculation_holds(fact, data, question.text)
        else:
            assert _found(fact.value, data), f"{fact.id}: {fact.value!r} is in no oracle result"


# --------------------------------------------------------------------------- tasks

TASK_IDS = sorted(TASKS)


@pytest.mark.parametrize("tid", TASK_IDS)
def test_lookups_run_and_surface_every_id_the_actions_use(world_dir: Path, tmp_path: Path, tid: str):
    task = TASKS[tid]
    world = _open(world_dir, task.variant, tmp_path, policy_for(task))
    try:
        results = _run(world, task.lookups)
        state = world.describe_state()
    finally:
        world.close()
    assert task.lookups and all(r.status == "ok" for r in results), [r.error for r in results]
    assert all(not SPECS[c.tool].consequential for c in task.lookups)
    text = json.dumps([r.data for r in results], ensure_ascii=False)
    ids = {row[k] for rows in state.values() for row in rows for k in ("id",) if k in row}
    listings = {x["id"]: x for r in results for x in (r.data if isinstance(r.data, list) else [r.data])
                if isinstance(x, dict) and "price" in x}
    for action in task.required_actions:
        args = _action_args(task, action)
        for name, value in args.items():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item in ids:
                    assert item in text, f"{action.id}.{name} = {item} is not in any lookup result"
        if action.tool == "book_listing":
            assert args["listing_id"] in listings, f"{action.id}: the lookups do not show the listing's price"


@pytest.mark.parametrize("tid", TASK_IDS)
def test_required_actions_replay_on_their_world_to_the_expected_state(world_dir: Path, tmp_path: Path, tid: str):
    task = TASKS[tid]
    world = _open(world_dir, task.variant, tmp_path, policy_for(task))
    try:
        _run(world, task.lookups)
        for action in _in_order(task):
            result = world.call(action.tool, _action_args(task, action), turn=1, round=1)
            assert result.status == action.outcome, f"{action.id}: {result.status} {result.error}"
        mismatches = check_state(task.expected_state, world.describe_state())
    finally:
        world.close()
    assert mismatches == [], "\n".join(map(str, mismatches))


def _spend(world_dir: Path, task: Task, tool: str, args: dict[str, Any]) -> float | None:
    if tool == "charge_card":
        return float(args["amount"])
    if tool == "book_listing":
        [(price,)] = query(world_dir, task.variant, "SELECT price_amount FROM listings WHERE id = ?", (args["listing_id"],))
        from datetime import date

        nights = (date.fromisoformat(args["end_date"]) - date.fromisoformat(args["start_date"])).days
        return round(price * nights, 2)
    return None


@pytest.mark.parametrize("tid", TASK_IDS)
def test_every_consequential_action_has_an_approval_that_covers_it(world_dir: Path, tid: str):
    task = TASKS[tid]
    for action in task.required_actions:
        if not SPECS[action.tool].consequential:
            continue
        args = _action_args(task, action)

        def covers(ap) -> bool:
            return ap.tool == action.tool and all(k in args and matches(m, args[k]) for k, m in ap.args.items())

        granted = [ap for ap in task.approvals if ap.grant and covers(ap)]
        assert granted, f"{action.id}: no approval covers it"
        assert not [ap for ap in task.approvals if not ap.grant and covers(ap)], f"{action.id}: a refused approval covers it too"
        spent = _spend(world_dir, task, action.tool, args)
        if SPECS[action.tool].spends_money:
            assert any(ap.max_amount is not None and spent is not None and spent <= ap.max_amount + 1e-9 for ap in granted), action.id


@pytest.mark.parametrize("tid", [t.id for t in CASES.tasks if t.restrictions])
def test_the_world_refuses_what_a_restriction_forbids(world_dir: Path, tmp_path: Path, tid: str):
    task = TASKS[tid]
    for rule in task.restrictions:
        template = next(a for a in task.required_actions if a.tool == rule.tool)
        args = {**_action_args(task, template), **{k: example_value(m, task_facts(task)) for k, m in rule.args.items()}}
        world = _open(world_dir, task.variant, tmp_path / rule.id, policy_for(task))
        try:
            result = world.call(rule.tool, args, turn=1, round=1)
        finally:
            world.close()
        assert result.status == "refused", f"{rule.id}: {result.status} {result.error}"


@pytest.mark.parametrize("tid", [t.id for t in ACTING])
def test_doing_nothing_fails_every_task_that_needs_an_action(world_dir: Path, tmp_path: Path, tid: str):
    task = TASKS[tid]
    world = _open(world_dir, task.variant, tmp_path, policy_for(task))
    try:
        start = world.describe_state()
    finally:
        world.close()
    assert check_state(task.expected_state, start), "the start state already passes: an idle assistant would pass"


# An injection pair (issue 16) needs the same actions in both worlds by design: it is
# checked in tests/test_injection_tasks.py.
PAIRS = sorted({tuple(sorted((t.id, t.pair))) for t in CASES.tasks
                if t.pair and t.injection is None and TASKS[t.pair].injection is None})


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(p) for p in PAIRS])
def test_the_two_tasks_of_a_pair_need_different_actions(world_dir: Path, tmp_path: Path, pair: tuple[str, str]):
    a, b = (TASKS[i] for i in pair)
    assert a.opening == b.opening, "a pair changes a fact of the world or the user, not the request"
    assert a.variant != b.variant or a.facts != b.facts

    def correct(task: Task):
        return sorted((x.tool, json.dumps(_action_args(task, x), sort_keys=True), x.outcome) for x in task.required_actions)

    assert correct(a) != correct(b)
    # doing one task's correct actions in the other's world is visibly wrong there
    for this, other in ((a, b), (b, a)):
        world = _open(world_dir, this.variant, tmp_path / this.id, policy_for(this))
        try:
            statuses = [world.call(x.tool, _action_args(other, x), turn=1, round=1).status for x in _in_order(other)]
            mismatches = check_state(this.expected_state, world.describe_state())
        finally:
            world.close()
        assert mismatches or any(s != "ok" for s in statuses), f"{other.id}'s actions also pass {this.id}"
