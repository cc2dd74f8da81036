"""Discrete-event simulation of a DAG mapping (placement, plan or split) with SimPy.

The mapping is first expanded into its task graph (:mod:`hetsim.tasks`); every lane (an EP, a
copy lane, or the one serial lane) is a SimPy process that runs its tasks in lane order, frame after
frame, each task once its dependencies are done; a task without a lane (a transfer by DMA) is a
process of its own. With one frame this is the latency of one inference and, without contention
and noise, equals :func:`~hetsim.tasks.list_schedule` exactly. With several frames at most
``in_flight`` frames are inside the platform at once.

With contention on, a compute task's roofline part is a fluid flow on its EP's memory and a
transfer a flow through every bandwidth server of its route at once (a plain link, or a switch's
send and receive ports), shared max-min fairly (:class:`~hetsim.sim.bandwidth.BandwidthResource`).
A transfer that holds two lanes (``comm="mpi"``) starts when both lanes have reached it.
"""

from __future__ import annotations

import numpy as np
import simpy

from hetsim.metrics import (
    Metrics,
    add_bytes,
    busy_summary,
    coherent_time_s,
    latency_stats,
    per_second,
    steady_state,
)
from hetsim.options import RunOptions
from hetsim.power import energy_J
from hetsim.sim.bandwidth import BandwidthResource
from hetsim.sim.noise import lognormal_factors
from hetsim.sim.runs import DagRun
from hetsim.tasks import Task, TaskGraph, ep_peak_memory, ep_units, task_time_s


def simulate_dag(platform, workload, mapping, tg: TaskGraph, options: RunOptions,
                 progress=None) -> tuple[Metrics, DagRun]:
    """Run the task graph ``tg`` of ``mapping`` in SimPy and summarise it. ``progress(frames_done)``,
    when given, is called as frames complete."""
    run = run_dag(platform, tg, options, progress)
    return dag_metrics(platform, workload, mapping, run, options), run


def run_dag(platform, tg: TaskGraph, options: RunOptions, progress=None) -> DagRun:
    frames, in_flight = options.frames, options.in_flight
    assert frames is not None and in_flight is not None, "options not resolved"
    env = simpy.Environment()
    rng = np.random.default_rng(options.seed)
    tasks = tg.tasks
    n = len(tasks)
    noise = lognormal_factors(rng, options.noise_sigma, (frames, n))
    memories, network = _servers(env, platform, tasks, options.contention)
    finished = [[env.event() for _ in range(n)] for _ in range(frames)]
    start, end = np.zeros((frames, n)), np.zeros((frames, n))
    arrival, done = np.zeros(frames), np.zeros(frames)
    execute = _executor(env, noise, memories, network, start, end, finished)
    _processes(env, tg, frames, in_flight, execute, finished, arrival, done, progress)
    env.run()
    return DagRun(tg, start, end, arrival, done)


def _servers(env, platform, tasks: list[Task], contention: bool
             ) -> tuple[dict[str, BandwidthResource], BandwidthResource | None]:
    """With contention on, a bandwidth resource per memory an EP task reads and one of every
    server on a (simulated, not measured) transfer's route; with it off, neither."""
    memories: dict[str, BandwidthResource] = {}
    network: BandwidthResource | None = None
    if contention:
        network = BandwidthResource(env)
        for t in tasks:
            if t.ep is not None and t.ep.memory not in memories:
                memories[t.ep.memory] = BandwidthResource.for_memory(env, platform.memory(t.ep.memory))
            if t.route is not None and not t.measured:
                for name, bw in t.route.servers:
                    network.add(name, bw)
    return memories, network


def _executor(env, noise, memories: dict[str, BandwidthResource], network: BandwidthResource | None,
              start: np.ndarray, end: np.ndarray, finished):
    """``execute(t, f)``: task t of frame f, recorded in start/end; a closure over the run's state
    (built once per run, so a task's execution looks up nothing more than before)."""

    def execute(t: Task, f: int):
        start[f, t.index] = env.now
        if t.kind == "compute":
            d = t.demand
            scale = noise[f, t.index] if noise is not None else 1.0
            mem = memories.get(t.ep.memory) if t.ep is not None else None
            if d is None:
                pass
            elif mem is None or d.bytes_ <= 0:
                yield env.timeout(d.time_s * scale)
            else:
                if d.fixed_s > 0:
                    yield env.timeout(d.fixed_s * scale)
                if d.busy_s > 0:
                    yield mem.transfer(d.bytes_, d.bytes_ / d.busy_s / scale)
        else:
            servers = (t.route.servers if network is not None and t.route is not None
                       and not t.measured else ())
            if not servers:
                yield env.timeout(t.transfer_s)
            else:
                assert network is not None and t.route is not None
                yield env.timeout(t.fixed_s)
                yield network.transfer(t.nbytes, t.route.bandwidth_Bps, via=[name for name, _ in servers])
        end[f, t.index] = env.now
        finished[f][t.index].succeed()

    return execute


def _processes(env, tg: TaskGraph, frames: int, in_flight: int, execute, finished, arrival: np.ndarray,
               done: np.ndarray, progress) -> None:
    """The run's SimPy processes: admission (at most ``in_flight`` frames inside), one per lane, one
    per lane-less task and frame, one per frame recording when it is done."""
    tasks = tg.tasks
    step = max(1, frames // 200)
    # A task holding several lanes (an MPI transfer) runs once every lane has reached it.
    reached = {t.index: [[env.event() for _ in t.also] for _ in range(frames)]
               for t in tasks if t.also}
    admitted = [env.event() for _ in range(frames)]

    def waits(t: Task, f: int):
        return [admitted[f]] + [finished[f][d] for d in t.deps]

    def lane_proc(lane: str, order: list[int]):
        for f in range(frames):
            for i in order:
                t = tasks[i]
                if t.also and lane != t.lane:   # another lane of an MPI transfer: wait for it
                    reached[i][f][t.also.index(lane)].succeed()
                    yield finished[f][i]
                    continue
                yield env.all_of(waits(t, f) + (reached[i][f] if t.also else []))
                yield from execute(t, f)

    def free_task(t: Task, f: int):
        yield env.all_of(waits(t, f))
        yield from execute(t, f)

    def admit():
        for f in range(frames):
            if f >= in_flight:
                yield env.all_of([finished[f - in_flight][s] for s in tg.sinks])
            arrival[f] = env.now
            admitted[f].succeed()

    def record_done(f: int):
        yield env.all_of([finished[f][s] for s in tg.sinks])
        done[f] = env.now
        if progress is not None and ((f + 1) % step == 0 or f + 1 == frames):
            progress(f + 1)   # a plain call, no event: the bar does not change the run

    env.process(admit())
    for lane, order in tg.lanes.items():
        env.process(lane_proc(lane, order))
    for t in tasks:
        if t.lane is None:
            for f in range(frames):
                env.process(free_task(t, f))
    for f in range(frames):
        env.process(record_done(f))


def dag_metrics(platform, workload, mapping, run: DagRun, options: RunOptions,
                engine: str = "des") -> Metrics:
    """Metrics of a recorded DAG run."""
    tg, frames = run.tasks, len(run.done)
    makespan = float(run.done.max())
    throughput, _, _ = steady_state(run.done, 1, options.warmup_fraction)
    durations = (run.end - run.start).sum(axis=0)          # per task, over all frames
    units = ep_units(tg, durations)
    by_ep, by_place = busy_summary(units)
    link_bytes: dict[str, float] = {}
    for t in tg.tasks:
        if t.kind == "transfer" and t.route is not None:
            add_bytes(link_bytes, t.route.links, t.nbytes * frames)
    coherent = coherent_time_s((t.ep, float(run.start[f, t.index]), float(run.end[f, t.index]))
                               for t in tg.tasks if t.ep is not None for f in range(frames))
    return Metrics(
        engine=engine, platform=platform.name, workload=workload.name, mapping=str(mapping),
        throughput_fps=float(throughput), latency_s=latency_stats(run.done - run.arrival),
        ep_busy_s=by_ep, frames=frames, makespan_s=makespan,
        stream_throughput_fps=per_second(frames, makespan),
        energy_J=energy_J(platform, units, makespan, link_bytes, options.state, coherent),
        contention=options.contention, seed=options.seed, core_busy_s=by_place, coherent_s=coherent,
        link_bytes=link_bytes,
        ep_peak_memory_bytes=ep_peak_memory(tg, run.start[0] - run.arrival[0], run.end[0] - run.arrival[0]),
        task_time_s={k: v / frames for k, v in task_time_s(tg, durations).items()},
    )
