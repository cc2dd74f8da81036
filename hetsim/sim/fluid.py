"""The pipeline DES with per-op flows on shared memories, as one event loop.

What :func:`hetsim.sim.pipeline.run_pipeline` runs in SimPy with ``flows="op"`` and contention on
(a process per stage, bounded queues blocking after service, a frame source, each stage execution
one profile flow on its shared memory), here without SimPy: one heap of the stages' events (a
frame's arrival, a compute end on a memory nobody shares, a hand-over's end) and, per shared
memory, a :class:`~hetsim.sim.bandwidth.ProfileSolver`, whose segment ends are events too; the
earliest of all is processed next. The solver looks no further than the next event, so nothing is
computed twice, and nothing is a SimPy event: the per-op engine at a few times a bare SimPy
pipeline's cost (docs/performance.md). ``tests/test_fluid.py`` checks it against the SimPy engine
(and the one-SimPy-transfer-per-op engine before it) on random pipelines.

The times follow the SimPy engine's operations: a stage takes frame f once it is in its queue and
the stage has let go of frame f - 1 (the later of the two, an event time); a compute time on a
memory nobody shares ends ``now + compute_s x noise``, on a shared one when its profile flow
completes; the hand-over ends ``transfer_s`` later; the stage lets go once the next queue has room
(the next stage has taken frame f - ``buffer_frames``). The random draws are the DES's: the noise
matrix, then the source's gaps.

    run = run_pipeline_fluid([0.14, 0.20], [0.0, 0.0], frames=100, buffer_frames=1,
                             servers=[Server("dram", 12e9)], memory_of=[0, 0], profiles=profiles)
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence

import numpy as np

from hetsim.collector import gc_paused
from hetsim.sim.bandwidth import FlowProfile, ProfileSolver, Server
from hetsim.sim.noise import lognormal_factors
from hetsim.sim.runs import PipelineRun
from hetsim.sim.source import FrameSource

# heap events: (time, sequence, kind, stage, frame)
_ARRIVAL, _COMPUTED, _HANDED = 0, 1, 2


def run_pipeline_fluid(compute_s: Sequence[float], transfer_s: Sequence[float], frames: int,
                       buffer_frames: int, servers: Sequence[Server], memory_of: Sequence[int | None],
                       profiles: Sequence[FlowProfile | None], source: FrameSource | None = None,
                       noise_sigma: float = 0.0, seed: int = 0, *, stage_names: Sequence[str] | None = None,
                       progress=None) -> PipelineRun:
    """The frame times of a pipeline whose stages on a shared memory contend op by op.

    Stage i computes for ``compute_s[i]`` x its noise factor when ``memory_of[i]`` is None, else as
    the profile flow ``profiles[i]`` on ``servers[memory_of[i]]``; its hand-over to stage i + 1
    takes ``transfer_s[i]`` (a delay: links are not contended here). Equal to
    ``run_pipeline(..., flows="op")``'s SimPy run to float rounding (1e-12)."""
    k = len(compute_s)
    names = list(stage_names) if stage_names is not None else [f"stage{i + 1}" for i in range(k)]
    rng = np.random.default_rng(seed)
    noise = lognormal_factors(rng, noise_sigma, (k, frames))      # the DES's draws, in its order
    gaps = (source or FrameSource()).arrival_gaps_s(frames, rng)
    arrival_at = None if gaps is None else np.cumsum(gaps).tolist()
    with gc_paused():
        return _Loop(compute_s, transfer_s, frames, buffer_frames, servers, memory_of, profiles,
                     noise, arrival_at, names, progress).run()


class _Loop:
    """The run's state; :meth:`run` processes its events in time order."""

    def __init__(self, compute_s, transfer_s, frames, buffer_frames, servers, memory_of, profiles, noise,
                 arrival_at, names, progress):
        k = self.k = len(compute_s)
        self.frames, self.b = frames, buffer_frames
        self.compute = [float(c) for c in compute_s]
        self.transfer = [float(x) for x in transfer_s]
        self.solvers = [ProfileSolver(s) for s in servers]
        self.solver_of = [self.solvers[m] if m is not None else None for m in memory_of]
        self.profiles = profiles
        self.noise = noise.tolist() if noise is not None else None
        self.arrival_at = arrival_at
        self.names = names
        self.progress, self.step_frames = progress, max(1, frames // 200)
        self.start = [[0.0] * frames for _ in range(k)]
        self.compute_end = [[0.0] * frames for _ in range(k)]
        self.end = [[0.0] * frames for _ in range(k)]
        self.arrival = [0.0] * frames
        # stage -1 is the source (zero service); stages 0..k-1 the pipeline's
        self.next = [0] * (k + 1)          # next frame each takes (index s + 1 for stage s)
        self.idle = [True] * (k + 1)       # it has let go of its last frame
        self.queued = [0] * (k + 1)        # frames in its input (arrived at the source; let go upstream)
        self.taken = [0] * (k + 1)         # frames it has taken (its queue's room)
        self.blocked = [-1] * (k + 1)      # the frame it holds, handed over, waiting for room; -1
        self.heap: list = []
        self.sequence = 0

    def push(self, t: float, kind: int, stage: int, frame: int) -> None:
        self.sequence += 1
        heapq.heappush(self.heap, (t, self.sequence, kind, stage, frame))

    def run(self) -> PipelineRun:
        frames = self.frames
        if self.arrival_at is None:
            self.queued[0] = frames            # saturated: every frame waits at the source
        else:
            for f, t in enumerate(self.arrival_at):
                self.push(t, _ARRIVAL, -1, f)
        self.now = 0.0
        self.try_take(-1)
        heap, solvers = self.heap, self.solvers
        pop = heapq.heappop
        inf = math.inf
        only = solvers[0] if len(solvers) == 1 else None
        while True:
            t_heap = heap[0][0] if heap else inf
            # a solver's events first at a tie: one instant, in any order, is one state
            if only is not None:
                if only.next <= t_heap and only.next < inf:
                    now, done = only.advance(t_heap)
                    if done:
                        self.now = now
                        for stage, frame in done:
                            self.computed(stage, frame)
                    continue
            elif solvers:
                solver = min(solvers, key=_next_time)
                if solver.next <= t_heap and solver.next < inf:
                    self.now = solver.next
                    for stage, frame in solver.step():
                        self.computed(stage, frame)
                    continue
            if not heap:
                break
            t, _, kind, stage, frame = pop(heap)
            self.now = t
            if kind == _COMPUTED:
                self.computed(stage, frame)
            elif kind == _HANDED:
                self.handed(stage, frame)
            else:
                self.queued[0] += 1
                self.try_take(-1)
        a = np.asarray
        arrival = a(self.arrival) if self.arrival_at is None else a(self.arrival_at)
        return PipelineRun(a(self.start), a(self.compute_end), a(self.end), arrival, self.names)

    # -- a stage's steps (s = -1: the source) ---------------------------------------------------
    def try_take(self, s: int) -> None:
        """Stage s takes its next frame if it is free and the frame is in its queue."""
        x = s + 1
        f = self.next[x]
        if not self.idle[x] or f >= self.frames or self.queued[x] <= f:
            return
        self.idle[x] = False
        self.next[x] = f + 1
        self.taken[x] = f + 1
        now = self.now
        if s >= 0:
            self.start[s][f] = now
            held = self.blocked[x - 1]          # the stage upstream, waiting for this room?
            if held >= 0 and held - self.b < f + 1:
                self.blocked[x - 1] = -1
                self.let_go(s - 1, held)
            solver = self.solver_of[s]
            scale = self.noise[s][f] if self.noise is not None else 1.0
            if solver is not None:
                solver.add(now, self.profiles[s], scale, (s, f))
            else:
                self.push(now + self.compute[s] * scale, _COMPUTED, s, f)
        else:
            self.handed(-1, f)                  # the source: no service

    def computed(self, s: int, f: int) -> None:
        now = self.now
        self.compute_end[s][f] = now
        x = self.transfer[s]
        if x > 0:
            self.push(now + x, _HANDED, s, f)
        else:
            self.handed(s, f)

    def handed(self, s: int, f: int) -> None:
        """Stage s has handed frame f over: it lets go once the next queue has room."""
        if s >= 0:
            self.end[s][f] = self.now
        if s + 1 < self.k and f - self.b >= self.taken[s + 2]:
            self.blocked[s + 1] = f            # the next stage has not taken frame f - b yet
            return
        self.let_go(s, f)

    def let_go(self, s: int, f: int) -> None:
        x = s + 1
        self.idle[x] = True
        if s == -1 and self.arrival_at is None:
            self.arrival[f] = self.now          # a saturated source's frame enters the pipeline
        if s + 1 < self.k:
            self.queued[x + 1] = f + 1
            self.try_take(s + 1)
        elif self.progress is not None and ((f + 1) % self.step_frames == 0 or f + 1 == self.frames):
            self.progress(f + 1)
        self.try_take(s)


def _next_time(solver: ProfileSolver) -> float:
    return solver.next
