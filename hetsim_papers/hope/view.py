"""What DAG schedulers read and how they try a placement: HOPE's cl and C tables, super-ops, and
an incremental replay of a plan with the engine's exact semantics.

:class:`SchedView` is a :class:`~hetsim.exploration.placement.PlacementProblem` seen as HOPE's
system model (digest §1): ops in the workload's topological order, ``cl[i][d]`` (inf where EP d
cannot run op i), and ``C(i, a, d)``, the time to move op i's output tensor from EP a to EP d, as
the DAG engine prices it (:func:`hetsim.tasks.build_tasks`: a measured copy, else the cost
model's ``transfer_time``; nothing for an empty tensor or on one EP).

:class:`PlanState` appends ops to the EPs' queues one at a time and computes each op's start and
finish exactly as the engine's closed form (:func:`hetsim.tasks.list_schedule`) will when it
replays the plan: one lane per EP in plan order, a tensor crossing to an EP once (``caching``),
its transfer on the consumer's lane (``comm="consumer"``), on a copy lane (``"copy"``) or on none
(``"free"``), one op at a time for a ``sequential`` plan. A scheduler that scores its choices with
it predicts the engine's latency of its plan to the last bit (a tested property). Trials are undone
through a journal (:meth:`PlanState.mark`, :meth:`PlanState.rollback`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hetsim.errors import HetsimError


class SchedView:
    """HOPE's tables for one placement problem (module docstring)."""

    def __init__(self, problem) -> None:
        if getattr(problem, "kind", None) != "placement":
            raise HetsimError(f"DAG schedulers need a PlacementProblem, got {type(problem).__name__}")
        dag = problem.dag
        if dag.serial:
            raise HetsimError(f"{problem.name}: DagOptions(serial=True) runs every task on one lane in the "
                              "workload's order, whatever the plan says: there is nothing to schedule "
                              "(use serial=False)")
        self.problem = problem
        self.comm, self.caching = dag.comm, dag.caching
        w = problem.workload
        self.names: list[str] = list(problem.ops)
        self.index = {n: i for i, n in enumerate(self.names)}
        g = w.graph
        # Predecessors in the graph's order: the order in which the engine fetches inputs.
        self.preds: list[list[int]] = [[self.index[p] for p in g.predecessors(n)] for n in self.names]
        self.succs: list[list[int]] = [[self.index[s] for s in g.successors(n)] for n in self.names]
        self.eps: list[str] = list(problem.eps)
        self.D = len(self.eps)
        self.cl: np.ndarray = np.asarray(problem.op_times(), dtype=float)
        self.cl_list: list[list[float]] = self.cl.tolist()
        self.capable: list[list[int]] = [[d for d in range(self.D) if math.isfinite(self.cl_list[i][d])]
                                         for i in range(len(self.names))]
        for i, devs in enumerate(self.capable):
            if not devs:
                op = w.op(self.names[i])
                raise HetsimError(f"{problem.name}: op {op.name} (kind {op.kind}) can run on none of the "
                                  f"EPs {', '.join(self.eps)}; add an EP that supports it")
        self._comm = self._comm_tables()

    @property
    def n(self) -> int:
        return len(self.names)

    def _comm_tables(self) -> list[list[list[float]] | None]:
        """C[i][a][d] for every op whose output some other op reads (None for sinks), memoised by
        tensor size: HOPE benchmarks each distinct shape once (digest §5.2)."""
        p = self.problem
        cost, eps = p.cost, p.ep_objects
        memo: dict[float, list[list[float]]] = {}
        out: list[list[list[float]] | None] = []
        for i, name in enumerate(self.names):
            if not self.succs[i]:
                out.append(None)
                continue
            nbytes = float(p.workload.op(name).output_bytes)
            table = memo.get(nbytes)
            if table is None:
                table = [[0.0] * self.D for _ in range(self.D)]
                if nbytes > 0:
                    for a in range(self.D):
                        for d in range(self.D):
                            if eps[a].name == eps[d].name:
                                continue
                            measured = cost.measured_transfer_s(nbytes, eps[a], eps[d])
                            t = measured if measured is not None else cost.transfer_time(nbytes, eps[a], eps[d])
                            table[a][d] = max(float(t), 0.0)
                memo[nbytes] = table
            out.append(table)
        return out

    def C(self, i: int, a: int, d: int) -> float:
        """Time to move op i's output from EP a to EP d, s (0 on one EP)."""
        table = self._comm[i]
        return table[a][d] if table is not None else 0.0

    def comm_table(self, i: int) -> list[list[float]]:
        """C[i][a][d] over all EP pairs (zeros for an op nobody reads)."""
        table = self._comm[i]
        return table if table is not None else [[0.0] * self.D for _ in range(self.D)]

    def placement(self, dev: Sequence[int], order: Sequence[Sequence[int]] | None = None,
                  sequential: bool = False):
        """The :class:`~hetsim.mapping.Placement` of a plan: EP index per op, and each EP's ops in
        execution order (indices)."""
        plan = None
        if order is not None:
            plan = {self.eps[d]: [self.names[i] for i in ops] for d, ops in enumerate(order) if ops}
        return self.problem.placement([int(d) for d in dev], order=plan, sequential=sequential)


@dataclass
class PlanState:
    """A plan under construction, replayed exactly as the engine will (module docstring).

    ``append(i, d)`` puts op i at the end of EP d's queue; its predecessors must be placed.
    """

    view: SchedView
    sequential: bool = False
    dev: list[int] = field(init=False)
    start: list[float] = field(init=False)
    fin: list[float] = field(init=False)
    avail: list[float] = field(init=False)        # each EP lane's free time
    copy_avail: list[float] = field(init=False)   # each copy lane's free time (comm="copy")
    order: list[list[int]] = field(init=False)
    last_fin: float = 0.0                         # sequential: the finish of the op appended last
    cache: dict = field(init=False)               # (tensor op, EP) or (tensor, EP, consumer) -> arrival
    _journal: list = field(init=False)

    def __post_init__(self) -> None:
        n, D = self.view.n, self.view.D
        self.dev = [-1] * n
        self.start = [0.0] * n
        self.fin = [0.0] * n
        self.avail = [0.0] * D
        self.copy_avail = [0.0] * D
        self.order = [[] for _ in range(D)]
        self.cache = {}
        self._journal = []

    # -- trials ----------------------------------------------------------------------------------
    def mark(self) -> int:
        return len(self._journal)

    def rollback(self, mark: int) -> None:
        """Undo every append since ``mark``."""
        j = self._journal
        while len(j) > mark:
            kind, a, b = j.pop()
            if kind == "avail":
                self.avail[a] = b
            elif kind == "copy":
                self.copy_avail[a] = b
            elif kind == "cache":
                del self.cache[a]
            elif kind == "op":
                self.dev[a] = -1
                self.order[b].pop()
            elif kind == "last":
                self.last_fin = b

    def commit(self) -> None:
        """Forget the journal (appends so far can no longer be undone)."""
        self._journal.clear()

    # -- appending ---------------------------------------------------------------------------------
    def arrival(self, i: int, d: int) -> float:
        """When op i's inputs would all be on EP d, without changing anything (transfers not yet
        made are assumed to start when their producer finishes: a lower bound)."""
        ready = self.last_fin if self.sequential else 0.0
        for p in self.view.preds[i]:
            c, key, got = self._copy(i, p, d)
            ready = max(ready, self.fin[p] if key is None else
                        got if got is not None else self.fin[p] + c)
        return ready

    def _copy(self, i: int, p: int, d: int) -> tuple[float, tuple | None, float | None]:
        """Op p's output read by op i on EP d: the transfer time (s), the copy's cache key (None
        when no transfer is needed) and when a copy made earlier landed on d (None: not yet)."""
        v = self.view
        dp = self.dev[p]
        c = v.C(p, dp, d) if dp != d else 0.0
        if c <= 0.0:
            return c, None, None
        key = (p, d) if v.caching else (p, d, i)
        return c, key, self.cache.get(key)

    def append(self, i: int, d: int) -> float:
        """Put op i last on EP d; returns its finish time (s)."""
        v = self.view
        j = self._journal
        comm = v.comm
        barrier = self.last_fin if self.sequential else 0.0
        ready = barrier
        for p in v.preds[i]:
            if self.dev[p] < 0:
                raise HetsimError(f"plan: {v.names[i]} is placed before its input {v.names[p]}")
            c, key, got = self._copy(i, p, d)
            if key is None:
                ready = max(ready, self.fin[p])
                continue
            if got is None:
                t0 = max(self.fin[p], barrier)
                if comm == "consumer":
                    t0 = max(t0, self.avail[d])
                    j.append(("avail", d, self.avail[d]))
                    self.avail[d] = t0 + c
                elif comm == "copy":
                    t0 = max(t0, self.copy_avail[d])
                    j.append(("copy", d, self.copy_avail[d]))
                    self.copy_avail[d] = t0 + c
                got = t0 + c
                self.cache[key] = got
                j.append(("cache", key, None))
            ready = max(ready, got)
        s = max(self.avail[d], ready)
        f = s + v.cl_list[i][d]
        j.append(("avail", d, self.avail[d]))
        self.avail[d] = f
        self.dev[i] = d
        self.start[i], self.fin[i] = s, f
        self.order[d].append(i)
        j.append(("op", i, d))
        if self.sequential:
            j.append(("last", 0, self.last_fin))
            self.last_fin = f
        return f

    @property
    def makespan(self) -> float:
        placed = [self.fin[i] for i in range(self.view.n) if self.dev[i] >= 0]
        return max(placed, default=0.0)


# -- super-ops (HOPE §3.2) ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Groups:
    """Ops merged into super-ops: ``members[g]`` (topological order, the root first), ``of[i]`` the
    super-op of op i, and the super-op graph (``preds``, ``succs``), in the order of the roots."""

    members: list[list[int]]
    of: list[int]
    preds: list[list[int]]
    succs: list[list[int]]

    @property
    def n(self) -> int:
        return len(self.members)


def merge_short_ops(view: SchedView, threshold_s: float | None) -> Groups:
    """HOPE's node merging (§3.2, digest §4.4): an op that is *short* (its time on the fastest EP
    that can run it is below ``threshold_s``) and has exactly one predecessor joins its
    predecessor's super-op, provided some EP can run the whole super-op. ``None`` merges nothing.

    Every member but the root has its one predecessor inside the super-op, so every edge entering
    a super-op enters at its root and the super-op graph stays acyclic."""
    n = view.n
    of = list(range(n))
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    capable = [set(c) for c in view.capable]
    group_cap = {i: set(capable[i]) for i in range(n)}
    if threshold_s is not None:
        for i in range(n):
            preds = view.preds[i]
            if len(preds) != 1:
                continue
            if min(view.cl_list[i][d] for d in view.capable[i]) >= threshold_s:
                continue
            g = of[preds[0]]
            common = group_cap[g] & capable[i]
            if not common:
                continue
            members[g].append(i)
            del members[i]
            group_cap[g] = common
            of[i] = g
    roots = sorted(members)
    gid = {r: k for k, r in enumerate(roots)}
    of_g = [gid[of[i]] for i in range(n)]
    preds_g: list[list[int]] = [[] for _ in roots]
    succs_g: list[list[int]] = [[] for _ in roots]
    for i in range(n):
        for s in view.succs[i]:
            a, b = of_g[i], of_g[s]
            if a != b and b not in succs_g[a]:
                succs_g[a].append(b)
                preds_g[b].append(a)
    return Groups([members[r] for r in roots], of_g, preds_g, succs_g)


def group_times(view: SchedView, groups: Groups) -> np.ndarray:
    """cl of every super-op on every EP: the sum of its members' (inf where one cannot run)."""
    return np.array([view.cl[m].sum(axis=0) for m in groups.members]).reshape(groups.n, view.D)


@dataclass
class Plan:
    """A scheduler's output: the EP of every op, each EP's ops in execution order, whether the ops
    run one at a time, the makespan the scheduler predicts (None: it has no model of it) and what
    else it reports (``info``)."""

    dev: list[int]
    order: list[list[int]]
    sequential: bool = False
    predicted_s: float | None = None
    info: dict = field(default_factory=dict)
    #: Every op's start when the engine runs the plan (None: the scheduler does not know).
    start_s: list[float] | None = None

    @classmethod
    def of(cls, state: PlanState, **info) -> Plan:
        """The plan a :class:`PlanState` built, its makespan as the prediction."""
        return cls(list(state.dev), [list(o) for o in state.order], state.sequential, state.makespan,
                   dict(info), list(state.start))
