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

import networkx as nx
import numpy as np
import simpy

from hetsim.collector import gc_paused
from hetsim.metrics import (
    Metrics,
    add_bytes,
    busy_summary,
    coherent_time_arrays,
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
    """The start and end of every task of every frame. Without contention every task's duration
    is known before the run, and the closed form in task order (:func:`run_dag_closed_form`) gives
    SimPy's arrays bit for bit, much faster; ``options.fast=False`` runs SimPy anyway."""
    frames, in_flight = options.frames, options.in_flight
    assert frames is not None and in_flight is not None, "options not resolved"
    rng = np.random.default_rng(options.seed)
    tasks = tg.tasks
    n = len(tasks)
    noise = lognormal_factors(rng, options.noise_sigma, (frames, n))
    with gc_paused():
        if options.fast and not options.contention:
            order = task_order(tg)
            if order is not None:
                return run_dag_closed_form(tg, order, frames, in_flight, noise, progress)
        return _run_simpy(platform, tg, options, noise, progress)


def _run_simpy(platform, tg: TaskGraph, options: RunOptions, noise, progress) -> DagRun:
    frames, in_flight = options.frames, options.in_flight
    assert frames is not None and in_flight is not None
    n = len(tg.tasks)
    env = simpy.Environment()
    memories, network = _servers(env, platform, tg.tasks, options.contention)
    start, end = np.zeros((frames, n)), np.zeros((frames, n))
    arrival, done = np.zeros(frames), np.zeros(frames)
    events = _FrameEvents(env, tg)
    execute = _executor(env, noise, memories, network, start, end, events)
    _processes(env, tg, frames, in_flight, execute, events, arrival, done, progress)
    env.run()
    return DagRun(tg, start, end, arrival, done)


class _FrameEvents:
    """Each frame's events (its admission, every task's completion, the lanes an MPI transfer
    has reached), made when a process first asks for them and dropped once the frame is done and
    the frame ``in_flight`` after it admitted: the run holds the events of the frames inside the
    platform, not of every frame (making an event schedules nothing, so when it is made does not
    change the run)."""

    def __init__(self, env: simpy.Environment, tg: TaskGraph):
        self.env = env
        self.n = len(tg.tasks)
        self.also = {t.index: len(t.also) for t in tg.tasks if t.also}
        self.frames: dict[int, tuple[simpy.Event, list[simpy.Event], dict[int, list[simpy.Event]]]] = {}
        self.floor = 0      # the frames below are dropped

    def __call__(self, f: int) -> tuple[simpy.Event, list[simpy.Event], dict[int, list[simpy.Event]]]:
        """(admitted, finished per task, reached per MPI task and other lane) of frame ``f``."""
        got = self.frames.get(f)
        if got is None:
            # every task of a frame leads to one of its sinks, so once they are done every lane
            # has taken its events: nobody asks for a dropped frame's
            assert f >= self.floor, f"frame {f}'s events asked for after it was dropped"
            event = self.env.event
            got = self.frames[f] = (event(), [event() for _ in range(self.n)],
                                    {i: [event() for _ in range(k)] for i, k in self.also.items()})
        return got

    def drop(self, f: int) -> None:
        self.frames.pop(f, None)
        self.floor = max(self.floor, f + 1)


def task_order(tg: TaskGraph) -> list[int] | None:
    """An order of one frame's tasks in which every task comes after its dependencies and after
    the task before it in each of its lanes (the task indices themselves, as a rule); None when
    the lanes' orders and the dependencies form a cycle (the plan deadlocks)."""
    n = len(tg.tasks)
    if all(d < t.index for t in tg.tasks for d in t.deps) and all(
            a < b for order in tg.lanes.values() for a, b in zip(order, order[1:], strict=False)):
        return list(range(n))
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((d, t.index) for t in tg.tasks for d in t.deps)
    for order in tg.lanes.values():
        graph.add_edges_from(zip(order, order[1:], strict=False))
    try:
        return list(nx.lexicographical_topological_sort(graph))
    except nx.NetworkXUnfeasible:
        return None


def run_dag_closed_form(tg: TaskGraph, order: list[int], frames: int, in_flight: int,
                        noise: np.ndarray | None, progress=None) -> DagRun:
    """The SimPy run of :func:`run_dag` without contention, in closed form: frame after frame,
    each task in ``order`` (:func:`task_order`) starts at the latest of its frame's admission, its
    dependencies' ends and the end of the task before it in each of its lanes, and ends its
    duration later (a compute task's time x its noise factor, a transfer's time); frame f is
    admitted when frame f - ``in_flight`` is done. The same float operations as SimPy's (a max of
    event times, then ``now + delay``), so the same arrays bit for bit."""
    tasks = tg.tasks
    n = len(tasks)
    start, end = np.zeros((frames, n)), np.zeros((frames, n))
    arrival, done = np.zeros(frames), np.zeros(frames)
    plain = [(t.demand.time_s if t.demand is not None else None) if t.kind == "compute" else t.transfer_s
             for t in tasks]
    deps = [t.deps for t in tasks]
    lanes = [t.lanes for t in tasks]
    compute = [t.kind == "compute" and t.demand is not None for t in tasks]
    sinks = list(tg.sinks)
    lane_free: dict[str, float] = {lane: 0.0 for lane in tg.lanes}
    step = max(1, frames // 200)
    admitted = 0.0
    for f in range(frames):
        if f >= in_flight:
            admitted = max([admitted] + [float(end[f - in_flight, s]) for s in sinks])
        arrival[f] = admitted
        scale = noise[f].tolist() if noise is not None else None
        s_f: list[float] = [0.0] * n
        e_f: list[float] = [0.0] * n
        for i in order:
            t0 = admitted
            for d in deps[i]:
                if e_f[d] > t0:
                    t0 = e_f[d]
            held = lanes[i]
            for lane in held:
                if lane_free[lane] > t0:
                    t0 = lane_free[lane]
            d_s = plain[i]
            if d_s is None:
                t1 = t0                     # no cost: it ends as it starts
            elif compute[i]:
                t1 = t0 + d_s * (scale[i] if scale is not None else 1.0)
            else:
                t1 = t0 + d_s
            s_f[i] = t0
            e_f[i] = t1
            for lane in held:
                lane_free[lane] = t1
        start[f] = s_f
        end[f] = e_f
        done[f] = max([e_f[s] for s in sinks], default=0.0)
        if progress is not None and ((f + 1) % step == 0 or f + 1 == frames):
            progress(f + 1)
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
              start: np.ndarray, end: np.ndarray, events: _FrameEvents):
    """``execute(t, f, finished)``: task t of frame f, recorded in start/end, then ``finished``
    (the frame's completion events) told; a closure over the run's state (built once per run, so
    a task's execution looks up nothing more than before)."""

    def execute(t: Task, f: int, finished: list[simpy.Event]):
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
        finished[t.index].succeed()

    return execute


def _pending(waits: list[simpy.Event]) -> list[simpy.Event]:
    """The events of ``waits`` not processed yet: a process waits for those only (a condition
    over events that are all done is an event of its own, ~40 % of a run)."""
    return [ev for ev in waits if ev.callbacks is not None]


def _processes(env, tg: TaskGraph, frames: int, in_flight: int, execute, events: _FrameEvents,
               arrival: np.ndarray, done: np.ndarray, progress) -> None:
    """The run's SimPy processes: admission (at most ``in_flight`` frames inside; it starts each
    admitted frame's lane-less tasks and the process recording when the frame is done), one per
    lane."""
    tasks = tg.tasks
    sinks = tg.sinks
    step = max(1, frames // 200)

    def lane_proc(lane: str, order: list[int]):
        for f in range(frames):
            admitted, finished, reached = events(f)
            for i in order:
                t = tasks[i]
                if t.also and lane != t.lane:   # another lane of an MPI transfer: wait for it
                    reached[i][t.also.index(lane)].succeed()
                    yield finished[i]
                    continue
                waits = _pending([admitted] + [finished[d] for d in t.deps] + (reached[i] if t.also else []))
                if waits:
                    yield env.all_of(waits)
                yield from execute(t, f, finished)

    def free_task(t: Task, f: int):
        _, finished, _ = events(f)
        waits = _pending([finished[d] for d in t.deps])
        if waits:
            yield env.all_of(waits)
        yield from execute(t, f, finished)

    def admit():
        for f in range(frames):
            if f >= in_flight:
                _, finished, _ = events(f - in_flight)
                waits = _pending([finished[s] for s in sinks])
                if waits:
                    yield env.all_of(waits)
                events.drop(f - in_flight)      # done, and nothing waits for it any more
            arrival[f] = env.now
            admitted, finished, _ = events(f)
            admitted.succeed()
            for t in free:
                env.process(free_task(t, f))
            env.process(record_done(f, [finished[s] for s in sinks]))

    def record_done(f: int, sink_events: list[simpy.Event]):
        waits = _pending(sink_events)
        if waits:
            yield env.all_of(waits)
        done[f] = env.now
        if progress is not None and ((f + 1) % step == 0 or f + 1 == frames):
            progress(f + 1)   # a plain call, no event: the bar does not change the run

    free = [t for t in tasks if t.lane is None]
    env.process(admit())
    for lane, order in tg.lanes.items():
        env.process(lane_proc(lane, order))


def dag_metrics(platform, workload, mapping, run: DagRun, options: RunOptions,
                engine: str = "des") -> Metrics:
    """Metrics of a recorded DAG run."""
    tg, frames = run.tasks, len(run.done)
    makespan = float(run.done.max())
    throughput, _, _ = steady_state(run.done, 1, options.warmup_fraction)
    # per task, over all frames; Python floats, read one task at a time below
    durations = (run.end - run.start).sum(axis=0).tolist()
    units = ep_units(tg, durations)
    by_ep, by_place = busy_summary(units)
    link_bytes: dict[str, float] = {}
    for t in tg.tasks:
        if t.kind == "transfer" and t.route is not None:
            add_bytes(link_bytes, t.route.links, t.nbytes * frames)
    # every frame's busy intervals per cluster, task by task as coherent_time_s would list them
    columns: dict[str, list[int]] = {}
    for t in tg.tasks:
        if t.ep is not None and t.ep.cluster:
            columns.setdefault(t.ep.cluster, []).append(t.index)
    coherent = coherent_time_arrays({c: (run.start[:, cols].T.ravel(), run.end[:, cols].T.ravel())
                                     for c, cols in columns.items()})
    return Metrics(
        engine=engine, platform=platform.name, workload=workload.name, mapping=str(mapping),
        throughput_fps=float(throughput), latency_s=latency_stats(run.done - run.arrival),
        ep_busy_s=by_ep, frames=frames, makespan_s=makespan,
        stream_throughput_fps=per_second(frames, makespan),
        energy_J=energy_J(platform, units, makespan, link_bytes, options.state, coherent),
        contention=options.contention, seed=options.seed, core_busy_s=by_place, coherent_s=coherent,
        link_bytes=link_bytes,
        ep_peak_memory_bytes=ep_peak_memory(tg, (run.start[0] - run.arrival[0]).tolist(),
                                            (run.end[0] - run.arrival[0]).tolist()),
        task_time_s={k: v / frames for k, v in task_time_s(tg, durations).items()},
    )
