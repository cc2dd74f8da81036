"""Discrete-event simulation of a pipeline mapping with SimPy.

One process per stage holds its EP (stages own disjoint cores, so the EP is exclusive to its
process), takes a frame from its bounded input queue, computes, hands the output tensors to the next
stage (the sender pays the transfer: Shisha Fig. 9's per-transfer latency lengthens the stage) and
puts the frame downstream, blocking while the next queue is full.

With contention on, each stage's roofline part is a fluid flow on its EP's memory (capped at the
stage's own bytes / uncontended time) and each transfer a flow on its route's narrowest link, so
stages that stream memory at the same time slow each other. With contention off every service time
is its closed form and the steady-state throughput equals the analytic evaluator's.

    run = run_pipeline(platform, workload, pipe, cost, RunOptions(frames=50).resolve(pipe))
    metrics = pipeline_metrics(platform, workload, pipe, run, options)
"""

from __future__ import annotations

import numpy as np
import simpy

from hetsim.cost import CostModel
from hetsim.mapping import Pipeline
from hetsim.metrics import (
    Metrics,
    StageMetrics,
    busy_summary,
    coherent_time_of_stages,
    latency_stats,
    per_second,
    steady_state,
)
from hetsim.options import RunOptions
from hetsim.power import energy_J
from hetsim.sim.bandwidth import BandwidthResource, FlowProfile, Server, never_throttled
from hetsim.sim.fluid import run_pipeline_fluid
from hetsim.sim.noise import lognormal_factors
from hetsim.sim.recurrence import run_pipeline_recurrence
from hetsim.sim.runs import PipelineRun
from hetsim.sim.source import FrameSource
from hetsim.tasks import pipeline_link_bytes, stage_costs, stage_demands, stage_peak_memory


def simulate_pipeline(platform, workload, pipe: Pipeline, cost: CostModel,
                      options: RunOptions, progress=None) -> tuple[Metrics, PipelineRun]:
    """Run ``pipe`` in SimPy and summarise it (``options`` resolved for the pipeline).
    ``progress(frames_done)``, when given, is called as the run advances."""
    run = run_pipeline(platform, workload, pipe, cost, options, progress)
    return pipeline_metrics(platform, workload, pipe, run, options), run


def run_pipeline(platform, workload, pipe: Pipeline, cost: CostModel, options: RunOptions,
                 progress=None) -> PipelineRun:
    """The frame times of ``pipe``. Where no memory or link is shared by two stages (or contention
    is off) every service time is its closed form and the max-plus recurrence
    (:mod:`hetsim.sim.recurrence`) gives SimPy's run to 1e-12, much faster. With per-op flows
    (``flows="op"``) and no shared link, the recurrence answers too where its schedule never asks
    a shared memory for more than it delivers (:func:`~hetsim.sim.bandwidth.never_throttled`),
    and the pipeline's own event loop (:mod:`hetsim.sim.fluid`) where it does, SimPy's run to
    1e-12 as well. ``options.fast=False`` runs SimPy anyway."""
    frames = options.frames
    assert frames is not None and options.buffer_frames is not None, "options not resolved"
    stages = pipe.stages
    k = len(stages)
    compute, transfer = stage_costs(pipe, workload, cost, options.state)
    routes = [platform.route(s.ep, stages[i + 1].ep) if i + 1 < k else None for i, s in enumerate(stages)]
    shared_mems, shared_links = shared_memories_and_links(platform, pipe, routes) if options.contention else ((), ())
    names = [s.ep.name for s in stages]
    if options.fast and not shared_mems and not shared_links:
        return run_pipeline_recurrence(compute, transfer, frames, options.buffer_frames,
                                       FrameSource.of(options), options.noise_sigma, options.seed,
                                       stage_names=names, progress=progress)
    demands = stage_demands(pipe, workload, cost, options.state, per_op=options.flows == "op")
    # flows="op": each stage execution is one profile flow of its ops' segments (precomputed once)
    op_profiles = [FlowProfile.from_demands(parts) for parts in demands] if options.flows == "op" else []
    profiles: list[FlowProfile | None] = list(op_profiles) or [None] * k
    if options.fast and options.flows == "op" and not shared_links:
        # Where the closed-form schedule never asks a shared memory for more than it delivers,
        # nobody is throttled and it is the contended run too (the max-plus path where contention
        # provably cannot bind).
        run = run_pipeline_recurrence(compute, transfer, frames, options.buffer_frames,
                                      FrameSource.of(options), options.noise_sigma, options.seed,
                                      stage_names=names)
        noise = lognormal_factors(np.random.default_rng(options.seed), options.noise_sigma, (k, frames))

        def fits(upto: int) -> bool:
            return all(never_throttled(
                Server.of_memory(platform.memory(name)),
                [op_profiles[i] for i, s in enumerate(stages) if s.ep.memory == name],
                [run.start[i, :upto] for i, s in enumerate(stages) if s.ep.memory == name],
                [noise[i, :upto] if noise is not None else None for i, s in enumerate(stages) if s.ep.memory == name])
                for name in shared_mems)

        # the first frames first: a contended run usually shows it there, at a fraction of the cost
        if fits(min(frames, 64)) and fits(frames):
            if progress is not None:
                progress(frames)
            return run
        # contended: the pipeline's own event loop, each shared memory's flows one solver's
        servers = [Server.of_memory(platform.memory(name)) for name in shared_mems]
        memory_of = [shared_mems.index(s.ep.memory) if s.ep.memory in shared_mems else None for s in stages]
        return run_pipeline_fluid(compute, transfer, frames, options.buffer_frames, servers, memory_of, op_profiles,
                                  FrameSource.of(options), options.noise_sigma, options.seed,
                                  stage_names=names, progress=progress)
    rng = np.random.default_rng(options.seed)
    env = simpy.Environment()
    # Seeded multiplicative noise per stage execution, drawn before the source's arrivals.
    noise = lognormal_factors(rng, options.noise_sigma, (k, frames))
    cut = [workload.cut_bytes(s.last) if i + 1 < k else 0 for i, s in enumerate(stages)]
    memories = {name: BandwidthResource.for_memory(env, platform.memory(name)) for name in shared_mems}
    links = {lk.name: BandwidthResource(env, lk.bandwidth_GBps * 1e9, lk.name)
             for lk in platform.links if lk.name in shared_links}

    queues = [simpy.Store(env, capacity=options.buffer_frames) for _ in range(k)]
    record = np.zeros((k, frames)), np.zeros((k, frames)), np.zeros((k, frames))   # start, compute_end, end
    arrival = np.zeros(frames)
    env.process(FrameSource.of(options).process(env, queues[0], frames, arrival, rng))
    for i in range(k):
        route = routes[i]
        mem = memories.get(stages[i].ep.memory)
        link = links.get(route.bottleneck) if (route is not None and route.links) else None
        if i + 1 < k and cost.measured_transfer_s(cut[i], stages[i].ep, stages[i + 1].ep) is not None:
            link = None  # a measured copy already contains its contention: a plain delay
        env.process(_stage_proc(env, i, frames, queues, compute[i], demands[i], profiles[i], mem,
                                transfer[i], route, link, cut[i], noise, record, progress))
    env.run()
    return PipelineRun(*record, arrival, names)


def _stage_proc(env, i: int, frames: int, queues, compute_s: float, parts, profile, mem, xfer_s: float,
                route, link, nbytes: int, noise, record, progress):
    """Stage i's SimPy process: a frame from its queue, compute (a plain delay, or its flows on a
    shared memory: the stage's one flow, or with ``profile`` its per-op flows as one profile flow
    that the server steps through, :meth:`BandwidthResource.run`), the transfer (a delay, or a flow
    on a shared link), the frame downstream. One generator per stage and run; its loop reads
    locals only."""
    start, compute_end, end = record
    q_in, q_out = queues[i], (queues[i + 1] if i + 1 < len(queues) else None)
    step = max(1, frames // 200)    # progress calls: ~200 over the run
    timeout = env.timeout
    for f in range(frames):
        frame = yield q_in.get()
        start[i, f] = env.now
        scale = noise[i, f] if noise is not None else 1.0
        if mem is None:
            yield timeout(compute_s * scale)
        elif profile is not None:
            yield mem.run(profile, scale)
        else:
            for d in parts:
                if d.fixed_s > 0:
                    yield timeout(d.fixed_s * scale)
                if d.bytes_ > 0 and d.busy_s > 0:
                    # capped at its own uncontended rate: a compute-bound op needs no more
                    yield mem.transfer(d.bytes_, d.bytes_ / d.busy_s / scale)
                elif d.busy_s > 0:
                    yield timeout(d.busy_s * scale)
        compute_end[i, f] = env.now
        if xfer_s > 0:
            if link is None:
                yield timeout(xfer_s)
            else:
                yield timeout(route.latency_s)
                yield link.transfer(nbytes, route.bandwidth_Bps)
        end[i, f] = env.now
        if q_out is not None:
            yield q_out.put(frame)
        elif progress is not None and ((f + 1) % step == 0 or f + 1 == frames):
            progress(f + 1)   # a plain call, no event: the bar does not change the run


def shared_memories_and_links(platform, pipe: Pipeline, routes) -> tuple[list[str], list[str]]:
    """The memories and links that two or more stages use: they get bandwidth resources. A stage
    runs one frame at a time, so a memory or link only it uses cannot be contended: it gets no
    resource and its stage the exact closed-form times."""
    mem_users: dict[str, int] = {}
    for s in pipe.stages:
        mem_users[s.ep.memory] = mem_users.get(s.ep.memory, 0) + 1
    link_users: dict[str, int] = {}
    for r in routes:
        if r is not None and r.links and r.bottleneck:
            link_users[r.bottleneck] = link_users.get(r.bottleneck, 0) + 1
    return ([name for name, users in mem_users.items() if users > 1],
            [lk.name for lk in platform.links if link_users.get(lk.name, 0) > 1])


def pipeline_metrics(platform, workload, pipe: Pipeline, run: PipelineRun, options: RunOptions,
                     engine: str = "des") -> Metrics:
    """Metrics of a recorded pipeline run (the DES's, or any schedule with the same arrays)."""
    k, frames = run.end.shape
    done = run.end[-1]
    makespan = float(done[-1])
    throughput, lo, hi = steady_state(done, k, options.warmup_fraction)
    busy_each = run.end - run.start
    busy_total = busy_each.sum(axis=1)
    if frames > 1:
        # Steady-state utilisation: mean service time in the window x steady throughput.
        util = busy_each[:, lo:hi + 1].mean(axis=1) * throughput
    else:
        util = busy_total / makespan if makespan > 0 else np.zeros(k)
    mem = stage_peak_memory(pipe, workload, options.buffer_frames or 1)
    stages = [StageMetrics(
        ep=s.ep.name, layers=(s.first, s.last), time_s=float(busy_each[i].mean()),
        compute_s=float((run.compute_end[i] - run.start[i]).mean()),
        transfer_s=float((run.end[i] - run.compute_end[i]).mean()),
        utilization=float(min(util[i], 1.0)), busy_s=float(busy_total[i]), peak_memory_bytes=mem[i])
        for i, s in enumerate(pipe.stages)]
    units = [(s.ep, float(busy_total[i])) for i, s in enumerate(pipe.stages)]
    by_ep, by_place = busy_summary(units)
    coherent = coherent_time_of_stages(pipe.eps, run.start, run.end)
    link_bytes = pipeline_link_bytes(platform, workload, pipe, frames)
    return Metrics(
        engine=engine, platform=platform.name, workload=workload.name, mapping=str(pipe),
        throughput_fps=float(throughput), latency_s=latency_stats(done - run.arrival),
        stages=stages, ep_busy_s=by_ep, frames=frames, makespan_s=makespan,
        stream_throughput_fps=per_second(frames, makespan),
        energy_J=energy_J(platform, units, makespan, link_bytes, options.state, coherent),
        bottleneck=int(np.argmax(busy_total)), contention=options.contention, seed=options.seed,
        core_busy_s=by_place, coherent_s=coherent, link_bytes=link_bytes,
    )
