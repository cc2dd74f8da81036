"""HEFT (Topcuoglu, Hariri and Wu, TPDS 2002), classic: upward ranks on mean costs,
insertion-based earliest finish time, communication a delay on the edge (no tensor caching, no
EP time spent on transfers). The engine then replays the plan with the problem's own rules.
"""

from __future__ import annotations

import bisect
import math

from hetsim.errors import HetsimError
from hetsim.exploration.dag.tables import Plan, SchedView

#: How the rank averages a transfer (``rank_comm``): over the ordered pairs of distinct EPs
#: (Topcuoglu et al.'s mean transfer cost), or as saga's HEFT does, over its network's edges: the
#: unordered pairs of EPs with each EP paired with itself at no cost (D(D+1)/2 of them).
RANK_COMMS = ("pairs", "saga")


def upward_ranks(view: SchedView, rank_comm: str = "pairs") -> list[float]:
    """HEFT's rank_u: mean op time over the EPs that can run it, plus the longest path of mean
    times and mean transfer times to an exit op; a transfer's mean over the ordered pairs of
    distinct EPs (``rank_comm="pairs"``), or saga's (``"saga"``: the same sum over D(D+1) instead of
    D(D-1), i.e. scaled by (D-1)/(D+1))."""
    if rank_comm not in RANK_COMMS:
        raise HetsimError(f"HEFT: rank_comm={rank_comm!r}; allowed: {', '.join(RANK_COMMS)}")
    D = view.D
    rank = [0.0] * view.n
    pairs = [(a, b) for a in range(D) for b in range(D) if a != b]
    count = len(pairs) if rank_comm == "pairs" else D * (D + 1)
    for i in range(view.n - 1, -1, -1):
        w = sum(view.cl_list[i][d] for d in view.capable[i]) / len(view.capable[i])
        c = sum(view.C(i, a, b) for a, b in pairs) / count if pairs else 0.0
        rank[i] = w + max((c + rank[s] for s in view.succs[i]), default=0.0)
    return rank


def heft(view: SchedView, rank_comm: str = "pairs") -> Plan:
    """Classic HEFT (module docstring): ops by decreasing upward rank (ties: the workload's
    order), each to the EP of its earliest finish, in the first idle gap that fits it.
    ``rank_comm``: how the rank averages a transfer (:data:`RANK_COMMS`; ``"saga"`` gives saga's
    HEFT plan, tested on random graphs). ``info['heft_makespan_s']`` is its own schedule's
    makespan, under its model of communication."""
    rank = upward_ranks(view, rank_comm)
    order = sorted(range(view.n), key=lambda i: (-rank[i], i))
    dev = [-1] * view.n
    aft = [0.0] * view.n
    slots: list[list[tuple[float, float, int]]] = [[] for _ in range(view.D)]   # (start, end, op)
    for i in order:
        best = (math.inf, math.inf, -1)
        for d in view.capable[i]:
            ready = max((aft[p] + (view.C(p, dev[p], d) if dev[p] != d else 0.0) for p in view.preds[i]),
                        default=0.0)
            dur = view.cl_list[i][d]
            start = _insertion_start(slots[d], ready, dur)
            if start + dur < best[0]:
                best = (start + dur, start, d)
        finish, start, d = best
        dev[i], aft[i] = d, finish
        bisect.insort(slots[d], (start, finish, i))
    plan_order = [[i for _, _, i in s] for s in slots]
    return Plan(dev, plan_order, False, None, {"heft_makespan_s": max(aft, default=0.0)})


def _insertion_start(slots: list[tuple[float, float, int]], ready: float, dur: float) -> float:
    """The earliest start >= ``ready`` of a ``dur``-long op in the idle gaps of an EP's timeline."""
    t = ready
    for s, e, _ in slots:
        if t + dur <= s:
            return t
        t = max(t, e)
    return t
