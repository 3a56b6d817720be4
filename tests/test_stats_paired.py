"""The statistics of two models on the same cases, and the chance-robust agreement (issue 24)."""

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_assistant_eval.stats import (
    PairedCounts,
    cohen_kappa,
    gwet_ac1,
    majority_prevalence,
    mcnemar_exact,
    newcombe_paired,
    paired_counts,
    smallest_detectable,
)

tables = st.tuples(*(st.integers(min_value=0, max_value=60) for _ in range(4))).map(lambda t: PairedCounts(*t))


def test_newcombe_paired_matches_the_textbook_value():
    # Fagerland, Lydersen & Laake, "Statistical Analysis of Contingency Tables", ch. 8: the table
    # [[59, 6], [16, 80]] has estimate -0.0621 and a Newcombe square-and-add 95% CI -0.1186 to -0.0046.
    low, high = newcombe_paired(PairedCounts(59, 6, 16, 80))
    assert (59 + 6 - 59 - 16) / 161 == pytest.approx(-0.0621, abs=1e-4)
    assert low == pytest.approx(-0.1186, abs=1e-4)
    assert high == pytest.approx(-0.0046, abs=1e-4)


def test_identical_models_differ_by_zero_with_an_interval_around_it():
    t = paired_counts([(True, True)] * 30 + [(False, False)] * 12)
    low, high = newcombe_paired(t)
    assert t.difference == 0
    assert low < 0 < high
    assert mcnemar_exact(t.only_a, t.only_b) == 1.0


@given(tables)
def test_newcombe_paired_holds_the_difference_inside_minus_one_to_one(t):
    interval = newcombe_paired(t)
    if t.n == 0:
        assert interval is None
        return
    low, high = interval
    assert -1.0 <= low <= t.difference <= high <= 1.0


@given(tables)
def test_newcombe_paired_mirrors_when_the_models_swap(t):
    if t.n == 0:
        return
    swapped = PairedCounts(t.both, t.only_b, t.only_a, t.neither)
    low, high = newcombe_paired(t)
    s_low, s_high = newcombe_paired(swapped)
    assert s_low == pytest.approx(-high, abs=1e-12)
    assert s_high == pytest.approx(-low, abs=1e-12)


def _binomial_two_sided(b: int, c: int) -> Fraction:
    """The exact two-sided binomial p by its definition: every outcome no likelier than the one seen."""
    m = b + c
    if m == 0:
        return Fraction(1)
    probs = [Fraction(math.comb(m, i), 2 ** m) for i in range(m + 1)]
    seen = probs[b]
    return min(Fraction(1), sum(p for p in probs if p <= seen))


@given(st.integers(min_value=0, max_value=80), st.integers(min_value=0, max_value=80))
def test_mcnemar_exact_is_the_two_sided_binomial_test_of_the_discordant_cases(b, c):
    assert mcnemar_exact(b, c) == pytest.approx(float(_binomial_two_sided(b, c)), rel=1e-12)


def test_mcnemar_exact_matches_reference_values():
    assert mcnemar_exact(6, 16) == pytest.approx(0.052479, abs=1e-6)
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    assert mcnemar_exact(5, 5) == 1.0


@given(st.integers(min_value=0, max_value=60), st.integers(min_value=0, max_value=60))
def test_mcnemar_exact_agrees_with_scipy(b, c):
    """Issue 29: scipy is a dependency and in the test extra, so this runs in every run (it was always skipped)."""
    from scipy import stats

    if b + c == 0:
        return
    assert mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-9)


def test_smallest_detectable_difference_needs_six_discordant_cases_at_five_percent():
    assert smallest_detectable(100) == pytest.approx(0.06)
    assert smallest_detectable(6) == 1.0
    assert smallest_detectable(5) is None  # five cases cannot tell two models apart at all


@given(st.integers(min_value=6, max_value=2000))
def test_smallest_detectable_difference_is_the_least_that_reaches_significance(n):
    d = smallest_detectable(n)
    k = round(d * n)
    assert mcnemar_exact(k, 0) < 0.05 <= mcnemar_exact(k - 1, 0)


def test_gwet_ac1_stays_high_where_kappa_collapses_at_high_prevalence():
    # 118 pairs agree on the common category, 7 disagree, none agree on the rare one.
    pairs = [("right", "right")] * 118 + [("right", "wrong")] * 5 + [("wrong", "right")] * 2
    assert cohen_kappa(pairs, ("right", "wrong")) < 0.0
    assert gwet_ac1(pairs, ("right", "wrong")) == pytest.approx(0.94078, abs=1e-4)
    assert majority_prevalence(pairs, ("right", "wrong")) == ("right", pytest.approx(243 / 250))


@given(st.lists(st.tuples(st.sampled_from("rmw"), st.sampled_from("rmw")), min_size=1, max_size=80))
def test_gwet_ac1_is_symmetric_in_the_raters_and_one_only_at_full_agreement(pairs):
    ac1 = gwet_ac1(pairs, tuple("rmw"))
    assert ac1 == pytest.approx(gwet_ac1([(b, a) for a, b in pairs], tuple("rmw")))
    assert ac1 <= 1.0 + 1e-12
    assert (ac1 == pytest.approx(1.0)) == all(a == b for a, b in pairs)


def test_gwet_ac1_without_pairs_is_none():
    assert gwet_ac1([], ("a", "b")) is None
    assert majority_prevalence([], ("a", "b")) is None
