"""Fit the default (roofline) cost model's parameters to the micro-benchmarks of this machine, and
write them as a platform YAML.

The model fitted is the one :class:`~hetsim.cost.RooflineCostModel` evaluates, term by term:

* GEMM (N×K by K×M) on n threads::

      t = overhead + (N·K + K·M + N·M)·4 / min(n·pack, bw(n))
                   + max(N·K·M / (n · peak · eff · par_eff(n)), (N·K + K·M + N·M)·4 / bw(n))

  with bw(n) = min(n · per-core bandwidth, memory bandwidth). ``peak`` = ISA MAC/cycle × clock.
  ``eff``, ``pack`` and ``overhead`` come from the 1-thread grid, ``par_eff(n)`` from the n-thread
  grid with the others fixed (least squares on log time, soft-L1 loss so that a run disturbed by
  another process weighs little).
* Bandwidth: the per-core figure is the 1-process STREAM-like read; the memory's is the sum over
  the processes of the all-core run.
* im2col: t = overhead + bytes / rate(n), one rate per thread count n over every shape (the cost
  model caps it at bw(n)).
* Op kinds (LRN, pools, element-wise ops, concat): the same form, one rate per kind and thread
  count. Measured, not n × the 1-thread rate: the executor runs these kernels on one thread
  whatever the stage's cores (hetsim_host/kernels.py says why), so n cores are no faster.
  Depthwise convs get a ``dw_efficiency`` from the 1-thread rows instead (t = overhead + MACs /
  (peak · dw_eff)), and a multicore curve of their own from the n-thread rows
  (``dw_parallel_efficiency``, t = overhead + MACs / (n · peak · dw_eff · dw_par(n))): the same
  one-thread kernel, so 2 cores measure about 1/2, where the GEMMs' parallel_efficiency is near 1.

* Cold GEMVs (the executor's fc on weights of several row lengths M, caches flushed)::

      t = overhead + gemv_overhead(n) + bytes / gemv_rate(n) + K · gemv_row(n)

  a fixed cost, a rate per byte and a cost per row of W (K rows of M), per core count. The STREAM-like run is one
  such GEMV (M = 1024), so it lumps the two: long rows (M = 4096) stream faster than it, short ones
  slower (docs/fidelity.md#the-classifier-gemv-and-softmax). Not fitted without those rows (older measurement files).

* GEMMs in a network: the convs and fcs of a synthetic CNN, timed inside whole forward passes,
  take longer than the same GEMMs alone (their filters and buffers are cold after the big fully
  connected layer of the previous frame, BLAS threads must be woken): the median gap per core
  count is ``gemm_overhead_us``. Its softmax, measured nowhere else, takes tens of µs more than its
  bytes (a few cold numpy calls): its median gap is ``kind_overhead_us.softmax``. Its other ops
  match their isolated runs within a few µs.

The clock: the nominal one from /proc/cpuinfo, unless the fitted GEMM rate exceeds the ISA peak
at that clock (turbo), in which case the clock is raised to the lowest 100 MHz step that holds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from hetsim.platform.params import by_cores
from hetsim_host.microbench import Measurements

_GB = 1e9


@dataclass
class HostFit:
    """Fitted parameters (SI units inside, GB/s and µs in the YAML) and the fit's residuals."""

    macs_per_cycle: float
    freq_MHz: float
    gemm_efficiency: float
    parallel_efficiency: list[float]
    op_overhead_s: float
    gemm_overhead_s: list[float]      # entry n-1: n cores
    gemm_pack_Bps: float
    im2col_Bps: list[float]          # entry n-1: n cores
    core_bandwidth_Bps: float
    memory_bandwidth_Bps: float
    kind_Bps: dict[str, list[float]]  # kind -> entry n-1: n cores
    dw_efficiency: float | None
    cores: int
    residuals: dict[str, float] = field(default_factory=dict)  # bench -> median |t_model/t - 1|
    #: depthwise's own multicore curve, entry n-1: n cores (empty: not measured beyond 1 core)
    dw_parallel_efficiency: list[float] = field(default_factory=list)
    dw_strided_efficiency: float | None = None   #: depthwise of stride > 1 (None: not measured)
    dw_tap_cycles: float | None = None   #: depthwise cycles per output pixel and tap (None: not fitted)
    #: fc (GEMV) rate per byte and cost per row of W, entry n-1: n cores (empty: not measured)
    gemv_Bps: list[float] = field(default_factory=list)
    gemv_row_s: list[float] = field(default_factory=list)
    gemv_overhead_s: list[float] = field(default_factory=list)
    #: kind -> fixed cost per op in a running network, entry n-1: n cores (the softmax)
    kind_overhead_s: dict[str, list[float]] = field(default_factory=dict)

    @property
    def peak_MACps(self) -> float:
        return self.macs_per_cycle * self.freq_MHz * 1e6

    def bw(self, n: int) -> float:
        return min(n * self.core_bandwidth_Bps, self.memory_bandwidth_Bps)

    def par_eff(self, n: int) -> float:
        return by_cores(self.parallel_efficiency, n, scale_past_end=False)

    def gemm_time(self, n_rows: int, k: int, m: int, threads: int) -> float:
        a, b, c = n_rows * k * 4, k * m * 4, n_rows * m * 4
        bw = self.bw(threads)
        pack = min(threads * self.gemm_pack_Bps, bw)
        compute = n_rows * k * m / (threads * self.peak_MACps * self.gemm_efficiency * self.par_eff(threads))
        return self.op_overhead_s + (a + b + c) / pack + max(compute, (a + b + c) / bw)

    def gemv_time(self, k: int, nbytes: float, threads: int) -> float:
        """An fc of K inputs moving ``nbytes`` on ``threads`` cores, as the cost model prices it
        with the fitted GEMV terms."""
        return (self.op_overhead_s + by_cores(self.gemv_overhead_s, threads, scale_past_end=False)
                + nbytes / by_cores(self.gemv_Bps, threads, scale_past_end=True)
                + k * by_cores(self.gemv_row_s, threads, scale_past_end=False))

    def rate_time(self, nbytes: float, rates: list[float] | None, threads: int) -> float:
        """An op moving ``nbytes`` at the measured rate of ``threads`` cores (the bandwidth when
        ``rates`` is None), as the cost model does."""
        bw = self.bw(threads)
        if rates is not None:
            bw = min(bw, by_cores(rates, threads, scale_past_end=True))
        return self.op_overhead_s + nbytes / bw


def _robust(residual, x0, lo, hi):
    """Least squares in log-parameter space with a soft-L1 loss (outliers from other processes)."""
    res = least_squares(lambda x: residual(np.exp(x)), np.log(x0), bounds=(np.log(lo), np.log(hi)),
                        loss="soft_l1", f_scale=0.1)
    return np.exp(res.x)


def _median_abs(errors) -> float:
    e = np.abs(np.asarray(list(errors), dtype=float))
    return float(np.median(e)) if e.size else float("nan")


#: No CPU's turbo clock is twice its nominal one: a fitted rate past that raises MACs per cycle.
MAX_TURBO = 2.0


def fit_host(m: Measurements, gemv: bool = True, softmax: bool = True, dw_taps: bool = True) -> HostFit:
    """Every roofline term from ``m``. ``gemv`` / ``softmax`` / ``dw_taps`` False: leave the fc's
    GEMV terms / the softmax's in-network cost / the depthwise cost per output pixel and tap
    (``dw_tap_cycles``) out (the model before them; for ablations)."""
    machine = m.machine
    cores = len(machine["cpus"])
    core_bw, mem_bw = _fit_bandwidth(m)
    macs, freq, eff, o, pack = _fit_gemm_one_thread(m, float(machine["macs_per_cycle"]),
                                                    float(machine["nominal_MHz"]), core_bw)
    fit = HostFit(macs, freq, eff, [1.0], float(o), [], float(pack), [], core_bw, mem_bw, {}, None, cores)
    _fit_parallel_efficiency(fit, m, cores)
    _fit_kinds(fit, m, cores, dw_taps)
    if gemv:
        _fit_gemv(fit, m, cores)
    _fit_network_overheads(fit, m, softmax)
    return fit


def _fit_bandwidth(m: Measurements) -> tuple[float, float]:
    """A core's bandwidth (median of the 1-core STREAM runs) and the memory's (every core at once,
    summed; never below one core's)."""
    one = [s["bytes"] / s["time_s"] for s in m.stream if s["cores"] == 1]
    top = max(s["cores"] for s in m.stream)
    core_bw = float(np.median(one))
    mem_bw = float(sum(s["bytes"] / s["time_s"] for s in m.stream if s["cores"] == top))
    return core_bw, max(mem_bw, core_bw)


def _fit_gemm_one_thread(m: Measurements, macs: float, nominal: float, core_bw: float
                         ) -> tuple[float, float, float, float, float]:
    """GEMM, 1 thread: the peak rate, packing rate and overhead; the clock raised for turbo (or,
    past any turbo, the MACs per cycle). Returns MACs per cycle, MHz, GEMM efficiency, overhead
    (s) and packing rate (B/s)."""
    g1 = [g for g in m.gemm if g["threads"] == 1]
    t1 = np.array([g["time_s"] for g in g1])

    def model1(rate, pack, o, rows):
        out = []
        for g in rows:
            n_, k, mm = g["n"], g["k"], g["m"]
            a, b, c = 4 * n_ * k, 4 * k * mm, 4 * n_ * mm
            out.append(o + (a + b + c) / min(pack, core_bw) + max(n_ * k * mm / rate, (a + b + c) / core_bw))
        return np.array(out)

    best = max(g["n"] * g["k"] * g["m"] / g["time_s"] for g in g1)
    rate, pack, o = _robust(lambda x: np.log(model1(x[0], x[1], x[2], g1) / t1),
                            [best, 10 * _GB, 5e-6], [1e8, 1e7, 1e-8], [1e14, 1e13, 1e-2])
    freq = nominal
    if rate > macs * freq * 1e6:  # turbo: raise the clock to the lowest 100 MHz step that fits
        freq = math.ceil(rate / (macs * 1e8)) * 100.0
        if freq > MAX_TURBO * nominal:
            # past any turbo the clock is not what is off but the ISA's guess of MACs per cycle
            # (a second FMA unit, a BLAS using wider units): a clock of tens of GHz is no
            # physical platform (hetsim.bounds.FREQ_MHZ refused it on a loaded machine)
            freq = nominal
            macs = rate / (nominal * 1e6)
    eff = float(min(1.0, rate / (macs * freq * 1e6)))
    return macs, freq, eff, o, pack


def _fit_parallel_efficiency(fit: HostFit, m: Measurements, cores: int) -> None:
    """GEMM, n threads: the parallel efficiency of each thread count (a count not measured keeps
    the one before), and the GEMM grid's median |error|."""
    for n in range(2, cores + 1):
        gn = [g for g in m.gemm if g["threads"] == n]
        if not gn:
            fit.parallel_efficiency.append(fit.parallel_efficiency[-1])
            continue
        tn = np.array([g["time_s"] for g in gn])

        def res(x, gn=gn, tn=tn, n=n):
            fit.parallel_efficiency = fit.parallel_efficiency[:n - 1] + [float(x[0])]
            return np.log(np.array([fit.gemm_time(g["n"], g["k"], g["m"], n) for g in gn]) / tn)

        (pe,) = _robust(res, [0.8], [0.05], [1.0])
        fit.parallel_efficiency = fit.parallel_efficiency[:n - 1] + [float(pe)]
    fit.residuals["gemm"] = _median_abs(
        fit.gemm_time(g["n"], g["k"], g["m"], g["threads"]) / g["time_s"] - 1 for g in m.gemm)


def _fit_rates(fit: HostFit, rows, cores: int) -> list[float]:
    """Entry n-1: the rate of n threads, t = overhead + bytes / rate (the cost model caps it
    at the bandwidth)."""
    out = []
    for n in range(1, cores + 1):
        sub = [r for r in rows if r["threads"] == n]
        if not sub:
            break
        t = np.array([r["time_s"] for r in sub])
        (r,) = _robust(lambda x, sub=sub, t=t: np.log(
            np.array([fit.op_overhead_s + q["bytes"] / x[0] for q in sub]) / t), [5 * _GB], [1e6], [1e13])
        out.append(float(r))
    return out


def _fit_kinds(fit: HostFit, m: Measurements, cores: int, dw_taps: bool = True) -> None:
    """im2col and the op kinds: a rate per core count (depthwise: an efficiency of the peak)."""
    if m.im2col:
        fit.im2col_Bps = _fit_rates(fit, m.im2col, cores)
        fit.residuals["im2col"] = _median_abs(fit.rate_time(r["bytes"], fit.im2col_Bps, r["threads"])
                                              / r["time_s"] - 1 for r in m.im2col)
    for kind in sorted({k["kind"] for k in m.kinds}):
        rows = [k for k in m.kinds if k["kind"] == kind]
        if kind == "dw":
            _fit_dw(fit, rows, cores, dw_taps)
            continue
        fit.kind_Bps[kind] = _fit_rates(fit, rows, cores)
        fit.residuals[f"kind {kind}"] = _median_abs(
            fit.rate_time(r["bytes"], fit.kind_Bps[kind], r["threads"]) / r["time_s"] - 1 for r in rows)


def dw_taps(r: dict) -> int:
    """Output pixels × kernel taps of a depthwise calibration row (rows before the field: the
    calibration's 3x3 kernels on an h×w output)."""
    return int(r.get("taps", r["h"] * r["w"] * 9))


def _fit_dw(fit: HostFit, rows: list[dict], cores: int, taps: bool = True) -> None:
    """Depthwise, t = overhead + (MACs / (peak · eff) + taps · dw_tap_cycles / f) / (n · dw_par(n)):
    ``dw_efficiency`` (stride 1), ``dw_strided_efficiency`` (stride > 1, when measured) and
    ``dw_tap_cycles`` (a cost per output pixel and kernel tap, when ``taps`` and the 1-thread rows
    have two channel counts or more to tell it from the MACs) fitted together on the 1-thread rows;
    then, when n-thread rows exist, the per-core efficiency of each n (``dw_parallel_efficiency``,
    entry 0 is 1). Without 1-thread rows, one efficiency over all rows (the GEMMs' parallel
    efficiency standing in for the curve), as before."""
    one = [r for r in rows if r["threads"] == 1]

    def strided(r: dict) -> bool:
        return r.get("stride", 1) > 1

    def time(r: dict, eff: float, tap: float, par: float) -> float:
        core = r["macs"] / (fit.peak_MACps * eff) + (dw_taps(r) * tap / (fit.freq_MHz * 1e6) if tap else 0.0)
        return fit.op_overhead_s + core / (r["threads"] * par)

    sel = one or rows
    has_strided = any(strided(r) for r in sel) and any(not strided(r) for r in sel)
    fit_taps = taps and len({r.get("c") for r in sel} - {None}) >= 2
    t_sel = np.array([r["time_s"] for r in sel])

    def unpack(x) -> tuple[float, float | None, float]:
        return float(x[0]), float(x[1]) if has_strided else None, float(x[-1]) if fit_taps else 0.0

    def eff_of(r: dict, e1: float, e2: float | None) -> float:
        return e2 if strided(r) and e2 is not None else e1

    def residual(x):
        e1, e2, tap = unpack(x)
        return np.log(np.array([time(r, eff_of(r, e1, e2), tap, fit.par_eff(r["threads"])) for r in sel]) / t_sel)

    x0, lo, hi = [0.05], [1e-4], [1.0]
    if has_strided:
        x0, lo, hi = x0 + [0.05], lo + [1e-4], hi + [1.0]
    if fit_taps:
        x0, lo, hi = x0 + [1.0], lo + [1e-3], hi + [1e4]
    e1, e2, tap = unpack(_robust(residual, x0, lo, hi))
    fit.dw_efficiency = e1
    fit.dw_strided_efficiency = e2
    fit.dw_tap_cycles = tap if fit_taps else None
    if one:
        curve = [1.0]
        for n in range(2, cores + 1):
            rn = [r for r in rows if r["threads"] == n]
            if not rn:
                break
            tn = np.array([r["time_s"] for r in rn])
            (pe,) = _robust(lambda x, rn=rn, tn=tn: np.log(np.array(
                [time(r, eff_of(r, e1, e2), tap, x[0]) for r in rn]) / tn), [0.8], [0.01], [1.0])
            curve.append(float(pe))
        if len(curve) > 1:
            fit.dw_parallel_efficiency = curve
    par = fit.dw_parallel_efficiency or fit.parallel_efficiency
    fit.residuals["kind dw"] = _median_abs(
        time(r, eff_of(r, e1, e2), tap, by_cores(par, r["threads"], False)) / r["time_s"] - 1 for r in rows)


def _fit_gemv(fit: HostFit, m: Measurements, cores: int) -> None:
    """The fc (GEMV) terms from the cold GEMV rows, per core count n: t = overhead + fixed +
    bytes / rate + K x row (least squares on log time, soft-L1). Without those rows (measurements from before
    2026-11-24, or fewer than 2 row lengths) nothing is set: fc ops keep the bandwidth."""
    for n in range(1, cores + 1):
        sub = [r for r in m.gemv if r["threads"] == n]
        if len({r["k"] for r in sub}) < 2:
            break
        t = np.array([r["time_s"] for r in sub])

        def res(x, sub=sub, t=t):
            return np.log(np.array([fit.op_overhead_s + x[2] + q["bytes"] / x[0] + q["k"] * x[1]
                                    for q in sub]) / t)

        rate, row, fixed = _robust(res, [20 * _GB, 20e-9, 10e-6], [1e6, 1e-15, 1e-12], [1e13, 1e-3, 1.0])
        fit.gemv_Bps.append(float(rate))
        fit.gemv_row_s.append(float(row))
        fit.gemv_overhead_s.append(float(fixed))
    if fit.gemv_Bps:
        fit.residuals["gemv"] = _median_abs(fit.gemv_time(r["k"], r["bytes"], r["threads"]) / r["time_s"] - 1
                                            for r in m.gemv if r["threads"] <= len(fit.gemv_Bps))


def _fit_network_overheads(fit: HostFit, m: Measurements, softmax_cost: bool = True) -> None:
    """What a GEMM costs in a running network beyond the same GEMM alone, from the ops of the
    synthetic network: per core count, the median over its conv and fc ops of (measured - cost
    model) is ``gemm_overhead``. The other kinds of op need nothing (their gaps are a few µs
    either way)."""
    if not m.network:
        return
    from hetsim.cost import RooflineCostModel
    from hetsim.platform import platform_from_dict
    from hetsim_host.microbench import synthetic_network

    wl = synthetic_network(m.network_input)
    cost = RooflineCostModel(platform_from_dict(platform_dict(fit), "fit"))
    gaps: dict[int, list[float]] = {}
    from hetsim_host.microbench import FRAME

    rows = [r for r in m.network if r["op"] != FRAME]
    softmax: dict[int, list[float]] = {}
    for row in rows:
        op = wl.op(row["op"])
        if str(op.kind) in ("conv", "fc"):
            model = cost.op_time(op, cost.platform.ep(f"C{row['threads']}"))
            gaps.setdefault(row["threads"], []).append(row["time_s"] - model)
        elif str(op.kind) == "softmax":
            model = cost.op_time(op, cost.platform.ep(f"C{row['threads']}"))
            softmax.setdefault(row["threads"], []).append(row["time_s"] - model)
    fit.gemm_overhead_s = [max(0.0, float(np.median(gaps[n]))) for n in sorted(gaps)]
    # The softmax: only ever measured here (no isolated rows); over a classifier's outputs it is a
    # few cold numpy calls (30-50 us after a big fc, 6 us warm: docs/fidelity.md#the-classifier-gemv-and-softmax), not bytes.
    if softmax and softmax_cost:
        fit.kind_overhead_s["softmax"] = [max(0.0, float(np.median(softmax[n]))) for n in sorted(softmax)]
    cost = RooflineCostModel(platform_from_dict(platform_dict(fit), "fit"))
    fit.residuals["network ops"] = _median_abs(
        cost.op_time(wl.op(r["op"]), cost.platform.ep(f"C{r['threads']}")) / r["time_s"] - 1
        for r in rows if str(wl.op(r["op"]).kind) not in ("flatten", "reshape"))


def _g(x: float, digits: int = 4) -> str:
    return f"{x:.{digits}g}"


def platform_dict(fit: HostFit, name: str = "host") -> dict:
    """The platform as a dict (what :func:`hetsim.platform.platform_from_dict` validates)."""
    roofline: dict = {
        "gemm_efficiency": round(fit.gemm_efficiency, 4),
        "parallel_efficiency": [round(x, 4) for x in fit.parallel_efficiency],
        "op_overhead_us": round(fit.op_overhead_s * 1e6, 3),
        "gemm_overhead_us": [round(x * 1e6, 3) for x in fit.gemm_overhead_s] or 0.0,
        "gemm_pack_GBps": round(fit.gemm_pack_Bps / _GB, 3),
        "im2col_GBps": [round(x / _GB, 3) for x in fit.im2col_Bps],
        "kind_GBps": {k: [round(x / _GB, 3) for x in v] for k, v in sorted(fit.kind_Bps.items())},
    }
    if fit.dw_efficiency is not None:
        roofline["dw_efficiency"] = round(fit.dw_efficiency, 4)
    if fit.dw_parallel_efficiency:
        roofline["dw_parallel_efficiency"] = [round(x, 4) for x in fit.dw_parallel_efficiency]
    if fit.dw_strided_efficiency is not None:
        roofline["dw_strided_efficiency"] = round(fit.dw_strided_efficiency, 4)
    if fit.dw_tap_cycles is not None:
        roofline["dw_tap_cycles"] = round(fit.dw_tap_cycles, 4)
    if fit.gemv_Bps:
        roofline["gemv_GBps"] = [round(x / _GB, 3) for x in fit.gemv_Bps]
        roofline["gemv_row_ns"] = [round(x * 1e9, 3) for x in fit.gemv_row_s]
        roofline["gemv_overhead_us"] = [round(x * 1e6, 3) for x in fit.gemv_overhead_s]
    if fit.kind_overhead_s:
        roofline["kind_overhead_us"] = {k: [round(x * 1e6, 3) for x in v]
                                        for k, v in sorted(fit.kind_overhead_s.items())}
    core = {
        "name": "cpu",
        "macs_per_cycle": fit.macs_per_cycle,
        "bandwidth_GBps_per_core": round(fit.core_bandwidth_Bps / _GB, 3),
        "dvfs": [{"name": "nominal", "freq_MHz": fit.freq_MHz}],
        "roofline": roofline,
    }
    return {
        "schema": 2, "name": name,
        "memories": [{"name": "dram", "bandwidth_GBps": round(fit.memory_bandwidth_Bps / _GB, 3)}],
        "core_types": [core],
        "clusters": [{"name": "host", "symbol": "C", "core_type": "cpu", "cores": fit.cores,
                      "memory": "dram"}],
    }


def platform_yaml(fit: HostFit, m: Measurements, name: str = "host", raw_file: str = "",
                  gemm2: Gemm2Fit | None = None) -> str:
    """The platform YAML with a source comment on every number (what was measured, how fitted)."""
    d = platform_dict(fit, name)
    c = d["core_types"][0]
    r = c["roofline"]
    mc = m.machine
    load = m.load
    lines = [
        "# Written by `hetsim calibrate host`: this machine, measured and fitted (hetsim_host/fit.py).",
        f"# Raw measurements: {raw_file or 'beside this file'}.",
        f"# Load average during calibration: {_load(load.get('loadavg_before'))} before, "
        f"{_load(load.get('loadavg_after'))} after ({load.get('wall_s', 0):.0f} s).",
        "schema: 2",
        f"name: {name}",
        f"description: \"{mc['model']}, {fit.cores} cores, {mc['blas'][0]['internal_api'] if mc['blas'] else 'BLAS'}"
        f" {mc['blas'][0]['version'] if mc['blas'] else ''}; numpy {mc['numpy']}\"",
        "memories:",
        "  - name: dram",
        f"    bandwidth_GBps: {d['memories'][0]['bandwidth_GBps']}  # [measured] STREAM-like read (1-thread "
        f"GEMV, {_MB(m)} MB per core) on all {fit.cores} cores at once, summed",
    ]
    lines += _core_type_yaml(fit, mc, c, r, m)
    lines += _clusters_yaml(fit, gemm2)
    return "\n".join(lines)


def _core_type_yaml(fit: HostFit, mc: dict, c: dict, r: dict, m: Measurements) -> list[str]:
    """The core type's lines: MACs per cycle, bandwidth, clock and the roofline's fitted terms,
    each with how it was obtained and its median |error|."""
    note = ("nominal, /proc/cpuinfo" if fit.freq_MHz == mc["nominal_MHz"] else
            f"nominal {mc['nominal_MHz']:g} MHz raised: the fitted GEMM rate exceeds the ISA peak there (turbo)")
    lines = [
        "core_types:",
        "  - name: cpu",
        f"    macs_per_cycle: {_g(c['macs_per_cycle'])}  # " + (
            f"[ext] {mc['isa']}, from /proc/cpuinfo flags" if c['macs_per_cycle'] == mc['macs_per_cycle'] else
            f"[fitted] {mc['isa']}'s {mc['macs_per_cycle']:g} raised: the fitted GEMM rate exceeds it at "
            f"{MAX_TURBO:g}x the nominal clock"),
        f"    bandwidth_GBps_per_core: {c['bandwidth_GBps_per_core']}  # [measured] STREAM-like read on 1 core",
        "    dvfs:",
        f"      - {{name: nominal, freq_MHz: {_g(fit.freq_MHz, 6)}}}  # [measured] {note}",
        "    roofline:  # the default cost model's fitted terms (hetsim/cost/roofline.py)",
        f"      gemm_efficiency: {r['gemm_efficiency']}  # [fitted] 1-thread GEMM grid "
        f"(median |error| {fit.residuals.get('gemm', float('nan')):.1%} over all thread counts)",
        f"      parallel_efficiency: {r['parallel_efficiency']}  # [fitted] n-thread GEMM grid, entry n-1",
        f"      op_overhead_us: {r['op_overhead_us']}  # [fitted] intercept of the GEMM grid",
        f"      gemm_overhead_us: {r['gemm_overhead_us']}  # [fitted] median extra of a conv/fc inside a "
        f"synthetic network, on 1, 2, ... cores (median |error| per op {fit.residuals.get('network ops', float('nan')):.1%})",
        f"      gemm_pack_GBps: {r['gemm_pack_GBps']}  # [fitted] GEMM time per operand byte (BLAS packing)",
        f"      im2col_GBps: {r['im2col_GBps']}  # [fitted] executor's im2col copy on 1, 2, ... cores "
        f"(median |error| {fit.residuals.get('im2col', float('nan')):.1%})",
    ]
    if "dw_efficiency" in r:
        lines.append(f"      dw_efficiency: {r['dw_efficiency']}  # [fitted] executor's depthwise kernel, 1 thread")
    if "dw_strided_efficiency" in r:
        lines.append(f"      dw_strided_efficiency: {r['dw_strided_efficiency']}  # [fitted] the same kernel at "
                     "stride 2, 1 thread")
    if "dw_tap_cycles" in r:
        lines.append(f"      dw_tap_cycles: {r['dw_tap_cycles']}  # [fitted] the same kernel's cycles per output "
                     "pixel and kernel tap beyond its MACs (its shapes' channel counts tell the two apart)")
    if "dw_parallel_efficiency" in r:
        lines.append(f"      dw_parallel_efficiency: {r['dw_parallel_efficiency']}  # [fitted] the same kernel on 1, 2, "
                     f"... cores, entry n-1 (median |error| {fit.residuals.get('kind dw', float('nan')):.1%})")
    if "gemv_GBps" in r:
        lines.append(f"      gemv_GBps: {r['gemv_GBps']}  # [fitted] executor's fc (x @ W) on cold weights of "
                     f"{len({g['m'] for g in m.gemv})} row lengths, on 1, 2, ... cores: rate per byte "
                     f"(median |error| {fit.residuals.get('gemv', float('nan')):.1%})")
        lines.append(f"      gemv_row_ns: {r['gemv_row_ns']}  # [fitted] (same GEMVs) cost per row of the weights")
        lines.append(f"      gemv_overhead_us: {r['gemv_overhead_us']}  # [fitted] (same GEMVs) fixed cost per fc")
    if "kind_overhead_us" in r:
        lines.append("      kind_overhead_us:  # [fitted] median extra per op inside the synthetic network, "
                     "on 1, 2, ... cores")
        for k, v in r["kind_overhead_us"].items():
            lines.append(f"        {k}: {v}")
    if r["kind_GBps"]:
        lines.append("      kind_GBps:  # [fitted] executor's kernels on 1, 2, ... cores, GB/s (capped by the bandwidth)")
        for k, v in r["kind_GBps"].items():
            lines.append(f"        {k}: {v}  # median |error| {fit.residuals.get('kind ' + k, float('nan')):.1%}")
    else:
        lines.append("      kind_GBps: {}  # every kind measured keeps up with the memory")
    return lines


def _clusters_yaml(fit: HostFit, gemm2: Gemm2Fit | None) -> list[str]:
    """The gemm2 block (under the core type) with the caches it found, then the one cluster."""
    lines: list[str] = []
    caches = ""
    if gemm2 is not None:
        lines += _gemm2_yaml(gemm2)
        bits = []
        if gemm2.l2_KiB:
            bits += [f"l2_KiB: {yaml_scalar(float(gemm2.l2_KiB))}", f"l2_private: {str(gemm2.l2_private).lower()}"]
        if gemm2.l3_KiB:
            bits.append(f"l3_KiB: {yaml_scalar(float(gemm2.l3_KiB))}")
        caches = ", " + ", ".join(bits) if bits else ""
    lines += [
        "clusters:",
        f"  - {{name: host, symbol: C, core_type: cpu, cores: {fit.cores}, memory: dram{caches}}}  "
        "# [measured] the CPUs this process may use (sched_getaffinity); [ext] caches from "
        "/sys/devices/system/cpu/cpu0/cache",
        "",
    ]
    return lines


def _gemm2_yaml(g2: Gemm2Fit) -> list[str]:
    """The gemm2 block's lines (under the core type), each number with how it was obtained."""
    d: dict = {"core_types": [{}], "clusters": [{}]}
    _add_gemm2(d, g2)
    b = d["core_types"][0]["gemm2"]
    r = g2.residuals
    why = {
        "kernel_efficiency": "[fitted] 1-thread GEMMs, fit grid + tile sweeps, warm and cold "
                             f"(median |error| {r.get('gemm2 fit 1T warm', float('nan')):.1%} warm, "
                             f"{r.get('gemm2 fit 1T cold', float('nan')):.1%} cold; held out "
                             f"{r.get('gemm2 held-out 1T warm', float('nan')):.1%} / "
                             f"{r.get('gemm2 held-out 1T cold', float('nan')):.1%})",
        "tile_rows": "[measured] the tile shape, K block and residency rule with the least fit residual",
        "tile_cols": "[measured] (same search)", "block_k": "[measured] (same search)",
        "residency": "[measured] (same search)",
        "tile_overhead_cycles": "[fitted] same GEMMs", "pack_cycles_per_byte": "[fitted] same GEMMs",
        "overlap": "[fitted] same GEMMs: how core and memory time combine",
        "gemm_macs_per_thread": "[sourced] OpenBLAS interface/gemm.c: one thread per 65536 x 4 MACs",
        "l2_bytes_per_cycle": "[measured] x @ W read rate of working sets in L2",
        "l3_GBps": "[measured] x @ W read rate of working sets in L3",
        "parallel_efficiency": "[fitted] n-thread GEMMs, entry n-1 (median |error| "
                               + ", ".join(f"{r[k]:.1%}" for k in r if k.startswith("gemm2 fit") and "1T" not in k) + ")",
        "gemm_call_us": "[fitted] per call on 1, 2, ... threads",
        "kernel_threads": "[ext] the executor runs every kernel but the GEMMs on one thread (hetsim_host/kernels.py)",
        "op_overhead_us": "[fitted] executor kernels (im2col, kinds, dw)",
        "im2col_cycles_per_byte": "[fitted] executor's im2col copy", "dw_macs_per_cycle": "[fitted] executor's depthwise",
        "dw_strided_macs_per_cycle": "[fitted] executor's depthwise at stride 2",
        "dw_tap_cycles": "[fitted] executor's depthwise, cycles per output pixel and kernel tap",
        "kind_cycles_per_byte": "[fitted] executor kernels, per kind",
        "winograd_cycles_per_element": "[fitted] executor's Winograd F(2x2, 3x3) transforms (whole convs held "
                                       f"out: {r.get('gemm2 winograd convs', float('nan')):.1%})",
        "gemv_GBps_per_core": "[fitted] executor's fc (x @ W) on cold weights, on 1, 2, ... threads: DRAM rate "
                              f"per core (median |error| {r.get('gemm2 gemv', float('nan')):.1%})",
        "gemv_row_cycles": "[fitted] (same GEMVs) core cycles per row of the weights, on 1, 2, ... threads",
        "gemv_call_us": "[fitted] (same GEMVs) fixed cost per cold GEMV call, on 1, 2, ... threads",
        "kind_overhead_us": "[fitted] median extra per op inside the synthetic network, on 1, 2, ... cores",
    }
    lines = [f"    gemm2:  # the gemm2 cost model (hetsim/cost/gemm2.py), fitted by hetsim_host/fit.py fit_gemm2; "
             f"synthetic network's ops (the softmax's and the convs' and fcs' fixed costs fitted on them) "
             f"{r.get('gemm2 network ops', float('nan')):.1%}"]
    for key, value in b.items():
        if isinstance(value, dict):
            lines.append(f"      {key}:  # {why.get(key, '')}")
            lines += [f"        {k}: {yaml_scalar(v)}" for k, v in value.items()]
        else:
            lines.append(f"      {key}: {yaml_scalar(value)}  # {why.get(key, '')}")
    return lines


def yaml_scalar(value) -> str:
    """``value`` as one line of YAML that reads back as the same value (PyYAML writes ``8e-06`` as
    ``8.0e-06``: YAML 1.1 reads the former as a string)."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=10 ** 9).removesuffix("...\n").strip()


def _load(v) -> str:
    return "/".join(f"{x:.2f}" for x in v) if v else "?"


def _MB(m: Measurements) -> str:
    return f"{m.stream[0]['bytes'] / 2**20:.0f}" if m.stream else "?"


# -- the gemm2 model ------------------------------------------------------------------------------
#: Tile shapes, K blocks and residency rules the gemm2 fit chooses from (by the fit's residual on
#: the fit grid and the tile sweeps: a measurement, not a datasheet).
TILE_ROWS = (1, 2, 4, 6, 8, 12, 16)
TILE_COLS = (4, 8, 12, 16, 24, 32, 48)
BLOCK_K = (None, 128, 192, 256, 384, 512)
RESIDENCY = ("proportional", "lru")
#: [sourced] OpenBLAS gives a GEMM one thread per SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD =
#: 65536 x 4 multiply-adds (interface/gemm.c).
OPENBLAS_MACS_PER_THREAD = 262144


@dataclass
class Gemm2Fit:
    """The gemm2 block fitted on this machine, the cache sizes it read, and its residuals."""

    block: dict                              # the core type's gemm2 block (YAML units)
    l1d_KiB: float | None
    l2_KiB: float | None
    l2_private: bool
    l3_KiB: float | None
    freq_MHz: float
    residuals: dict[str, float] = field(default_factory=dict)   # name -> median |t_model/t - 1|
    choices: dict[str, object] = field(default_factory=dict)    # the discrete choices and why


def _caches(machine: dict) -> tuple[float | None, float | None, bool, float | None]:
    """(L1d KiB, L2 KiB, L2 private, L3 KiB) of the machine's sysfs description."""
    by_level = {c["level"]: c for c in machine.get("caches", [])}
    l1 = by_level.get(1, {}).get("size_KiB")
    l2 = by_level.get(2)
    l3 = by_level.get(3)
    return (float(l1) if l1 else None, float(l2["size_KiB"]) if l2 else None,
            bool(l2 and l2.get("shared_by", 1) == 1), float(l3["size_KiB"]) if l3 else None)


def _level_rates(m: Measurements, l2_B: float | None, l3_B: float | None) -> tuple[float | None, float | None]:
    """Read rates (B/s, one core) of data in L2 and in L3: the median x @ W rate of the working
    sets that fit half of L2, and of those between twice L2 and a quarter of L3."""
    rows = [(r["bytes"], r["bytes"] / r["time_s"]) for r in m.levels if r["threads"] == 1]
    l2 = [bw for b, bw in rows if l2_B and 4 * b >= l2_B / 4 and b <= l2_B / 2]
    l3 = [bw for b, bw in rows if l2_B and l3_B and 2 * l2_B <= b <= l3_B / 4]
    return (float(np.median(l2)) if l2 else None, float(np.median(l3)) if l3 else None)


def fit_gemm2(m: Measurements, fit: HostFit, fixed: dict | None = None, network_gemm: bool = True,
              softmax: bool = True) -> Gemm2Fit:
    """Fit the gemm2 block (hetsim/cost/gemm2.py) to this machine's measurements.

    * Caches: sizes from sysfs; read rates of L2 and L3 from the working-set sweep (``levels``);
      DRAM from the STREAM-like runs (as the roofline fit).
    * GEMM, 1 thread, on the fit grid and the tile sweeps in both contexts (warm: each operand at
      the distance of the call's own footprint; cold: from DRAM): the kernel rate, the cycles per
      tile and K block, the packing cycles per byte, the call cost and the overlap, by least
      squares on log time (soft-L1), for every tile shape, K block and residency rule of
      :data:`TILE_ROWS` x :data:`TILE_COLS` x :data:`BLOCK_K` x :data:`RESIDENCY`; the best is kept.
    * GEMM, n threads: the parallel efficiency and call cost of n threads, the rest fixed; threads
      per GEMM as OpenBLAS gives them (:data:`OPENBLAS_MACS_PER_THREAD`).
    * The executor's other kernels (one thread): cycles per byte of im2col and of each kind, MACs
      per cycle of depthwise, one per-op overhead.
    * The held-out shapes and the synthetic network's ops are never fitted: their errors are
      reported (``residuals``).

    * Cold GEMVs (the executor's fc, when measured): per thread count, the DRAM rate per core, the
      cycles per row of W and the call cost, through the GEMV step's own arithmetic (:func:`_gemm2_gemv`).
    * The synthetic network's softmax: its median gap to the model is ``kind_overhead_us.softmax``.
    * The synthetic network's convs and fcs: their median gap to the model, one value per core
      count for both kinds, is ``kind_overhead_us.conv`` and ``.fc`` (the roofline's
      ``gemm_overhead_us``, through gemm2's prices; ``network_gemm=False`` leaves it out, as
      ``softmax=False`` the softmax's).

    ``fixed`` holds block fields at given values instead of fitting or searching them (an ablation
    refits with a mechanism off: ``{"caches": False}``, ``{"tiles": False}``, ``{"overlap": 1.0}``,
    :data:`NO_GEMV_TERMS`, ``{"kind_overhead_us": {}}``).
    """
    l1, l2, l2_private, l3 = _caches(m.machine)
    l1_B, l2_B, l3_B = (x * 1024 if x else None for x in (l1, l2, l3))
    l2_rate, l3_rate = _level_rates(m, l2_B, l3_B)
    mpc = fit.macs_per_cycle
    f0 = fit.freq_MHz * 1e6
    fixed = dict(fixed or {})
    machine = _Gemm2Machine(fit, fixed, f0, l1_B, l2_B, l2_private, l3_B)
    level_params = {"l2_bytes_per_cycle": l2_rate / f0 if l2_rate else None,
                    "l3_GBps": l3_rate / _GB if l3_rate else None}

    g1 = [r for r in m.contexts if r["threads"] == 1 and r["set"] in ("fit", "sweep")]
    if not g1:
        raise ValueError("no gemm2 measurements (contexts): run `hetsim calibrate host` again")
    err1, tr, tc, kc, res, (rate, tile_s, pack_s, call1_s, overlap) = _gemm2_search(machine, g1, level_params)
    # The clock: raise it (turbo) until the kernel rate fits the ISA peak, as the roofline fit does.
    freq = fit.freq_MHz
    if rate > mpc * freq * 1e6:
        freq = math.ceil(rate / (mpc * 1e8)) * 100.0
    f = freq * 1e6
    level_params = {"l2_bytes_per_cycle": l2_rate / f if l2_rate else None,
                    "l3_GBps": l3_rate / _GB if l3_rate else None}
    block = {"kernel_efficiency": min(1.0, rate / (mpc * f)), "tile_rows": tr, "tile_cols": tc,
             "block_k": kc, "tile_overhead_cycles": tile_s * f, "pack_cycles_per_byte": pack_s * f,
             "overlap": float(overlap), "residency": res, "gemm_macs_per_thread": OPENBLAS_MACS_PER_THREAD,
             **level_params}
    par, calls = _gemm2_threads(machine, m, (tr, tc, kc, res), level_params,
                                (rate, tile_s, pack_s, call1_s, overlap))
    block["parallel_efficiency"] = par
    block["gemm_call_us"] = [c * 1e6 for c in calls]
    block["kernel_threads"] = 1         # the executor's non-GEMM kernels (hetsim_host/kernels.py)
    block.update(fixed)
    _gemm2_kernels(machine, m, block, f, overlap)
    if m.winograd:
        block["winograd_cycles_per_element"] = _fit_winograd(m, machine.ep(1, **block), f, overlap)
    _gemm2_gemv(machine, m, block, f, overlap)
    out = Gemm2Fit(block, l1, l2, l2_private, l3, freq)
    out.choices = {"tile_rows": tr, "tile_cols": tc, "block_k": kc, "residency": res,
                   "fit median |error| of the chosen (1 thread)": err1}
    if "kind_overhead_us" not in fixed:
        _gemm2_network_kinds(out, m, fit, gemm=network_gemm, softmax=softmax)
    _gemm2_residuals(out, m, fit)
    return out


@dataclass
class _Gemm2Machine:
    """What every gemm2 EP of a fit shares: the roofline fit (MACs per cycle, bandwidths), the
    clock the fit starts from (f0, Hz), the caches (bytes) and the block fields held ``fixed``."""

    fit: HostFit
    fixed: dict
    f0: float
    l1_B: float | None
    l2_B: float | None
    l2_private: bool
    l3_B: float | None

    def ep(self, threads: int, **params):
        """A gemm2 EP of ``threads`` threads with these block fields (the fixed ones win)."""
        from hetsim.cost.gemm2 import Gemm2Ep
        from hetsim.platform.schema import Gemm2CoreParams

        g = Gemm2CoreParams.model_construct(**{**Gemm2CoreParams().model_dump(), **params, **self.fixed})
        return Gemm2Ep(None, g, self.fit.macs_per_cycle, self.f0, 1.0, threads,  # type: ignore[arg-type]
                       self.l1_B, self.l2_B, self.l2_private, self.l3_B,
                       self.fit.core_bandwidth_Bps, self.fit.memory_bandwidth_Bps)

    def features(self, rows, tr, tc, kc, residency, threads, level_params: dict) -> np.ndarray:
        """Per row: kernel seconds at rate 1 MAC/s... as arrays (kernel MACs, tile blocks, pack bytes,
        memory seconds, calls)."""
        from hetsim.cost.gemm2 import Access, gemm_terms, memory_time

        mpc = self.fit.macs_per_cycle
        e = self.ep(threads, tile_rows=tr, tile_cols=tc, block_k=kc, residency=residency, **level_params)
        out = np.empty((len(rows), 4))
        for i, r in enumerate(rows):
            n, k, mm = r["n"], r["k"], r["m"]
            t = max(1, min(threads, math.ceil(n * k * mm / OPENBLAS_MACS_PER_THREAD)))
            terms = gemm_terms(e, n, k, mm, 1, t)
            a, b, c = 4.0 * n * k, 4.0 * k * mm, 4.0 * n * mm
            d = _context_distance(r["context"], a, b, c)
            # the output stays where the GEMM's working set fits (as the model's writes)
            mem, _, _ = memory_time(e.levels(t), [Access(a, d), Access(b, d), Access(c, a + b + c, write=True)],
                                    e.params)
            out[i] = (terms.kernel_cycles * mpc, terms.tile_blocks, (a + b) / t, mem)
        return out


def _gemm2_search(machine: _Gemm2Machine, g1: list[dict], level_params: dict) -> tuple:
    """GEMM, 1 thread: the kernel rate, tile and packing seconds, call cost and overlap fitted for
    every tile shape, K block and residency rule (those not held fixed); the best (median |error|,
    tr, tc, kc, residency, fitted values) is kept. A kernel rate past the peak at MAX_TURBO x the
    roofline fit's clock is no machine (a noisy quick grid can trade an unbounded rate against the
    fixed costs, and the clock raised to match made 169,300 MHz once): the search is then redone
    with the rate bounded there. Fits inside that bound are left exactly as they are."""
    best = _gemm2_search_within(machine, g1, level_params, 1e13)
    peak = machine.fit.macs_per_cycle * machine.f0 * MAX_TURBO
    if best[-1][0] > peak:
        best = _gemm2_search_within(machine, g1, level_params, peak)
    return best


def _gemm2_search_within(machine: _Gemm2Machine, g1: list[dict], level_params: dict,
                         max_rate: float) -> tuple:
    """:func:`_gemm2_search` with the kernel rate (MAC/s) bounded by ``max_rate``."""
    fixed = machine.fixed

    def model_time(x, F, threads_col=None):
        rate, tile_s, pack_s, call_s, ov = x
        core = F[:, 0] / rate + F[:, 1] * tile_s + F[:, 2] * pack_s
        mem = F[:, 3]
        return call_s + core + mem - ov * np.minimum(core, mem)

    y1 = np.array([r["time_s"] for r in g1])
    best = None
    fixed_overlap = fixed.get("overlap")
    lo = np.array([1e9, 0.0, 0.0, 0.0, 0.0])
    hi = np.array([max_rate, 1e-6, 1e-8, 1e-3, 1.0])
    free = slice(0, 4) if fixed_overlap is not None else slice(0, 5)

    def full(x):
        return np.append(x, fixed_overlap) if fixed_overlap is not None else x

    tiles_on = fixed.get("tiles", True)
    for tr in (TILE_ROWS if tiles_on else (1,)) if "tile_rows" not in fixed else (fixed["tile_rows"],):
        for tc in (TILE_COLS if tiles_on else (1,)) if "tile_cols" not in fixed else (fixed["tile_cols"],):
            for kc in BLOCK_K if "block_k" not in fixed else (fixed["block_k"],):
                for res in RESIDENCY if "residency" not in fixed else (fixed["residency"],):
                    F = machine.features(g1, tr, tc, kc, res, 1, level_params)
                    x0 = np.array([max(r["n"] * r["k"] * r["m"] / r["time_s"] for r in g1), 1e-8, 1e-11, 2e-6, 0.5])
                    x0 = np.clip(x0, lo, hi)[free]
                    sol = least_squares(lambda x, F=F: np.log(model_time(full(x), F) / y1), x0,
                                        bounds=(lo[free], hi[free]), loss="soft_l1", f_scale=0.1,
                                        x_scale=np.maximum(x0, 1e-12))
                    err = float(np.median(np.abs(model_time(full(sol.x), F) / y1 - 1)))
                    if best is None or err < best[0]:
                        best = (err, tr, tc, kc, res, full(sol.x))
    assert best is not None
    return best


def _gemm2_threads(machine: _Gemm2Machine, m: Measurements, choice: tuple, level_params: dict,
                   one: tuple) -> tuple[list[float], list[float]]:
    """GEMM, n threads: the parallel efficiency and the call cost of n threads, the rest (``one``:
    the 1-thread rate, tile, pack and call seconds and overlap) fixed; up to the first thread count
    not measured."""
    tr, tc, kc, res = choice
    rate, tile_s, pack_s, call1_s, overlap = one
    calls = [call1_s]
    par = [1.0]
    for n in range(2, len(m.machine["cpus"]) + 1):
        gn = [r for r in m.contexts if r["threads"] == n and r["set"] in ("fit", "sweep")]
        if not gn:
            break
        yn = np.array([r["time_s"] for r in gn])
        Fn = machine.features(gn, tr, tc, kc, res, n, level_params)
        threads = np.array([max(1, min(n, math.ceil(r["n"] * r["k"] * r["m"] / OPENBLAS_MACS_PER_THREAD)))
                            for r in gn])

        def tn(x, Fn=Fn, threads=threads):
            pe, call_n = x
            eff = np.where(threads > 1, pe, 1.0)
            call = np.where(threads > 1, call_n, call1_s)
            core = Fn[:, 0] / (rate * eff) + Fn[:, 1] * tile_s + Fn[:, 2] * pack_s
            mem = Fn[:, 3]
            return call + core + mem - overlap * np.minimum(core, mem)

        sol = least_squares(lambda x, tn=tn, yn=yn: np.log(tn(x) / yn), [0.8, call1_s + 5e-6],
                            bounds=([0.05, 0.0], [1.0, 1e-2]), loss="soft_l1", f_scale=0.1, x_scale=[0.1, 1e-5])
        par.append(float(sol.x[0]))
        calls.append(float(sol.x[1]))
    return par, calls


def _gemm2_kernels(machine: _Gemm2Machine, m: Measurements, block: dict, f: float, overlap: float) -> None:
    """The executor's other kernels: one per-op overhead, cycles per byte of im2col and of each kind,
    depthwise MACs per cycle; each with the traffic the model gives it (warm: the benchmarks re-run
    the same tensors). Written into ``block``."""
    from hetsim.cost.gemm2 import Access, memory_time

    mpc = machine.fit.macs_per_cycle
    e1 = machine.ep(1, **block)
    kinds_rows = [r for r in m.kinds if r["threads"] == 1]
    im2col_rows = [r for r in m.im2col if r["threads"] == 1]
    def label(r: dict) -> str:   # a strided depthwise conv is a kernel of its own
        return "dw_strided" if r["kind"] == "dw" and r.get("stride", 1) > 1 else r["kind"]

    names = sorted({label(r) for r in kinds_rows})
    rows = [("im2col", r) for r in im2col_rows] + [(label(r), r) for r in kinds_rows]
    y = np.array([r["time_s"] for _, r in rows])
    mem = np.empty(len(rows))
    work = np.empty(len(rows))
    for i, (kind, r) in enumerate(rows):
        nbytes = r["bytes"]
        if kind == "im2col":
            h, w, c = r["h"], r["w"], r["c"]
            inp = 4.0 * h * w * c
            mem[i] = memory_time(e1.levels(1), [Access(inp, inp + nbytes), Access(nbytes, inp + nbytes, write=True)],
                                 e1.params)[0]
            work[i] = nbytes
        else:   # bytes = inputs + output (+ weights): reads and the write at the op's working set
            mem[i] = memory_time(e1.levels(1), [Access(nbytes, 2 * nbytes)], e1.params)[0]
            work[i] = r["macs"] if kind in DW_LABELS else nbytes
    labels = ["im2col", *names]
    col = np.array([labels.index(k) for k, _ in rows])

    is_dw = np.isin(col, [labels.index(k) for k in DW_LABELS if k in labels])
    # depthwise: cycles per output pixel and tap too, when two channel counts tell it from the MACs
    taps = np.array([dw_taps(r) if kind in DW_LABELS else 0 for kind, r in rows], dtype=float)
    fit_taps = "dw_tap_cycles" not in machine.fixed and \
        len({r.get("c") for kind, r in rows if kind in DW_LABELS} - {None}) >= 2
    tap_fixed = float(machine.fixed.get("dw_tap_cycles", 0.0))
    n_rates = len(labels)

    def t_kernels(x):
        overhead = x[0]
        per = x[1:1 + n_rates][col]
        tap = x[-1] if fit_taps else tap_fixed
        core = np.where(is_dw, work / np.maximum(per, 1e-30) + taps * tap, work * per) / f
        return overhead + core + mem - overlap * np.minimum(core, mem)

    x0 = np.array([2e-6] + [(mpc * 0.05) if k in DW_LABELS else 0.5 for k in labels] + ([1.0] if fit_taps else []))
    lo_k = np.array([0.0] + [1e-3 if k in DW_LABELS else 0.0 for k in labels] + ([0.0] if fit_taps else []))
    hi_k = np.array([1e-3] + [mpc if k in DW_LABELS else 1e3 for k in labels] + ([1e4] if fit_taps else []))
    sol = least_squares(lambda x: np.log(t_kernels(x) / y), np.clip(x0, lo_k, hi_k), bounds=(lo_k, hi_k),
                        loss="soft_l1", f_scale=0.1)
    block["op_overhead_us"] = float(sol.x[0]) * 1e6
    block["im2col_cycles_per_byte"] = float(sol.x[1])
    block["kind_cycles_per_byte"] = {k: float(v) for k, v in zip(labels[1:], sol.x[2:1 + n_rates], strict=True)
                                     if k not in DW_LABELS}
    for k, key in DW_LABELS.items():
        if k in labels:
            block[key] = float(sol.x[1 + labels.index(k)])
    if fit_taps:
        block["dw_tap_cycles"] = float(sol.x[-1])


#: The GEMV step's fitted terms (:func:`_gemm2_gemv`); held at these values (``fit_gemm2(fixed=...)``)
#: the GEMV is priced as before them: the MACs, the memory's DRAM rate and a GEMM's call cost.
NO_GEMV_TERMS: dict = {"gemv_GBps_per_core": None, "gemv_row_cycles": 0.0, "gemv_call_us": None}


def gemv_round_distance(m: Measurements) -> float:
    """Reuse distance of a cold GEMV row's operands (``bench_gemv``): one round over every shape,
    each timed after reading the flush buffer, so W and x were last read a round earlier."""
    from hetsim_host.microbench import flush_bytes

    shapes = {(r["k"], r["m"]): r["bytes"] for r in m.gemv}
    return float(len(shapes) * flush_bytes(m.machine) + sum(shapes.values()))


def _gemv_threads(block: dict, n: int, macs: float) -> int:
    """Threads the model gives a GEMV of ``macs`` on ``n`` cores (Gemm2CostModel._gemm_threads)."""
    per = block.get("gemm_macs_per_thread")
    return n if per is None else max(1, min(n, math.ceil(macs / per)))


def _gemm2_gemv(machine: _Gemm2Machine, m: Measurements, block: dict, f: float, overlap: float) -> None:
    """The GEMV step's terms from the cold GEMV rows, per thread count t (least squares on log time,
    soft-L1): the per-core DRAM rate (``gemv_GBps_per_core``, a list: 2 threads do not stream twice
    one's), the core cycles per row of W (``gemv_row_cycles``) and the call cost (``gemv_call_us``).
    Each row is priced as the model prices an fc: MACs at the GEMM kernel's rate plus K rows at the
    fitted cycles, the traffic of x, W and the output at the levels ``t`` threads see at the row's
    reuse distance (:func:`gemv_round_distance`; only DRAM at the fitted rate), combined by the
    fitted ``overlap``, plus the call and ``op_overhead_us``. A field in ``machine.fixed`` is held;
    without rows of two K or more for a thread count, nothing is fitted from it on. Written into
    ``block``."""
    from hetsim.cost.gemm2 import Access, gemv_dram_Bps, level_traffic, traffic_time

    names = [k for k in NO_GEMV_TERMS if k not in machine.fixed]
    if not names or not m.gemv:
        return
    mpc = machine.fit.macs_per_cycle
    dist = gemv_round_distance(m)
    overhead = block.get("op_overhead_us", 0.0) * 1e-6
    eff = block.get("gemv_efficiency") or block["kernel_efficiency"]
    by_t: dict[int, list[dict]] = {}
    for r in m.gemv:
        by_t.setdefault(_gemv_threads(block, r["threads"], r["k"] * r["m"]), []).append(r)
    fitted: dict[str, list[float]] = {k: [] for k in names}
    for t in range(1, max(by_t, default=0) + 1):
        rows = by_t.get(t, [])
        if len({r["k"] for r in rows}) < 2:
            break
        e = machine.ep(t, **block)
        levels = e.levels(t)
        bandwidths = [lv.bandwidth_Bps for lv in levels]
        y = np.array([r["time_s"] for r in rows])
        mac_cycles = np.empty(len(rows))
        k_rows = np.array([float(r["k"]) for r in rows])
        other_s = np.empty(len(rows))
        dram_B = np.empty(len(rows))
        for i, r in enumerate(rows):
            k, mm = r["k"], r["m"]
            mac_cycles[i] = k * mm / (mpc * eff * by_cores(block["parallel_efficiency"], t, False) * t)
            # as Gemm2CostModel._matmul: x, W (with its bias: the row's bytes less x and y), y written
            acc = [Access(4.0 * k, dist), Access(r["bytes"] - 4.0 * (k + mm), dist),
                   Access(4.0 * mm, r["bytes"], write=True)]
            traffic, _, _ = level_traffic(levels, acc, e.params)
            dram = len(levels) - 1
            other_s[i] = traffic_time([(j, b) for j, b in traffic if j != dram], bandwidths)
            dram_B[i] = sum(b for j, b in traffic if j == dram)
        # the terms held (machine.fixed) as the model prices them; the free ones from x
        g = e.params
        held_dram_Bps = gemv_dram_Bps(e, t) if g.gemv_GBps_per_core else bandwidths[-1]
        held_row = by_cores(g.gemv_row_cycles, t, False)
        held_call = by_cores(g.gemm_call_us if g.gemv_call_us is None else g.gemv_call_us, t, False) * 1e-6

        def terms(x, t=t, held=(held_dram_Bps, held_row, held_call)) -> tuple[float, float, float]:
            v = dict(zip(names, x, strict=True))
            return (t * v["gemv_GBps_per_core"] if "gemv_GBps_per_core" in v else held[0],
                    v.get("gemv_row_cycles", held[1]), v.get("gemv_call_us", held[2]))

        def model(x, other_s=other_s, dram_B=dram_B, mac_cycles=mac_cycles, k_rows=k_rows, terms=terms):
            dram_Bps, row, call = terms(x)
            core = (mac_cycles + k_rows * row) / f
            mem = other_s + dram_B / dram_Bps
            return overhead + call + core + mem - overlap * np.minimum(core, mem)

        x0 = {"gemv_GBps_per_core": 10 * _GB, "gemv_row_cycles": 100.0, "gemv_call_us": 10e-6}
        lo = {"gemv_GBps_per_core": 1e7, "gemv_row_cycles": 1e-3, "gemv_call_us": 1e-9}
        hi = {"gemv_GBps_per_core": 1e13, "gemv_row_cycles": 1e5, "gemv_call_us": 1e-2}
        x = _robust(lambda x, y=y, model=model: np.log(model(x) / y),
                    [x0[k] for k in names], [lo[k] for k in names], [hi[k] for k in names])
        dram_Bps, row, call = terms(x)
        values = {"gemv_GBps_per_core": dram_Bps / t / _GB, "gemv_row_cycles": row, "gemv_call_us": call * 1e6}
        for k in names:
            fitted[k].append(float(values[k]))
    for k, v in fitted.items():
        if v:
            block[k] = v


def _gemm2_network_kinds(g2: Gemm2Fit, m: Measurements, fit: HostFit, gemm: bool = True,
                         softmax: bool = True) -> None:
    """What the synthetic network's ops cost beyond gemm2's prices of them, as the roofline's
    (:func:`_fit_network_overheads`), at least 0, per core count:

    * with ``softmax``, the softmax: the median gap over its softmax ops is ``kind_overhead_us.softmax`` (measured
      nowhere else: a few cold numpy calls, not bytes, docs/fidelity.md#the-classifier-gemv-and-softmax);
    * with ``gemm``, the convs and fcs: the median gap over them is ``kind_overhead_us.conv`` and
      ``.fc`` (one value for both, as the roofline's ``gemm_overhead_us``): a GEMM inside a running
      network costs more than the same GEMM in the calibration's back-to-back runs (BLAS threads
      asleep after the kernels between two GEMMs, a GEMM after a gap slower: docs/fidelity.md#a-gemm-inside-a-network
      and 1.9); the caches' part is priced by gemm2 already."""
    from hetsim.cost.gemm2 import Gemm2CostModel
    from hetsim_host.microbench import FRAME, synthetic_network

    rows = [r for r in m.network if r["op"] != FRAME]
    if not rows:
        return
    wl = synthetic_network(m.network_input)
    groups = {**({"softmax": ("softmax",)} if softmax else {}), **({"gemm": ("conv", "fc")} if gemm else {})}
    g2.block.pop("kind_overhead_us", None)
    platform = _gemm2_platform(g2, fit)
    cost = Gemm2CostModel(platform, [wl])
    fitted: dict[str, list[float]] = {}
    for kinds in groups.values():
        gaps: dict[int, list[float]] = {}
        for r in rows:
            op = wl.op(r["op"])
            if str(op.kind) in kinds:
                gaps.setdefault(r["threads"], []).append(r["time_s"] - cost.op_time(op, platform.ep(f"C{r['threads']}")))
        if gaps:
            value = [max(0.0, float(np.median(gaps[n]))) * 1e6 for n in sorted(gaps)]
            fitted.update({k: value for k in kinds})
    if fitted:
        g2.block["kind_overhead_us"] = fitted


#: The depthwise kernels' labels in the gemm2 kernel fit -> the block field each rate goes to.
DW_LABELS = {"dw": "dw_macs_per_cycle", "dw_strided": "dw_strided_macs_per_cycle"}


def _winograd_traffic(e, h: int, c: int, m: int, step: str) -> tuple[float, float]:
    """(transformed elements, memory seconds) of a warm Winograd F(2x2, 3x3) transform, as the
    model's steps price them."""
    from hetsim.cost.gemm2 import Access, memory_time

    tiles = (-(-h // 2)) ** 2
    if step == "input":
        inp, v = 4.0 * (h + 2) ** 2 * c, 64.0 * tiles * c
        return 16.0 * tiles * c, memory_time(e.levels(1), [Access(inp, inp + v), Access(v, inp + v, write=True)],
                                             e.params)[0]
    u, out = 64.0 * tiles * m, 4.0 * h * h * m
    return 16.0 * tiles * m, memory_time(e.levels(1), [Access(u, u), Access(out, u + out, write=True)], e.params)[0]


def _fit_winograd(m: Measurements, e, f: float, overlap: float) -> float:
    """Cycles per transformed element of the executor's Winograd transforms (input and output),
    with the traffic the model gives them."""
    rows = [r for r in m.winograd if r["step"] in ("input", "output")]
    y = np.array([r["time_s"] for r in rows])
    tr = np.array([_winograd_traffic(e, r["h"], r["c"], r["m"], r["step"]) for r in rows])

    def t(x):
        core = tr[:, 0] * x[0] / f
        return core + tr[:, 1] - overlap * np.minimum(core, tr[:, 1])

    sol = least_squares(lambda x: np.log(t(x) / y), [1.0], bounds=([0.0], [1e3]), loss="soft_l1", f_scale=0.1)
    return float(sol.x[0])


def _context_distance(context: str, a: float, b: float, c: float) -> float:
    """Reuse distance of a benchmarked GEMM's operands: warm, the call's own footprint (operands,
    their packed copies, the output); cold, never (flushed)."""
    return 2 * (a + b) + c if context == "warm" else math.inf


def unify_clock(fit: HostFit, g2: Gemm2Fit) -> None:
    """One clock for both blocks: when the gemm2 fit raised it (its kernel rate is above the ISA
    peak at the roofline fit's clock), the roofline's efficiencies are rescaled to the new clock
    (same rates)."""
    if g2.freq_MHz != fit.freq_MHz:
        scale = fit.freq_MHz / g2.freq_MHz
        fit.gemm_efficiency *= scale
        if fit.dw_efficiency is not None:
            fit.dw_efficiency *= scale
        if fit.dw_strided_efficiency is not None:
            fit.dw_strided_efficiency *= scale
        if fit.dw_tap_cycles is not None:   # cycles at the new clock, the same seconds
            fit.dw_tap_cycles /= scale
        fit.freq_MHz = g2.freq_MHz


def _gemm2_platform(g2: Gemm2Fit, fit: HostFit, overrides: list[str] | None = None):
    from hetsim.platform import platform_from_dict
    from hetsim.platform.loader import apply_override

    d = platform_dict(fit)
    d["core_types"][0]["dvfs"][0]["freq_MHz"] = g2.freq_MHz
    _add_gemm2(d, g2)
    for ov in overrides or ():
        apply_override(d, ov)
    return platform_from_dict(d, "gemm2 fit")


def _gemm2_residuals(g2: Gemm2Fit, m: Measurements, fit: HostFit) -> None:
    """Median |model / measured - 1| of the real model (Gemm2CostModel) on every set: the GEMM fit
    and held-out shapes per thread count and context, the kernels, the synthetic network's ops."""
    from hetsim.cost.gemm2 import Gemm2CostModel, OpContext
    from hetsim.workload.ops import Op, OpCounts, OpKind, Shape
    from hetsim_host.microbench import FRAME, synthetic_network

    platform = _gemm2_platform(g2, fit)
    cost = Gemm2CostModel(platform)
    for r in m.contexts:
        n, k, mm = r["n"], r["k"], r["m"]
        # A matmul op whose operands sit where the benchmark left them.
        op = Op(f"g{n}x{k}x{mm}", OpKind.MATMUL, ("a",), Shape(1, n, k), Shape(1, n, mm), 1, True,
                out_dims=((n, mm),), in_dims=((n, k),),
                counts=OpCounts(macs=n * k * mm, gemm=(n, k, mm), gemm_groups=1, weight_bytes=4 * k * mm,
                                input_bytes=4 * n * k, output_bytes=4 * n * mm))
        d = _context_distance(r["context"], 4.0 * n * k, 4.0 * k * mm, 4.0 * n * mm)
        cost._context[id(op)] = OpContext((d,), d, False)
        pred = cost.op_time(op, platform.ep(f"C{r['threads']}")) - platform.core_types[0].gemm2.op_overhead_us * 1e-6
        r["gemm2_s"] = pred
        del cost._context[id(op)]
    for (name, sel) in (("gemm2 fit", ("fit", "sweep")), ("gemm2 held-out", ("heldout",))):
        for t in sorted({r["threads"] for r in m.contexts}):
            for ctx in ("warm", "cold"):
                e = [r["gemm2_s"] / r["time_s"] - 1 for r in m.contexts
                     if r["set"] in sel and r["threads"] == t and r["context"] == ctx]
                if e:
                    g2.residuals[f"{name} {t}T {ctx}"] = _median_abs(e)
    if m.winograd:
        from hetsim.workload import workload_from_dict

        wino = _gemm2_platform(g2, fit, ["core_types.cpu.gemm2.conv_policy=armcl",
                                         "core_types.cpu.gemm2.winograd_tile=2"])
        wcost = Gemm2CostModel(wino)
        errs = []
        for r in m.winograd:
            if r["step"] != "conv":
                continue
            wl = workload_from_dict({"schema": 1, "name": "wino", "input": {"h": r["h"], "w": r["h"], "c": r["c"]},
                                     "layer_kinds": ["conv"], "ops": [{"name": "cv", "kind": "conv", "kernel": 3,
                                                                       "pad": 1, "out_c": r["m"]}]})
            op = wl.op("cv")
            # warm, as benchmarked: the input right after its own use, the filters resident
            wcost._context[id(op)] = OpContext((op.input_bytes,), 16.0 * 4 * r["c"] * r["m"], False)
            errs.append(wcost.op_time(op, wino.ep("C1")) / r["time_s"] - 1)
        g2.residuals["gemm2 winograd convs"] = _median_abs(errs)
    if m.gemv:   # the cold GEMVs as fc ops, their operands a round away (as benchmarked)
        from hetsim_host.microbench import _single_fc

        dist = gemv_round_distance(m)
        errs = []
        for r in m.gemv:
            op = _single_fc(r["k"], r["m"])
            cost._context[id(op)] = OpContext((dist,), dist, False)
            errs.append(cost.op_time(op, platform.ep(f"C{r['threads']}")) / r["time_s"] - 1)
            del cost._context[id(op)]
        g2.residuals["gemm2 gemv"] = _median_abs(errs)
    if m.network:
        wl = synthetic_network(m.network_input)
        cost.bind(wl)
        errs = [cost.op_time(wl.op(r["op"]), platform.ep(f"C{r['threads']}")) / r["time_s"] - 1
                for r in m.network if r["op"] != FRAME and str(wl.op(r["op"]).kind) not in ("flatten", "reshape")]
        g2.residuals["gemm2 network ops"] = _median_abs(errs)


def _add_gemm2(d: dict, g2: Gemm2Fit) -> None:
    """Put the gemm2 block and the cache sizes into a platform dict."""
    core = d["core_types"][0]
    block: dict = {k: (round(float(v), 6) if isinstance(v, float) else v) for k, v in g2.block.items()
                   if v is not None}
    if "kind_cycles_per_byte" in block:
        block["kind_cycles_per_byte"] = {k: round(float(v), 4) for k, v in block["kind_cycles_per_byte"].items()}
    if "kind_overhead_us" in block:
        block["kind_overhead_us"] = {k: [round(float(x), 3) for x in v] for k, v in block["kind_overhead_us"].items()}
    for key in ("parallel_efficiency", "gemm_call_us", "gemv_GBps_per_core", "gemv_row_cycles", "gemv_call_us"):
        if isinstance(block.get(key), list):
            block[key] = [round(float(x), 4) for x in block[key]]
    core["gemm2"] = block
    if g2.l1d_KiB:
        core["l1d_KiB"] = g2.l1d_KiB
    cl = d["clusters"][0]
    if g2.l2_KiB:
        cl["l2_KiB"] = g2.l2_KiB
        cl["l2_private"] = g2.l2_private
    if g2.l3_KiB:
        cl["l3_KiB"] = g2.l3_KiB
