"""DAG schedulers: functions of a placement problem's tables that return a plan, one module per
algorithm (saga's layout), and one adapter that makes any of them an explorer.

* :mod:`~hetsim.exploration.dag.tables`: what they read (:class:`SchedView`: cl, C, the graph)
  and how they try a plan (:class:`PlanState`, an exact replay of the engine's rules), and what
  they return (:class:`Plan`);
* :func:`~hetsim.exploration.dag.single.single_device` (CPU-only, GPU-only),
  :func:`~hetsim.exploration.dag.mosaic.mosaic` (MOSAIC's linear slicing),
  :func:`~hetsim.exploration.dag.dmda.dmdar` (StarPU's dmdar and dm policies),
  :func:`~hetsim.exploration.dag.heft.heft` (HEFT),
  :func:`~hetsim.exploration.dag.mulayer.mulayer` (μLayer's channel split),
  :func:`~hetsim.exploration.dag.exact.exact` (the exact plan of a small graph, CP-SAT);
* :class:`~hetsim.exploration.dag.explorer.DagScheduler`: ``f(view, **params) -> Plan`` as an
  explorer of a :class:`~hetsim.exploration.placement.PlacementProblem`.

::

    view = SchedView(PlacementProblem("rk3588", "googlenet"))
    plan = heft(view)                      # a Plan: EP per op, each EP's order, what HEFT reports
    explore(problem, make_explorer("HEFT"), seed=0)    # the same, measured by the DAG engine
"""

from hetsim.exploration.dag.dmda import dmdar
from hetsim.exploration.dag.exact import exact, solve_engine_cpsat
from hetsim.exploration.dag.explorer import DagScheduler
from hetsim.exploration.dag.heft import heft, upward_ranks
from hetsim.exploration.dag.mosaic import mosaic
from hetsim.exploration.dag.mulayer import mulayer
from hetsim.exploration.dag.single import single_device
from hetsim.exploration.dag.tables import Groups, Plan, PlanState, SchedView, group_times

__all__ = [
    "DagScheduler", "Groups", "Plan", "PlanState", "SchedView", "dmdar", "exact", "group_times", "heft",
    "mosaic", "mulayer", "single_device", "solve_engine_cpsat", "upward_ranks",
]
