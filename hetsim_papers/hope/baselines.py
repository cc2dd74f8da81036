"""The schedulers HOPE is compared with (digest §8), and HEFT, as functions of a
:class:`~hetsim_papers.hope.view.SchedView` that return a :class:`~hetsim_papers.hope.view.Plan`.

* :func:`single_device`: every op on one EP (HOPE's CPU and GPU versions), an op the EP cannot
  run on the fastest EP that can (GPU-only falls back to the CPU, digest §10 item 6), one op at a
  time in the workload's order (one MNN session).
* :func:`mosaic`: MOSAIC (Han et al., PACT 2019) as HOPE describes it, "the DNN model as a linear
  model": dynamic programming cuts the workload's topological order into contiguous slices, each
  on one EP, minimising the sum of op times and of the live tensors moved at each cut (digest
  §8.1); the slices run one after another (a sequential plan).
* :func:`starpu_dmdar`: StarPU's ``dmdar`` policy with exact cost tables (a perfect performance
  model, digest §8.2): when an op becomes ready (all its inputs computed) it goes to the EP where it
  would finish first, counting its input transfers, and queues there in ready order; one op at a
  time, no look-ahead, no topology priorities.
* :func:`heft`: HEFT (Topcuoglu et al. 2002), classic: upward ranks on mean costs, insertion-based
  earliest finish time, communication a delay on the edge (no tensor caching, no device time).

Each scheduler but HEFT scores its choices with :class:`~hetsim_papers.hope.view.PlanState`, so
its predicted makespan is the engine's latency of its plan.
"""

from __future__ import annotations

import bisect
import heapq
import math

from hetsim.errors import HetsimError
from hetsim_papers.hope.view import Plan, PlanState, SchedView


def single_device(view: SchedView, device: int, fallback: int | None = None) -> Plan:
    """Every op on EP ``device``; an op it cannot run on ``fallback`` (default: the EP that runs it
    fastest); one op at a time in the workload's order."""
    state = PlanState(view, sequential=True)
    moved = 0
    for i in range(view.n):
        d = device
        if d not in view.capable[i]:
            if fallback is not None and fallback in view.capable[i]:
                d = fallback
            else:
                d = min(view.capable[i], key=lambda e: (view.cl_list[i][e], e))  # noqa: B023
            moved += 1
        state.append(i, d)
    return Plan.of(state, fallback_ops=moved)


def _live_tensors(view: SchedView) -> list[list[int]]:
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
    estimate); the plan then runs sequentially on the engine, every tensor moved once."""
    n, D = view.n, view.D
    live = _live_tensors(view)
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
        raise HetsimError(f"{view.problem.name}: MOSAIC finds no slicing: an op can run on no EP")
    dev = [0] * n
    for i in range(n - 1, -1, -1):
        dev[i] = d
        d = back[i][d] if i > 0 else d
    state = PlanState(view, sequential=True)
    for i in range(n):
        state.append(i, dev[i])
    slices = 1 + sum(dev[i] != dev[i - 1] for i in range(1, n))
    return Plan.of(state, slices=slices, dp_estimate_s=float(min(dp[n - 1])))


def starpu_dmdar(view: SchedView, data_aware: bool = True) -> Plan:
    """StarPU-DMDAR with a perfect performance model (module docstring): ops in the order they
    become ready (ties: the workload's order), each to the EP of its earliest expected end.
    ``data_aware=False`` is StarPU's ``dm`` policy: the expected end leaves the input transfers out
    (what a runtime that cannot price them sees)."""
    state = PlanState(view)
    waiting = [len(p) for p in view.preds]
    ready = [(0.0, i) for i in range(view.n) if not waiting[i]]
    heapq.heapify(ready)
    while ready:
        t, i = heapq.heappop(ready)
        best_d, best_f = -1, math.inf
        for d in view.capable[i]:
            if data_aware:
                mark = state.mark()
                f = state.append(i, d)
                state.rollback(mark)
            else:
                f = max(t, state.avail[d]) + view.cl_list[i][d]
            if f < best_f:
                best_d, best_f = d, f
        state.append(i, best_d)
        state.commit()
        for s in view.succs[i]:
            waiting[s] -= 1
            if not waiting[s]:
                heapq.heappush(ready, (max(state.fin[p] for p in view.preds[s]), s))
    return Plan.of(state)


def upward_ranks(view: SchedView) -> list[float]:
    """HEFT's rank_u: mean op time over the EPs that can run it, plus the longest path of mean
    times and mean transfer times (over ordered pairs of distinct EPs) to an exit op."""
    D = view.D
    rank = [0.0] * view.n
    for i in range(view.n - 1, -1, -1):
        w = sum(view.cl_list[i][d] for d in view.capable[i]) / len(view.capable[i])
        pairs = [(a, b) for a in range(D) for b in range(D) if a != b]
        c = sum(view.C(i, a, b) for a, b in pairs) / len(pairs) if pairs else 0.0
        rank[i] = w + max((c + rank[s] for s in view.succs[i]), default=0.0)
    return rank


def heft(view: SchedView) -> Plan:
    """Classic HEFT (module docstring). ``info['heft_makespan_s']`` is its own schedule's
    makespan, under its model of communication (the engine replays the plan with HOPE's)."""
    rank = upward_ranks(view)
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
