"""MOSAIC (Han et al., PACT 2019) as HOPE describes it, "the DNN model as a linear model".

Dynamic programming cuts the workload's topological order into contiguous slices, each on one
EP, minimising the sum of op times and of the live tensors moved at each cut; the slices run one
after another (a sequential plan), replayed by :class:`~hetsim.exploration.dag.tables.PlanState`.
"""

from __future__ import annotations

import math

from hetsim.errors import HetsimError
from hetsim.exploration.dag.tables import Plan, PlanState, SchedView


def live_tensors(view: SchedView) -> list[list[int]]:
    """For each position i of the workload's order, the ops before i whose output an op at i or
    later reads: what a cut before op i must move (MOSAIC's boundary tensors)."""
    last_reader = [max(view.succs[i], default=-1) for i in range(view.n)]
    live: list[list[int]] = []
    current: list[int] = []
    for i in range(view.n):
        current = [k for k in current if last_reader[k] >= i]
        live.append(list(current))
        if last_reader[i] > i:
            current.append(i)
    return live


def mosaic(view: SchedView) -> Plan:
    """MOSAIC's linear slicing (module docstring): DP over the workload's order.

    ``DP[i][d] = cl[i][d] + min(DP[i-1][d], min_{d' != d} DP[i-1][d'] + cut(i, d' -> d))`` with
    ``cut`` the live tensors moved from d' to d (they are assumed to sit on d', MOSAIC's own
    estimate); the plan then runs sequentially on the engine, every tensor moved once.
    ``info``: the number of ``slices`` and the DP's own estimate ``dp_estimate_s``."""
    n, D = view.n, view.D
    live = live_tensors(view)
    inf = math.inf
    dp = [[inf] * D for _ in range(n)]
    back = [[-1] * D for _ in range(n)]
    dp[0] = [view.cl_list[0][d] for d in range(D)]
    for i in range(1, n):
        for d in range(D):
            c = view.cl_list[i][d]
            if not math.isfinite(c):
                continue
            best, arg = dp[i - 1][d], d
            for e in range(D):
                if e == d or not math.isfinite(dp[i - 1][e]):
                    continue
                cut = sum(view.C(k, e, d) for k in live[i])
                if dp[i - 1][e] + cut < best:
                    best, arg = dp[i - 1][e] + cut, e
            dp[i][d], back[i][d] = best + c, arg
    d = min(range(D), key=lambda e: (dp[n - 1][e], e))
    if not math.isfinite(dp[n - 1][d]):
        raise HetsimError(f"{view.name}: MOSAIC finds no slicing: an op can run on no EP")
    dev = [0] * n
    for i in range(n - 1, -1, -1):
        dev[i] = d
        d = back[i][d] if i > 0 else d
    state = PlanState(view, sequential=True)
    for i in range(n):
        state.append(i, dev[i])
    slices = 1 + sum(dev[i] != dev[i - 1] for i in range(1, n))
    return Plan.of(state, slices=slices, dp_estimate_s=float(min(dp[n - 1])))
