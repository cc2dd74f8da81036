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
  whatever the stage's cores (hetsim/host/kernels.py says why), so n cores are no faster.
  Depthwise convs get a ``dw_efficiency`` instead (t = overhead + MACs / (n · peak · dw_eff)).

* GEMMs in a network: the convs and fcs of a synthetic CNN, timed inside whole forward passes,
  take longer than the same GEMMs alone (their filters and buffers are cold after the big fully
  connected layer of the previous frame, BLAS threads must be woken): the median gap per core
  count is ``gemm_overhead_us``. Its other ops match their isolated runs within a few µs.

The clock: the nominal one from /proc/cpuinfo, unless the fitted GEMM rate exceeds the ISA peak
at that clock (turbo), in which case the clock is raised to the lowest 100 MHz step that holds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares

from hetsim.host.microbench import Measurements
from hetsim.platform.schema import by_cores

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


def fit_host(m: Measurements) -> HostFit:
    machine = m.machine
    cores = len(machine["cpus"])
    macs = float(machine["macs_per_cycle"])
    nominal = float(machine["nominal_MHz"])

    # -- bandwidth ------------------------------------------------------------------------
    one = [s["bytes"] / s["time_s"] for s in m.stream if s["cores"] == 1]
    top = max(s["cores"] for s in m.stream)
    core_bw = float(np.median(one))
    mem_bw = float(sum(s["bytes"] / s["time_s"] for s in m.stream if s["cores"] == top))
    mem_bw = max(mem_bw, core_bw)

    # -- GEMM, 1 thread: peak rate, packing rate, overhead ----------------------------------
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

    fit = HostFit(macs, freq, eff, [1.0], float(o), [], float(pack), [], core_bw, mem_bw, {}, None, cores)

    # -- GEMM, n threads: parallel efficiency -------------------------------------------------
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

    # -- im2col and the op kinds: a rate per core count -----------------------------------------
    def fit_rates(rows) -> list[float]:
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

    if m.im2col:
        fit.im2col_Bps = fit_rates(m.im2col)
        fit.residuals["im2col"] = _median_abs(fit.rate_time(r["bytes"], fit.im2col_Bps, r["threads"])
                                              / r["time_s"] - 1 for r in m.im2col)
    for kind in sorted({k["kind"] for k in m.kinds}):
        rows = [k for k in m.kinds if k["kind"] == kind]
        if kind == "dw":
            rows = [r for r in rows if r["threads"] == 1] or rows
            t = np.array([r["time_s"] for r in rows])

            def res_dw(x, rows=rows, t=t):
                return np.log(np.array([fit.op_overhead_s + r["macs"] / (
                    r["threads"] * fit.peak_MACps * x[0] * fit.par_eff(r["threads"])) for r in rows]) / t)

            (e,) = _robust(res_dw, [0.05], [1e-4], [1.0])
            fit.dw_efficiency = float(e)
            continue
        fit.kind_Bps[kind] = fit_rates(rows)
        fit.residuals[f"kind {kind}"] = _median_abs(
            fit.rate_time(r["bytes"], fit.kind_Bps[kind], r["threads"]) / r["time_s"] - 1 for r in rows)
    _fit_network_overheads(fit, m)
    return fit


def _fit_network_overheads(fit: HostFit, m: Measurements) -> None:
    """What a GEMM costs in a running network beyond the same GEMM alone, from the ops of the
    synthetic network: per core count, the median over its conv and fc ops of (measured - cost
    model) is ``gemm_overhead``. The other kinds of op need nothing (their gaps are a few µs
    either way)."""
    if not m.network:
        return
    from hetsim.cost import RooflineCostModel
    from hetsim.host.microbench import synthetic_network
    from hetsim.platform import platform_from_dict

    wl = synthetic_network(m.network_input)
    cost = RooflineCostModel(platform_from_dict(platform_dict(fit), "fit"))
    gaps: dict[int, list[float]] = {}
    from hetsim.host.microbench import FRAME

    rows = [r for r in m.network if r["op"] != FRAME]
    for row in rows:
        op = wl.op(row["op"])
        if str(op.kind) in ("conv", "fc"):
            model = cost.op_time(op, cost.platform.ep(f"C{row['threads']}"))
            gaps.setdefault(row["threads"], []).append(row["time_s"] - model)
    fit.gemm_overhead_s = [max(0.0, float(np.median(gaps[n]))) for n in sorted(gaps)]
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


def platform_yaml(fit: HostFit, m: Measurements, name: str = "host", raw_file: str = "") -> str:
    """The platform YAML with a source comment on every number (what was measured, how fitted)."""
    d = platform_dict(fit, name)
    c = d["core_types"][0]
    r = c["roofline"]
    mc = m.machine
    load = m.load
    lines = [
        "# Written by `hetsim calibrate host`: this machine, measured and fitted (hetsim/host/fit.py).",
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
    note = ("nominal, /proc/cpuinfo" if fit.freq_MHz == mc["nominal_MHz"] else
            f"nominal {mc['nominal_MHz']:g} MHz raised: the fitted GEMM rate exceeds the ISA peak there (turbo)")
    lines += [
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
        lines.append(f"      dw_efficiency: {r['dw_efficiency']}  # [fitted] executor's depthwise kernel")
    if r["kind_GBps"]:
        lines.append("      kind_GBps:  # [fitted] executor's kernels on 1, 2, ... cores, GB/s (capped by the bandwidth)")
        for k, v in r["kind_GBps"].items():
            lines.append(f"        {k}: {v}  # median |error| {fit.residuals.get('kind ' + k, float('nan')):.1%}")
    else:
        lines.append("      kind_GBps: {}  # every kind measured keeps up with the memory")
    lines += [
        "clusters:",
        f"  - {{name: host, symbol: C, core_type: cpu, cores: {fit.cores}, memory: dram}}  "
        "# [measured] the CPUs this process may use (sched_getaffinity)",
        "",
    ]
    return "\n".join(lines)


def _load(v) -> str:
    return "/".join(f"{x:.2f}" for x in v) if v else "?"


def _MB(m: Measurements) -> str:
    return f"{m.stream[0]['bytes'] / 2**20:.0f}" if m.stream else "?"
