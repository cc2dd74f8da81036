"""Calibration of the Pipe-search reproduction: the Jetson TX2 fitted to Table 6 (code, from stated
inputs, never typed numbers).

:func:`calibration_fit` fits the TX2's Denver and A57 GEMM efficiencies and the A57 two-core
parallel efficiency to the four throughputs of Table 6, each measured on the configuration the
paper states, mapped with Paper I's core rule (:func:`hetsim.exploration.core_groups`), by least squares
on log throughput (:func:`hetsim.calibrate.fit_platform`). Every other number is a prediction of the
fitted platform. docs/papers/pipesearch.md ("Calibration") explains each parameter.
"""

from __future__ import annotations

from functools import lru_cache

from hetsim.analytic import evaluate_pipeline
from hetsim.calibrate import Fit, Observation, fit_platform
from hetsim.cost import CostModel, Gemm2CostModel, make_cost_model
from hetsim.cost.gemm2 import GeometryCache
from hetsim.errors import HetsimError
from hetsim.exploration import Configuration, core_groups
from hetsim.mapping import Pipeline, load_mapping
from hetsim.platform import Platform, load_platform
from hetsim.workload import load_workload
from hetsim_papers.pipesearch.experiments.paper import GOV_LABEL, TABLE6

PLATFORM = "jetson-tx2"
#: The cost model playing the TX2: "roofline" (the default) or "gemm2" (issue 14). gemm2 flips no
#: Pipe-search verdict (30/66 independent predictions either way, docs/fidelity.md#the-scorecard-before-and-after), so the
#: page's numbers (docs/papers/pipesearch.md) stay the roofline's.
COST_MODEL = "roofline"
COST_MODELS = ("roofline", "gemm2")
#: Overrides fixed before the fit (the fidelity harness switches a mechanism off here and refits).
COST_MODEL_EXTRA: tuple[str, ...] = ()

# The platform fields the fit sets or tries (the one place they are named).
#: What the fit may change, with bounds: the GEMM efficiencies of both core types and the per-core
#: efficiency of two A57 cores working on one layer (XiTAO's data-parallel width 2; no other
#: observation uses a pair of Denver cores alone, so Denver's is not identifiable and stays 1).
CALIBRATION_PARAMETERS = {
    "core_types.denver2.roofline.gemm_efficiency": (0.01, 1.0),
    "core_types.cortex-a57.roofline.gemm_efficiency": (0.01, 1.0),
    "core_types.cortex-a57.roofline.parallel_efficiency.1": (0.05, 1.0),
}
#: Give the A57 curve a second entry for the fit to set (it applies to 2 or more cores).
CALIBRATION_FIXED = ("core_types.cortex-a57.roofline.parallel_efficiency=[1.0, 1.0]",)
#: The same three quantities in the gemm2 block: the micro-kernel's share of the peak of each core
#: type, and the A57 pair's per-core efficiency.
CALIBRATION_PARAMETERS_GEMM2 = {
    "core_types.denver2.gemm2.kernel_efficiency": (0.01, 1.0),
    "core_types.cortex-a57.gemm2.kernel_efficiency": (0.01, 1.0),
    "core_types.cortex-a57.gemm2.parallel_efficiency.1": (0.05, 1.0),
}
CALIBRATION_FIXED_GEMM2 = ("core_types.cortex-a57.gemm2.parallel_efficiency=[1.0, 1.0]",)


def cost_model(platform: Platform, geometry: GeometryCache | None = None) -> CostModel:
    """The cost model of the reproduction (:data:`COST_MODEL`) on ``platform`` (gemm2 may share a
    ``geometry`` cache with the other models of a fit)."""
    if COST_MODEL not in COST_MODELS:
        raise HetsimError(f"cost model {COST_MODEL!r}: allowed: {', '.join(COST_MODELS)}")
    if COST_MODEL == "gemm2":
        return Gemm2CostModel(platform, geometry=geometry)
    return make_cost_model(platform, model=COST_MODEL)


def _evaluate(platform: Platform, obs: Observation, geometry: GeometryCache | None = None) -> float:
    """Throughput of an observation's pipeline with the reproduction's cost model (analytic)."""
    workload = load_workload(obs.workload)
    cost = cost_model(platform, geometry)
    pipe = load_mapping(obs.mapping, platform, workload, cost)
    assert isinstance(pipe, Pipeline)
    return evaluate_pipeline(platform, workload, pipe, cost).throughput_fps
#: Candidate extra parameters tried by the full calibration experiment (docs/papers/pipesearch.md).
EXTRA_CANDIDATES = (
    ("inter-cluster latency", "links.ccplex.latency_ns", (1.0, 1e10)),
    ("inter-cluster bandwidth", "links.ccplex.bandwidth_GBps", (1e-3, 100.0)),
    ("A57 per-op overhead (XiTAO task)", "core_types.cortex-a57.roofline.op_overhead_us", (1e-3, 1e6)),
    ("A57 per-core bandwidth (memory-bound FC)", "core_types.cortex-a57.bandwidth_GBps_per_core", (0.05, 60.0)),
)


def split_text(split) -> str:
    """``(6, 5, 10)`` -> ``[6,5,10]``, the papers' notation."""
    return "[" + ",".join(str(int(n)) for n in split) + "]"


def table6_observations() -> list[Observation]:
    """The stated inputs of the fit: Table 6's throughput of each governor's optimum, mapped with
    Paper I's core rule on 4 cores (2 stages D2|A2, 3 stages D2|A1|A1)."""
    rule = core_groups(load_platform(PLATFORM), cores=4)
    return [Observation("vgg16", str(Configuration(split, rule(len(split)))), fps, dvfs=g,
                        label=f"{GOV_LABEL[g]} {split_text(split)}")
            for g, (split, _rank, fps) in TABLE6.items()]


def fit(parameters: dict, fixed=None) -> Fit:
    """Fit ``parameters`` (dotted path -> bounds) to Table 6, with ``fixed`` overrides applied first
    (default: the reproduction's cost model's own, and :data:`COST_MODEL_EXTRA`)."""
    if fixed is None:
        fixed = (*(CALIBRATION_FIXED_GEMM2 if COST_MODEL == "gemm2" else CALIBRATION_FIXED), *COST_MODEL_EXTRA)
    # One gemm2 geometry cache per fit: its platforms differ only in the fitted values, and the cache
    # key holds everything an op's geometry reads, so only the rates' arithmetic is redone.
    geometry = GeometryCache()
    return fit_platform(PLATFORM, table6_observations(), parameters, fixed_overrides=list(fixed),
                        evaluator=lambda platform, obs: _evaluate(platform, obs, geometry))


def calibration_parameters() -> dict:
    """What :func:`calibration_fit` fits, in the reproduction's cost model's block."""
    return CALIBRATION_PARAMETERS_GEMM2 if COST_MODEL == "gemm2" else CALIBRATION_PARAMETERS


@lru_cache(maxsize=1)
def calibration_fit() -> Fit:
    """The TX2 fitted to Table 6 (deterministic: scipy least squares from a fixed start)."""
    return fit(calibration_parameters())


@lru_cache(maxsize=8)
def calibrated_tx2(governor: str = "governor1") -> Platform:
    """The fitted Jetson TX2 under one of Paper I's governor settings (Table 1)."""
    return calibration_fit().platform(governor)
