"""Stopping rules, pymoo-style: separate objects, combined by passing a list (any one stops).

An explorer's own convergence (Pipe-search's and Shisha's patience alpha, hill climbing's patience,
annealing's final temperature) always applies as well; these add outside limits::

    explore(problem, RandomWalk(), termination=TargetThroughput(0.9))       # Paper I's RW
    explore(problem, SimulatedAnnealing(), termination=[MaxTrials(500), MaxClock(3600)])
"""

from __future__ import annotations

from dataclasses import dataclass

from hetsim.exploration._checks import check_number as _number


class Termination:
    """Base class: ``reason(session)`` returns a short reason string to stop, else None."""

    def reason(self, session) -> str | None:
        raise NotImplementedError


@dataclass(frozen=True)
class MaxTrials(Termination):
    """Stop after ``n`` trials (cache hits included: they are proposals too)."""

    n: int

    def __post_init__(self) -> None:
        _number("MaxTrials", "n", self.n, low=1, integer=True)

    def reason(self, session) -> str | None:
        return "max_trials" if session.n_trials >= self.n else None


@dataclass(frozen=True)
class MaxClock(Termination):
    """Stop once the tuning clock reaches ``seconds`` (the trial that crosses it is kept)."""

    seconds: float

    def __post_init__(self) -> None:
        _number("MaxClock", "seconds", self.seconds, low=0.0, low_open=True)

    def reason(self, session) -> str | None:
        return "max_clock" if session.clock_s >= self.seconds else None


@dataclass(frozen=True)
class TargetThroughput(Termination):
    """Stop once a configuration reaches ``fps`` frames/s (Paper I's random walk: 0.9 f/s)."""

    fps: float

    def __post_init__(self) -> None:
        _number("TargetThroughput", "fps", self.fps, low=0.0, low_open=True)

    def reason(self, session) -> str | None:
        return "target_throughput" if session.best_fps >= self.fps else None


def as_terminations(termination) -> tuple[Termination, ...]:
    """None, one Termination, or a list/tuple of them -> a tuple."""
    from hetsim.errors import HetsimError

    if termination is None:
        return ()
    items = termination if isinstance(termination, list | tuple) else [termination]
    for t in items:
        if not isinstance(t, Termination):
            raise HetsimError(f"explore: termination={t!r} is not allowed; allowed: None, MaxTrials(n), "
                              f"MaxClock(seconds), TargetThroughput(fps), or a list of them")
    return tuple(items)
