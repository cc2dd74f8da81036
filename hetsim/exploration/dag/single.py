"""Every op on one EP: the single-device baselines (HOPE's CPU and GPU versions, Fig. 4).

An op the EP cannot run goes to ``fallback`` (default: the EP that runs it fastest; GPU-only falls
back to the CPU, docs/papers/hope.md); the ops run one at a time in the workload's order (one
inference session), scored by :class:`~hetsim.exploration.dag.tables.PlanState`, so the predicted
makespan is the engine's latency of the plan.
"""

from __future__ import annotations

from hetsim.exploration.dag.tables import Plan, PlanState, SchedView


def single_device(view: SchedView, device: str = "cpu", fallback: str | None = None) -> Plan:
    """Every op on EP ``device`` (``"cpu"``: the first CPU cluster, ``"gpu"``: the first
    accelerator, or an EP name); an op it cannot run on ``fallback`` (same names; default: the EP
    that runs it fastest); one op at a time in the workload's order. ``info['fallback_ops']``
    counts the ops moved."""
    owner = {"cpu": "CPU-only", "gpu": "GPU-only"}.get(device, f"{device}-only")
    d0 = view.ep_index(device, owner, "device")
    fb = view.ep_index(fallback, owner, "fallback") if fallback is not None else None
    state = PlanState(view, sequential=True)
    moved = 0
    for i in range(view.n):
        d = d0
        if d not in view.capable[i]:
            if fb is not None and fb in view.capable[i]:
                d = fb
            else:
                d = min(view.capable[i], key=lambda e: (view.cl_list[i][e], e))  # noqa: B023
            moved += 1
        state.append(i, d)
    return Plan.of(state, fallback_ops=moved)
