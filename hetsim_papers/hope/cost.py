"""HOPE's cost model (HOPE gives none; ours, docs/papers/hope.md): what the benchmarking engine of HOPE would measure on
a phone, synthesised from the platform, since the paper publishes no table.

* **Operator latency** ``cl[op][d]`` (§1.3): a roofline with a launch overhead on every device,
  ``lambda_d + max(MACs / rate_d(op), bytes / bandwidth_d)``; the rate is the roofline block's
  GEMM rate, or its depthwise rate (the accelerator's ``hope.dw_efficiency``: depthwise convs are
  poor on a mobile GPU). Bytes are the op's inputs, output and weights (MNN's kernels tile the
  im2col matrix in cache [choice], unlike ARM-CL's, so no im2col traffic). An op kind the GPU does
  not list in ``kinds`` cannot run there (``cl = inf``), as the roofline model's rule says.
* **CPU frequency** (Fig. 5): the CPU's op time at the cluster's DVFS level f is its time at the
  core type's highest level, ``cl(f) = cl(f_max) [alpha f_max / f + (1 - alpha)]``, alpha the
  op's compute-bound fraction: its compute time over its roofline time at f_max, at least the core
  type's ``hope.alpha_memory`` (a memory-bound op still issues its loads at the core clock); the
  launch overhead scales fully. The GPU is not scaled.
* **Communication** ``C[a->b](T)`` (§5.2): between a CPU cluster and a GPU, ``sync + copy +
  layout``: the GPU's ``hope.sync_us`` (map/unmap, event wait); a copy at ``copy_GBps`` unless the
  buffers are zero-copy (HOPE §4.4, the default); the layout transform NC4HW4 <-> OpenCL image at
  ``layout_GBps``, CPU work that scales with the CPU clock like a memory-bound op, and that
  ``same_layout=True`` removes (ARM-CL's NEON and OpenCL kernels share a layout: the μLayer
  comparison, Fig. 6). Between two clusters of one CPU (big <-> LITTLE) the platform's route decides:
  free over shared memory [paper].
* **Split ops** (μLayer): a share costs the op's fixed part whole and its roofline part in
  proportion; gathering the slices costs ``split_sync_s`` (the per-layer CPU-GPU synchronisation,
  a parameter the Fig. 6 experiment fits), the slices being written in place.

    cost = HopeCostModel(load_platform("hope-he"))
    cost.op_time(op, platform.ep("gpu")), cost.transfer_time(nbytes, cpu, gpu)
"""

from __future__ import annotations

import math

from hetsim.cost.base import ZERO, Demand, DvfsState
from hetsim.cost.roofline import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.workload.ops import BLAS_GEMM_KINDS, VIEW_KINDS, OpKind


class HopeCostModel(RooflineCostModel):
    """HOPE's cl and C (module docstring).

    Parameters
    ----------
    platform
        A platform whose GPU has a ``hope`` block (``platforms/hope-{le,me,he}.yaml``).
    zero_copy
        Override the accelerators' ``hope.zero_copy`` (None: as the platform says).
    same_layout
        True: hand-offs need no layout transform (ARM-CL, the μLayer comparison of Fig. 6).
    split_sync_s
        Cost of gathering a split op's slices (μLayer's per-layer synchronisation), s.
    """

    name = "hope"

    def __init__(self, platform: Platform, *, zero_copy: bool | None = None, same_layout: bool = False,
                 split_sync_s: float = 0.0):
        super().__init__(platform)
        if not (isinstance(split_sync_s, int | float) and math.isfinite(split_sync_s) and split_sync_s >= 0):
            raise HetsimError(f"HopeCostModel: split_sync_s={split_sync_s!r}; allowed: a time >= 0 (s)")
        self.zero_copy = zero_copy
        self.same_layout = bool(same_layout)
        self.split_sync_s = float(split_sync_s)
        # (id(op), EP, state) -> (op, demand): the op is kept so that its id is not reused.
        self._op_cache: dict[tuple, tuple] = {}
        self._ratio_cache: dict[tuple, float] = {}   # (cluster, DVFS level) -> f_max / f

    def __repr__(self) -> str:
        return (f"HopeCostModel({self.platform.name}, zero_copy={self.zero_copy}, "
                f"same_layout={self.same_layout}, split_sync_s={self.split_sync_s:g})")

    # -- operator latency --------------------------------------------------------------------------
    def clock_scale(self, ep: ExecutionPlace, alpha: float, state: DvfsState | None = None) -> float:
        """``alpha f_max / f + (1 - alpha)`` for a CPU EP at its DVFS level (1 for an accelerator)."""
        if not ep.cluster:
            return 1.0
        key = (ep.cluster, (state or {}).get(ep.cluster))
        ratio = self._ratio_cache.get(key)
        if ratio is None:
            c = self.platform.cluster(ep.cluster)
            t = self.platform.core_type(c.core_type)
            try:
                level = t.level(key[1] or c.dvfs)
            except KeyError:
                raise HetsimError(f"DVFS level {key[1]!r} is not a level of core type {t.name} (cluster "
                                  f"{c.name}); levels: {[lv.name for lv in t.dvfs]}") from None
            ratio = self._ratio_cache[key] = max(lv.freq_MHz for lv in t.dvfs) / level.freq_MHz
        return alpha * ratio + (1.0 - alpha)

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        key = (id(op), ep, tuple(sorted(state.items())) if state else ())
        cached = self._op_cache.get(key)
        if cached is None:
            cached = self._op_cache[key] = (op, self._demand(op, ep, state))
        return cached[1]

    def _demand(self, op, ep: ExecutionPlace, state: DvfsState | None) -> Demand:
        if op.kind in VIEW_KINDS:
            return ZERO
        if ep.accelerator:
            a = self.platform.accelerator(ep.accelerator)
            r = self.ep_rates(ep)
            rate = r.rate_for(op.dtype) or r.gemm_MACps
            if op.kind == OpKind.DW and a.hope.dw_efficiency is not None:
                rate *= a.hope.dw_efficiency / a.roofline.efficiency
            compute = op.macs / rate if op.macs else 0.0
            nbytes = float(op.input_bytes + op.output_bytes + op.weight_bytes)
            return Demand(r.overhead_s, max(compute, nbytes / r.bandwidth_Bps), nbytes)
        # A CPU EP: the roofline at the core type's highest level, scaled to the cluster's clock.
        assert ep.cluster is not None
        t = self.platform.core_type(self.platform.cluster(ep.cluster).core_type)
        top = max(t.dvfs, key=lambda lv: lv.freq_MHz).name
        r = self.ep_rates(ep, {ep.cluster: top})
        overhead = r.overhead_s + (r.gemm_overhead_s if op.kind in BLAS_GEMM_KINDS else 0.0)
        if op.macs:
            compute = op.macs / (r.gemm_MACps if op.kind in BLAS_GEMM_KINDS else r.dw_MACps)
        else:
            compute = 0.0
        nbytes = float(op.input_bytes + op.output_bytes + op.weight_bytes)
        busy = max(compute, nbytes / r.bandwidth_Bps)
        alpha = max(compute / busy, t.hope.alpha_memory) if busy > 0 else 1.0
        return Demand(overhead * self.clock_scale(ep, 1.0, state), busy * self.clock_scale(ep, alpha, state),
                      nbytes)

    # -- communication ------------------------------------------------------------------------------
    def transfer_time(self, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> float:
        """``C[src->dst]``: sync + copy + layout transform between a CPU cluster and a GPU; the
        platform's route between two clusters (shared memory: free) or two accelerators."""
        if src.place == dst.place or nbytes <= 0:
            return 0.0
        if bool(src.accelerator) == bool(dst.accelerator):
            return super().transfer_time(nbytes, src, dst)
        gpu, cpu = (src, dst) if src.accelerator else (dst, src)
        h = self.platform.accelerator(gpu.accelerator).hope  # type: ignore[arg-type]
        zero_copy = h.zero_copy if self.zero_copy is None else self.zero_copy
        seconds = h.sync_us * 1e-6
        if not zero_copy:
            rate = h.copy_GBps or self.platform.memory(gpu.memory).bandwidth_GBps
            seconds += nbytes / (rate * 1e9)
        if h.layout_GBps is not None and not self.same_layout:
            t = self.platform.core_type(self.platform.cluster(cpu.cluster).core_type)  # type: ignore[arg-type]
            seconds += nbytes / (h.layout_GBps * 1e9) * self.clock_scale(cpu, t.hope.alpha_memory)
        return seconds

    # -- split ops (μLayer) --------------------------------------------------------------------------
    def gather_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        """μLayer's per-layer CPU-GPU synchronisation: the slices are written in place (zero-copy,
        one layout), the join costs ``split_sync_s``."""
        return Demand(self.split_sync_s, 0.0, 0.0) if self.split_sync_s > 0 else ZERO
