"""What an evaluation returns: throughput, latency, per-stage and per-EP figures, energy."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field


@dataclass
class StageMetrics:
    ep: str
    layers: tuple[int, int]
    time_s: float          # service time of one frame: compute + outgoing transfer
    compute_s: float
    transfer_s: float
    utilization: float     # busy fraction in steady state
    busy_s: float = 0.0    # total busy time over the run
    peak_memory_bytes: float = 0.0


@dataclass
class Metrics:
    engine: str
    platform: str
    workload: str
    mapping: str
    throughput_fps: float                  # steady state, warm-up excluded
    latency_s: dict[str, float]            # mean, p50, p99
    stages: list[StageMetrics] = field(default_factory=list)
    ep_busy_s: dict[str, float] = field(default_factory=dict)
    frames: int = 1
    makespan_s: float = 0.0
    stream_throughput_fps: float = 0.0     # frames / makespan, fill and drain included
    energy_J: float | None = None
    bottleneck: int | None = None          # index of the slowest stage (pipelines)
    contention: bool = False
    seed: int | None = None

    def to_dict(self) -> dict:
        d = asdict(self)
        for s in d["stages"]:
            s["layers"] = list(s["layers"])
        return _clean(d)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)


def _clean(x):
    """JSON has no inf/nan: map them to null."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    return x
