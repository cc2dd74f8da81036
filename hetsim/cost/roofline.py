"""The default cost model: GEMM throughput bounded by memory bandwidth (a roofline), per op.

For an op on ``n`` cores of core type T at frequency f, R = T's ``roofline`` block::

    compute_s = MACs / (n * T.macs_per_cycle * f * eff * by_cores(R.parallel_efficiency, n))
    mem_s     = (input + output + weight + 2 * im2col bytes) / min(n * per-core, port, memory bandwidth)
    op_time   = R.op_overhead (+ R.gemm_overhead for conv, fc) + max(compute_s, mem_s)

``eff`` is the block's GEMM (or depthwise) efficiency, or its ``kind_efficiency`` of the op's kind or
conv shape (``conv3x3``) where one is given; with ``clock_independent_share`` s, compute_s at a level
of f MHz is compute_s(f_max) x (s + (1 - s) x f_max / f) instead of following 1/f; a depthwise conv takes the block's
``dw_parallel_efficiency`` curve instead of ``parallel_efficiency`` where one is given, and one of
stride > 1 the ``dw_strided_efficiency`` where one is given; ``dw_tap_cycles`` adds that many
cycles per output pixel and kernel tap to a depthwise conv's compute time. Three optional fields of the block, fitted
on a real machine by ``hetsim calibrate host`` (docs/validation.md), add the steps a measured conv
takes besides its multiply-adds: with ``im2col_GBps`` a conv builds its image matrix in a step of
its own, im2col bytes / min(n * rate, bandwidth), before the GEMM (numpy and ARM-CL run it as a
separate kernel); with ``gemm_pack_GBps`` the GEMM pays per byte of its operands (packing the image
matrix and the filters into blocks, writing the output), (im2col + weight + output bytes) /
min(n * rate, bandwidth); with
``kind_GBps[kind]`` the ops of that kind move their bytes at min(rate, bandwidth) instead of the
bandwidth (LRN, pooling: kernels slower than the memory); ``kind_overhead_us[kind]`` is a fixed
cost per op of that kind (the softmax in a running network). With ``gemv_GBps`` a fully connected
layer (a GEMV, x @ W with W of K rows) takes bytes / rate + K x ``gemv_row_ns`` for its memory
time, and ``gemv_overhead_us`` more as a fixed cost: the STREAM-like bandwidth is itself a GEMV, and a GEMV's rows cost time of their own
(docs/fidelity.md#the-classifier-gemv-and-softmax). A rate is one core's (n cores: n times
it) or a measured list, entry n-1 for n cores. With ``gemm_tile_rows`` = ts set, the N
rows of the im2col GEMM are dealt to the n threads in whole tiles of ts rows and the slowest thread
decides (Pipe-it eq. 7 with integer iterations, ceil(ceil(N/ts)/n)), which makes small layers stop
scaling: the concave speedups of Pipe-it Fig. 12. Only convolutions split along N this way; a fully
connected layer (a GEMV, N = 1) is split along its outputs and uses the plain multicore rate. Ops that are not GEMMs (pooling, activation,
eltwise, concat) are memory-bound: compute_s = 0. An accelerator's rate is peak_GMACps x its
``roofline.efficiency``. :meth:`RooflineCostModel.ep_rates` gives all of these for one EP.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.platform.params import by_cores
from hetsim.workload.ops import BLAS_GEMM_KINDS, DTYPE_BYTES, VIEW_KINDS

# conv, fc and matmul run as BLAS GEMMs (GEMM efficiency, per-GEMM overhead); dw has its own
# efficiency; every other kind is memory-bound; views and shape metadata cost nothing.
_GEMM_KINDS = BLAS_GEMM_KINDS
_VIEW_KINDS = VIEW_KINDS


@dataclass(frozen=True, slots=True)
class EpRates:
    """What the roofline model knows of one EP in one DVFS state, in SI units: the platform's
    hardware facts and the ``roofline`` block of its core type (or accelerator), combined for the
    EP's cores. Rates are sustained (peak x efficiency x parallel efficiency), not peak."""

    gemm_MACps: float                 #: GEMM (conv, fc) rate of the whole EP
    dw_MACps: float                   #: depthwise rate of the whole EP
    gemm_MACps_per_core: float        #: one core's GEMM rate on this EP (tiles: the busiest thread decides)
    bandwidth_Bps: float              #: min(n x per-core, cluster port, memory) bandwidth
    overhead_s: float                 #: fixed cost of every op
    gemm_overhead_s: float            #: fixed cost of a conv or fc on top of overhead_s
    tile_rows: int | None             #: gemm_tile_rows (Pipe-it eq. 7), None: no tiling
    kinds: frozenset[str] | None      #: op kinds the EP runs, None: all
    im2col_Bps: float | None          #: im2col build rate (capped by the bandwidth), None: no step
    gemm_pack_Bps: float | None       #: GEMM operand rate (capped by the bandwidth), None: free
    kind_Bps: Mapping[str, float]     #: op kind -> rate (capped by the bandwidth) where not the bandwidth
    #: Accelerators: sustained rate per listed datatype (``precisions`` x efficiency), MAC/s.
    dtype_MACps: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: Accelerators: the datatype every op runs in (``compute_dtype``), None: the op's own.
    compute_dtype: str | None = None
    #: Accelerators: bytes of one element of ``compute_dtype`` (tensors are converted to it).
    compute_bytes: float | None = None
    #: Depthwise rate of the whole EP at stride > 1 (``dw_strided_efficiency``), None: dw_MACps.
    dw_strided_MACps: float | None = None
    #: Depthwise seconds per output pixel and kernel tap on the whole EP (``dw_tap_cycles``), 0: none.
    dw_tap_s: float = 0.0
    #: fc (GEMV) streaming rate (``gemv_GBps``), None: the bandwidth.
    gemv_Bps: float | None = None
    #: fc time per row of its weights (``gemv_row_ns``), s; read only with gemv_Bps.
    gemv_row_s: float = 0.0
    #: op kind -> fixed cost per op of that kind (``kind_overhead_us``), s.
    kind_overhead_s: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: op kind or conv shape (conv3x3) -> its GEMM rate over gemm_MACps (``kind_efficiency``).
    gemm_scale: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    #: factor on compute time at this level for the share that does not follow the clock
    #: (``clock_independent_share``): share x f / f_max + (1 - share); 1 at the top level.
    compute_scale: float = 1.0

    def rate_for(self, dtype: str) -> float | None:
        """The GEMM rate of an op whose tensors are ``dtype`` on this EP, MAC/s (None: the EP has
        no rate for that datatype). Cores run every datatype at their FP32 rate [choice: the
        schema has no per-datatype rate for cores]."""
        run = self.compute_dtype or dtype
        rate = self.dtype_MACps.get(run)
        if rate is not None:
            return rate
        return self.gemm_MACps if self.gemm_MACps > 0 else None


class RooflineCostModel(CostModel):
    """The GEMM/roofline model (module docstring). Reads the hardware facts of the platform and
    the ``roofline`` blocks of its core types and accelerators (defaults where a block is left out).

        cost = RooflineCostModel(load_platform("hikey970"))
        cost.ep_rates(cost.platform.ep("B4")).gemm_MACps / 1e9   # sustained GMAC/s of B4
    """

    name = "roofline"

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._ep_cache: dict[tuple, EpRates] = {}
        self._demand_cache: dict[tuple, tuple[Any, Demand]] = {}
        self._supports_cache: dict[tuple, bool] = {}

    def ep_rates(self, ep: ExecutionPlace, state: DvfsState | None = None) -> EpRates:
        """The rates and fixed costs of ``ep`` in DVFS ``state`` (cached)."""
        level_name = (state or {}).get(ep.place)
        key = (ep, level_name)
        rates = self._ep_cache.get(key)
        if rates is not None:
            return rates
        p = self.platform
        if ep.accelerator:
            a = p.accelerator(ep.accelerator)
            try:  # the peaks are at the highest DVFS level and follow the accelerator clock
                ratio = a.clock_ratio(level_name)
            except KeyError:
                raise HetsimError(f"DVFS level {level_name!r} is not a level of accelerator {a.name}; "
                                  f"levels: {[lv.name for lv in a.dvfs]}") from None
            eff = a.roofline.efficiency * ratio
            # peak_GMACps: the rate of unlisted datatypes (0 when the accelerator has none).
            rate = (a.peak_GMACps or 0.0) * 1e9 * eff
            per_dtype = {pr.dtype: pr.peak_GMACps * 1e9 * eff for pr in a.precisions}
            compute = a.precision(a.compute_dtype) if a.compute_dtype else None
            bw = min(a.bandwidth_GBps or math.inf, p.memory(a.memory).bandwidth_GBps) * 1e9
            rates = EpRates(rate, rate, rate, bw, a.roofline.op_overhead_us * 1e-6, 0.0, None,
                            frozenset(a.kinds), None, None, MappingProxyType({}),
                            MappingProxyType(per_dtype), a.compute_dtype,
                            compute.element_bytes if compute is not None else
                            (DTYPE_BYTES[a.compute_dtype] if a.compute_dtype else None))
        else:
            assert ep.cluster is not None  # an EP is an accelerator or cores of a cluster
            c = p.cluster(ep.cluster)
            t = p.core_type(c.core_type)
            r = t.roofline
            try:
                level = t.level(level_name or c.dvfs)
            except KeyError:
                raise HetsimError(f"DVFS level {level_name!r} is not a level of core type {t.name} "
                                  f"(cluster {c.name}); levels: {[lv.name for lv in t.dvfs]}") from None
            n = ep.cores
            per_core = t.macs_per_cycle * level.freq_MHz * 1e6 * by_cores(r.parallel_efficiency, n, False)
            gemm = per_core * r.gemm_efficiency
            # depthwise: its own multicore curve where given (a kernel on fewer threads than cores)
            dw_parallel = r.dw_parallel_efficiency or r.parallel_efficiency
            dw_peak = t.macs_per_cycle * level.freq_MHz * 1e6 * by_cores(dw_parallel, n, False)
            dw = dw_peak * (r.dw_efficiency or r.gemm_efficiency)
            dw_strided = dw_peak * r.dw_strided_efficiency if r.dw_strided_efficiency else None
            # a per pixel-and-tap cost, on the cores the depthwise kernel keeps busy (dw_peak's)
            dw_tap = r.dw_tap_cycles * t.macs_per_cycle / dw_peak if r.dw_tap_cycles else 0.0
            # n cores draw at most n x the per-core bandwidth, then the port, then the memory.
            cores_bw = t.bandwidth_GBps_per_core * n if t.bandwidth_GBps_per_core else math.inf
            bw = min(c.bandwidth_GBps or math.inf, p.memory(c.memory).bandwidth_GBps, cores_bw) * 1e9
            im2col = min(by_cores(r.im2col_GBps, n, True) * 1e9, bw) if r.im2col_GBps else None
            pack = min(by_cores(r.gemm_pack_GBps, n, True) * 1e9, bw) if r.gemm_pack_GBps else None
            kind_bw = {k: min(by_cores(v, n, True) * 1e9, bw) for k, v in r.kind_GBps.items()}
            # fc: its own streaming rate and per-row cost where measured (not capped: the
            # bandwidth is itself a GEMV's, docs/fidelity.md#the-classifier-gemv-and-softmax).
            gemv = by_cores(r.gemv_GBps, n, True) * 1e9 if r.gemv_GBps else None
            gemv_row = by_cores(r.gemv_row_ns, n, False) * 1e-9 if r.gemv_row_ns is not None else 0.0
            kind_overhead = {k: by_cores(v, n, False) * 1e-6 for k, v in r.kind_overhead_us.items()}
            if gemv:
                kind_overhead["fc"] = kind_overhead.get("fc", 0.0) + by_cores(r.gemv_overhead_us, n, False) * 1e-6
            gemm_scale = {k: v / r.gemm_efficiency for k, v in r.kind_efficiency.items()}
            share = r.clock_independent_share
            f_max = max(lvl.freq_MHz for lvl in t.dvfs)
            compute_scale = share * level.freq_MHz / f_max + (1.0 - share) if share else 1.0
            rates = EpRates(gemm * n, dw * n, gemm, bw, r.op_overhead_us * 1e-6,
                            by_cores(r.gemm_overhead_us, n, False) * 1e-6, r.gemm_tile_rows,
                            frozenset(t.kinds) if t.kinds else None, im2col, pack,
                            MappingProxyType(kind_bw),
                            dw_strided_MACps=dw_strided * n if dw_strided is not None else None,
                            dw_tap_s=dw_tap / n,
                            gemv_Bps=gemv, gemv_row_s=gemv_row if gemv else 0.0,
                            kind_overhead_s=MappingProxyType(kind_overhead),
                            gemm_scale=MappingProxyType(gemm_scale), compute_scale=compute_scale)
        self._ep_cache[key] = rates
        return rates

    def supports(self, op, ep: ExecutionPlace) -> bool:
        """Whether ``ep`` runs ``op``: its kind is in the EP's ``kinds`` (every op kind, docs/model.md;
        views run anywhere: no kernel runs) and, on an accelerator, it has a rate for the op's
        datatype (``peak_GMACps``, a listed precision or its ``compute_dtype``)."""
        if op.kind in _VIEW_KINDS:
            return True
        key = (op.kind, op.dtype, bool(op.macs), ep)   # all it depends on: asked per op of every candidate
        ok = self._supports_cache.get(key)
        if ok is None:
            r = self.ep_rates(ep)
            ok = self._supports_cache[key] = not ((r.kinds is not None and op.kind not in r.kinds)
                                                  or (op.macs and r.rate_for(op.dtype) is None))
        return ok

    def why_not(self, op, ep: ExecutionPlace) -> str | None:
        if self.supports(op, ep):
            return None
        r = self.ep_rates(ep)
        if r.kinds is not None and op.kind not in r.kinds:
            return f"kind {op.kind} is not one of the kinds {ep.place} runs (its `kinds:` list)"
        return f"{ep.place} has no rate for {op.dtype} (peak_GMACps, precisions or compute_dtype)"

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        # Cached per (op, EP, DVFS state): a search prices the same op on the same EP once per
        # candidate. The cache holds the op, so its id() is never recycled while the entry lives.
        key = (id(op), ep, tuple(sorted(state.items())) if state else ())
        hit = self._demand_cache.get(key)
        if hit is not None:
            return hit[1]
        demand = self._op_demand(op, ep, state)
        self._demand_cache[key] = (op, demand)
        return demand

    def _op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None) -> Demand:
        if op.kind in _VIEW_KINDS:
            return ZERO  # a view of a tensor: no kernel runs, no byte moves
        r = self.ep_rates(ep, state)
        bw = r.bandwidth_Bps
        overhead = r.overhead_s
        if op.kind in _GEMM_KINDS:
            overhead += r.gemm_overhead_s
        overhead += r.kind_overhead_s.get(op.kind, 0.0)
        macs = op.macs
        if ep.accelerator and (r.dtype_MACps or r.compute_dtype):
            return self._accelerator_demand(op, r, overhead)
        if macs:
            if op.kind in _GEMM_KINDS:
                tile = r.tile_rows
                if tile and op.kind == "conv" and ep.cores > 1:
                    # Pipe-it eq. 7: iterations of `tile` rows, the busiest thread decides.
                    n_rows, k, m = op.gemm
                    tiles_per_thread = math.ceil(math.ceil(n_rows / tile) / ep.cores)
                    rows = min(tiles_per_thread * tile, n_rows)
                    compute = rows * k * m * op.gemm_groups / r.gemm_MACps_per_core
                else:
                    compute = macs / r.gemm_MACps
                if r.gemm_scale:
                    shape = f"conv{op.kernel[0]}x{op.kernel[1]}" if op.kind == "conv" else ""
                    compute /= r.gemm_scale.get(shape) or r.gemm_scale.get(op.kind, 1.0)
            else:
                compute = macs / (r.dw_strided_MACps if op.stride > 1 and r.dw_strided_MACps else r.dw_MACps)
                compute += op.window_taps * r.dw_tap_s
            if r.compute_scale != 1.0:
                compute *= r.compute_scale
        else:
            compute = 0.0
        nbytes = op.input_bytes + op.output_bytes + op.weight_bytes + 2 * op.im2col_bytes
        if op.kind == "fc" and r.gemv_Bps is not None:
            # a GEMV x @ W streams W row by row: bytes at its rate plus a cost per row (K rows).
            memory = nbytes / r.gemv_Bps + op.gemm[1] * r.gemv_row_s
        else:
            memory = nbytes / r.kind_Bps.get(op.kind, bw)
        busy = max(compute, memory)
        if op.im2col_bytes:  # conv: steps before the multiply-adds, when the core type has them
            if r.im2col_Bps is not None:
                # A 1x1 stride-1 unpadded conv's image matrix is its input: a plain copy.
                plain = op.kernel == (1, 1) and op.stride == 1 and op.pad == (0, 0)
                busy += op.im2col_bytes / (bw if plain else r.im2col_Bps)
            if r.gemm_pack_Bps is not None:
                busy += (op.im2col_bytes + op.weight_bytes + op.output_bytes) / r.gemm_pack_Bps
        return Demand(overhead, busy, float(nbytes))

    def _accelerator_demand(self, op, r: EpRates, overhead: float) -> Demand:
        """An op on an accelerator with per-datatype rates: MACs at the rate of the datatype it runs
        in (its ``compute_dtype``, else the op's own), bytes scaled to that datatype's element size
        (a network quantised to int8 moves a quarter of its FP32 bytes)."""
        rate = r.rate_for(op.dtype)
        if rate is None:
            raise HetsimError(f"op {op.name} is {op.dtype}, for which the accelerator has no rate "
                              f"(give peak_GMACps, or list {op.dtype} in precisions)")
        scale = (r.compute_bytes / op.elem_bytes) if r.compute_bytes is not None else 1.0
        compute = op.macs / rate if op.macs else 0.0
        nbytes = (op.input_bytes + op.output_bytes + op.weight_bytes + 2 * op.im2col_bytes) * scale
        busy = max(compute, nbytes / r.bandwidth_Bps)
        return Demand(overhead, busy, float(nbytes))

    def gather_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        """Gathering a split op's slices into its output on ``ep`` (the concat of μLayer / AutoDiCE):
        the output is read and written once at the EP's bandwidth. [choice] No per-op overhead: the
        runtime copies the slices, no kernel of the network runs."""
        nbytes = 2.0 * op.output_bytes
        if nbytes <= 0:
            return ZERO
        return Demand(0.0, nbytes / self.ep_rates(ep, state).bandwidth_Bps, nbytes)
