"""Calibration of HOPE's three phones: code, from the paper's stated numbers, never typed values.

The paper publishes no latency table (HOPE §4.1, §5). Its only absolute numbers are PN-M on
HE: 43 ms on the CPU (2 big cores) and 183 ms on the GPU (§5.2). They identify two parameters:

* the CPU's kernel efficiency: one scale on the roofline block's ``gemm_efficiency`` and
  ``dw_efficiency`` of HE's big cores (their ratio stays the platform file's), fitted so that the
  CPU version of PN-M takes 43 ms;
* the GPU's per-kernel launch and synchronisation overhead (``roofline.op_overhead_us``), fitted so
  that the GPU version of PN-M (the ops the GPU cannot run on the CPU) takes 183 ms.

Both carry over to every CPU core type and GPU of the three phones [assumption: the same MNN
kernels and OpenCL runtime; the paper gives LE and ME no latency]. Fig. 6's μLayer has one more
parameter per phone, its per-layer CPU-GPU synchronisation, fitted by :func:`fit_split_sync` to
that phone's average reduction (HOPE §5.4); the runs supply the latencies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from scipy.optimize import brentq, minimize_scalar

from hetsim.evaluation import DagOptions
from hetsim.exploration import PlacementProblem, explore, make_explorer
from hetsim.platform import Platform, load_platform
from hetsim.workload import load_workload
from hetsim_papers.hope.cost import HopeCostModel
from hetsim_papers.hope.experiments.paper import MODELS, PNM_HE_CPU_S, PNM_HE_GPU_S

FIT_PLATFORM = "hope-he"
FIT_CPU_TYPE = "cortex-a76"
#: The fields the fit sets (the one place they are named).
GEMM_EFF = "core_types.{}.roofline.gemm_efficiency"
DW_EFF = "core_types.{}.roofline.dw_efficiency"
GPU_OVERHEAD = "accelerators.gpu.roofline.op_overhead_us"


@lru_cache(maxsize=128)
def platform(name: str, overrides: tuple[str, ...] = (), dvfs: str | None = None) -> Platform:
    return load_platform(name, list(overrides), dvfs)


def _latency(p: Platform, model: str, algorithm: str, cpu: str = "big") -> float:
    problem = PlacementProblem(p, load_workload(MODELS[model]), HopeCostModel(p), eps=[cpu, "gpu"],
                               dag=DagOptions(comm="consumer"))
    return explore(problem, make_explorer(algorithm), seed=0).best_value


@dataclass(frozen=True)
class Calibration:
    """The fitted values and what they reproduce."""

    gemm_efficiency: float
    dw_efficiency: float
    gpu_overhead_us: float
    pnm_cpu_s: float          # PN-M's CPU version on HE with the fitted values
    pnm_gpu_s: float          # ... and its GPU version
    start: tuple[float, float, float]   # the platform file's gemm, dw efficiency and GPU overhead

    def overrides(self, name: str) -> tuple[str, ...]:
        """The fitted values as ``--set`` overrides of phone ``name``: every CPU core type and the GPU."""
        base = load_platform(name)
        out = []
        for t in base.core_types:
            out += [f"{GEMM_EFF.format(t.name)}={self.gemm_efficiency!r}",
                    f"{DW_EFF.format(t.name)}={self.dw_efficiency!r}"]
        out.append(f"{GPU_OVERHEAD}={self.gpu_overhead_us!r}")
        return tuple(out)


def _cpu_overrides(scale: float, gemm0: float, dw0: float) -> tuple[str, ...]:
    return (f"{GEMM_EFF.format(FIT_CPU_TYPE)}={gemm0 * scale!r}", f"{DW_EFF.format(FIT_CPU_TYPE)}={dw0 * scale!r}")


@lru_cache(maxsize=1)
def calibration() -> Calibration:
    """Fit HE's CPU efficiency to PN-M's 43 ms, then its GPU overhead to PN-M's 183 ms (the GPU
    version runs a few ops on the CPU, so the CPU goes first)."""
    base = load_platform(FIT_PLATFORM)
    cpu = base.core_type(FIT_CPU_TYPE).roofline
    gemm0, dw0 = cpu.gemm_efficiency, cpu.dw_efficiency or cpu.gemm_efficiency
    overhead0 = base.accelerator("gpu").roofline.op_overhead_us

    def cpu_error(scale: float) -> float:
        return _latency(platform(FIT_PLATFORM, _cpu_overrides(scale, gemm0, dw0)), "PN-M", "CPU-only") - PNM_HE_CPU_S

    scale = brentq(cpu_error, 0.05 / gemm0, 1.0 / gemm0, xtol=1e-6)
    fixed = _cpu_overrides(scale, gemm0, dw0)

    def gpu_error(overhead_us: float) -> float:
        p = platform(FIT_PLATFORM, (*fixed, f"{GPU_OVERHEAD}={overhead_us!r}"))
        return _latency(p, "PN-M", "GPU-only") - PNM_HE_GPU_S

    overhead = brentq(gpu_error, 0.0, 5000.0, xtol=1e-4)
    fitted = platform(FIT_PLATFORM, (*fixed, f"{GPU_OVERHEAD}={overhead!r}"))
    return Calibration(gemm0 * scale, dw0 * scale, overhead, _latency(fitted, "PN-M", "CPU-only"),
                       _latency(fitted, "PN-M", "GPU-only"), (gemm0, dw0, overhead0))


def phone(name: str, dvfs: str | None = None) -> Platform:
    """A phone with the calibration applied (and a DVFS preset of Fig. 5)."""
    return platform(name, calibration().overrides(name), dvfs)


@dataclass(frozen=True)
class SyncFit:
    """μLayer's per-layer synchronisation on one phone, fitted to its average reduction."""

    split_sync_s: float
    target_pct: float
    reached_pct: float


def fit_split_sync(target_pct: float, reduction_pct: Callable[[float], float],
                   upper_s: float = 5e-3) -> SyncFit:
    """The synchronisation s in [0, ``upper_s``] for which ``reduction_pct(s)`` (HOPE's average
    reduction over μLayer with that synchronisation) is closest to ``target_pct``: a root when the
    target is within reach, else the nearest end (the residual is reported)."""
    lo, hi = reduction_pct(0.0), reduction_pct(upper_s)
    if (lo - target_pct) * (hi - target_pct) < 0:
        s = brentq(lambda x: reduction_pct(x) - target_pct, 0.0, upper_s, xtol=1e-8)
    else:
        res = minimize_scalar(lambda x: abs(reduction_pct(x) - target_pct), bounds=(0.0, upper_s),
                              method="bounded", options={"xatol": 1e-7})
        s = float(res.x)
    return SyncFit(float(s), target_pct, reduction_pct(float(s)))


def mean(values: Mapping[str, float]) -> float:
    return sum(values.values()) / len(values)
