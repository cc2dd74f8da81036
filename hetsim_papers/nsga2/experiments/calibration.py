"""The "real" cluster calibrated to the thesis's Table 2 (seed 004), by code.

Table 2 gives, per CNN, the whole network on one CPU device (6 Carmel cores): latency, energy per
inference and peak memory. The ncnn model (:class:`hetsim_papers.nsga2.cost.NcnnCostModel`) of
``xavier-nx-x8`` is fitted to them in three steps, each a least-squares fit of the parameters
that step's measurements identify (the others are the platform file's sourced values):

1. **latency**: the Carmel's im2col GEMM efficiency, its Winograd efficiency and the per-layer
   overhead, to the three latencies (28.3 / 122.46 / 138.68 ms): VGG-16 is mostly Winograd,
   AlexNet im2col and FC, DenseNet-121 many small layers (:func:`hetsim.calibrate.fit_platform`,
   log error, the DAG engine's closed form, which equals the DES without noise);
2. **memory**: the runtime's resident MiB, to the three peaks (152.746 / 446.852 / 95.969 MB,
   read as MiB, docs/papers/nsga2.md), each simulated peak being the runtime + the schedule's peak with ncnn
   freeing every weight and blob once unused (closed form: the mean residual);
3. **energy**: the CPU device's compute-bound and memory-bound power, to the three energies
   (0.352 / 1.959 / 1.026 J) given the fitted schedule (linear least squares, the board's idle
   power fixed; :func:`hetsim_papers.nsga2.cost.task_power_split` divides each task's time).

The GPU's parameters are not fitted: the thesis measures nothing on a GPU alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd
from scipy.optimize import lsq_linear

from hetsim.calibrate import Observation, fit_platform
from hetsim.mapping import hybrid_placement
from hetsim.platform import Platform, load_platform
from hetsim.tasks import build_tasks, ep_peak_memory, list_schedule
from hetsim.workload import load_workload
from hetsim_papers.nsga2.cost import MiB, NcnnCostModel, task_power_split
from hetsim_papers.nsga2.networks import TABLE2

PLATFORM = "xavier-nx-x8"
NETWORKS = ("alexnet-onnx", "vgg16-onnx", "densenet121-onnx")
LABEL = {"alexnet-onnx": "AlexNet", "vgg16-onnx": "VGG-16", "densenet121-onnx": "DenseNet-121"}
#: The device Table 2's single-device runs use (any CPU: the boards are identical).
DEVICE = "nx01-cpu"

#: Step 1: what the latencies identify, with bounds.
LATENCY_PARAMETERS = {
    "core_types.carmel.roofline.gemm_efficiency": (0.02, 1.0),
    "core_types.carmel.ncnn.winograd_efficiency": (0.02, 1.0),
    "core_types.carmel.roofline.op_overhead_us": (0.1, 5000.0),
}


def _placement(platform: Platform, workload):
    return hybrid_placement(platform, workload, {op.name: [DEVICE] for op in workload.ops})


def _latency(platform: Platform, obs: Observation) -> float:
    """Throughput (1 / latency) of the whole network on one CPU device, closed form."""
    workload = load_workload(obs.workload)
    tg = build_tasks(platform, workload, _placement(platform, workload), NcnnCostModel(platform), comm="mpi")
    return 1.0 / float(list_schedule(tg)[1].max())


def _schedule(platform: Platform, name: str):
    workload = load_workload(name)
    cost = NcnnCostModel(platform)
    tg = build_tasks(platform, workload, _placement(platform, workload), cost, comm="mpi")
    start, end = list_schedule(tg)
    return workload, cost, tg, start, end


@dataclass(frozen=True)
class Calibration:
    """The fitted values (override key -> value) and the stated-vs-fitted table."""

    values: dict[str, float]
    table: pd.DataFrame

    @property
    def overrides(self) -> list[str]:
        return [f"{k}={v!r}" for k, v in self.values.items()]

    def platform(self) -> Platform:
        return load_platform(PLATFORM, self.overrides)


@lru_cache(maxsize=1)
def calibrate() -> Calibration:
    """Fit the three steps of the module docstring (deterministic: fixed starts, no noise)."""
    base = load_platform(PLATFORM)
    carmel = base.core_type("carmel")
    x0 = {"core_types.carmel.roofline.gemm_efficiency": carmel.roofline.gemm_efficiency,
          "core_types.carmel.ncnn.winograd_efficiency": carmel.ncnn.winograd_efficiency or 0.5,
          "core_types.carmel.roofline.op_overhead_us": carmel.roofline.op_overhead_us or 20.0}
    obs = [Observation(n, DEVICE, 1e3 / TABLE2[n]["cpu_latency_ms"], label=LABEL[n]) for n in NETWORKS]
    fit = fit_platform(PLATFORM, obs, LATENCY_PARAMETERS, x0=x0, evaluator=_latency)
    values = dict(fit.values)
    platform = load_platform(PLATFORM, [f"{k}={v!r}" for k, v in values.items()])

    rows = []
    schedules = {n: _schedule(platform, n) for n in NETWORKS}
    # Step 2: memory = runtime + the schedule's peak (weights and blobs freed once unused).
    peaks = {n: ep_peak_memory(tg, s, e, weights="transient")[DEVICE] / MiB
             for n, (_w, _c, tg, s, e) in schedules.items()}
    stated_mem = {n: TABLE2[n]["cpu_memory_MB"] for n in NETWORKS}
    runtime = max(float(np.mean([stated_mem[n] - peaks[n] for n in NETWORKS])), 0.0)
    values["core_types.carmel.ncnn.runtime_MiB"] = runtime
    # Step 3: energy = idle x T + (P_compute - idle) x t_compute + (P_memory - idle) x t_memory.
    level = platform.core_type("carmel").level(None)
    cores = platform.cluster(DEVICE).cores
    idle = (level.idle_W_per_core or 0.0) * cores
    A, y = [], []
    for n, (workload, cost, tg, s, e) in schedules.items():
        seconds = {"compute": 0.0, "memory": 0.0, "comm": 0.0}
        for t in tg.tasks:
            for kind, dt in task_power_split(cost, workload, t, float(e[t.index] - s[t.index])):
                seconds[kind] += dt
        T = float(e.max())
        A.append([seconds["compute"], seconds["memory"]])
        y.append(TABLE2[n]["cpu_energy_J"] - idle * (T - seconds["compute"] - seconds["memory"]))
    fit_e = lsq_linear(np.array(A), np.array(y), bounds=([idle, idle], [np.inf, np.inf]))
    p_compute, p_memory = (float(v) for v in fit_e.x)
    values["core_types.carmel.dvfs.mode-6core-1400.active_W_per_core"] = p_compute / cores
    values["core_types.carmel.ncnn.memory_bound_W"] = p_memory
    energy = dict(zip(NETWORKS, np.array(A) @ fit_e.x + idle * 0.0, strict=True))
    for i, n in enumerate(NETWORKS):
        T = 1.0 / _latency(platform, Observation(n, DEVICE, 1.0))
        e_fit = float(energy[n] + TABLE2[n]["cpu_energy_J"] - y[i])
        rows.append({"network": LABEL[n], "quantity": "latency (ms)", "stated": TABLE2[n]["cpu_latency_ms"],
                     "fitted": T * 1e3})
        rows.append({"network": LABEL[n], "quantity": "memory (MiB)", "stated": stated_mem[n],
                     "fitted": runtime + peaks[n]})
        rows.append({"network": LABEL[n], "quantity": "energy (J)", "stated": TABLE2[n]["cpu_energy_J"],
                     "fitted": e_fit})
    table = pd.DataFrame(rows)
    table["error"] = table["fitted"] / table["stated"] - 1
    return Calibration(values, table)


@lru_cache(maxsize=1)
def calibrated_platform() -> Platform:
    """xavier-nx-x8 with the CPU fitted to Table 2."""
    return calibrate().platform()
