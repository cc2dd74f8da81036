"""One adapter from a DAG scheduling function to an explorer of a placement problem.

A scheduler is a function of the tables, ``f(view, **params) -> Plan`` (``seed`` among its
parameters if it draws random numbers or seeds a solver). :class:`DagScheduler` makes any such
function an :class:`~hetsim.exploration.base.Explorer`: it builds the problem's
:class:`~hetsim.exploration.dag.tables.SchedView`, calls the function, measures the plan once
(``session.measure``: the one DAG engine replays it) and returns it. The function's keyword
parameters are the explorer's (``get_params``, ``--param``, the registry's checks and docs); a
plugin lists the function itself as an :class:`~hetsim.plugins.ExplorerSpec`::

    ExplorerSpec("HEFT", "hetsim.exploration.dag.heft:heft", "placement", "upward-rank list scheduling")
    explore(PlacementProblem("rk3588", "googlenet"), make_explorer("HEFT"), seed=0)
    explore(problem, DagScheduler(dmdar, data_aware=False), seed=0)     # without the registry

``Exploration.info`` holds ``schedule_wall_s`` (the function's own wall time, tables built),
``schedule_process_s`` (its processor time: what the machine's load does not change),
``tables_wall_s`` (building cl and C), ``predicted_latency_s`` (the plan's own estimate: for the
schedulers that score with :class:`~hetsim.exploration.dag.tables.PlanState` it is the engine's
latency of the plan exactly) and what the function reports in ``Plan.info``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable
from typing import Any

from hetsim.errors import HetsimError
from hetsim.exploration.base import Explorer, Session, _same
from hetsim.exploration.dag.tables import Plan, SchedView
from hetsim.exploration.placement import PlacementProblem

#: A function's parameters the adapter fills in itself (not the explorer's).
SUPPLIED = ("seed",)


def scheduler_parameters(schedule: Callable) -> list[inspect.Parameter]:
    """The explorer parameters of a scheduling function: its keyword parameters after the view,
    ``seed`` left out (the exploration's seed is passed)."""
    params = list(inspect.signature(schedule).parameters.values())[1:]
    return [p for p in params if p.name not in SUPPLIED
            and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]


class DagScheduler(Explorer[PlacementProblem]):
    """A scheduling function ``schedule(view, **params) -> Plan`` as an explorer (module
    docstring); ``name``: the algorithm's name in the papers (default: the function's)."""

    def __init__(self, schedule: Callable[..., Plan], name: str | None = None, **params: Any):
        if not callable(schedule):
            raise HetsimError(f"DagScheduler: schedule={schedule!r} is not a function")
        self.schedule = schedule
        self.label: str = name or str(getattr(schedule, "__name__", "DAG scheduler"))
        allowed = scheduler_parameters(schedule)
        names = [p.name for p in allowed]
        unknown = [k for k in params if k not in names]
        if unknown:
            listing = ", ".join(f"{p.name}={p.default!r}" for p in allowed) or "none"
            raise HetsimError(f"{self.label}: unknown parameter {unknown[0]!r}; its parameters (with "
                              f"defaults): {listing}")
        missing = [p.name for p in allowed if p.default is p.empty and p.name not in params]
        if missing:
            raise HetsimError(f"{self.label}: parameter {missing[0]!r} has no default: give it")
        self.params: dict[str, Any] = {p.name: params.get(p.name, p.default) for p in allowed}

    @property
    def name(self) -> str:
        return self.label

    # -- the function's parameters are the explorer's (scikit-learn conventions) ---------------------
    def get_params(self) -> dict[str, Any]:
        return dict(self.params)

    def set_params(self, **params) -> DagScheduler:
        for key, value in params.items():
            if key not in self.params:
                raise HetsimError(f"{self.label}: unknown parameter {key!r}; allowed: "
                                  f"{', '.join(self.params) or 'none'}")
            self.params[key] = value
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default for p in scheduler_parameters(self.schedule)}
        changed = [f"{k}={v!r}" for k, v in self.params.items() if not _same(v, defaults[k])]
        return f"DagScheduler({self.schedule.__name__}{''.join(', ' + c for c in changed)})"

    # -- the algorithm -------------------------------------------------------------------------------
    def validate(self, problem: PlacementProblem) -> None:
        if not isinstance(problem, PlacementProblem):
            raise HetsimError(f"{self.label} schedules a DAG: it needs a PlacementProblem, got "
                              f"{type(problem).__name__}")

    def run(self, session: Session[PlacementProblem]):
        t0 = time.perf_counter()
        view = SchedView(session.problem)
        t1 = time.perf_counter()
        takes_seed = "seed" in inspect.signature(self.schedule).parameters
        c1 = time.process_time()
        plan = self.schedule(view, **self.params, **({"seed": session.seed} if takes_seed else {}))
        cpu = time.process_time() - c1
        wall = time.perf_counter() - t1
        if not isinstance(plan, Plan):
            raise HetsimError(f"{self.label}: its function returned {type(plan).__name__}, not a Plan")
        candidate = view.placement(plan)
        session.info.update({"schedule_wall_s": wall, "schedule_process_s": cpu, "tables_wall_s": t1 - t0,
                             "predicted_latency_s": plan.predicted_s, **plan.info})
        session.measure(candidate, "plan")
        return candidate
