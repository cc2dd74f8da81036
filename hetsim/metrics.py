"""What an evaluation returns, and the one set of functions every engine builds it with.

Both engines (analytic closed forms and the SimPy DES) and both mapping forms (pipelines and DAG
placements) describe a run the same way before it becomes :class:`Metrics`:

* frame completions and arrivals -> steady-state throughput (:func:`steady_state`), latency
  statistics (:func:`latency_stats`), makespan;
* *units of work*, each a set of cores or an accelerator with its busy time (a pipeline stage, or
  an EP of a placement) -> per-EP busy time, busy core-seconds per cluster and energy
  (:func:`busy_summary`, :func:`hetsim.power.energy_J`);
* bytes per link -> link energy.

Utilisation is defined in the steady state: a unit's mean service time per frame x the steady
throughput (docs/model.md, "Utilisation").
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from hetsim.platform import ExecutionPlace


@dataclass
class StageMetrics:
    ep: str
    layers: tuple[int, int]
    time_s: float          # service time of one frame: compute + outgoing transfer
    compute_s: float
    transfer_s: float
    utilization: float     # busy fraction in steady state: time_s x steady throughput
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
    ep_busy_s: dict[str, float] = field(default_factory=dict)    # by EP name, summed over units
    frames: int = 1
    makespan_s: float = 0.0
    stream_throughput_fps: float = 0.0     # frames / makespan, fill and drain included
    energy_J: float | None = None
    bottleneck: int | None = None          # index of the slowest stage (pipelines)
    contention: bool = False
    seed: int | None = None
    core_busy_s: dict[str, float] = field(default_factory=dict)  # busy core-seconds per cluster/accelerator
    coherent_s: float = 0.0                # time two clusters were busy at once
    link_bytes: dict[str, float] = field(default_factory=dict)   # bytes moved over each link
    ep_peak_memory_bytes: dict[str, float] = field(default_factory=dict)  # DAG mappings, per EP
    task_time_s: dict[str, float] = field(default_factory=dict)  # DAG mappings: compute / transfer s per frame
    #: Pipelines with an input stage (core_types[].input_stage): its EP and time per frame, layers
    #: (0, 0). On the first stage's EP it is part of that stage's time (its first part).
    input_stage: StageMetrics | None = None
    bound_by: str | None = None            # analytic pipelines: the shared memory or link whose fluid limit set the throughput

    def to_dict(self) -> dict:
        d = asdict(self)
        for s in d["stages"]:
            s["layers"] = list(s["layers"])
        if d["input_stage"] is None:
            del d["input_stage"]      # the model without one: the same keys as before
        else:
            d["input_stage"]["layers"] = list(d["input_stage"]["layers"])
        return clean_json(d)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)


def clean_json(x):
    """JSON has no inf/nan: map them to null (recursively)."""
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    if isinstance(x, dict):
        return {k: clean_json(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [clean_json(v) for v in x]
    return x


# -- frames ------------------------------------------------------------------------------------
def latency_stats(latency_s: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Mean, median and 99th percentile of per-frame latencies (s)."""
    if len(latency_s) == 1:   # one inference (a placement's trial): every statistic is its latency
        v = float(latency_s[0])
        return {"mean": v, "p50": v, "p99": v}
    lat = np.asarray(latency_s, dtype=float)
    return {"mean": float(lat.mean()), "p50": float(np.percentile(lat, 50)),
            "p99": float(np.percentile(lat, 99))}


def steady_state_window(done: np.ndarray, stages: int, warmup_fraction: float) -> tuple[int, int]:
    """Indices (lo, hi) of the completions that bound the steady state.

    With F >= 2 frames: skip the warm-up, the first ``warmup_fraction`` of the frames and at least
    one frame per stage while the pipeline fills (lo = max(stages, ceil(warmup x F))), up to the
    last frame (hi = F - 1). When that leaves fewer than two completions (F <= stages + 1), the
    window starts at the first completion instead (lo = 0). With one frame there is no window.
    """
    n = len(done)
    lo = max(stages, math.ceil(warmup_fraction * n))
    hi = n - 1
    if hi - lo < 1:
        lo = 0
    return lo, hi


def steady_state(done: np.ndarray, stages: int, warmup_fraction: float) -> tuple[float, int, int]:
    """(throughput, lo, hi): (hi - lo) frames over done[hi] - done[lo] in the window of
    :func:`steady_state_window`; frames / makespan when there is no window (one frame)."""
    lo, hi = steady_state_window(done, stages, warmup_fraction)
    if hi > lo and done[hi] > done[lo]:
        return float((hi - lo) / (done[hi] - done[lo])), lo, hi
    makespan = float(done.max()) if len(done) else 0.0
    return (len(done) / makespan if makespan > 0 else math.inf), 0, len(done) - 1


def per_second(count: float, seconds: float) -> float:
    return count / seconds if seconds > 0 else math.inf


# -- units of work ----------------------------------------------------------------------------
Unit = tuple[ExecutionPlace, float]   # (where, busy seconds): a stage, or an EP of a placement


def busy_summary(units: Iterable[Unit]) -> tuple[dict[str, float], dict[str, float]]:
    """(busy seconds by EP name, busy core-seconds by cluster or accelerator) of ``units``.

    Two stages on EPs of the same name (``s2`` twice: different cores of one cluster) are two
    units: their busy times add up, never overwrite each other."""
    by_ep: dict[str, float] = {}
    by_place: dict[str, float] = {}
    for ep, busy in units:
        by_ep[ep.name] = by_ep.get(ep.name, 0.0) + float(busy)
        by_place[ep.place] = by_place.get(ep.place, 0.0) + float(busy) * ep.cores
    return by_ep, by_place


def add_bytes(totals: dict[str, float], links: Iterable[str], nbytes: float) -> None:
    """Count ``nbytes`` on every link of a route."""
    for name in links:
        totals[name] = totals.get(name, 0.0) + float(nbytes)


def coherent_time_s(intervals: Iterable[tuple[ExecutionPlace, float, float]]) -> float:
    """Time during which cores of two or more clusters were busy at once (what
    ``power.coherence_W`` is paid over), from (EP, start, end) busy intervals."""
    per_cluster: dict[str, tuple[list[float], list[float]]] = {}
    for ep, start, end in intervals:
        if ep.cluster:
            starts, ends = per_cluster.setdefault(ep.cluster, ([], []))
            starts.append(start)
            ends.append(end)
    return coherent_time_arrays({c: (np.asarray(a, float), np.asarray(b, float))
                                 for c, (a, b) in per_cluster.items()})


def coherent_time_of_stages(eps: Sequence[ExecutionPlace], start: np.ndarray, end: np.ndarray) -> float:
    """:func:`coherent_time_s` of a pipeline run: stage i on ``eps[i]`` busy from start[i, f] to
    end[i, f] for every frame f (arrays of shape (stages, frames))."""
    per_cluster: dict[str, list[int]] = {}
    for i, ep in enumerate(eps):
        if ep.cluster:
            per_cluster.setdefault(ep.cluster, []).append(i)
    return coherent_time_arrays({c: (start[rows].ravel(), end[rows].ravel())
                                 for c, rows in per_cluster.items()})


def coherent_time_arrays(per_cluster: Mapping[str, tuple[np.ndarray, np.ndarray]]) -> float:
    """Time during which two or more clusters are busy, from each cluster's busy intervals as
    (starts, ends) arrays: each cluster's intervals are merged into their union, then one sweep
    over the unions' boundaries adds up the time at least two are open (vectorised)."""
    unions = [_union(s, e) for s, e in per_cluster.values() if len(s)]
    if len(unions) < 2:
        return 0.0
    t = np.concatenate([u[0] for u in unions] + [u[1] for u in unions])
    step = np.concatenate([np.ones(sum(len(u[0]) for u in unions))] + [-np.ones(len(u[1])) for u in unions])
    order = np.lexsort((step, t))          # at a tie, an end (-1) before a start (+1)
    t, active = t[order], np.cumsum(step[order])
    return float(np.diff(t)[active[:-1] >= 2].sum())


def _union(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The union of intervals as disjoint (starts, ends), empty intervals dropped."""
    keep = ends > starts
    starts, ends = starts[keep], ends[keep]
    if not len(starts):
        return starts, ends
    order = np.argsort(starts, kind="stable")
    s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    return s[first], np.maximum.reduceat(e, first)
