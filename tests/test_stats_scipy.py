"""Each hand-written statistic against scipy's (or numpy's) on hypothesis-generated inputs (issue 29).

scipy is a dependency and in the test extra, so nothing here is skipped. Why the hand-written
ones stay (each is faster than importing scipy.stats, which alone takes longer than a table may)
is measured in docs/results.md, "Statistics"; these tests hold that they compute the same thing.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from pytest_assistant_eval import stats as ours

counts = st.integers(min_value=1, max_value=400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n)))


@given(counts, st.sampled_from((0.80, 0.90, 0.95, 0.99)))
def test_wilson_is_scipys_wilson_interval(kn, confidence):
    k, n = kn
    mine = ours.wilson(k, n, confidence)
    theirs = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    assert mine.low == pytest.approx(theirs.low, abs=1e-9)
    assert mine.high == pytest.approx(theirs.high, abs=1e-9)


@given(st.integers(0, 300), st.integers(0, 300))
def test_mcnemar_exact_is_scipys_two_sided_binomial_test(b, c):
    if b + c == 0:
        assert ours.mcnemar_exact(b, c) == 1.0
        return
    assert ours.mcnemar_exact(b, c) == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue, rel=1e-9, abs=1e-300)


@settings(max_examples=15)
@given(st.integers(ours.EXACT_INTEGER_UP_TO // 2 - 200, ours.EXACT_INTEGER_UP_TO // 2 + 200),
       st.integers(ours.EXACT_INTEGER_UP_TO // 2 - 200, ours.EXACT_INTEGER_UP_TO // 2 + 200))
def test_mcnemar_exact_agrees_on_both_sides_of_the_switch_to_scipy(b, c):
    """Around EXACT_INTEGER_UP_TO discordant cases the p moves from the integer sum to scipy's binomtest."""
    assert ours.mcnemar_exact(b, c) == pytest.approx(stats.binomtest(min(b, c), b + c, 0.5).pvalue, rel=1e-7,
                                                     abs=1e-300)


@given(st.integers(6, 5000), st.sampled_from((0.01, 0.05, 0.10)))
def test_smallest_detectable_is_where_scipys_binomial_test_first_rejects(n, alpha):
    d = ours.smallest_detectable(n, alpha)
    if d is None:
        assert stats.binomtest(n, n, 0.5).pvalue >= alpha
        return
    k = round(d * n)
    assert stats.binomtest(k, k, 0.5).pvalue < alpha <= (stats.binomtest(k - 1, k - 1, 0.5).pvalue if k > 1 else 1)


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=60), st.floats(0, 100))
def test_percentile_is_numpys_linear_percentile(values, q):
    assert ours.percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-9, abs=1e-6)


@given(st.lists(st.integers(0, 12).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))), min_size=1,
                max_size=12), st.integers(1, 6))
def test_pass_hat_k_is_the_mean_of_scipys_exact_binomial_ratios(tasks, k):
    values = [special.comb(c, k, exact=True) / special.comb(n, k, exact=True) for c, n in tasks if n >= k]
    found = ours.pass_hat_k(tasks, k)
    assert (found is None) == (not values)
    if values:
        assert found == pytest.approx(math.fsum(values) / len(values), rel=1e-12)


def _scipy_cluster_bootstrap(clusters, resamples: int):
    d = np.array([c[0] for c in clusters], dtype=float)
    n = np.array([c[1] for c in clusters], dtype=float)
    return stats.bootstrap((d, n), lambda x, y, axis=-1: x.sum(axis=axis) / y.sum(axis=axis), paired=True,
                           vectorized=True, method="percentile", n_resamples=resamples, confidence_level=0.95,
                           rng=np.random.default_rng(7))


cluster_lists = st.lists(st.integers(1, 8).flatmap(lambda n: st.tuples(st.integers(-n, n), st.just(n))),
                         min_size=ours.MIN_CLUSTERS, max_size=25)


@settings(max_examples=25, deadline=None)
@given(cluster_lists)
def test_the_cluster_bootstrap_is_scipys_paired_percentile_bootstrap(clusters):
    """Two bootstraps with their own random draws agree to Monte Carlo error (20,000 resamples each): each
    bound of ours lies within a percentile point of scipy's own resampled distribution (which, over few
    clusters, takes few values, so the bounds jump between them), and the interval holds scipy's point."""
    mine = ours.cluster_bootstrap_difference(clusters, resamples=20_000)
    theirs = _scipy_cluster_bootstrap(clusters, 20_000)
    dist = theirs.bootstrap_distribution
    diff = sum(c[0] for c in clusters) / sum(c[1] for c in clusters)
    low, high = mine.interval
    eps = 1e-9
    assert min(np.percentile(dist, 1.5), diff) - eps <= low <= min(np.percentile(dist, 3.5), diff) + eps
    assert max(np.percentile(dist, 96.5), diff) - eps <= high <= max(np.percentile(dist, 98.5), diff) + eps
    assert low - eps <= diff <= high + eps


def test_the_cluster_bootstrap_is_fixed_by_its_seed_and_says_too_few_under_six_clusters():
    clusters = [(1, 3), (0, 2), (2, 2), (-1, 3), (0, 1), (3, 3), (0, 2)]
    assert ours.cluster_bootstrap_difference(clusters) == ours.cluster_bootstrap_difference(list(clusters))
    few = ours.cluster_bootstrap_difference(clusters[:5])
    assert few.interval is None and few.p is None and few.clusters == 5


def test_the_cluster_bootstrap_p_is_small_exactly_when_zero_is_outside_its_interval():
    one_way = [(2, 2)] * 10
    found = ours.cluster_bootstrap_difference(one_way)
    assert found.interval == (1.0, 1.0) and found.p == 0.0
    mixed = [(1, 2), (-1, 2)] * 5
    found = ours.cluster_bootstrap_difference(mixed)
    assert found.interval[0] < 0 < found.interval[1] and found.p > 0.05


@given(st.lists(st.integers(1, 9), min_size=0, max_size=30))
def test_cluster_detectable_takes_the_six_smallest_clusters(sizes):
    found = ours.cluster_detectable(sizes)
    if len(sizes) < 6:
        assert found is None
        return
    assert found == pytest.approx(sum(sorted(sizes)[:6]) / sum(sizes))
    assert stats.binomtest(6, 6, 0.5).pvalue < 0.05 <= stats.binomtest(5, 5, 0.5).pvalue
