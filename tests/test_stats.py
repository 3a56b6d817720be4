import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_assistant_eval.stats import (
    Interval,
    bootstrap_kappa,
    cohen_kappa,
    confusion_matrix,
    median,
    pass_hat_k,
    percentile,
    wilson,
)

counts = st.integers(min_value=1, max_value=5000).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)


# --- Wilson -----------------------------------------------------------------


def test_wilson_with_nothing_counted_knows_nothing():
    assert wilson(0, 0) == Interval(rate=None, low=0.0, high=1.0, n=0)


def test_wilson_matches_the_textbook_value():
    interval = wilson(10, 12)
    assert interval.rate == pytest.approx(10 / 12)
    assert interval.low == pytest.approx(0.5520, abs=1e-4)
    assert interval.high == pytest.approx(0.9530, abs=1e-4)
    assert interval.n == 12


def test_wilson_reaches_the_edge_for_all_or_nothing():
    assert wilson(0, 7).low == 0.0
    assert wilson(7, 7).high == 1.0
    assert wilson(7, 7).low < 1.0


def test_wilson_refuses_impossible_counts():
    with pytest.raises(ValueError):
        wilson(5, 4)
    with pytest.raises(ValueError):
        wilson(1, 2, confidence=1.0)


@given(counts, st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_bounds_contain_the_rate_and_lie_in_unit_interval(sn, confidence):
    s, n = sn
    interval = wilson(s, n, confidence)
    assert 0.0 <= interval.low <= interval.rate <= interval.high <= 1.0


@given(counts, st.integers(min_value=2, max_value=20))
def test_wilson_narrows_as_n_grows_at_the_same_rate(sn, factor):
    s, n = sn
    small = wilson(s, n)
    large = wilson(s * factor, n * factor)
    assert large.high - large.low < small.high - small.low


@given(counts)
def test_wilson_widens_with_confidence(sn):
    s, n = sn
    narrow = wilson(s, n, 0.9)
    wide = wilson(s, n, 0.99)
    assert wide.low <= narrow.low and wide.high >= narrow.high


# --- pass^k -----------------------------------------------------------------

small_counts = st.integers(min_value=1, max_value=30).flatmap(
    lambda n: st.tuples(st.integers(min_value=0, max_value=n), st.just(n))
)
task_counts = st.lists(small_counts, min_size=1, max_size=15)


def test_pass_hat_k_is_the_mean_of_per_task_ratios():
    # task A: 3 of 4 pass -> C(3,2)/C(4,2) = 3/6; task B: 2 of 2 -> 1
    assert pass_hat_k([(3, 4), (2, 2)], 2) == pytest.approx((0.5 + 1.0) / 2)


def test_pass_hat_k_leaves_out_tasks_with_fewer_runs_than_k():
    assert pass_hat_k([(3, 4), (1, 1)], 2) == pytest.approx(0.5)
    assert pass_hat_k([(1, 1)], 2) is None


@given(st.lists(st.integers(min_value=1, max_value=30), min_size=1), st.integers(1, 30))
def test_pass_hat_k_is_one_when_every_trial_passes(ns, k):
    result = pass_hat_k([(n, n) for n in ns], k)
    if any(n >= k for n in ns):
        assert result == pytest.approx(1.0)
    else:
        assert result is None


@given(task_counts)
def test_pass_hat_k_at_one_is_the_plain_rate_per_task(cs):
    expected = sum(c / n for c, n in cs) / len(cs)
    assert pass_hat_k(cs, 1) == pytest.approx(expected)


@given(st.lists(st.integers(min_value=1, max_value=30), min_size=1, max_size=15), st.data())
def test_pass_hat_k_does_not_grow_with_k(ns, data):
    # The same task set at every k, so the mean is over the same tasks.
    cs = [(data.draw(st.integers(0, n)), n) for n in ns]
    top = min(ns)
    values = [pass_hat_k(cs, k) for k in range(1, top + 1)]
    for earlier, later in zip(values, values[1:]):
        assert later <= earlier + 1e-12


# --- kappa ------------------------------------------------------------------

labels = ["right", "missing", "wrong"]


@given(st.lists(st.sampled_from(labels), min_size=1, max_size=60))
def test_kappa_is_one_for_perfect_agreement(verdicts):
    pairs = [(v, v) for v in verdicts]
    assert cohen_kappa(pairs, labels) == pytest.approx(1.0)
    assert cohen_kappa(pairs, labels, weights="linear") == pytest.approx(1.0)


def test_kappa_matches_a_hand_computed_example():
    # po = 0.7, pe = 0.5*0.6 + 0.5*0.4 = 0.5 -> kappa 0.4
    pairs = [("y", "y")] * 4 + [("y", "n")] * 1 + [("n", "y")] * 2 + [("n", "n")] * 3
    assert cohen_kappa(pairs, ["y", "n"]) == pytest.approx(0.4)


def test_linear_weights_give_partial_credit_to_near_misses():
    cats = [1, 2, 3]
    near = [(1, 1), (2, 2), (3, 3), (1, 2), (2, 3), (3, 2)]
    far = [(1, 1), (2, 2), (3, 3), (1, 3), (3, 1), (1, 3)]
    assert cohen_kappa(near, cats, "linear") > cohen_kappa(far, cats, "linear")


def test_kappa_without_pairs_is_none_and_unknown_categories_are_refused():
    assert cohen_kappa([], labels) is None
    with pytest.raises(ValueError, match="maybe"):
        cohen_kappa([("right", "maybe")], labels)


def test_kappa_below_chance_is_negative():
    assert cohen_kappa([("a", "b"), ("b", "a")], ["a", "b"]) < 0


def test_confusion_matrix_rows_are_the_first_rater():
    assert confusion_matrix([("a", "b"), ("a", "b"), ("b", "b")], ["a", "b"]) == [[0, 2], [0, 1]]


def test_bootstrap_kappa_is_reproducible_and_brackets_the_point_estimate():
    pairs = [("r", "r")] * 20 + [("r", "w")] * 3 + [("w", "w")] * 10 + [("w", "r")] * 2
    clusters = [f"G{i % 9:02d}" for i in range(len(pairs))]
    first = bootstrap_kappa(pairs, clusters, ["r", "w"], resamples=300, seed=4)
    again = bootstrap_kappa(pairs, clusters, ["r", "w"], resamples=300, seed=4)
    assert first == again
    low, high = first
    assert low <= cohen_kappa(pairs, ["r", "w"]) <= high


# --- order statistics -------------------------------------------------------


def test_median_and_percentile_follow_linear_interpolation():
    assert median([3, 1, 2]) == 2
    assert median([1, 2, 3, 4]) == 2.5
    assert percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 90) == pytest.approx(9.1)
    assert percentile([5], 90) == 5
    assert median([]) is None


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1), st.floats(0, 100))
def test_percentile_lies_between_min_and_max(values, q):
    p = percentile(values, q)
    assert min(values) - 1e-6 <= p <= max(values) + 1e-6
    assert not math.isnan(p)
