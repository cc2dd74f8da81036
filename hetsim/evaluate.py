"""``evaluate(mapping) -> Metrics``: one entry point over both engines and both mapping forms.

    >>> platform = load_platform("hikey970"); workload = load_workload("resnet50")
    >>> pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    >>> evaluate(platform, workload, pipe, engine="des", frames=50).throughput_fps
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from hetsim import analytic
from hetsim.cost import CostModel, DvfsState, RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.mapping import Pipeline, Placement
from hetsim.metrics import Metrics
from hetsim.sim.dag import simulate_placement
from hetsim.sim.pipeline import simulate_pipeline
from hetsim.sim.source import FrameSource
from hetsim.sim.trace import Interval, intervals_of

Engine = Literal["analytic", "des"]


@dataclass
class Result:
    metrics: Metrics
    intervals: list[Interval] = field(default_factory=list)


def simulate(platform, workload, mapping: Pipeline | Placement, *, engine: Engine = "des",
             cost: CostModel | None = None, frames: int | None = None, state: DvfsState | None = None,
             contention: bool = True, source: FrameSource | None = None, buffer_frames: int = 1,
             noise_sigma: float = 0.0, seed: int = 0, warmup_fraction: float = 0.1) -> Result:
    """Evaluate ``mapping`` and keep the per-frame intervals (for traces and Gantt charts)."""
    cost = cost or RooflineCostModel(platform)
    if frames is None:
        frames = 100 if isinstance(mapping, Pipeline) else 1
    if frames < 1:
        raise HetsimError(f"frames must be at least 1 (got {frames})")
    if buffer_frames < 1:
        raise HetsimError(f"buffer must hold at least 1 frame (got {buffer_frames})")
    if noise_sigma < 0:
        raise HetsimError(f"noise sigma must be >= 0 (got {noise_sigma})")
    if engine == "analytic":
        if isinstance(mapping, Pipeline):
            interval = source.interval_s if source and source.kind != "saturated" else None
            m = analytic.evaluate_pipeline(platform, workload, mapping, cost, frames, state, interval,
                                           buffer_frames)
        else:
            m = analytic.evaluate_placement(platform, workload, mapping, cost, frames, state)
        return Result(m)
    if engine != "des":
        raise HetsimError(f"engine {engine!r}: allowed: analytic, des")
    if isinstance(mapping, Pipeline):
        m, run = simulate_pipeline(platform, workload, mapping, cost, frames, state, contention, source,
                                   buffer_frames, noise_sigma, seed, warmup_fraction)
    else:
        m, run = simulate_placement(platform, workload, mapping, cost, frames, state, contention,
                                    buffer_frames, noise_sigma, seed, warmup_fraction)
    return Result(m, intervals_of(run))


def evaluate(platform, workload, mapping: Pipeline | Placement, **kwargs) -> Metrics:
    """The metrics of ``mapping`` (see :func:`simulate` for the options; engine defaults to analytic)."""
    kwargs.setdefault("engine", "analytic")
    return simulate(platform, workload, mapping, **kwargs).metrics
