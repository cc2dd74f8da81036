"""RRHC: hill climbing restarted from random pipelines.

A single first-improvement climb (hetsim's ``HC``) stops at the first pipeline none of whose
neighbours it tried is better: a local optimum, often far from the best when stage times are
lumpy (one heavy layer, one slow EP). RRHC runs ``restarts`` such climbs, each from a uniformly
random configuration of the design space, and returns the best pipeline any of them reached::

    for r in 1..restarts:
        current = a uniformly random configuration (any depth of the problem)
        until `patience` neighbours in a row fail to improve it:
            neighbour = a random neighbour of current (hetsim's HC moves: shift a boundary layer,
                        swap two stages' EPs, give a stage an unused EP; with vary_depth also
                        split or merge stages)
            move to it if it is better (a neighbour measured before counts as a failure)
    return the best of the climbs' ends

Every random choice comes from the session's generator (``explore(..., seed=...)``), every
measurement goes through the session (its cache, its tuning clock, its stopping rules), so RRHC
runs wherever an explorer runs: ``hetsim explore -a RRHC``, a sweep's ``algorithm:`` axis, the
tournament.
"""

from __future__ import annotations

from hetsim.errors import HetsimError
from hetsim.exploration import Configuration, Explorer, PipelineProblem, Session
from hetsim.exploration.baselines import random_neighbour


class RandomRestartHillClimbing(Explorer[PipelineProblem]):
    """RRHC (module docstring).

    Parameters
    ----------
    restarts : int, default 5
        Independent climbs, each from a random configuration.
    patience : int, default 10
        A climb stops after this many neighbours in a row fail to improve it (as HC's).
    vary_depth : bool, default False
        Allow moves that split or merge stages (the climb may change the pipeline's depth).
    """

    def __init__(self, restarts: int = 5, patience: int = 10, vary_depth: bool = False):
        self.restarts = restarts
        self.patience = patience
        self.vary_depth = vary_depth

    @property
    def name(self) -> str:
        return "RRHC"

    def validate(self, problem: PipelineProblem) -> None:
        for key in ("restarts", "patience"):
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000:
                raise HetsimError(f"RRHC: {key}={value!r} is out of range; allowed: an integer in [1, 1000000]")
        if not isinstance(self.vary_depth, bool):
            raise HetsimError(f"RRHC: vary_depth={self.vary_depth!r} is not allowed; allowed: True, False")

    def run(self, session: Session[PipelineProblem]) -> Configuration | None:
        problem, rng = session.problem, session.rng
        best: Configuration | None = None
        best_value = 0.0
        ends = session.info["climb_ends"] = []   # (trial, value) where each climb stopped
        for r in range(self.restarts):
            current = problem.random_configuration(rng)
            value = problem.value(session.measure(current, f"restart {r + 1}"))
            fails = 0
            while fails < self.patience:
                neighbour = random_neighbour(problem, current, rng, self.vary_depth)
                if neighbour is None:   # a one-layer, one-stage space: nothing to move
                    break
                revisit = session.is_cached(neighbour)
                v = problem.value(session.measure(neighbour, "climb"))
                if not revisit and session.better(v, value):
                    current, value, fails = neighbour, v, 0
                else:
                    fails += 1
            ends.append((session.n_trials, value))
            if best is None or session.better(value, best_value):
                best, best_value = current, value
        return best
