"""The shortcuts issue 32 took in AgentDojo's start environments, restores and diffs give what the
long ways gave (skipped without the ``[agentdojo]`` extra).

* ``cells.load_injected_environment`` (libyaml's parser, the vectors' defaults kept) against
  AgentDojo's own ``load_and_inject_default_environment``, benign, with canaries in every vector,
  and with an attack's texts, on every suite;
* ``backend.environment_from_state`` (a field the validators left as the snapshot has it is kept)
  against validating every field again, after the ground truth of user and injection tasks;
* ``backend.diff_environments`` and grading's ``_state_diff`` (equal subtrees and tables skipped)
  against flattening both sides whole;
* the cached start environments are fresh for every cell: a cell that changes its environment
  leaves the next cell's untouched.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("agentdojo")

from pydantic import BaseModel, TypeAdapter  # noqa: E402

from pytest_assistant_eval.conversation.backend import FieldChange  # noqa: E402
from pytest_assistant_eval.suites.agentdojo import grade  # noqa: E402
from pytest_assistant_eval.suites.agentdojo.backend import (  # noqa: E402
    _MISSING,
    AgentDojoWorld,
    _flatten,
    diff_environments,
    environment_from_state,
)
from pytest_assistant_eval.suites.agentdojo.cells import (  # noqa: E402
    AgentDojoCell,
    injections_for,
    load_injected_environment,
    start_environment,
    suites,
)

SUITES = ("banking", "slack", "travel", "workspace")


def _first(ids: Any, n: int) -> list[str]:
    return sorted(ids, key=lambda t: int(t.rsplit("_", 1)[1]))[:n]


@pytest.mark.parametrize("name", SUITES)
def test_libyaml_loads_the_environment_agentdojo_loads(name):
    suite = suites()[name]
    vectors = suite.get_injection_vector_defaults()
    user, injection = _first(suite.user_tasks, 1)[0], _first(suite.injection_tasks, 1)[0]
    attack = injections_for(AgentDojoCell(name, user, injection), "important_instructions", "gpt-4o-2024-05-13")
    assert attack, "the attack puts its text somewhere"
    for texts in ({}, {v: f"<CANARY---{v}--->" for v in vectors}, attack,
                  {v: "line one\n\n  it's 'quoted', {braces}: a colon # a hash\ttab - dash" for v in vectors}):
        ours, theirs = load_injected_environment(suite, texts), suite.load_and_inject_default_environment(texts)
        assert ours == theirs
        assert ours.model_dump(mode="json") == theirs.model_dump(mode="json")


def test_an_injection_into_no_vector_is_refused_as_agentdojo_refuses_it():
    suite = suites()["banking"]
    with pytest.raises(ValueError, match="subset"):
        load_injected_environment(suite, {"no_such_vector": "x"})


def _validated_again(env_type: Any, state: dict[str, Any]) -> Any:
    """The long way: validate the model, then validate and set every field again from the snapshot."""
    data = {name: rows[0]["value"] for name, rows in state.items()}
    env = env_type.model_validate(data)

    def assign(obj: Any, values: dict[str, Any]) -> None:
        for field, info in type(obj).model_fields.items():
            if field not in values:
                continue
            current = getattr(obj, field)
            if isinstance(current, BaseModel) and isinstance(values[field], dict):
                assign(current, values[field])
            else:
                object.__setattr__(obj, field, TypeAdapter(info.annotation).validate_python(values[field]))

    assign(env, data)
    return env


def _after_ground_truth(name: str, user: str, injection: str | None) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    from agentdojo.functions_runtime import FunctionsRuntime

    suite = suites()[name]
    env = start_environment(AgentDojoCell(name, user, injection), "important_instructions", "oracle")
    world = AgentDojoWorld(suite, env)
    before = world.snapshot()
    runtime = FunctionsRuntime(suite.tools)
    calls = list(suite.user_tasks[user].ground_truth(env.model_copy(deep=True)))
    if injection is not None:
        calls += suite.injection_tasks[injection].ground_truth(env.model_copy(deep=True))
    for call in calls:
        runtime.run_function(world.environment, call.function, dict(call.args))
    return world.environment, before, world.snapshot()


def _pairs(name: str) -> list[tuple[str, str | None]]:
    suite = suites()[name]
    return [(u, i) for u in _first(suite.user_tasks, 6) for i in (None, *_first(suite.injection_tasks, 2))]


@pytest.mark.parametrize("name", SUITES)
def test_a_restored_environment_is_the_one_validating_every_field_again_gives(name):
    sent = 0
    for user, injection in _pairs(name):
        env, _, after = _after_ground_truth(name, user, injection)
        restored = environment_from_state(type(env), after)
        assert restored == _validated_again(type(env), after)
        assert restored.model_dump(mode="json") == {k: rows[0]["value"] for k, rows in after.items()}
        sent += name == "workspace" and len(env.inbox.emails) > len(env.inbox.initial_emails)
    if name == "workspace":
        assert sent, "an e-mail sent during the run (a field a validator would rebuild) was restored"


@pytest.mark.parametrize("name", SUITES)
def test_a_final_state_rebuilt_over_its_start_environment_is_the_one_validating_every_field_gives(name):
    """Grading rebuilds a cell's final environment over its start one: the tables the run left
    alone are copies of the start's, the changed ones validated, and the result is the long way's."""
    reused = changed = 0
    for user, injection in _pairs(name):
        env, before, after = _after_ground_truth(name, user, injection)
        start = environment_from_state(type(env), before)
        rebuilt = environment_from_state(type(env), after, base=start)
        assert rebuilt == _validated_again(type(env), after)
        assert rebuilt.model_dump(mode="json") == {k: rows[0]["value"] for k, rows in after.items()}
        for table in after:
            if before[table] == after[table]:
                reused += 1
                assert getattr(rebuilt, table) == getattr(start, table)
                assert getattr(rebuilt, table) is not getattr(start, table)  # a copy: grading never shares
            else:
                changed += 1
    assert reused and changed


@pytest.mark.parametrize("name", SUITES)
def test_utility_at_the_start_handed_one_environment_is_the_verdict_a_copy_gives_on_every_user_task(name):
    suite = suites()[name]
    first_injection = _first(suite.injection_tasks, 1)[0]
    held = 0
    for user in suite.user_tasks:
        for injection in (None, first_injection):
            cell = AgentDojoCell(name, user, injection)
            task = suite.user_tasks[user]
            fast = grade._holds_at_start(task, start_environment(cell, "important_instructions", "oracle"),
                                         lambda: pytest.fail("the environment was not changed"))
            pre = start_environment(cell, "important_instructions", "oracle")
            assert fast == grade._utility(task, "", pre, pre.model_copy(deep=True), []), (user, injection)
            held += fast
    assert name != "banking" or held, "banking has tasks whose utility holds at the start"


def test_a_check_that_changes_the_state_it_is_given_is_asked_again_on_a_copy():
    class Meddling:  # a utility that empties the end state's inbox, then compares the two states
        def utility_from_traces(self, *args: Any) -> None:
            return None

        def utility(self, answer: str, pre: Any, post: Any) -> bool:
            post.inbox.initial_emails.clear()
            return pre == post

    cell = AgentDojoCell("workspace", "user_task_0", None)
    start = start_environment(cell)
    assert start.inbox.initial_emails
    assert grade._holds_at_start(Meddling(), start, lambda: start_environment(cell)) is False


def _flattened_whole(a: dict[str, Any], b: dict[str, Any]) -> list[FieldChange]:
    out = []
    for table in sorted(set(a) | set(b)):
        fa: dict[str, Any] = {}
        fb: dict[str, Any] = {}
        _flatten(a.get(table, [{}])[0].get("value"), "", fa)
        _flatten(b.get(table, [{}])[0].get("value"), "", fb)
        for key in sorted(set(fa) | set(fb)):
            if fa.get(key, _MISSING) != fb.get(key, _MISSING):
                out.append(FieldChange(table, key or table, "value", fa.get(key), fb.get(key)))
    return out


@pytest.mark.parametrize("name", SUITES)
def test_diffs_that_skip_equal_subtrees_find_every_change_the_whole_flattening_finds(name):
    changed = 0
    for user, injection in _pairs(name):
        _, before, after = _after_ground_truth(name, user, injection)
        for a, b in ((before, after), (after, before), (before, before), ({}, after), (before, {})):
            assert diff_environments(a, b) == _flattened_whole(a, b)
            whole = grade._changes(_flattened_whole(grade._unordered(a), grade._unordered(b)))
            assert grade._state_diff(a, b) == whole
        changed += bool(diff_environments(before, after))
    assert changed, "some ground truth changed the environment"


def test_diffs_of_mixed_shapes_and_keys_with_dots_match_the_whole_flattening():
    a = {"t": [{"id": "t", "value": {"a.b": 1, "x": [1, 2, {"y": []}], "z": {}, "k": [True]}}]}
    b = {"t": [{"id": "t", "value": {"a": {"b": 1}, "x": [1, {"y": [3]}], "z": [], "k": [1]}}],
         "u": [{"id": "u", "value": 5}]}
    for x, y in ((a, b), (b, a), (a, a)):
        assert diff_environments(x, y) == _flattened_whole(x, y)


def test_a_cell_never_sees_the_environment_another_cell_changed():
    cell = AgentDojoCell("banking", "user_task_0", "injection_task_0")
    first = start_environment(cell, "important_instructions", "oracle")
    untouched = first.model_dump(mode="json")
    first.bank_account.balance += 1000
    first.bank_account.transactions.clear()
    second = start_environment(cell, "important_instructions", "oracle")
    assert second is not first
    assert second.model_dump(mode="json") == untouched
    assert second.bank_account.transactions, "the second cell's transactions are its own, not the cleared list"


def _mutable_ids(value: Any, seen: set[int] | None = None) -> set[int]:
    """The ids of every mutable object reachable from ``value`` (models, lists, dicts, sets)."""
    seen = set() if seen is None else seen
    if isinstance(value, (BaseModel, list, dict, set)) and id(value) not in seen:
        seen.add(id(value))
        children = (value.__dict__.values() if isinstance(value, BaseModel)
                    else value.values() if isinstance(value, dict) else value)
        for child in children:
            _mutable_ids(child, seen)
    return seen


@pytest.mark.parametrize("name", SUITES)
def test_a_pickled_copy_of_the_environment_is_a_deep_copy_sharing_nothing(name):
    from pytest_assistant_eval.suites.agentdojo import cells

    suite = suites()[name]
    user, injection = _first(suite.user_tasks, 1)[0], _first(suite.injection_tasks, 1)[0]
    texts = tuple(sorted(injections_for(AgentDojoCell(name, user, injection), "important_instructions", "oracle").items()))
    kept = cells._injected_environment(name, texts, None)
    copied, deep = cells._fresh_copy(name, texts, None), kept.model_copy(deep=True)
    assert type(copied) is type(deep)
    assert copied == deep
    assert copied.model_dump(mode="json") == deep.model_dump(mode="json")
    assert copied.model_fields_set == deep.model_fields_set
    assert not _mutable_ids(copied) & _mutable_ids(kept), "a copy shares no object with the kept environment"
    assert not _mutable_ids(copied) & _mutable_ids(cells._fresh_copy(name, texts, None))


# -- redaction's header gate (issue 32: redacting a large AgentDojo record) -------------------------
# (no agentdojo needed, but kept beside the other shortcuts of the same item)

from hypothesis import given, settings, strategies as st  # noqa: E402

from pytest_assistant_eval.redact import (  # noqa: E402
    _HEADER_KEY,
    _HEADER_WORDS,
    _case_blind,
    _header_word_then_separator,
    redact,
)

_PIECES = st.sampled_from(["cookie", "Cookie", "COOKIE", "api-key", "X-Api-Key", "authorization",
                           "Proxy-Authorization", '"', ":", "=", " ", "\t", "\n", "abc123456789XYZ", "secret9",
                           "bearer ", ",", "}", "\\", "cookies", "jar", "\u0130", "\u0131", "\u212a", "é",
                           "\u00a0", "CO", "OKİE"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=12).map("".join))
def test_the_header_gate_never_skips_a_text_the_header_pattern_matches(text):
    if _HEADER_KEY.search(text) is not None:
        assert _header_word_then_separator(_case_blind(text))
        if text.isascii():
            assert _header_word_then_separator(text.lower())


def test_every_character_the_pattern_takes_for_a_header_words_letter_is_that_letter_once_case_blind():
    import re
    import sys

    letters = sorted(set("".join(_HEADER_WORDS)) - {"-"}) + ["-"]
    any_of = re.compile("(?i)[" + "".join(re.escape(x) for x in letters) + r':="\s]')
    for point in range(sys.maxunicode + 1):
        char = chr(point)
        if 0xD800 <= point <= 0xDFFF or not any_of.fullmatch(char):
            continue
        taken = [x for x in letters if re.fullmatch("(?i)" + re.escape(x), char)]
        assert all(_case_blind(char) == x for x in taken), hex(point)
        if not taken:  # a separator, a quote or a space: lowered to itself
            assert _case_blind(char) == char, hex(point)


@pytest.mark.parametrize("text", [
    'an e-mail about cookies and the cookie jar',
    '{"headers": {"Cookie": "session=abcdef1234567890"}}',
    'X-Api-Key: 0123456789abcdefXYZ and a cookie recipe',
    'the cookie jar; then cookİe: abcdef1234567890',  # not ASCII: the pattern runs as before
    '"authorization" : "tok_1234567890abcdef"',
])
def test_redacting_with_the_gate_gives_what_the_pattern_alone_gives(text):
    from pytest_assistant_eval.redact import KEY_MARK

    expected = _HEADER_KEY.sub(lambda m: f"{m.group(1)}{m.group(2)}{KEY_MARK}", text)
    assert redact(text, paths=False) == redact(expected, paths=False)
    if expected != text:
        assert KEY_MARK in redact(text, paths=False)
