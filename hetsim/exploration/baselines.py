"""The baselines Pipe-search and Shisha are compared with (Pipe-search §6.1-6.2, Shisha §7.1).

* :class:`ExhaustiveSearch` (ES): every configuration of the space, after the database is built.
* :class:`RandomWalk` (RW): independent uniformly random configurations until a termination
  (Paper I: stop at 0.9 frames/s; Paper II: a time budget).
* :class:`HillClimbing` (HC) and :class:`SimulatedAnnealing` (SA) over the neighbourhood of
  :func:`random_neighbour`, from a random configuration, or from a named start point a plugin
  adds (``start="shisha"``: Shisha's seed, which the shisha plugin registers as HC_s and SA_s).

The papers give no hyper-parameters for these; the defaults are hetsim's choices, one line
each in docs/papers/shisha.md.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hetsim.analytic import SplitScorer, split_boundaries
from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice, check_number
from hetsim.exploration.base import Explorer, Session
from hetsim.exploration.database import TIE_ORDERS, generate_database
from hetsim.exploration.problem import Configuration, PipelineProblem, TrialResult
from hetsim.plugins import resolve, start_points


# -- exhaustive search ------------------------------------------------------------------------
class ExhaustiveSearch(Explorer[PipelineProblem]):
    """ES: measure every distinct configuration of the problem (splits x EP assignments).

    When the measurement is closed-form (analytic and noise-free) the whole space is scored at once
    with :class:`~hetsim.analytic.SplitScorer`; every configuration is still logged as a trial and
    charged on the tuning clock what measuring it would cost, so convergence plots are honest.

    Parameters
    ----------
    order : {"database", "lexicographic"}, default "database"
        Visit order: Pipe-search's CV-sorted database (depths ascending; Shisha §7.1: ES and PS
        share the sorted database), or cut points in lexicographic order. Within a split, EP
        assignments in the problem's order.
    tie_order : as Pipe-search's, default "eq4"
    charge_database : bool, default True
        Wait for the database generation first (the problem's Measurement prices it).
    """

    def __init__(self, order: str = "database", tie_order: str = "eq4", charge_database: bool = True):
        self.order = order
        self.tie_order = tie_order
        self.charge_database = charge_database

    @property
    def name(self) -> str:
        return "ES"

    def validate(self, problem: PipelineProblem) -> None:
        owner = type(self).__name__
        check_choice(owner, "order", self.order, ("database", "lexicographic"))
        check_choice(owner, "tie_order", self.tie_order, TIE_ORDERS)
        check_choice(owner, "charge_database", self.charge_database, (True, False))

    def run(self, session: Session[PipelineProblem]) -> Configuration:
        problem = session.problem
        problem.check_enumerable(problem.distinct_space_size, "exhaustive search")
        if self.charge_database:
            session.charge_database(problem.distinct_space_size, "exhaustive search")
        splits: dict[int, Sequence[tuple[int, ...]] | None] = dict.fromkeys(problem.depths)
        if self.order == "database":
            db = generate_database(problem.layer_weights(True), problem.depths, self.tie_order)
            splits = {p: db.lists[p] for p in problem.depths}
        # The vectorised scorer knows stage times, i.e. throughput; other objectives measure each.
        closed = problem.measurement.is_closed_form and problem.objective == "throughput" \
            and len(problem.objectives) == 1
        scorer = (SplitScorer(problem.platform, problem.workload, problem.cost,
                              [problem.platform.ep(e) for e in problem.eps], problem.state,
                              contention=problem.measurement.contends)
                  if closed else None)
        for p in problem.depths:
            orders = problem.orders(p)
            if scorer is None:
                for split in splits[p] or _lexicographic(problem.num_layers, p):
                    for eps in orders:
                        session.measure(Configuration(split, eps), "exhaustive")
                continue
            for split, eps, result in _scored(problem, scorer, p, orders, splits[p]):
                session.record(Configuration(split, eps), result, phase="exhaustive")
        return session.best


def _lexicographic(M: int, k: int):
    from hetsim.workload.splits import compositions

    return compositions(M, k)


def _scored(problem: PipelineProblem, scorer: SplitScorer, k: int, orders, split_order):
    """(split, eps, TrialResult) of every configuration of depth k, in visit order, computed at
    once from SplitScorer's stage times (throughput = 1 / the slowest; the tuning clock needs
    their sum)."""
    idx = {e: i for i, e in enumerate(problem.eps)}
    order_idx = [tuple(idx[e] for e in o) for o in orders]
    bounds = split_boundaries(problem.num_layers, k)
    stage_times = [scorer.stage_times(bounds, o) for o in order_idx]
    for t, o in zip(stage_times, orders, strict=True):
        mask = problem.incapable_mask(bounds, o)   # infeasible configurations: 0 f/s
        if mask is not None:
            t[mask] = math.inf
    throughput = [scorer.throughput(bounds, o, t) for t, o in zip(stage_times, order_idx, strict=True)]
    m = problem.measurement
    frames = m.frames
    splits = [tuple(int(x) for x in np.diff(b)) for b in bounds]
    rows: Sequence[int]
    if split_order is None:
        rows = range(len(splits))
    else:
        row_of = {s: i for i, s in enumerate(splits)}
        rows = [row_of[s] for s in split_order]
    for i in rows:
        for j, eps in enumerate(orders):
            times = stage_times[j][i]
            tp = float(throughput[j][i])
            total = float(times.sum())
            if not math.isfinite(total):
                cost = 0.0   # an infeasible configuration never runs (PipelineProblem.capable)
            elif m.mode == "stages":
                cost = total * frames
            else:  # analytic stream: latency + (F - 1) periods
                cost = total + (frames - 1) / tp
            yield splits[i], eps, TrialResult(tuple(times.tolist()), tp, cost + m.trial_overhead_s, total)


# -- random walk -----------------------------------------------------------------------------
class RandomWalk(Explorer[PipelineProblem]):
    """RW: independent, uniformly random configurations of the space (random search; Paper I's
    "random configurations"). Never stops by itself: give a termination. A configuration drawn
    again is answered from the cache. Stops when every distinct configuration was measured."""

    requires_termination = True

    def __init__(self):
        pass

    @property
    def name(self) -> str:
        return "RW"

    def run(self, session: Session[PipelineProblem]) -> None:
        problem, rng = session.problem, session.rng
        total = problem.distinct_space_size
        while session.n_distinct < total:
            session.measure(problem.random_configuration(rng), "random")
        return None


# -- neighbourhood of HC and SA ---------------------------------------------------------------
def random_neighbour(problem: PipelineProblem, config: Configuration, rng: np.random.Generator,
                     vary_depth: bool = False) -> Configuration | None:
    """One random neighbour (a choice, docs/papers/shisha.md): a move type is drawn uniformly among the
    applicable ones, then one instance of it uniformly.

    * shift: one boundary layer between two adjacent stages (neither emptied);
    * swap: exchange the EPs of two stages;
    * replace: give a stage an unused candidate EP (when fewer stages than EPs);
    * split / merge (``vary_depth``): cut a stage in two (the new stage on an unused EP) or merge
      two adjacent stages (the left one's EP), when the new depth is in the problem.

    With a fixed assignment (Pipe-search's core groups) only shift, split and merge apply, and the
    EPs follow the depth. With ``assignment="cores"`` an EP is "unused" for a stage when the
    stages' cores still fit in their clusters after the change (replace: one (stage, EP) pair
    drawn uniformly). None when no move applies (a one-stage pipeline of one layer).
    """
    split, eps = list(config.split), list(config.eps)
    free = problem.fixed_assignment
    cores = problem.assignment == "cores"
    moves, swaps, unused = _applicable_moves(problem, split, eps, vary_depth)
    if not moves:
        return None
    move = moves[rng.integers(len(moves))]
    if move in ("shift", "split", "merge"):
        _move_boundary(move, split, eps, rng, unused, free)
    elif move == "swap":
        a, b = rng.choice(len(split), size=2, replace=False)
        eps[a], eps[b] = eps[b], eps[a]
    elif cores:   # replace
        i, e = swaps[rng.integers(len(swaps))]
        eps[i] = e
    else:         # replace
        eps[rng.integers(len(split))] = unused[rng.integers(len(unused))]
    if free:
        eps = list(problem.orders(len(split))[0])
    assert sum(split) == problem.num_layers
    return Configuration(tuple(split), tuple(eps))


def _applicable_moves(problem: PipelineProblem, split: list[int], eps: list[str],
                      vary_depth: bool) -> tuple[list[str], list[tuple[int, str]], list[str]]:
    """The move types that apply to (split, eps) (:func:`random_neighbour`), the (stage, EP)
    replacements that fit (``assignment="cores"``), and the EPs a new or replaced stage could take."""
    k = len(split)
    free = problem.fixed_assignment
    cores = problem.assignment == "cores"
    swaps: list[tuple[int, str]] = []
    if cores:
        swaps = [(i, e) for i in range(k) for e in problem.eps
                 if e != eps[i] and problem.fits(eps[:i] + [e] + eps[i + 1:])]
        unused = [e for e in problem.eps if problem.fits(eps + [e])]   # EPs a new stage could take
    else:
        unused = [] if free else [e for e in problem.eps if e not in eps]
    moves = []
    if k > 1 and any(n > 1 for n in split):
        moves.append("shift")
    if not free and k > 1:
        moves.append("swap")
    if (swaps if cores else unused):
        moves.append("replace")
    if vary_depth and (k + 1) in problem.depths and any(n > 1 for n in split) and (free or unused):
        moves.append("split")
    if vary_depth and (k - 1) in problem.depths and k > 1:
        moves.append("merge")
    return moves, swaps, unused


def _move_boundary(move: str, split: list[int], eps: list[str], rng: np.random.Generator,
                   unused: list[str], free: bool) -> None:
    """Shift a boundary layer, split a stage or merge two, in place (:func:`random_neighbour`)."""
    k = len(split)
    if move == "shift":
        # (i, 0): stage i gives its last layer to i+1; (i, 1): stage i+1 gives its first to i.
        options = [(i, d) for i in range(k - 1) for d in (0, 1) if split[i + d] > 1]
        i, d = options[rng.integers(len(options))]
        giver, taker = (i, i + 1) if d == 0 else (i + 1, i)
        split[giver] -= 1
        split[taker] += 1
    elif move == "split":
        stages = [i for i in range(k) if split[i] > 1]
        i = stages[rng.integers(len(stages))]
        left = int(rng.integers(1, split[i]))
        split[i:i + 1] = [left, split[i] - left]
        eps.insert(i + 1, "" if free else unused[rng.integers(len(unused))])   # free: set below
    else:  # merge
        i = int(rng.integers(k - 1))
        split[i:i + 2] = [split[i] + split[i + 1]]
        del eps[i + 1]


class _LocalSearch(Explorer[PipelineProblem]):
    """Shared start-point logic of HC and SA."""

    start: str | Configuration
    n_stages: int | None
    vary_depth: bool
    seed_heuristic: str

    def _start(self, session: Session[PipelineProblem]) -> Configuration:
        problem = session.problem
        n = self.n_stages if self.n_stages is not None else max(
            d for d in problem.depths if problem.fixed_assignment or d <= len(problem.eps))
        if isinstance(self.start, Configuration):
            return self.start
        if self.start != "random":
            return _start_point(self.start)(problem, n, self.seed_heuristic, session.rng)
        return problem.random_configuration(session.rng, depth=n)

    def _validate_start(self, problem: PipelineProblem) -> None:
        owner = type(self).__name__
        check_choice(owner, "vary_depth", self.vary_depth, (True, False))
        if self.n_stages is not None:
            check_number(owner, "n_stages", self.n_stages, low=1, integer=True)
            if self.n_stages not in problem.depths:
                raise HetsimError(f"{owner}: n_stages={self.n_stages} is not a depth of the problem "
                                  f"(depths {list(problem.depths)})")
        if isinstance(self.start, Configuration):
            if not problem.contains(self.start):
                raise HetsimError(f"{owner}: start={self.start} is outside the design space")
            return
        check_choice(owner, "start", self.start, ("random", *start_points()))
        if self.start != "random":   # seed_heuristic is read by a start point only
            point = _start_point(self.start)
            check_choice(owner, "seed_heuristic", self.seed_heuristic, tuple(point.heuristics))
            point.validate(owner, problem)

    @property
    def _suffix(self) -> str:
        return "_s" if self.start != "random" and not isinstance(self.start, Configuration) else ""


class HillClimbing(_LocalSearch):
    """HC: first-improvement hill climbing (Shisha §7.1; the rule: docs/papers/shisha.md):
    evaluate random neighbours, move to the first that improves the throughput, stop after
    ``patience`` consecutive non-improving ones (a neighbour already measured counts as one).
    Never accepts a worse configuration.

    Parameters: ``patience`` (default 10 = Shisha's alpha), ``start`` ("random", "shisha" = HC_s,
    or a Configuration), ``n_stages`` (depth of a random start; default the largest), ``vary_depth``
    (allow split/merge moves, default False), ``seed_heuristic`` (ranking of the Shisha seed, "H3").
    """

    def __init__(self, patience: int = 10, start: str | Configuration = "random",
                 n_stages: int | None = None, vary_depth: bool = False, seed_heuristic: str = "H3"):
        self.patience = patience
        self.start = start
        self.n_stages = n_stages
        self.vary_depth = vary_depth
        self.seed_heuristic = seed_heuristic

    @property
    def name(self) -> str:
        return "HC" + self._suffix

    def validate(self, problem: PipelineProblem) -> None:
        check_number(type(self).__name__, "patience", self.patience, low=1, integer=True)
        self._validate_start(problem)

    def run(self, session: Session[PipelineProblem]) -> Configuration:
        problem, rng = session.problem, session.rng
        current = self._start(session)
        # The problem's objective (throughput unless told otherwise).
        current_value = problem.value(session.measure(current, "start"))
        accepted = session.info["accepted_trials"] = [session.n_trials]  # the climb's path
        fails = 0
        while fails < self.patience:
            nb = random_neighbour(problem, current, rng, self.vary_depth)
            if nb is None:
                break
            revisit = session.is_cached(nb)
            value = problem.value(session.measure(nb, "climb"))
            if not revisit and session.better(value, current_value):
                current, current_value, fails = nb, value, 0
                accepted.append(session.n_trials)
            else:
                fails += 1
        return current


class SimulatedAnnealing(_LocalSearch):
    """SA (Shisha §7.1; the schedule: docs/papers/shisha.md): Metropolis acceptance of a random
    neighbour with probability exp(Δtp / T), Δtp the throughput change (f/s); T0 =
    ``t0_fraction`` x the start's throughput, T x= ``cooling`` after every trial; stop when
    T < ``t_min_fraction`` x T0 or after ``max_trials`` trials. Returns the best configuration seen.

    Parameters: ``t0_fraction`` 0.1, ``cooling`` 0.95, ``t_min_fraction`` 1e-3, ``max_trials``
    None, and ``start`` ("random", "shisha" = SA_s, or a Configuration), ``n_stages``,
    ``vary_depth``, ``seed_heuristic`` as for :class:`HillClimbing`.
    """

    #: Random neighbours tried after an infeasible start before giving up (each one a trial).
    START_TRIES = 20

    def __init__(self, t0_fraction: float = 0.1, cooling: float = 0.95, t_min_fraction: float = 1e-3,
                 max_trials: int | None = None, start: str | Configuration = "random",
                 n_stages: int | None = None, vary_depth: bool = False, seed_heuristic: str = "H3"):
        self.t0_fraction = t0_fraction
        self.cooling = cooling
        self.t_min_fraction = t_min_fraction
        self.max_trials = max_trials
        self.start = start
        self.n_stages = n_stages
        self.vary_depth = vary_depth
        self.seed_heuristic = seed_heuristic

    @property
    def name(self) -> str:
        return "SA" + self._suffix

    def validate(self, problem: PipelineProblem) -> None:
        owner = type(self).__name__
        check_number(owner, "t0_fraction", self.t0_fraction, low=0.0, low_open=True)
        check_number(owner, "cooling", self.cooling, low=0.0, high=1.0, low_open=True)
        if self.cooling >= 1.0:
            raise HetsimError(f"{owner}: cooling={self.cooling!r} is out of range; allowed: > 0 and < 1")
        check_number(owner, "t_min_fraction", self.t_min_fraction, low=0.0, high=1.0, low_open=True)
        if self.max_trials is not None:
            check_number(owner, "max_trials", self.max_trials, low=1, integer=True)
        self._validate_start(problem)

    def run(self, session: Session[PipelineProblem]) -> Configuration:
        problem, rng = session.problem, session.rng
        # Anneal a score that more is better of: the objective, negated when less is better
        # (latency, energy, memory); T0 is a fraction of the start's |score|.
        sign = 1.0 if problem.maximize else -1.0
        current = self._start(session)
        current_score = sign * problem.value(session.measure(current, "start"))
        # An infeasible start (an EP that cannot run a layer: 0 frames/s, or an infinite latency)
        # gives no temperature: walk random neighbours until one runs (at most START_TRIES).
        for _ in range(self.START_TRIES):
            if 0 < abs(current_score) < math.inf:
                break
            nb = random_neighbour(problem, current, rng, self.vary_depth)
            if nb is None or (self.max_trials is not None and session.n_trials >= self.max_trials):
                break
            current, current_score = nb, sign * problem.value(session.measure(nb, "start"))
        t0 = self.t0_fraction * abs(current_score)
        if not 0 < t0 < math.inf:
            return session.best
        temperature = t0
        trials = session.n_trials
        accepted = session.info["accepted_trials"] = [session.n_trials]
        while temperature >= self.t_min_fraction * t0:
            if self.max_trials is not None and trials >= self.max_trials:
                break
            nb = random_neighbour(problem, current, rng, self.vary_depth)
            if nb is None:
                break
            score = sign * problem.value(session.measure(nb, "anneal"))
            trials += 1
            delta = score - current_score
            if delta > 0 or rng.random() < math.exp(delta / temperature):
                current, current_score = nb, score
                accepted.append(session.n_trials)
            temperature *= self.cooling
        return session.best


def _start_point(name: str):
    """A start point a plugin adds (``start="shisha"``): an object with ``heuristics`` (the
    ``seed_heuristic`` values it takes), ``validate(owner, problem)`` and
    ``__call__(problem, n_stages, heuristic, rng) -> Configuration``."""
    return resolve(start_points()[name])
