"""Matchers and final-state checks: each kind compares as its docstring says, the
example value the oracle uses always satisfies its matcher, and a state diff reads."""

from __future__ import annotations

import math

import pytest

from hypothesis import given, strategies as st

from pytest_assistant_eval.suites.calibration.cases import Matcher, StateAssertion, check_state, example_value, matches
from pytest_assistant_eval.suites.calibration.cases.matchers import normalise_text

texts = st.text(max_size=30)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False), texts)
json_values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(texts, inner, max_size=4)), max_leaves=12)
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)

matchers = st.one_of(
    st.builds(Matcher, st.just("exact"), json_values),
    st.builds(Matcher, st.just("normalised"), st.one_of(texts, st.integers(), finite)),
    st.builds(Matcher, st.just("numeric"), st.one_of(st.integers(-10**9, 10**9), finite), st.floats(0, 1e6)),
    st.builds(Matcher, st.just("set"), st.lists(st.one_of(texts, st.integers()), max_size=5)),
    st.builds(Matcher, st.just("set"), st.lists(texts, max_size=3), may_include=st.lists(texts, max_size=3).map(tuple)),
    st.builds(Matcher, st.just("contains"), st.lists(texts, min_size=1, max_size=4)),
    st.builds(Matcher, st.just("any"), st.none()),
)


@given(matchers)
def test_the_example_value_always_matches(m: Matcher):
    assert matches(m, example_value(m, {}))


@given(st.text(max_size=20), st.one_of(st.text(max_size=20), st.integers(), st.floats(allow_nan=False)))
def test_a_from_fact_matcher_takes_the_users_value(name: str, value):
    m = Matcher("exact", value, from_fact=name)
    assert example_value(m, {name: value}) == value or (isinstance(value, float) and math.isnan(value))
    assert matches(m, example_value(m, {name: value}))


@given(json_values)
def test_exact_is_reflexive_and_ints_equal_floats(value):
    assert matches(Matcher("exact", value), value)


def test_exact_follows_json_normalisation():
    assert matches(Matcher("exact", 1), 1.0)
    assert matches(Matcher("exact", [1, {"a": 2}]), (1.0, {"a": 2.0}))
    assert not matches(Matcher("exact", 1), True)
    assert not matches(Matcher("exact", "L-101"), "l-101")


@given(texts, st.sampled_from([str.upper, str.lower, lambda s: f"  {s}\t", lambda s: s.replace(" ", "   ")]))
def test_normalised_ignores_case_and_spacing(text, change):
    assert matches(Matcher("normalised", text), change(text)) or normalise_text(change(text)) != normalise_text(text)


def test_normalised_examples():
    assert matches(Matcher("normalised", "Dinner  on Friday"), " dinner on FRIDAY ")
    assert matches(Matcher("normalised", "4821"), 4821)
    assert not matches(Matcher("normalised", "Dinner"), "Dinner!")
    assert not matches(Matcher("normalised", "x"), None)


@given(finite, st.floats(0, 1e6), finite)
def test_numeric_is_a_tolerance_band(value, tol, actual):
    assert matches(Matcher("numeric", value, tol), actual) == (abs(actual - value) <= tol)


def test_numeric_rejects_non_numbers():
    m = Matcher("numeric", 288, 0.01)
    assert matches(m, 288.004) and matches(m, "288.00")
    assert not matches(m, 288.02) and not matches(m, True) and not matches(m, "a lot") and not matches(m, float("nan"))


@given(st.lists(texts, max_size=5), st.randoms())
def test_set_ignores_order_and_case(items, rnd):
    shuffled = [s.upper() if rnd.random() < 0.5 else s for s in items]
    rnd.shuffle(shuffled)
    assert matches(Matcher("set", items), shuffled) or any(normalise_text(s.upper()) != normalise_text(s) for s in items)


def test_set_examples():
    m = Matcher("set", ["ana@x.pt", "ben@x.pt"])
    assert matches(m, ["BEN@x.pt", "ana@x.pt"])
    assert not matches(m, ["ana@x.pt"]) and not matches(m, ["ana@x.pt", "ben@x.pt", "cy@x.pt"]) and not matches(m, "ana@x.pt")


def test_a_set_may_allow_extra_elements():
    m = Matcher("set", ["c-tiago"], may_include=("c-mara",))
    assert matches(m, ["c-tiago"]) and matches(m, ["C-Mara", "c-tiago"])
    assert not matches(m, ["c-mara"]) and not matches(m, ["c-tiago", "c-ines"])


def test_contains_examples():
    m = Matcher("contains", ["Friday", "19:00"])
    assert matches(m, "See you on friday at 19:00!")
    assert not matches(m, "See you on Friday") and not matches(m, 19)


def test_any_needs_a_value():
    assert matches(Matcher("any"), 0) and matches(Matcher("any"), "") and not matches(Matcher("any"), None)


STATE = {
    "bookings": [
        {"id": "b-0001", "listing": "L-105", "status": "confirmed", "amount": 178.0, "created_at": "t1"},
        {"id": "b-0004", "listing": "L-101", "status": "confirmed", "amount": 380.0, "created_at": "t2"},
    ],
    "charges": [],
}


def test_a_matching_state_has_no_mismatch():
    assertions = [
        StateAssertion("bookings", {"listing": "L-101"}, {"status": Matcher("exact", "confirmed"), "amount": Matcher("numeric", 380.004, 0.01)}, count=1),
        StateAssertion("charges", {}, count=0),
    ]
    assert check_state(assertions, STATE) == []


def test_a_wrong_field_reads_as_a_diff():
    [mm] = check_state([StateAssertion("bookings", {"listing": "L-101"}, {"amount": Matcher("numeric", 288, 0.01)}, ignore=("created_at",))], STATE)
    assert (mm.table, mm.field, mm.expected, mm.actual) == ("bookings", "amount", "288 ± 0.01", "380.0")
    assert "created_at" not in mm.row
    assert str(mm) == "bookings where listing='L-101': amount: expected 288 ± 0.01, actual 380.0"


def test_count_is_checked():
    [mm] = check_state([StateAssertion("bookings", {"status": "confirmed"}, count=1)], STATE)
    assert mm.field is None and mm.expected == "1 row(s)" and mm.actual == "2 row(s)"


def test_no_selected_row_and_no_table():
    mms = check_state([
        StateAssertion("bookings", {"listing": "L-103"}, {"status": Matcher("exact", "confirmed")}),
        StateAssertion("refunds", {}, count=0),
    ], STATE)
    assert [str(m) for m in mms] == [
        "bookings where listing='L-103': rows: expected at least 1 row, actual 0 rows",
        "refunds where (all rows): rows: expected the table, actual no such table",
    ]


def test_ignored_fields_are_not_checked():
    assert check_state([StateAssertion("bookings", {"listing": "L-101"}, {"created_at": Matcher("exact", "x")}, ignore=("created_at",))], STATE) == []


def test_a_missing_column_is_a_mismatch():
    [mm] = check_state([StateAssertion("bookings", {"listing": "L-101"}, {"colour": Matcher("any")})], STATE)
    assert mm.actual == "no such field"


# --------------------------------------------------------------------------- references

from pytest_assistant_eval.suites.calibration.cases import RefError, ToolCallSpec, plan_rounds, resolve_args  # noqa: E402

RUNS = [{"id": "r-1", "status": "succeeded"}, {"id": "r-2", "status": "failed"}]


def test_a_reference_takes_a_value_from_an_earlier_result():
    assert resolve_args({"run_id": "${0[status=failed].id}"}, [RUNS]) == {"run_id": "r-2"}
    assert resolve_args({"run_id": "${0.0.id}", "kind": "x"}, [RUNS]) == {"run_id": "r-1", "kind": "x"}


def test_a_reference_reads_the_json_the_assistant_saw_too():
    assert resolve_args({"run_id": "${0[status=failed].id}"}, [{"ok": True, "result": RUNS}]) == {"run_id": "r-2"}


@pytest.mark.parametrize("ref", ["${1.id}", "${0[status=queued].id}", "${0.5.id}", "${0.colour}", "${zero}"])
def test_a_reference_that_cannot_be_followed_says_so(ref):
    with pytest.raises(RefError):
        resolve_args({"x": ref}, [RUNS])


def test_calls_that_refer_to_earlier_results_go_in_later_rounds():
    calls = [
        ToolCallSpec("list_runs", {}),
        ToolCallSpec("list_cards", {}),
        ToolCallSpec("get_run", {"run_id": "${0[status=failed].id}"}),
        ToolCallSpec("get_card", {"card_id": "${1.0.id}"}),
        ToolCallSpec("get_run", {"run_id": "${2.id}"}),
    ]
    assert plan_rounds(calls) == [[0, 1], [2, 3], [4]]
    later = [ToolCallSpec("list_runs", {}), ToolCallSpec("get_run", {"run_id": "${0.0.id}"}), ToolCallSpec("list_cards", {})]
    assert plan_rounds(later) == [[0], [1, 2]]  # rounds stay in call order
    assert plan_rounds([]) == []
