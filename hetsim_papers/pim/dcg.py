"""The Device-mapped Computational Graph (DCG) of the PIM paper (seed 003, §3.1-3.2).

For a computational graph CG(V_c, E_c) of operators in topological order and n devices, the DCG
has a node v_i for every operator v and every device i that can run it (incapable nodes are
absent), and a dashed edge for every copy the graph may need: a tensor from a device that can
produce it to another device on which one of its consumers can run. A copy's cost is fixed by its
*Distinct-Attribute* (DA) class, (data type, bytes, source device, destination device), so one
representative per class needs profiling. START and END are implicit: inputs come from, and
outputs stay where they are at, no cost (§2.3; docs/papers/pim.md).

Everything here is arrays over operator indices (the *stations* of the assembly-line DP, in
topological order) and device indices (its *lines*)::

    dcg = Dcg.from_problem(problem)            # a PlacementProblem on pim-zynq
    dcg.counts()                               # V_c, E_c, V_d, E_d, DA (Tables 1 and 3)
    dcg.latency(assignment)                    # (compute_s, transfer_s) of one device per op

The latency is the paper's sequential model (§1.1): every op's time on its device plus the
copies the assignment makes, counted in one of two ways (``copies``):

* ``"memory"`` (the executor, default): a tensor is copied once to each memory space that holds a
  consumer (ONNX Runtime inserts one copy per tensor and destination; CPU_S and CPU_P share the
  cacheable memory, so nothing moves between them), priced to the first such consumer's device in
  topological order. ``DagOptions(serial=True, caching=True, residency="memory")`` makes the DAG
  engine agree exactly.
* ``"edge"`` (the DP's model): every dashed edge, once per (producer, consumer) pair
  (``DagOptions(serial=True, caching=False)``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from hetsim.errors import HetsimError


@dataclass(frozen=True)
class DaClass:
    """A Distinct-Attribute class of dashed edges (paper §3.2.1)."""

    dtype: str
    nbytes: int
    src: str
    dst: str

    def __str__(self) -> str:
        return f"{self.dtype} {self.nbytes} B {self.src}->{self.dst}"


@dataclass(frozen=True)
class DcgCounts:
    """Table 1 / Table 3 quantities: CG and DCG sizes, DA classes, execution paths."""

    V_c: int
    E_c: int
    V_d: int
    E_d: int
    DA: int
    log3_paths: float


@dataclass
class Dcg:
    """A DCG over ``ops`` (topological order) and ``devices``.

    ``cap[j]`` are the device indices op j can run on (ascending), ``preds[j]`` its CG predecessors
    (op indices < j), ``node_s[j, d]`` its time on device d (inf where incapable), ``edge_s[j]`` the
    n x n matrix of times to copy op j's output from device a to device b (0 on the diagonal),
    ``nbytes[j]``/``dtype[j]`` its output tensor, ``memory[d]`` the memory space of device d.
    """

    ops: tuple[str, ...]
    devices: tuple[str, ...]
    cap: list[tuple[int, ...]]
    preds: list[tuple[int, ...]]
    node_s: np.ndarray
    edge_s: np.ndarray
    nbytes: np.ndarray
    dtype: tuple[str, ...]
    name: str = "dcg"
    memory: tuple[str, ...] = ()
    _da: tuple[list[DaClass], dict[tuple[int, int, int], int]] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        m, n = len(self.ops), len(self.devices)
        if self.node_s.shape != (m, n) or self.edge_s.shape != (m, n, n):
            raise HetsimError(f"{self.name}: cost arrays of shape {self.node_s.shape} / "
                              f"{self.edge_s.shape}; allowed: ({m}, {n}) and ({m}, {n}, {n})")
        for j, ps in enumerate(self.preds):
            if any(not 0 <= k < j for k in ps):
                raise HetsimError(f"{self.name}: op {self.ops[j]!r} reads an op that does not come "
                                  "before it; allowed: operators in a topological order (no cycle)")
        for j, c in enumerate(self.cap):
            if not c:
                raise HetsimError(f"{self.name}: op {self.ops[j]!r} can run on none of the devices "
                                  f"{list(self.devices)}; allowed: every op capable somewhere")
        self.succs: list[list[int]] = [[] for _ in range(m)]
        for j, ps in enumerate(self.preds):
            for k in ps:
                self.succs[k].append(j)
        self.edges = np.array([(k, j) for j, ps in enumerate(self.preds) for k in ps],
                              dtype=np.int64).reshape(-1, 2)
        if not self.memory:
            self.memory = tuple(f"mem:{d}" for d in self.devices)   # every device its own memory
        if len(self.memory) != n:
            raise HetsimError(f"{self.name}: {len(self.memory)} memories for {n} devices")
        spaces = list(dict.fromkeys(self.memory))
        self.mem_index = np.array([spaces.index(x) for x in self.memory], dtype=np.int64)
        self.n_memories = len(spaces)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_problem(cls, problem, devices: Sequence[str] | None = None) -> Dcg:
        """The DCG of a :class:`~hetsim.exploration.PlacementProblem`: its ops in workload order (a
        topological order), its EPs as devices (or the subset ``devices``), capability and node
        costs from ``op_times()``, copy costs from ``transfer_time``."""
        names = list(problem.eps) if devices is None else list(devices)
        unknown = [d for d in names if d not in problem.eps]
        if unknown or not names:
            raise HetsimError(f"{problem.name}: devices {names}: allowed: a non-empty subset of "
                              f"{list(problem.eps)}")
        cols = [problem.eps.index(d) for d in names]
        times = np.asarray(problem.op_times())[:, cols]
        workload = problem.workload
        ops = [op.name for op in workload.ops]
        index = {o: i for i, o in enumerate(ops)}
        g = workload.graph
        preds = [tuple(sorted(index[p] for p in g.predecessors(o))) for o in ops]
        n = len(names)
        edge = np.zeros((len(ops), n, n))
        eps = [problem.platform.ep(d) for d in names]
        cost = problem.cost
        for j, op in enumerate(workload.ops):
            if not g.out_degree(op.name) or op.output_bytes <= 0:
                continue
            for a in range(n):
                for b in range(n):
                    if a != b:
                        measured = cost.measured_transfer_s(op.output_bytes, eps[a], eps[b])
                        edge[j, a, b] = (measured if measured is not None else
                                         cost.transfer_time(op.output_bytes, eps[a], eps[b]))
        cap = [tuple(int(d) for d in np.flatnonzero(np.isfinite(times[j]))) for j in range(len(ops))]
        return cls(tuple(ops), tuple(names), cap, preds, times, edge,
                   np.array([op.output_bytes for op in workload.ops], dtype=np.int64),
                   tuple(op.dtype for op in workload.ops), name=problem.name,
                   memory=tuple(ep.memory for ep in eps))

    @classmethod
    def from_graph(cls, graph: nx.DiGraph, devices: Sequence[str], cap: Mapping[str, Iterable[str]],
                   node_s: Mapping[str, Mapping[str, float]] | None = None,
                   nbytes: Mapping[str, int] | None = None,
                   copy_s: Mapping[tuple[int, str, str], float] | None = None,
                   name: str = "graph", memory: Sequence[str] = ()) -> Dcg:
        """A DCG from a networkx DAG (toy graphs, tests): ``cap[op]`` device names, ``node_s[op][dev]``
        times (default 1), ``nbytes[op]`` output sizes (default 1), ``copy_s[(bytes, src, dst)]``
        copy times (default 1 s per dashed edge), ``memory`` the memory of each device (default:
        one each). Ops take the graph's topological order (ties by insertion order); a cycle is an
        error."""
        if not nx.is_directed_acyclic_graph(graph):
            cycle = nx.find_cycle(graph)
            raise HetsimError(f"{name}: the graph has a cycle ({' -> '.join(str(u) for u, _ in cycle)}); "
                              "allowed: a DAG")
        order = list(nx.lexicographical_topological_sort(
            graph, key={v: i for i, v in enumerate(graph.nodes)}.__getitem__))
        index = {v: i for i, v in enumerate(order)}
        dev_index = {d: i for i, d in enumerate(devices)}
        m, n = len(order), len(devices)
        times = np.full((m, n), np.inf)
        caps = []
        for j, v in enumerate(order):
            c = tuple(sorted(dev_index[d] for d in cap[v]))
            caps.append(c)
            for d in c:
                times[j, d] = (node_s or {}).get(v, {}).get(devices[d], 1.0)
        sizes = np.array([(nbytes or {}).get(v, 1) for v in order], dtype=np.int64)
        edge = np.zeros((m, n, n))
        for j in range(m):
            for a in range(n):
                for b in range(n):
                    if a != b:
                        edge[j, a, b] = (copy_s or {}).get((int(sizes[j]), devices[a], devices[b]), 1.0)
        preds = [tuple(sorted(index[u] for u in graph.predecessors(v))) for v in order]
        return cls(tuple(str(v) for v in order), tuple(devices), caps, preds, times, edge, sizes,
                   ("float32",) * m, name=name, memory=tuple(memory))

    def with_costs(self, node_s: np.ndarray | None = None, edge_s: np.ndarray | None = None) -> Dcg:
        """The same graph with other node and/or copy times (same shapes; nothing recomputed)."""
        out = copy.copy(self)
        if node_s is not None:
            if node_s.shape != self.node_s.shape:
                raise HetsimError(f"{self.name}: node times of shape {node_s.shape}; allowed: {self.node_s.shape}")
            out.node_s = node_s
        if edge_s is not None:
            if edge_s.shape != self.edge_s.shape:
                raise HetsimError(f"{self.name}: copy times of shape {edge_s.shape}; allowed: {self.edge_s.shape}")
            out.edge_s = edge_s
        return out

    # -- sizes and classes ------------------------------------------------------------------------
    @property
    def n_ops(self) -> int:
        return len(self.ops)

    @property
    def n_devices(self) -> int:
        return len(self.devices)

    def copy_destinations(self, j: int) -> set[int]:
        """Devices op j's output may have to be copied to: where any consumer can run."""
        out: set[int] = set()
        for s in self.succs[j]:
            out.update(self.cap[s])
        return out

    def da_classes(self) -> tuple[list[DaClass], dict[tuple[int, int, int], int]]:
        """The DA classes in order of first appearance (ops in topological order, then source and
        destination device), and the class of every dashed copy (op, src, dst)."""
        if self._da is None:
            classes: list[DaClass] = []
            ids: dict[DaClass, int] = {}
            of_copy: dict[tuple[int, int, int], int] = {}
            for j in range(self.n_ops):
                if self.nbytes[j] <= 0:
                    continue
                dests = self.copy_destinations(j)
                for a in self.cap[j]:
                    for b in sorted(dests - {a}):
                        key = DaClass(self.dtype[j], int(self.nbytes[j]), self.devices[a], self.devices[b])
                        if key not in ids:
                            ids[key] = len(classes)
                            classes.append(key)
                        of_copy[(j, a, b)] = ids[key]
            self._da = (classes, of_copy)
        return self._da

    def counts(self) -> DcgCounts:
        """V_c, E_c (data dependencies between ops), V_d (sum of |cap|, START/END not counted), E_d
        (dashed copies: tensor, source, destination), the DA classes and log3 of the paths."""
        classes, of_copy = self.da_classes()
        log3 = float(sum(np.log(len(c)) / np.log(3) for c in self.cap))
        return DcgCounts(self.n_ops, len(self.edges), sum(len(c) for c in self.cap), len(of_copy),
                         len(classes), log3)

    # -- the sequential model ----------------------------------------------------------------------
    def check(self, assignment: Sequence[int] | np.ndarray) -> np.ndarray:
        a = np.asarray(assignment, dtype=np.int64)
        if a.shape != (self.n_ops,):
            raise HetsimError(f"{self.name}: an assignment needs one device per op ({self.n_ops}), "
                              f"got {a.shape}")
        bad = [j for j in range(self.n_ops) if int(a[j]) not in self.cap[j]]
        if bad:
            j = bad[0]
            raise HetsimError(f"{self.name}: op {self.ops[j]!r} on device {int(a[j])}; allowed: "
                              f"{[self.devices[d] for d in self.cap[j]]}")
        return a

    def latency(self, assignment: Sequence[int] | np.ndarray, copies: str = "memory") -> tuple[float, float]:
        """(compute s, transfer s) of one inference with op j on device ``assignment[j]``: the
        sequential model, copies counted per memory space or per edge (module docstring)."""
        a = self.check(assignment)
        compute = float(self.node_s[np.arange(self.n_ops), a].sum())
        if not len(self.edges):
            return compute, 0.0
        u, v = self.edges[:, 0], self.edges[:, 1]
        cost = self.edge_s[u, a[u], a[v]]
        if copies == "edge":
            return compute, float(cost.sum())
        if copies != "memory":
            raise HetsimError(f"{self.name}: copies={copies!r}; allowed: 'memory', 'edge'")
        mu, mv = self.mem_index[a[u]], self.mem_index[a[v]]
        moved = np.flatnonzero(mu != mv)
        if not len(moved):
            return compute, 0.0
        # One copy per (tensor, destination memory), priced to its first consumer (edges are in
        # consumer order, so np.unique's first index is that consumer).
        _, first = np.unique(u[moved] * self.n_memories + mv[moved], return_index=True)
        return compute, float(cost[moved[first]].sum())

    def total(self, assignment: Sequence[int] | np.ndarray, copies: str = "memory") -> float:
        c, t = self.latency(assignment, copies)
        return c + t

    def copies(self, assignment: Sequence[int] | np.ndarray) -> set[int]:
        """The DA classes an assignment's run exposes (every copy it makes)."""
        a = self.check(assignment)
        _, of_copy = self.da_classes()
        return {of_copy[(k, int(a[k]), int(a[j]))] for k, j in self.edges if a[k] != a[j]
                and (k, int(a[k]), int(a[j])) in of_copy}

    # -- windows (Fig. 13) -------------------------------------------------------------------------
    def window(self, start: int, length: int, host: int = 0) -> Dcg:
        """The sub-DCG of ops ``start .. start+length-1``: an input produced before the window is a
        tensor of a virtual op ``IN`` pinned to device ``host`` (the CPU: inputs from outside the
        window sit in system memory, docs/papers/pim.md), outputs leave at no cost (END)."""
        if not 0 <= start < start + length <= self.n_ops:
            raise HetsimError(f"{self.name}: window {start}..{start + length - 1}: allowed: within "
                              f"0..{self.n_ops - 1}")
        inside = list(range(start, start + length))
        outside = sorted({k for j in inside for k in self.preds[j] if k < start})
        order = outside + inside
        local = {k: i for i, k in enumerate(order)}
        n = self.n_devices
        node = np.vstack([np.where(np.arange(n) == host, 0.0, np.inf)[None, :].repeat(len(outside), 0),
                          self.node_s[inside]])
        cap = [(host,)] * len(outside) + [self.cap[j] for j in inside]
        preds = [()] * len(outside) + [tuple(local[k] for k in self.preds[j]) for j in inside]
        names = tuple(f"IN:{self.ops[k]}" for k in outside) + tuple(self.ops[j] for j in inside)
        return Dcg(names, self.devices, cap, preds, node, self.edge_s[order].copy(),
                   self.nbytes[order].copy(), tuple(self.dtype[k] for k in order),
                   name=f"{self.name}[{start}:{start + length}]", memory=self.memory)


def assignment_names(dcg: Dcg, assignment: Sequence[int] | np.ndarray) -> list[str]:
    """Device names of an assignment (for :meth:`PlacementProblem.placement`)."""
    return [dcg.devices[int(d)] for d in assignment]
