"""NSGA-II over hybrid partitions with pymoo (Savva's thesis §4.2, §5.1).

The thesis ran pymoo 0.5.0's NSGA-II, population 1000, 100 generations, minimising the analytical
model's (max energy per device, max memory per device, latency). pymoo is a dependency; this
module only supplies the pieces the chromosomes need: a vectorised pymoo ``Problem`` whose
fitness is :class:`~hetsim_papers.nsga2.fitness.ThesisModel`, integer operators, the chromosomes'
repair, and a per-generation log. The thesis never names its operators (docs/papers/nsga2.md); its pymoo
0.5.0 integer recipe differs from 0.6's in ways that move results, so both are here:

* ``operators="pymoo-0.5"`` (default, the reproduction): 0.5's ``int_random`` sampling,
  ``int_sbx`` (SBX, eta 30, crossover probability 0.9, each variable with probability 0.5) and
  ``int_pm`` (polynomial mutation, eta 20, every individual, each gene with probability 1/n), both
  on bounds widened by +-0.5 and rounded after (0.5's ``IntegerFromFloat`` operators);
* ``operators="pymoo-0.6"``: 0.6's documented integer recipe: ``IntegerRandomSampling``,
  ``SBX(eta=15)`` and ``PM(eta=20)`` with ``RoundingRepair`` (PM mutates an individual with
  probability 0.9, then each gene with min(0.5, 1/n)), on the plain bounds.

Duplicate elimination is on (pymoo's default). The loop is pymoo's own ``NSGA2``; at the thesis's
scale (1000 individuals, 100 generations) its default pieces cost more than the fitness (most of
it in ``Population.get``/``set`` and ``Individual`` attribute tests), so these are replaced
through pymoo's extension points by equivalents that give the same generations draw for draw
(``plain=True`` runs pymoo's defaults; the tests compare the two):

* duplicates: :class:`GenomeDuplicates`, a set of genome bytes instead of
  ``DefaultDuplicateElimination``'s pairwise distances (genomes are integers, so a distance of
  zero is equality);
* the binary tournament: :func:`binary_tournament`, pymoo's ``comp_by_dom_and_crowding`` with the
  dominance test on arrays (the random picks of ties drawn in the same order);
* the mating: :class:`ArrayMating`, pymoo's selection-crossover-mutation-repair-duplicates rounds
  on arrays (the operators' own array methods, the same draws), individuals made for the
  offspring kept only;
* the survival: :class:`ArrayRankAndCrowding`, pymoo's sorting and crowding on the objectives as
  an array;
* the generations: :class:`ThesisNSGA2` keeps the population as arrays (genomes, objectives,
  ranks, crowding distances) and runs pymoo's ``next``/``advance`` steps on them, so that no
  pymoo individual is made past the initial population until the end;
* the fitness: :class:`FitnessProblem` evaluates a whole population in one vectorised call and
  remembers the objectives of the genomes it has seen (a genome evaluated once is not evaluated
  again; the model's rows do not depend on the batch, tested).

The log has one row per generation, generation 0
being the random initial population: the population's minimum of each objective (the thesis's
convergence plots; what they show: docs/papers/nsga2.md) and the hypervolume of the non-dominated set, normalised by a
reference point fixed at the start (1.1 x the initial population's worst of each objective, or
``hv_ref``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.callback import Callback
from pymoo.core.duplicate import DuplicateElimination, NoDuplicateElimination
from pymoo.core.mating import Mating
from pymoo.core.population import Population
from pymoo.core.problem import Problem as PymooProblem
from pymoo.core.repair import Repair
from pymoo.core.variable import get
from pymoo.indicators.hv import HV
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.operators.sampling.rnd import IntegerRandomSampling
from pymoo.operators.selection.tournament import TournamentSelection
from pymoo.operators.survival.rank_and_crowding import RankAndCrowding
from pymoo.optimize import minimize
from pymoo.util.misc import random_permutations
from pymoo.util.randomized_argsort import randomized_argsort

from hetsim.errors import HetsimError
from hetsim_papers.nsga2.encoding import Chromosome
from hetsim_papers.nsga2.fitness import OBJECTIVES, ThesisModel

OPERATORS = ("pymoo-0.5", "pymoo-0.6")


#: The fitness cache's limit, in bytes of genome keys: past it, new genomes are evaluated and not
#: remembered (the naive chromosome of DenseNet-121 has 668 genes; its runs rarely repeat a genome).
CACHE_BYTES = 256 * 2 ** 20


def genome_keys(X) -> list[bytes]:
    """One hashable key per row of X: its genes' bytes as int64 (the genes are integers; pymoo's
    operators hand them over as floats)."""
    A = np.ascontiguousarray(np.atleast_2d(np.rint(np.asarray(X, dtype=float)).astype(np.int64)))
    return [row.tobytes() for row in A] if A.size else []


class FitnessProblem(PymooProblem):
    """A chromosome over the analytical model, as pymoo sees it (integer genes, 3 objectives),
    evaluated a population at a time; with ``cache``, each genome's objectives are remembered
    (up to :data:`CACHE_BYTES`) and a genome seen before is not evaluated again."""

    def __init__(self, chromosome: Chromosome, model: ThesisModel, cache: bool = True):
        super().__init__(n_var=chromosome.n_var, n_obj=3, xl=chromosome.xl.astype(float),
                         xu=chromosome.xu.astype(float), vtype=int)
        self.chromosome, self.model = chromosome, model
        self.evaluations = 0        # genomes pymoo asked for (the log's count)
        self.model_evaluations = 0  # genomes the model evaluated (the cache's misses)
        self.cache: dict[bytes, np.ndarray] | None = {} if cache else None
        self._cache_bytes = 0

    def _fitness(self, genomes: np.ndarray) -> np.ndarray:
        self.model_evaluations += len(genomes)
        return np.asarray(self.model.evaluate(self.chromosome.columns(genomes)).F, dtype=float)

    def _evaluate(self, X, out, *args, **kwargs):
        genomes = np.rint(X).astype(np.int64)
        self.evaluations += len(genomes)
        if self.cache is None:
            out["F"] = self._fitness(genomes)
            return
        keys, cache = genome_keys(genomes), self.cache
        new = [k for k in dict.fromkeys(keys) if k not in cache]
        fresh: dict[bytes, np.ndarray] = {}
        if new:
            first = {k: i for i, k in reversed(list(enumerate(keys)))}
            fresh = dict(zip(new, self._fitness(genomes[[first[k] for k in new]]), strict=True))
            for k, f in fresh.items():
                if self._cache_bytes + len(k) > CACHE_BYTES:
                    break
                cache[k] = f
                self._cache_bytes += len(k)
        out["F"] = np.array([cache[k] if k in cache else fresh[k] for k in keys])


class GenomeDuplicates(DuplicateElimination):
    """pymoo's ``DefaultDuplicateElimination`` for integer genomes, by hashing: an individual is a
    duplicate of an earlier one of its population (the first kept) or of any of ``other``'s,
    when their genes are equal (the default's distance <= 1e-16 between integer vectors)."""

    def _do(self, pop, other, is_duplicate):
        keys = genome_keys(np.array([ind.X for ind in pop]))
        if other is None:
            seen: set[bytes] = set()
            for i, k in enumerate(keys):
                if k in seen:
                    is_duplicate[i] = True
                else:
                    seen.add(k)
        else:
            seen = set(genome_keys(np.array([ind.X for ind in other])))
            for i, k in enumerate(keys):
                if k in seen:
                    is_duplicate[i] = True
        return is_duplicate


def binary_tournament(pop, P, algorithm, **kwargs):
    """pymoo's NSGA-II ``binary_tournament`` (``comp_by_dom_and_crowding``) with the dominance
    test on arrays: the pair's dominating individual, else the larger crowding distance, else a
    random pick of the two (drawn from the algorithm's generator in pair order, as pymoo's loop
    draws). A population with a violated constraint goes to pymoo's own function."""
    from pymoo.algorithms.moo.nsga2 import binary_tournament as pymoo_binary_tournament

    if P.shape[1] != 2 or algorithm.tournament_type != "comp_by_dom_and_crowding":
        return pymoo_binary_tournament(pop, P, algorithm, **kwargs)
    CV = np.array([ind.CV[0] for ind in pop])
    if np.any(CV > 0.0):
        return pymoo_binary_tournament(pop, P, algorithm, **kwargs)
    F = np.array([ind.F for ind in pop])
    crowding = np.array([ind.get("crowding") for ind in pop], dtype=float)
    return _tournament(F, crowding, P, algorithm.random_state)


def _tournament(F: np.ndarray, crowding: np.ndarray, P: np.ndarray, rng) -> np.ndarray:
    """:func:`binary_tournament` of feasible individuals on their objectives and crowding distances."""
    a, b = P[:, 0], P[:, 1]
    a_better = (F[a] < F[b]).any(axis=1)
    b_better = (F[b] < F[a]).any(axis=1)
    S = np.where(a_better & ~b_better, a, np.where(b_better & ~a_better, b, -1))
    ties = np.flatnonzero(S < 0)
    if ties.size:
        at, bt = a[ties], b[ties]
        ca, cb = crowding[at], crowding[bt]
        pick = np.where(ca > cb, at, np.where(ca < cb, bt, -1))
        equal = np.flatnonzero(pick < 0)
        if equal.size:
            # pymoo draws rng.choice([a, b]) per equal pair, in pair order: the same draws as one
            # rng.integers(0, 2, size) (tested)
            first = rng.integers(0, 2, size=equal.size) == 0
            pick[equal] = np.where(first, at[equal], bt[equal])
        S[ties] = pick
    return S[:, None].astype(int, copy=False)


class ChromosomeRepair(Repair):
    """The chromosome's repair (advanced and split-point: row 1 covers every layer), on the
    rounded genes of every new individual (pymoo 0.6 hands a repair the genes as an array; 0.5
    handed it a Population)."""

    def __init__(self, chromosome: Chromosome):
        super().__init__()
        self.chromosome = chromosome

    def _do(self, problem, X, **kwargs):
        return self.chromosome.repair(np.rint(X).astype(np.int64))


class ArrayMating(Mating):
    """pymoo's ``Mating`` (tournament, crossover, mutation, repair and duplicate elimination,
    repeated until there are enough offspring) on the genomes as arrays: the same calls of the
    operators' array methods (``_do``) with the same draws in the same order as pymoo's
    ``InfillCriterion.do`` and the ``do`` methods of its operators, and the population's genes,
    objectives and crowding distances read once per generation instead of once per round; pymoo
    individuals are made only for the offspring kept. Only :func:`run_nsga2`'s pieces (a binary
    :func:`binary_tournament`, a 2-parent 2-offspring crossover, :class:`ChromosomeRepair`,
    :class:`GenomeDuplicates`); a population with a violated constraint goes to pymoo's loop."""

    def do(self, problem, pop, n_offsprings, random_state=None, n_max_iterations=None, algorithm=None,
           **kwargs):
        if (not (isinstance(self.eliminate_duplicates, GenomeDuplicates)
                 or type(self.eliminate_duplicates) is NoDuplicateElimination)
                or self.crossover.n_offsprings != self.crossover.n_parents or len(pop) == 0
                or np.any(np.array([ind.CV[0] for ind in pop]) > 0.0)):
            return super().do(problem, pop, n_offsprings, random_state=random_state,
                              n_max_iterations=n_max_iterations, algorithm=algorithm, **kwargs)
        X = self.genomes(problem, np.array([ind.X for ind in pop]), np.array([ind.F for ind in pop]),
                         np.array([ind.get("crowding") for ind in pop], dtype=float), n_offsprings,
                         random_state, n_max_iterations, algorithm, **kwargs)
        return _offspring(X) if len(X) else Population.create()

    def genomes(self, problem, X_pop: np.ndarray, F: np.ndarray, crowding: np.ndarray, n_offsprings: int,
                random_state, n_max_iterations=None, algorithm=None, **kwargs) -> np.ndarray:
        """The offspring's genomes (rows) of a feasible population given by its genomes,
        objectives and crowding distances: :meth:`do` without individuals."""
        if n_max_iterations is None:
            n_max_iterations = self.n_max_iterations
        dedup = isinstance(self.eliminate_duplicates, GenomeDuplicates)
        kwargs["algorithm"] = algorithm
        # the population's genomes, then each kept offspring's (without duplicate elimination: none)
        seen = set(genome_keys(X_pop)) if dedup else set()
        kept: list[np.ndarray] = []
        n_kept, n_infills = 0, 0
        while n_kept < n_offsprings:
            n_matings = math.ceil((n_offsprings - n_kept) / self.crossover.n_offsprings)
            parents = self._select(len(X_pop), n_matings, F, crowding, random_state)
            X = self._cross(problem, np.swapaxes(X_pop[parents], 0, 1), random_state, kwargs)
            X = self._mutate(problem, X, random_state, kwargs)
            X = self.repair._do(problem, X if self.repair.vtype is None else X.astype(self.repair.vtype), **kwargs)
            if dedup:
                keep = []
                for i, key in enumerate(genome_keys(X)):
                    if key not in seen:
                        seen.add(key)
                        keep.append(i)
                        if n_kept + len(keep) == n_offsprings:   # pymoo truncates the round's surplus
                            break
            else:
                keep = list(range(min(len(X), n_offsprings - n_kept)))
            if keep:
                kept.append(X[keep])
                n_kept += len(keep)
            n_infills += 1
            if n_infills >= n_max_iterations:
                break
        if not kept:
            return np.empty((0, X_pop.shape[1]), dtype=X_pop.dtype)
        return np.concatenate(kept)

    def _select(self, n_pop: int, n_matings: int, F, crowding, random_state) -> np.ndarray:
        """``TournamentSelection._do``: parents (n_matings, 2) by binary tournaments."""
        n_parents, pressure = self.crossover.n_parents, self.selection.pressure
        n_random = n_matings * n_parents * pressure
        P = random_permutations(math.ceil(n_random / n_pop), n_pop, random_state=random_state)[:n_random]
        S = _tournament(F, crowding, np.reshape(P, (n_matings * n_parents, pressure)), random_state)
        return np.reshape(S, (n_matings, n_parents))

    def _cross(self, problem, X: np.ndarray, random_state, kwargs) -> np.ndarray:
        """``Crossover.do`` with ``Operator.__call__``'s type and repair, offspring as rows."""
        c = self.crossover
        if c.vtype is not None:
            X = X.astype(c.vtype)
        n_matings = X.shape[1]
        Xp = np.empty(shape=(c.n_offsprings, n_matings, problem.n_var), dtype=X.dtype)
        cross = random_state.random(n_matings) < get(c.prob, size=n_matings)
        if np.any(cross):
            Q = c._do(problem, X, random_state=random_state, **kwargs)
            Xp[:, cross] = Q[:, cross]
        Xp[:, ~cross] = X[:, ~cross]          # as many offspring as parents: the parents, in order
        Xp = Xp.reshape(-1, X.shape[-1])
        if c.vtype is not None:
            Xp = Xp.astype(c.vtype)
        if c.repair is not None:
            Xp = c.repair._do(problem, Xp if c.repair.vtype is None else Xp.astype(c.repair.vtype))
        return Xp

    def _mutate(self, problem, X: np.ndarray, random_state, kwargs) -> np.ndarray:
        """``Mutation.do`` with ``Operator.__call__``'s type and repair."""
        m = self.mutation
        Xm = m._do(problem, X, random_state=random_state, **kwargs)
        mut = random_state.random(size=len(X)) <= get(m.prob, size=len(X))
        # a row keeps its own dtype in pymoo; the next step reads them as np.array(rows) would
        X = Xm if mut.all() else X if not mut.any() else np.where(mut[:, None], Xm, X)
        if m.vtype is not None:
            X = X.astype(m.vtype)
        if m.repair is not None:
            X = m.repair._do(problem, X if m.repair.vtype is None else X.astype(m.repair.vtype))
        return X


def _set_rows(pop, key: str, values) -> None:
    """``Population.set(key, values)`` for an array of one row per individual (each individual
    gets its own copy of its row, as pymoo's does)."""
    if len(values) != len(pop):
        raise ValueError(f"{key}: {len(values)} rows for {len(pop)} individuals")
    attribute = hasattr(pop[0], key)     # F, G, H are Individual's properties; others go to data
    for ind, row in zip(pop, values, strict=True):
        if isinstance(row, np.ndarray) and not row.flags["OWNDATA"]:
            row = row.copy()
        if attribute:
            setattr(ind, key, row)
        else:
            ind.data[key] = row


def _offspring(X: np.ndarray):
    """``Population.new("X", X)``."""
    pop = Population.empty(len(X))
    _set_rows(pop, "X", X)
    return pop


class ArrayRankAndCrowding(RankAndCrowding):
    """pymoo's ``RankAndCrowding`` (NSGA-II's survival) on the objectives as an array
    (:meth:`survivors`), the ranks and crowding distances written to the individuals directly:
    the same sorting, crowding function and draws."""

    def _do(self, problem, pop, *args, random_state=None, n_survive=None, **kwargs):
        F = np.array([ind.F for ind in pop]).astype(float, copy=False)
        survivors, rank, crowding = self.survivors(F, n_survive, random_state)
        for i, k, cd in zip(survivors, rank, crowding, strict=True):
            data = pop[i].data       # Individual.set of a key that is no attribute
            data["rank"] = k
            data["crowding"] = cd
        return pop[survivors]

    def survivors(self, F: np.ndarray, n_survive: int, random_state) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``_do`` on arrays: the survivors' indices into F (in pymoo's order), their ranks and
        their crowding distances."""
        survivors: list[np.ndarray] = []
        ranks: list[np.ndarray] = []
        crowdings: list[np.ndarray] = []
        n = 0
        fronts = self.nds.do(F, n_stop_if_ranked=n_survive)
        for k, front in enumerate(fronts):
            if n + len(front) > n_survive:
                n_remove = n + len(front) - n_survive
                crowding_of_front = self.crowding_func.do(F[front, :], n_remove=n_remove)
                I = randomized_argsort(crowding_of_front, order="descending", method="numpy",  # noqa: E741
                                       random_state=random_state)[:-n_remove]
            else:
                crowding_of_front = self.crowding_func.do(F[front, :], n_remove=0)
                I = np.arange(len(front))  # noqa: E741  (pymoo's names)
            survivors.append(np.asarray(front)[I])
            ranks.append(np.full(len(I), k))
            crowdings.append(np.asarray(crowding_of_front, dtype=float)[I])
            n += len(I)
        if not survivors:
            return np.empty(0, dtype=int), np.empty(0, dtype=int), np.empty(0)
        return np.concatenate(survivors), np.concatenate(ranks), np.concatenate(crowdings)


class ThesisNSGA2(NSGA2):
    """pymoo's ``NSGA2`` with its generations on arrays: the population is its genomes ``X``,
    objectives ``F``, ranks and crowding distances, and each generation is pymoo's
    (``Algorithm.next``/``advance``, ``GeneticAlgorithm._infill``/``_advance``) with the same
    pieces called in the same order with the same draws (:class:`ArrayMating`'s genomes, the
    problem's ``evaluate``, :class:`ArrayRankAndCrowding`'s survivors, the first front as the
    optimum); pymoo individuals are made for the initial population (pymoo's ``Initialization``)
    and once at the end (``pop`` and ``opt`` for ``result()``). Only for :func:`run_nsga2`'s
    pieces on a problem without constraints (its fitness has none); the tests compare the
    generations with pymoo's own loop."""

    X: np.ndarray
    F: np.ndarray
    rank: np.ndarray
    crowding: np.ndarray
    is_initialized: bool

    def _setup(self, problem, **kwargs):
        super()._setup(problem, **kwargs)
        if problem.n_ieq_constr or problem.n_eq_constr:
            raise HetsimError("ThesisNSGA2: the array generations assume a problem without constraints")
        if not (isinstance(self.mating, ArrayMating) and isinstance(self.survival, ArrayRankAndCrowding)):
            raise HetsimError("ThesisNSGA2: needs ArrayMating and ArrayRankAndCrowding")

    def next(self) -> None:
        if not self.is_initialized:
            self._initialize()
            pop = self._initialize_infill()        # sampling, repair, duplicates: pymoo's
            X = np.array([ind.X for ind in pop])
            self.n_iter = 1
            # advance_after_initial_infill (NSGA2): the initial population ranked and crowded
            self._survive(X, self._evaluate(X), len(X))
            self.is_initialized = True
            self._post_advance()
        else:
            X_off = self.mating.genomes(self.problem, self.X, self.F, self.crowding, self.n_offsprings,
                                        random_state=self.random_state, algorithm=self)
            if len(X_off) == 0:                    # GeneticAlgorithm._infill: no offspring, stop
                self.termination.force_termination = True
                self._survive(self.X, self.F, self.pop_size)
            else:
                F_off = self._evaluate(X_off)
                self._survive(np.concatenate([self.X, X_off]), np.concatenate([self.F, F_off]), self.pop_size)
            self._post_advance()
        if self.termination.has_terminated():
            self.finalize()

    def _evaluate(self, X: np.ndarray) -> np.ndarray:
        """``Evaluator.eval`` of new individuals: the problem's objectives, counted."""
        F = self.problem.evaluate(X, return_values_of=["F"], return_as_dictionary=True, algorithm=self)["F"]
        self.evaluator.n_eval += len(X)
        return np.asarray(F, dtype=float)

    def _survive(self, X: np.ndarray, F: np.ndarray, n_survive: int) -> None:
        """``Survival.do`` (no constraints) of the population (X, F)."""
        survivors, self.rank, self.crowding = self.survival.survivors(F, min(n_survive, len(F)), self.random_state)
        self.X, self.F = X[survivors], F[survivors]

    def _set_optimum(self, **kwargs):
        """NSGA2's: the first front, in population order (every individual is feasible)."""
        self.front = np.flatnonzero(self.rank == 0)

    def _finalize(self):
        """The population and the optimum as pymoo individuals, for ``result()``."""
        pop = Population.empty(len(self.X))
        for ind, x, f, k, cd in zip(pop, self.X, self.F, self.rank, self.crowding, strict=True):
            ind.X, ind.F = x.copy(), f.copy()
            ind.evaluated.update(("F", "G", "H"))
            ind.data["rank"], ind.data["crowding"] = k, cd
        self.pop, self.opt = pop, pop[self.front]
        super()._finalize()


class _Widened:
    """The bounds pymoo 0.5's integer operators worked on: +-(0.5 - 1e-16) around the integers,
    so that rounding gives every integer of the range an equal width."""

    def __init__(self, problem):
        self.n_var = problem.n_var
        self.xl = problem.xl - (0.5 - 1e-16)
        self.xu = problem.xu + (0.5 - 1e-16)

    def bounds(self):
        return self.xl, self.xu

    def has_bounds(self) -> bool:
        return True


class IntSBX05(SBX):
    """pymoo 0.5's ``int_sbx``: SBX (eta 30, probability 0.9, each variable 0.5) on widened
    bounds, then rounded."""

    def __init__(self):
        super().__init__(prob=0.9, eta=30, prob_var=0.5)

    def _do(self, problem, X, *args, **kwargs):
        return np.rint(super()._do(_Widened(problem), X, *args, **kwargs))


class IntPM05(PM):
    """pymoo 0.5's ``int_pm``: polynomial mutation (eta 20) of every individual, each gene with
    probability 1/n, on widened bounds, then rounded."""

    def __init__(self):
        super().__init__(prob=1.0, eta=20)

    def get_prob_var(self, problem, **kwargs):
        from pymoo.core.variable import get

        return get(1.0 / problem.n_var, **kwargs)

    def _do(self, problem, X, *args, **kwargs):
        return np.rint(super()._do(_Widened(problem), X, *args, **kwargs))


def operators(name: str) -> dict:
    """pymoo's sampling, crossover and mutation of ``pymoo-0.5`` or ``pymoo-0.6`` (module docstring)."""
    if name == "pymoo-0.5":
        return {"sampling": IntegerRandomSampling(), "crossover": IntSBX05(), "mutation": IntPM05()}
    if name == "pymoo-0.6":
        return {"sampling": IntegerRandomSampling(),
                "crossover": SBX(prob=0.9, eta=15, vtype=float, repair=RoundingRepair()),
                "mutation": PM(prob=0.9, eta=20, vtype=float, repair=RoundingRepair())}
    raise HetsimError(f"operators={name!r}; allowed: {', '.join(OPERATORS)}")


class _Log(Callback):
    """Per generation: evaluations, the population's minimum of each objective, the front's size
    and hypervolume (costs nothing next to a generation's evaluations)."""

    def __init__(self, hv_ref: np.ndarray | None):
        super().__init__()
        self.rows: list[dict] = []
        self.hv_ref = None if hv_ref is None else np.asarray(hv_ref, dtype=float)
        self.indicator: HV | None = None
        self.t0 = time.perf_counter()

    def notify(self, algorithm):
        if isinstance(algorithm, ThesisNSGA2):
            F, front = algorithm.F, algorithm.F[algorithm.front]
        else:
            F = np.array([ind.F for ind in algorithm.pop])
            front = np.array([ind.F for ind in algorithm.opt])
        if self.indicator is None:
            ref = self.hv_ref if self.hv_ref is not None else 1.1 * F.max(axis=0)
            self.hv_ref = ref
            # Normalised by the reference point: HV of 1 = the whole box [0, ref].
            self.indicator = HV(ref_point=ref, ideal=np.zeros(3), nadir=ref, zero_to_one=True)
        row = {"generation": algorithm.n_gen - 1, "evaluations": algorithm.evaluator.n_eval,
               "front_size": len(front), "hypervolume": float(self.indicator(front)),
               "seconds": time.perf_counter() - self.t0}
        for j, obj in enumerate(OBJECTIVES):
            row[f"min_{obj}"] = float(F[:, j].min())
        self.rows.append(row)


@dataclass
class SearchResult:
    """A finished NSGA-II run: the final non-dominated set and the per-generation log."""

    X: np.ndarray                  # genomes of the final Pareto set
    F: np.ndarray                  # their objectives (energy J, memory MiB, latency s)
    generations: pd.DataFrame      # one row per generation (0 = the initial population)
    evaluations: int
    seconds: float
    hv_ref: np.ndarray = field(repr=False)

    def pareto(self) -> pd.DataFrame:
        df = pd.DataFrame(self.F, columns=list(OBJECTIVES))
        df.insert(0, "genome", [" ".join(map(str, x)) for x in self.X.astype(int)])
        return df

    def argmin(self, objective: str) -> int:
        """Index of the Pareto point best in ``objective`` (ties: the best in the others, in order)."""
        j = OBJECTIVES.index(objective)
        keys = [self.F[:, k] for k in reversed([j] + [k for k in range(3) if k != j])]
        return int(np.lexsort(keys)[0])


#: Largest pop_size and n_gen (a million offspring per generation is far past the thesis's 1000).
MAX_POP_GEN = 10 ** 6
#: Largest pop_size x (n_gen + 1): a thousand times the thesis's search (hours of fitness evaluations).
MAX_EVALUATIONS = 10 ** 8


def run_nsga2(chromosome: Chromosome, model: ThesisModel, pop_size: int = 1000, n_gen: int = 100,
              operator_set: str = "pymoo-0.5", seed: int = 0, hv_ref=None,
              eliminate_duplicates: bool = True, plain: bool = False) -> SearchResult:
    """NSGA-II (pymoo) over ``chromosome`` with ``model`` as the fitness: an initial random
    population, then ``n_gen`` generations of ``pop_size`` offspring. ``plain=True`` runs pymoo's
    default duplicate elimination and tournament without the fitness cache (module docstring):
    the same result for the same seed, slower."""
    for key, value in (("pop_size", pop_size), ("n_gen", n_gen)):
        # up to a million: pymoo allocates pop_size rows (2^63 overflows numpy's dimensions)
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= value <= MAX_POP_GEN:
            raise HetsimError(f"NSGA-II: {key}={value!r} must be an integer in [1, {MAX_POP_GEN}]")
    evaluations = int(pop_size) * (int(n_gen) + 1)
    if evaluations > MAX_EVALUATIONS:   # counted before it starts, like a design space
        raise HetsimError(f"NSGA-II: pop_size={pop_size} x (n_gen={n_gen} + 1) = {evaluations:,} evaluations, past "
                          f"the limit of {MAX_EVALUATIONS:,} (the thesis runs 1000 x 101); give a smaller "
                          f"pop_size or n_gen")
    problem = FitnessProblem(chromosome, model, cache=not plain)
    repair = ChromosomeRepair(chromosome)
    dedup = (GenomeDuplicates() if eliminate_duplicates and not plain else eliminate_duplicates)
    pieces = operators(operator_set)
    fast = {}
    if not plain:
        fast["selection"] = TournamentSelection(func_comp=binary_tournament)
        fast["survival"] = ArrayRankAndCrowding()
        fast["mating"] = ArrayMating(fast["selection"], pieces["crossover"], pieces["mutation"], repair=repair,
                                     eliminate_duplicates=GenomeDuplicates() if eliminate_duplicates
                                     else NoDuplicateElimination(), n_max_iterations=100)
    algorithm = (NSGA2 if plain else ThesisNSGA2)(pop_size=int(pop_size), repair=repair, eliminate_duplicates=dedup,
                                                  **fast, **pieces)
    log = _Log(hv_ref)
    t0 = time.perf_counter()
    # copy_algorithm=False: the algorithm is made here for this run (pymoo's deep copy would copy
    # the model's tables)
    res = minimize(problem, algorithm, ("n_gen", int(n_gen) + 1), seed=int(seed), callback=log, verbose=False,
                   copy_algorithm=False)
    seconds = time.perf_counter() - t0
    X = np.atleast_2d(res.X).astype(np.int64)
    F = np.atleast_2d(res.F)
    return SearchResult(X, F, pd.DataFrame(log.rows), problem.evaluations, seconds,
                        np.asarray(log.hv_ref))
