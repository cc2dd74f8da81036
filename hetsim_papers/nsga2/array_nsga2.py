"""pymoo's NSGA-II on arrays: the same generations, draw for draw, without pymoo's objects.

pymoo keeps a population as one Python object per individual; at the thesis's scale (1000
individuals, 100 generations) its bookkeeping (attribute access per individual, pairwise distances
for duplicate elimination, a Python loop per tournament) costs several times the fitness itself.
:func:`nsga2_arrays` runs the loop of pymoo 0.6.2's ``NSGA2`` (``GeneticAlgorithm`` with
``Mating``, ``TournamentSelection(binary_tournament)``, ``RankAndCrowding``, duplicate elimination)
on arrays, calling pymoo's own numerical pieces (the operators' ``_do``, its random permutations,
non-dominated sorting, crowding distance, randomised argsort) with the same random generator in
the same order. The result is identical to pymoo's for the same seed (tested:
``engine="pymoo"`` runs pymoo itself).

What pymoo does that the arrays do the same way:

* the initial population: ``IntegerRandomSampling``, the chromosome's repair, duplicates removed
  (the first of equal genomes kept), evaluated, then survival over all of it;
* a generation: offspring made in rounds until there are ``pop_size`` (at most 100 rounds): a
  binary tournament (Pareto dominance, then the larger crowding distance, then a random pick) on
  random permutations, crossover per mating with probability ``prob``, mutation, repair, and the
  duplicates of the round, of the population and of the offspring so far removed (genomes are
  integers, so "duplicate" is equality), the last round truncated; then rank-and-crowding
  survival of population + offspring;
* the optimum after each generation: the population's first front, in population order.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

#: pymoo's limit on mating rounds per generation (``Mating(n_max_iterations=100)``).
MAX_ROUNDS = 100


def _first_unique(X: np.ndarray) -> np.ndarray:
    """Indices of the rows not equal to an earlier row (pymoo's ``DefaultDuplicateElimination``
    against itself: a row is a duplicate of an earlier one)."""
    seen: set[bytes] = set()
    keep = []
    for i, row in enumerate(X):
        key = row.tobytes()
        if key not in seen:
            seen.add(key)
            keep.append(i)
    return np.asarray(keep, dtype=np.int64)


def _not_in(X: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Mask of the rows of X equal to no row of ``other`` (same dtype)."""
    keys = {row.tobytes() for row in other}
    return np.fromiter((row.tobytes() not in keys for row in X), dtype=bool, count=len(X))


def _eliminate_duplicates(off: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """pymoo's ``DuplicateElimination.do(off, *others)``: duplicates within ``off`` (the first
    kept), then of each of ``others``."""
    if len(off) == 0:
        return off
    off = off[_first_unique(off)]
    for other in others:
        if len(other) > 0:
            if len(off) == 0:
                break
            off = off[_not_in(off, other)]
    return off


def _tournament(F: np.ndarray, crowding: np.ndarray, P: np.ndarray, rng) -> np.ndarray:
    """pymoo's NSGA-II ``binary_tournament`` (``comp_by_dom_and_crowding``, no constraints) on
    the pairs ``P``: the dominating one, else the larger crowding distance, else a random pick
    (drawn in pair order, as pymoo's loop draws)."""
    a, b = P[:, 0], P[:, 1]
    Fa, Fb = F[a], F[b]
    a_better = (Fa < Fb).any(axis=1)
    b_better = (Fb < Fa).any(axis=1)
    S = np.where(a_better & ~b_better, a, np.where(b_better & ~a_better, b, -1))
    for i in np.flatnonzero(S < 0):
        ai, bi = a[i], b[i]
        ca, cb = crowding[ai], crowding[bi]
        if ca > cb:
            S[i] = ai
        elif ca < cb:
            S[i] = bi
        else:
            S[i] = rng.choice([ai, bi])
    return S


def _survival(F: np.ndarray, n_survive: int, rng, nds, crowding_fn):
    """pymoo's ``RankAndCrowding`` (no constraints): the survivors' indices in pymoo's order, and
    the rank and crowding distance of every individual of the fronts it looked at."""
    from pymoo.util.randomized_argsort import randomized_argsort

    n_survive = min(n_survive, len(F))
    rank = np.full(len(F), -1, dtype=np.int64)
    crowding = np.full(len(F), np.nan)
    survivors: list[int] = []
    for k, front in enumerate(nds.do(F, n_stop_if_ranked=n_survive)):
        keep = np.arange(len(front))
        if len(survivors) + len(keep) > n_survive:
            n_remove = len(survivors) + len(front) - n_survive
            of_front = crowding_fn.do(F[front, :], n_remove=n_remove)
            keep = randomized_argsort(of_front, order="descending", method="numpy", random_state=rng)
            keep = keep[:-n_remove]
        else:
            of_front = crowding_fn.do(F[front, :], n_remove=0)
        rank[front] = k
        crowding[front] = of_front
        survivors.extend(front[keep])
    return np.asarray(survivors, dtype=np.int64), rank, crowding


def nsga2_arrays(problem, repair: Callable[[np.ndarray], np.ndarray], evaluate: Callable[[np.ndarray], np.ndarray],
                 ops: dict, pop_size: int, n_gen: int, seed: int,
                 record: Callable[[int, int, np.ndarray, np.ndarray], None],
                 eliminate_duplicates: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """pymoo 0.6.2's NSGA-II (module docstring) over ``problem`` (a pymoo problem: ``n_var``,
    bounds), ``repair`` (rounded genomes -> repaired int64 genomes), ``evaluate`` (genomes ->
    objectives), pymoo 0.5's integer operators ``ops`` (sampling, crossover, mutation). After
    the initial population and each of the ``n_gen`` generations, ``record(generation,
    evaluations, F, front_F)``. Returns the final first front's genomes and objectives."""
    from pymoo.core.variable import get
    from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
    from pymoo.util.misc import random_permutations
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    rng = np.random.default_rng(seed)
    nds, crowding_fn = NonDominatedSorting(), get_crowding_function("cd")
    sampling, crossover, mutation = ops["sampling"], ops["crossover"], ops["mutation"]
    dedup = _eliminate_duplicates if eliminate_duplicates else (lambda off, *others: off)
    n_var = problem.n_var

    def fix(X: np.ndarray) -> np.ndarray:
        return repair(np.rint(X).astype(np.int64))

    # the initial population
    X = fix(sampling._do(problem, pop_size, random_state=rng))
    X = dedup(X)
    F = evaluate(X)
    evaluations = len(X)
    order, rank, crowding = _survival(F, len(X), rng, nds, crowding_fn)
    X, F, rank, crowding = X[order], F[order], rank[order], crowding[order]
    record(0, evaluations, F, F[rank == 0])

    for generation in range(1, n_gen + 1):
        off = np.empty((0, n_var), dtype=np.int64)
        rounds = 0
        while len(off) < pop_size:
            n_matings = math.ceil((pop_size - len(off)) / crossover.n_offsprings)
            # TournamentSelection: pressure 2, two parents per mating
            n_random = n_matings * 2 * 2
            perms = random_permutations(math.ceil(n_random / len(X)), len(X), random_state=rng)[:n_random]
            parents = _tournament(F, crowding, np.reshape(perms, (n_matings * 2, 2)), rng).reshape(n_matings, 2)
            # Crossover.do: per mating with probability prob, else the parents unchanged
            Xpar = np.swapaxes(X[parents], 0, 1)
            Xp = np.empty((crossover.n_offsprings, n_matings, n_var), dtype=Xpar.dtype)
            cross = rng.random(n_matings) < get(crossover.prob, size=n_matings)
            if np.any(cross):
                Q = crossover._do(problem, Xpar, random_state=rng)
                Xp[:, cross] = Q[:, cross]
            for k in np.flatnonzero(~cross):
                Xp[:, k] = np.copy(Xpar[np.arange(2), k])
            Xp = Xp.reshape(-1, n_var)
            # Mutation.do: every individual mutated with probability prob
            Xm = mutation._do(problem, Xp, random_state=rng)
            mutated = rng.random(size=len(Xp)) <= get(mutation.prob, size=len(Xp))
            new = np.where(mutated[:, None], Xm, Xp.astype(float))
            new = dedup(fix(new), X, off)
            if len(off) + len(new) > pop_size:
                new = new[:pop_size - len(off)]
            off = np.vstack([off, new])
            rounds += 1
            if rounds >= MAX_ROUNDS:
                break
        if len(off) == 0:     # pymoo forces termination when no new offspring can be made
            break
        F_off = evaluate(off)
        evaluations += len(off)
        X, F = np.vstack([X, off]), np.vstack([F, F_off])
        order, rank, crowding = _survival(F, pop_size, rng, nds, crowding_fn)
        X, F, rank, crowding = X[order], F[order], rank[order], crowding[order]
        record(generation, evaluations, F, F[rank == 0])
    front = rank == 0
    return X[front], F[front]
