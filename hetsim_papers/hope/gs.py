"""HOPE:GS, the greedy search of HOPE §3 (Algorithm 2, with the readings of docs/papers/hope.md).

Short ops are first merged into super-ops (§3.2, :func:`~hetsim_papers.hope.merging.merge_short_ops`).
Then, while some super-op is ready: take the K ready ones with the smallest earliest start time
(EST: the latest finish of their predecessors, communication left out, §3.1; ties: the workload's
order), try all |D|^K assignments of them to EPs, and commit the one whose K super-ops complete
first. K = 4 for 2 EPs and 3 for 3 EPs [paper]; every other count defaults to the largest K with
|D|^K <= 64 [choice].

Where hetsim reads the printed algorithm:

* line 7 (``opsQueue <- kOps.successors``) would drop the ready ops not in the window; the ready
  set keeps them and gains the successors all of whose predecessors are placed [Alg. 2, line 7];
* "the minimal completion time of the K ops" is the latest of their finishes (``score="max"``;
  ``"sum"`` scores the sum) [docs/papers/hope.md]; ties go to the smaller sum of finishes, then to the
  first assignment in the enumeration order (EP indices, lexicographic);
* ops of one batch on one EP are queued in EST order [docs/papers/hope.md];
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
from hetsim_papers.hope.merging import SHORT, followers, merge_short_ops

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
            score: str = "max", short: str = "predecessor") -> Plan:
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
    short : {"fastest", "predecessor"}
        Where an op's time is measured to call it short (:data:`~hetsim_papers.hope.merging.SHORT`):
        on its fastest EP, merging it into its predecessor's super-op before scheduling; or on the
        EP its predecessor is placed on, when the window places the predecessor (it follows there).
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
    check_choice(name, "short", short, SHORT)
    k = k or default_k(view.D)
    if short == "predecessor":
        return _gs_following(view, k, followers(view, merge_threshold_s), score)
    groups = merge_short_ops(view, merge_threshold_s)
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



def _best_assignment(state: PlanState, batch: list[int], caps: list[list[int]], place, score: str):
    """Every assignment of the batch's units to their EPs, replayed (``place(unit, d)`` appends
    a unit and returns its finish), rolled back; the best by (score, sum of finishes), the first
    in enumeration order on ties. Returns it and how many were tried."""
    best_key: tuple | None = None
    best_assign: tuple[int, ...] = ()
    tried = 0
    for assign in itertools.product(*caps):
        mark = state.mark()
        finishes = [place(u, d) for u, d in zip(batch, assign, strict=True)]
        state.rollback(mark)
        tried += 1
        key = (max(finishes) if score == "max" else sum(finishes), sum(finishes))
        if best_key is None or key < best_key:
            best_key, best_assign = key, assign
    return best_assign, tried


def _gs_following(view: SchedView, k: int, follow: list[dict[int, list[int]]], score: str) -> Plan:
    """HOPE:GS with "short" measured on the predecessor's EP: Algorithm 2 over ops; placing an op
    on EP d places its followers on d right after it (recursively), and a batch op's completion
    is that of its last follower. An op becomes ready when all its predecessors are placed, its
    EST the latest of their finishes (§3.1)."""
    state = PlanState(view)
    n = view.n
    placed = [False] * n
    waiting = [len(p) for p in view.preds]
    est = [0.0] * n
    ready = [i for i in range(n) if not waiting[i]]
    batches = evaluated = followed = 0

    def place(i: int, d: int, trace: list[int] | None = None) -> float:
        f = state.append(i, d)
        if trace is not None:
            trace.append(i)
        for j in follow[i].get(d, ()):
            f = place(j, d, trace)
        return f

    while ready:
        ready.sort(key=lambda i: (est[i], i))
        batch, ready = ready[:k], ready[k:]
        best, tried = _best_assignment(state, batch, [view.capable[i] for i in batch], place, score)
        evaluated += tried
        trace: list[int] = []
        for i, d in zip(batch, best, strict=True):
            place(i, d, trace)
        state.commit()
        batches += 1
        followed += len(trace) - len(batch)
        for i in trace:
            placed[i] = True
        for i in trace:
            for s in view.succs[i]:
                waiting[s] -= 1
                if not waiting[s] and not placed[s]:
                    est[s] = max(state.fin[p] for p in view.preds[s])
                    ready.append(s)
    return Plan.of(state, k=k, batches=batches, assignments_tried=evaluated, followed_ops=followed)
