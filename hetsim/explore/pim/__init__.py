"""The PIM partitioning paper's algorithms (seed 003): the DCG with its Distinct-Attribute edges,
Algorithm 1's low-overhead profiling, OPT (the modified assembly-line DP) with a path-aware variant,
the exact optimum (enumeration, MILP), and the baselines (priority lists, DUET), the last four as
registered explorers of the placement problem (:mod:`hetsim.explore.pim.explorers`).

    from hetsim.explore.pim import Dcg, als_dp, plan_profiling
    dcg = Dcg.from_problem(problem)                 # a PlacementProblem
    plan_profiling(dcg).left_after_node_runs         # DA classes the edge run must expose
    als_dp(dcg).latency_s
"""

from hetsim.explore.pim.dcg import DaClass, Dcg, DcgCounts, assignment_names
from hetsim.explore.pim.dp import DpResult, als_dp, brute_force
from hetsim.explore.pim.duet import duet, fastest
from hetsim.explore.pim.exact import Enumeration, MilpResult, count_paths, enumerate_paths, milp
from hetsim.explore.pim.explorers import Duet, ExactPartitioning, OptimalPartitioning, PriorityList
from hetsim.explore.pim.profiling import (
    FALLBACKS,
    ProfilePlan,
    fallback_order,
    node_profiling,
    plan_profiling,
    priority_assignment,
)

__all__ = [
    "FALLBACKS", "DaClass", "Dcg", "DcgCounts", "DpResult", "Duet", "Enumeration", "ExactPartitioning",
    "MilpResult", "OptimalPartitioning", "PriorityList", "ProfilePlan", "als_dp",
    "assignment_names", "brute_force", "count_paths", "duet", "enumerate_paths", "fallback_order",
    "fastest", "milp", "node_profiling", "plan_profiling", "priority_assignment",
]
