"""Discrete-event simulation of a pipeline mapping with SimPy.

One process per stage holds its EP (stages own disjoint cores, so the EP is exclusive to its
process), takes a frame from its bounded input queue, computes, hands the output tensors to the next
stage (the sender pays the transfer: Shisha Fig. 9's per-transfer latency lengthens the stage) and
puts the frame downstream, blocking while the next queue is full.

With contention on, each stage's roofline part is a fluid flow on its EP's memory (capped at the
stage's own bytes / uncontended time) and each transfer a flow on its route's narrowest link, so
stages that stream memory at the same time slow each other. With contention off every service time
is its closed form and the steady-state throughput equals the analytic evaluator's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import simpy

from hetsim.analytic import stage_costs, stage_peak_memory
from hetsim.cost import CostModel, Demand, DvfsState
from hetsim.mapping import Pipeline
from hetsim.metrics import Metrics, StageMetrics
from hetsim.power import energy_J
from hetsim.sim.bandwidth import BandwidthServer
from hetsim.sim.source import FrameSource, steady_state_window


@dataclass
class PipelineRun:
    """Raw record of a run: per stage and frame, when compute started and when the stage let go."""

    start: np.ndarray      # (stages, frames)
    compute_end: np.ndarray
    end: np.ndarray        # transfer done, frame handed downstream (or completed)
    arrival: np.ndarray    # (frames,) when each frame entered the system
    stage_names: list[str]


def simulate_pipeline(platform, workload, pipe: Pipeline, cost: CostModel, frames: int = 100,
                      state: DvfsState | None = None, contention: bool = True,
                      source: FrameSource | None = None, buffer_frames: int = 1,
                      noise_sigma: float = 0.0, seed: int = 0,
                      warmup_fraction: float = 0.1) -> tuple[Metrics, PipelineRun]:
    if frames < 1:
        raise ValueError("frames must be >= 1")
    source = source or FrameSource()
    rng = np.random.default_rng(seed)
    env = simpy.Environment()
    stages = pipe.stages
    k = len(stages)
    compute, transfer = stage_costs(pipe, workload, cost, state)
    # Seeded multiplicative lognormal measurement noise per stage execution (mean 1).
    if noise_sigma > 0:
        noise = rng.lognormal(-0.5 * noise_sigma**2, noise_sigma, size=(k, frames))
    else:
        noise = None

    demands: list[Demand] = []
    for s in stages:
        ds = cost.layer_demands(workload, s.ep, state)[s.first - 1:s.last]
        total = Demand(0.0, 0.0, 0.0)
        for d in ds:
            total = total + d
        demands.append(total)
    routes = [platform.route(s.ep, stages[i + 1].ep) if i + 1 < k else None for i, s in enumerate(stages)]
    cut = [workload.cut_bytes(s.last) if i + 1 < k else 0 for i, s in enumerate(stages)]

    memories: dict[str, BandwidthServer] = {}
    links: dict[str, BandwidthServer] = {}
    if contention:
        # Only a memory or link that two stages use can be contended (a stage runs one frame at a
        # time): give the others no server, and their stages the exact closed-form times.
        mem_users: dict[str, int] = {}
        for s in stages:
            mem_users[s.ep.memory] = mem_users.get(s.ep.memory, 0) + 1
        for name, users in mem_users.items():
            if users > 1:
                memories[name] = BandwidthServer(env, platform.memory(name).bandwidth_GBps * 1e9, name)
        link_users: dict[str, int] = {}
        for r in routes:
            if r is not None and r.links and r.bottleneck:
                link_users[r.bottleneck] = link_users.get(r.bottleneck, 0) + 1
        for lk in platform.links:
            if link_users.get(lk.name, 0) > 1:
                links[lk.name] = BandwidthServer(env, lk.bandwidth_GBps * 1e9, lk.name)

    queues = [simpy.Store(env, capacity=buffer_frames) for _ in range(k)]
    start = np.zeros((k, frames))
    compute_end = np.zeros((k, frames))
    end = np.zeros((k, frames))
    arrival = np.zeros(frames)

    def stage_proc(i: int):
        q_in = queues[i]
        q_out = queues[i + 1] if i + 1 < k else None
        d = demands[i]
        route = routes[i]
        mem = memories.get(stages[i].ep.memory)
        plain = compute[i]
        xfer = transfer[i]
        nbytes = cut[i]
        link = links.get(route.bottleneck) if (route is not None and route.links) else None
        if i + 1 < k and cost.measured_transfer_s(nbytes, stages[i].ep, stages[i + 1].ep) is not None:
            link = None  # a measured copy already contains its contention: a plain delay
        cap = d.bytes_ / d.busy_s if d.busy_s > 0 else math.inf
        row_start, row_cend, row_end = start[i], compute_end[i], end[i]
        timeout = env.timeout
        for f in range(frames):
            frame = yield q_in.get()
            row_start[f] = env.now
            scale = noise[i, f] if noise is not None else 1.0
            if mem is None:
                yield timeout(plain * scale)
            else:
                if d.fixed_s > 0:
                    yield timeout(d.fixed_s * scale)
                if d.bytes_ > 0 and d.busy_s > 0:
                    yield mem.transfer(d.bytes_, cap / scale)
                elif d.busy_s > 0:
                    yield timeout(d.busy_s * scale)
            row_cend[f] = env.now
            if xfer > 0:
                if link is None:
                    yield timeout(xfer)
                else:
                    yield timeout(route.latency_s)
                    yield link.transfer(nbytes, route.bandwidth_Bps)
            row_end[f] = env.now
            if q_out is not None:
                yield q_out.put(frame)

    env.process(source.process(env, queues[0], frames, arrival, rng))
    for i in range(k):
        env.process(stage_proc(i))
    env.run()

    run = PipelineRun(start, compute_end, end, arrival, [s.ep.name for s in stages])
    return _metrics(platform, workload, pipe, run, compute, transfer, state, contention, seed,
                    buffer_frames, warmup_fraction, links), run


def _metrics(platform, workload, pipe, run: PipelineRun, compute, transfer, state, contention, seed,
             buffer_frames, warmup_fraction, links) -> Metrics:
    k, frames = run.end.shape
    done = run.end[-1]
    makespan = float(done[-1])
    lo, hi = steady_state_window(done, k, warmup_fraction)
    if hi > lo:
        window = (float(done[lo]), float(done[hi]))
        throughput = (hi - lo) / (window[1] - window[0]) if window[1] > window[0] else math.inf
    else:
        window = (0.0, makespan)
        throughput = frames / makespan if makespan > 0 else math.inf
    latency = done - run.arrival
    busy_each = run.end - run.start
    busy_total = busy_each.sum(axis=1)
    span = window[1] - window[0]
    if span > 0:
        overlap = np.clip(np.minimum(run.end, window[1]) - np.maximum(run.start, window[0]), 0, None)
        util = overlap.sum(axis=1) / span
    else:
        util = busy_total / makespan if makespan > 0 else np.zeros(k)
    mem = stage_peak_memory(pipe, workload, buffer_frames)
    stages = []
    for i, s in enumerate(pipe.stages):
        stages.append(StageMetrics(
            ep=s.ep.name, layers=(s.first, s.last),
            time_s=float(busy_each[i].mean()),
            compute_s=float((run.compute_end[i] - run.start[i]).mean()),
            transfer_s=float((run.end[i] - run.compute_end[i]).mean()),
            utilization=float(min(util[i], 1.0)), busy_s=float(busy_total[i]), peak_memory_bytes=mem[i]))
    busy = {s.ep: float(busy_total[i]) for i, s in enumerate(pipe.stages)}
    link_bytes: dict[str, float] = {}
    for i, s in enumerate(pipe.stages[:-1]):
        for name in platform.route(s.ep, pipe.stages[i + 1].ep).links:
            link_bytes[name] = link_bytes.get(name, 0.0) + workload.cut_bytes(s.last) * frames
    return Metrics(
        engine="des", platform=platform.name, workload=workload.name, mapping=str(pipe),
        throughput_fps=float(throughput),
        latency_s={"mean": float(latency.mean()), "p50": float(np.percentile(latency, 50)),
                   "p99": float(np.percentile(latency, 99))},
        stages=stages, ep_busy_s={ep.name: b for ep, b in busy.items()}, frames=frames,
        makespan_s=makespan, stream_throughput_fps=frames / makespan if makespan > 0 else math.inf,
        energy_J=energy_J(platform, busy, makespan, link_bytes, state),
        bottleneck=int(np.argmax(busy_total)), contention=contention, seed=seed,
    )
