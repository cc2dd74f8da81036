"""Counting a run's work before it starts, the way design spaces are counted before they are
enumerated: a run past :data:`MAX_EVENTS` is refused with its estimate unless forced.

The unit is a *SimPy event* (a timeout, a queue get or put, a fluid flow's start or end): what the
DES spends its time on. The other paths are counted in the same unit by what their work costs
here, measured (docs/robustness.md):

* the SimPy pipeline: per stage and frame, its queue get and put, a timeout (or a flow start and
  end on a contended memory) per piece of work, the hand-over (a delay, or a delay and a flow on a
  contended link);
* the max-plus fast path (:mod:`hetsim.sim.recurrence`), which answers every contention-free
  pipeline: numpy element operations over the recurrence's state (stages + 1) x (buffer + 1) per
  stage and frame, about :data:`NUMPY_ELEMENTS_PER_EVENT` of them per event, plus the per-frame
  metrics (numpy over every stage execution, ~:data:`STAGE_RUN_EVENTS` of an event each). A long
  contention-free run costs ~0.12 events per stage and frame against SimPy's 4-8 (measured): it
  is counted so, and may have ~50x more frames (the memory limit binds first);
* the analytic pipeline, which lays out the periodic schedule of every frame for the same metrics
  (~:data:`ANALYTIC_STAGE_RUN_EVENTS` events per stage and frame);
* the DAG engine: per task and frame, the wait for its inputs, the task's timeout or flow, its
  completion, plus admission and completion per frame; without contention its closed form in task
  order (:func:`hetsim.sim.dag.run_dag_closed_form`), ~:data:`DAG_CLOSED_FORM_TASK_EVENTS` of an
  event per task and frame. The analytic placement is closed-form: its work does not grow with
  the frames.

    >>> from hetsim.cost import RooflineCostModel
    >>> from hetsim.mapping import load_mapping
    >>> from hetsim.options import RunOptions
    >>> from hetsim.platform import load_platform
    >>> from hetsim.workload import load_workload
    >>> p, w = load_platform("hikey970"), load_workload("resnet50")
    >>> pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", p, w)
    >>> options = RunOptions.make(engine="des", frames=3_000_000).resolve(pipe)
    >>> est = estimate_pipeline(p, w, pipe, RooflineCostModel(p), options)
    >>> f"{est.events:.3g}", est.path
    ('6.09e+07', 'SimPy pipeline')
    >>> check(est, options)          # past MAX_EVENTS unless options.force
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: --frames 3,000,000: the run is estimated at 6.09e+07 events (SimPy pipeline: 3 stages x 3,000,000 frames x ~6.7 events), past the limit of 1e+07 (~6.8 min at 150,000 events/s); give fewer --frames, or --force (force=True) to run it anyway
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from hetsim.errors import HetsimError
from hetsim.loading import MAX_MEMORY_BYTES, duration_text

#: SimPy events per second on the machine the weights below were measured on (2 shared cores).
EVENTS_PER_S = 150_000
#: Runs estimated past this many events are refused without ``--force`` (``RunOptions.force``):
#: about a minute at :data:`EVENTS_PER_S`.
MAX_EVENTS = 10_000_000
#: Bytes a stage execution (or task run) holds until the metrics are made: its float64 times in
#: the run's arrays and the metrics' temporaries (measured: ~100 for the max-plus path, ~80 for the
#: analytic one; rounded up).
BYTES_PER_STAGE_RUN = 120
#: Runs estimated past this show a progress bar when the caller asks for one (~3 s).
PROGRESS_EVENTS = 500_000
#: numpy element operations of the max-plus recurrence that cost one SimPy event (measured).
NUMPY_ELEMENTS_PER_EVENT = 1000
#: Events one stage execution costs in the per-frame metrics of a DES run (numpy over every stage
#: execution: busy times, steady state, the coherent time's unions and sweep; measured, with the
#: sort's n log n at 10 million): the max-plus path's main cost.
STAGE_RUN_EVENTS = 0.1
#: The same for the analytic pipeline, which lays out every frame's periodic schedule.
ANALYTIC_STAGE_RUN_EVENTS = 0.05
#: Events one segment step of a profile flow costs (per-op flows on a contended memory: the
#: bandwidth server's plain-Python step from one segment boundary to the next, and the leap
#: attempts between; measured).
PROFILE_STEP_EVENTS = 2.0
#: Events one task run of the DAG closed form costs (without contention: the run in task order
#: and the metrics over every task run; measured ~1 us a task run, rounded up).
DAG_CLOSED_FORM_TASK_EVENTS = 0.3
#: Events a segment boundary of per-op flows costs in the check that contention cannot bind (a
#: sort and sums over every boundary of the closed-form schedule; measured) and in the
#: pipeline's event loop (hetsim.sim.fluid; measured ~2 us), and the loop's own per stage run.
CHECK_BOUNDARY_EVENTS = 0.02
LOOP_BOUNDARY_EVENTS = 0.35
LOOP_STAGE_RUN_EVENTS = 0.5
#: Samples of the stages' joint phase when estimating how often per-op flows may be throttled.
PROFILE_SAMPLES = 1024


@dataclass(frozen=True)
class WorkEstimate:
    """A run's work in SimPy-event units, the path that does it and how it was counted."""

    events: float
    path: str        # "SimPy pipeline", "max-plus recurrence", "analytic schedule", "SimPy DAG", "closed form"
    detail: str      # the count, for messages: "3 stages x 1,000,000 frames x 7 events"
    memory_bytes: float = 0.0

    @property
    def long(self) -> bool:
        """Worth a progress bar."""
        return self.events > PROGRESS_EVENTS


def estimate_pipeline(platform, workload, pipe, cost, options) -> WorkEstimate:
    """The work of simulating ``pipe`` with ``options`` (resolved for the pipeline)."""
    frames, k = int(options.frames), len(pipe.stages)
    stage_runs = frames * k
    if options.engine == "analytic":
        return WorkEstimate(stage_runs * ANALYTIC_STAGE_RUN_EVENTS, "analytic schedule",
                            f"{k} stages x {frames:,} frames (the periodic schedule of every frame)",
                            stage_runs * BYTES_PER_STAGE_RUN)
    from hetsim.sim.pipeline import shared_memories_and_links

    routes = [platform.route(s.ep, pipe.stages[i + 1].ep) if i + 1 < k else None
              for i, s in enumerate(pipe.stages)]
    shared_mems, shared_links = shared_memories_and_links(platform, pipe, routes) if options.contention else ((), ())
    if options.fast and not shared_mems and not shared_links:
        # Phase 1 pushes (stages + 1) x (buffer + 1) + 1 columns through every stage and frame,
        # phase 3 about 6 operations per stage and frame (hetsim.sim.recurrence).
        lag = int(options.buffer_frames or 1) + 1
        K, n = k + 1, (k + 1) * lag
        # The scan's chunks (hetsim.sim.recurrence): L frames each, a multiple of lag; phase 1
        # keeps a (K, lag, P - 1, n + 1) ring of float64.
        L = lag * -(-max(lag, math.isqrt(frames)) // lag)
        P = -(-frames // L)
        elements = (frames * K * (n + 1) if P > 1 else 0) + frames * K * 6
        ring_bytes = 8.0 * K * lag * max(P - 1, 0) * (n + 1) * 2
        events = elements / NUMPY_ELEMENTS_PER_EVENT + stage_runs * STAGE_RUN_EVENTS
        return WorkEstimate(events, "max-plus recurrence",
                            f"{k} stages x {frames:,} frames, buffer {lag - 1} "
                            f"(~{events / max(stage_runs, 1):.1f} events per stage execution)",
                            stage_runs * BYTES_PER_STAGE_RUN + ring_bytes)
    if options.flows == "op" and options.fast and not shared_links:
        return _estimate_per_op(platform, workload, pipe, cost, options, shared_mems)
    per_frame = 1.0                                        # the source's put
    steps = _profile_steps(platform, workload, pipe, cost, options, shared_mems)
    for i, s in enumerate(pipe.stages):
        contended = s.ep.memory in shared_mems
        # get + put; a timeout, or on a contended memory a fixed-cost timeout, a flow's start and
        # end and the server's rescheduling (flows="op": one profile flow, its start, its end, a
        # timer, the end-of-instant event and the leaps' walk over the records, ~8 events, plus
        # the server's segment steps, each ~PROFILE_STEP_EVENTS events; measured)
        work = (8 if options.flows == "op" else 4) if contended else 1
        per_frame += 2 + work + steps[i] * PROFILE_STEP_EVENTS
        route = routes[i]
        if route is not None and route.links:
            per_frame += 3 if route.bottleneck in shared_links else 1
    events = frames * (per_frame + k * STAGE_RUN_EVENTS)
    return WorkEstimate(events, "SimPy pipeline",
                        f"{k} stages x {frames:,} frames x ~{per_frame / k:.1f} events",
                        stage_runs * BYTES_PER_STAGE_RUN)


def _estimate_per_op(platform, workload, pipe, cost, options, shared_mems) -> WorkEstimate:
    """Per-op flows without SimPy (:func:`hetsim.sim.pipeline.run_pipeline`): the max-plus
    recurrence, the check of its schedule against every shared memory over every segment boundary
    and, where the stages' ops may overflow a memory (sampled as for SimPy's steps), the
    pipeline's event loop over every segment boundary of the stages on it."""
    from hetsim.sim.bandwidth import FlowProfile
    from hetsim.tasks import stage_demands

    frames, k = int(options.frames), len(pipe.stages)
    rec = estimate_pipeline(platform, workload, pipe, cost, options.model_copy(update={"contention": False}))
    segments = [FlowProfile.from_demands(parts).segments if s.ep.memory in shared_mems else 0
                for s, parts in zip(pipe.stages, stage_demands(pipe, workload, cost, options.state, per_op=True),
                                    strict=True)]
    boundaries = frames * sum(segments)
    steps = _profile_steps(platform, workload, pipe, cost, options, shared_mems)
    events = rec.events + boundaries * CHECK_BOUNDARY_EVENTS
    path, detail = "max-plus recurrence", f"{k} stages x {frames:,} frames, {sum(segments)} segments checked"
    if any(steps):
        events += boundaries * LOOP_BOUNDARY_EVENTS + frames * k * LOOP_STAGE_RUN_EVENTS
        path = "per-op event loop"
        detail = f"{k} stages x {frames:,} frames, {sum(segments)} segment boundaries a frame"
    return WorkEstimate(events, path, detail, rec.memory_bytes + boundaries * 3 * 8.0)


def _profile_steps(platform, workload, pipe, cost, options, shared_mems) -> list[float]:
    """Segment steps per stage execution of per-op flows (flows="op") on a contended memory.

    The server steps only while the current segments' caps of the flows on it could overflow its
    capacity (:meth:`~hetsim.sim.bandwidth.BandwidthResource.run`). How often they do is estimated
    by sampling the stages' profiles at independent uniform phases (:data:`PROFILE_SAMPLES`, a
    fixed seed: the estimate is deterministic); none where even the largest caps fit."""
    import numpy as np
    import simpy

    from hetsim.sim.bandwidth import BandwidthResource, FlowProfile
    from hetsim.tasks import stage_demands

    steps = [0.0] * len(pipe.stages)
    if options.flows != "op" or not shared_mems:
        return steps
    profiles = [FlowProfile.from_demands(parts)
                for parts in stage_demands(pipe, workload, cost, options.state, per_op=True)]
    rng = np.random.default_rng(0)
    for name in shared_mems:
        users = [i for i, s in enumerate(pipe.stages) if s.ep.memory == name and profiles[i].segments]
        server = BandwidthResource.for_memory(simpy.Environment(), platform.memory(name))
        capacity = server.capacity_Bps(len(users))
        if sum(max(profiles[i].caps_Bps) for i in users) <= capacity:
            continue
        load = np.zeros(PROFILE_SAMPLES)
        for i in users:
            prof = profiles[i]
            at = np.searchsorted(prof.ends, rng.uniform(0.0, prof.total_s, PROFILE_SAMPLES), side="right")
            load += np.asarray(prof.caps_Bps)[np.minimum(at, prof.segments - 1)]
        overflow = float(np.mean(load > capacity))
        for i in users:
            # measured on (b)'s pipeline at 12, 4 and 1.5 GB/s: steps / segments ~ overflow^(1/3)
            # (stepping stretches outlast the instants of overflow: a step ends at any boundary)
            steps[i] = profiles[i].segments * overflow ** (1 / 3)
    return steps


def estimate_dag(tg, options) -> WorkEstimate:
    """The work of simulating a placement's task graph ``tg`` with ``options`` (resolved)."""
    frames, n = int(options.frames), len(tg.tasks)
    if options.engine == "analytic":
        return WorkEstimate(n, "closed form", f"{n} tasks (the frames multiply, they are not simulated)",
                            n * BYTES_PER_STAGE_RUN)
    if options.fast and not options.contention:
        # hetsim.sim.dag.run_dag_closed_form: a few float operations per task run, and the metrics
        events = frames * n * DAG_CLOSED_FORM_TASK_EVENTS
        return WorkEstimate(events, "DAG closed form", f"{n} tasks x {frames:,} frames in task order",
                            frames * n * BYTES_PER_STAGE_RUN)
    # the wait for its inputs (all_of), a timeout or a flow's start and end, its completion event
    per_task = 6 if options.contention else 5
    events = frames * (n * per_task + 2)
    # the events (~150 B each) of the frames inside the platform only, and two float64 times a
    # task run
    in_flight = min(frames, int(options.in_flight or 1))
    return WorkEstimate(events, "SimPy DAG", f"{n} tasks x {frames:,} frames x ~{per_task} events",
                        frames * n * BYTES_PER_STAGE_RUN + in_flight * n * 150)


def check(est: WorkEstimate, options) -> None:
    """Refuse a run estimated past :data:`MAX_EVENTS`, naming the estimate, unless ``force``."""
    if options.force:
        return
    if est.memory_bytes > MAX_MEMORY_BYTES:
        raise HetsimError(
            f"--frames {options.frames:,}: the run would hold ~{est.memory_bytes / 2**30:.3g} GiB of "
            f"memory ({est.path}: {est.detail}), past the limit of {MAX_MEMORY_BYTES / 2**30:.0f} GiB; "
            f"give fewer --frames{' (or a smaller --buffer)' if 'buffer' in est.detail else ''}, or "
            "--force (force=True) to run it anyway")
    if est.events <= MAX_EVENTS:
        return
    seconds = est.events / EVENTS_PER_S
    raise HetsimError(
        f"--frames {options.frames:,}: the run is estimated at {est.events:.3g} events ({est.path}: "
        f"{est.detail}), past the limit of {MAX_EVENTS:.3g} (~{duration_text(seconds)} at "
        f"{EVENTS_PER_S:,} events/s); give "
        "fewer --frames, or --force (force=True) to run it anyway")
