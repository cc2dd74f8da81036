"""The configuration database: per depth, every split of the layers into that many stages, sorted
by balance (the coefficient of variation of the stages' weight sums), most balanced first.

It is Pipe-search's Algorithm 1 (Paper I Eqs. 3-4; docs/papers/pipesearch.md), and what exhaustive
search and random walks enumerate and pay for before their first trial (Papers I and II).

    >>> db = generate_database([1, 4, 8, 4, 8, 8, 4], depths=[3])
    >>> db.seed(3), db.size
    ((3, 2, 2), 15)
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice
from hetsim.workload.splits import (
    compositions,
    count_eq4_with_dups,
    cv_from_sums,
    exact_weights,
)

TIE_ORDERS = ("eq4", "eq4-reversed", "lexicographic")


# -- Algorithm 1: the configuration database ------------------------------------------------
@dataclass(frozen=True)
class ConfigurationDatabase:
    """Per depth, the splits Pipe-search walks, most balanced (lowest CV) first.

    ``lists[p][0]`` is the seed of depth p. ``rank(split)`` is the paper's rank (Tables 6 and 7):
    the 1-based position of the first split with the same CV in its depth's list (a choice,
    docs/papers/pipesearch.md), so exact ties share a rank.
    """

    lists: Mapping[int, tuple[tuple[int, ...], ...]]
    cvs: Mapping[tuple[int, ...], float]
    ranks: Mapping[tuple[int, ...], int]
    count_with_duplicates: Mapping[int, int]

    def seed(self, depth: int) -> tuple[int, ...]:
        return self.lists[depth][0]

    def rank(self, split: Sequence[int]) -> int:
        try:
            return self.ranks[tuple(split)]
        except KeyError:
            raise HetsimError(f"split {list(split)} is not in the database (depths "
                              f"{sorted(self.lists)})") from None

    def position(self, split: Sequence[int]) -> int:
        """1-based position of ``split`` in its depth's list (ties in ``tie_order``)."""
        split = tuple(split)
        try:
            return self.lists[len(split)].index(split) + 1
        except (KeyError, ValueError):
            raise HetsimError(f"split {list(split)} is not in the database (depths "
                              f"{sorted(self.lists)})") from None

    def cv(self, split: Sequence[int]) -> float:
        return self.cvs[tuple(split)]

    @property
    def size(self) -> int:
        """Distinct splits over all depths."""
        return len(self.cvs)

    def frame(self) -> pd.DataFrame:
        """One row per walked entry: depth, position (1-based), split, cv, rank."""
        rows = [{"depth": p, "position": i, "split": "[" + ",".join(map(str, s)) + "]",
                 "cv": self.cvs[s], "rank": self.ranks[s]}
                for p, lst in self.lists.items() for i, s in enumerate(lst, 1)]
        return pd.DataFrame(rows)


def generate_database(weights: Sequence, depths: Sequence[int], tie_order: str = "eq4",
                      duplicates: bool = False) -> ConfigurationDatabase:
    """Pipe-search Algorithm 1 (Pipe-search §4.3) with k = all entries kept.

    The entries of depth p are Eq. 4's: the partitions of M into p parts (in
    ``combinations_with_replacement`` order) and the permutations of each, stably sorted by CV.
    ``duplicates=False`` keeps the first copy of each split (what is measured, docs/papers/pipesearch.md);
    ``True`` keeps Eq. 4's repeats (1970 entries for VGG16, p = 2..4). ``tie_order`` orders
    equal-CV splits: ``"eq4"`` (hetsim's choice, docs/papers/pipesearch.md), ``"eq4-reversed"`` (Eq. 4's list
    reversed, which matches 5 of the 6 Table 7 ranks), or ``"lexicographic"`` cut points (the
    order of :func:`hetsim.workload.splits.cv_sorted`).
    """
    check_choice("generate_database", "tie_order", tie_order, TIE_ORDERS)
    if duplicates and tie_order == "lexicographic":
        raise HetsimError("generate_database: duplicates=True needs tie_order 'eq4' or 'eq4-reversed' "
                          "(lexicographic compositions have no duplicates)")
    w = exact_weights(weights)
    M = len(w)
    prefix = [0, *itertools.accumulate(w)]
    total = prefix[-1]
    lists, cvs, ranks, dups = {}, {}, {}, {}
    for p in sorted(set(depths)):
        if not 1 <= p <= M:
            raise HetsimError(f"generate_database: depth {p} must be within 1..{M}")
        if tie_order == "lexicographic":
            entries: list[tuple[int, ...]] = list(compositions(M, p))
        else:
            entries = list(_eq4_entries(M, p, duplicates))
            if tie_order == "eq4-reversed":
                entries.reverse()
        # For a fixed total and depth the CV grows with the sum of squared stage sums (Eq. 3):
        # sort on that exact integer, so exact ties stay ties whatever the float rounding.
        keyed = [(_sum_sq(prefix, s), s) for s in entries]
        keyed.sort(key=lambda t: t[0])  # stable
        lists[p] = tuple(s for _, s in keyed)
        first_of_key: dict = {}
        for pos, (sq, s) in enumerate(keyed, 1):
            rank = first_of_key.setdefault(sq, pos)
            if s not in cvs:
                cvs[s] = cv_from_sums(sq, total, p)
                ranks[s] = rank
        dups[p] = count_eq4_with_dups(M, p)
    return ConfigurationDatabase(lists, cvs, ranks, dups)


def _eq4_entries(M: int, k: int, duplicates: bool) -> Iterator[tuple[int, ...]]:
    """Paper I Eq. 4 for one PS_count: each partition of M into k parts, then its permutations
    (itertools order with repeats, or each distinct permutation once at its first appearance,
    which is lexicographic order)."""
    for part in _partitions(M, k, 1):
        if duplicates:
            yield from itertools.permutations(part)
        else:
            yield from _distinct_permutations(part)


def _partitions(M: int, k: int, smallest: int) -> Iterator[tuple[int, ...]]:
    """Non-decreasing k-tuples >= smallest summing to M, in lexicographic order (the
    ``combinations_with_replacement(range(1, M + 1), k)`` entries that sum to M)."""
    if k == 1:
        if M >= smallest:
            yield (M,)
        return
    for first in range(smallest, M // k + 1):
        for rest in _partitions(M - first, k - 1, first):
            yield (first, *rest)


def _distinct_permutations(sorted_part: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
    """Distinct permutations of a sorted tuple in lexicographic order (next-permutation)."""
    a = list(sorted_part)
    n = len(a)
    while True:
        yield tuple(a)
        i = n - 2
        while i >= 0 and a[i] >= a[i + 1]:
            i -= 1
        if i < 0:
            return
        j = n - 1
        while a[j] <= a[i]:
            j -= 1
        a[i], a[j] = a[j], a[i]
        a[i + 1:] = reversed(a[i + 1:])


def _sum_sq(prefix: list, split: tuple[int, ...]):
    sq, b = 0, 0
    for n in split:
        s = prefix[b + n] - prefix[b]
        sq += s * s
        b += n
    return sq
