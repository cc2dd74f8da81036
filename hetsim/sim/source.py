"""Frame sources: where the frames of a pipeline come from."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import simpy

from hetsim.errors import HetsimError
from hetsim.options import RunOptions, SourceKind, check_source


@dataclass(frozen=True)
class FrameSource:
    """Where frames come from.

    * ``saturated``: every frame is waiting at t = 0 (Pipe-it's 50-image stream); a frame enters
      when the first queue has room, and its latency counts from then.
    * ``periodic``: one frame every ``interval_s`` (a camera).
    * ``poisson``: exponential inter-arrival times of mean ``interval_s``, from the run's seed.

    A periodic or Poisson frame that finds the first queue full waits in the source; its latency
    counts from its arrival.
    """

    kind: SourceKind = "saturated"
    interval_s: float | None = None

    def __post_init__(self):
        wrong = check_source(self.kind, self.interval_s)   # the rule RunOptions applies too
        if wrong is not None:
            raise HetsimError(f"{wrong} (got interval_s={self.interval_s})")

    @classmethod
    def of(cls, options: RunOptions) -> FrameSource:
        """The source run options describe (``source``, ``interval_s``)."""
        return cls(options.source, options.interval_s)

    def arrival_gaps_s(self, frames: int, rng: np.random.Generator) -> np.ndarray | None:
        """Time from each frame's arrival to the next one's, s (``gaps[0] = 0``: the first frame
        arrives at t = 0); ``None`` for a saturated source. A Poisson source draws ``frames``
        exponentials from ``rng`` here, the first of them unused. The DES and the max-plus
        recurrence (:mod:`hetsim.sim.recurrence`) both take their arrivals from this one draw."""
        if self.kind == "saturated":
            return None
        interval_s = float(self.interval_s)  # type: ignore[arg-type]  # checked in __post_init__
        gaps = (np.full(frames, interval_s) if self.kind == "periodic"
                else rng.exponential(interval_s, size=frames))
        gaps[0] = 0.0
        return gaps

    def process(self, env: simpy.Environment, queue: simpy.Store, frames: int,
                arrival: np.ndarray, rng: np.random.Generator):
        gaps = self.arrival_gaps_s(frames, rng)
        if gaps is None:
            for f in range(frames):
                yield queue.put(f)
                arrival[f] = env.now
            return
        pending = simpy.Store(env)  # frames that arrived but wait for room

        def forward():
            for _ in range(frames):
                f = yield pending.get()
                yield queue.put(f)

        env.process(forward())
        for f in range(frames):
            if gaps[f] > 0:
                yield env.timeout(gaps[f])
            arrival[f] = env.now
            yield pending.put(f)
