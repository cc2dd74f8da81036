"""The gemm2 cost model: shape-, cache- and algorithm-aware op costs, each part in the clock it follows.

The roofline (:mod:`hetsim.cost.roofline`) gives every GEMM of a core type one efficiency and takes
``max(MACs / rate, bytes / bandwidth)``: a smooth model whose big/LITTLE time ratio is the same for
every layer. gemm2 builds an op's time from the steps a framework runs and the data each step moves
(docs/model.md, "The gemm2 model"; the parameters are a core type's ``gemm2`` block):

* **GEMM** of N×K by K×M on t threads: the micro-kernel computes whole ``tile_rows × tile_cols``
  output tiles (N and M padded up), the N row tiles are dealt to the threads and the busiest one
  decides; per tile and K block (``block_k``) the accumulators are loaded and stored
  (``tile_overhead_cycles``); the operands are packed (``pack_cycles_per_byte``); a call costs
  ``gemm_call_us``. A GEMM uses at most ceil(MACs / ``gemm_macs_per_thread``) threads.
* **Where each operand is**: when the op starts, a tensor is in the innermost cache level that holds
  the bytes touched since its last use (its *reuse distance*): an activation right after the op that
  produced it, the weights one frame after their last use (the network's per-frame footprint). A
  read costs its bytes over that level's bandwidth (L1: free; L2 in bytes per core cycle; L3 and
  DRAM in GB/s); a write that lands in DRAM costs twice with write-allocate caches.
* **Two clocks**: cycles (kernels, packing, L2 traffic) follow the core clock, DRAM and L3 traffic
  the memory's, fixed costs (µs) none; core and memory time combine as
  ``core + mem − overlap · min(core, mem)`` (1: the roofline's max; 0: their sum).
* **Algorithms**: a conv is an image matrix + GEMM (``im2col``), a GEMM on its input (1×1 stride 1
  without ``im2col_1x1``), or Winograd F(m×m, 3×3) (input transform, m+2 squared GEMMs on the
  transformed tiles, output transform), as ``conv_policy`` picks; depthwise convs, GEMVs (fc at batch
  1) and the other kernels have their own rates. A GEMV may pay cycles per row of its weights
  (``gemv_row_cycles``), a call cost of its own (``gemv_call_us``) and stream DRAM at its own
  rate (``gemv_GBps_per_core``); an op of a kind a fixed cost (``kind_overhead_us``: the
  softmax's cold calls in a network).
* **Frame ingest**: the op reading the network input pays ``frame_ingest_us`` (+ per byte).

Five mechanisms switch off one at a time (``tiles``, ``caches``, ``algorithms``, ``clocks``,
``ingest``: docs/fidelity.md ablates each). Accelerators: peak × ``efficiency`` at the clock of
their DVFS level, plus per-kernel cycles of that clock and a fixed cost.

    >>> cost = Gemm2CostModel(load_platform("hikey970"))
    >>> workload = load_workload("alexnet")
    >>> cost.breakdown(workload.op("conv1"), cost.platform.ep("B4")).algorithm
    'im2col'
    >>> table = op_table(cost, workload, cost.platform.ep("B4"))     # every op, its parts
    >>> len(table) == len(workload.ops) and "algorithm" in table.columns
    True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import pandas as pd

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.platform.params import by_cores
from hetsim.platform.schema import Gemm2CoreParams
from hetsim.workload.ops import VIEW_KINDS, Op, OpKind

INF = math.inf
#: Algorithms an op can run with (the ``algorithm`` column of :func:`op_table`).
ALGORITHMS = ("im2col", "gemm1x1", "winograd", "depthwise", "gemv", "gemm", "kernel", "view",
              "accelerator")


@dataclass(frozen=True, slots=True)
class Level:
    """One level of the memory hierarchy as seen by ``threads`` threads of a cluster."""

    name: str                 #: L1, L2, L3, DRAM
    capacity_B: float         #: bytes it holds for these threads (inf for DRAM)
    bandwidth_Bps: float      #: bytes/s these threads read from it (inf: hidden in the kernel)


@dataclass(frozen=True, slots=True)
class Gemm2Ep:
    """What gemm2 knows of one CPU EP in one DVFS state (SI units)."""

    ep: ExecutionPlace
    params: Gemm2CoreParams
    macs_per_cycle: float
    freq_Hz: float
    freq_ratio: float              #: f / f of the highest level (1 at max)
    cores: int
    l1_B: float | None             #: one core's L1d
    l2_B: float | None
    l2_private: bool
    l3_B: float | None
    dram_Bps_per_core: float
    dram_Bps_max: float            #: min(cluster port, memory)

    def levels(self, threads: int) -> tuple[Level, ...]:
        """The hierarchy seen by ``threads`` threads (capacities and bandwidths for that many)."""
        g, t, out = self.params, threads, []
        if self.l1_B:
            out.append(Level("L1", t * self.l1_B, INF))
        if self.l2_B:
            bw = t * g.l2_bytes_per_cycle * self.freq_Hz if g.l2_bytes_per_cycle else INF
            out.append(Level("L2", self.l2_B * (t if self.l2_private else 1), bw))
        if self.l3_B:
            out.append(Level("L3", self.l3_B, t * g.l3_GBps * 1e9 if g.l3_GBps else INF))
        out.append(Level("DRAM", INF, min(t * self.dram_Bps_per_core, self.dram_Bps_max)))
        return tuple(out)

    def kernel_threads(self) -> int:
        """Threads of a kernel that is not a GEMM (``kernel_threads``, at most the EP's cores)."""
        kt = self.params.kernel_threads
        return self.cores if kt is None else min(kt, self.cores)


@dataclass(frozen=True)
class Access:
    """Bytes read or written by a step, at a reuse distance (bytes touched since the last use)."""

    bytes_: float
    distance_B: float
    write: bool = False


@dataclass
class Step:
    """One kernel of an op (im2col, GEMM, a Winograd transform...): its core cycles, the data it
    moves, and the times the model derives from them."""

    name: str
    threads: int
    cycles: float = 0.0                       #: core cycles of the busiest thread
    accesses: Sequence[Access] = field(default_factory=list)
    fixed_s: float = 0.0
    core_s: float = 0.0
    mem_s: float = 0.0
    busy_s: float = 0.0
    dram_B: float = 0.0
    levels: dict[str, float] = field(default_factory=dict)   #: level -> bytes served from it
    dram_Bps: float | None = None             #: the step's own DRAM rate (a GEMV's), else the level's


@dataclass
class OpCost:
    """The breakdown of one op on one EP (:meth:`Gemm2CostModel.breakdown`)."""

    op: str
    kind: str
    algorithm: str
    steps: list[Step]

    @property
    def fixed_s(self) -> float:
        return sum(s.fixed_s for s in self.steps)

    @property
    def core_s(self) -> float:
        return sum(s.core_s for s in self.steps)

    @property
    def mem_s(self) -> float:
        return sum(s.mem_s for s in self.steps)

    @property
    def busy_s(self) -> float:
        return sum(s.busy_s for s in self.steps)

    @property
    def time_s(self) -> float:
        return self.fixed_s + self.busy_s

    @property
    def dram_B(self) -> float:
        return sum(s.dram_B for s in self.steps)

    def demand(self) -> Demand:
        return Demand(self.fixed_s, self.busy_s, self.dram_B)


@dataclass(frozen=True)
class OpContext:
    """Where an op's data was last touched, from its place in a network (:meth:`Gemm2CostModel.bind`):
    the reuse distance of each input (in ``op.inputs`` order), of its weights (one frame's
    footprint; also the network input's, the same buffer every frame unless a frame ingest step
    wrote it just before) and whether it reads the network input (frame ingest)."""

    input_distances_B: tuple[float, ...]
    weight_distance_B: float
    reads_frame: bool


#: The fields of a ``gemm2`` block that only scale an op's arithmetic: rates, efficiencies, fixed
#: costs and the combine rule. They include what the ground-truth fits move (Pipe-it's
#: kernel_efficiency, dw_macs_per_cycle, gemv_GBps_per_core, op_overhead_us; Pipe-search's
#: parallel_efficiency). Every other field, and the EP's cores, MACs per cycle and cache sizes,
#: enters an op's geometry (:func:`geometry_key`).
PRICE_FIELDS = frozenset({"kernel_efficiency", "dw_macs_per_cycle", "dw_strided_macs_per_cycle",
                          "dw_tap_cycles", "gemv_efficiency", "gemv_GBps_per_core", "gemv_row_cycles",
                          "gemv_call_us", "parallel_efficiency", "gemm_call_us", "op_overhead_us",
                          "kind_overhead_us", "l2_bytes_per_cycle", "l3_GBps", "overlap"})
#: How a step's ``work`` becomes core cycles (:meth:`Gemm2CostModel.price`).
RATES = ("cycles", "gemm", "depthwise", "gemv", "ingest")


@dataclass(frozen=True, slots=True)
class StepGeometry:
    """A step of an op before any of :data:`PRICE_FIELDS` enters: its threads, its ``work`` and the
    bytes each cache level serves it. ``rate`` says what ``work`` is: ``cycles`` (core cycles of the
    busiest thread: copies, transforms, kernels), ``gemm`` (the busiest thread's kernel cycles at
    efficiency 1, to which ``tile_cycles`` and ``pack_cycles`` add), ``depthwise`` and ``gemv``
    (MACs), ``ingest`` (bytes of the frame)."""

    name: str
    threads: int
    rate: str
    work: float
    accesses: tuple[Access, ...]
    traffic: tuple[tuple[int, float], ...]    #: (index in Gemm2Ep.levels(threads), bytes), in access order
    dram_B: float
    levels: tuple[tuple[str, float], ...]     #: (level, bytes served from it)
    tile_cycles: float = 0.0
    pack_cycles: float = 0.0
    calls: int = 0                            #: GEMM calls, each paying gemm_call_us
    fixed_s: float = 0.0                      #: a fixed cost that is not a price field (frame_ingest_us)
    strided: bool = False                     #: a depthwise step of stride > 1 (dw_strided_macs_per_cycle)
    taps: float = 0.0                         #: a depthwise step's output pixels × kernel taps (dw_tap_cycles)
    rows: float = 0.0                         #: a GEMV step's rows of W, K (gemv_row_cycles)


@dataclass(frozen=True, slots=True)
class OpGeometry:
    """An op's algorithm and steps on an EP before any rate enters (:meth:`Gemm2CostModel.geometry`);
    the step at ``overhead_step`` pays ``op_overhead_us`` and the op kind's ``kind_overhead_us``
    (the first after a frame-ingest step)."""

    algorithm: str
    steps: tuple[StepGeometry, ...]
    overhead_step: int = 0
    kind: str = ""                            #: the op's kind (``kind_overhead_us``)


def geometry_key(e: Gemm2Ep) -> tuple:
    """What an op's geometry on ``e`` depends on besides the op and its reuse distances: the EP's
    cores, MACs per cycle and cache sizes, and every field of the gemm2 block but
    :data:`PRICE_FIELDS` (tile shape, K block, switches, conv_policy, copy cycles, thread rules...)."""
    fields = tuple((k, _hashable(v)) for k, v in e.params.model_dump().items() if k not in PRICE_FIELDS)
    return (e.cores, e.macs_per_cycle, e.l1_B, e.l2_B, e.l2_private, e.l3_B, fields)


def _hashable(v):
    if isinstance(v, dict):
        return tuple(sorted((k, _hashable(x)) for k, x in v.items()))
    if isinstance(v, list | tuple):
        return tuple(_hashable(x) for x in v)
    return v


class GeometryCache:
    """Op geometries (:class:`OpGeometry`) and reuse distances shared by the gemm2 models of
    platforms that differ only in :data:`PRICE_FIELDS`: a fit's evaluations each build a new platform
    and model, and only the rates move, so an evaluation recomputes only the arithmetic they enter.

    Keyed on the op, its reuse distances and the EP's :func:`geometry_key`. Lifetime: its owner's. A
    model makes its own unless given one (then it lives as long as the model); a fit passes one to
    every model it builds (it lives as long as the fit). Past ``max_entries`` geometries (about 2 kB
    each; five CNNs on all eight EPs of hikey970 are 3,960) it starts over (recomputing a geometry
    is never wrong), so it never grows without bound.

        >>> cache = GeometryCache()
        >>> op, ep = load_workload("alexnet").op("conv1"), load_platform("hikey970").ep("B4")
        >>> a = Gemm2CostModel(load_platform("hikey970"), geometry=cache)
        >>> b = Gemm2CostModel(load_platform("hikey970", ["core_types.cortex-a73.gemm2.kernel_efficiency=0.5"]),
        ...                    geometry=cache)
        >>> a.op_time(op, ep) > b.op_time(op, ep), cache.misses, cache.hits   # b reused a's geometry
        (True, 1, 1)
    """

    def __init__(self, max_entries: int = 20_000):
        if max_entries < 1:
            raise HetsimError(f"GeometryCache max_entries {max_entries}: must be at least 1")
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._views: dict[tuple, int] = {}
        # (id(op), context, view id) -> (op, geometry): the op is held, so its id stays its own.
        self._entries: dict[tuple[int, OpContext, int], tuple[Op, OpGeometry]] = {}
        self._contexts: dict[int, tuple[object, dict[int, OpContext]]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def view_id(self, key: tuple) -> int:
        """A small number for a :func:`geometry_key` (never reused while the cache lives)."""
        vid = self._views.get(key)
        if vid is None:
            vid = self._views[key] = len(self._views)
        return vid

    def get(self, op: Op, ctx: OpContext, vid: int) -> OpGeometry | None:
        hit = self._entries.get((id(op), ctx, vid))
        if hit is None:
            self.misses += 1
            return None
        self.hits += 1
        return hit[1]

    def put(self, op: Op, ctx: OpContext, vid: int, geometry: OpGeometry) -> None:
        if len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[(id(op), ctx, vid)] = (op, geometry)

    def contexts(self, workload) -> dict[int, OpContext] | None:
        """The reuse distances of ``workload``'s ops (id(op) -> context) if a model computed them."""
        hit = self._contexts.get(id(workload))
        return hit[1] if hit is not None else None

    def put_contexts(self, workload, contexts: dict[int, OpContext]) -> None:
        if len(self._contexts) >= self.max_entries:
            self._contexts.clear()
        self._contexts[id(workload)] = (workload, contexts)


def conv_algorithm(op: Op, params: Gemm2CoreParams) -> str:
    """The algorithm a conv runs under ``params.conv_policy`` (``im2col``, ``gemm1x1``, ``winograd``).

    ``armcl``: ARM-CL 18.x NEConvolutionLayer::get_convolution_method: FP32, 3x3 filters, stride 1
    (and a bias, which every hetsim conv has) -> Winograd; everything else -> im2col + GEMM.
    Dilated and grouped convs stay on im2col (ARM-CL's Winograd takes neither)."""
    one_by_one = op.kernel == (1, 1) and op.stride == 1 and op.pad == (0, 0) and op.dilation == 1
    if not params.algorithms:
        return "im2col"
    if (params.conv_policy == "armcl" and op.kernel == (3, 3) and op.stride == 1 and op.dilation == 1
            and op.groups == 1 and op.group_node is None and op.dtype == "float32"):
        return "winograd"
    if one_by_one and not params.im2col_1x1:
        return "gemm1x1"
    return "im2col"


class Gemm2CostModel(CostModel):
    """The gemm2 model (module docstring). Reads the platform's hardware facts (MACs per cycle,
    caches, bandwidths, clocks) and the ``gemm2`` blocks of its core types and accelerators.

    Ops know their reuse distances once the model has seen their network (:meth:`bind`; the
    evaluators' layer times do it): unbound ops read their inputs warm and their weights cold.

    An op's cost is its geometry (:meth:`geometry`: algorithm, steps, threads, work, bytes per cache
    level; cached in a :class:`GeometryCache`) priced by the rates (:meth:`price`)."""

    name = "gemm2"

    def __init__(self, platform: Platform, workloads: Iterable = (), context: bool = True,
                 geometry: GeometryCache | None = None):
        """``context=False`` ignores the network around an op (:meth:`bind` does nothing): every op
        reads its inputs warm and its weights cold, the ablation of the reuse distances.
        ``geometry``: a cache shared with other models (a fit's); default: the model's own."""
        super().__init__(platform)
        self.use_context = context
        self.geometry_cache = GeometryCache() if geometry is None else geometry
        self._eps: dict[tuple, Gemm2Ep] = {}
        self._view_ids: dict[int, int] = {}     # id(a view of self._eps) -> its geometry id
        self._bandwidths: dict[tuple[int, int], tuple[float, ...]] = {}
        self._context: dict[int, OpContext] = {}
        self._bound: dict[int, object] = {}     # id -> workload, kept alive so ids stay unique
        self._capability: CostModel | None = None
        for w in workloads:
            self.bind(w)

    # -- context ---------------------------------------------------------------------------------
    def bind(self, workload) -> None:
        """Compute every op's reuse distances in ``workload`` (:func:`_reuse_distances`), or take them
        from the geometry cache when a model sharing it did."""
        if id(workload) in self._bound or not self.use_context:
            return
        contexts = self.geometry_cache.contexts(workload)
        if contexts is None:
            contexts = _reuse_distances(workload)
            self.geometry_cache.put_contexts(workload, contexts)
        self._context.update(contexts)
        self._bound[id(workload)] = workload
        self._layer_cache.clear()
        self._layer_demand_cache.clear()

    def context(self, op: Op) -> OpContext:
        """The op's reuse distances (after :meth:`bind`), else warm inputs and cold weights."""
        ctx = self._context.get(id(op))
        if ctx is not None:
            return ctx
        n_in = len(op.inputs)
        per_input = op.input_bytes / max(n_in, 1)
        return OpContext(tuple(per_input for _ in op.inputs), INF, not op.inputs and not op.explicit)

    def layer_demands(self, workload, ep: ExecutionPlace, state: DvfsState | None = None) -> list[Demand]:
        self.bind(workload)
        return super().layer_demands(workload, ep, state)

    # -- the EP ----------------------------------------------------------------------------------
    def ep_view(self, ep: ExecutionPlace, state: DvfsState | None = None) -> Gemm2Ep:
        """The EP's clock, caches and bandwidths in DVFS ``state`` (cached)."""
        level_name = (state or {}).get(ep.place)
        key = (ep, level_name)
        view = self._eps.get(key)
        if view is not None:
            return view
        if not ep.cluster:
            raise HetsimError(f"{ep.name} is an accelerator: gemm2 prices it with accelerator_cost")
        p = self.platform
        c = p.cluster(ep.cluster)
        t = p.core_type(c.core_type)
        try:
            level = t.level(level_name or c.dvfs)
        except KeyError:
            raise HetsimError(f"DVFS level {level_name!r} is not a level of core type {t.name} "
                              f"(cluster {c.name}); levels: {[lv.name for lv in t.dvfs]}") from None
        f_max = max(lv.freq_MHz for lv in t.dvfs)
        port = min(c.bandwidth_GBps or INF, p.memory(c.memory).bandwidth_GBps) * 1e9
        per_core = (t.bandwidth_GBps_per_core or INF) * 1e9
        view = Gemm2Ep(ep, t.gemm2, t.macs_per_cycle, level.freq_MHz * 1e6, level.freq_MHz / f_max,
                       ep.cores, t.l1d_KiB * 1024 if t.l1d_KiB else None,
                       c.l2_KiB * 1024 if c.l2_KiB else None, c.l2_private,
                       c.l3_KiB * 1024 if c.l3_KiB else None, per_core, port)
        self._eps[key] = view
        self._view_ids[id(view)] = self.geometry_cache.view_id(geometry_key(view))
        return view

    # -- the interface ---------------------------------------------------------------------------
    def supports(self, op, ep: ExecutionPlace) -> bool:
        """What an EP can run is a fact of the platform (its kinds, an accelerator's datatypes),
        the same for every analytic model: the roofline model's answer."""
        if self._capability is None:
            from hetsim.cost.roofline import RooflineCostModel

            self._capability = RooflineCostModel(self.platform)
        return self._capability.supports(op, ep)

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        if op.kind in VIEW_KINDS:
            return ZERO
        if ep.accelerator:
            return self.breakdown(op, ep, state).demand()
        e = self.ep_view(ep, state)
        if not e.params.clocks and e.freq_ratio != 1.0:
            return self.breakdown(op, ep, state).demand()
        # OpCost.demand() without building the steps (the fits price ~10^5 ops): the same sums.
        fixed_s: float = 0
        busy_s: float = 0
        dram_B: float = 0
        for sg, _, fixed, _, _, busy, _ in self.priced(self.geometry(op, e, self.context(op)), e):
            fixed_s += fixed
            busy_s += busy
            dram_B += sg.dram_B
        return Demand(fixed_s, busy_s, dram_B)

    def gather_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        """A split op's slices gathered on ``ep``: the output read and written once through DRAM
        (the slices came from other EPs), no kernel overhead (as the roofline model)."""
        nbytes = 2.0 * op.output_bytes
        if nbytes <= 0:
            return ZERO
        if ep.accelerator:
            a = self.platform.accelerator(ep.accelerator)
            bw = min(a.bandwidth_GBps or INF, self.platform.memory(a.memory).bandwidth_GBps) * 1e9
        else:
            e = self.ep_view(ep, state)
            bw = min(e.cores * e.dram_Bps_per_core, e.dram_Bps_max)
        return Demand(0.0, nbytes / bw, nbytes)

    # -- the breakdown ---------------------------------------------------------------------------
    def algorithm(self, op: Op, ep: ExecutionPlace) -> str:
        """The algorithm ``op`` runs with on ``ep`` (one of :data:`ALGORITHMS`)."""
        if op.kind in VIEW_KINDS:
            return "view"
        if ep.accelerator:
            return "accelerator"
        g = self.ep_view(ep).params
        if op.kind == OpKind.CONV:
            return conv_algorithm(op, g)
        if op.kind == OpKind.DW:
            return "depthwise"
        if op.kind == OpKind.FC or (op.kind == OpKind.MATMUL and op.gemm and op.gemm[0] == 1):
            return "gemv"
        if op.kind == OpKind.MATMUL:
            return "gemm"
        return "kernel"

    def breakdown(self, op: Op, ep: ExecutionPlace, state: DvfsState | None = None) -> OpCost:
        """The steps of ``op`` on ``ep`` in DVFS ``state`` with their cycles, traffic and times."""
        if ep.accelerator:
            return self._accelerator(op, ep, state)
        e = self.ep_view(ep, state)
        if not e.params.clocks and e.freq_ratio != 1.0:
            # The naive DVFS model: the op at the highest level, every part stretched by f_max / f.
            top = self._at_top(ep)
            cost = self.price(op, self.geometry(op, top, self.context(op)), top)
            for s in cost.steps:
                for name in ("fixed_s", "core_s", "mem_s", "busy_s"):
                    setattr(s, name, getattr(s, name) / e.freq_ratio)
            return cost
        return self.price(op, self.geometry(op, e, self.context(op)), e)

    def _at_top(self, ep: ExecutionPlace) -> Gemm2Ep:
        c = self.platform.cluster(ep.place)
        t = self.platform.core_type(c.core_type)
        top = max(t.dvfs, key=lambda lv: lv.freq_MHz)
        return self.ep_view(ep, {c.name: top.name})

    # -- geometry: what does not depend on the rates -----------------------------------------------
    def geometry(self, op: Op, e: Gemm2Ep, ctx: OpContext) -> OpGeometry:
        """``op``'s algorithm and steps on ``e`` with reuse distances ``ctx``, before any of
        :data:`PRICE_FIELDS` enters; from the geometry cache when a model with the same
        :func:`geometry_key` computed them."""
        vid = self._view_ids.get(id(e))
        if vid is None:      # a view this model did not make (ep_view registers its own)
            vid = self.geometry_cache.view_id(geometry_key(e))
        geo = self.geometry_cache.get(op, ctx, vid)
        if geo is None:
            geo = self._geometry(op, e, ctx)
            self.geometry_cache.put(op, ctx, vid, geo)
        return geo

    def _geometry(self, op: Op, e: Gemm2Ep, ctx: OpContext) -> OpGeometry:
        g = e.params
        algo = self.algorithm(op, e.ep)
        inputs = list(zip(_input_sizes(op), ctx.input_distances_B, strict=False))
        ingest = ctx.reads_frame and g.ingest and bool(g.frame_ingest_us or g.frame_ingest_ns_per_byte)
        if ctx.reads_frame and not op.inputs:
            # [choice] A frame prepared by the ingest step was just written (warm); without an ingest
            # step the input is the same buffer as one frame ago (a benchmark, the host executor).
            inputs = [(op.input_bytes, op.input_bytes if ingest else ctx.weight_distance_B)]
        steps: list[StepGeometry] = []
        if algo in ("im2col", "gemm1x1"):
            steps += self._conv_gemm(op, e, inputs, ctx, algo)
        elif algo == "winograd":
            steps += self._winograd(op, e, inputs, ctx)
        elif algo == "depthwise":
            steps.append(_step(e, "depthwise", e.kernel_threads(), "depthwise", op.macs,
                               [*_reads(inputs), Access(op.weight_bytes, ctx.weight_distance_B),
                                Access(op.output_bytes, _working_set(op), write=True)],
                               strided=op.stride > 1, taps=op.window_taps))
        elif algo in ("gemv", "gemm"):
            steps.append(self._matmul(op, e, inputs, ctx, algo))
        else:
            t = e.kernel_threads()
            moved = op.input_bytes + op.output_bytes
            steps.append(_step(e, str(op.kind), t, "cycles",
                               g.kind_cycles_per_byte.get(str(op.kind), 0.0) * moved / t,
                               [*_reads(inputs), Access(op.weight_bytes, ctx.weight_distance_B),
                                Access(op.output_bytes, _working_set(op), write=True)]))
        if ingest:
            steps.insert(0, _step(e, "ingest", 1, "ingest", op.input_bytes, [],
                                  fixed_s=g.frame_ingest_us * 1e-6))
        return OpGeometry(algo, tuple(steps), 1 if ingest else 0, str(op.kind))

    def _conv_gemm(self, op: Op, e: Gemm2Ep, inputs, ctx: OpContext, algo: str) -> list[StepGeometry]:
        g = e.params
        n_rows, k, m = op.gemm  # type: ignore[misc]
        groups = op.gemm_groups
        steps = []
        if algo == "im2col":
            t = e.kernel_threads()
            steps.append(_step(e, "im2col", t, "cycles", g.im2col_cycles_per_byte * op.im2col_bytes / t,
                               [*_reads(inputs[:1]), Access(op.im2col_bytes, op.input_bytes + op.im2col_bytes,
                                                            write=True)]))
            a = Access(op.im2col_bytes, op.im2col_bytes)
        else:
            a = Access(op.input_bytes, inputs[0][1] if inputs else INF)
        steps.append(self._gemm_step(e, n_rows, k, m, groups, a,
                                     Access(op.weight_bytes, ctx.weight_distance_B),
                                     Access(op.output_bytes, _working_set(op), write=True)))
        return steps

    def _winograd(self, op: Op, e: Gemm2Ep, inputs, ctx: OpContext) -> list[StepGeometry]:
        """Winograd F(m×m, 3×3) (Lavin & Gray 2016): tiles of m×m outputs from (m+2)² inputs;
        transformed inputs V [α²·T·C], α² GEMMs of (T×C)·(C×M), outputs inverse-transformed."""
        g = e.params
        mt = g.winograd_tile
        alpha2 = (mt + 2) ** 2
        oh, ow, m = op.out_shape.h, op.out_shape.w, op.out_c
        c = op.in_shape.c
        tiles = math.ceil(oh / mt) * math.ceil(ow / mt)
        eb = op.elem_bytes
        v_bytes = alpha2 * tiles * c * eb
        u_bytes = alpha2 * tiles * m * eb
        w_bytes = alpha2 * c * m * eb           # filters are transformed once, at configure time
        t = e.kernel_threads()
        s_in = _step(e, "winograd-input", t, "cycles", g.winograd_cycles_per_element * alpha2 * tiles * c / t,
                     [*_reads(inputs[:1]), Access(v_bytes, op.input_bytes + v_bytes, write=True)])
        gemm = self._gemm_step(e, tiles, c, m, alpha2, Access(v_bytes, v_bytes),
                               Access(w_bytes, ctx.weight_distance_B),
                               Access(u_bytes, v_bytes + w_bytes + u_bytes, write=True))
        s_out = _step(e, "winograd-output", t, "cycles", g.winograd_cycles_per_element * alpha2 * tiles * m / t,
                      [Access(u_bytes, u_bytes), Access(op.output_bytes, u_bytes + op.output_bytes, write=True)])
        return [s_in, gemm, s_out]

    def _matmul(self, op: Op, e: Gemm2Ep, inputs, ctx: OpContext, algo: str) -> StepGeometry:
        n_rows, k, m = op.gemm  # type: ignore[misc]
        groups = op.gemm_groups
        a_bytes = n_rows * k * groups * op.elem_bytes
        if op.weight_bytes or op.kind == OpKind.FC:
            b = Access(op.weight_bytes, ctx.weight_distance_B)
        else:  # B is an activation: the second input
            b = Access(k * m * groups * op.elem_bytes, inputs[1][1] if len(inputs) > 1 else INF)
        a = Access(a_bytes, inputs[0][1] if inputs else INF)
        out = Access(op.output_bytes, _working_set(op), write=True)
        if algo == "gemv":
            t = self._gemm_threads(e, n_rows * k * m * groups)
            return _step(e, "gemv", t, "gemv", n_rows * k * m * groups, [a, b, out], calls=1,
                         rows=float(k * groups))
        return self._gemm_step(e, n_rows, k, m, groups, a, b, out)

    def _gemm_threads(self, e: Gemm2Ep, macs: float) -> int:
        per = e.params.gemm_macs_per_thread
        if per is None:
            return e.cores
        return max(1, min(e.cores, math.ceil(macs / per)))

    def _gemm_step(self, e: Gemm2Ep, n_rows: int, k: int, m: int, groups: int, a: Access, b: Access,
                   c: Access) -> StepGeometry:
        """One GEMM call per group of N×K·K×M (A = the image matrix or input, B = the filters)."""
        g = e.params
        terms = gemm_terms(e, n_rows, k, m, groups, self._gemm_threads(e, n_rows * k * m * groups))
        t = terms.threads
        pack = g.pack_cycles_per_byte * (a.bytes_ + (b.bytes_ if g.pack_weights else 0.0)) / t
        return _step(e, "gemm", t, "gemm", terms.kernel_cycles, [a, b, c],
                     tile_cycles=terms.tile_blocks * g.tile_overhead_cycles, pack_cycles=pack, calls=groups)

    # -- price: the arithmetic the rates enter -----------------------------------------------------
    def price(self, op: Op, geometry: OpGeometry, e: Gemm2Ep) -> OpCost:
        """The times of ``geometry``'s steps on ``e`` (:meth:`priced`) as an :class:`OpCost`."""
        steps = [Step(sg.name, sg.threads, cycles, sg.accesses, fixed_s, core_s, mem_s, busy_s, sg.dram_B,
                      dict(sg.levels), dram_Bps)
                 for sg, cycles, fixed_s, core_s, mem_s, busy_s, dram_Bps in self.priced(geometry, e)]
        return OpCost(op.name, str(op.kind), geometry.algorithm, steps)

    def priced(self, geometry: OpGeometry, e: Gemm2Ep) -> Iterator[tuple[StepGeometry, float, float, float,
                                                                          float, float, float | None]]:
        """(step, cycles, fixed_s, core_s, mem_s, busy_s, own DRAM rate) of each step of ``geometry``
        on ``e``: cycles from the rates (GEMM, depthwise and GEMV efficiencies, parallel efficiency)
        at the core clock, traffic at each level's bandwidth, fixed costs, combined by ``overlap``."""
        g = e.params
        for i, sg in enumerate(geometry.steps):
            t = sg.threads
            fixed_s = sg.fixed_s
            dram_Bps = None
            if sg.rate == "gemm":
                rate = g.kernel_efficiency * by_cores(g.parallel_efficiency, t, False)
                cycles = sg.work / rate + sg.tile_cycles + sg.pack_cycles
                fixed_s = by_cores(g.gemm_call_us, t, False) * 1e-6 * sg.calls
            elif sg.rate == "depthwise":
                rate = g.dw_macs_per_cycle or e.macs_per_cycle * g.kernel_efficiency
                if sg.strided and g.dw_strided_macs_per_cycle:
                    rate = g.dw_strided_macs_per_cycle
                cycles = (sg.work / rate + sg.taps * g.dw_tap_cycles) / t
            elif sg.rate == "gemv":
                rate = e.macs_per_cycle * (g.gemv_efficiency or g.kernel_efficiency) * \
                    by_cores(g.parallel_efficiency, t, False)
                # the MACs, and the kernel's loop over W's K rows (docs/fidelity.md#the-classifier-gemv-and-softmax)
                cycles = sg.work / (rate * t) + sg.rows * by_cores(g.gemv_row_cycles, t, False)
                call_us = g.gemm_call_us if g.gemv_call_us is None else g.gemv_call_us
                fixed_s = by_cores(call_us, t, False) * 1e-6 * sg.calls
                if g.gemv_GBps_per_core:     # the GEMV streams its weights at its own DRAM rate
                    dram_Bps = gemv_dram_Bps(e, t)
            elif sg.rate == "ingest":        # ns per byte, as cycles at the level's clock
                cycles = g.frame_ingest_ns_per_byte * 1e-9 * sg.work * e.freq_Hz / e.freq_ratio
            else:
                cycles = sg.work
            if i == geometry.overhead_step:
                fixed_s += g.op_overhead_us * 1e-6
                if geometry.kind in g.kind_overhead_us:
                    fixed_s += by_cores(g.kind_overhead_us[geometry.kind], e.cores, False) * 1e-6
            core_s = cycles / e.freq_Hz
            bandwidths = self._level_bandwidths(e, t)
            if dram_Bps is not None:
                bandwidths = (*bandwidths[:-1], dram_Bps)
            mem_s = traffic_time(sg.traffic, bandwidths)
            yield sg, cycles, fixed_s, core_s, mem_s, combine(core_s, mem_s, g.overlap), dram_Bps

    def _level_bandwidths(self, e: Gemm2Ep, threads: int) -> tuple[float, ...]:
        """Bytes/s of each level of ``e.levels(threads)`` (kept per view of this model)."""
        if id(e) not in self._view_ids:
            return tuple(lv.bandwidth_Bps for lv in e.levels(threads))
        key = (id(e), threads)
        bw = self._bandwidths.get(key)
        if bw is None:
            bw = self._bandwidths[key] = tuple(lv.bandwidth_Bps for lv in e.levels(threads))
        return bw

    # -- accelerators ----------------------------------------------------------------------------
    def _accelerator(self, op: Op, ep: ExecutionPlace, state: DvfsState | None) -> OpCost:
        a = self.platform.accelerator(ep.place)
        g = a.gemm2
        level_name = (state or {}).get(a.name)
        try:
            ratio = a.clock_ratio(level_name)
            lvl = a.level(level_name)
        except KeyError:
            raise HetsimError(f"DVFS level {level_name!r} is not a level of accelerator {a.name}; "
                              f"levels: {[lv.name for lv in a.dvfs]}") from None
        f_Hz = (lvl.freq_MHz if lvl else 1000.0) * 1e6
        # the datatype it runs in (compute_dtype, else the op's): that precision's peak, its bytes
        run = a.compute_dtype or op.dtype
        pr = a.precision(run)
        peak = pr.peak_GMACps if pr is not None else a.peak_GMACps
        if peak is None and op.macs:
            raise HetsimError(f"op {op.name} is {op.dtype}, for which accelerator {a.name} has no rate "
                              f"(give peak_GMACps, or list {op.dtype} in precisions)")
        rate = (peak or 0.0) * 1e9 * g.efficiency * ratio
        scale = (pr.element_bytes if pr is not None else op.elem_bytes) / op.elem_bytes if a.compute_dtype else 1.0
        bw = min(a.bandwidth_GBps or INF, self.platform.memory(a.memory).bandwidth_GBps) * 1e9
        nbytes = (op.input_bytes + op.output_bytes + op.weight_bytes) * scale
        s = Step("accelerator", 1)
        s.fixed_s = g.op_overhead_us * 1e-6
        s.core_s = (op.macs / rate if op.macs else 0.0) + (g.kernel_cycles / f_Hz if lvl else 0.0)
        s.mem_s = nbytes / bw
        s.dram_B = nbytes
        s.levels = {"DRAM": nbytes}
        s.busy_s = combine(s.core_s, s.mem_s, g.overlap)
        return OpCost(op.name, str(op.kind), "accelerator", [s])


# -- helpers -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GemmTerms:
    """The shape arithmetic of a GEMM on a core type (what the host tool's fit and the
    model share): the busiest thread's kernel cycles at kernel_efficiency 1 and parallel efficiency
    1, and its micro-kernel tiles times K blocks."""

    threads: int
    kernel_cycles: float
    tile_blocks: float


def gemm_terms(e: Gemm2Ep, n_rows: int, k: int, m: int, groups: int, threads: int) -> GemmTerms:
    """Whole ``tile_rows × tile_cols`` tiles (N and M padded), N row tiles dealt to ``threads``
    (the busiest decides), ``block_k`` blocks of K; without ``tiles`` the work divides evenly."""
    g = e.params
    t = threads
    if not g.tiles:
        busiest = max(n_rows / t, 1.0)
        return GemmTerms(t, busiest * k * m * groups / e.macs_per_cycle, 0.0)
    tr, tc = g.tile_rows, g.tile_cols
    busiest_rows = math.ceil(math.ceil(n_rows / tr) / t)     # whole row tiles per thread
    tiles = busiest_rows * math.ceil(m / tc) * groups
    kblocks = math.ceil(k / g.block_k) if g.block_k else 1
    return GemmTerms(t, tiles * tr * tc * k / e.macs_per_cycle, float(tiles * kblocks))



def gemv_dram_Bps(e: Gemm2Ep, threads: int) -> float:
    """Bytes/s a GEMV of ``threads`` threads streams from DRAM on ``e`` (``gemv_GBps_per_core`` set):
    one value is an assumed per-core figure, capped by the memory port like any traffic; a list is
    measured per thread count by cold GEMVs (calibrate host) and not capped: the memory's figure is
    itself a GEMV's, with the cost of its rows lumped in (docs/fidelity.md#the-classifier-gemv-and-softmax)."""
    rate = e.params.gemv_GBps_per_core
    assert rate is not None
    per_core = by_cores(rate, threads, False) * 1e9
    if isinstance(rate, list):
        return threads * per_core
    return min(threads * per_core, e.dram_Bps_max)


def combine(core_s: float, mem_s: float, overlap: float) -> float:
    """Core and memory time of one kernel: core + mem − overlap · min(core, mem)."""
    return core_s + mem_s - overlap * min(core_s, mem_s)


def memory_time(levels: Sequence[Level], accesses: Iterable[Access],
                g: Gemm2CoreParams) -> tuple[float, float, dict[str, float]]:
    """(seconds, DRAM bytes, bytes per level) of ``accesses``: each served by the levels that hold
    it (:func:`level_traffic`), over their bandwidths (:func:`traffic_time`)."""
    traffic, dram, by_level = level_traffic(levels, accesses, g)
    return traffic_time(traffic, [lv.bandwidth_Bps for lv in levels]), dram, dict(by_level)


def level_traffic(levels: Sequence[Level], accesses: Iterable[Access], g: Gemm2CoreParams
                  ) -> tuple[tuple[tuple[int, float], ...], float, tuple[tuple[str, float], ...]]:
    """Where ``accesses`` are served, from the levels' capacities alone: (level index, bytes) in
    access order, the DRAM bytes, and (level, bytes) per level. Each access is served by the levels
    that hold it (:func:`_shares`); a write landing in DRAM crosses it twice with ``write_allocate``."""
    traffic: list[tuple[int, float]] = []
    dram = 0.0
    by_level: dict[str, float] = {}
    for acc in accesses:
        if acc.bytes_ <= 0:
            continue
        for i, lvl, share in _shares(levels, acc.distance_B, g.caches, g.residency):
            if share <= 0:
                continue
            nbytes = acc.bytes_ * share
            if lvl.name == "DRAM":
                if acc.write and g.write_allocate:
                    nbytes *= 2
                dram += nbytes
            by_level[lvl.name] = by_level.get(lvl.name, 0.0) + nbytes
            traffic.append((i, nbytes))
    return tuple(traffic), dram, tuple(by_level.items())


def traffic_time(traffic: Iterable[tuple[int, float]], bandwidths_Bps: Sequence[float]) -> float:
    """Seconds of ``traffic`` ((level index, bytes), :func:`level_traffic`) over the levels'
    bandwidths; a level of infinite bandwidth (L1, a free L2) costs nothing."""
    mem = 0.0
    for i, nbytes in traffic:
        bw = bandwidths_Bps[i]
        if math.isfinite(bw):
            mem += nbytes / bw
    return mem


def _step(e: Gemm2Ep, name: str, threads: int, rate: str, work: float, accesses: Sequence[Access],
          **kw) -> StepGeometry:
    """A step's geometry: its accesses resolved to the levels ``threads`` threads of ``e`` see."""
    traffic, dram_B, by_level = level_traffic(e.levels(threads), accesses, e.params)
    return StepGeometry(name, threads, rate, work, tuple(accesses), traffic, dram_B, by_level, **kw)


def _reuse_distances(workload) -> dict[int, OpContext]:
    """Every op's reuse distances in ``workload`` (id(op) -> :class:`OpContext`): its ops in file
    order (a topological order) run one after another, frame after frame.

    An op brings its output, weights and image matrix into the caches (its *footprint*); the
    distance of an input is the footprint of the ops between its producer and its reader plus the
    tensor itself; the weights' is one frame's footprint (every op's, plus the frame)."""
    ops = workload.ops
    index = {op.name: i for i, op in enumerate(ops)}
    foot = [op.output_bytes + op.weight_bytes + op.im2col_bytes for op in ops]
    prefix = [0.0]
    for f in foot:
        prefix.append(prefix[-1] + f)
    frame = sum(t.bytes_ for t in workload.inputs.values()) + prefix[-1]
    contexts = {}
    for j, op in enumerate(ops):
        dists = []
        for src in op.inputs:
            i = index[src]
            dists.append(prefix[j] - prefix[i + 1] + ops[i].output_bytes)
        contexts[id(op)] = OpContext(tuple(dists), frame, bool(workload.net_inputs_of(op)))
    return contexts


def _input_sizes(op: Op) -> list[float]:
    """Bytes of each input tensor (a group node reads its slice of the first)."""
    if op.explicit:
        return [math.prod(d) * op.elem_bytes for d in op.in_dims] or [op.input_bytes]
    if not op.in_shapes:
        return [op.input_bytes]
    sizes = [float(s.elements * op.elem_bytes) for s in op.in_shapes]
    if op.group_node is not None:
        sizes[0] /= op.group_node[1]
    return sizes


def _reads(inputs) -> list[Access]:
    return [Access(b, d) for b, d in inputs]


def _working_set(op: Op) -> float:
    """Bytes an op touches: where its output can stay."""
    return op.input_bytes + op.weight_bytes + op.im2col_bytes + op.output_bytes


def _shares(levels: Sequence[Level], distance: float, caches: bool, rule: str):
    """(index, level, share of the bytes served from it) for data last used ``distance`` bytes ago."""
    if not caches:
        yield len(levels) - 1, levels[-1], 1.0
        return
    if rule == "lru":
        for i, lvl in enumerate(levels):
            if distance <= lvl.capacity_B:
                yield i, lvl, 1.0
                return
        return
    held = 0.0
    for i, lvl in enumerate(levels):
        h = 1.0 if distance <= lvl.capacity_B else lvl.capacity_B / distance
        yield i, lvl, h - held
        held = h
        if held >= 1.0:
            return


def op_table(cost: Gemm2CostModel, workload, ep: ExecutionPlace, state: DvfsState | None = None) -> pd.DataFrame:
    """Every op of ``workload`` on ``ep``: layer, kind, algorithm, threads, fixed/core/memory/total
    time (s), DRAM bytes and the bytes served from each level."""
    cost.bind(workload)
    rows = []
    for op in workload.ops:
        if op.kind in VIEW_KINDS:
            rows.append({"layer": op.layer, "op": op.name, "kind": str(op.kind), "algorithm": "view",
                         "threads": 0, "fixed_s": 0.0, "core_s": 0.0, "mem_s": 0.0, "time_s": 0.0,
                         "dram_B": 0.0})
            continue
        b = cost.breakdown(op, ep, state)
        row = {"layer": op.layer, "op": op.name, "kind": str(op.kind), "algorithm": b.algorithm,
               "threads": max(s.threads for s in b.steps), "fixed_s": b.fixed_s, "core_s": b.core_s,
               "mem_s": b.mem_s, "time_s": b.time_s, "dram_B": b.dram_B}
        for s in b.steps:
            for name, nb in s.levels.items():
                row[f"{name}_B"] = row.get(f"{name}_B", 0.0) + nb
        rows.append(row)
    return pd.DataFrame(rows).fillna(0.0)


__all__ = ["ALGORITHMS", "PRICE_FIELDS", "RATES", "Access", "Gemm2CostModel", "Gemm2Ep", "GemmTerms",
           "GeometryCache", "Level", "OpContext", "OpCost", "OpGeometry", "Step", "StepGeometry", "combine",
           "conv_algorithm", "gemm_terms", "gemv_dram_Bps", "geometry_key", "level_traffic", "memory_time",
           "op_table", "traffic_time"]
