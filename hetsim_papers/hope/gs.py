"""HOPE:GS, the greedy search of HOPE §3 (Algorithm 2, corrected as in digest §4.2-4.3).

Short ops are first merged into super-ops (§3.2, :func:`~hetsim_papers.hope.merging.merge_short_ops`).
Then, while some super-op is ready: take the K ready ones with the smallest earliest start time
(EST: the latest finish of their predecessors, communication left out, §3.1; ties: the workload's
order), try all |D|^K assignments of them to EPs, and commit the one whose K super-ops complete
first. K = 4 for 2 EPs and 3 for 3 EPs [paper]; every other count defaults to the largest K with
|D|^K <= 64 [choice].

Where the digest reads the printed algorithm:

* line 7 (``opsQueue <- kOps.successors``) would drop the ready ops not in the window; the ready
  set keeps them and gains the successors all of whose predecessors are placed [digest §4.2];
* "the minimal completion time of the K ops" is the latest of their finishes (``score="max"``;
  ``"sum"`` scores the sum) [digest §11.9]; ties go to the smaller sum of finishes, then to the
  first assignment in the enumeration order (EP indices, lexicographic);
* ops of one batch on one EP are queued in EST order [digest §11.9];
* a batch is scored by replaying it exactly as the engine will
  (:class:`~hetsim.exploration.dag.tables.PlanState`: the inputs' transfers on the consumer's EP by
  default, each tensor moved to an EP once), so the plan's predicted latency is its simulated
  latency.

:func:`hope_gs` is a function of the problem's tables; the registry makes it the ``HOPE:GS``
explorer (:class:`~hetsim.exploration.dag.explorer.DagScheduler`).
"""

from __future__ import annotations

import itertools

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice, check_number
from hetsim.exploration.dag.tables import Plan, PlanState, SchedView
from hetsim_papers.hope.merging import merge_short_ops

#: The most EP assignments a window may try per step.
MAX_ASSIGNMENTS = 100_000

#: HOPE's window: K = 4 for 2 devices, 3 for 3 (§3.1).
PAPER_K = {2: 4, 3: 3}


def default_k(n_devices: int) -> int:
    """HOPE's K for 2 and 3 EPs; otherwise the largest K with |D|^K <= 64 (at least 1)."""
    if n_devices in PAPER_K:
        return PAPER_K[n_devices]
    k = 1
    while n_devices ** (k + 1) <= 64:
        k += 1
    return k


def hope_gs(view: SchedView, k: int | None = None, merge_threshold_s: float | None = 1e-4,
            score: str = "max") -> Plan:
    """HOPE:GS (§3, Algorithm 2; module docstring).

    Parameters
    ----------
    k : int or None
        Window size (None: 4 for 2 EPs, 3 for 3 [paper]).
    merge_threshold_s : float or None
        An op shorter than this on its fastest EP, with one predecessor, joins its predecessor's
        super-op (None: no merging). Default 0.1 ms: the paper's ReLU example (§3.2) [choice].
    score : {"max", "sum"}
        A batch's completion time: its latest finish, or the sum of its finishes.
    """
    name = "HOPE:GS"
    if k is not None:
        check_number(name, "k", k, low=1, high=8, integer=True)
        if view.D ** k > MAX_ASSIGNMENTS:
            raise HetsimError(f"{name}: k={k} over {view.D} EPs tries {view.D ** k:,} assignments per step; "
                              f"allowed: at most {MAX_ASSIGNMENTS:,}")
    if merge_threshold_s is not None:
        check_number(name, "merge_threshold_s", merge_threshold_s, low=0.0)
    check_choice(name, "score", score, ("max", "sum"))
    groups = merge_short_ops(view, merge_threshold_s)
    k = k or default_k(view.D)
    state = PlanState(view)
    members = groups.members
    cap = [sorted(set.intersection(*(set(view.capable[i]) for i in m))) for m in members]
    waiting = [len(p) for p in groups.preds]
    est = [0.0] * groups.n
    ready = [g for g in range(groups.n) if not waiting[g]]
    batches = evaluated = 0
    while ready:
        ready.sort(key=lambda g: (est[g], g))
        batch, ready = ready[:k], ready[k:]
        best_key: tuple | None = None
        best_assign: tuple[int, ...] = ()
        for assign in itertools.product(*(cap[g] for g in batch)):
            mark = state.mark()
            finishes = [0.0] * len(batch)
            for j, (g, d) in enumerate(zip(batch, assign, strict=True)):
                f = 0.0
                for i in members[g]:
                    f = state.append(i, d)
                finishes[j] = f
            state.rollback(mark)
            evaluated += 1
            key = (max(finishes) if score == "max" else sum(finishes), sum(finishes))
            if best_key is None or key < best_key:
                best_key, best_assign = key, assign
        for g, d in zip(batch, best_assign, strict=True):
            for i in members[g]:
                state.append(i, d)
        state.commit()
        batches += 1
        for g in batch:
            for s in groups.succs[g]:
                waiting[s] -= 1
                if not waiting[s]:
                    est[s] = max(state.fin[members[p][-1]] for p in groups.preds[s])
                    ready.append(s)
    return Plan.of(state, k=k, super_ops=groups.n, batches=batches, assignments_tried=evaluated,
                   merged_ops=view.n - groups.n)

