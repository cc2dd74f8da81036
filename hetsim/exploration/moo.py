"""Multi-objective search of pipeline mappings: pymoo's NSGA-II, and Pareto fronts of any search.

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

:func:`pareto_front` gives the non-dominated trials of *any* exploration (pymoo's
non-dominated sorting over the distinct configurations measured), so a single-objective
algorithm's trials have a front too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_number
from hetsim.exploration.base import Exploration, Explorer, Session
from hetsim.exploration.problem import PIPELINE_OBJECTIVES, Configuration, PipelineProblem


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
        from pymoo.optimize import minimize

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

        # pymoo seeds numpy's global generator: keep the caller's global state as it was.
        state = np.random.get_state()
        try:
            res = minimize(_Pipelines(), NSGA2(pop_size=self.pop_size), ("n_gen", self.n_gen),
                           seed=int(session.rng.integers(2**31 - 1)), verbose=False)
        finally:
            np.random.set_state(state)
        if res.X is not None:
            X = np.atleast_2d(res.X)
            session.info["front"] = list(dict.fromkeys(decode(problem, x) for x in X))
        return None


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
