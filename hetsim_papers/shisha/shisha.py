"""Shisha (Paper II: Soomro, Abduljabbar, Castrillon, Pericàs, "Shisha: Online scheduling of CNN
pipelines on heterogeneous architectures"), its §5.1-5.2 and Algorithms 1-2; what the listings
leave open is a line of docs/papers/shisha.md.

* Algorithm 1 (:func:`seed_split`, :func:`assign_eps`, :func:`shisha_seed`): merge the lightest
  group of layers with its lighter neighbour until N stages remain; rank the stages (by layer
  count, Rank_l, or by weight, Rank_w) and give the i-th ranked stage the i-th fastest EP of H_e
  (fast EPs, FEPs, first).
* Algorithm 2 (:class:`Shisha`): move one layer at a time out of the slowest stage toward the
  nearest FEP (nFEP) or the nearest lightest FEP (nlFEP) until alpha consecutive moves bring no
  improvement; return the best configuration seen.

Heuristics H1-H6 (Paper II Table 2) pick the ranking and the balancing target:

========= ========== ==========
heuristic EP ranking balancing
========= ========== ==========
H1        layers     nlFEP
H2        layers     nFEP
H3        weight     nlFEP      (recommended by the paper)
H4        weight     nFEP
H5        random     nlFEP
H6        random     nFEP
========= ========== ==========

    problem = PipelineProblem("chiplet-c2", "resnet50-shisha", depths=[4])
    explore(problem, Shisha(heuristic="H3")).best_mapping
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice, check_number
from hetsim.exploration.base import Explorer, Session
from hetsim.exploration.problem import Configuration, PipelineProblem

HEURISTICS = {
    "H1": ("layers", "nlFEP"), "H2": ("layers", "nFEP"),
    "H3": ("weight", "nlFEP"), "H4": ("weight", "nFEP"),
    "H5": ("random", "nlFEP"), "H6": ("random", "nFEP"),
}
RANKINGS = ("layers", "weight", "random")
BALANCINGS = ("nlFEP", "nFEP")


# -- Algorithm 1: the seed ------------------------------------------------------------------
def seed_split(weights: Sequence, n_stages: int, lightest_tie: str = "first",
               neighbour_tie: str = "left") -> tuple[int, ...]:
    """Phase 1 of Algorithm 1 (lines 3-8): greedy merging into ``n_stages`` stages.

    L - N times (the listing's ``[0..|L-N|]`` reads as L-N+1 passes; only L-N merges are possible,
    docs/papers/shisha.md): take the lightest group (``lightest_tie`` "first"/"last" index on ties)
    and merge it with its lighter existing neighbour (``neighbour_tie`` "left"/"right" on ties).

    >>> seed_split([1, 4, 8, 4, 8, 8, 4], 3)        # Synth 1
    (4, 1, 2)
    >>> seed_split([1, 4, 8, 4, 8, 8, 4], 3, neighbour_tie="right")
    (3, 2, 2)
    """
    w = [int(x) if float(x).is_integer() else float(x) for x in weights]
    L = len(w)
    if not 1 <= n_stages <= L:
        raise HetsimError(f"Shisha seed: n_stages={n_stages} must be within 1..{L} (the layer count)")
    check_choice("seed_split", "lightest_tie", lightest_tie, ("first", "last"))
    check_choice("seed_split", "neighbour_tie", neighbour_tie, ("left", "right"))
    sizes = [1] * L
    while len(w) > n_stages:
        lightest = min(w)
        hits = [i for i, x in enumerate(w) if x == lightest]
        i = hits[0] if lightest_tie == "first" else hits[-1]
        neighbours = [j for j in (i - 1, i + 1) if 0 <= j < len(w)]
        if len(neighbours) == 2 and w[i - 1] == w[i + 1]:
            n = i - 1 if neighbour_tie == "left" else i + 1
        else:
            n = min(neighbours, key=lambda j: w[j])
        a, b = min(i, n), max(i, n)
        w[a:b + 1] = [w[a] + w[b]]
        sizes[a:b + 1] = [sizes[a] + sizes[b]]
    return tuple(sizes)


def ep_order(problem: PipelineProblem, fast: Sequence[str] | None = None,
             order: Sequence[str] | None = None) -> tuple[list[str], set[str]]:
    """H_e, the EPs sorted fast-first, and the set of fast EPs (FEPs).

    Paper II classifies EPs only by memory type (Shisha §5): FEPs are the EPs on the
    highest-bandwidth memory (unless ``fast`` names them); FEPs come first, then the others by
    descending memory bandwidth, each class in the platform's (chiplet-ID) order (docs/papers/shisha.md).
    ``order`` gives H_e explicitly instead.
    """
    bw = {e: problem.platform.memory(problem.platform.ep(e).memory).bandwidth_GBps for e in problem.eps}
    if fast is None:
        top = max(bw.values())
        fast_set = {e for e in problem.eps if bw[e] == top}
    else:
        fast_set = set(fast)
        unknown = fast_set - set(problem.eps)
        if unknown:
            raise HetsimError(f"Shisha: fast_eps names {sorted(unknown)}, which are not candidate EPs "
                              f"of the problem ({', '.join(problem.eps)})")
    if order is not None:
        h_e = [str(e) for e in order]
        if len(set(h_e)) != len(h_e) or not set(h_e) <= set(problem.eps):
            raise HetsimError(f"Shisha: ep_order={h_e} must list distinct candidate EPs of the problem "
                              f"({', '.join(problem.eps)})")
        return h_e, fast_set
    h_e = sorted(problem.eps, key=lambda e: (e not in fast_set, -bw[e], problem.eps.index(e)))
    return h_e, fast_set


def assign_eps(split: Sequence[int], weights: Sequence, h_e: Sequence[str], ranking: str,
               rng: np.random.Generator | None = None) -> tuple[str, ...]:
    """Phase 2 of Algorithm 1 (lines 9-12): E[R_i] = H_e[i].

    ``layers`` (Rank_l): fewest layers first, so the stages with most layers go to slow EPs and
    leave the online tuner layers to move; ``weight`` (Rank_w): heaviest stage first, on the
    fastest EP; ``random``: a random permutation of the N fastest EPs (H5, H6). Ties keep stage
    order.
    """
    n = len(split)
    if ranking == "layers":
        ranked = sorted(range(n), key=lambda i: (split[i], i))
    elif ranking == "weight":
        sums, b = [], 0
        for k in split:
            sums.append(sum(weights[b:b + k]))
            b += k
        ranked = sorted(range(n), key=lambda i: (-sums[i], i))
    elif ranking == "random":
        ranked = [int(i) for i in (rng or np.random.default_rng(0)).permutation(n)]
    else:
        raise HetsimError(f"Shisha: ranking={ranking!r} is not allowed; allowed: {', '.join(RANKINGS)}")
    eps: list[str] = [""] * n
    for i, stage in enumerate(ranked):
        eps[stage] = h_e[i]
    return tuple(eps)


def shisha_seed(problem: PipelineProblem, n_stages: int | None = None, ranking: str = "weight",
                rng: np.random.Generator | None = None, lightest_tie: str = "first",
                neighbour_tie: str = "left", fast_eps: Sequence[str] | None = None,
                order: Sequence[str] | None = None) -> Configuration:
    """Algorithm 1: Shisha's seed configuration for ``problem`` (N = ``n_stages``, default the
    number of candidate EPs, docs/papers/shisha.md)."""
    n = n_stages if n_stages is not None else len(problem.eps)
    weights = problem.layer_weights(True)
    split = seed_split(weights, n, lightest_tie, neighbour_tie)
    h_e, _ = ep_order(problem, fast_eps, order)
    if len(h_e) < n:
        raise HetsimError(f"Shisha seed: {n} stages need {n} EPs; H_e has {len(h_e)}")
    return Configuration(split, assign_eps(split, weights, h_e, ranking, rng))


class _ShishaStart:
    """Shisha's seed as the start of a local search (HC_s, SA_s, Paper II's baselines): Algorithm 1
    with the ranking of heuristic ``seed_heuristic``."""

    heuristics = tuple(HEURISTICS)

    def validate(self, owner: str, problem: PipelineProblem) -> None:
        if problem.fixed_assignment or problem.assignment == "cores":
            raise HetsimError(f"{owner}: start='shisha' needs a problem with assignment='permutations' "
                              f"(Shisha's seed gives each stage a whole EP)")

    def __call__(self, problem: PipelineProblem, n_stages: int, heuristic: str,
                 rng: np.random.Generator) -> Configuration:
        return shisha_seed(problem, n_stages, HEURISTICS[heuristic][0], rng)


#: The start point ``"shisha"`` of hetsim's local searches (HC_s, SA_s).
SHISHA_START = _ShishaStart()


# -- Algorithm 2: online tuning ---------------------------------------------------------------
def balancing_target(eps: Sequence[str], times: Sequence[float], s: int, balancing: str,
                     fast: set[str]) -> int:
    """The stage that receives a layer from the slowest stage ``s`` (Alg. 2, line 6).

    ``nFEP``: the FEP stage other than s nearest to s in stage index (ties: the lighter, then the
    left). ``nlFEP``: the FEP stage other than s with the smallest time (ties: the nearer, then
    the left). No FEP other than s (s is the only one, or the platform has none besides it):
    the adjacent lighter stage (§5.2's words). Distance is in stage index, as layers must stay
    contiguous (docs/papers/shisha.md).
    """
    candidates = [i for i, e in enumerate(eps) if e in fast and i != s]
    if candidates:
        if balancing == "nFEP":
            return min(candidates, key=lambda i: (abs(i - s), times[i], i))
        return min(candidates, key=lambda i: (times[i], abs(i - s), i))
    neighbours = [i for i in (s - 1, s + 1) if 0 <= i < len(eps)]
    return min(neighbours, key=lambda i: (times[i], i))


def move_layer(split: Sequence[int], s: int, t: int) -> tuple[int, ...] | None:
    """Move one layer out of stage s toward stage t: each stage in between passes one boundary
    layer on, so s loses one layer, t gains one and the chain stays contiguous. None when s has a
    single layer (a stage is never emptied, docs/papers/shisha.md)."""
    if split[s] <= 1 or s == t:
        return None
    out = list(split)
    out[s] -= 1
    out[t] += 1
    return tuple(out)


class Shisha(Explorer[PipelineProblem]):
    """Shisha: seed generation (Algorithm 1) + online tuning (Algorithm 2), Paper II.

    Parameters
    ----------
    heuristic : {"H1", ..., "H6"}, default "H3"
        Paper II Table 2: the EP ranking and the balancing target (H3 is the paper's
        recommendation). ``ranking``/``balancing`` override its parts.
    alpha : int, default 10
        Consecutive non-improving moves before stopping (Paper II uses 10 throughout).
    n_stages : int or None
        N, the number of stages (default: the number of candidate EPs, docs/papers/shisha.md; it must
        be one of the problem's depths).
    start : {"seed", "random"}, default "seed"
        Start from Shisha's seed, or from a random split and EP mapping (Fig. 6).
    ranking : {"layers", "weight", "random"} or None
        Rank_l, Rank_w or random (None: from ``heuristic``).
    balancing : {"nlFEP", "nFEP"} or None
        The balancing target (None: from ``heuristic``).
    after_worse : {"continue", "revert"}, default "continue"
        After a non-improving move, keep walking from it (the listing) or go back to the best
        configuration (an option, docs/papers/shisha.md).
    lightest_tie, neighbour_tie : default "first", "left"
        Tie rules of the greedy merge (Alg. 1 gives none: docs/papers/shisha.md).
    fast_eps : list of EP names or None
        The FEPs (None: the EPs on the highest-bandwidth memory, Shisha §5).
    ep_order : list of EP names or None
        H_e explicitly (None: FEPs first in chiplet-ID order, then the others, docs/papers/shisha.md).
    returns : {"best", "last"}, default "best"
        Return the best configuration seen, or the last one as the listing does (Alg. 2, line 16).
    stall : {"execute", "skip"}, default "execute"
        When the slowest stage holds a single layer no layer can move. The listing still executes
        the (unchanged) configuration in that iteration (Algorithm 2, lines 5-10: every pass of the
        while loop runs ``execute(conf)``), a trial that counts toward alpha ("execute"); "skip"
        counts the failure without a trial (hetsim 0.1's reading). docs/papers/shisha.md argues it.
    """

    #: Paper I / II balance stage times: they optimise throughput only.
    supported_objectives = ("throughput",)

    def __init__(self, heuristic: str = "H3", alpha: int = 10, n_stages: int | None = None,
                 start: str = "seed", ranking: str | None = None, balancing: str | None = None,
                 after_worse: str = "continue", lightest_tie: str = "first",
                 neighbour_tie: str = "left", fast_eps: Sequence[str] | None = None,
                 ep_order: Sequence[str] | None = None, returns: str = "best", stall: str = "execute"):
        self.heuristic = heuristic
        self.alpha = alpha
        self.n_stages = n_stages
        self.start = start
        self.ranking = ranking
        self.balancing = balancing
        self.after_worse = after_worse
        self.lightest_tie = lightest_tie
        self.neighbour_tie = neighbour_tie
        self.fast_eps = fast_eps
        self.ep_order = ep_order
        self.returns = returns
        self.stall = stall

    @property
    def name(self) -> str:
        return "Shisha" if self.start == "seed" else "Shisha (random seed)"

    def _ranking_balancing(self) -> tuple[str, str]:
        ranking, balancing = HEURISTICS[self.heuristic]
        return self.ranking or ranking, self.balancing or balancing

    def _n(self, problem: PipelineProblem) -> int:
        return self.n_stages if self.n_stages is not None else min(len(problem.eps), max(problem.depths))

    def validate(self, problem: PipelineProblem) -> None:
        owner = type(self).__name__
        check_choice(owner, "heuristic", self.heuristic, tuple(HEURISTICS))
        check_number(owner, "alpha", self.alpha, low=1, integer=True)
        check_choice(owner, "start", self.start, ("seed", "random"))
        check_choice(owner, "ranking", self.ranking, (None, *RANKINGS))
        check_choice(owner, "balancing", self.balancing, (None, *BALANCINGS))
        check_choice(owner, "after_worse", self.after_worse, ("continue", "revert"))
        check_choice(owner, "lightest_tie", self.lightest_tie, ("first", "last"))
        check_choice(owner, "neighbour_tie", self.neighbour_tie, ("left", "right"))
        check_choice(owner, "returns", self.returns, ("best", "last"))
        check_choice(owner, "stall", self.stall, ("execute", "skip"))
        if self.n_stages is not None:
            check_number(owner, "n_stages", self.n_stages, low=1, integer=True)
        if problem.fixed_assignment:
            raise HetsimError(f"{owner} maps stages to EPs itself: use a problem with "
                              f"assignment='permutations'")
        if problem.assignment == "cores":
            raise HetsimError(f"{owner} gives each stage a whole EP ranked by its memory (chiplets, "
                              f"Paper II); {problem.name} gives stages core groups (assignment='cores'): "
                              f"use assignment='permutations' over whole EPs")
        if self._n(problem) not in problem.depths:
            raise HetsimError(f"{owner}: n_stages={self._n(problem)} is not a depth of the problem "
                              f"(depths {list(problem.depths)})")
        h_e, _ = ep_order(problem, self.fast_eps, self.ep_order)
        if len(h_e) < self._n(problem):
            raise HetsimError(f"{owner}: ep_order lists {len(h_e)} EPs but n_stages is {self._n(problem)}")

    def run(self, session: Session[PipelineProblem]) -> Configuration:
        problem, rng = session.problem, session.rng
        ranking, balancing = self._ranking_balancing()
        _, fast = ep_order(problem, self.fast_eps, self.ep_order)
        n = self._n(problem)
        if self.start == "seed":
            conf = shisha_seed(problem, n, ranking, rng, self.lightest_tie, self.neighbour_tie,
                               self.fast_eps, self.ep_order)
        else:
            conf = problem.random_configuration(rng, depth=n)
        session.info["seed_configuration"] = conf
        result = session.measure(conf, "seed")
        best, best_tp = conf, result.throughput_fps
        gamma = 0
        while gamma < self.alpha:
            s = result.slowest_stage
            t = balancing_target(conf.eps, result.stage_times_s, s, balancing, fast)
            split = move_layer(conf.split, s, t)
            if split is None:
                # The slowest stage holds one layer: no move can relieve it (a failure, docs/papers/shisha.md). The
                # listing executes the unchanged configuration all the same.
                gamma += 1
                if self.stall == "execute":
                    result = session.measure(conf, "stall", again=True)
                continue
            conf = Configuration(split, conf.eps)
            result = session.measure(conf, "tune")
            if result.throughput_fps <= best_tp:
                gamma += 1
                if self.after_worse == "revert":
                    conf, result = best, session.results[best]
            else:
                gamma, best, best_tp = 0, conf, result.throughput_fps
        # The listing returns the last conf; the best seen is our choice (docs/papers/shisha.md).
        return best if self.returns == "best" else conf
