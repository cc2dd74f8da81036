"""StarPU's deque-model policies with exact cost tables: ``dmdar`` (data aware) and ``dm``.

A perfect performance model (HOPE compares against StarPU-DMDAR so informed, docs/papers/hope.md):
when an op becomes ready (all its inputs computed) it goes to the EP where it would finish first,
counting its input transfers and the EP's queue, and queues there in ready order; one op at a
time, no look-ahead, no topology priorities, no data-aware reordering within a queue. Scored by
:class:`~hetsim.exploration.dag.tables.PlanState`, so the predicted makespan is the engine's
latency of the plan.
"""

from __future__ import annotations

import heapq
import math

from hetsim.exploration._checks import check_choice
from hetsim.exploration.dag.tables import Plan, PlanState, SchedView


def dmdar(view: SchedView, data_aware: bool = True) -> Plan:
    """StarPU-DMDAR (module docstring): ops in the order they become ready (ties: the workload's
    order), each to the EP of its earliest expected end. ``data_aware=False`` is StarPU's ``dm``
    policy: the expected end leaves the input transfers out (what a runtime that cannot price them
    sees)."""
    check_choice("StarPU-DMDAR", "data_aware", data_aware, (True, False))
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
