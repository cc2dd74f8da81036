"""What a mapping asks of the platform, read by both engines: a pipeline's stage costs and a DAG
mapping's task graph. The closed form (:mod:`hetsim.analytic`) and the SimPy engine
(:mod:`hetsim.sim`) price a mapping from here and nowhere else, so that without contention they
agree exactly.

Pipelines
---------
Stage i of a pipeline costs, per frame, the sum of its layers' times on its EP (``compute_s``) plus
the transfer of every tensor that crosses the cut after it (``transfer_s``; the sender pays it):
:func:`stage_costs`. :func:`stage_demands` gives the same work as the fluid demands the DES puts on
a shared memory (one per stage, or one per op), :func:`stage_peak_memory` and
:func:`pipeline_link_bytes` what a stage holds and what the links carry.

DAG mappings
------------
A placement (or a plan, or a split) expands into *tasks* of one frame:

* a **compute** task per op (per share, for a split op, plus the gather of its slices);
* a **transfer** task per tensor and destination EP: a tensor crosses to an EP at most once, and
  every consumer there reads that copy (HOPE's tensor caching, §4.3; ``caching=False`` sends it
  once per consuming op instead).

Each task may hold a *lane*, an exclusive resource that runs its tasks one at a time in lane
order: every EP is a lane running its compute tasks in the plan's order (default: the workload's
topological order); a transfer holds no lane by default (``comm="free"``: it overlaps with
everything, as a DMA does), the consumer's EP (``comm="consumer"``: HOPE charges a communication
operator to the device that needs the data), a copy lane per destination (``comm="copy"``), or
both the sender's and the receiver's EP (``comm="mpi"``: a blocking MPI send/receive, AutoDiCE's
runtime; the transfer starts when both ranks reach it in their program order, a rendezvous, and
holds both until the last byte lands). With ``serial=True`` every task shares one lane (the PIM
paper's executor: one op at a time, copies before the op that needs them, nothing overlaps);
``overlap=True`` then moves the copies to one DMA lane of their own, so that they overlap the
computation (a what-if the paper does not run).

Where a copied tensor resides (``residency``): on its destination EP (``"ep"``, HOPE's per-device
caching), or in the destination's memory space (``"memory"``: EPs that share a memory read one copy,
and a tensor never moves between two EPs of one memory; the PIM paper's CPU_S and CPU_P share the
cacheable memory).

A split op's shares each run after their inputs reach their EP (the full input goes to every
share, LOP's IS x N of Savva's eq. 4.3); each slice then travels to the op's home EP (with
``comm="mpi"`` only after every share: the home rank computes its own share before it receives,
AutoDiCE's program order) and the gather there (the concat) joins them. A network input that
the placement locates on an EP (``Placement.inputs``) is sent from there to every other EP that
reads it; otherwise every op reads it where it runs, at no cost.

A *sequential* placement (MOSAIC's slices, μLayer's layers) runs one op at a time, in the same
global order, but each op's tasks keep their lanes: every task of an op waits for the op before it
to finish (its output gathered), and the shares of a split op run in parallel on their EPs.

:func:`list_schedule` gives the closed form: each task starts when its inputs are done and its
lane is free. The DES (:mod:`hetsim.sim.dag`) runs the same tasks and, without contention and
noise, reproduces this schedule exactly.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import networkx as nx
import numpy as np

from hetsim.collector import gc_paused
from hetsim.cost import ZERO, CostModel, Demand, DvfsState
from hetsim.errors import HetsimError
from hetsim.mapping import Pipeline, Placement, Share
from hetsim.metrics import add_bytes
from hetsim.platform import ExecutionPlace, Route

Comm = Literal["free", "consumer", "copy", "mpi"]
COMM_MODES = ("free", "consumer", "copy", "mpi")
Residency = Literal["ep", "memory"]
RESIDENCIES = ("ep", "memory")
#: The lane of copies with ``serial=True, overlap=True``.
DMA_LANE = "dma"


# -- pipelines ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class InputStage:
    """A pipeline's per-frame input stage (``core_types[].input_stage``, docs/calibrate.md): reading
    and preparing a frame, ``time_s`` on ``ep``. ``shared``: on the first stage's EP, before its
    layers (one thread reads a frame, then runs it: part of stage 1's time); otherwise a stage of
    its own on ``runtime.input_ep``, in parallel with the first, handing it one frame at a time."""

    ep: ExecutionPlace
    time_s: float
    shared: bool

    @property
    def name(self) -> str:
        return f"input@{self.ep.name}"


def input_stage(pipe: Pipeline, cost: CostModel, state: DvfsState | None = None) -> InputStage | None:
    """The input stage of ``pipe`` (None when its EP's core type has none)."""
    first = pipe.stages[0].ep
    ep = cost.input_ep(first)
    if ep is None:
        return None
    t = cost.input_time(ep, state)
    return InputStage(ep, t, ep == first) if t > 0 else None


def stage_costs(pipe: Pipeline, workload, cost: CostModel,
                state: DvfsState | None = None) -> tuple[list[float], list[float]]:
    """(compute_s, transfer_s) of every stage for one frame. The first stage's layers take
    1 / (1 - feeder_share) of their time and, on its EP, the input stage comes first."""
    compute, transfer = [], []
    stages = pipe.stages
    for i, s in enumerate(stages):
        t = cost.layer_times(workload, s.ep, state)
        compute.append(float(t[s.first - 1:s.last].sum()))
        if i + 1 < len(stages):
            transfer.append(cost.transfer_time(workload.cut_bytes(s.last), s.ep, stages[i + 1].ep))
        else:
            transfer.append(0.0)
    feeder = cost.feeder_factor(stages[0].ep)
    if feeder != 1.0:
        compute[0] *= feeder
    inp = input_stage(pipe, cost, state)
    if inp is not None and inp.shared:
        compute[0] += inp.time_s
    return compute, transfer


def stage_demands(pipe: Pipeline, workload, cost: CostModel, state: DvfsState | None = None,
                  per_op: bool = False) -> list[list[Demand]]:
    """The fluid work of each stage execution on its EP's memory: one demand, the stage's layers
    summed (``per_op=False``), or one per op in turn (``per_op=True``: a memory-bound op is not
    averaged with compute-bound ones). The first stage's as :func:`stage_costs`: its demands slowed
    by the feeder share, the input stage on its EP a fixed demand before them."""
    if per_op:
        out = [[cost.op_demand(op, s.ep, state) for layer in workload.layers[s.first - 1:s.last]
                for op in layer.ops] for s in pipe.stages]
    else:
        out = [[sum(cost.layer_demands(workload, s.ep, state)[s.first - 1:s.last], ZERO)]
               for s in pipe.stages]
    feeder = cost.feeder_factor(pipe.stages[0].ep)
    if feeder != 1.0:
        out[0] = [Demand(d.fixed_s * feeder, d.busy_s * feeder, d.bytes_) for d in out[0]]
    inp = input_stage(pipe, cost, state)
    if inp is not None and inp.shared:
        out[0] = [Demand(inp.time_s, 0.0, 0.0), *out[0]]
    return out


def stage_peak_memory(pipe: Pipeline, workload, buffer_frames: int = 1) -> list[float]:
    """Weights of the stage's layers + its largest op working set (inputs, outputs, im2col) + the
    input buffer of ``buffer_frames`` frames."""
    out = []
    for s in pipe.stages:
        layers = workload.layers[s.first - 1:s.last]
        weights = sum(layer.weight_bytes for layer in layers)
        work = max(op.input_bytes + op.output_bytes + op.im2col_bytes for layer in layers for op in layer.ops)
        inbuf = workload.cut_bytes(s.first - 1) * buffer_frames if s.first > 1 else 0
        out.append(float(weights + work + inbuf))
    return out


def pipeline_link_bytes(platform, workload, pipe: Pipeline, frames: int) -> dict[str, float]:
    """Bytes each link carries over ``frames`` frames: every cut's tensors over its route."""
    out: dict[str, float] = {}
    for i, s in enumerate(pipe.stages[:-1]):
        add_bytes(out, platform.route(s.ep, pipe.stages[i + 1].ep).links, workload.cut_bytes(s.last) * frames)
    return out


# -- DAG mappings: the task graph -----------------------------------------------------------------

@dataclass(slots=True)
class Task:
    index: int
    kind: Literal["compute", "transfer"]
    name: str                       # op name (share: "op@EP", gather: "op:gather"), or "tensor->EP"
    lane: str | None                # exclusive lane, or None
    deps: tuple[int, ...]
    ep: ExecutionPlace | None = None        # compute: where it runs
    dst: ExecutionPlace | None = None       # transfer: where the bytes land
    src: ExecutionPlace | None = None       # transfer: where the bytes come from
    also: tuple[str, ...] = ()              # lanes held besides ``lane`` (comm="mpi": the sender's)
    out_bytes: float = 0.0                  # bytes of the buffer it fills (output, slice, copy)
    weight_bytes: float = 0.0               # compute: parameters it reads
    work_bytes: float = 0.0                 # compute: transient working memory (im2col)
    demand: Demand | None = None            # compute: its cost
    route: Route | None = None              # transfer: its route
    nbytes: float = 0.0                     # transfer: bytes moved
    transfer_s: float = 0.0                 # transfer: uncontended time (the cost model's)
    measured: bool = False                  # transfer: a measured copy (a plain delay, never contended)
    op: str | None = None                   # the workload op it belongs to
    source: int | None = None               # transfer: the task that made its bytes (None: a network input)

    @property
    def time_s(self) -> float:
        """Uncontended duration."""
        if self.kind == "compute":
            return self.demand.time_s if self.demand is not None else 0.0
        return self.transfer_s

    @property
    def lanes(self) -> tuple[str, ...]:
        """Every lane the task holds (none, one, or the receiver's and sender's for MPI)."""
        return ((self.lane,) if self.lane is not None else ()) + self.also

    @property
    def fixed_s(self) -> float:
        """A transfer's part that no link contention stretches: its time minus bytes / the route's
        bandwidth (the route's latency, and whatever the cost model adds: synchronisation, layout
        conversion)."""
        if self.measured or self.route is None or not self.route.links:
            return self.transfer_s
        return max(self.transfer_s - self.nbytes / self.route.bandwidth_Bps, 0.0)


@dataclass
class TaskGraph:
    """The tasks of one frame, in a topological order, and each lane's task order."""

    tasks: list[Task]
    lanes: dict[str, list[int]] = field(default_factory=dict)
    sinks: tuple[int, ...] = ()

    @property
    def compute(self) -> list[Task]:
        return [t for t in self.tasks if t.kind == "compute"]


def build_tasks(platform, workload, placement: Placement, cost: CostModel,
                state: DvfsState | None = None, comm: Comm = "free", caching: bool = True,
                serial: bool = False, residency: Residency = "ep", overlap: bool = False) -> TaskGraph:
    """Expand ``placement`` into the task graph of one frame (see the module docstring)."""
    if comm not in COMM_MODES:
        raise HetsimError(f"comm={comm!r}: allowed: {', '.join(COMM_MODES)}")
    if residency not in RESIDENCIES:
        raise HetsimError(f"residency={residency!r}: allowed: {', '.join(RESIDENCIES)}")
    if overlap and not serial:
        raise HetsimError("overlap=True moves the copies of the serial executor to a DMA lane; allowed: "
                          "with serial=True only (without it, comm='copy' gives copy lanes)")
    b = _TaskBuilder(platform, workload, placement, cost, state, comm, caching, residency)
    # Tasks are made op by op in the order the lanes will run them, so that a tensor cached on an
    # EP is fetched before the first of its consumers there, and each lane's order is task order.
    op_order = _op_order(workload, placement, serial)
    cost.bind(workload)   # models whose op costs depend on the network (gemm2's cache reuse)
    with gc_paused():
        for op in (workload.op(name) for name in op_order):
            shares = placement.splits.get(op.name)
            if shares is None:
                b.whole_op(op)
            else:
                b.split_op(op, shares)
        return b.task_graph(serial, overlap)


class _TaskBuilder:
    """The tasks of one frame as :func:`build_tasks` makes them, op by op: which task makes each
    op's output and where, and the copies already made (tensor caching). An op's tasks (its
    incoming transfers, then its compute tasks) are made together, when the op's turn comes."""

    def __init__(self, platform, workload, placement: Placement, cost: CostModel,
                 state: DvfsState | None, comm: Comm, caching: bool, residency: Residency) -> None:
        self.platform, self.workload, self.placement, self.cost = platform, workload, placement, cost
        self.state, self.comm, self.caching, self.residency = state, comm, caching, residency
        self.tasks: list[Task] = []
        self.produced: dict[str, tuple[int, ExecutionPlace]] = {}   # op -> (task making its output, EP)
        self.cached: dict[tuple[str, str], int] = {}        # (tensor, destination EP) -> transfer task
        self.routes: dict[tuple[str, str], Route] = {}      # (source EP, destination EP) -> route
        self.barrier: list[int] = []   # sequential: the final task of the op before (every task waits for it)

    def add(self, task: Task) -> int:
        """Append ``task``, made with the next index (``len(self.tasks)``); its index."""
        self.tasks.append(task)
        return task.index

    def route(self, src: ExecutionPlace, dst: ExecutionPlace) -> Route:
        """The platform's route from ``src`` to ``dst``, looked up once per pair of EPs."""
        key = (src.name, dst.name)
        route = self.routes.get(key)
        if route is None:
            route = self.routes[key] = self.platform.route(src, dst)
        return route

    def move(self, what: str, src_task: int | None, src: ExecutionPlace, dst: ExecutionPlace,
             nbytes: float, consumer: str, cached_as: str | None, sequenced: bool = True,
             slice_: bool = False) -> int | None:
        """The task after which ``nbytes`` of ``what`` made by ``src_task`` on ``src`` are on ``dst``
        (adding their transfer ``what->dst``, once per copy of the tensor ``cached_as`` when given:
        the cost model prices it, so a model can charge synchronisation or layout conversion even
        where the EPs share a memory)."""
        if nbytes <= 0 or src.name == dst.name:
            return src_task
        if self.residency == "memory" and src.memory == dst.memory:
            return src_task                      # already in the memory the consumer reads
        key = None if cached_as is None else self.cache_key(cached_as, dst, consumer)
        if key is not None and key in self.cached:
            return self.cached[key]
        # A split op's slice is priced by the links (a measured copy table holds whole tensors).
        measured = None if slice_ else self.cost.measured_transfer_s(nbytes, src, dst)
        seconds = measured if measured is not None else self.cost.transfer_time(nbytes, src, dst)
        if seconds <= 0:
            return src_task
        lane, also = _comm_lanes(self.comm, src, dst)
        deps = [] if src_task is None else [src_task]
        i = self.add(Task(len(self.tasks), "transfer", f"{what}->{dst.name}", lane,
                          tuple(_union(deps, self.barrier) if sequenced else deps),
                          route=self.route(src, dst), nbytes=float(nbytes), transfer_s=seconds,
                          measured=measured is not None, op=consumer, dst=dst, src=src, also=also,
                          out_bytes=float(nbytes), source=src_task))
        if key is not None:
            self.cached[key] = i
        return i

    def cache_key(self, tensor: str, dst: ExecutionPlace, consumer: str) -> tuple[str, str]:
        """One copy per destination EP (or memory space), or per consumer without caching."""
        where = dst.memory if self.residency == "memory" else dst.name
        return (tensor, where if self.caching else f"{where}/{consumer}")

    def inputs_of(self, op, dst: ExecutionPlace) -> list[int]:
        """The tasks ``op`` waits for on ``dst``: its producers' outputs, and the network inputs
        the placement locates elsewhere."""
        deps = []
        for p in self.workload.predecessors[op.name]:
            made, src = self.produced[p]
            # made where it is read: no copy to look up
            task = made if src.name == dst.name else self.move(p, made, src, dst, self.workload.op(p).output_bytes,
                                                               op.name, p)
            if task is not None:
                deps.append(task)
        for name in self.workload.net_inputs_of(op):
            where = self.placement.inputs.get(name)
            if where is not None:
                task = self.move(name, None, where, dst, _input_bytes(self.workload, name), op.name, f"input:{name}")
                if task is not None:
                    deps.append(task)
        return deps

    def _made(self, op, task: int, home: ExecutionPlace) -> None:
        """``task`` makes ``op``'s output on ``home``; a sequential placement's next op waits for it."""
        self.produced[op.name] = (task, home)
        if self.placement.sequential:
            self.barrier[:] = [task]

    def whole_op(self, op) -> None:
        """An op that runs whole on its EP, after its inputs reach it."""
        home = self.placement.ep_of[op.name]
        deps = _union(self.inputs_of(op, home), self.barrier)
        i = self.add(Task(len(self.tasks), "compute", op.name, home.name, tuple(deps), ep=home,
                          demand=self.cost.op_demand(op, home, self.state), op=op.name,
                          out_bytes=float(op.output_bytes), weight_bytes=float(op.weight_bytes),
                          work_bytes=float(op.im2col_bytes)))
        self._made(op, i, home)

    def _slice_to_home(self, op, s: Share, i: int | None, home: ExecutionPlace) -> int | None:
        return self.move(f"{op.name}@{s.ep.name}", i, s.ep, home, op.output_bytes * s.fraction, op.name,
                         None, sequenced=False, slice_=True)

    def split_op(self, op, shares: Sequence[Share]) -> None:
        """A split op: each share computes its slice of the output channels on its EP; the home EP
        computes its own share first, then gathers the slices (the concat of AutoDiCE / μLayer)
        before any consumer reads them."""
        home = self.placement.ep_of[op.name]
        made: list[tuple[Share, int | None]] = []
        for s in shares:
            deps = _union(self.inputs_of(op, s.ep), self.barrier)
            i = self.add(Task(len(self.tasks), "compute", f"{op.name}@{s.ep.name}", s.ep.name, tuple(deps),
                              ep=s.ep, demand=self.cost.share_demand(op, s.ep, s.fraction, self.state),
                              op=op.name, out_bytes=op.output_bytes * s.fraction,
                              weight_bytes=op.weight_bytes * s.fraction, work_bytes=op.im2col_bytes * s.fraction))
            made.append((s, i))
            if self.comm != "mpi":   # each slice leaves as soon as its share is done
                made[-1] = (s, self._slice_to_home(op, s, i, home))
        if self.comm == "mpi":
            # AutoDiCE's ranks: the Concat's rank computes its own share, then receives the slices.
            made = [(s, self._slice_to_home(op, s, i, home)) for s, i in made]
        k = self.add(Task(len(self.tasks), "compute", f"{op.name}:gather", home.name,
                          tuple(i for _, i in made if i is not None), ep=home,
                          demand=self.cost.gather_demand(op, home, self.state), op=op.name,
                          out_bytes=float(op.output_bytes)))
        self._made(op, k, home)

    def task_graph(self, serial: bool, overlap: bool) -> TaskGraph:
        """The lanes' task orders (task order: the tasks were made in the order of the ops') and the
        sinks; with ``serial`` every task on the one serial lane (its copies on the DMA lane with
        ``overlap``)."""
        tasks = self.tasks

        def serial_lane(t: Task) -> str:
            return DMA_LANE if overlap and t.kind == "transfer" else "serial"

        lanes: dict[str, list[int]] = {}
        for t in tasks:
            for lane in (serial_lane(t),) if serial else t.lanes:
                lanes.setdefault(lane, []).append(t.index)
        sinks = tuple(self.produced[name][0] for name in self.workload.output_ops)
        if serial:
            for t in tasks:
                t.lane, t.also = serial_lane(t), ()
        return TaskGraph(tasks, lanes, sinks)


def _union(deps: list[int], extra: list[int]) -> list[int]:
    """``deps`` plus the tasks of ``extra`` it lacks (a dependency is listed once)."""
    if not extra:
        return deps
    return deps + [d for d in extra if d not in deps]


def _comm_lanes(comm: Comm, src: ExecutionPlace, dst: ExecutionPlace) -> tuple[str | None, tuple[str, ...]]:
    """The lane a transfer holds, and the other lanes it holds at the same time."""
    if comm == "consumer":
        return dst.name, ()
    if comm == "copy":
        return f"copy->{dst.name}", ()
    if comm == "mpi":
        return dst.name, (src.name,)
    return None, ()


def _input_bytes(workload, name: str) -> float:
    try:
        return float(workload.inputs[name].bytes_)
    except KeyError:
        raise HetsimError(f"{workload.name} has no network input {name!r}") from None


def _op_order(workload, placement: Placement, serial: bool) -> list[str]:
    """The order in which lanes run the ops: the workload's topological order, or with a plan one
    global order consistent with the data dependencies and every EP's plan (ties: the workload's
    order), so that each lane takes its tasks in it. Ops outside the plan (split shares and
    gathers) fall where their inputs allow."""
    op_order = [op.name for op in workload.ops]
    if placement.order is None or serial:
        return op_order
    position = {name: i for i, name in enumerate(op_order)}
    chain = nx.DiGraph(workload.graph)
    for ops in placement.order.values():
        chain.add_edges_from(zip(ops, ops[1:], strict=False))
    return list(nx.lexicographical_topological_sort(chain, key=position.__getitem__))


def list_schedule(tg: TaskGraph) -> tuple[np.ndarray, np.ndarray]:
    """(start, finish) of every task of one frame: a task starts when its dependencies are done
    and every task before it in its lane has finished (HOPE's runtime, one queue per device)."""
    start, finish = schedule_lists(tg)
    return np.array(start), np.array(finish)


def schedule_lists(tg: TaskGraph) -> tuple[list[float], list[float]]:
    """:func:`list_schedule` as Python lists (what the closed form reads task by task)."""
    tasks = tg.tasks
    n = len(tasks)
    # Python floats: numpy scalars are slower one at a time, and the sums are the same.
    start, finish = [0.0] * n, [0.0] * n
    succ: list[list[int]] = [[] for _ in range(n)]
    indeg = [0] * n
    for t in tasks:
        for d in t.deps:
            succ[d].append(t.index)
        indeg[t.index] += len(t.deps)
    for order in tg.lanes.values():
        for a, b in zip(order, order[1:], strict=False):
            succ[a].append(b)
            indeg[b] += 1
    ready = [i for i in range(n) if indeg[i] == 0]
    heapq.heapify(ready)
    lane_free: dict[str, float] = {}
    done = 0
    while ready:
        i = heapq.heappop(ready)
        t = tasks[i]
        deps = t.deps
        s = max([finish[d] for d in deps]) if deps else 0.0
        lanes = t.lanes
        for lane in lanes:
            s = max(s, lane_free.get(lane, 0.0))
        start[i] = s
        finish[i] = f = s + t.time_s
        for lane in lanes:
            lane_free[lane] = f
        done += 1
        for j in succ[i]:
            indeg[j] -= 1
            if indeg[j] == 0:
                heapq.heappush(ready, j)
    if done != n:
        raise HetsimError("the plan deadlocks: a lane's order waits on a task that waits on it")
    return start, finish


def lane_busy_s(tg: TaskGraph) -> dict[str, float]:
    """Uncontended busy time per lane for one frame."""
    busy: dict[str, float] = {}
    for lane, order in tg.lanes.items():
        busy[lane] = sum(tg.tasks[i].time_s for i in order)
    return busy


def ep_units(tg: TaskGraph, durations: Sequence[float]) -> list[tuple[ExecutionPlace, float]]:
    """(EP, busy s) per EP of a frame's tasks: its compute tasks, and the transfers charged to it
    (``comm="consumer"``; both ends with ``comm="mpi"``), which keep its cores busy."""
    eps = {t.ep.name: t.ep for t in tg.tasks if t.ep is not None}
    busy: dict[str, float] = {}     # in order of first use
    for t in tg.tasks:
        if t.ep is not None:
            busy[t.ep.name] = busy.get(t.ep.name, 0.0) + float(durations[t.index])
        else:
            for name in t.lanes:
                if name in eps:
                    busy[name] = busy.get(name, 0.0) + float(durations[t.index])
    return [(eps[name], b) for name, b in busy.items()]


def ep_peak_memory(tg: TaskGraph, start: Sequence[float] | np.ndarray, end: Sequence[float] | np.ndarray,
                   weights: Literal["resident", "transient"] = "resident") -> dict[str, float]:
    """Peak bytes held on each EP during one frame scheduled at ``start``/``end``.

    Every task fills a buffer on its EP (an op's output, a split op's slice, a copy that landed)
    from its start until the last task that reads it ends (a graph output: until the frame ends);
    an op holds its working memory (im2col) while it runs. Weights are ``resident`` (loaded once and
    kept, as most runtimes do) or ``transient`` (held only while their op runs: ncnn's light mode,
    which frees what is no longer needed)."""
    events, resident = ep_memory_events(tg, start, end, weights)
    peak: dict[str, float] = {}
    for name, ev in events.items():
        level = top = 0.0
        for _, delta in sorted(ev):   # by time, then frees before allocations at a tie
            level += delta
            if level > top:
                top = level
        peak[name] = top + resident.get(name, 0.0)
    return peak


def ep_memory_events(tg: TaskGraph, start: Sequence[float] | np.ndarray, end: Sequence[float] | np.ndarray,
                     weights: Literal["resident", "transient"] = "resident",
                     ) -> tuple[dict[str, list[tuple[float, float]]], dict[str, float]]:
    """What :func:`ep_peak_memory` adds up: per EP, the (time, +-bytes) allocations and frees of one
    frame, and the bytes of weights resident all along."""
    frame_end = max(end, default=0.0)
    last_read = list(end)
    for t in tg.tasks:
        t_end = end[t.index]
        for d in t.deps:
            if t_end > last_read[d]:
                last_read[d] = t_end
    for s in tg.sinks:
        last_read[s] = frame_end
    events: dict[str, list[tuple[float, float]]] = {}
    resident: dict[str, float] = {}
    for t in tg.tasks:
        home = t.ep if t.kind == "compute" else t.dst
        if home is None:
            continue
        ev = events.setdefault(home.name, [])
        if t.out_bytes:
            ev += [(start[t.index], t.out_bytes), (last_read[t.index], -t.out_bytes)]
        if t.work_bytes:
            ev += [(start[t.index], t.work_bytes), (end[t.index], -t.work_bytes)]
        if t.weight_bytes:
            if weights == "resident":
                resident[home.name] = resident.get(home.name, 0.0) + t.weight_bytes
            else:
                ev += [(start[t.index], t.weight_bytes), (end[t.index], -t.weight_bytes)]
    return events, resident


def task_time_s(tg: TaskGraph, durations: Sequence[float] | np.ndarray | None = None) -> dict[str, float]:
    """Time spent in compute tasks and in transfer tasks (uncontended, or the given ``durations``
    per task): with the serial executor, latency = compute + transfer (the PIM paper's Fig. 11)."""
    out = {"compute": 0.0, "transfer": 0.0}
    for t in tg.tasks:
        out[t.kind] += float(durations[t.index]) if durations is not None else t.time_s
    return out
