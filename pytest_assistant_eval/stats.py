"""Small, honest statistics for rates, agreement and consistency.

Every rate the harness prints carries its n and an interval (S9.1); this module
is where those intervals, Cohen's kappa (plain and linear-weighted), the
question-clustered bootstrap for kappa, pass^k (S8.5) and the order statistics
of the calibration tables (S8.4) are computed.

It must never read files or know about cells, levels or models: it takes plain
numbers and returns plain numbers, so that every table computes them the same way.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

__all__ = [
    "Interval",
    "wilson",
    "pass_hat_k",
    "confusion_matrix",
    "observed_agreement",
    "cohen_kappa",
    "bootstrap_kappa",
    "median",
    "percentile",
    "PairedCounts",
    "paired_counts",
    "newcombe_paired",
    "mcnemar_exact",
    "smallest_detectable",
    "majority_prevalence",
    "gwet_ac1",
    "MIN_CLUSTERS",
    "ClusteredDifference",
    "cluster_bootstrap_difference",
    "cluster_detectable",
]


@dataclass(frozen=True)
class Interval:
    """A rate with its confidence interval.

    ``rate`` is None when there is nothing to count (n == 0); the bounds are then
    the whole range 0..1, which is what "we know nothing" honestly looks like.
    """

    rate: float | None
    low: float
    high: float
    n: int

    @property
    def successes(self) -> int | None:
        if self.rate is None:
            return None
        return round(self.rate * self.n)


@functools.lru_cache(maxsize=32)
def _z(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence!r}")
    # NormalDist, not scipy: importing scipy.stats took 2 to 5 s here, longer than every table it served
    # (S9.4; measured again for issue 29: docs/results.md, "Statistics").
    return NormalDist().inv_cdf(1.0 - (1.0 - confidence) / 2.0)


def wilson(successes: int, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval for ``successes`` out of ``n``.

    Wilson rather than the normal approximation because our n are small (a
    dozen cells per class) and rates are often 0 or 1, where the plain interval
    collapses to a point.
    """
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return Interval(rate=None, low=0.0, high=1.0, n=0)
    z = _z(confidence)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denom
    # Clamp against floating-point drift: the bounds must contain the rate and stay in [0, 1].
    low = max(0.0, min(centre - half, p))
    high = min(1.0, max(centre + half, p))
    if successes == 0:
        low = 0.0
    if successes == n:
        high = 1.0
    return Interval(rate=p, low=low, high=high, n=n)


def pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> float | None:
    """pass^k: the chance that k repeats of a task, drawn without replacement, all pass.

    ``counts`` holds ``(c, n)`` per task: c passing runs out of n. The estimate is
    the mean over tasks with ``n >= k`` of ``C(c, k) / C(n, k)``; tasks with fewer
    than k runs cannot say anything about k repeats and are left out. None when no
    task has k runs.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    values: list[float] = []
    for c, n in counts:
        if n < 0 or c < 0 or c > n:
            raise ValueError(f"need 0 <= c <= n per task, got ({c}, {n})")
        if n >= k:
            values.append(math.comb(c, k) / math.comb(n, k))
    if not values:
        return None
    return math.fsum(values) / len(values)


def confusion_matrix(
    pairs: Iterable[tuple[Hashable, Hashable]], categories: Sequence[Hashable]
) -> list[list[int]]:
    """Counts with rows for the first rater's category and columns for the second's."""
    index = {c: i for i, c in enumerate(categories)}
    if len(index) != len(categories):
        raise ValueError("categories must be distinct")
    table = [[0] * len(categories) for _ in categories]
    for a, b in pairs:
        if a not in index or b not in index:
            missing = a if a not in index else b
            raise ValueError(f"category {missing!r} is not among {list(categories)!r}")
        table[index[a]][index[b]] += 1
    return table


def observed_agreement(pairs: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Share of pairs on which both raters gave the same category; None for no pairs."""
    pairs = list(pairs)
    if not pairs:
        return None
    return sum(1 for a, b in pairs if a == b) / len(pairs)


def _weight(i: int, j: int, k: int, weights: Literal["linear"] | None) -> float:
    if weights is None:
        return 1.0 if i == j else 0.0
    if weights == "linear":
        return 1.0 if k == 1 else 1.0 - abs(i - j) / (k - 1)
    raise ValueError(f"weights must be None or 'linear', got {weights!r}")


def cohen_kappa(
    pairs: Iterable[tuple[Hashable, Hashable]],
    categories: Sequence[Hashable],
    weights: Literal["linear"] | None = None,
) -> float | None:
    """Cohen's kappa between two raters, optionally linear-weighted.

    ``categories`` fixes the order, which matters only for weighted kappa (the
    distance between categories i and j is |i - j|). None when there are no
    pairs. When chance agreement is already perfect (both raters used one and
    the same category throughout) kappa is undefined; we return 1.0 if the raters
    agreed on every pair, which is the only way that can happen.
    """
    table = confusion_matrix(pairs, categories)
    k = len(categories)
    total = sum(map(sum, table))
    if total == 0:
        return None
    rows = [sum(r) / total for r in table]
    cols = [sum(table[i][j] for i in range(k)) / total for j in range(k)]
    po = sum(_weight(i, j, k, weights) * table[i][j] / total for i in range(k) for j in range(k))
    pe = sum(_weight(i, j, k, weights) * rows[i] * cols[j] for i in range(k) for j in range(k))
    if math.isclose(pe, 1.0, rel_tol=0, abs_tol=1e-12):
        return 1.0 if math.isclose(po, 1.0, rel_tol=0, abs_tol=1e-12) else 0.0
    return (po - pe) / (1.0 - pe)


def bootstrap_kappa(
    pairs: Sequence[tuple[Hashable, Hashable]],
    clusters: Sequence[Hashable],
    categories: Sequence[Hashable],
    weights: Literal["linear"] | None = None,
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval for kappa, resampling whole clusters (questions).

    Items of one question are not independent (one confusing question makes the
    judge and the owner disagree on all its items), so we draw questions with
    replacement, not items. Deterministic for a given seed. None without pairs.
    """
    if len(pairs) != len(clusters):
        raise ValueError("pairs and clusters must have the same length")
    if not pairs:
        return None
    groups: dict[Hashable, list[tuple[Hashable, Hashable]]] = {}
    for pair, cluster in zip(pairs, clusters):
        groups.setdefault(cluster, []).append(pair)
    keys = list(groups)
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(resamples):
        sample: list[tuple[Hashable, Hashable]] = []
        for _ in keys:
            sample.extend(groups[rng.choice(keys)])
        kappa = cohen_kappa(sample, categories, weights)
        if kappa is not None:
            values.append(kappa)
    alpha = (1.0 - confidence) / 2.0 * 100.0
    low = percentile(values, alpha)
    high = percentile(values, 100.0 - alpha)
    assert low is not None and high is not None
    return (low, high)


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between order statistics.

    Same convention as numpy's default ("linear"), so the 90th percentile of
    calls in the calibration table matches what anyone would compute by hand.
    None for no values.
    """
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must lie in 0..100, got {q!r}")
    data = sorted(float(v) for v in values)
    if not data:
        return None
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    if lo == hi:
        return data[lo]
    return data[lo] + (data[hi] - data[lo]) * (pos - lo)


def median(values: Iterable[float]) -> float | None:
    """The median (the 50th percentile); None for no values."""
    return percentile(values, 50.0)


# --- Two models on the same cases (issue 24): paired differences, McNemar, and chance-robust agreement ---


@dataclass(frozen=True)
class PairedCounts:
    """A 2×2 table of paired outcomes over the cases both models ran.

    ``both``: both succeeded; ``only_a``/``only_b``: the discordant cases; ``neither``: both failed.
    """

    both: int
    only_a: int
    only_b: int
    neither: int

    def __post_init__(self) -> None:
        if min(self.both, self.only_a, self.only_b, self.neither) < 0:
            raise ValueError(f"paired counts must be non-negative, got {self}")

    @property
    def n(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def difference(self) -> float | None:
        """Rate of A minus rate of B; None with no case."""
        return (self.only_a - self.only_b) / self.n if self.n else None


def paired_counts(pairs: Iterable[tuple[bool, bool]]) -> PairedCounts:
    """Count (A succeeded, B succeeded) pairs into a ``PairedCounts``."""
    counts = [0, 0, 0, 0]
    for a, b in pairs:
        counts[(0 if a else 2) + (0 if b else 1)] += 1
    return PairedCounts(counts[0], counts[1], counts[2], counts[3])


def newcombe_paired(t: PairedCounts, confidence: float = 0.95) -> tuple[float, float] | None:
    """Newcombe's interval (1998, method 10) for the difference of two paired proportions.

    Built from the two Wilson intervals and the continuity-corrected phi correlation of the
    table, so it stays inside [-1, 1] and does not collapse to a point at 0 or 1 discordant
    cases, where the Wald interval does. None with no case.
    """
    n = t.n
    if n == 0:
        return None
    a, b, c, d = t.both, t.only_a, t.only_b, t.neither
    p1, p2 = (a + b) / n, (a + c) / n
    w1, w2 = wilson(a + b, n, confidence), wilson(a + c, n, confidence)
    margins = (a + b) * (c + d) * (a + c) * (b + d)
    if margins == 0:
        phi = 0.0
    else:
        num = a * d - b * c
        if num > 0:
            num = max(num - n / 2.0, 0.0)
        phi = num / math.sqrt(margins)
    diff = p1 - p2
    dl = (p1 - w1.low) ** 2 - 2 * phi * (p1 - w1.low) * (w2.high - p2) + (w2.high - p2) ** 2
    du = (w1.high - p1) ** 2 - 2 * phi * (w1.high - p1) * (p2 - w2.low) + (p2 - w2.low) ** 2
    low = max(-1.0, diff - math.sqrt(max(dl, 0.0)))
    high = min(1.0, diff + math.sqrt(max(du, 0.0)))
    return (min(low, diff), max(high, diff))


#: Above this many discordant cases the exact p comes from scipy (``binomtest``): the integer sum
#: below grows as k · m (measured in docs/results.md, "Statistics": 0.02 s at 10,000, 1.5 s at 100,000),
#: while scipy's import is paid once and its test takes under a millisecond at any m.
EXACT_INTEGER_UP_TO = 20_000


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p: the binomial test of the discordant cases against 1/2.

    p = min(1, 2 · P(X ≤ min(b, c))) for X ~ Bin(b + c, 1/2). Up to ``EXACT_INTEGER_UP_TO``
    discordant cases it is summed in integers (exact, and no scipy import: a table that compares
    stays within its 3 s); above, ``scipy.stats.binomtest`` (imported here, only then). No
    discordant case gives 1.
    """
    if only_a < 0 or only_b < 0:
        raise ValueError(f"discordant counts must be non-negative, got {only_a}, {only_b}")
    m = only_a + only_b
    if m == 0:
        return 1.0
    k = min(only_a, only_b)
    if 2 * k >= m:
        return 1.0  # the two tails meet: every outcome is at least as likely as the one seen
    if m > EXACT_INTEGER_UP_TO:
        from scipy.stats import binomtest

        return float(binomtest(k, m, 0.5).pvalue)
    term = tail = 1  # C(m, 0); each next binomial coefficient from the last, exactly, in integers
    for i in range(1, k + 1):
        term = term * (m - i + 1) // i
        tail += term
    from fractions import Fraction

    return float(Fraction(2 * tail, 2 ** m))


def smallest_detectable(n: int, alpha: float = 0.05) -> float | None:
    """The smallest difference in rate ``n`` paired cases can tell apart at ``alpha`` (McNemar, exact).

    The most favourable table: every discordant case goes one way. k such cases reach p < alpha
    only when 2 · 2^-k < alpha, so no difference below k/n can; None when even n of n cannot.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    k = 1
    while k <= n and mcnemar_exact(k, 0) >= alpha:
        k += 1
    return k / n if k <= n else None


def majority_prevalence(pairs: Sequence[tuple[Hashable, Hashable]], categories: Sequence[Hashable]) -> tuple[Hashable, float] | None:
    """The most common category over both raters' verdicts, and its share of them; None for no pairs."""
    if not pairs:
        return None
    counts = {c: 0 for c in categories}
    for a, b in pairs:
        counts[a] += 1
        counts[b] += 1
    best = max(categories, key=lambda c: counts[c])
    return best, counts[best] / (2 * len(pairs))


def gwet_ac1(pairs: Sequence[tuple[Hashable, Hashable]], categories: Sequence[Hashable]) -> float | None:
    """Gwet's AC1: agreement corrected for chance in a way that does not collapse when one category dominates.

    pe = Σ π_k (1 − π_k) / (q − 1), π_k the mean of the two raters' shares of category k. Kappa's
    chance term grows towards 1 as one verdict dominates, so a few disagreements drive kappa to 0
    at 98% agreement; AC1's chance term shrinks instead. None for no pairs or a single category.
    """
    q = len(categories)
    if not pairs or q < 2:
        return None
    n = len(pairs)
    po = sum(1 for a, b in pairs if a == b) / n
    counts = {c: 0 for c in categories}
    for a, b in pairs:
        counts[a] += 1
        counts[b] += 1
    pe = sum((counts[c] / (2 * n)) * (1 - counts[c] / (2 * n)) for c in categories) / (q - 1)
    if math.isclose(pe, 1.0):
        return 1.0 if po == 1.0 else 0.0
    return (po - pe) / (1 - pe)


# --- Paired differences clustered by task (issue 29): runs of one task are not independent ---

#: Fewer clusters than this give no interval and no p ("too few"): six is also the fewest clusters, all
#: one way, that a sign test over clusters needs for p < 0.05 (2 · 2^-6 = 0.031; five give 0.0625).
MIN_CLUSTERS = 6
BOOTSTRAP_RESAMPLES = 4000
BOOTSTRAP_SEED = 29


@dataclass(frozen=True)
class ClusteredDifference:
    """A paired difference over clusters: its percentile bootstrap interval and p, or None for too few clusters."""

    clusters: int
    interval: tuple[float, float] | None
    p: float | None


def _resample_indices(k: int, resamples: int, seed: int):  # one draw of cluster indices per (k, resamples, seed)
    import numpy as np  # here, not at the top: a table that never compares never loads it

    return np.random.default_rng(seed).integers(0, k, size=(resamples, k))


_INDICES: dict[tuple[int, int, int], Any] = {}


def cluster_bootstrap_difference(clusters: Sequence[tuple[int, int]], confidence: float = 0.95, *,
                                 resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED,
                                 min_clusters: int = MIN_CLUSTERS) -> ClusteredDifference:
    """The difference A − B over paired cases grouped in clusters, resampling whole clusters (tasks).

    ``clusters`` holds per cluster (A only − B only, paired cases): the difference is their sums'
    ratio, and each resample draws as many clusters with replacement (numpy, a fixed seed: the same
    input gives the same figures). The interval is the percentile interval of the resampled
    differences; p is the two-sided percentile-bootstrap p, twice the smaller share of resamples on
    either side of 0 (so p < 1 − confidence exactly when 0 is outside the interval). With fewer than
    ``min_clusters`` clusters both are None: a bootstrap over two tasks knows nothing of a third.
    """
    k = len(clusters)
    if k < min_clusters:
        return ClusteredDifference(k, None, None)
    import numpy as np

    key = (k, resamples, seed)
    if key not in _INDICES:
        _INDICES.clear()
        _INDICES[key] = _resample_indices(k, resamples, seed)
    idx = _INDICES[key]
    d = np.array([c[0] for c in clusters], dtype=float)
    n = np.array([c[1] for c in clusters], dtype=float)
    if (n <= 0).any() or (np.abs(d) > n).any():
        raise ValueError("each cluster needs n > 0 paired cases and |A only − B only| <= n")
    values = d[idx].sum(axis=1) / n[idx].sum(axis=1)
    alpha = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(values, [alpha, 100.0 - alpha])  # numpy's "linear", as ``percentile``
    diff = d.sum() / n.sum()
    p = min(1.0, 2.0 * min(float((values <= 0).mean()), float((values >= 0).mean())))
    return ClusteredDifference(k, (float(min(low, diff)), float(max(high, diff))), p)


def cluster_detectable(sizes: Sequence[int], alpha: float = 0.05) -> float | None:
    """The smallest difference clusters of these sizes can tell apart: the fewest clusters a sign test over
    clusters needs (every case of each going one way), taken from the smallest clusters, over all cases.

    With clusters as the independent units, k clusters all one way reach p < alpha only when
    2 · 2^-k < alpha (6 at 5%); None when there are fewer clusters than that.
    """
    if any(s <= 0 for s in sizes):
        raise ValueError("every cluster needs at least one case")
    need = 1
    while need <= len(sizes) and mcnemar_exact(need, 0) >= alpha:
        need += 1
    if need > len(sizes):
        return None
    return sum(sorted(sizes)[:need]) / sum(sizes)
