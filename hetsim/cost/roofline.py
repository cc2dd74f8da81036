"""The default cost model: GEMM throughput bounded by memory bandwidth (a roofline), per op.

For an op on ``n`` cores of core type T at frequency f::

    compute_s = MACs / (n * T.macs_per_cycle * f * eff * T.par_eff(n))
    mem_s     = (input + output + weight + 2 * im2col bytes) / min(n * per-core, port, memory bandwidth)
    op_time   = T.op_overhead (+ T.gemm_overhead for conv, fc) + max(compute_s, mem_s)

``eff`` is the core type's GEMM (or depthwise) efficiency. Three optional core-type fields, fitted
on a real machine by ``hetsim calibrate host`` (docs/validation.md), add the steps a measured conv
takes besides its multiply-adds: with ``im2col_GBps`` a conv builds its image matrix in a step of
its own, im2col bytes / min(n * rate, bandwidth), before the GEMM (numpy and ARM-CL run it as a
separate kernel); with ``gemm_pack_GBps`` the GEMM pays per byte of its operands (packing the image
matrix and the filters into blocks, writing the output), (im2col + weight + output bytes) /
min(n * rate, bandwidth); with
``kind_GBps[kind]`` the ops of that kind move their bytes at min(rate, bandwidth) instead of the
bandwidth (LRN, pooling: kernels slower than the memory). A rate is one core's (n cores: n times
it) or a measured list, entry n-1 for n cores. With ``gemm_tile_rows`` = ts set, the N
rows of the im2col GEMM are dealt to the n threads in whole tiles of ts rows and the slowest thread
decides (Pipe-it eq. 7 with integer iterations, ceil(ceil(N/ts)/n)), which makes small layers stop
scaling: the concave speedups of Pipe-it Fig. 12. Only convolutions split along N this way; a fully
connected layer (a GEMV, N = 1) is split along its outputs and uses the plain multicore rate. Ops that are not GEMMs (pooling, activation,
eltwise, concat) are memory-bound: compute_s = 0.
"""

from __future__ import annotations

import math

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.workload.ops import BLAS_GEMM_KINDS, VIEW_KINDS

# conv, fc and matmul run as BLAS GEMMs (GEMM efficiency, per-GEMM overhead); dw has its own
# efficiency; every other kind is memory-bound; views and shape metadata cost nothing.
_GEMM_KINDS = BLAS_GEMM_KINDS
_VIEW_KINDS = VIEW_KINDS


def _rate(value: float | list[float], cores: int) -> float:
    """B/s of ``cores`` cores from a per-core rate (x cores) or a measured per-core-count list
    (entry n-1; past its end the last entry scales with the cores)."""
    if isinstance(value, list):
        last = len(value)
        return (value[cores - 1] if cores <= last else value[-1] * cores / last) * 1e9
    return cores * value * 1e9


class RooflineCostModel(CostModel):
    name = "roofline"

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._ep_cache: dict[tuple, tuple] = {}

    def _ep_params(self, ep: ExecutionPlace, state: DvfsState | None) -> tuple:
        """(peak MAC/s for GEMM, for depthwise, per-core MAC/s, bandwidth B/s, overhead s, tile rows,
        allowed kinds, im2col B/s or None, {kind: B/s}, GEMM packing B/s or None, extra fixed s of a
        conv or fc) for ``ep`` in ``state``."""
        level_name = (state or {}).get(ep.cluster) if ep.cluster else None
        key = (ep, level_name)
        params = self._ep_cache.get(key)
        if params is not None:
            return params
        p = self.platform
        if ep.accelerator:
            a = p.accelerator(ep.accelerator)
            rate = a.peak_GMACps * 1e9 * a.efficiency
            bw = min(a.bandwidth_GBps or math.inf, p.memory(a.memory).bandwidth_GBps) * 1e9
            params = (rate, rate, rate, bw, a.op_overhead_us * 1e-6, None, frozenset(a.kinds), None, {},
                      None, 0.0)
        else:
            c = p.cluster(ep.cluster)
            t = p.core_type(c.core_type)
            try:
                level = t.level(level_name or c.dvfs)
            except KeyError:
                raise HetsimError(f"DVFS level {level_name!r} is not a level of core type {t.name} "
                                  f"(cluster {c.name}); levels: {[lv.name for lv in t.dvfs]}") from None
            per_core = t.macs_per_cycle * level.freq_MHz * 1e6 * t.par_eff(ep.cores)
            gemm = per_core * t.gemm_efficiency
            dw = per_core * (t.dw_efficiency or t.gemm_efficiency)
            # n cores draw at most n x the per-core bandwidth, then the port, then the memory.
            per_core = t.bandwidth_GBps_per_core * ep.cores if t.bandwidth_GBps_per_core else math.inf
            bw = min(c.bandwidth_GBps or math.inf, p.memory(c.memory).bandwidth_GBps, per_core) * 1e9
            kinds = frozenset(t.kinds) if t.kinds else None
            im2col = min(_rate(t.im2col_GBps, ep.cores), bw) if t.im2col_GBps else None
            pack = min(ep.cores * t.gemm_pack_GBps * 1e9, bw) if t.gemm_pack_GBps else None
            kind_bw = {k: min(_rate(v, ep.cores), bw) for k, v in t.kind_GBps.items()}
            g = t.gemm_overhead_us
            gemm_fixed = (g[min(ep.cores, len(g)) - 1] if isinstance(g, list) else g) * 1e-6
            params = (gemm * ep.cores, dw * ep.cores, gemm, bw, t.op_overhead_us * 1e-6,
                      t.gemm_tile_rows, kinds, im2col, kind_bw, pack, gemm_fixed)
        self._ep_cache[key] = params
        return params

    def supports(self, op, ep: ExecutionPlace) -> bool:
        kinds = self._ep_params(ep, None)[6]
        return kinds is None or op.kind in kinds or op.macs == 0

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        if op.kind in _VIEW_KINDS:
            return ZERO  # a view of a tensor: no kernel runs, no byte moves
        (gemm_rate, dw_rate, per_core_rate, bw, overhead, tile, _, im2col_bw, kind_bw, pack_bw,
         gemm_fixed) = self._ep_params(ep, state)
        if op.kind in _GEMM_KINDS:
            overhead += gemm_fixed
        macs = op.macs
        if macs:
            if op.kind in _GEMM_KINDS:
                if tile and op.kind == "conv" and ep.cores > 1:
                    # Pipe-it eq. 7: iterations of `tile` rows, the busiest thread decides.
                    n_rows, k, m = op.gemm
                    tiles_per_thread = math.ceil(math.ceil(n_rows / tile) / ep.cores)
                    rows = min(tiles_per_thread * tile, n_rows)
                    compute = rows * k * m * op.gemm_groups / per_core_rate
                else:
                    compute = macs / gemm_rate
            else:
                compute = macs / dw_rate
        else:
            compute = 0.0
        nbytes = op.input_bytes + op.output_bytes + op.weight_bytes + 2 * op.im2col_bytes
        busy = max(compute, nbytes / kind_bw.get(op.kind, bw))
        if op.im2col_bytes:  # conv: steps before the multiply-adds, when the core type has them
            if im2col_bw is not None:
                # A 1x1 stride-1 unpadded conv's image matrix is its input: a plain copy.
                plain = op.kernel == (1, 1) and op.stride == 1 and op.pad == (0, 0)
                busy += op.im2col_bytes / (bw if plain else im2col_bw)
            if pack_bw is not None:
                busy += (op.im2col_bytes + op.weight_bytes + op.output_bytes) / pack_bw
        return Demand(overhead, busy, float(nbytes))
