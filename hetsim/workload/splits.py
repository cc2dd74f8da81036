"""Layer splits: the combinatorics of Pipe-search (its §4.2-4.3, Eqs. 3-4).

A *split* (Pipe-search's configuration ``P_c``, Shisha's ``Seed``) of M layers into k stages is a
tuple of positive layer counts summing to M, e.g. ``(7, 4, 10)`` for VGG16's 21 layers. Distinct
splits are the *compositions* of M into k parts, ``C(M-1, k-1)`` of them. Pipe-search's Eq. 4
instead enumerates the integer partitions of M into k parts and all k! orderings of each, with
repeats; that is the count behind the paper's "1970 configurations" for VGG16.

The balance measure is the coefficient of variation of the per-stage weight sums (Paper I Eq. 3)
with the **population** standard deviation, which reproduces the paper's Table 7 values.
Ranks come from a *stable* sort of the compositions in lexicographic cut-point order (the paper
gives no tie order: docs/papers/pipesearch.md). CVs are compared exactly (see :func:`cv_sorted`), so
splits whose stage sums are permutations of each other tie exactly and keep that order.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from numbers import Integral, Rational, Real

from hetsim.errors import HetsimError

#: Refuse to materialise more splits than this in :func:`cv_sorted` unless told otherwise.
DEFAULT_MAX_SPLITS = 5_000_000


def compositions(M: int, k: int) -> Iterator[tuple[int, ...]]:
    """All splits of M layers into k non-empty consecutive stages, in lexicographic order of
    their cut points (``itertools.combinations(range(1, M), k - 1)``): for M = 4, k = 2 this
    yields (1, 3), (2, 2), (3, 1)."""
    if k < 1 or M < k:
        return
    for cuts in itertools.combinations(range(1, M), k - 1):
        bounds = (0, *cuts, M)
        yield tuple(bounds[i + 1] - bounds[i] for i in range(k))


def count_compositions(M: int, k: int) -> int:
    """Number of distinct splits of M layers into k stages: C(M-1, k-1)."""
    return math.comb(M - 1, k - 1) if 1 <= k <= M else 0


def eq4_with_dups(M: int, k: int) -> Iterator[tuple[int, ...]]:
    """Pipe-search's Eq. 4 configuration database for one PS_count k, duplicates included.

    ``S_c``: the size-k multisets of layer counts 1..M summing to M (partitions of M into k
    parts); ``S``: all k! permutations of each, **without** removing repeats. Summed over
    k = 2, 3, 4 for VGG16 (M = 21) this gives 20 + 222 + 1728 = 1970, the paper's ES count.
    """
    for part in itertools.combinations_with_replacement(range(1, M + 1), k):
        if sum(part) == M:
            yield from itertools.permutations(part)


def count_eq4_with_dups(M: int, k: int) -> int:
    """``len(list(eq4_with_dups(M, k)))`` without enumerating: p_k(M) · k!, with p_k(M) the
    number of partitions of M into exactly k parts."""
    if not 1 <= k <= M:
        return 0
    # p[n][j] = partitions of n into exactly j parts = p[n-1][j-1] + p[n-j][j].
    p = [[0] * (k + 1) for _ in range(M + 1)]
    p[0][0] = 1
    for n in range(1, M + 1):
        for j in range(1, min(n, k) + 1):
            p[n][j] = p[n - 1][j - 1] + p[n - j][j]
    return p[M][k] * math.factorial(k)


def cut_points(split: Sequence[int]) -> tuple[int, ...]:
    """The layers after which a split cuts: (7, 4, 10) -> (7, 11)."""
    return tuple(itertools.accumulate(split))[:-1]


def split_from_cuts(cuts: Sequence[int], M: int) -> tuple[int, ...]:
    """Inverse of :func:`cut_points`: (7, 11), 21 -> (7, 4, 10)."""
    bounds = (0, *cuts, M)
    return tuple(bounds[i + 1] - bounds[i] for i in range(len(bounds) - 1))


def stage_sums(weights: Sequence[Real], split: Sequence[int]) -> list:
    """Per-stage sums of the layer weights (the set W of Paper I Eq. 3)."""
    _check_split(len(weights), split)
    sums, i = [], 0
    for n in split:
        sums.append(sum(weights[i:i + n]))
        i += n
    return sums


def cv(weights: Sequence[Real], split: Sequence[int]) -> float:
    """Coefficient of variation of the stage sums, σ(W)/μ(W) with the population σ
    (Paper I Eq. 3). Synth 1 {1,4,8,4,8,8,4} split [3,2,2] -> sums 13, 12, 12 -> 0.0382."""
    sums = stage_sums(exact_weights(weights), split)
    return cv_from_sums(sum(s * s for s in sums), sum(sums), len(sums))


def cv_sorted(weights: Sequence[Real], k: int, max_count: int | None = DEFAULT_MAX_SPLITS,
              ) -> list[tuple[tuple[int, ...], float]]:
    """Every split into k stages with its CV, most balanced first: Pipe-search Algorithm 1's
    per-depth list. Ties keep the lexicographic cut-point order (stable sort).

    For a fixed total S and k the CV grows with Σ s_i² (σ² = Σs²/k − (S/k)²), so the sort key is
    that sum computed exactly (integers, or exact fractions of float weights): equal CVs tie
    exactly, whatever the floating-point rounding.
    """
    M = len(weights)
    n = count_compositions(M, k)
    if max_count is not None and n > max_count:
        raise HetsimError(f"{n} splits of {M} layers into {k} stages exceed the limit "
                          f"{max_count}; pass a larger max_count or fewer stages")
    w = exact_weights(weights)
    prefix = [0, *itertools.accumulate(w)]
    total = prefix[-1]
    keyed = []
    for split in compositions(M, k):
        bounds = (0, *itertools.accumulate(split))
        sq = sum((prefix[bounds[j + 1]] - prefix[bounds[j]]) ** 2 for j in range(k))
        keyed.append((sq, split))
    keyed.sort(key=lambda t: t[0])  # list.sort is stable
    return [(split, cv_from_sums(sq, total, k)) for sq, split in keyed]


def cv_rank(weights: Sequence[Real], split: Sequence[int]) -> int:
    """1-based position of ``split`` in :func:`cv_sorted` for its depth (Pipe-search Table 6's
    rank: VGG16 [6,5,10] -> 1, [7,4,10] -> 3)."""
    split = tuple(split)
    _check_split(len(weights), split)
    for pos, (s, _) in enumerate(cv_sorted(weights, len(split), max_count=None), start=1):
        if s == split:
            return pos
    raise AssertionError("unreachable: every valid split is a composition")


# -- helpers ------------------------------------------------------------------------------
def exact_weights(weights: Sequence[Real]) -> list:
    """Weights as Python ints, or exact Fractions for non-integral values (a float is a dyadic
    rational, so nothing is rounded)."""
    out: list[int | Fraction] = []
    for x in weights:
        if isinstance(x, Integral):
            out.append(int(x))
            continue
        fr = Fraction(x) if isinstance(x, Rational) else Fraction(float(x))
        out.append(int(fr) if fr.denominator == 1 else fr)
    return out


def cv_from_sums(sq, total, k: int) -> float:
    """Population CV of k stage sums from their sum of squares ``sq`` and total (Paper I Eq. 3)."""
    # σ/μ = sqrt(k·Σs² − S²) / S for the population σ.
    if total == 0:
        return 0.0
    num = k * sq - total * total
    return math.sqrt(max(float(num), 0.0)) / float(total)


def _check_split(M: int, split: Sequence[int]) -> None:
    if not split or any(int(n) < 1 for n in split) or sum(split) != M:
        raise HetsimError(f"split {list(split)} must be positive layer counts summing to {M}")


__all__ = [
    "DEFAULT_MAX_SPLITS",
    "compositions",
    "count_compositions",
    "count_eq4_with_dups",
    "cut_points",
    "cv",
    "cv_rank",
    "cv_sorted",
    "eq4_with_dups",
    "split_from_cuts",
    "stage_sums",
]
