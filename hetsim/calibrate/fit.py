"""Fitting platform parameters to what a paper states.

A paper gives measured throughputs of named configurations (Pipe-search Table 6: VGG16 [6,5,10] at
1.22 frames/s under governor 1, ...). :func:`fit_platform` finds the platform parameters (any field
an override can address, e.g. ``core_types.denver2.roofline.gemm_efficiency``) that make the simulator
reproduce those observations, by least squares on log throughput (scipy), within bounds. The fit is
code, run by the reproduction itself, and its residuals are reported next to the claims: a
parameter is never typed in until a figure looks right.

    fit = fit_platform("jetson-tx2", [Observation("vgg16", "D2:1-9|A2:10-21", 0.21, dvfs="governor3")],
                       {"core_types.denver2.roofline.gemm_efficiency": (0.01, 1.0)})
    platform = fit.platform()
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.optimize import least_squares

from hetsim.analytic import evaluate_pipeline
from hetsim.cost import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.mapping import Pipeline, load_mapping
from hetsim.platform import Platform, load_platform
from hetsim.workload import load_workload


@dataclass(frozen=True)
class Observation:
    """A stated throughput: ``workload`` mapped as ``mapping`` ran at ``throughput_fps``."""

    workload: str
    mapping: str
    throughput_fps: float
    dvfs: str | None = None
    label: str = ""
    weight: float = 1.0


@dataclass
class Fit:
    platform_name: str
    values: dict[str, float]
    table: pd.DataFrame                 # one row per observation: stated, fitted, error
    fixed_overrides: list[str] = field(default_factory=list)
    cost: str = "roofline"

    @property
    def overrides(self) -> list[str]:
        return [*self.fixed_overrides, *(f"{k}={v!r}" for k, v in self.values.items())]

    def platform(self, dvfs: str | None = None, extra: Sequence[str] = ()) -> Platform:
        return load_platform(self.platform_name, [*self.overrides, *extra], dvfs)

    @property
    def rms_log_error(self) -> float:
        return float(np.sqrt(np.mean(np.log(self.table["fitted_fps"] / self.table["stated_fps"]) ** 2)))


Evaluator = Callable[[Platform, Observation], float]


def _analytic(platform: Platform, obs: Observation) -> float:
    workload = load_workload(obs.workload)
    cost = RooflineCostModel(platform)
    pipe = load_mapping(obs.mapping, platform, workload, cost)
    if not isinstance(pipe, Pipeline):
        raise HetsimError(f"observation {obs.mapping!r}: calibration fits pipelines, not placements")
    return evaluate_pipeline(platform, workload, pipe, cost).throughput_fps


def fit_overrides(platform_name: str, parameters: Mapping[str, tuple[float, float]],
                  predict: Callable[[Callable[[str | None], Platform]], np.ndarray], measured: np.ndarray,
                  weights: np.ndarray | None = None, x0: Mapping[str, float] | None = None,
                  fixed_overrides: Sequence[str] = (), log_scale: bool = True, loss: str = "linear",
                  ) -> tuple[dict[str, float], np.ndarray]:
    """The one least-squares fit of hetsim: the ``parameters`` (override key -> (low, high)) of
    platform ``platform_name`` that make ``predict(platform_for)`` match ``measured``.

    ``predict`` gets ``platform_for(dvfs)`` (the platform with the current values and
    ``fixed_overrides``, cached, in a DVFS preset or ``cluster=level,...``; None: as loaded) and
    returns one positive number per measured one (a time or a throughput). Residuals are
    ``sqrt(weight) x log(predicted / measured)``; with ``log_scale`` the parameters are searched on
    a log scale (rates and efficiencies span decades). ``loss``: scipy's (``soft_l1`` lets a row
    disturbed by another process weigh little). Returns the fitted values and the predictions.
    """
    keys = list(parameters)
    lo = np.array([parameters[k][0] for k in keys], dtype=float)
    hi = np.array([parameters[k][1] for k in keys], dtype=float)
    if np.any(lo <= 0) and log_scale:
        raise HetsimError("log-scale fits need positive lower bounds")
    start = np.array([(x0 or {}).get(k, np.sqrt(lo[i] * hi[i]) if log_scale else (lo[i] + hi[i]) / 2)
                      for i, k in enumerate(keys)], dtype=float)

    to_x = (lambda v: np.log(v)) if log_scale else (lambda v: v)
    from_x = (lambda x: np.exp(x)) if log_scale else (lambda x: x)
    cache: dict[tuple, Platform] = {}

    def platform_for_values(values: np.ndarray) -> Callable[[str | None], Platform]:
        def platform_for(dvfs: str | None) -> Platform:
            key = (tuple(np.round(values, 15)), dvfs)
            p = cache.get(key)
            if p is None:
                overrides = [*fixed_overrides, *(f"{k}={v!r}" for k, v in zip(keys, values.tolist(), strict=True))]
                p = cache[key] = load_platform(platform_name, overrides, dvfs)
            return p
        return platform_for

    w = np.sqrt(np.asarray(weights, dtype=float)) if weights is not None else np.ones(len(measured))
    measured = np.asarray(measured, dtype=float)

    def residuals(x: np.ndarray) -> np.ndarray:
        sim = np.asarray(predict(platform_for_values(from_x(x))), dtype=float)
        return w * np.log(sim / measured)

    result = least_squares(residuals, to_x(start), bounds=(to_x(lo), to_x(hi)), x_scale="jac", loss=loss)
    values = from_x(result.x)
    predicted = np.asarray(predict(platform_for_values(values)), dtype=float)
    return {k: float(v) for k, v in zip(keys, values, strict=True)}, predicted


def fit_platform(platform_name: str, observations: Sequence[Observation],
                 parameters: Mapping[str, tuple[float, float]], x0: Mapping[str, float] | None = None,
                 fixed_overrides: Sequence[str] = (), evaluator: Evaluator = _analytic,
                 log_scale: bool = True) -> Fit:
    """Least-squares fit of ``parameters`` (override key -> (low, high)) to ``observations``
    (:func:`fit_overrides` on their throughputs).

    Residuals are log(simulated / stated) throughput, weighted; with ``log_scale`` the parameters
    are searched on a log scale (they are rates and efficiencies spanning decades).
    """
    if not observations:
        raise HetsimError("a fit needs at least one observation")

    def predict(platform_for: Callable[[str | None], Platform]) -> np.ndarray:
        return np.array([evaluator(platform_for(o.dvfs), o) for o in observations])

    values, fitted = fit_overrides(
        platform_name, parameters, predict, np.array([o.throughput_fps for o in observations]),
        np.array([o.weight for o in observations], dtype=float), x0, fixed_overrides, log_scale)
    table = pd.DataFrame({
        "label": [o.label or f"{o.workload} {o.mapping}" for o in observations],
        "workload": [o.workload for o in observations],
        "mapping": [o.mapping for o in observations],
        "dvfs": [o.dvfs for o in observations],
        "stated_fps": [o.throughput_fps for o in observations],
        "fitted_fps": list(fitted),
    })
    table["error"] = table["fitted_fps"] / table["stated_fps"] - 1
    return Fit(platform_name, values, table, list(fixed_overrides))
