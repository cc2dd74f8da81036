"""Discrete-event simulation of a DAG placement (op -> EP) with SimPy.

Every EP is one process that runs its ops in the workload's topological order, frame after frame;
an op waits until its inputs have arrived (a transfer between EPs takes its route's time, without
holding either EP). With one frame this is the latency of one inference and, without contention,
equals the analytic list schedule exactly. With several frames it is a stream in which at most
``max_in_flight`` frames are inside the platform at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import simpy

from hetsim.cost import CostModel, DvfsState
from hetsim.mapping import Placement
from hetsim.metrics import Metrics
from hetsim.power import energy_J
from hetsim.sim.bandwidth import BandwidthServer
from hetsim.sim.source import steady_state_window


@dataclass
class DagRun:
    intervals: list[tuple[str, str, int, float, float]]  # (EP, op, frame, start, end)
    arrival: np.ndarray
    done: np.ndarray


def simulate_placement(platform, workload, placement: Placement, cost: CostModel, frames: int = 1,
                       state: DvfsState | None = None, contention: bool = True,
                       max_in_flight: int = 1, noise_sigma: float = 0.0, seed: int = 0,
                       warmup_fraction: float = 0.1) -> tuple[Metrics, DagRun]:
    env = simpy.Environment()
    rng = np.random.default_rng(seed)
    g = workload.graph
    ops = workload.ops
    ep_of = placement.ep_of
    eps = list(placement.eps)
    demand = {op.name: cost.op_demand(op, ep_of[op.name], state) for op in ops}
    noise = (rng.lognormal(-0.5 * noise_sigma**2, noise_sigma, size=(frames, len(ops)))
             if noise_sigma > 0 else None)
    index = {op.name: i for i, op in enumerate(ops)}
    sinks = [op.name for op in ops if g.out_degree(op.name) == 0]
    memories = {}
    links = {}
    if contention:
        for ep in eps:
            if ep.memory not in memories:
                memories[ep.memory] = BandwidthServer(env, platform.memory(ep.memory).bandwidth_GBps * 1e9)
        links = {lk.name: BandwidthServer(env, lk.bandwidth_GBps * 1e9) for lk in platform.links}

    finished = [{op.name: env.event() for op in ops} for _ in range(frames)]
    arrived = [{} for _ in range(frames)]   # (pred, consumer) -> event
    admitted = [env.event() for _ in range(frames)]
    arrival = np.zeros(frames)
    done = np.zeros(frames)
    intervals: list[tuple[str, str, int, float, float]] = []
    link_bytes: dict[str, float] = {}

    def move(f, pred, consumer, src, dst, nbytes):
        yield finished[f][pred]
        measured = cost.measured_transfer_s(nbytes, src, dst)
        route = platform.route(src, dst) if measured is None else None
        if measured is not None:  # a measured copy (ONNX Runtime's Memcpy): a plain delay
            yield env.timeout(measured)
        elif route is not None and route.links and nbytes > 0:
            for name in route.links:
                link_bytes[name] = link_bytes.get(name, 0.0) + nbytes
            if contention:
                yield env.timeout(route.latency_s)
                yield links[route.bottleneck].transfer(nbytes, route.bandwidth_Bps)
            else:
                yield env.timeout(route.time_s(nbytes))
        arrived[f][(pred, consumer)].succeed()

    for f in range(frames):
        for op in ops:
            for pred in g.predecessors(op.name):
                src, dst = ep_of[pred], ep_of[op.name]
                if src.name != dst.name:
                    arrived[f][(pred, op.name)] = env.event()
                    env.process(move(f, pred, op.name, src, dst, g.nodes[pred]["op"].output_bytes))

    def admit():
        for f in range(frames):
            if f >= max_in_flight:
                yield env.all_of([finished[f - max_in_flight][s] for s in sinks])
            arrival[f] = env.now
            admitted[f].succeed()

    def ep_proc(ep):
        mine = [op for op in ops if ep_of[op.name].name == ep.name]
        mem = memories.get(ep.memory)
        for f in range(frames):
            for op in mine:
                waits = [admitted[f]]
                for pred in g.predecessors(op.name):
                    waits.append(arrived[f].get((pred, op.name)) or finished[f][pred])
                yield env.all_of(waits)
                t0 = env.now
                d = demand[op.name]
                scale = noise[f, index[op.name]] if noise is not None else 1.0
                if mem is None or d.bytes_ <= 0:
                    yield env.timeout(d.time_s * scale)
                else:
                    if d.fixed_s > 0:
                        yield env.timeout(d.fixed_s * scale)
                    if d.busy_s > 0:
                        yield mem.transfer(d.bytes_, d.bytes_ / d.busy_s / scale)
                intervals.append((ep.name, op.name, f, t0, env.now))
                finished[f][op.name].succeed()

    def record_done(f):
        yield env.all_of([finished[f][s] for s in sinks])
        done[f] = env.now

    env.process(admit())
    for ep in eps:
        env.process(ep_proc(ep))
    for f in range(frames):
        env.process(record_done(f))
    env.run()

    makespan = float(done.max())
    lo, hi = steady_state_window(done, 1, warmup_fraction)
    if frames > 1 and hi > lo and done[hi] > done[lo]:
        throughput = (hi - lo) / (done[hi] - done[lo])
    else:
        throughput = frames / makespan if makespan > 0 else math.inf
    latency = done - arrival
    busy = {}
    for ep in eps:
        busy[ep] = sum(e - s for name, _, _, s, e in intervals if name == ep.name)
    metrics = Metrics(
        engine="des", platform=platform.name, workload=workload.name, mapping=str(placement),
        throughput_fps=float(throughput),
        latency_s={"mean": float(latency.mean()), "p50": float(np.percentile(latency, 50)),
                   "p99": float(np.percentile(latency, 99))},
        ep_busy_s={ep.name: float(b) for ep, b in busy.items()}, frames=frames, makespan_s=makespan,
        stream_throughput_fps=frames / makespan if makespan > 0 else math.inf,
        energy_J=energy_J(platform, busy, makespan, link_bytes, state), contention=contention, seed=seed,
    )
    return metrics, DagRun(intervals, arrival, done)
