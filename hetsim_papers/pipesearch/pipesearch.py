"""Pipe-search (Paper I: Soomro, Abduljabbar, Castrillon, Pericàs, CF'21), its §4.3-4.4 and
Algorithms 1-2; where the listings leave a gap, docs/papers/pipesearch.md says what we chose.

* Algorithm 1 (offline, :func:`generate_database`): for every depth PS_count, every split of the
  layers into PS_count stages (Eq. 4), sorted by the coefficient of variation of the per-stage
  sums of the layer weights (Eq. 3, population σ), most balanced first. The first entry of each
  list is that depth's *seed*.
* Algorithm 2 (online, :class:`PipeSearch`): execute every depth's seed; walk each depth's list
  from its seed while fewer than alpha consecutive trials fail to match the best T_s (phase 1);
  then keep walking the list of the best depth (phase 2).

    tx2 = load_platform("jetson-tx2", dvfs="governor1")
    problem = PipelineProblem(tx2, "vgg16", assignment=core_groups(tx2, cores=4),
                              count_duplicates=True)            # 1970 configurations
    explore(problem, PipeSearch(alpha=10)).best.split_text
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice, check_number
from hetsim.exploration.base import Explorer, Session
from hetsim.exploration.database import TIE_ORDERS, generate_database
from hetsim.exploration.problem import Configuration, PipelineProblem
from hetsim.workload.splits import (
    count_compositions,
)


# -- Algorithm 2: online tuning ---------------------------------------------------------------
class PipeSearch(Explorer[PipelineProblem]):
    """Pipe-search's online tuner (Paper I Algorithm 2, §4.4).

    Parameters
    ----------
    alpha : int, default 10
        Patience (the paper's confidence): consecutive trials that do not match the best T_s
        before a depth (phase 1) or the refinement (phase 2) stops. Paper I uses 10 (Table 3),
        15 (Fig. 3) and 3..15 (Fig. 4).
    hints : bool, default True
        Balance the Eq. 1/2 layer weights; False: unit weights, i.e. balance layer counts
        (Paper I's "Pipe-search (no hints)", Table 5).
    stage_eps : callable depth -> EP names, dict {depth: EP names} or None
        Which EP runs each stage. None: :meth:`PipelineProblem.stage_eps` (the problem's
        assignment rule when it has one, e.g. :func:`~hetsim.exploration.problem.core_groups`, a
        choice in docs/papers/pipesearch.md; Paper I's core groups over every core for
        ``assignment="cores"``; else stage i on the i-th candidate EP, Paper II's use of PS as a
        baseline, docs/papers/shisha.md).
    tie_order : {"eq4", "eq4-reversed", "lexicographic"}, default "eq4"
        Order of equal-CV splits in the database (the paper gives none: docs/papers/pipesearch.md).
    duplicates : {"skip", "walk"}, default "skip"
        "walk" keeps Eq. 4's repeated orderings in the walked lists; a repeat is answered from the
        cache and counts as a non-improving trial (docs/papers/pipesearch.md).
    ties : {"reset", "fail"}, default "reset"
        A trial whose T_s equals the best: "reset" makes it the new S_min and resets gamma (the
        listing's ``>``); "fail" counts it as non-improving, which ends plateaus of equal T_s
        sooner on a noise-free simulator.
    charge_database : bool, default True
        Charge the database-generation cost (the problem's Measurement) before the first trial.
    """

    #: Paper I / II balance stage times: they optimise throughput only.
    supported_objectives = ("throughput",)

    def __init__(self, alpha: int = 10, hints: bool = True,
                 stage_eps: Callable[[int], Sequence[str]] | Mapping[int, Sequence[str]] | None = None,
                 tie_order: str = "eq4", duplicates: str = "skip", ties: str = "reset",
                 charge_database: bool = True):
        self.alpha = alpha
        self.hints = hints
        self.stage_eps = stage_eps
        self.tie_order = tie_order
        self.duplicates = duplicates
        self.ties = ties
        self.charge_database = charge_database

    @property
    def name(self) -> str:
        return "Pipe-search" if self.hints else "Pipe-search (no hints)"

    def validate(self, problem: PipelineProblem) -> None:
        owner = type(self).__name__
        check_number(owner, "alpha", self.alpha, low=1, integer=True)
        check_choice(owner, "hints", self.hints, (True, False))
        check_choice(owner, "tie_order", self.tie_order, TIE_ORDERS)
        check_choice(owner, "duplicates", self.duplicates, ("skip", "walk"))
        check_choice(owner, "ties", self.ties, ("reset", "fail"))
        check_choice(owner, "charge_database", self.charge_database, (True, False))
        if self.duplicates == "walk" and self.tie_order == "lexicographic":
            raise HetsimError(f"{owner}: duplicates='walk' needs tie_order 'eq4' or 'eq4-reversed'")
        if not (self.stage_eps is None or callable(self.stage_eps) or isinstance(self.stage_eps, Mapping)):
            raise HetsimError(f"{owner}: stage_eps must be None, a function depth -> EP names or a dict "
                              f"{{depth: EP names}}; got {type(self.stage_eps).__name__}")
        rule = self._rule(problem)
        M = problem.num_layers
        for p in problem.depths:
            try:
                eps = tuple(rule(p))
            except (KeyError, IndexError):
                raise HetsimError(f"{owner}: stage_eps gives no EPs for depth {p}") from None
            probe = Configuration((1,) * (p - 1) + (M - p + 1,), eps)
            if not problem.contains(probe):
                raise HetsimError(f"{owner}: stage_eps gives {list(eps)} for depth {p}, which is not an "
                                  f"EP assignment of the problem (eps {', '.join(problem.eps)})")

    def _rule(self, problem: PipelineProblem) -> Callable[[int], tuple[str, ...]]:
        if isinstance(self.stage_eps, Mapping):
            table = self.stage_eps
            return lambda p: tuple(table[p])
        rule = self.stage_eps
        if callable(rule):
            return lambda p: tuple(rule(p))
        return problem.stage_eps

    def run(self, session: Session[PipelineProblem]) -> Configuration:
        problem = session.problem
        depths = problem.depths
        walk_dups = self.duplicates == "walk"
        count = sum(problem.count_splits(p, duplicates=walk_dups) for p in depths)
        problem.check_enumerable(count, "Pipe-search database")
        db = generate_database(problem.layer_weights(self.hints), depths, self.tie_order, walk_dups)
        session.info["database"] = db
        if self.charge_database:
            session.charge_database(sum(count_compositions(problem.num_layers, p) for p in depths),
                                    "Pipe-search Algorithm 1")
        rule = self._rule(problem)
        eps = {p: rule(p) for p in depths}
        S = db.lists
        alpha = self.alpha
        equal_fails = self.ties == "fail"

        def config(p: int, c: int) -> Configuration:
            return Configuration(S[p][c], eps[p])

        # Initialisation (Alg. 2 compares with S_min from its first trial): execute the seed
        # S[p][0] of every depth; S_min = the best.
        seed_ts: dict[int, float] = {}
        s_min, ts_min = None, float("inf")
        for p in depths:
            seed_ts[p] = session.measure(config(p, 0), "init").bottleneck_s
            if seed_ts[p] < ts_min or s_min is None:   # (every seed infeasible: the first)
                s_min, ts_min = config(p, 0), seed_ts[p]

        def walk(p: int, c: int, phase: str) -> int:
            """Listing lines 2-16 (phase 1) and 17-30 (phase 2): walk S[p] from c with patience."""
            nonlocal s_min, ts_min
            gamma = 0
            while gamma < alpha and c < len(S[p]):
                conf = config(p, c)
                if c == 0:
                    ts, revisit = seed_ts[p], False  # executed in the initialisation; not re-run
                else:
                    revisit = session.is_cached(conf)
                    ts = session.measure(conf, phase).bottleneck_s
                # A repeat of Eq. 4's list is a non-improving trial too; so is an infeasible one
                # (an EP that cannot run a layer: T_s = inf, which would otherwise tie an inf S_min).
                if revisit or ts > ts_min or math.isinf(ts) or (equal_fails and ts == ts_min
                                                                and conf != s_min):
                    gamma += 1
                else:                       # new (or equal) global minimum: reset the confidence
                    s_min, ts_min, gamma = conf, ts, 0
                c += 1
            return c

        # Phase 1: every depth from its seed, gamma reset per depth (Alg. 2's listing does not say).
        visited = {p: walk(p, 0, "phase1") for p in depths}
        # Phase 2: refine within the depth of the best configuration, where phase 1 left off.
        assert s_min is not None, "phase 1 measures at least one configuration"
        p_best = s_min.depth
        visited[p_best] = walk(p_best, visited[p_best], "phase2")
        session.info["visited"] = visited
        session.info["seeds"] = {p: S[p][0] for p in depths}
        return s_min
