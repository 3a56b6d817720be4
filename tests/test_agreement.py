"""agreement.txt's figures (S8.2) against hand-computed examples, and their properties."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_assistant_eval.tables.agreement import (
    ITEM_CATEGORIES,
    REVIEW_ALL,
    UNDERSTANDABILITY,
    Group,
    Pairs,
    collect,
    measure,
    render_agreement,
    sample_rule,
)


def pairs_of(values, cluster=lambda k: k) -> Pairs:
    data = Pairs()
    for k, (judge, owner) in enumerate(values):
        data.add(judge, owner, cluster(k))
    return data


def test_item_agreement_matches_the_hand_computed_example():
    # judge, owner: 4 of 6 agree; judge r3 m1 w2, owner r2 m1 w3: pe = (6 + 1 + 6) / 36 = 13/36
    data = pairs_of([("right", "right"), ("right", "right"), ("wrong", "wrong"), ("missing", "wrong"),
                     ("right", "missing"), ("wrong", "wrong")])
    m = measure("Items", data, ITEM_CATEGORIES)
    assert m.n == 6 and math.isclose(m.agreement, 4 / 6)
    assert math.isclose(m.kappa, (24 / 36 - 13 / 36) / (1 - 13 / 36))  # 11/23
    assert (m.lenient, m.strict) == (2, 0)  # the judge was kinder twice
    # rows: the owner's verdict, columns: the judge's
    assert m.table == [[2, 0, 0], [1, 0, 0], [0, 1, 2]]


def test_understandability_has_the_linear_weighted_kappa_computed_by_hand():
    data = pairs_of([(1, 1), (2, 2), (3, 3), (1, 2)])
    m = measure("Understandability", data, UNDERSTANDABILITY, weighted=True)
    assert math.isclose(m.kappa, 7 / 11)  # po 0.75, pe 0.3125
    assert math.isclose(m.weighted, 5 / 7)  # po 0.875, pe 0.5625 with weights 1 - |i - j| / 2
    assert (m.lenient, m.strict) == (1, 0)


def group_with_outcomes(agree: int, differ: int) -> Group:
    group = Group()
    for k in range(agree):
        group.questions.add("answered", "answered", f"G{k}")
    for k in range(differ):
        group.questions.add("answered", "failed", f"D{k}")
    group.cells = agree + differ
    return group


def test_the_random_sample_rule_asks_to_review_every_cell_above_ten_percent():
    assert REVIEW_ALL not in sample_rule(group_with_outcomes(35, 0))  # 0 of 35: upper bound 9.9%
    assert "9.9%" in sample_rule(group_with_outcomes(35, 0))
    assert sample_rule(group_with_outcomes(34, 1)).endswith(REVIEW_ALL)
    assert "nothing can be said" in sample_rule(Group())


def review(n, first, understandability, outcome, asked=None, sha="s"):
    return {"n": n, "material_sha256": sha, "asked": asked or list(first), "first": {
        "verdicts": first, "understandability": understandability}, "final": {"verdicts": first},
        "first_grade": {"outcome": outcome}, "grade": {"outcome": outcome}}


def cell(n, verdicts, outcome, understandability=1, case="G01", sha="s"):
    return {"n": n, "case": case, "outcome": outcome, "material_sha256": sha, "judge": {
        "verdicts": {k: {"verdict": v, "confidence": 1.0} for k, v in verdicts.items()},
        "understandability": understandability}}


def test_groups_read_first_verdicts_and_leave_out_stale_or_unfinished_reviews():
    cells = [cell(1, {"G01/fact:a": "wrong"}, "failed"), cell(2, {"G02/number:3": "wrong"}, "failed", case="G02"),
             cell(3, {"G03/fact:b": "right"}, "answered", case="G03", sha="new")]
    queue = [{"n": 1, "reasons": ["random sample"], "sample": True},
             {"n": 2, "reasons": ["self-preference"], "sample": False},
             {"n": 3, "reasons": ["random sample"], "sample": True}]
    reviews = {1: review(1, {"G01/fact:a": "missing"}, 2, "incomplete"), 2: review(2, {"G02/number:3": "wrong"}, 1, "failed"),
               3: review(3, {"G03/fact:b": "right"}, 1, "answered", sha="old")}
    groups = collect(cells, queue, reviews)
    assert groups["all"].cells == 2 and groups["sample"].cells == 1 and groups["self"].cells == 1
    assert groups["sample"].items.pairs == [("wrong", "missing")]
    assert groups["sample"].questions.pairs == [("failed", "incomplete")]
    assert groups["sample"].disagreements() == (1, 1, 0, 1)  # the judge was harsher
    text = render_agreement("grading", "openai:gpt-x", groups, "openai", 3)
    assert "2 of 3 queued cell(s) reviewed" in text and REVIEW_ALL in text
    assert "the judge's own family (openai)" in text


verdicts = st.sampled_from(ITEM_CATEGORIES)
pair_lists = st.lists(st.tuples(verdicts, verdicts), min_size=1, max_size=40)


@given(st.lists(verdicts, min_size=1, max_size=40))
def test_kappa_is_one_on_identical_verdicts(values):
    m = measure("Items", pairs_of([(v, v) for v in values], cluster=lambda k: k % 7), ITEM_CATEGORIES)
    assert math.isclose(m.kappa, 1.0) and m.agreement == 1.0 and (m.lenient, m.strict) == (0, 0)
    if m.clusters >= 6:  # fewer questions give no interval at all (issue 29)
        assert all(math.isclose(bound, 1.0) for bound in m.interval)
    else:
        assert m.interval is None


@given(pair_lists, st.permutations(ITEM_CATEGORIES))
def test_kappa_is_invariant_to_relabelling(values, relabelled):
    rename = dict(zip(ITEM_CATEGORIES, relabelled))
    plain = measure("Items", pairs_of(values), ITEM_CATEGORIES)
    renamed = measure("Items", pairs_of([(rename[j], rename[o]) for j, o in values]), ITEM_CATEGORIES)
    assert math.isclose(plain.kappa, renamed.kappa, abs_tol=1e-12)
    assert plain.agreement == renamed.agreement


@settings(max_examples=40, deadline=None)
@given(pair_lists, st.integers(min_value=1, max_value=8))
def test_the_bootstrap_interval_contains_the_estimate(values, questions):
    """Issue 29 changes this: under six questions there is no interval ("too few"), never [1.00, 1.00]."""
    m = measure("Items", pairs_of(values, cluster=lambda k: k % questions), ITEM_CATEGORIES)
    if m.clusters < 6:
        assert m.interval is None
        return
    low, high = m.interval
    assert low - 1e-9 <= m.kappa <= high + 1e-9


def test_one_pair_says_too_few_questions_rather_than_a_point_interval():
    from pytest_assistant_eval.tables.agreement import _measure_block

    m = measure("Outcomes (tasks)", pairs_of([("pass", "pass")]), ("pass", "fail", "unsafe"))
    text = _measure_block(m)
    assert "n=1, agreement 100%, kappa 1.00 [interval: too few questions, 1 < 6]" in text
    assert "[1.00, 1.00]" not in text


def test_the_suite_runs_hypothesis_without_a_deadline():
    """A property test's subject is not time: a loaded machine must not fail it (issue 23, item 20)."""
    assert settings.default.deadline is None


def test_beside_kappa_the_majority_prevalence_and_gwet_ac1_are_printed():
    from pytest_assistant_eval.tables.agreement import _measure_block

    # 16 of 17 item pairs agree on "right", one disagrees: kappa 0.00 alarms without a word of why (issue 24).
    m = measure("Items", pairs_of([("right", "right")] * 16 + [("right", "wrong")]), ITEM_CATEGORIES)
    assert m.kappa == 0.0 and m.agreement == 16 / 17
    assert m.majority == ("right", 33 / 34)
    assert m.ac1 > 0.9
    text = _measure_block(m)
    assert "majority verdict 'right' 97% of verdicts, Gwet's AC1 0.94" in text
    assert "Kappa is low at 94% agreement because 97% of the verdicts are 'right'" in text


def test_no_sentence_when_kappa_is_low_because_the_raters_disagree():
    from pytest_assistant_eval.tables.agreement import _measure_block

    m = measure("Items", pairs_of([("right", "wrong"), ("wrong", "right"), ("right", "right"), ("missing", "wrong")]),
                ITEM_CATEGORIES)
    assert m.paradox is None
    assert "Kappa is low" not in _measure_block(m)


def test_a_contested_settled_item_counts_as_the_judges_wrong_in_item_agreement():
    # Issue 21: the owner is asked about an item the judge contested; agreement counts the pair.
    cells = [cell(1, {"G01/fact:a": "contested"}, "answered")]
    queue = [{"n": 1, "reasons": ["contested"], "sample": False}]
    groups = collect(cells, queue, {1: review(1, {"G01/fact:a": "wrong"}, 1, "failed")})
    assert groups["all"].items.pairs == [("wrong", "wrong")]
