"""Pipe-search (Paper I: Soomro, Abduljabbar, Castrillon, Pericàs, CF'21), as reconstructed in
the 000 digest §5.1-5.2.

* Algorithm 1 (offline, :func:`generate_database`): for every depth PS_count, every split of the
  layers into PS_count stages (Eq. 4), sorted by the coefficient of variation of the per-stage
  sums of the layer weights (Eq. 3, population σ), most balanced first. The first entry of each
  list is that depth's *seed*.
* Algorithm 2 (online, :class:`PipeSearch`): execute every depth's seed; walk each depth's list
  from its seed while fewer than alpha consecutive trials fail to match the best T_s (phase 1);
  then keep walking the list of the best depth (phase 2).

    tx2 = load_platform("jetson-tx2", dvfs="governor1")
    problem = PipelineProblem(tx2, "vgg16", assignment=core_groups(tx2, cores=4),
                              count_duplicates=True)            # 1970 configurations
    explore(problem, PipeSearch(alpha=10)).best.split_text
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from hetsim.errors import HetsimError
from hetsim.explore._checks import check_choice, check_number
from hetsim.explore.base import Explorer, Session
from hetsim.explore.problem import Configuration, PipelineProblem
from hetsim.explore.registry import register
from hetsim.workload.splits import (
    compositions,
    count_compositions,
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
    the 1-based position of the first split with the same CV in its depth's list (000 digest
    §8 item 3), so exact ties share a rank.
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
    """Pipe-search Algorithm 1 (000 digest §5.1) with k = all entries kept.

    The entries of depth p are Eq. 4's: the partitions of M into p parts (in
    ``combinations_with_replacement`` order) and the permutations of each, stably sorted by CV.
    ``duplicates=False`` keeps the first copy of each split (what is measured, §8 item 4);
    ``True`` keeps Eq. 4's repeats (1970 entries for VGG16, p = 2..4). ``tie_order`` orders
    equal-CV splits: ``"eq4"`` (the digest's resolution), ``"eq4-reversed"`` (Eq. 4's list
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


# -- Algorithm 2: online tuning ---------------------------------------------------------------
class PipeSearch(Explorer[PipelineProblem]):
    """Pipe-search's online tuner (Paper I Algorithm 2, 000 digest §5.2).

    Parameters
    ----------
    alpha : int, default 10
        Patience (the paper's confidence): consecutive trials that do not match the best T_s
        before a depth (phase 1) or the refinement (phase 2) stops. Paper I uses 10 (Table 3),
        15 (Fig. 3) and 3..15 (Fig. 4).
    hints : bool, default True
        Balance the Eq. 1/2 layer weights; False: unit weights, i.e. balance layer counts
        (Paper I's "Pipe-search (no hints)", Table 5).
    stage_eps : callable depth -> EP names, dict {depth: EP names} or None
        Which EP runs each stage. None: :meth:`PipelineProblem.stage_eps` (the problem's
        assignment rule when it has one, e.g. :func:`~hetsim.explore.problem.core_groups`, digest
        §8 item 6; Paper I's core groups over every core for ``assignment="cores"``; else stage i
        on the i-th candidate EP, Paper II's use of PS as a baseline, digest §5.5).
    tie_order : {"eq4", "eq4-reversed", "lexicographic"}, default "eq4"
        Order of equal-CV splits in the database (digest §8 item 3).
    duplicates : {"skip", "walk"}, default "skip"
        "walk" keeps Eq. 4's repeated orderings in the walked lists; a repeat is answered from the
        cache and counts as a non-improving trial (digest §5.2, last bullet).
    ties : {"reset", "fail"}, default "reset"
        A trial whose T_s equals the best: "reset" makes it the new S_min and resets gamma (the
        listing's ``>``); "fail" counts it as non-improving, which ends plateaus of equal T_s
        sooner on a noise-free simulator.
    charge_database : bool, default True
        Charge the database-generation cost (the problem's Measurement) before the first trial.
    """

    #: Paper I / II balance stage times: they optimise throughput only.
    supported_objectives = ("throughput",)

    def __init__(self, alpha: int = 10, hints: bool = True,
                 stage_eps: Callable[[int], Sequence[str]] | Mapping[int, Sequence[str]] | None = None,
                 tie_order: str = "eq4", duplicates: str = "skip", ties: str = "reset",
                 charge_database: bool = True):
        self.alpha = alpha
        self.hints = hints
        self.stage_eps = stage_eps
        self.tie_order = tie_order
        self.duplicates = duplicates
        self.ties = ties
        self.charge_database = charge_database

    @property
    def name(self) -> str:
        return "Pipe-search" if self.hints else "Pipe-search (no hints)"

    def validate(self, problem: PipelineProblem) -> None:
        owner = type(self).__name__
        check_number(owner, "alpha", self.alpha, low=1, integer=True)
        check_choice(owner, "hints", self.hints, (True, False))
        check_choice(owner, "tie_order", self.tie_order, TIE_ORDERS)
        check_choice(owner, "duplicates", self.duplicates, ("skip", "walk"))
        check_choice(owner, "ties", self.ties, ("reset", "fail"))
        check_choice(owner, "charge_database", self.charge_database, (True, False))
        if self.duplicates == "walk" and self.tie_order == "lexicographic":
            raise HetsimError(f"{owner}: duplicates='walk' needs tie_order 'eq4' or 'eq4-reversed'")
        if not (self.stage_eps is None or callable(self.stage_eps) or isinstance(self.stage_eps, Mapping)):
            raise HetsimError(f"{owner}: stage_eps must be None, a function depth -> EP names or a dict "
                              f"{{depth: EP names}}; got {type(self.stage_eps).__name__}")
        rule = self._rule(problem)
        M = problem.num_layers
        for p in problem.depths:
            try:
                eps = tuple(rule(p))
            except (KeyError, IndexError):
                raise HetsimError(f"{owner}: stage_eps gives no EPs for depth {p}") from None
            probe = Configuration((1,) * (p - 1) + (M - p + 1,), eps)
            if not problem.contains(probe):
                raise HetsimError(f"{owner}: stage_eps gives {list(eps)} for depth {p}, which is not an "
                                  f"EP assignment of the problem (eps {', '.join(problem.eps)})")

    def _rule(self, problem: PipelineProblem) -> Callable[[int], tuple[str, ...]]:
        if isinstance(self.stage_eps, Mapping):
            table = self.stage_eps
            return lambda p: tuple(table[p])
        rule = self.stage_eps
        if callable(rule):
            return lambda p: tuple(rule(p))
        return problem.stage_eps

    def run(self, session: Session[PipelineProblem]) -> Configuration:
        problem = session.problem
        depths = problem.depths
        walk_dups = self.duplicates == "walk"
        count = sum(problem.count_splits(p, duplicates=walk_dups) for p in depths)
        problem.check_enumerable(count, "Pipe-search database")
        db = generate_database(problem.layer_weights(self.hints), depths, self.tie_order, walk_dups)
        session.info["database"] = db
        if self.charge_database:
            session.charge_database(sum(count_compositions(problem.num_layers, p) for p in depths),
                                    "Pipe-search Algorithm 1")
        rule = self._rule(problem)
        eps = {p: rule(p) for p in depths}
        S = db.lists
        alpha = self.alpha
        equal_fails = self.ties == "fail"

        def config(p: int, c: int) -> Configuration:
            return Configuration(S[p][c], eps[p])

        # Initialisation (digest §5.2): execute the seed S[p][0] of every depth; S_min = the best.
        seed_ts: dict[int, float] = {}
        s_min, ts_min = None, float("inf")
        for p in depths:
            seed_ts[p] = session.measure(config(p, 0), "init").bottleneck_s
            if seed_ts[p] < ts_min or s_min is None:   # (every seed infeasible: the first)
                s_min, ts_min = config(p, 0), seed_ts[p]

        def walk(p: int, c: int, phase: str) -> int:
            """Listing lines 2-16 (phase 1) and 17-30 (phase 2): walk S[p] from c with patience."""
            nonlocal s_min, ts_min
            gamma = 0
            while gamma < alpha and c < len(S[p]):
                conf = config(p, c)
                if c == 0:
                    ts, revisit = seed_ts[p], False  # executed in the initialisation; not re-run
                else:
                    revisit = session.is_cached(conf)
                    ts = session.measure(conf, phase).bottleneck_s
                # A repeat of Eq. 4's list is a non-improving trial too; so is an infeasible one
                # (an EP that cannot run a layer: T_s = inf, which would otherwise tie an inf S_min).
                if revisit or ts > ts_min or math.isinf(ts) or (equal_fails and ts == ts_min
                                                                and conf != s_min):
                    gamma += 1
                else:                       # new (or equal) global minimum: reset the confidence
                    s_min, ts_min, gamma = conf, ts, 0
                c += 1
            return c

        # Phase 1: every depth from its seed, gamma reset per depth (digest §8 item 5).
        visited = {p: walk(p, 0, "phase1") for p in depths}
        # Phase 2: refine within the depth of the best configuration, where phase 1 left off.
        assert s_min is not None, "phase 1 measures at least one configuration"
        p_best = s_min.depth
        visited[p_best] = walk(p_best, visited[p_best], "phase2")
        session.info["visited"] = visited
        session.info["seeds"] = {p: S[p][0] for p in depths}
        return s_min


register("PS", PipeSearch, "pipeline", "Pipe-search (seed 000, Paper I)",
         "walk the CV-sorted configuration database, then tune around the best")
register("PS-nohints", PipeSearch, "pipeline", "Pipe-search (seed 000, Paper I)",
         "Pipe-search with unit layer weights instead of the compile-time hints", hints=False)
