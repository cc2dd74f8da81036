"""The DAG schedulers as explorers of a :class:`~hetsim.exploration.placement.PlacementProblem`.

Each one computes a plan (or μLayer's split mapping) from the problem's cost tables, measures it
once (``session.measure``: the one DAG engine replays it) and returns it. ``Exploration.info``
holds ``schedule_wall_s`` (the scheduler's own wall time, the tables built; HOPE's "several
seconds" / "under 1 s"), ``tables_wall_s`` (building cl and C), ``predicted_latency_s`` (the
scheduler's own estimate: for CPU-only, GPU-only, MOSAIC, StarPU-DMDAR and HOPE:GS it is the
engine's latency of the plan exactly, since they score with the engine's rules) and what each
algorithm reports (modules, super-ops, proofs of optimality, the solver's bound...).

    problem = PlacementProblem("hope-he", "inception-v3+mnn", HopeCostModel(platform),
                               eps=["big", "gpu"], dag=DagOptions(comm="consumer"))
    result = explore(problem, make_explorer("HOPE:GS"), seed=0)
    result.best_value, result.info["schedule_wall_s"]
"""

from __future__ import annotations

import time
from typing import Any

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice, check_number
from hetsim.exploration.base import Explorer, Session
from hetsim.exploration.placement import PlacementProblem
from hetsim_papers.hope.baselines import heft, mosaic, single_device, starpu_dmdar
from hetsim_papers.hope.gs import hope_gs
from hetsim_papers.hope.lp import ILPS, hope_lp
from hetsim_papers.hope.milp import UNIT_S, solve_engine_cpsat
from hetsim_papers.hope.mulayer import mulayer_placement
from hetsim_papers.hope.partition import CUTS, EPS, NT
from hetsim_papers.hope.view import Plan, SchedView


class DagScheduler(Explorer[PlacementProblem]):
    """Base of the DAG schedulers: build the tables, schedule, measure the plan once."""

    label = "DAG scheduler"

    @property
    def name(self) -> str:
        return self.label

    def validate(self, problem: PlacementProblem) -> None:
        if not isinstance(problem, PlacementProblem):
            raise HetsimError(f"{self.label} schedules a DAG: it needs a PlacementProblem, got "
                              f"{type(problem).__name__}")
        self.check(problem)

    def check(self, problem: PlacementProblem) -> None:
        """Check the parameters against the problem (subclasses)."""

    def schedule(self, view: SchedView, seed: int) -> tuple[Any, dict]:
        """(a Plan, or a ready Placement, and what to report)."""
        raise NotImplementedError

    def run(self, session: Session[PlacementProblem]):
        t0 = time.perf_counter()
        view = SchedView(session.problem)
        t1 = time.perf_counter()
        out, info = self.schedule(view, session.seed)
        wall = time.perf_counter() - t1
        if isinstance(out, Plan):
            candidate = view.placement(out.dev, out.order, out.sequential)
            info = {"predicted_latency_s": out.predicted_s, **out.info, **info}
        else:
            candidate = out
        session.info.update(schedule_wall_s=wall, tables_wall_s=t1 - t0, **info)
        session.measure(candidate, "plan")
        return candidate


def _first(view: SchedView, accelerator: bool) -> int:
    for d, ep in enumerate(view.problem.ep_objects):
        if bool(ep.accelerator) == accelerator:
            return d
    kind = "accelerator" if accelerator else "CPU cluster"
    raise HetsimError(f"{view.problem.name}: the problem's EPs ({', '.join(view.eps)}) include no "
                      f"{kind}")


def _ep_index(view: SchedView, spec: str, owner: str, param: str) -> int:
    if spec == "cpu":
        return _first(view, False)
    if spec == "gpu":
        return _first(view, True)
    if spec not in view.eps:
        raise HetsimError(f"{owner}: {param}={spec!r}; allowed: 'cpu', 'gpu' or one of the problem's EPs "
                          f"({', '.join(view.eps)})")
    return view.eps.index(spec)


class SingleDevice(DagScheduler):
    """Every op on one EP (``device``: ``"cpu"`` for the problem's first CPU cluster, ``"gpu"`` for
    its first accelerator, or an EP name); an op it cannot run goes to ``fallback`` (default: the
    EP that runs it fastest). HOPE's CPU and GPU versions (Fig. 4)."""

    def __init__(self, device: str = "cpu", fallback: str | None = None):
        self.device = device
        self.fallback = fallback

    @property
    def name(self) -> str:
        return {"cpu": "CPU-only", "gpu": "GPU-only"}.get(self.device, f"{self.device}-only")

    def schedule(self, view, seed):
        owner = self.name
        d = _ep_index(view, self.device, owner, "device")
        fb = _ep_index(view, self.fallback, owner, "fallback") if self.fallback is not None else None
        return single_device(view, d, fb), {}


class Mosaic(DagScheduler):
    """MOSAIC: linear slicing by dynamic programming, slices run one after another (digest §8.1)."""

    label = "MOSAIC"

    def schedule(self, view, seed):
        return mosaic(view), {}


class StarPU(DagScheduler):
    """StarPU's DMDAR policy with exact cost tables: each op, when ready, to the EP where it
    would end first (digest §8.2). ``data_aware=False``: StarPU's ``dm`` policy, which leaves the
    input transfers out of the expected end."""

    label = "StarPU-DMDAR"

    def __init__(self, data_aware: bool = True):
        self.data_aware = data_aware

    def check(self, problem):
        check_choice(self.label, "data_aware", self.data_aware, (True, False))

    def schedule(self, view, seed):
        return starpu_dmdar(view, self.data_aware), {}


class Heft(DagScheduler):
    """Classic HEFT (Topcuoglu et al. 2002): upward ranks on mean costs, insertion-based EFT."""

    label = "HEFT"

    def schedule(self, view, seed):
        return heft(view), {}


class HopeGS(DagScheduler):
    """HOPE:GS (§3, Algorithm 2): node merging, then a K-op window with every EP assignment tried.

    Parameters
    ----------
    k : int or None
        Window size (None: 4 for 2 EPs, 3 for 3 [paper]).
    merge_threshold_s : float or None
        An op shorter than this on its fastest EP, with one predecessor, joins its predecessor's
        super-op (None: no merging). Default 0.1 ms: the paper's ReLU example (§3.2) [choice].
    score : {"max", "sum"}
        A batch's completion time: its latest finish, or the sum of its finishes.
    """

    label = "HOPE:GS"

    def __init__(self, k: int | None = None, merge_threshold_s: float | None = 1e-4, score: str = "max"):
        self.k = k
        self.merge_threshold_s = merge_threshold_s
        self.score = score

    def check(self, problem):
        if self.k is not None:
            check_number(self.label, "k", self.k, low=1, high=8, integer=True)
            if len(problem.eps) ** self.k > 100_000:
                raise HetsimError(f"{self.label}: k={self.k} over {len(problem.eps)} EPs tries "
                                  f"{len(problem.eps) ** self.k:,} assignments per step; allowed: at most 100,000")
        if self.merge_threshold_s is not None:
            check_number(self.label, "merge_threshold_s", self.merge_threshold_s, low=0.0)
        check_choice(self.label, "score", self.score, ("max", "sum"))

    def schedule(self, view, seed):
        return hope_gs(view, self.k, self.merge_threshold_s, self.score), {}


class HopeLP(DagScheduler):
    """HOPE:LP (§2, §4): node merging, partitioning by upward rank into modules of fewer than NT
    super-ops, HOPE's ILP per module with CP-SAT and a rolling horizon.

    Parameters
    ----------
    nt : int
        Modules have fewer than ``nt`` super-ops (12 [paper]).
    eps : float
        Balance tolerance of the bisection (0.2 [paper], raised by 0.1 until a level fits).
    cut : {"level", "exact"}
        The vertex cut: the paper's count of vertices on the boundary level, or the exact one.
    merge_threshold_s : float or None
        As HOPE:GS's (None: the ILP schedules single ops).
    time_limit_s : float
        CP-SAT's limit per module; a module without a plan by then is an error.
    unit_s : float
        Time unit of the integer model.
    tie_break : bool
        Among optimal plans of a module, the one whose ops end earliest (sum of ends); off by
        default: it makes CP-SAT 2-3x slower and the plan keeps only the per-device order.
    ilp : {"paper", "engine"}
        The module model: HOPE's ILP (per-edge communication inside the consumer's time, no
        caching), or the engine's rules (caching, transfers on their lanes): an ablation.
    """

    label = "HOPE:LP"

    def __init__(self, nt: int = NT, eps: float = EPS, cut: str = "level",
                 merge_threshold_s: float | None = 1e-4, time_limit_s: float = 20.0,
                 unit_s: float = UNIT_S, tie_break: bool = False, ilp: str = "paper"):
        self.nt = nt
        self.eps = eps
        self.cut = cut
        self.merge_threshold_s = merge_threshold_s
        self.time_limit_s = time_limit_s
        self.unit_s = unit_s
        self.tie_break = tie_break
        self.ilp = ilp

    def check(self, problem):
        check_choice(self.label, "ilp", self.ilp, ILPS)
        check_number(self.label, "nt", self.nt, low=2, integer=True)
        check_number(self.label, "eps", self.eps, low=0.0)
        check_choice(self.label, "cut", self.cut, CUTS)
        if self.merge_threshold_s is not None:
            check_number(self.label, "merge_threshold_s", self.merge_threshold_s, low=0.0)
        check_number(self.label, "time_limit_s", self.time_limit_s, low=0.0, low_open=True)
        check_number(self.label, "unit_s", self.unit_s, low=1e-12)   # CP-SAT counts time in int64 units
        check_choice(self.label, "tie_break", self.tie_break, (True, False))

    def schedule(self, view, seed):
        return hope_lp(view, self.nt, self.eps, self.cut, self.merge_threshold_s, self.time_limit_s, seed,
                       self.unit_s, self.tie_break, self.label, self.ilp), {}


class MuLayer(DagScheduler):
    """μLayer's single-layer acceleration (digest §8.3): one op at a time, each compute op's output
    channels split between ``cpu`` and ``gpu`` so that both finish together (``always_split=False``:
    only when that is faster than either alone); ``split=False``: each op whole where it ends first."""

    label = "muLayer"

    def __init__(self, cpu: str = "cpu", gpu: str = "gpu", split: bool = True, always_split: bool = True):
        self.cpu = cpu
        self.gpu = gpu
        self.split = split
        self.always_split = always_split

    def check(self, problem):
        check_choice(self.label, "split", self.split, (True, False))
        check_choice(self.label, "always_split", self.always_split, (True, False))

    def schedule(self, view, seed):
        c = _ep_index(view, self.cpu, self.label, "cpu")
        g = _ep_index(view, self.gpu, self.label, "gpu")
        placement, estimate, n_split = mulayer_placement(view, c, g, self.split, self.always_split)
        return placement, {"predicted_latency_s": estimate, "split_ops": n_split}


class ExactILP(DagScheduler):
    """The optimal plan of a small whole graph under the engine's rules (CP-SAT; tensor caching
    and communication lanes as the problem's DagOptions), and the solver's lower bound on every
    plan's latency: the reference for optimality gaps. Refuses graphs of more than ``max_ops`` ops.
    ``info['optimal']`` says whether CP-SAT proved its plan optimal within ``time_limit_s``."""

    label = "ILP-exact"

    def __init__(self, time_limit_s: float = 20.0, unit_s: float = UNIT_S, max_ops: int = 60):
        self.time_limit_s = time_limit_s
        self.unit_s = unit_s
        self.max_ops = max_ops

    def check(self, problem):
        check_number(self.label, "time_limit_s", self.time_limit_s, low=0.0, low_open=True)
        check_number(self.label, "unit_s", self.unit_s, low=1e-12)   # CP-SAT counts time in int64 units
        check_number(self.label, "max_ops", self.max_ops, low=1, integer=True)
        n = len(problem.ops)
        if n > self.max_ops:
            raise HetsimError(f"{self.label}: {problem.name} has {n} ops; the exact model is for graphs "
                              f"of at most max_ops={self.max_ops} ops (raise max_ops, or use HOPE:LP)")

    def schedule(self, view, seed):
        # Two searches of half the time limit each [choice]: CP-SAT alone, then, unless it proved its
        # plan optimal, again from StarPU-DMDAR's plan (milliseconds) as a starting solution. A
        # single-worker search can stall far above a heuristic's latency (alexnet on hope-he: 20 s
        # at 1.5x StarPU's), and a hinted one can fail to close the bound an unhinted one closes;
        # the better plan and the better bound are kept (both bounds are valid).
        where = f"{self.label} on {view.problem.name}"
        half = self.time_limit_s / 2
        sols = []
        try:
            sols.append(solve_engine_cpsat(view, half, seed, self.unit_s, where))
        except HetsimError as e:
            if "infeasible" in str(e):
                raise
        if not sols or not sols[0].optimal:
            sols.append(solve_engine_cpsat(view, half, seed, self.unit_s, where, hint=starpu_dmdar(view)))
        sol = min(sols, key=lambda x: x.makespan_s)
        bound = max(x.bound_s for x in sols)
        sol.bound_s = bound
        sol.optimal = any(x.optimal for x in sols) or sol.makespan_s <= bound + self.unit_s / 2
        sol.wall_s = sum(x.wall_s for x in sols)
        plan = Plan(sol.dev, sol.order(view.D), False, None,
                    {"model_latency_s": sol.makespan_s, "lower_bound_s": sol.bound_s,
                     "optimal": sol.optimal, "solver_s": sol.wall_s, "status": sol.status})
        return plan, {}


PAPER = "HOPE (seed 002)"
