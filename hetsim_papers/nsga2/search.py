"""NSGA-II over hybrid partitions with pymoo (Savva's thesis §4.2, §5.1).

The thesis ran pymoo 0.5.0's NSGA-II, population 1000, 100 generations, minimising the analytical
model's (max energy per device, max memory per device, latency). pymoo is a dependency; this
module only supplies the pieces the chromosomes need: a vectorised pymoo ``Problem`` whose
fitness is :class:`~hetsim_papers.nsga2.fitness.ThesisModel`, integer operators, the chromosomes'
repair, and a per-generation log. The thesis never names its operators (digest §7.3); its pymoo
0.5.0 integer recipe differs from 0.6's in ways that move results, so both are here:

* ``operators="pymoo-0.5"`` (default, the reproduction): 0.5's ``int_random`` sampling,
  ``int_sbx`` (SBX, eta 30, crossover probability 0.9, each variable with probability 0.5) and
  ``int_pm`` (polynomial mutation, eta 20, every individual, each gene with probability 1/n), both
  on bounds widened by +-0.5 and rounded after (0.5's ``IntegerFromFloat`` operators);
* ``operators="pymoo-0.6"``: 0.6's documented integer recipe: ``IntegerRandomSampling``,
  ``SBX(eta=15)`` and ``PM(eta=20)`` with ``RoundingRepair`` (PM mutates an individual with
  probability 0.9, then each gene with min(0.5, 1/n)), on the plain bounds.

Duplicate elimination is on (pymoo's default). The log has one row per generation, generation 0
being the random initial population: the population's minimum of each objective (the thesis's
convergence plots, digest §14) and the hypervolume of the non-dominated set, normalised by a
reference point fixed at the start (1.1 x the initial population's worst of each objective, or
``hv_ref``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.callback import Callback
from pymoo.core.problem import Problem as PymooProblem
from pymoo.core.repair import Repair
from pymoo.indicators.hv import HV
from pymoo.operators.crossover.sbx import SBX
from pymoo.operators.mutation.pm import PM
from pymoo.operators.repair.rounding import RoundingRepair
from pymoo.operators.sampling.rnd import IntegerRandomSampling
from pymoo.optimize import minimize

from hetsim.errors import HetsimError
from hetsim_papers.nsga2.encoding import Chromosome
from hetsim_papers.nsga2.fitness import OBJECTIVES, ThesisModel

OPERATORS = ("pymoo-0.5", "pymoo-0.6")


class FitnessProblem(PymooProblem):
    """A chromosome over the analytical model, as pymoo sees it (integer genes, 3 objectives)."""

    def __init__(self, chromosome: Chromosome, model: ThesisModel):
        super().__init__(n_var=chromosome.n_var, n_obj=3, xl=chromosome.xl.astype(float),
                         xu=chromosome.xu.astype(float), vtype=int)
        self.chromosome, self.model = chromosome, model
        self.evaluations = 0

    def _evaluate(self, X, out, *args, **kwargs):
        genomes = np.rint(X).astype(np.int64)
        out["F"] = self.model.evaluate(self.chromosome.decode(genomes)).F
        self.evaluations += len(genomes)


class ChromosomeRepair(Repair):
    """The chromosome's repair (advanced and split-point: row 1 covers every layer), on the
    rounded genes of every new individual (pymoo 0.6 hands a repair the genes as an array; 0.5
    handed it a Population)."""

    def __init__(self, chromosome: Chromosome):
        super().__init__()
        self.chromosome = chromosome

    def _do(self, problem, X, **kwargs):
        return self.chromosome.repair(np.rint(X).astype(np.int64))


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
        self.record(algorithm.n_gen - 1, algorithm.evaluator.n_eval, algorithm.pop.get("F"),
                    algorithm.opt.get("F"))

    def record(self, generation: int, evaluations: int, F: np.ndarray, front: np.ndarray) -> None:
        """One generation's row: ``F`` the population's objectives, ``front`` its first front's."""
        if self.indicator is None:
            ref = self.hv_ref if self.hv_ref is not None else 1.1 * F.max(axis=0)
            self.hv_ref = ref
            # Normalised by the reference point: HV of 1 = the whole box [0, ref].
            self.indicator = HV(ref_point=ref, ideal=np.zeros(3), nadir=ref, zero_to_one=True)
        row = {"generation": generation, "evaluations": evaluations,
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


#: How the generations are run: pymoo's NSGA-II on arrays (the same draws and results, several
#: times faster: :mod:`~hetsim_papers.nsga2.array_nsga2`), or pymoo's own objects.
ENGINES = ("arrays", "pymoo")


def run_nsga2(chromosome: Chromosome, model: ThesisModel, pop_size: int = 1000, n_gen: int = 100,
              operator_set: str = "pymoo-0.5", seed: int = 0, hv_ref=None,
              eliminate_duplicates: bool = True, engine: str = "arrays") -> SearchResult:
    """NSGA-II (pymoo) over ``chromosome`` with ``model`` as the fitness: an initial random
    population, then ``n_gen`` generations of ``pop_size`` offspring. ``engine="arrays"`` runs
    pymoo 0.6.2's loop on arrays (pymoo 0.5's operators only; pymoo's own objects otherwise),
    ``"pymoo"`` pymoo itself: both give the same result for the same seed."""
    for key, value in (("pop_size", pop_size), ("n_gen", n_gen)):
        # up to a million: pymoo allocates pop_size rows (2^63 overflows numpy's dimensions)
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 1 <= value <= MAX_POP_GEN:
            raise HetsimError(f"NSGA-II: {key}={value!r} must be an integer in [1, {MAX_POP_GEN}]")
    evaluations = int(pop_size) * (int(n_gen) + 1)
    if evaluations > MAX_EVALUATIONS:   # counted before it starts, like a design space
        raise HetsimError(f"NSGA-II: pop_size={pop_size} x (n_gen={n_gen} + 1) = {evaluations:,} evaluations, past "
                          f"the limit of {MAX_EVALUATIONS:,} (the thesis runs 1000 x 101); give a smaller "
                          f"pop_size or n_gen")
    if engine not in ENGINES:
        raise HetsimError(f"NSGA-II: engine={engine!r}; allowed: {', '.join(ENGINES)}")
    problem = FitnessProblem(chromosome, model)
    log = _Log(hv_ref)
    t0 = time.perf_counter()
    if engine == "arrays" and operator_set == "pymoo-0.5" and _ARRAYS_MATCH_PYMOO:
        from hetsim_papers.nsga2.array_nsga2 import nsga2_arrays

        def evaluate(genomes: np.ndarray) -> np.ndarray:
            problem.evaluations += len(genomes)
            return np.asarray(model.evaluate(chromosome.decode(genomes)).F, dtype=float)

        X, F = nsga2_arrays(problem, chromosome.repair, evaluate, operators(operator_set), int(pop_size),
                            int(n_gen), int(seed), log.record, eliminate_duplicates)
    else:
        algorithm = NSGA2(pop_size=int(pop_size), repair=ChromosomeRepair(chromosome),
                          eliminate_duplicates=eliminate_duplicates, **operators(operator_set))
        res = minimize(problem, algorithm, ("n_gen", int(n_gen) + 1), seed=int(seed), callback=log,
                       verbose=False)
        X, F = res.X, res.F
    seconds = time.perf_counter() - t0
    X = np.atleast_2d(X).astype(np.int64)
    F = np.atleast_2d(F)
    return SearchResult(X, F, pd.DataFrame(log.rows), problem.evaluations, seconds,
                        np.asarray(log.hv_ref))


def _pymoo_version() -> tuple[int, ...]:
    import pymoo

    return tuple(int(p) for p in pymoo.__version__.split(".")[:3] if p.isdigit())


#: The array engine reproduces pymoo 0.6.2's loop (its random generator passed to every operator,
#: 0.6.2's order of draws); with another pymoo the objects run.
_ARRAYS_MATCH_PYMOO = _pymoo_version()[:2] == (0, 6) and _pymoo_version() >= (0, 6, 2)
