"""The thesis's tuning procedure (§4.3), run on the "real" cluster: it writes the coefficients JSON
of the analytical model (:class:`hetsim_papers.nsga2.cost.Coefficients`) for one network.

Per execution unit (CPU, and GPU when the device view has GPUs), on the view's first two devices
of that unit, A and B (on different boards):

1. **Latency** (§4.3.1): the whole network on A in benchmark mode (4 warm-up + 20 measured
   inferences); for each layer, coefficient = MAC / (frequency x measured time) (eq. 4.7 solved for
   it), averaged per layer type (Conv im2col, Conv Winograd, FC, ReLU, ...).
2. **Memory** (§4.3.3): three mappings, each the whole network on A but one layer on B (the first
   Conv, the first FC and the first ReLU in ONNX order; DenseNet has no FC, so two); each gives
   real_A = exp_A x c + b and real_B = exp_B x c + b, a 2 x 2 solve; (c, b) averaged.
3. **Energy** (§4.3.4): the whole network on A; c_E = its measured energy / the model's predicted
   latency of A (with the coefficients of steps 1-2).

**Communication** (§4.3.2; the thesis gives no procedure): every transfer the tuning runs made is
a (bytes, seconds) point of its medium; a least-squares line through them gives the medium's
speed (eq. 4.8 uses bytes / speed) and its per-message time, which becomes the sync penalty. A
CPU-GPU run (everything on CPU A but the first Conv on the GPU of A's board) adds the CPU-GPU
medium when the view has GPUs. The same-device medium never occurs (one rank per device); it is
set to the device memory's bandwidth.

``measure`` answers a placement with a :class:`~hetsim_papers.nsga2.problem.HybridResult`
(an explorer passes its session's, so the tuning runs are trials on the tuning clock).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hetsim.errors import HetsimError
from hetsim.mapping import Placement
from hetsim_papers.nsga2.cost import (
    Coefficients,
    MiB,
    UnitCoefficients,
    expected_memory_bytes,
    fit_line,
    layer_type,
    model_macs,
    per_type_mean,
    unit_of,
)
from hetsim_papers.nsga2.problem import HybridProblem, HybridResult

Measure = Callable[[Placement, str], HybridResult]

#: The layers the memory tuning offloads, by op kind (thesis §4.3.3: a Conv, an FC and a ReLU,
#: "the ReLU stands for every weight-free layer").
OFFLOAD_KINDS = ("conv", "fc", "relu")


def _unit_devices(problem: HybridProblem) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, ep in zip(problem.space.device_names, problem.space.devices, strict=True):
        out.setdefault(unit_of(ep), []).append(name)
    return out


def _frequency_Hz(problem: HybridProblem, device: str) -> float:
    """The unit's clock in eq. 4.7: the CPU's DVFS level; the GPU's is not in the platform's
    schema, so 1 GHz (only frequency x coefficient matters)."""
    ep = problem.platform.ep(device)
    if ep.cluster:
        c = problem.platform.cluster(ep.place)
        return problem.platform.core_type(c.core_type).level(c.dvfs).freq_MHz * 1e6
    return 1e9


def _winograd(problem: HybridProblem, device: str) -> tuple[int, int] | None:
    from hetsim_papers.nsga2.cost import NcnnCostModel

    cost = problem.cost
    if not isinstance(cost, NcnnCostModel):
        return None
    params = cost.params(problem.platform.ep(device))
    if params.winograd_efficiency is None:
        return None
    return (params.winograd_tile, params.winograd_min_channels)


def _line(points: list[tuple[float, float]]) -> tuple[float, float]:
    """(per-message seconds, bytes/s) of time = a + bytes / speed, by least squares."""
    x = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    if len(points) < 2 or np.ptp(x) == 0:
        return 0.0, float(x.sum() / y.sum())
    slope, intercept = np.polyfit(x, y, 1)
    return max(float(intercept), 0.0), float(1.0 / slope)


def _latency_step(whole: HybridResult, ops, draft: Coefficients, unit: str,
                  freq_Hz: float) -> tuple[dict[str, float], dict[str, float]]:
    """Step 1 (§4.3.1): per layer type, the mean of MAC / (frequency x measured time) over the
    whole network's run on A; and each type's relative spread (std / mean)."""
    samples: dict[str, list[float]] = {}
    for op in ops:
        t = whole.op_time_s.get(op.name, 0.0)
        kind = layer_type(op, draft, unit)
        macs = model_macs(op, kind, draft, unit)
        if t > 0 and macs > 0:
            samples.setdefault(kind, []).append(macs / (freq_Hz * t))     # eq. 4.7 solved for it
    spread = {k: float(np.std(v) / np.mean(v)) for k, v in samples.items() if len(v) > 1}
    return per_type_mean(samples), spread


def _memory_step(problem: HybridProblem, run, unit: str, a: str, b: str,
                 transfers: list) -> tuple[tuple[float, float], list[dict]]:
    """Step 2 (§4.3.3): one layer of each OFFLOAD_KINDS moved from A to B, a 2 x 2 solve of
    real = expected x c + b per run, (c, b) averaged; the runs' transfers join ``transfers``."""
    ops = problem.workload.ops
    lines = []
    memory_runs: list[dict] = []
    for kind in OFFLOAD_KINDS:
        layer = next((op.name for op in ops if op.kind == kind), None)
        if layer is None:
            continue
        placement = problem.offload(a, layer, b)
        r = run(placement, f"tune:{unit}:memory:{kind}")
        transfers += r.transfers
        expected = expected_memory_bytes(placement, problem.workload, problem.platform)
        points = [(expected[a] / MiB, r.devices[a]["memory_bytes"] / MiB),
                  (expected[b] / MiB, r.devices[b]["memory_bytes"] / MiB)]
        c, bias = fit_line(points)
        lines.append((c, bias))
        memory_runs.append({"layer": layer, "expected_MiB": [p[0] for p in points],
                            "real_MiB": [p[1] for p in points], "c": c, "b": bias})
    return (float(np.mean([c for c, _ in lines])), float(np.mean([b for _, b in lines]))), memory_runs


def _link_speeds(problem: HybridProblem,
                 transfers: list[tuple[str, float, float]]) -> tuple[dict[str, float], dict[str, float]]:
    """Communication (§4.3.2, module docstring): per medium, the speed (bytes/s) and the
    per-message time (s) of a line through the tuning runs' transfers; the same-device medium at
    the device memory's bandwidth, a medium never measured at the other's speed."""
    speeds: dict[str, float] = {}
    per_message: dict[str, float] = {}
    for medium in ("network", "cpu_gpu"):
        points = [(nbytes, s) for cls, nbytes, s in transfers if cls == medium]
        if points:
            per_message[medium], speeds[medium] = _line(points)
    mem_bw = problem.platform.memory(problem.space.devices[0].memory).bandwidth_GBps * 1e9
    speeds["same_device"] = mem_bw
    speeds.setdefault("cpu_gpu", speeds.get("network", mem_bw))
    speeds.setdefault("network", speeds["cpu_gpu"])
    return speeds, per_message


def _energy_W(problem: HybridProblem, units: dict[str, list[str]], provisional: Coefficients,
              single: dict[str, HybridResult]) -> dict[str, float]:
    """Step 3 (§4.3.4): c_E = measured energy of the whole network on A / the model's latency of A."""
    from hetsim_papers.nsga2.fitness import ThesisModel
    from hetsim_papers.nsga2.space import HybridSpace

    energy_W = {}
    for unit, names in units.items():
        space = HybridSpace(problem.platform, problem.workload, [names[0], names[1]])
        predicted = ThesisModel(space, provisional).predict(problem.single_device(names[0]))["latency_s"]
        energy_W[unit] = single[unit].devices[names[0]]["energy_J"] / predicted
    return energy_W


def tune(problem: HybridProblem, measure: Measure | None = None, fc_macs: str = "product") -> Coefficients:
    """The coefficients JSON of ``problem``'s network on its device view (module docstring)."""
    rng = np.random.default_rng(0)
    runs: list[str] = []

    def run(placement: Placement, phase: str) -> HybridResult:
        runs.append(phase)
        return measure(placement, phase) if measure is not None else problem.measure(placement, rng)

    units = _unit_devices(problem)
    ops = problem.workload.ops
    # A provisional JSON for the model's layer types and MAC formulas (winograd rules first).
    winograd = {u: _winograd(problem, names[0]) for u, names in units.items()}
    draft = Coefficients(network=problem.workload.name, platform=problem.platform.name, units={},
                         links_Bps={}, winograd=winograd, fc_macs=fc_macs)
    transfers: list[tuple[str, float, float]] = []
    latency: dict[str, dict[str, float]] = {}
    spread: dict[str, dict[str, float]] = {}
    single: dict[str, HybridResult] = {}
    memory: dict[str, tuple[float, float]] = {}
    memory_runs: dict[str, list[dict]] = {}
    for unit, names in units.items():
        if len(names) < 2:
            raise HetsimError(f"tuning: the {unit} unit needs two devices (one offloads a layer to the other); "
                              f"the view has {names}")
        a, b = names[0], names[1]
        single[unit] = run(problem.single_device(a), f"tune:{unit}:latency")
        latency[unit], spread[unit] = _latency_step(single[unit], ops, draft, unit, _frequency_Hz(problem, a))
        memory[unit], memory_runs[unit] = _memory_step(problem, run, unit, a, b, transfers)
    if "cpu" in units and "gpu" in units:
        cpu = units["cpu"][0]
        board = problem.platform.cluster(cpu).device
        gpu = next((g for g in units["gpu"] if problem.platform.accelerator(g).device == board), units["gpu"][0])
        conv = next(op.name for op in ops if op.kind == "conv")
        transfers += run(problem.offload(cpu, conv, gpu), "tune:cpu_gpu").transfers
    speeds, per_message = _link_speeds(problem, transfers)
    units_json = {u: UnitCoefficients(frequency_Hz=_frequency_Hz(problem, units[u][0]), latency=latency[u],
                                      memory_coefficient=memory[u][0], memory_bias_MiB=memory[u][1],
                                      energy_W=1.0) for u in units}
    provisional = Coefficients(network=problem.workload.name, platform=problem.platform.name,
                               units=units_json, links_Bps=speeds,
                               sync_penalty_s=per_message.get("network", 0.0), winograd=winograd,
                               fc_macs=fc_macs)
    energy_W = _energy_W(problem, units, provisional, single)
    final = {u: units_json[u].model_copy(update={"energy_W": energy_W[u]}) for u in units}
    record = {"single_device": {u: {"latency_s": r.latency_s, "energy_J": r.energy_J, "memory_MiB": r.memory_MiB}
                                for u, r in single.items()},
              "latency_spread": spread, "memory_runs": memory_runs,
              "per_message_s": per_message, "runs": runs}
    return provisional.model_copy(update={"units": final, "tuning": record})
