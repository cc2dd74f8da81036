"""pymoo's NSGA-II over pipeline mappings and DAG placements, and Pareto fronts of any search.

:class:`NSGA2Pipeline` (registered as ``NSGA-II-pipe``) runs pymoo's NSGA-II (Deb et al. 2002)
over the pipeline design space of a :class:`~hetsim.exploration.problem.PipelineProblem`, on the
objectives the problem measures (``objective`` and ``track``)::

    problem = PipelineProblem("rk3588", "resnet50", eps=["npu", "gpu", "big", "little"],
                              objective="throughput", track=["energy"])
    result = explore(problem, NSGA2Pipeline(pop_size=24, n_gen=15), seed=0)
    pareto_front(result)        # mapping, throughput_fps, energy_J: the non-dominated trials

Encoding (random keys, Bean 1994; [choice] the papers have no GA for pipelines): one real gene in
[0, 1) picks the depth among the problem's depths, ``max depth - 1`` genes give the cut points
(the first ``depth - 1`` of them, sorted, scaled to layer boundaries and made distinct), and one
gene per candidate EP orders the EPs (the first ``depth`` EPs by key run the stages; a problem
whose assignment is a rule or a list of allowed orders takes the order the first EP gene picks).
pymoo's default real operators (simulated binary crossover, polynomial mutation) then apply
unchanged. Every evaluation is a trial of the session: measured once, answered from the cache
after, charged on the tuning clock, stopped by the exploration's terminations.

:class:`NSGA2Placement` (``NSGA-II-place``) runs the same NSGA-II over the op -> EP assignments of
a :class:`~hetsim.exploration.placement.PlacementProblem` (one categorical gene per op, the engine
ordering each plan), and :class:`NSGA2Split` (``NSGA-II-split``) adds, for every op μLayer could
split, a second EP and a share of its output channels (:class:`PlacementGenes`)::

    problem = PlacementProblem("hope-he", "synthnet")
    result = explore(problem, NSGA2Split(), MaxTrials(1000), seed=0)
    result.best.splits          # op -> its channel shares on two EPs

:func:`pareto_front` gives the non-dominated trials of *any* exploration (pymoo's
non-dominated sorting over the distinct configurations measured), so a single-objective
algorithm's trials have a front too.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_number
from hetsim.exploration.base import Exploration, Explorer, Session
from hetsim.exploration.placement import OBJECTIVES as PLACEMENT_OBJECTIVES
from hetsim.exploration.placement import PlacementProblem
from hetsim.exploration.problem import PIPELINE_OBJECTIVES, Configuration, PipelineProblem
from hetsim.mapping import Placement


def decode(problem: PipelineProblem, x: Sequence[float]) -> Configuration:
    """The configuration a gene vector stands for (module docstring)."""
    depths = problem.depths
    max_depth = max(depths)
    M = problem.num_layers
    d = depths[min(int(x[0] * len(depths)), len(depths) - 1)]
    # Cut points: d - 1 distinct boundaries in 1..M-1 (boundary b = after layer b).
    fractions = np.sort(np.asarray(x[1:d], dtype=float))
    cuts = [1 + min(int(f * (M - 1)), M - 2) for f in fractions]
    for i in range(1, len(cuts)):            # make them strictly increasing ...
        cuts[i] = max(cuts[i], cuts[i - 1] + 1)
    for i in range(len(cuts) - 1, -1, -1):    # ... and leave room for the stages after them
        cuts[i] = min(cuts[i], M - (len(cuts) - i))
    bounds = [0, *cuts, M]
    split = tuple(int(b - a) for a, b in zip(bounds, bounds[1:], strict=False))
    keys = np.asarray(x[max_depth:], dtype=float)
    if problem.fixed_assignment or getattr(problem, "assignment", "permutations") != "permutations":
        orders = problem.orders(d)
        eps = orders[min(int(keys[0] * len(orders)), len(orders) - 1)]
    else:
        order = np.argsort(keys, kind="stable")
        eps = tuple(problem.eps[int(i)] for i in order[:d])
    return Configuration(split, tuple(eps))


class NSGA2Pipeline(Explorer[PipelineProblem]):
    """pymoo's NSGA-II over pipeline mappings (module docstring).

    Parameters
    ----------
    objectives : list of {"throughput", "latency", "energy", "memory"} or None
        What to optimise at once (None: the problem's objective and tracked objectives; each
        must be measured by the problem).
    pop_size : int, default 40
        Population size.
    n_gen : int, default 30
        Generations (pymoo's termination); the exploration's own terminations apply too.
    """

    def __init__(self, objectives: Sequence[str] | None = None, pop_size: int = 40, n_gen: int = 30):
        self.objectives = objectives
        self.pop_size = pop_size
        self.n_gen = n_gen

    @property
    def name(self) -> str:
        return "NSGA-II-pipe"

    def _objectives(self, problem: PipelineProblem) -> tuple[str, ...]:
        if self.objectives is None:
            return problem.objectives
        return tuple(self.objectives)

    def validate(self, problem: PipelineProblem) -> None:
        owner = type(self).__name__
        check_number(owner, "pop_size", self.pop_size, low=2, integer=True)
        check_number(owner, "n_gen", self.n_gen, low=1, integer=True)
        if isinstance(self.objectives, str) or (self.objectives is not None and not self.objectives):
            raise HetsimError(f"{owner}: objectives={self.objectives!r} must be a non-empty list, e.g. "
                              f"[throughput, energy]")
        for o in self._objectives(problem):
            if o not in problem.objectives:
                raise HetsimError(f"{owner}: objective {o!r} is not measured by the problem (it measures "
                                  f"{', '.join(problem.objectives)}; allowed: {', '.join(PIPELINE_OBJECTIVES)}; "
                                  f"command line: --objective / --pareto)")

    def run(self, session: Session[PipelineProblem]) -> None:
        from pymoo.algorithms.moo.nsga2 import NSGA2
        from pymoo.core.problem import Problem as PymooProblem

        problem = session.problem
        objectives = self._objectives(problem)
        signs = np.array([-1.0 if PIPELINE_OBJECTIVES[o][2] else 1.0 for o in objectives])
        n_var = max(problem.depths) + max(len(problem.eps), 1)

        class _Pipelines(PymooProblem):
            def __init__(self) -> None:
                super().__init__(n_var=n_var, n_obj=len(objectives), xl=0.0, xu=1.0 - 1e-9)

            def _evaluate(self, X, out, *args, **kwargs):
                F = np.empty((len(X), len(objectives)))
                for i, x in enumerate(X):
                    result = session.measure(decode(problem, x), "nsga2")
                    F[i] = signs * [problem.value(result, o) for o in objectives]
                out["F"] = F

        res = _minimize(session, _Pipelines(), NSGA2(pop_size=self.pop_size), self.n_gen)
        if res.X is not None:
            X = np.atleast_2d(res.X)
            session.info["front"] = list(dict.fromkeys(decode(problem, x) for x in X))
        return None


def _minimize(session: Session, pymoo_problem, algorithm, n_gen: int):
    """pymoo's ``minimize`` of ``pymoo_problem`` for ``n_gen`` generations, seeded from the
    session's generator (every evaluation is a trial of the session: its terminations stop it)."""
    from pymoo.optimize import minimize

    # pymoo seeds numpy's global generator: keep the caller's global state as it was.
    state = np.random.get_state()
    try:
        return minimize(pymoo_problem, algorithm, ("n_gen", n_gen),
                        seed=int(session.rng.integers(2**31 - 1)), verbose=False)
    finally:
        np.random.set_state(state)


# -- placements of a DAG -----------------------------------------------------------------------------
#: Population and generations when the encoding reaches at least POP_SIZE x N_GEN placements:
#: 1,000 trials, the tournament's budget.
POP_SIZE, N_GEN = 40, 25


class PlacementGenes:
    """The genes of a :class:`~hetsim.exploration.placement.PlacementProblem`'s candidates.

    One categorical gene per op, ``ep{i}``: its EP among the problem's EPs that can run it. With
    ``shares`` (the fractions of an op's output channels a second EP may take), for every op
    μLayer could split (:func:`~hetsim.exploration.dag.mulayer.can_split`, two or more capable
    EPs) two more: ``to{i}``, the second EP among the op's capable EPs, and ``share{i}``, an
    ordinal index into ``(no split, *shares)``. The op is split when the second EP differs from its
    own and the share is not 0; the second EP then computes the share of the channels (rounded to
    whole channels, at least one per EP, as μLayer) and the op's own EP the rest and the gather.
    The plan's order is left to the engine (a placement without ``order``)."""

    def __init__(self, problem: PlacementProblem, shares: Sequence[float] = ()):
        from hetsim.exploration.dag.mulayer import can_split

        self.problem = problem
        self.shares = tuple(float(f) for f in shares)
        times = problem.op_times()
        self.capable = [tuple(int(j) for j in np.flatnonzero(np.isfinite(row))) for row in times]
        for op, capable in zip(problem.ops, self.capable, strict=True):
            if not capable:
                raise HetsimError(f"{problem.name}: op {op} runs on none of the EPs {', '.join(problem.eps)}")
        ops = problem.workload.ops
        self.split_ops = [i for i, op in enumerate(ops)
                          if self.shares and len(self.capable[i]) >= 2 and can_split(op)]
        self._ep_genes = [f"ep{i}" for i in range(len(self.capable))]
        #: the genes' names, in :meth:`variables`' order
        self.names = self._ep_genes + [g for i in self.split_ops for g in (f"to{i}", f"share{i}")]
        self._decoded: dict[tuple, tuple[Placement, Any]] = {}

    def variables(self) -> dict:
        """pymoo's variables: Choice for the EPs (categories), Integer for the share index."""
        from pymoo.core.variable import Choice, Integer

        genes: dict = {f"ep{i}": Choice(options=list(c)) for i, c in enumerate(self.capable)}
        for i in self.split_ops:
            genes[f"to{i}"] = Choice(options=list(self.capable[i]))
            genes[f"share{i}"] = Integer(bounds=(0, len(self.shares)))
        return genes

    def homogeneous(self) -> list[dict[str, Any]]:
        """One gene dictionary per EP: every op on it where it can run (else on the first EP that
        can), nothing split."""
        out = []
        for e in range(len(self.problem.eps)):
            x: dict[str, Any] = {f"ep{i}": e if e in c else c[0] for i, c in enumerate(self.capable)}
            for i in self.split_ops:
                x[f"to{i}"], x[f"share{i}"] = x[f"ep{i}"], 0
            out.append(x)
        return out

    @property
    def size(self) -> int:
        """Distinct placements the genes reach: per op its capable EPs, per splittable op no split
        or a share on each other capable EP."""
        n = math.prod(len(c) for c in self.capable)
        return n * math.prod(1 + (len(self.capable[i]) - 1) * len(self.shares) for i in self.split_ops)

    def decode(self, x: Mapping[str, Any]) -> Placement:
        """The placement a gene dictionary stands for (class docstring)."""
        problem = self.problem
        eps = [int(x[g]) for g in self._ep_genes]
        splits: dict[str, dict[str, float]] = {}
        for i in self.split_ops:
            k, to = int(x[f"share{i}"]), int(x[f"to{i}"])
            if k == 0 or to == eps[i]:
                continue
            channels = problem.workload.ops[i].out_shape.c
            moved = min(max(round(self.shares[k - 1] * channels), 1), channels - 1) / channels
            splits[problem.ops[i]] = {problem.eps[eps[i]]: 1.0 - moved, problem.eps[to]: moved}
        return problem.placement(eps, splits=splits)

    def decoded(self, x: Mapping[str, Any]) -> tuple[Placement, Any]:
        """:meth:`decode` of ``x`` and the problem's key of it, remembered by the gene values (an
        individual recurs: its duplicate checks, its evaluation, later populations)."""
        values = tuple(map(x.__getitem__, self.names))
        hit = self._decoded.get(values)
        if hit is None:
            placement = self.decode(x)
            hit = self._decoded[values] = (placement, self.problem.key(placement))
        return hit


def _same_placement(genes: PlacementGenes):
    """pymoo's duplicate elimination on what genes stand for: gene dictionaries that decode to one
    placement (a share gene is neutral when the op is not split) are duplicates, so that the
    offspring are new placements, not trials the cache answers."""
    from pymoo.core.duplicate import DuplicateElimination

    def key(x: Mapping[str, Any]):
        return genes.decoded(x)[1]

    class SamePlacement(DuplicateElimination):
        def _do(self, pop, other, is_duplicate):
            seen = {key(ind.X) for ind in other} if other is not None else set()
            for i, ind in enumerate(pop):
                k = key(ind.X)
                if k in seen:
                    is_duplicate[i] = True
                else:
                    seen.add(k)
            return is_duplicate

    return SamePlacement()


def _array_mating(**kwargs):
    """pymoo's ``MixedVariableMating`` with its categorical genes recombined on arrays.

    pymoo crosses and mutates every ``Choice`` variable on its own, through Individual objects:
    with one gene per op that is most of a generation. Here each such gene takes the same
    operators' steps on a column of the parents' genes, drawing the same numbers in the same order
    (uniform crossover, then random-option mutation, as pymoo's ``Crossover.do`` and
    ``Mutation.do`` draw them), so the offspring are pymoo's (tested against it). Other variable
    types, and operators other than those two, go through pymoo's own code."""
    from pymoo.core.crossover import Crossover
    from pymoo.core.individual import Individual
    from pymoo.core.mixed import MixedVariableMating
    from pymoo.core.mutation import Mutation
    from pymoo.core.population import Population
    from pymoo.core.problem import Problem as PymooProblem
    from pymoo.core.variable import Choice, get
    from pymoo.operators.crossover.ux import UX
    from pymoo.operators.mutation.rm import ChoiceRandomMutation

    class ArrayMixedMating(MixedVariableMating):
        def _do(self, problem, pop, n_offsprings, parents=False, random_state=None, **kw):
            variables = problem.vars
            groups: dict[type, list[str]] = {}
            for name, var in variables.items():
                groups.setdefault(type(var), []).append(name)
            recomb: list[tuple[type, list[str]]] = []     # pymoo's order: by type, each Choice alone
            for clazz, names in groups.items():
                recomb += [(clazz, [name]) for name in names] if clazz is Choice else [(clazz, names)]
            if not parents:
                pop = self.selection(problem, pop, math.ceil(n_offsprings / 2), 2, random_state=random_state, **kw)
            n_matings = len(pop)
            columns: dict[str, Any] = {}
            for clazz, names in recomb:
                crossover, mutation = self.crossover[clazz], self.mutation[clazz]
                if clazz is Choice and type(crossover) is UX and type(mutation) is ChoiceRandomMutation:
                    (name,) = names
                    X = np.empty((2, n_matings), dtype=object)
                    X[:] = [[mating[0].X[name] for mating in pop], [mating[1].X[name] for mating in pop]]
                    columns[name] = self._choice(crossover, mutation, variables[name], X, random_state)
                    continue
                # pymoo's own steps for this group (MixedVariableMating._do)
                _parents = [[Individual(X=np.array([parent.X[v] for v in names],
                                                   dtype="O" if clazz is Choice else None))
                             for parent in mating] for mating in pop]
                _problem = PymooProblem(vars={v: variables[v] for v in names},
                                        xl=np.array([getattr(variables[v], "lb", None) for v in names]),
                                        xu=np.array([getattr(variables[v], "ub", None) for v in names]))
                _off = crossover(_problem, _parents, random_state=random_state, **kw)
                _off = mutation(_problem, _off, random_state=random_state, **kw)
                for i, name in enumerate(names):
                    columns[name] = [ind.X[i] for ind in _off]
            order = [name for _, names in recomb for name in names]
            return Population.new(X=[{name: columns[name][k] for name in order} for k in range(n_offsprings)])

        @staticmethod
        def _choice(crossover: Crossover, mutation: Mutation, var, X: np.ndarray, rng) -> np.ndarray:
            """One categorical gene's offspring (2 x matings, flattened as pymoo orders them)."""
            n_matings = X.shape[1]
            cross = rng.random(n_matings) < get(crossover.prob, size=n_matings)
            Xp = X.copy()
            if cross.any():
                swap = cross & (rng.random((n_matings, 1)) < 0.5)[:, 0]     # UX's mask
                Xp[0, swap], Xp[1, swap] = X[1, swap], X[0, swap]
            offspring = Xp.reshape(-1)
            n = len(offspring)
            mutated = offspring.copy()
            where = np.where(rng.random(n) < mutation.get_prob_var(_ONE_VARIABLE, size=n))[0]
            mutated[where] = var.sample(len(where), random_state=rng)
            keep = rng.random(size=n) <= get(mutation.prob, size=n)
            offspring[keep] = mutated[keep]
            return offspring

    return ArrayMixedMating(**kwargs)


_ONE_VARIABLE = SimpleNamespace(n_var=1)   # the one-gene problem pymoo mutates a categorical gene in


class NSGA2Placement(Explorer[PlacementProblem]):
    """pymoo's NSGA-II over the op -> EP assignments of a placement problem (registered as
    ``NSGA-II-place``), the engine ordering each plan.

    Encoding: :class:`PlacementGenes` without shares, as pymoo's mixed variables (categorical EP
    genes: uniform crossover and random-option mutation, pymoo's operators for them), NSGA-II's
    binary tournament on rank and crowding, duplicates eliminated on the placements the genes stand
    for. The first individuals are the homogeneous placements (every op on one EP where it can
    run, one per EP), the rest of the population pymoo's random sample. Every evaluation is a trial of the session: measured once, answered from the cache after,
    stopped by the exploration's terminations.

    Parameters
    ----------
    objectives : list of {"latency", "energy", "throughput"} or None
        What to optimise at once (None: the problem's objective alone). Energy needs the platform's
        power model (a trial without one is infinitely bad on it).
    pop_size : int or None
        Population size (None: 40, or about the square root of the placements the genes reach when
        they are fewer than 40 x 25).
    n_gen : int or None
        Generations (None: 25, or enough for pop_size x n_gen to cover the placements the genes reach
        when they are fewer); the exploration's own terminations apply too.
    mutation_prob : float, default 0.05
        The probability that mutation gives an EP gene a new random EP (pymoo's default, 1 / number
        of genes, moves about one op per child: from a homogeneous placement that rarely reaches a
        better plan, which moves a whole branch).
    """

    #: The fractions of a split op's channels on its second EP (none: no splits).
    _shares: tuple[float, ...] = ()
    #: Recombine through pymoo's MixedVariableMating itself (the tests compare the two).
    _pymoo_mating = False

    def __init__(self, objectives: Sequence[str] | None = None, pop_size: int | None = None,
                 n_gen: int | None = None, mutation_prob: float = 0.05):
        self.objectives = objectives
        self.pop_size = pop_size
        self.n_gen = n_gen
        self.mutation_prob = mutation_prob

    @property
    def name(self) -> str:
        return "NSGA-II-place"

    def _objectives(self, problem: PlacementProblem) -> tuple[str, ...]:
        return (problem.objective,) if self.objectives is None else tuple(self.objectives)

    def _share_grid(self) -> tuple[float, ...]:
        return self._shares

    def validate(self, problem: PlacementProblem) -> None:
        owner = self.name
        for name in ("pop_size", "n_gen"):
            if getattr(self, name) is not None:
                check_number(owner, name, getattr(self, name), low=2 if name == "pop_size" else 1, integer=True)
        check_number(owner, "mutation_prob", self.mutation_prob, low=0, high=1, low_open=True)
        if isinstance(self.objectives, str) or (self.objectives is not None and not self.objectives):
            raise HetsimError(f"{owner}: objectives={self.objectives!r} must be a non-empty list, e.g. "
                              f"[latency, energy]")
        for o in self._objectives(problem):
            if o not in PLACEMENT_OBJECTIVES:
                raise HetsimError(f"{owner}: objective {o!r} is not measured by a placement problem; "
                                  f"allowed: {', '.join(PLACEMENT_OBJECTIVES)}")

    def budget(self, genes: PlacementGenes) -> tuple[int, int]:
        """(population size, generations): the parameters, or their defaults for ``genes``."""
        size = genes.size
        small = size < POP_SIZE * N_GEN
        pop = self.pop_size if self.pop_size is not None else (
            max(4, min(POP_SIZE, math.isqrt(size))) if small else POP_SIZE)
        n_gen = self.n_gen if self.n_gen is not None else (
            max(1, math.ceil(size / pop)) if small else N_GEN)
        return pop, n_gen

    def run(self, session: Session[PlacementProblem]) -> None:
        from pymoo.algorithms.moo.nsga2 import NSGA2, binary_tournament
        from pymoo.core.mixed import MixedVariableMating, MixedVariableSampling
        from pymoo.core.problem import ElementwiseProblem
        from pymoo.core.variable import Choice, Integer
        from pymoo.operators.mutation.pm import PM
        from pymoo.operators.mutation.rm import ChoiceRandomMutation
        from pymoo.operators.repair.rounding import RoundingRepair
        from pymoo.operators.selection.tournament import TournamentSelection

        problem = session.problem
        genes = PlacementGenes(problem, self._share_grid())
        objectives = self._objectives(problem)
        columns = [PLACEMENT_OBJECTIVES[o][0] for o in objectives]
        signs = np.array([-1.0 if PLACEMENT_OBJECTIVES[o][2] else 1.0 for o in objectives])
        phase = "nsga2"

        class _Placements(ElementwiseProblem):
            def __init__(self) -> None:
                super().__init__(vars=genes.variables(), n_obj=len(objectives))

            def _evaluate(self, x, out, *args, **kwargs):
                result = session.measure(genes.decoded(x)[0], phase)
                values = [getattr(result, c) for c in columns]
                out["F"] = signs * [math.inf if v is None else float(v) for v in values]

        class _Start(MixedVariableSampling):
            """pymoo's random mixed-variable sampling, its first individuals the homogeneous
            placements (one per EP)."""

            def _do(self, problem, n_samples, **kwargs):
                X = super()._do(problem, n_samples, **kwargs)
                start = genes.homogeneous()[:n_samples]
                X[:len(start)] = start
                return X

        pop_size, n_gen = self.budget(genes)
        same = _same_placement(genes)
        # pymoo's mixed-variable mutations, the EP genes' with the per-gene rate (class docstring).
        mutation = {Choice: ChoiceRandomMutation(prob_var=self.mutation_prob),
                    Integer: PM(vtype=float, repair=RoundingRepair())}
        algorithm = NSGA2(pop_size=pop_size, sampling=_Start(),
                          mating=(MixedVariableMating if self._pymoo_mating else _array_mating)(
                              selection=TournamentSelection(func_comp=binary_tournament),
                              mutation=mutation, eliminate_duplicates=same),
                          eliminate_duplicates=same)
        res = _minimize(session, _Placements(), algorithm, n_gen)
        if res.X is not None:
            X = res.X if isinstance(res.X, np.ndarray) else [res.X]
            session.info["front"] = list({problem.key(p): p for p in map(genes.decode, X)}.values())
        session.info.update(pop_size=pop_size, n_gen=n_gen, genes_size=genes.size)
        return None


class NSGA2Split(NSGA2Placement):
    """:class:`NSGA2Placement` with channel splits (registered as ``NSGA-II-split``): every op μLayer
    could split also has a second EP and a share gene (:class:`PlacementGenes`), giving placements
    with ``splits`` (the hybrid-partitioning paper's horizontal partitioning, on the placement
    problem). Parameters as :class:`NSGA2Placement`, and

    shares : list of float, default [0.25, 0.5, 0.75]
        The fractions of a split op's output channels its second EP may compute (each in (0, 1);
        the share gene's 0 is no split).
    """

    def __init__(self, objectives: Sequence[str] | None = None, pop_size: int | None = None,
                 n_gen: int | None = None, mutation_prob: float = 0.05,
                 shares: Sequence[float] = (0.25, 0.5, 0.75)):
        super().__init__(objectives, pop_size, n_gen, mutation_prob)
        self.shares = shares

    @property
    def name(self) -> str:
        return "NSGA-II-split"

    def _share_grid(self) -> tuple[float, ...]:
        return tuple(self.shares)

    def validate(self, problem: PlacementProblem) -> None:
        super().validate(problem)
        if isinstance(self.shares, str | bytes) or not isinstance(self.shares, Sequence) or not self.shares:
            raise HetsimError(f"{self.name}: shares={self.shares!r} must be a non-empty list of fractions "
                              f"in (0, 1), e.g. [0.25, 0.5, 0.75]")
        for f in self.shares:
            check_number(self.name, "shares", f, low=0, high=1, low_open=True)
            if f == 1:
                raise HetsimError(f"{self.name}: shares={list(self.shares)!r}: a share of 1 moves the whole op "
                                  f"(its EP gene does that); allowed: fractions in (0, 1)")
        if len(set(self.shares)) != len(self.shares):
            raise HetsimError(f"{self.name}: shares={list(self.shares)!r} lists a fraction twice")


def pareto_front(exploration: Exploration, objectives: Sequence[str] | None = None) -> pd.DataFrame:
    """The non-dominated distinct configurations among an exploration's trials, on ``objectives``
    (default: every objective its pipeline problem measured), best first on the first objective.

    Columns: mapping, split, eps, depth and one column per objective (``throughput_fps``,
    ``latency_s``, ``energy_J``, ``memory_bytes``)."""
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    problem = exploration.problem
    if not isinstance(problem, PipelineProblem):
        raise HetsimError("pareto_front: a Pareto front needs a pipeline problem")
    names = tuple(objectives) if objectives is not None else problem.objectives
    if len(names) < 2:
        raise HetsimError(f"pareto_front: needs two or more objectives, got {list(names)}")
    columns = []
    for o in names:
        if o not in problem.objectives:
            raise HetsimError(f"pareto_front: objective {o!r} was not measured (measured: "
                              f"{', '.join(problem.objectives)}); give it as track= / --pareto")
        columns.append(PIPELINE_OBJECTIVES[o][0])
    t = exploration.trials
    t = t[~t["cached"]].drop_duplicates("mapping")
    t = t.dropna(subset=columns)
    if t.empty:
        return pd.DataFrame(columns=["mapping", "split", "eps", "depth", *columns])
    signs = np.array([-1.0 if PIPELINE_OBJECTIVES[o][2] else 1.0 for o in names])
    F = t[columns].to_numpy(dtype=float) * signs
    front = NonDominatedSorting().do(F, only_non_dominated_front=True)
    out = t.iloc[np.sort(front)][["mapping", "split", "eps", "depth", *columns]]
    return out.sort_values(columns[0], ascending=not PIPELINE_OBJECTIVES[names[0]][2]).reset_index(drop=True)


def plot_front(exploration: Exploration, objectives: Sequence[str], path=None, title: str = ""):
    """Every distinct trial of an exploration on two objectives, with its Pareto front highlighted
    and labelled with units; written to ``path`` when given (PNG, PDF or SVG as its suffix says).
    Returns the figure."""
    import matplotlib.pyplot as plt

    from hetsim.figures import save_figure

    if len(objectives) != 2:
        raise HetsimError(f"plot_front: plots two objectives, got {list(objectives)}")
    front = pareto_front(exploration, objectives)
    cols = [PIPELINE_OBJECTIVES[o][0] for o in objectives]
    units = [PIPELINE_OBJECTIVES[o][1] for o in objectives]
    t = exploration.trials
    t = t[~t["cached"]].drop_duplicates("mapping").dropna(subset=cols)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.scatter(t[cols[0]], t[cols[1]], s=12, color="0.7", label=f"trials ({len(t)} distinct)")
    ax.plot(front[cols[0]], front[cols[1]], "o-", color="C3", label=f"Pareto front ({len(front)})")
    ax.set_xlabel(f"{objectives[0]} ({units[0]})")
    ax.set_ylabel(f"{objectives[1]} ({units[1]})")
    ax.set_title(title or f"{exploration.algorithm} on {exploration.problem.name}")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    if path is not None:
        save_figure(fig, path, "--plot", close=False, dpi=120)
    return fig
