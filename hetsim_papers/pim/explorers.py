"""The PIM paper's seven execution schemes as explorers of the placement problem (seed 003, §4.3).

Each builds the DCG of the problem (:class:`~hetsim_papers.pim.dcg.Dcg`: its EPs are the devices,
its cost tables the node and edge costs), decides one device per op, and measures that placement::

    problem = PlacementProblem(platform, workload, cost, eps=["CPU_S", "CPU_P", "PIM"],
                               dag=DagOptions(serial=True, caching=False))
    result = explore(problem, make_explorer("OPT"), seed=0)
    result.best_value, result.info["profiling"]          # latency (s); runs, DA classes left

Registered names (``hetsim explore -a NAME``): ``Priority`` (a provider priority list: the
paper's CPU_S only is ``order=[CPU_S]``, its two lists ``order=[CPU_P,PIM,CPU_S]`` and
``[PIM,CPU_P,CPU_S]``; by default the problem's EPs in order), ``DUET`` (x = 0.5), ``OPT`` (the
paper's ALS DP after Algorithm 1's profiling runs), ``OPT-path`` (the path-aware DP) and ``MILP``
(the exact optimum, CP-SAT or HiGHS). They run on any placement problem: on hikey970, ``Priority``
with ``order=[big, little]`` is big-first.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice, check_number
from hetsim.exploration.base import Explorer, Session
from hetsim.exploration.placement import PlacementProblem
from hetsim.mapping import Placement
from hetsim_papers.pim.dcg import Dcg, assignment_names
from hetsim_papers.pim.dp import MODES, als_dp
from hetsim_papers.pim.duet import duet
from hetsim_papers.pim.exact import SOLVERS, milp
from hetsim_papers.pim.profiling import plan_profiling, priority_assignment


class _Scheme(Explorer[PlacementProblem]):
    """One device per op, decided on the DCG, then measured once."""

    phase = "scheme"

    def validate(self, problem) -> None:
        if not isinstance(problem, PlacementProblem):
            raise HetsimError(f"{self.name}: needs a placement problem (op -> EP), got "
                              f"{type(problem).__name__}")

    def assign(self, dcg: Dcg, session: Session[PlacementProblem]) -> np.ndarray:
        raise NotImplementedError

    def run(self, session: Session[PlacementProblem]) -> Placement:
        problem = session.problem
        dcg = dcg_of(problem)
        assignment = self.assign(dcg, session)
        candidate = problem.placement(assignment_names(dcg, assignment))
        session.measure(candidate, phase=self.phase)
        return candidate


@lru_cache(maxsize=32)
def dcg_of(problem: PlacementProblem) -> Dcg:
    """The DCG of a placement problem, built once per problem (its cost tables do not change)."""
    return Dcg.from_problem(problem)


#: Algorithm 1's plan of each DCG of :func:`dcg_of` (a function of the DCG alone): OPT and
#: OPT-path, and every seed of them, share it. Keyed by the DCG's id, the DCG kept alive with it.
_PLANS: dict[int, tuple[Dcg, object]] = {}


def profiling_plan(dcg: Dcg):
    """:func:`~hetsim_papers.pim.profiling.plan_profiling` of ``dcg``, planned once per process."""
    hit = _PLANS.get(id(dcg))
    if hit is None or hit[0] is not dcg:
        if len(_PLANS) >= 32:
            _PLANS.pop(next(iter(_PLANS)))
        hit = _PLANS[id(dcg)] = (dcg, plan_profiling(dcg))
    return hit[1]


class PriorityList(_Scheme):
    """ONNX Runtime's provider priority list: every op on the first EP of ``order`` that can run
    it. ``order=("CPU_S",)`` is the paper's CPU_S-only baseline; (CPU_P, PIM, CPU_S) never uses
    PIM (every PIM op runs on CPU_P), (PIM, CPU_P, CPU_S) uses it wherever it can."""

    def __init__(self, order: Sequence[str] | None = None):
        self.order = order

    def _order(self, eps: Sequence[str]) -> list[str]:
        if self.order is None:
            return list(eps)
        return [self.order] if isinstance(self.order, str) else list(self.order)

    @property
    def name(self) -> str:
        if self.order is None:
            return "Priority"
        order = self._order(())
        return f"{order[0]} only" if len(order) == 1 else f"({','.join(order)})"

    def validate(self, problem) -> None:
        super().validate(problem)
        order = self._order(problem.eps)
        bad = [e for e in order if e not in problem.eps]
        if bad or not order or len(set(order)) != len(order):
            raise HetsimError(f"{type(self).__name__}: order={order!r}; allowed: distinct EPs of the "
                              f"problem, {list(problem.eps)}")

    def assign(self, dcg, session):
        return priority_assignment(dcg, [dcg.devices.index(e) for e in self._order(dcg.devices)])


class Duet(_Scheme):
    """DUET(x): fastest device per op, then a communication-aware correction of the first x of the
    ops (:mod:`hetsim_papers.pim.duet`)."""

    supported_objectives = ("latency",)   # the serial model's latency

    def __init__(self, x: float = 0.5, passes: int = 1):
        self.x = x
        self.passes = passes

    @property
    def name(self) -> str:
        return f"DUET(x={float(self.x):.0%})"

    def validate(self, problem) -> None:
        super().validate(problem)
        check_number("DUET", "x", self.x, low=0.0, high=1.0)
        check_number("DUET", "passes", self.passes, low=1, integer=True)

    def assign(self, dcg, session):
        return duet(dcg, self.x, self.passes)


class OptimalPartitioning(_Scheme):
    """OPT: Algorithm 1's profiling runs (``profile=True``: n node runs and the edge runs, each
    measured, so the tuning clock pays for them), then the modified ALS DP over the profiled costs
    (``mode="paper"``, or the path-aware ``"path"``). ``session.info["profiling"]`` holds the run
    counts, the DA classes left after the node runs and the sweep and DP times."""

    supported_objectives = ("latency",)   # the serial model's latency

    def __init__(self, mode: str = "paper", profile: bool = True):
        self.mode = mode
        self.profile = profile

    @property
    def name(self) -> str:
        return "OPT" if self.mode == "paper" else "OPT-path"

    def validate(self, problem) -> None:
        super().validate(problem)
        check_choice("OPT", "mode", self.mode, MODES)
        check_choice("OPT", "profile", self.profile, (True, False))

    def assign(self, dcg, session):
        problem = session.problem
        if self.profile:
            plan = profiling_plan(dcg)
            for run, prio in zip(plan.node_runs, plan.node_priorities, strict=True):
                session.measure(problem.placement(assignment_names(dcg, run)),
                                phase=f"profile node ({','.join(prio)})")
            for run in plan.edge_runs:
                session.measure(problem.placement(assignment_names(dcg, run)), phase="profile edge")
            if plan.covered != plan.n_classes:
                raise HetsimError(f"{dcg.name}: the profiling runs expose {plan.covered} of "
                                  f"{plan.n_classes} DA classes")
            session.info["profiling"] = {
                "node_runs": len(plan.node_runs), "edge_runs": len(plan.edge_runs),
                "da_classes": plan.n_classes, "da_left_after_node_runs": plan.left_after_node_runs,
                "sweep_s": plan.sweep_seconds}
        result = als_dp(dcg, self.mode)
        session.info["dp"] = {"mode": self.mode, "seconds": result.seconds,
                              "estimate_s": result.estimate_s, "latency_s": result.latency_s}
        self.phase = "dp"
        return result.assignment


class ExactPartitioning(_Scheme):
    """The exact optimum of the sequential model by integer programming (:func:`hetsim_papers.pim.exact.milp`):
    ``solver="cp-sat"`` (OR-Tools) or ``"highs"`` (scipy), within ``time_limit_s``."""

    supported_objectives = ("latency",)   # the serial model's latency

    def __init__(self, solver: str = "cp-sat", time_limit_s: float = 60.0):
        self.solver = solver
        self.time_limit_s = time_limit_s

    @property
    def name(self) -> str:
        return f"MILP ({self.solver})"

    def validate(self, problem) -> None:
        super().validate(problem)
        check_choice("MILP", "solver", self.solver, SOLVERS)
        check_number("MILP", "time_limit_s", self.time_limit_s, low=0.0, low_open=True)

    def assign(self, dcg, session):
        result = milp(dcg, self.solver, float(self.time_limit_s))
        session.info["milp"] = {"solver": self.solver, "optimal": result.optimal,
                                "seconds": result.seconds, "objective_s": result.objective_s}
        return result.assignment


PAPER = "PIM partitioning (seed 003)"
