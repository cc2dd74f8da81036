"""Calibration of the Pipe-search reproduction: the Jetson TX2 fitted to Table 6 (code, from stated
inputs, never typed numbers).

:func:`calibration_fit` fits the TX2's Denver and A57 GEMM efficiencies and the A57 two-core
parallel efficiency to the four throughputs of Table 6, each measured on the configuration the
paper states, mapped with Paper I's core rule (:func:`hetsim.explore.core_groups`), by least squares
on log throughput (:func:`hetsim.calibrate.fit_platform`). Every other number is a prediction of the
fitted platform. docs/papers/pipesearch.md ("Calibration") explains each parameter.
"""

from __future__ import annotations

from functools import lru_cache

from hetsim.calibrate import Fit, Observation, fit_platform
from hetsim.experiments.pipesearch.paper import GOV_LABEL, TABLE6
from hetsim.explore import Configuration, core_groups
from hetsim.platform import Platform, load_platform

PLATFORM = "jetson-tx2"

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


def fit(parameters: dict, fixed=CALIBRATION_FIXED) -> Fit:
    """Fit ``parameters`` (dotted path -> bounds) to Table 6, with ``fixed`` overrides applied first."""
    return fit_platform(PLATFORM, table6_observations(), parameters, fixed_overrides=list(fixed))


@lru_cache(maxsize=1)
def calibration_fit() -> Fit:
    """The TX2 fitted to Table 6 (deterministic: scipy least squares from a fixed start)."""
    return fit(CALIBRATION_PARAMETERS)


@lru_cache(maxsize=8)
def calibrated_tx2(governor: str = "governor1") -> Platform:
    """The fitted Jetson TX2 under one of Paper I's governor settings (Table 1)."""
    return calibration_fit().platform(governor)
