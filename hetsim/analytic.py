"""Closed-form evaluation.

Pipelines (Pipe-it eqs. 9 and 11, Pipe-search/Shisha's T_s): the time of stage i is the sum of its
layers' times on its EP plus the transfer of every tensor that crosses the cut after it; throughput
is 1 / the slowest stage. A stage hands its output over before it takes the next frame (the sender
pays the transfer), so the transfer belongs to the stage time.

DAG placements: one inference by list scheduling: every EP runs its ops in the workload's
topological order, an op starting when its EP is free and its inputs have arrived.

:class:`SplitScorer` scores every contiguous k-stage split x every EP assignment at once with prefix
sums over the layer-time matrix, for explorers that need millions of candidates.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsim.cost import CostModel, DvfsState
from hetsim.errors import HetsimError
from hetsim.mapping import Pipeline, Placement, pipeline_from_split
from hetsim.metrics import Metrics, StageMetrics
from hetsim.platform import ExecutionPlace
from hetsim.power import energy_J
from hetsim.workload.splits import count_compositions


# -- pipelines ----------------------------------------------------------------------------------
def stage_costs(pipe: Pipeline, workload, cost: CostModel,
                state: DvfsState | None = None) -> tuple[list[float], list[float]]:
    """(compute_s, transfer_s) of every stage for one frame."""
    compute, transfer = [], []
    stages = pipe.stages
    for i, s in enumerate(stages):
        t = cost.layer_times(workload, s.ep, state)
        compute.append(float(t[s.first - 1:s.last].sum()))
        if i + 1 < len(stages):
            transfer.append(cost.transfer_time(workload.cut_bytes(s.last), s.ep, stages[i + 1].ep))
        else:
            transfer.append(0.0)
    return compute, transfer


def stage_peak_memory(pipe: Pipeline, workload, buffer_frames: int = 1) -> list[float]:
    """Weights of the stage's layers + its largest op working set (inputs, outputs, im2col) + the
    input buffer of ``buffer_frames`` frames."""
    out = []
    for s in pipe.stages:
        layers = workload.layers[s.first - 1:s.last]
        weights = sum(layer.weight_bytes for layer in layers)
        work = max(op.input_bytes + op.output_bytes + op.im2col_bytes for layer in layers for op in layer.ops)
        inbuf = workload.cut_bytes(s.first - 1) * buffer_frames if s.first > 1 else 0
        out.append(float(weights + work + inbuf))
    return out


def evaluate_pipeline(platform, workload, pipe: Pipeline, cost: CostModel, frames: int = 100,
                      state: DvfsState | None = None, arrival_interval_s: float | None = None,
                      buffer_frames: int = 1) -> Metrics:
    compute, transfer = stage_costs(pipe, workload, cost, state)
    times = [c + x for c, x in zip(compute, transfer, strict=True)]
    bottleneck = max(times)
    period = max(bottleneck, arrival_interval_s or 0.0)
    latency = sum(times)
    makespan = latency + (frames - 1) * period
    mem = stage_peak_memory(pipe, workload, buffer_frames)
    stages = [
        StageMetrics(ep=s.ep.name, layers=(s.first, s.last), time_s=t, compute_s=c, transfer_s=x,
                     utilization=t / period if period > 0 else 0.0, busy_s=t * frames,
                     peak_memory_bytes=m)
        for s, t, c, x, m in zip(pipe.stages, times, compute, transfer, mem, strict=True)
    ]
    busy = {s.ep: t * frames for s, t in zip(pipe.stages, times, strict=True)}
    link_bytes: dict[str, float] = {}
    for i, s in enumerate(pipe.stages[:-1]):
        route = platform.route(s.ep, pipe.stages[i + 1].ep)
        for name in route.links:
            link_bytes[name] = link_bytes.get(name, 0.0) + workload.cut_bytes(s.last) * frames
    return Metrics(
        engine="analytic", platform=platform.name, workload=workload.name, mapping=str(pipe),
        throughput_fps=1.0 / period if period > 0 else math.inf,
        latency_s={"mean": latency, "p50": latency, "p99": latency},
        stages=stages, ep_busy_s={ep.name: b for ep, b in busy.items()}, frames=frames,
        makespan_s=makespan, stream_throughput_fps=frames / makespan if makespan > 0 else math.inf,
        energy_J=energy_J(platform, busy, makespan, link_bytes, state),
        bottleneck=int(np.argmax(times)),
    )


# -- DAG placements -----------------------------------------------------------------------------
def placement_schedule(workload, placement: Placement, cost: CostModel,
                       state: DvfsState | None = None) -> dict[str, tuple[float, float]]:
    """(start, finish) of every op of one inference under list scheduling."""
    free: dict[str, float] = {}
    finish: dict[str, float] = {}
    times: dict[str, tuple[float, float]] = {}
    g = workload.graph
    for op in workload.ops:
        ep = placement.ep_of[op.name]
        ready = 0.0
        for pred in g.predecessors(op.name):
            arrive = finish[pred]
            src = placement.ep_of[pred]
            if src.name != ep.name:
                arrive += cost.transfer_time(g.nodes[pred]["op"].output_bytes, src, ep)
            ready = max(ready, arrive)
        start = max(ready, free.get(ep.name, 0.0))
        end = start + cost.op_time(op, ep, state)
        free[ep.name] = end
        finish[op.name] = end
        times[op.name] = (start, end)
    return times


def evaluate_placement(platform, workload, placement: Placement, cost: CostModel,
                       frames: int = 1, state: DvfsState | None = None) -> Metrics:
    sched = placement_schedule(workload, placement, cost, state)
    latency = max(end for _, end in sched.values())
    load: dict[ExecutionPlace, float] = {}
    for op in workload.ops:
        ep = placement.ep_of[op.name]
        load[ep] = load.get(ep, 0.0) + cost.op_time(op, ep, state)
    # Stream bound: the busiest EP; a steady state can reach it only when transfers overlap.
    period = max(load.values())
    makespan = latency + (frames - 1) * period
    busy = {ep: t * frames for ep, t in load.items()}
    return Metrics(
        engine="analytic", platform=platform.name, workload=workload.name, mapping=str(placement),
        throughput_fps=1.0 / period, latency_s={"mean": latency, "p50": latency, "p99": latency},
        ep_busy_s={ep.name: b for ep, b in busy.items()}, frames=frames, makespan_s=makespan,
        stream_throughput_fps=frames / makespan, energy_J=energy_J(platform, busy, makespan, None, state),
    )


# -- vectorised scoring of all splits -----------------------------------------------------------
def split_boundaries(n_layers: int, k: int) -> np.ndarray:
    """Every k-stage split as boundaries [0, c1, ..., c_{k-1}, n] (rows in lexicographic order of
    the cut points)."""
    cuts = np.array(list(itertools.combinations(range(1, n_layers), k - 1)), dtype=np.int64)
    cuts = cuts.reshape(-1, k - 1)
    n = cuts.shape[0]
    return np.hstack([np.zeros((n, 1), np.int64), cuts, np.full((n, 1), n_layers, np.int64)])


@dataclass
class ScoredSplits:
    boundaries: np.ndarray        # (n_splits, k+1)
    orders: list[tuple[int, ...]]  # EP indices per stage, one tuple per assignment
    eps: list[ExecutionPlace]
    throughput: np.ndarray        # (n_splits, n_orders), frames/s

    @property
    def count(self) -> int:
        return self.throughput.size

    def best(self) -> tuple[Pipeline, float]:
        i, j = np.unravel_index(int(np.argmax(self.throughput)), self.throughput.shape)
        b = self.boundaries[i]
        split = [int(b[s + 1] - b[s]) for s in range(len(b) - 1)]
        return pipeline_from_split(split, [self.eps[e] for e in self.orders[j]]), float(self.throughput[i, j])


class SplitScorer:
    """Scores pipelines of ``workload`` over the candidate ``eps`` in closed form, vectorised.

    Stage time = P[last, e] - P[first-1, e] + transfer(cut bytes after last, e -> next EP), with P
    the prefix sums of the layer-time matrix: exactly :func:`evaluate_pipeline`'s bottleneck.
    """

    def __init__(self, platform, workload, cost: CostModel, eps: Sequence[ExecutionPlace],
                 state: DvfsState | None = None):
        self.platform, self.workload, self.cost = platform, workload, cost
        self.eps = list(eps)
        self.T = cost.time_matrix(workload, self.eps, state)
        self.prefix = np.vstack([np.zeros((1, len(self.eps))), np.cumsum(self.T, axis=0)])
        self.cut_bytes = np.asarray(workload.cut_bytes_array(), dtype=float)
        e = len(self.eps)
        self.latency = np.zeros((e, e))
        self.inv_bw = np.zeros((e, e))
        for a, b in itertools.product(range(e), range(e)):
            r = platform.route(self.eps[a], self.eps[b])
            if r.links:
                self.latency[a, b], self.inv_bw[a, b] = r.latency_s, 1.0 / r.bandwidth_Bps

    def default_orders(self, k: int) -> list[tuple[int, ...]]:
        """All ordered choices of k distinct EPs (the 24 orders of chiplet-c2's 4 EPs for k = 4)."""
        return list(itertools.permutations(range(len(self.eps)), k))

    def count(self, k: int, orders: Sequence[tuple[int, ...]] | None = None) -> int:
        n_orders = len(orders) if orders is not None else math.perm(len(self.eps), k)
        return count_compositions(self.workload.num_layers, k) * n_orders

    def score(self, k: int, orders: Sequence[tuple[int, ...]] | None = None,
              limit: int | None = 50_000_000, force: bool = False) -> ScoredSplits:
        total = self.count(k, orders)
        if limit is not None and total > limit and not force:
            raise HetsimError(f"design space of {total:,} pipelines ({self.workload.name}, {k} stages, "
                              f"{len(self.eps)} EPs) exceeds the limit of {limit:,}; narrow it or force it")
        orders = list(orders) if orders is not None else self.default_orders(k)
        bounds = split_boundaries(self.workload.num_layers, k)
        firsts, lasts = bounds[:, :-1], bounds[:, 1:]
        cut = self.cut_bytes[lasts[:, :-1]]             # bytes leaving stages 1..k-1
        has_bytes = cut > 0
        out = np.empty((bounds.shape[0], len(orders)))
        for j, order in enumerate(orders):
            o = np.asarray(order)
            stage = self.prefix[lasts, o] - self.prefix[firsts, o]
            if k > 1:
                lat = self.latency[o[:-1], o[1:]]
                inv = self.inv_bw[o[:-1], o[1:]]
                stage[:, :-1] += np.where(has_bytes, lat + cut * inv, 0.0)
            out[:, j] = 1.0 / stage.max(axis=1)
        return ScoredSplits(bounds, orders, self.eps, out)
