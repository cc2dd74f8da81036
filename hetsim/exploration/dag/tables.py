"""What DAG schedulers read and how they try a plan: the cost tables of a placement problem, an
incremental replay of a plan with the engine's exact semantics, and the plan a scheduler returns.

:class:`SchedView` is a :class:`~hetsim.exploration.placement.PlacementProblem` seen as a
scheduling instance (HOPE's system model, docs/papers/hope.md): ops in the workload's topological
order with their predecessors and successors, ``cl[i][d]`` (the time of op i on EP d; inf where d
cannot run it), and ``C(i, a, d)``, the time to move op i's output tensor from EP a to EP d, as
the DAG engine prices it (:func:`hetsim.tasks.build_tasks`: a measured copy, else the cost
model's ``transfer_time``; nothing for an empty tensor or on one EP). :meth:`SchedView.of_graph`
builds the same tables from a networkx DAG whose nodes carry their times, without a platform.

:class:`PlanState` appends ops to the EPs' queues one at a time and computes each op's start and
finish exactly as the engine's closed form (:func:`hetsim.tasks.list_schedule`) will when it
replays the plan: one lane per EP in plan order, a tensor crossing to an EP once (``caching``),
its transfer on the consumer's lane (``comm="consumer"``), on a copy lane (``"copy"``) or on none
(``"free"``), one op at a time for a ``sequential`` plan. A scheduler that scores its choices with
it predicts the engine's latency of its plan to the last bit (a tested property). Trials are undone
through a journal (:meth:`PlanState.mark`, :meth:`PlanState.rollback`).

A scheduler is a function ``f(view, **params) -> Plan`` (saga's ``schedule(network, task_graph)``,
on hetsim's tables); :class:`~hetsim.exploration.dag.explorer.DagScheduler` makes it an explorer.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
import numpy as np

from hetsim.errors import HetsimError

#: How a transfer occupies the EPs (:class:`hetsim.evaluation.DagOptions`).
COMMS = ("consumer", "copy", "free")


class SchedView:
    """The tables of one placement problem (module docstring): ``names``, ``preds``, ``succs``
    (indices, predecessors in the graph's order: the order in which the engine fetches inputs),
    ``eps``, ``accelerator`` (per EP), ``cl`` (ops x EPs, s), ``capable`` (per op, the EPs that can
    run it), ``C(i, a, d)``, the engine's ``comm`` and ``caching``; ``problem`` (None for a view
    built from a graph) and ``name`` (what error messages call it)."""

    def __init__(self, problem) -> None:
        if getattr(problem, "kind", None) != "placement":
            raise HetsimError(f"DAG schedulers need a PlacementProblem, got {type(problem).__name__}")
        dag = problem.dag
        if dag.serial:
            raise HetsimError(f"{problem.name}: DagOptions(serial=True) runs every task on one lane in the "
                              "workload's order, whatever the plan says: there is nothing to schedule "
                              "(use serial=False)")
        w = problem.workload
        g = w.graph
        names: list[str] = list(problem.ops)
        index = {n: i for i, n in enumerate(names)}
        self._setup(names, [[index[p] for p in g.predecessors(n)] for n in names],
                    [[index[s] for s in g.successors(n)] for n in names], list(problem.eps),
                    [bool(ep.accelerator) for ep in problem.ep_objects],
                    np.asarray(problem.op_times(), dtype=float), dag.comm, dag.caching, problem.name, problem)
        for i, devs in enumerate(self.capable):
            if not devs:
                op = w.op(self.names[i])
                raise HetsimError(f"{problem.name}: op {op.name} (kind {op.kind}) can run on none of the "
                                  f"EPs {', '.join(self.eps)}; add an EP that supports it")
        self._comm = self._comm_tables()

    def _setup(self, names, preds, succs, eps, accelerator, cl, comm, caching, name, problem) -> None:
        self.problem = problem
        self.name: str = name
        self.comm, self.caching = comm, caching
        self.names: list[str] = names
        self.index = {n: i for i, n in enumerate(names)}
        self.preds: list[list[int]] = preds
        self.succs: list[list[int]] = succs
        self.eps: list[str] = eps
        self.accelerator: list[bool] = accelerator
        self.D = len(eps)
        self.cl: np.ndarray = cl
        self.cl_list: list[list[float]] = cl.tolist()
        self.capable: list[list[int]] = [[d for d in range(self.D) if math.isfinite(self.cl_list[i][d])]
                                         for i in range(len(names))]

    @classmethod
    def of_graph(cls, graph: nx.DiGraph, eps: Sequence[str], accelerators: Sequence[str] = (),
                 comm: str = "consumer", caching: bool = True, name: str = "graph") -> SchedView:
        """The tables of a networkx DAG (saga's task graph, hetsim's tables): node attribute
        ``time_s``, a mapping EP -> seconds (an EP it lacks, or inf, cannot run the op), and
        optionally ``transfer_s``, the time to move the node's output between two distinct EPs:
        one number for every pair, or a mapping (src EP, dst EP) -> seconds (missing pairs: 0).
        Ops are numbered in the graph's node order if it is topological, else in networkx's
        topological order. ``accelerators`` names the EPs that ``"gpu"`` stands for."""
        if comm not in COMMS:
            raise HetsimError(f"{name}: comm={comm!r}; allowed: {', '.join(COMMS)}")
        if not nx.is_directed_acyclic_graph(graph):
            raise HetsimError(f"{name}: the task graph has a cycle")
        nodes: list[Hashable] = list(graph.nodes)
        pos = {v: i for i, v in enumerate(nodes)}
        if any(pos[u] > pos[v] for u, v in graph.edges):
            nodes = list(nx.topological_sort(graph))
            pos = {v: i for i, v in enumerate(nodes)}
        eps = [str(e) for e in eps]
        if not eps or len(set(eps)) != len(eps):
            raise HetsimError(f"{name}: eps={list(eps)}; allowed: distinct EP names, at least one")
        cl = np.full((len(nodes), len(eps)), math.inf)
        for i, v in enumerate(nodes):
            times = graph.nodes[v].get("time_s")
            if not isinstance(times, Mapping):
                raise HetsimError(f"{name}: node {v!r} needs a time_s attribute, a mapping EP -> seconds")
            for d, e in enumerate(eps):
                t = float(times.get(e, math.inf))
                if not t >= 0:
                    raise HetsimError(f"{name}: node {v!r}: time_s[{e!r}]={t}; allowed: a time >= 0 (s) or inf")
                cl[i, d] = t
        view = cls.__new__(cls)
        view._setup([str(v) for v in nodes], [[pos[p] for p in graph.predecessors(v)] for v in nodes],
                    [[pos[s] for s in graph.successors(v)] for v in nodes], eps,
                    [e in set(accelerators) for e in eps], cl, comm, bool(caching), name, None)
        for i, devs in enumerate(view.capable):
            if not devs:
                raise HetsimError(f"{name}: node {nodes[i]!r} can run on none of the EPs {', '.join(eps)}")
        view._comm = [view._graph_comm(graph.nodes[v].get("transfer_s", 0.0), v) if view.succs[i] else None
                      for i, v in enumerate(nodes)]
        return view

    def _graph_comm(self, spec: Any, node) -> list[list[float]]:
        D = self.D
        table = [[0.0] * D for _ in range(D)]
        for a in range(D):
            for d in range(D):
                if a == d:
                    continue
                t = float(spec.get((self.eps[a], self.eps[d]), 0.0)) if isinstance(spec, Mapping) else float(spec)
                if not (t >= 0 and math.isfinite(t)):
                    raise HetsimError(f"{self.name}: node {node!r}: transfer_s={t}; allowed: a finite time >= 0 (s)")
                table[a][d] = t
        return table

    @property
    def n(self) -> int:
        return len(self.names)

    def _comm_tables(self) -> list[list[list[float]] | None]:
        """C[i][a][d] for every op whose output some other op reads (None for sinks), memoised by
        tensor size (one price per size, as HOPE benchmarks each distinct shape once)."""
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

    def ep_index(self, spec: str, owner: str, param: str) -> int:
        """An EP named by ``spec``: ``"cpu"`` the first that is not an accelerator (a CPU cluster),
        ``"gpu"`` the first accelerator, else an EP name."""
        if spec in ("cpu", "gpu"):
            want = spec == "gpu"
            for d, accelerator in enumerate(self.accelerator):
                if accelerator == want:
                    return d
            kind = "accelerator" if want else "CPU cluster"
            raise HetsimError(f"{self.name}: the problem's EPs ({', '.join(self.eps)}) include no {kind}")
        if spec not in self.eps:
            raise HetsimError(f"{owner}: {param}={spec!r}; allowed: 'cpu', 'gpu' or one of the problem's EPs "
                              f"({', '.join(self.eps)})")
        return self.eps.index(spec)

    def placement(self, plan: Plan):
        """The :class:`~hetsim.mapping.Placement` of a plan (of this view's problem)."""
        if self.problem is None:
            raise HetsimError(f"{self.name}: a view built from a graph has no problem to place a plan on")
        order = None
        if plan.order is not None:
            order = {self.eps[d]: [self.names[i] for i in ops] for d, ops in enumerate(plan.order) if ops}
        splits = None
        if plan.splits:
            splits = {self.names[i]: {self.eps[h]: frac, self.eps[o]: 1.0 - frac}
                      for i, (h, o, frac) in plan.splits.items()}
        return self.problem.placement([int(d) for d in plan.dev], order=order, splits=splits,
                                      sequential=plan.sequential)


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


# -- super-ops -------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Groups:
    """Ops clustered into super-ops (HOPE's node merging builds them): ``members[g]`` (topological
    order, the root first), ``of[i]`` the super-op of op i, and the super-op graph (``preds``,
    ``succs``), in the order of the roots."""

    members: list[list[int]]
    of: list[int]
    preds: list[list[int]]
    succs: list[list[int]]

    @property
    def n(self) -> int:
        return len(self.members)


def group_times(view: SchedView, groups: Groups) -> np.ndarray:
    """cl of every super-op on every EP: the sum of its members' (inf where one cannot run)."""
    return np.array([view.cl[m].sum(axis=0) for m in groups.members]).reshape(groups.n, view.D)


@dataclass
class Plan:
    """A scheduler's output: the EP of every op, each EP's ops in execution order (None: the
    workload's order), whether the ops run one at a time, the makespan the scheduler predicts
    (None: it has no model of it) and what else it reports (``info``)."""

    dev: list[int]
    order: list[list[int]] | None
    sequential: bool = False
    predicted_s: float | None = None
    info: dict = field(default_factory=dict)
    #: Every op's start when the engine runs the plan (None: the scheduler does not know).
    start_s: list[float] | None = None
    #: Ops divided by channel over two EPs: op -> (home EP, other EP, home's fraction); the
    #: slices are gathered on the home EP (``dev``).
    splits: dict[int, tuple[int, int, float]] | None = None

    @classmethod
    def of(cls, state: PlanState, **info) -> Plan:
        """The plan a :class:`PlanState` built, its makespan as the prediction."""
        return cls(list(state.dev), [list(o) for o in state.order], state.sequential, state.makespan,
                   dict(info), list(state.start))
