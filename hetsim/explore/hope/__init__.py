"""HOPE (seed 002) and the DAG schedulers it is compared with, as explorers of a placement problem.

Modules: :mod:`~hetsim.explore.hope.view` (the cl and C tables, super-ops, the exact incremental
replay of a plan), :mod:`~hetsim.explore.hope.baselines` (CPU-only, GPU-only, MOSAIC,
StarPU-DMDAR, HEFT), :mod:`~hetsim.explore.hope.gs` (HOPE:GS), :mod:`~hetsim.explore.hope.partition`
(Algorithm 1), :mod:`~hetsim.explore.hope.milp` (HOPE's ILP and the engine's exact model, CP-SAT;
HiGHS to cross-check), :mod:`~hetsim.explore.hope.lp` (HOPE:LP), :mod:`~hetsim.explore.hope.mulayer`
(μLayer), :mod:`~hetsim.explore.hope.explorers` (the registered explorers). docs/papers/hope.md
describes each, with every choice where the paper is silent.
"""

from hetsim.explore.hope.explorers import (
    DagScheduler,
    ExactILP,
    Heft,
    HopeGS,
    HopeLP,
    Mosaic,
    MuLayer,
    SingleDevice,
    StarPU,
)

__all__ = ["DagScheduler", "ExactILP", "Heft", "HopeGS", "HopeLP", "Mosaic", "MuLayer", "SingleDevice",
           "StarPU"]
