"""Pipe-it's cost models: a ground truth standing in for the HiKey 970, and the paper's predictor.

* :class:`PipeitGroundTruth` plays the board: the "measured" time of every op on every homogeneous
  core configuration (B1..B4, s1..s4). Per op on ``n`` cores of one cluster, each core running at
  e(n) = parallel_efficiency[n-1] of its single-core rate (shared-L2 contention); parameters come
  from the core type's ``roofline`` and ``pipeit`` blocks (:class:`PipeitGroundTruth`)::

      conv:  compute = (ceil(N/ts) / n) · ts·K·M_pad · groups / (per-core MAC/s · e(n) · gemm_efficiency)
             (row tiles of ts rows split evenly; M_pad = M rounded up to gemm_tile_cols, arm_gemm's
             output block; split="tiles" deals whole tiles instead: Pipe-it eq. 7 literally)
      dw:    compute = (O_h·C / n) · O_w·R·S / (per-core MAC/s · e(n) · dw_efficiency)
             (e(n) = dw_parallel_efficiency[n-1] where the roofline block gives that curve; stride > 1:
             dw_strided_efficiency where given), + the busiest thread's share of
             O_h·O_w·R·S · dw_tap_cycles / (f · e(n))
      fc:    a GEMV, memory-bound: (M / n) · K · 4 B / (gemv_GBps_per_core · e(n))
      memory = bytes / min(n · bandwidth_GBps_per_core, cluster port, DRAM)
               bytes = inputs + output + weights + 2 · im2col (written, then read)
      time   = op_overhead + max(compute, memory)

  Ops that are not GEMMs (pooling, ReLU, LRN, BN, add, concat, softmax) are memory-bound; views
  cost nothing. The speedup over cores is concave for every layer (Pipe-it Fig. 12): contention,
  the fixed overhead and the bandwidth cap all bite harder with more cores.
  :meth:`PipeitGroundTruth.side_time` also prices a *share* of an op on a set of threads, which
  is what kernel-level co-execution (:mod:`hetsim_papers.pipeit.kernel_level`) needs.

* :class:`PipeitPredictor` is Pipe-it's prediction model (§V): eq. 5, a linear regression of a
  convolution's single-core time on N, K, M, NK, KM, NM, NKM and a constant, fitted per core type on
  the paper's 900-point micro-benchmark grid; eqs. 6-7 for H cores (iterations of ts rows, the
  slowest thread decides) with α1..α3 fitted per core type; FC layers by a per-(neurons, config)
  regression on the input size (§V-D). The micro-benchmarks are "run" on a ground truth.

Every choice the paper leaves open is listed in docs/papers/pipeit.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.gemm2 import Gemm2CostModel, GeometryCache
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform, by_cores
from hetsim.workload.ops import BYTES_PER_ELEMENT, VIEW_KINDS, Op, OpKind, Shape, window_out_size


# -- the ground truth -----------------------------------------------------------------------------
@dataclass(frozen=True)
class CoreParams:
    """What the ground truth needs of one cluster at one DVFS level (rates in MAC/s and B/s)."""

    cluster: str
    cores: int
    macs_per_s: float           # peak of one core
    gemm_efficiency: float
    dw_efficiency: float
    gemv_Bps_per_core: float
    bandwidth_Bps_per_core: float
    port_Bps: float             # min(cluster port, memory)
    overhead_s: float
    tile_rows: int | None
    tile_cols: int | None
    parallel: tuple[float, ...] = (1.0,)   # per-core efficiency with 1, 2, ... busy cores
    dw_parallel: tuple[float, ...] | None = None   # depthwise's own curve (None: ``parallel``)
    dw_strided_efficiency: float | None = None     # depthwise of stride > 1 (None: dw_efficiency)
    dw_tap_s: float = 0.0                          # depthwise s per output pixel and tap, one core

    def bandwidth_Bps(self, threads: int) -> float:
        return min(threads * self.bandwidth_Bps_per_core, self.port_Bps)

    def parallel_efficiency(self, threads: int) -> float:
        return by_cores(self.parallel, threads, scale_past_end=False)


def core_params(platform: Platform, cluster: str, level: str | None = None) -> CoreParams:
    """The ground truth's view of ``cluster``: hardware facts, the core type's ``roofline`` block
    (efficiencies, overhead, row tiles: the ground truth is a fitted variant of the roofline) and
    its ``pipeit`` block (column tiles, the GEMV rate)."""
    c = platform.cluster(cluster)
    t = platform.core_type(c.core_type)
    r, q = t.roofline, t.pipeit
    lvl = t.level(level or c.dvfs)
    port = min(c.bandwidth_GBps or math.inf, platform.memory(c.memory).bandwidth_GBps) * 1e9
    per_core_bw = (t.bandwidth_GBps_per_core or math.inf) * 1e9
    gemv = q.gemv_GBps_per_core * 1e9 if q.gemv_GBps_per_core else per_core_bw
    if not math.isfinite(gemv):
        raise HetsimError(f"core type {t.name}: the Pipe-it ground truth needs pipeit.gemv_GBps_per_core or "
                          f"bandwidth_GBps_per_core (a fully connected layer is memory-bound)")
    return CoreParams(
        cluster=c.name, cores=c.cores, macs_per_s=t.macs_per_cycle * lvl.freq_MHz * 1e6,
        gemm_efficiency=r.gemm_efficiency, dw_efficiency=r.dw_efficiency or r.gemm_efficiency,
        gemv_Bps_per_core=gemv, bandwidth_Bps_per_core=per_core_bw, port_Bps=port,
        overhead_s=r.op_overhead_us * 1e-6, tile_rows=r.gemm_tile_rows, tile_cols=q.gemm_tile_cols,
        parallel=tuple(r.parallel_efficiency),
        dw_parallel=tuple(r.dw_parallel_efficiency) if r.dw_parallel_efficiency else None,
        dw_strided_efficiency=r.dw_strided_efficiency,
        dw_tap_s=(r.dw_tap_cycles or 0.0) / (lvl.freq_MHz * 1e6))


def op_bytes(op: Op) -> int:
    """Bytes an op moves: its inputs, output and weights, and its im2col matrix twice."""
    return op.input_bytes + op.output_bytes + op.weight_bytes + 2 * op.im2col_bytes


class PipeitGroundTruth(CostModel):
    """The stand-in for on-board measurements of Pipe-it's HiKey 970 (see the module docstring).

    Parameters come from the platform, so that :func:`hetsim.calibrate.fit_platform` can fit them as
    overrides: a core type's ``roofline`` block (``gemm_efficiency``, ``dw_efficiency``,
    ``parallel_efficiency``, ``op_overhead_us``, ``gemm_tile_rows``: this model is a fitted variant
    of the roofline and shares its parameters), its ``pipeit`` block (``gemm_tile_cols``,
    ``gemv_GBps_per_core``) and hardware facts (``bandwidth_GBps_per_core``; clusters and memories:
    bandwidths). The roofline block's other fields are not read here.
    """

    name = "pipeit-ground-truth"
    SPLITS = ("even", "tiles")

    def __init__(self, platform: Platform, split: str = "even"):
        super().__init__(platform)
        if split not in self.SPLITS:
            raise HetsimError(f"split {split!r}: allowed: {', '.join(self.SPLITS)}")
        self.split = split
        self._params: dict[tuple, CoreParams] = {}

    def params(self, cluster: str, state: DvfsState | None = None) -> CoreParams:
        level = (state or {}).get(cluster)
        key = (cluster, level)
        p = self._params.get(key)
        if p is None:
            p = self._params[key] = core_params(self.platform, cluster, level)
        return p

    # -- the model ---------------------------------------------------------------------------
    def side_time(self, op: Op, p: CoreParams, threads: int, share: float = 1.0) -> tuple[float, float]:
        """(busy_s, bytes) of ``share`` of ``op``'s work run by ``threads`` cores of one cluster.

        ``share`` is the fraction of the op's work this cluster gets (1 = all of it; kernel-level
        co-execution gives each cluster a part); busy_s excludes the fixed per-op overhead.
        """
        if op.kind in VIEW_KINDS or share <= 0:
            return 0.0, 0.0
        nbytes = op_bytes(op) * share
        memory = nbytes / p.bandwidth_Bps(threads)
        eff = p.parallel_efficiency(threads)      # shared-L2 contention: per-core rate with `threads` busy
        if op.kind == OpKind.CONV:
            n_rows, k, m = op.gemm_dims
            ts, tc = p.tile_rows or 1, p.tile_cols or 1
            row_tiles = math.ceil(n_rows / ts)
            # arm_gemm computes whole ts x tc blocks: N and M are padded.
            tile_macs = ts * k * math.ceil(m / tc) * tc * op.gemm_groups
            busiest = self._busiest(row_tiles, share, threads)
            compute = busiest * tile_macs / (p.macs_per_s * eff * p.gemm_efficiency)
            return max(compute, memory), nbytes
        if op.kind == OpKind.DW:
            r, s = op.kernel
            rows = op.out_shape.h * op.out_c              # work units: output rows of every channel
            busiest = self._busiest(rows, share, threads)
            if p.dw_parallel is not None:
                eff = by_cores(p.dw_parallel, threads, scale_past_end=False)
            dw_eff = p.dw_strided_efficiency if op.stride > 1 and p.dw_strided_efficiency else p.dw_efficiency
            compute = busiest * op.out_shape.w * r * s / (p.macs_per_s * eff * dw_eff)
            # the busiest thread's share of the per pixel-and-tap cost (dw_tap_cycles)
            compute += busiest / rows * op.window_taps * p.dw_tap_s / eff
            return max(compute, memory), nbytes
        if op.kind == OpKind.FC:
            _, k, m = op.gemm_dims
            busiest = self._busiest(m, share, threads)   # outputs, each a row of K weights
            gemv = busiest * k * BYTES_PER_ELEMENT / (p.gemv_Bps_per_core * eff)
            return max(gemv, memory), nbytes
        return memory, nbytes

    def _busiest(self, units: int, share: float, threads: int) -> float:
        """Work units of the busiest thread when ``threads`` share ``share`` of ``units``: an even split
        (at least one unit), or whole units dealt out (``split="tiles"``, Pipe-it eq. 7)."""
        mine = units * share
        if self.split == "tiles":
            return math.ceil(math.ceil(mine - 1e-9) / threads)
        return max(mine / threads, min(1.0, mine))

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        if op.kind in VIEW_KINDS:
            return ZERO
        if not ep.cluster:
            raise HetsimError(f"the Pipe-it ground truth models CPU clusters only, not {ep.name}")
        p = self.params(ep.cluster, state)
        busy, nbytes = self.side_time(op, p, ep.cores)
        return Demand(p.overhead_s, busy, float(nbytes))

    def layer_table(self, workload, eps: Sequence[ExecutionPlace],
                    state: DvfsState | None = None) -> pd.DataFrame:
        """The T matrix as a tidy table (layer, ep, time_s) that :class:`MeasuredCostModel` replays."""
        return time_table(self, workload, eps, state)


@dataclass(frozen=True)
class ClusterView:
    """What the predictor fit and kernel-level co-execution read of a gemm2 ground truth's cluster."""

    cluster: str
    cores: int
    overhead_s: float           # the fixed cost of every op (gemm2 op_overhead_us)
    tile_rows: int | None


class Gemm2GroundTruth(Gemm2CostModel):
    """The HiKey 970 played by the gemm2 model (hetsim/cost/gemm2.py): the same interface as
    :class:`PipeitGroundTruth` (``params``, ``side_time``), so Pipe-it's predictor is fitted on it
    and kernel-level co-execution splits its ops. Per-layer big/LITTLE ratios come out of the op
    shapes, the cache sizes and each core type's datapath (docs/papers/pipeit.md)."""

    name = "pipeit-ground-truth-gemm2"

    def __init__(self, platform: Platform, workloads: Iterable = (), context: bool = True,
                 geometry: GeometryCache | None = None):
        super().__init__(platform, workloads, context, geometry)
        # (id(op), its reuse distances, cluster, threads) -> (op, time_s, DRAM bytes): the predictor's
        # micro-benchmarks and kernel-level co-execution price the same op on the same cores again
        # and again (every share, every slowdown); the op is held so that its id stays its own.
        self._sides: dict[tuple, tuple[Op, float, float]] = {}

    def params(self, cluster: str, state: DvfsState | None = None) -> ClusterView:
        c = self.platform.cluster(cluster)
        g = self.platform.core_type(c.core_type).gemm2
        return ClusterView(cluster, c.cores, g.op_overhead_us * 1e-6, g.tile_rows)

    def side_time(self, op: Op, p: ClusterView, threads: int, share: float = 1.0) -> tuple[float, float]:
        """(busy_s, DRAM bytes) of ``share`` of ``op`` on ``threads`` cores of ``p``'s cluster: the
        op's time on that many cores without its per-op overhead, in proportion to the share."""
        if op.kind in VIEW_KINDS or share <= 0:
            return 0.0, 0.0
        key = (id(op), self.context(op), p.cluster, threads)
        hit = self._sides.get(key)
        if hit is None:
            b = self.breakdown(op, self.platform.ep(f"{p.cluster}:{threads}"))
            if len(self._sides) >= self.geometry_cache.max_entries:
                self._sides.clear()
            hit = self._sides[key] = (op, b.time_s, b.dram_B)
        return (hit[1] - p.overhead_s) * share, hit[2] * share

    def layer_table(self, workload, eps: Sequence[ExecutionPlace],
                    state: DvfsState | None = None) -> pd.DataFrame:
        """The T matrix as a tidy table (layer, ep, time_s) that :class:`MeasuredCostModel` replays."""
        return time_table(self, workload, eps, state)


def time_table(cost: CostModel, workload, eps: Sequence[ExecutionPlace],
               state: DvfsState | None = None) -> pd.DataFrame:
    """Tidy T matrix of ``cost``: one row per (layer, EP) with the layer's time in seconds."""
    T = cost.time_matrix(workload, eps, state)
    rows = [(workload.name, layer + 1, ep.name, float(T[layer, e]))
            for e, ep in enumerate(eps) for layer in range(workload.num_layers)]
    return pd.DataFrame(rows, columns=["workload", "layer", "ep", "time_s"])


# -- micro-benchmark ops ---------------------------------------------------------------------------
def conv_op(size: int, channels: int, kernel: int, filters: int, stride: int = 1,
            pad: int | None = None, name: str = "bench") -> Op:
    """A stand-alone convolution of a ``size``×``size``×``channels`` input (same padding by default)."""
    pad = (kernel - 1) // 2 if pad is None else pad
    out = window_out_size(size, kernel, stride, (pad, pad))
    if out < 1:
        raise HetsimError(f"micro-benchmark conv {kernel}x{kernel} does not fit a {size}x{size} input")
    inp = Shape(size, size, channels)
    return Op(name, OpKind.CONV, (), inp, Shape(out, out, filters), 1, True, (kernel, kernel), stride,
              (pad, pad), in_shapes=(inp,))


def dw_op(size: int, channels: int, stride: int = 1, kernel: int = 3, name: str = "bench") -> Op:
    """A depthwise 3×3 convolution as ARM-CL pads it (1 for stride 1, (0, 1) for stride 2)."""
    pad = (kernel // 2, kernel // 2) if stride == 1 else (0, 1)
    out = window_out_size(size, kernel, stride, pad)
    inp = Shape(size, size, channels)
    return Op(name, OpKind.DW, (), inp, Shape(out, out, channels), 1, True, (kernel, kernel), stride,
              pad, groups=channels, in_shapes=(inp,))


def fc_op(inputs: int, outputs: int, name: str = "bench") -> Op:
    """A fully connected layer reading a 1×1×``inputs`` tensor."""
    inp = Shape(1, 1, inputs)
    return Op(name, OpKind.FC, (), inp, Shape(1, 1, outputs), 1, True, in_shapes=(inp,))


#: Pipe-it §V-B's micro-benchmark grid, as printed ("92" kept): 5 × 5 × 6 × 6 = 900.
GRID_SIZES = (7, 14, 28, 56, 112)
GRID_KERNELS = (1, 3, 5, 7, 11)
GRID_CHANNELS = (32, 64, 92, 128, 192, 256)
GRID_FILTERS = (32, 64, 92, 128, 192, 256)
#: [assumption] FC micro-benchmarks (§V-D gives only "various input sizes with 4096 and 1000 neurons").
FC_NEURONS = (1000, 4096)
FC_INPUTS = (1024, 2048, 4096, 8192, 9216, 16384)
#: [assumption] depthwise micro-benchmarks (the paper does not describe depthwise layers).
DW_SIZES = (7, 14, 28, 56, 112)
DW_CHANNELS = (32, 64, 128, 256, 512, 1024)
DW_STRIDES = (1, 2)


def conv_grid(sizes=GRID_SIZES, kernels=GRID_KERNELS, channels=GRID_CHANNELS,
              filters=GRID_FILTERS) -> list[Op]:
    """The micro-benchmark convolutions: stride 1, same padding [assumption: §V-B gives none]."""
    return [conv_op(i, c, f, m) for i in sizes for f in kernels for c in channels for m in filters]


def dw_grid() -> list[Op]:
    return [dw_op(i, c, s) for i in DW_SIZES for c in DW_CHANNELS for s in DW_STRIDES]


def fc_grid() -> list[Op]:
    return [fc_op(k, m) for m in FC_NEURONS for k in FC_INPUTS]


@lru_cache(maxsize=1)
def _default_grids() -> tuple[tuple[Op, ...], tuple[Op, ...], tuple[Op, ...]]:
    """The conv, dw and fc micro-benchmarks, built once: ops are immutable, and a ground truth that
    keeps per-op results (gemm2's geometry cache, its side times) reuses them across fits."""
    return tuple(conv_grid()), tuple(dw_grid()), tuple(fc_grid())


# -- the predictor (Pipe-it §V, eqs. 5-8) -------------------------------------------------------------
def eq5_features(n: np.ndarray, k: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Eq. 5's regressors: N, K, M, NK, KM, NM, NKM, 1 (columns in β1..β8 order)."""
    n, k, m = (np.asarray(x, dtype=float) for x in (n, k, m))
    return np.column_stack([n, k, m, n * k, k * m, n * m, n * k * m, np.ones_like(n)])


def _wls(X: np.ndarray, y: np.ndarray, weighting: str) -> np.ndarray:
    """Least squares; ``relative`` weights each row by 1/y (minimises relative error)."""
    if weighting == "relative":
        w = 1.0 / y
    elif weighting == "none":
        w = np.ones_like(y)
    else:
        raise HetsimError(f"weighting {weighting!r}: allowed: relative, none")
    coef, *_ = np.linalg.lstsq(X * w[:, None], y * w, rcond=None)
    return coef


def eq7_time(t_single: float | np.ndarray, n_rows, cores, tile_rows: int,
             alphas: Sequence[float] | np.ndarray) -> np.ndarray:
    """Eqs. 6-7 with integer iterations: n_iter = ceil(N/ts) iterations of (T − α1)/n_iter + α2,
    dealt evenly to H threads; the slowest thread (ceil(n_iter/H) iterations) + α3 decides."""
    a1, a2, a3 = alphas
    n_iter = np.maximum(1, np.ceil(np.asarray(n_rows, dtype=float) / tile_rows))
    busiest = np.ceil(n_iter / np.asarray(cores, dtype=float))
    t_iter = (np.asarray(t_single, dtype=float) - a1) / n_iter + a2
    return t_iter * busiest + a3


@dataclass
class FamilyFit:
    """Eq. 5 coefficients (β1..β8) and eq. 6-7 coefficients (α1..α3) of one core type and op family."""

    betas: np.ndarray
    alphas: np.ndarray


class PipeitPredictor(CostModel):
    """Pipe-it's layer-time predictor. Build it with :meth:`fit`; use it like any cost model.

    The predicted time of a layer is the predicted time of its major op (conv, dw or fc), as the
    paper predicts GEMMs only; ``include_folded=True`` adds the ground truth's time of the folded
    non-conv ops (the paper is silent; off by default).

        pred = PipeitPredictor.fit(platform, PipeitGroundTruth(platform))
        pred.conv["cortex-a73"].betas            # β1..β8 of eq. 5
        pred.layer_times(workload, platform.ep("B3"))
    """

    name = "pipeit-predictor"

    def __init__(self, platform: Platform, include_folded: bool = False, truth: CostModel | None = None):
        super().__init__(platform)
        self.conv: dict[str, FamilyFit] = {}                  # core type -> eq. 5 and eq. 7 fit
        self.dw: dict[str, FamilyFit] = {}
        self.fc: dict[tuple[str, int, int], tuple[float, float]] = {}  # (core type, cores, neurons) -> (γ1, γ0)
        self.tile_rows: dict[str, int] = {}
        self.include_folded = include_folded
        self.truth = truth
        if include_folded and truth is None:
            raise HetsimError("include_folded needs the ground truth that prices the folded ops")

    # -- fitting -------------------------------------------------------------------------------
    @classmethod
    def fit(cls, platform: Platform, truth: PipeitGroundTruth | Gemm2GroundTruth, *, weighting: str = "relative",
            include_folded: bool = False, grid: Sequence[Op] | None = None,
            clusters: Iterable[str] | None = None) -> PipeitPredictor:
        """Run the micro-benchmarks on ``truth`` and fit eq. 5 (single core) and eqs. 6-7 (1..n
        cores) per core type, and the FC regressions per (neurons, configuration)."""
        default_conv, dw_ops, fc_ops = _default_grids()
        conv_ops = list(grid) if grid is not None else default_conv
        pred = cls(platform, include_folded=include_folded, truth=truth)
        names = list(clusters) if clusters is not None else [c.name for c in platform.clusters]
        for cname in names:
            c = platform.cluster(cname)
            p = truth.params(cname)
            ts = p.tile_rows or 1
            pred.tile_rows[c.core_type] = ts
            for family, ops in (("conv", conv_ops), ("dw", dw_ops)):
                n = np.asarray([op.gemm_dims[0] for op in ops], dtype=np.float64)
                k = np.asarray([op.gemm_dims[1] for op in ops], dtype=np.float64)
                m = np.asarray([op.gemm_dims[2] for op in ops], dtype=np.float64)
                single = np.array([_measure(truth, op, p, 1) for op in ops])
                betas = _wls(eq5_features(n, k, m), single, weighting)
                # Eq. 7 is linear in α: T_multi = T·b/n_iter − α1·b/n_iter + α2·b + α3, b = busiest.
                xs, ys, targets = [], [], []
                n_iter = np.maximum(1, np.ceil(n / ts))
                for h in range(2, c.cores + 1):
                    multi = np.array([_measure(truth, op, p, h) for op in ops])
                    b = np.ceil(n_iter / h)
                    xs.append(np.column_stack([-b / n_iter, b, np.ones_like(b)]))
                    ys.append(multi - single * b / n_iter)
                    targets.append(multi)
                if xs:
                    # Weighted by the multicore time itself, so that "relative" minimises relative error.
                    target = np.concatenate(targets)
                    w = 1.0 / target if weighting == "relative" else np.ones_like(target)
                    alphas, *_ = np.linalg.lstsq(np.vstack(xs) * w[:, None], np.concatenate(ys) * w, rcond=None)
                else:
                    alphas = np.zeros(3)
                getattr(pred, family)[c.core_type] = FamilyFit(betas, alphas)
            for neurons in FC_NEURONS:
                ops = [op for op in fc_ops if op.gemm_dims[2] == neurons]
                x = np.asarray([op.gemm_dims[1] for op in ops], dtype=np.float64)
                for h in range(1, c.cores + 1):
                    y = np.array([_measure(truth, op, p, h) for op in ops])
                    g1, g0 = _wls(np.column_stack([x, np.ones_like(x)]), y, weighting)
                    pred.fc[(c.core_type, h, neurons)] = (float(g1), float(g0))
        return pred

    # -- prediction -----------------------------------------------------------------------------
    def predict_op(self, op: Op, ep: ExecutionPlace) -> float:
        """Predicted time of a conv, dw or fc op on ``ep`` (s)."""
        if ep.cluster is None:
            raise HetsimError(f"Pipe-it's predictor prices CPU cores only, not {ep.name}")
        ctype = self.platform.cluster(ep.cluster).core_type
        if op.kind == OpKind.FC:
            _, k, m = op.gemm_dims
            neurons = min(FC_NEURONS, key=lambda x: abs(math.log(x / m)))  # nearest benchmarked count
            g1, g0 = self.fc[(ctype, ep.cores, neurons)]
            return float((g1 * k + g0) * m / neurons)
        fit = (self.conv if op.kind == OpKind.CONV else self.dw).get(ctype)
        if fit is None:
            raise HetsimError(f"the predictor was not fitted for core type {ctype}")
        n, k, m = op.gemm_dims
        single = float(eq5_features(np.array([n]), np.array([k]), np.array([m]))[0] @ fit.betas) * op.gemm_groups
        if ep.cores == 1:
            return single
        return float(eq7_time(single, n, ep.cores, self.tile_rows[ctype], fit.alphas))

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        if op.kind in (OpKind.CONV, OpKind.DW, OpKind.FC):
            return Demand(self.predict_op(op, ep), 0.0, 0.0)
        if self.include_folded and self.truth is not None:
            return self.truth.op_demand(op, ep, state)
        return ZERO

    def layer_table(self, workload, eps: Sequence[ExecutionPlace]) -> pd.DataFrame:
        return time_table(self, workload, eps)


def _measure(truth, op: Op, p, threads: int) -> float:
    busy, _ = truth.side_time(op, p, threads)
    return p.overhead_s + busy


def prediction_errors(pred: PipeitPredictor, truth: PipeitGroundTruth | Gemm2GroundTruth, workload,
                      eps: Sequence[ExecutionPlace], kinds: Iterable[str] = ("conv",)) -> pd.DataFrame:
    """Per-layer prediction error of the major op (Table III: |pred − truth| / truth, GEMM convs)."""
    kinds = set(kinds)
    rows = []
    for layer in workload.layers:
        op = layer.major
        if op.kind not in kinds:
            continue
        for ep in eps:
            t = truth.op_time(op, ep)
            y = pred.predict_op(op, ep)
            rows.append((workload.name, layer.index, op.name, str(op.kind), ep.name, t, y, abs(y - t) / t))
    return pd.DataFrame(rows, columns=["workload", "layer", "op", "kind", "ep", "truth_s", "predicted_s",
                                       "abs_error"])
