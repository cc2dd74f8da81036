"""The exploration problem: what may be mapped where, and what a trial measures and costs.

A :class:`PipelineProblem` is pymoo's *problem* for pipeline mapping: a platform, a workload, a
cost model, the candidate execution places (EPs), the design space (pipeline depths x contiguous
layer splits x an EP-assignment rule) and a :class:`Measurement`, which says how one trial is
answered and what it costs on the *tuning clock* (the time the trial would take on the real
machine, so that slow configurations cost more, 000 digest §7.1 item 5)::

    >>> problem = PipelineProblem("rk3588", "resnet50-shisha", depths=[4])
    >>> problem.design_space_size          # 18,424 splits x 24 orders of rk3588's 4 places
    442176
    >>> trial = problem.measure(Configuration((10, 10, 15, 15), ("npu", "gpu", "big", "little")))
    >>> round(trial.throughput_fps, 4)
    7.6059

Design spaces are counted, never enumerated, here; explorers that enumerate (Pipe-search's
database, exhaustive search) call :meth:`PipelineProblem.check_enumerable` first.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from hetsim.analytic import steady_energy_per_frame
from hetsim.bounds import NOISE_SIGMA
from hetsim.cost import CostModel, DvfsState, RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice as _choice
from hetsim.exploration._checks import check_number as _number
from hetsim.mapping import Pipeline, pipeline_from_split, validate_pipeline
from hetsim.sim.noise import lognormal_factors, trial_seed
from hetsim.tasks import stage_costs, stage_peak_memory
from hetsim.workload.splits import count_compositions, count_eq4_with_dups

#: Refuse to enumerate design spaces larger than this unless ``force=True``.
DEFAULT_SPACE_LIMIT = 2_000_000

#: Database-generation cost per configuration, s: Paper II reports 1200 s for the ES/PS database of
#: SynthNet (18 layers) on 8 EPs (000 digest §6.2 Fig. 4), i.e. 41,225 splits into 2..8 stages.
DEFAULT_DATABASE_COST_PER_CONFIG_S = 1200.0 / 41_225

Assignment = (Literal["permutations", "cores", "auto"] | Callable[[int], Sequence[str]]
              | Mapping[int, Sequence[str]])

#: Refuse to list more EP assignments than this for one depth (``assignment="cores"``).
MAX_ORDERS_PER_DEPTH = 1_000_000

#: Objectives of a pipeline problem: name -> (TrialResult field, unit, more is better).
PIPELINE_OBJECTIVES: dict[str, tuple[str, str, bool]] = {
    "throughput": ("throughput_fps", "f/s", True),
    "latency": ("latency_s", "s", False),
    "energy": ("energy_J", "J/frame", False),
    "memory": ("memory_bytes", "B", False),
}


# -- configurations -------------------------------------------------------------------------
@dataclass(frozen=True, order=True)
class Configuration:
    """A pipeline schedule (000 digest §1.3): layers per stage and the EP of each stage.

    >>> c = Configuration((7, 4, 10), ("D2", "A1", "A1"))
    >>> str(c), c.split_text, c.depth
    ('D2:1-7|A1:8-11|A1:12-21', '[7,4,10]', 3)
    """

    split: tuple[int, ...]
    eps: tuple[str, ...]

    def __post_init__(self) -> None:
        if type(self.split) is not tuple:  # normalise lists and arrays (tuples are trusted: hot path)
            object.__setattr__(self, "split", tuple(int(n) for n in self.split))
        if type(self.eps) is not tuple:
            object.__setattr__(self, "eps", tuple(str(e) for e in self.eps))
        if len(self.split) != len(self.eps):
            raise ValueError(f"split {list(self.split)} has {len(self.split)} stages, eps {self.eps} "
                             f"{len(self.eps)}")

    @property
    def depth(self) -> int:
        """Number of pipeline stages (Pipe-search's PS_count, Shisha's N)."""
        return len(self.split)

    @property
    def split_text(self) -> str:
        """The papers' ``[7,4,10]`` form."""
        return "[" + ",".join(map(str, self.split)) + "]"

    @property
    def eps_text(self) -> str:
        """Pipe-it's ``D2-A1-A1`` form."""
        return "-".join(self.eps)

    def __str__(self) -> str:
        """The mapping string of :mod:`hetsim.mapping`: ``D2:1-7|A1:8-11|A1:12-21``."""
        parts, first = [], 1
        for n, ep in zip(self.split, self.eps, strict=True):
            parts.append(f"{ep}:{first}-{first + n - 1}")
            first += n
        return "|".join(parts)


@dataclass(frozen=True)
class TrialResult:
    """What one trial measured, and what it cost on the tuning clock.

    ``latency_s`` is a frame's latency (the sum of the stage times, or the stream's mean);
    ``energy_J`` the energy per frame in the steady state and ``memory_bytes`` the mapping's peak
    memory (every stage's weights, working set and input buffer, at once) are measured when the
    problem's objective or tracked objectives need them (None otherwise, or without a power model).
    """

    stage_times_s: tuple[float, ...]
    throughput_fps: float
    cost_s: float
    latency_s: float | None = None
    energy_J: float | None = None
    memory_bytes: float | None = None

    @property
    def bottleneck_s(self) -> float:
        """T_s: the time of the slowest stage (Paper I Table 2) = 1 / throughput."""
        return 1.0 / self.throughput_fps if self.throughput_fps > 0 else math.inf

    @property
    def slowest_stage(self) -> int:
        """0-based index of the slowest stage (first on ties)."""
        return int(np.argmax(self.stage_times_s))


# -- measurement ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Measurement:
    """How a trial is answered and what it costs on the tuning clock.

    * ``mode="stages"`` (Paper I, 000 digest §1.2 and §7.1 item 5a): every stage is executed
      ``frames_per_trial`` times, one after another and not pipelined; a stage's time is the mean
      of its runs, T_s = the largest, and the trial costs the sum of all runs.
    * ``mode="stream"`` (§7.1 item 5b): ``frames_per_trial`` frames flow through the pipeline in
      the evaluator (``engine`` analytic or des); the throughput is the evaluator's steady-state
      throughput and the trial costs the makespan.

    Noise is a seeded multiplicative lognormal of mean 1 on every stage execution (as in the DES),
    drawn from ``noise_seed`` (``None``: the exploration's seed). ``remeasure=False`` answers a
    configuration seen before from the exploration's cache at no clock cost (000 digest §8 item 4:
    evaluate each distinct configuration once); ``True`` measures it again, with fresh noise.
    ``trial_overhead_s`` is added to every measured trial (reconfiguration, warm-up).

    Database generation (Pipe-search Alg. 1, exhaustive search) costs ``database_cost_s`` if given,
    else ``database_cost_per_config_s`` x the number of configurations in the database (000 digest
    §7.1 item 6).
    """

    mode: Literal["stages", "stream"] = "stages"
    frames_per_trial: int | None = None
    engine: Literal["analytic", "des"] = "analytic"
    noise_sigma: float = 0.0
    noise_seed: int | None = None
    remeasure: bool = False
    contention: bool = True
    trial_overhead_s: float = 0.0
    database_cost_s: float | None = None
    database_cost_per_config_s: float = DEFAULT_DATABASE_COST_PER_CONFIG_S

    def __post_init__(self) -> None:
        _choice("Measurement", "mode", self.mode, ("stages", "stream"))
        _choice("Measurement", "engine", self.engine, ("analytic", "des"))
        if self.frames_per_trial is not None:
            _number("Measurement", "frames_per_trial", self.frames_per_trial, low=1, integer=True)
        _number("Measurement", "noise_sigma", self.noise_sigma, low=NOISE_SIGMA[0], high=NOISE_SIGMA[1])
        _number("Measurement", "trial_overhead_s", self.trial_overhead_s, low=0.0)
        _number("Measurement", "database_cost_per_config_s", self.database_cost_per_config_s, low=0.0)
        if self.database_cost_s is not None:
            _number("Measurement", "database_cost_s", self.database_cost_s, low=0.0)
        if self.noise_seed is not None:
            _number("Measurement", "noise_seed", self.noise_seed, low=0, integer=True)
        if self.mode == "stages" and self.engine != "analytic":
            raise HetsimError("Measurement: engine='des' applies to mode='stream' only; mode='stages' "
                              "executes each stage alone, in closed form")
        if self.mode == "stream" and self.engine == "analytic" and self.noise_sigma > 0:
            raise HetsimError("Measurement: noise_sigma > 0 with mode='stream' needs engine='des' "
                              "(the analytic evaluator is noise-free)")

    @property
    def frames(self) -> int:
        """Frames (stage repeats) per trial: 1 for ``stages``, 20 for ``stream`` unless given."""
        if self.frames_per_trial is not None:
            return self.frames_per_trial
        return 1 if self.mode == "stages" else 20

    @property
    def is_closed_form(self) -> bool:
        """Noise-free and analytic: every trial of a configuration gives the same numbers, which
        :class:`~hetsim.analytic.SplitScorer` can compute for a whole design space at once."""
        return self.noise_sigma == 0 and (self.mode == "stages" or self.engine == "analytic")

    def database_cost(self, n_configs: int) -> float:
        if self.database_cost_s is not None:
            return float(self.database_cost_s)
        return self.database_cost_per_config_s * n_configs


# -- the Paper I stage-to-core rule ------------------------------------------------------------
@dataclass(frozen=True)
class CoreGroups:
    """Pipe-search's stage-to-core mapping (000 digest §8 item 6, [assumption]): the ordered core
    list is cut into ``depth`` contiguous groups as evenly as possible, extra cores to the earliest
    stages; a group of n cores of a cluster is the EP ``<symbol>n`` (``D2``, ``A1``).

    A stage cannot span two clusters here (an EP lives in one cluster), so a group that would keeps
    the cores of the cluster where it has most (ties: the earlier cluster) and hands the others to
    the neighbouring stage when it runs on their cluster; otherwise they stay idle. On the TX2 with 6 cores,
    2 stages: (D0 D1 A0)(A1 A2 A3) -> D2 | A4, which is also the mapping the Table 6 data fit
    (stage 1 on the Denver pair, stage 2 on the A57s).

    >>> rule = core_groups(load_platform("jetson-tx2"), cores=4)   # D0 D1 A0 A1
    >>> rule(2), rule(3), rule(4)
    (('D2', 'A2'), ('D2', 'A1', 'A1'), ('D1', 'D1', 'A1', 'A1'))
    """

    cores: tuple[str, ...]                 # the cluster of every core, in order
    ep_names: tuple[tuple[str, str], ...]  # (cluster, EP-name prefix); "D" -> D2, "FEP0:" -> FEP0:2

    @property
    def depths(self) -> tuple[int, ...]:
        """Pipe-search's P = {2..C}, C = the number of cores."""
        return tuple(range(2, len(self.cores) + 1))

    def __call__(self, depth: int) -> tuple[str, ...]:
        if not 1 <= depth <= len(self.cores):
            raise HetsimError(f"core_groups: depth {depth} needs 1..{len(self.cores)} stages "
                              f"({len(self.cores)} cores)")
        size, extra = divmod(len(self.cores), depth)
        groups, i = [], 0
        for s in range(depth):
            n = size + (1 if s < extra else 0)
            groups.append(list(self.cores[i:i + n]))
            i += n
        for s, g in enumerate(groups):
            clusters = list(dict.fromkeys(g))
            if len(clusters) == 1:
                continue
            keep = max(clusters, key=lambda c: (g.count(c), -clusters.index(c)))  # noqa: B023
            first = g.index(keep)
            head, tail = g[:first], g[first + g.count(keep):]  # a cluster's cores are contiguous
            if s > 0:  # the leading cores of the previous stage's cluster go back to it
                n = _run(head, groups[s - 1][-1])
                groups[s - 1].extend(head[:n])
            if s + 1 < depth:  # the trailing cores of the next stage's cluster go on to it
                n = _run(tail[::-1], groups[s + 1][0])
                groups[s + 1][:0] = tail[len(tail) - n:]
            groups[s] = g[first:first + g.count(keep)]
        prefix = dict(self.ep_names)
        return tuple(f"{prefix[g[0]]}{len(g)}" for g in groups)


def _run(seq: Sequence[str], value: str) -> int:
    """Length of the leading run of ``value`` in ``seq``."""
    n = 0
    while n < len(seq) and seq[n] == value:
        n += 1
    return n


def core_groups(platform, cores: int | None = None, clusters: Sequence[str] | None = None) -> CoreGroups:
    """The Paper I rule over the first ``cores`` cores of ``clusters`` (default: the platform's
    clusters in file order, all their cores). ``core_groups(tx2, 4)`` = 2 Denver + 2 A57."""
    names = list(clusters) if clusters is not None else [c.name for c in platform.clusters]
    order: list[str] = []
    for name in names:
        try:
            order.extend([name] * platform.cluster(name).cores)
        except Exception:
            raise HetsimError(f"core_groups: unknown cluster {name!r} on {platform.name}; allowed: "
                              f"{', '.join(c.name for c in platform.clusters)}") from None
    if cores is not None:
        if not 1 <= cores <= len(order):
            raise HetsimError(f"core_groups: cores={cores} must be 1..{len(order)}")
        order = order[:cores]
    prefixes = tuple((n, platform.cluster(n).symbol or f"{n}:") for n in dict.fromkeys(order))
    return CoreGroups(tuple(order), prefixes)


# -- the problem -----------------------------------------------------------------------------
class Problem:
    """What every exploration problem tells the :class:`~hetsim.exploration.base.Session`: how to key,
    check and measure a candidate, which objective is best, and the columns of its trial table.

    Subclasses: :class:`PipelineProblem` (pipeline mappings, throughput) and
    :class:`~hetsim.exploration.placement.PlacementProblem` (DAG placements and plans, latency).
    """

    kind: str = ""
    #: The objective, whether more is better, its column name in summaries and its unit.
    objective: str = ""
    maximize: bool = True
    objective_column: str = ""
    objective_unit: str = ""
    #: The trial table's columns: trial, clock_s, cost_s, phase, mapping, the problem's own
    #: columns (:meth:`trial_row`), cached, new_best, best-so-far value, best-so-far mapping.
    trial_columns: tuple[str, ...] = ()
    measurement: Measurement

    @property
    def name(self) -> str:
        raise NotImplementedError

    @property
    def design_space_size(self) -> int:
        """Candidates in the space (the denominator of "fraction explored")."""
        raise NotImplementedError

    def key(self, candidate):
        """A hashable key: candidates with equal keys are the same trial (cached)."""
        return candidate

    def contains(self, candidate) -> bool:
        raise NotImplementedError

    def measure(self, candidate, rng: np.random.Generator | None = None):
        raise NotImplementedError

    def value(self, result) -> float:
        """The objective of a measured result."""
        raise NotImplementedError

    def throughput_of(self, result) -> float:
        return float(result.throughput_fps)

    def trial_row(self, candidate, result) -> tuple:
        """The problem's own columns of one trial row."""
        raise NotImplementedError

    def summary_fields(self, best) -> dict:
        return {}

    def mapping(self, candidate):
        """The candidate as a :mod:`hetsim.mapping` object (for ``evaluate``)."""
        raise NotImplementedError


class PipelineProblem(Problem):
    """Platform + workload + cost model + design space + measurement.

    Parameters
    ----------
    platform, workload
        Objects, or names for :func:`~hetsim.platform.load_platform` /
        :func:`~hetsim.workload.load_workload`.
    cost
        Cost model (default: :class:`~hetsim.cost.RooflineCostModel`).
    eps
        Candidate EP names (default: every EP of the platform when each is a whole cluster or
        accelerator, as on the chiplets; else, for permutations, each cluster whole and each
        accelerator, fastest first: :func:`hetsim.exploration.space.default_eps`, and for cores every
        EP ``B1..B4, s1..s4``).
    depths
        Pipeline depths in the space (default: 2..number of EPs, 2..the most stages the cores
        allow, or the rule's ``depths``).
    assignment
        How stages get EPs: ``"permutations"`` (any ordered choice of ``depth`` distinct candidate
        EPs: Shisha's space), ``"cores"`` (any sequence of candidate EPs whose cores fit in their
        clusters, e.g. ``B2-B2-s3-s1`` on hikey970: stages own disjoint core groups; Pipe-it's
        space without its Big-first order, eq. 1), ``"auto"`` (permutations when the candidate EPs
        lie on distinct clusters or accelerators, as on the chiplets, else cores), a function
        depth -> EP names (e.g. :func:`core_groups`: Pipe-search), or a dict {depth: EP names}.
    measurement
        How trials are answered (default: :class:`Measurement()`, Paper I style, noise-free).
    state
        DVFS state (cluster -> level) for the cost model.
    count_duplicates
        Count the split space as Pipe-search's Eq. 4 with duplicate orderings (1970 for VGG16 on 4
        cores instead of 1350 distinct) in :attr:`design_space_size` (000 digest §8 item 4).
    limit, force
        Refuse to enumerate more than ``limit`` configurations unless ``force``.
    objective
        What the search optimises: ``throughput`` (default; the papers' objective), ``latency``
        (of one frame), ``energy`` (per frame, steady state; needs a power model) or ``memory``
        (the mapping's peak memory). Algorithms built for throughput (Shisha, Pipe-search) refuse
        the others.
    track
        Other objectives to measure in every trial too (their columns join the trial table), e.g.
        ``["energy"]`` for a throughput-energy Pareto front.
    """

    kind = "pipeline"
    objective, maximize, objective_column, objective_unit = "throughput", True, "fps", "f/s"
    trial_columns: tuple[str, ...] = (
        "trial", "clock_s", "cost_s", "phase", "mapping", "split", "eps", "depth", "throughput_fps",
        "bottleneck_s", "latency_s", "cached", "new_best", "best_fps_so_far", "best_mapping_so_far",
    )

    def __init__(self, platform, workload, cost: CostModel | None = None, *,
                 eps: Sequence[str] | None = None, depths: Sequence[int] | None = None,
                 assignment: Assignment = "permutations", measurement: Measurement | None = None,
                 state: DvfsState | None = None, count_duplicates: bool = False,
                 limit: int | None = DEFAULT_SPACE_LIMIT, force: bool = False,
                 objective: str = "throughput", track: Sequence[str] = ()):
        if isinstance(platform, str):
            from hetsim.platform import load_platform
            platform = load_platform(platform)
        if isinstance(workload, str):
            from hetsim.workload import load_workload
            workload = load_workload(workload)
        self.platform, self.workload = platform, workload
        self.cost = cost or RooflineCostModel(platform)
        self.measurement = measurement or Measurement()
        if not isinstance(self.measurement, Measurement):
            raise HetsimError(f"PipelineProblem: measurement must be a Measurement, got "
                              f"{type(self.measurement).__name__}")
        self.state = state
        self._set_objectives(objective, track)
        self.count_duplicates = bool(count_duplicates)
        if limit is not None:
            _number("PipelineProblem", "limit", limit, low=1, integer=True)
        self.limit, self.force = limit, bool(force)
        self._rule: Callable[[int], Sequence[str]] | None
        default_depths: Sequence[int] | None
        self._orders: dict[int, list[tuple[str, ...]]] = {}
        #: "permutations", "cores" or "rule" (a function or dict of EPs per depth).
        self.assignment: str
        if isinstance(assignment, str):
            default_depths = self._assign_from_eps(assignment, eps)
        elif callable(assignment) or isinstance(assignment, Mapping):
            default_depths = self._assign_by_rule(assignment, depths)
        else:
            raise HetsimError(f"PipelineProblem: assignment must be 'permutations', a function depth -> "
                              f"EP names or a dict {{depth: EP names}}; got {type(assignment).__name__}")
        self.depths = self._checked_depths(depths if depths is not None else default_depths or ())
        self._fixed: dict[int, tuple[str, ...]] = {}
        if self._rule is not None:
            self._fix_rule_eps()
        self._ep_objects = {n: platform.ep(n) for n in self.eps}
        self._incapable = self._capability()

    # -- the design space's EPs and depths ----------------------------------------------------------
    def _assign_from_eps(self, assignment: str, eps: Sequence[str] | None) -> Sequence[int]:
        """Stages get candidate EPs by ``"permutations"``, ``"cores"`` or ``"auto"`` (class
        docstring): resolve the candidates, the cores each place can give its stages, and the
        deepest pipeline they allow. Returns the default depths, 2..that depth."""
        platform = self.platform
        _choice("PipelineProblem", "assignment", assignment, ("permutations", "cores", "auto"))
        self._rule = None
        every = [ep.name for ep in platform.eps()]
        shared = len({ep.place for ep in platform.eps()}) < len(every)   # B1..B4 share a cluster
        if assignment == "auto":
            given = [platform.ep(n).place for n in eps] if eps is not None else None
            assignment = (("cores" if shared else "permutations") if given is None else
                          ("permutations" if len(set(given)) == len(given) else "cores"))
        names = list(eps) if eps is not None else every
        if eps is None and assignment == "permutations" and shared:
            # The derived space, each place whole, fastest first (hetsim.exploration.space; on the
            # chiplets every EP is a place already).
            from hetsim.exploration.space import default_eps

            names = default_eps(platform, self.workload, self.cost, self.state)[0]
        resolved = [platform.ep(n) for n in names]  # unknown names -> one-line HetsimError
        if len(set(names)) != len(names):
            raise HetsimError(f"PipelineProblem: eps lists an EP twice: {names}")
        places = [ep.place for ep in resolved]
        self.assignment = assignment
        if assignment == "permutations" and len(set(places)) != len(places):
            raise HetsimError(
                f"PipelineProblem: eps {names} share clusters, so stages could not all run at once; "
                f"give disjoint eps, assignment='cores' (stages get disjoint core groups), or "
                f"assignment=core_groups(platform, cores=...) for Pipe-search's per-core EPs")
        self.eps = tuple(names)
        # Cores each place can give its stages (an accelerator runs one stage).
        self._budget = {ep.place: (platform.cluster(ep.cluster).cores if ep.cluster else 1)
                        for ep in resolved}
        self._ep_cores = {n: (ep.place, ep.cores) for n, ep in zip(names, resolved, strict=True)}
        if assignment == "permutations":
            max_depth = len(names)
        else:
            max_depth = sum(b // min(c for n, (pl, c) in self._ep_cores.items() if pl == place)
                            for place, b in self._budget.items())
        self._max_depth = max_depth
        return range(2, max_depth + 1)

    def _assign_by_rule(self, assignment, depths: Sequence[int] | None) -> Sequence[int] | None:
        """Stages get the EPs a function depth -> EP names (or a dict) gives. Returns the default
        depths: the dict's keys or the function's ``depths`` attribute."""
        table = dict(assignment) if isinstance(assignment, Mapping) else None
        self._rule = (lambda k: tuple(table[k])) if table is not None else assignment
        self.assignment = "rule"
        default_depths = (sorted(table) if table is not None
                          else getattr(assignment, "depths", None))
        if default_depths is None and depths is None:
            raise HetsimError("PipelineProblem: depths is required with a custom assignment function")
        self.eps = ()
        return default_depths

    def _checked_depths(self, depths) -> tuple[int, ...]:
        """The depths of the space, sorted, each one the workload and the candidate EPs allow."""
        M, workload = self.workload.num_layers, self.workload
        ds = sorted(set(int(d) for d in depths))
        if not ds or ds[0] < 1 or ds[-1] > M:
            raise HetsimError(f"PipelineProblem: depths {ds} must be non-empty, within 1..{M} "
                              f"({workload.name} has {M} layers)")
        if self.assignment == "permutations" and ds[-1] > len(self.eps):
            raise HetsimError(f"PipelineProblem: depth {ds[-1]} needs {ds[-1]} distinct EPs; "
                              f"eps has {len(self.eps)} ({', '.join(self.eps)})")
        if self.assignment == "cores" and ds[-1] > self._max_depth:
            raise HetsimError(f"PipelineProblem: depth {ds[-1]} needs {ds[-1]} stages with a core "
                              f"each; the candidate EPs allow at most {self._max_depth}")
        return tuple(ds)

    def _fix_rule_eps(self) -> None:
        """The rule's EPs of every depth, each checked as a pipeline; the candidates are their
        union, in order of first use."""
        assert self._rule is not None
        M = self.workload.num_layers
        for k in self.depths:
            fixed = tuple(str(n) for n in self._rule(k))
            if len(fixed) != k:
                raise HetsimError(f"PipelineProblem: assignment gives {len(fixed)} EPs for depth {k}")
            pipe = pipeline_from_split([1] * (k - 1) + [M - k + 1], [self.platform.ep(n) for n in fixed])
            validate_pipeline(pipe, self.platform, self.workload, f"assignment for depth {k}")
            self._fixed[k] = fixed
        self.eps = tuple(dict.fromkeys(n for k in self.depths for n in self._fixed[k]))

    # -- capability -----------------------------------------------------------------------------
    def _capability(self) -> dict[str, np.ndarray]:
        """Per candidate EP that cannot run every layer (an accelerator's op kinds, an op-keyed
        measured table): prefix counts of the layers holding an op it cannot run, so a stage's
        capability is a subtraction."""
        out = {}
        for name, ep in self._ep_objects.items():
            bad = np.array([any(not self.cost.supports(op, ep) for op in layer.ops)
                            for layer in self.workload.layers], dtype=np.int64)
            if bad.any():
                out[name] = np.concatenate(([0], np.cumsum(bad)))
        return out

    def capable(self, config: Configuration) -> bool:
        """Whether every stage's EP can run every op of its layers. [choice] A configuration that
        cannot is in the design space (the papers' spaces ignore capability) but infeasible: its
        trial measures 0 f/s, costs no tuning time (it never runs) and is never the best."""
        if not self._incapable:
            return True
        first = 0
        for n, e in zip(config.split, config.eps, strict=True):
            prefix = self._incapable.get(e)
            if prefix is not None and prefix[first + n] > prefix[first]:
                return False
            first += n
        return True

    def incapable_mask(self, bounds: np.ndarray, order: Sequence[str]) -> np.ndarray | None:
        """For split boundaries (rows [0, c1, ..., M]) and one EP per stage, True where some stage
        cannot run its layers (None: every row is capable)."""
        masks = [prefix[bounds[:, i + 1]] > prefix[bounds[:, i]]
                 for i, e in enumerate(order) if (prefix := self._incapable.get(e)) is not None]
        if not masks:
            return None
        return np.logical_or.reduce(masks)

    # -- the design space ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"{self.workload.name} on {self.platform.name}"

    def _set_objectives(self, objective: str, track: Sequence[str]) -> None:
        _choice("PipelineProblem", "objective", objective, tuple(PIPELINE_OBJECTIVES))
        if isinstance(track, str):
            track = [t for t in track.split(",") if t]
        for t in track:
            _choice("PipelineProblem", "track", t, tuple(PIPELINE_OBJECTIVES))
        self.objective = objective
        column, self.objective_unit, self.maximize = PIPELINE_OBJECTIVES[objective]
        self.objective_column = "fps" if objective == "throughput" else column
        #: Every objective measured in a trial (the objective first).
        self.objectives = tuple(dict.fromkeys([objective, *track]))
        needs = {PIPELINE_OBJECTIVES[o][0] for o in self.objectives}
        if "energy_J" in needs and not self.platform.has_power_model:
            raise HetsimError(f"objective energy: platform {self.platform.name} has no power model (every "
                              f"cluster's DVFS level and every accelerator needs active and idle watts; "
                              f"docs/platforms.md)")
        self._extra = tuple(c for c in ("energy_J", "memory_bytes") if c in needs)
        best = "best_fps_so_far" if objective == "throughput" else f"best_{column}_so_far"
        self.trial_columns = (
            "trial", "clock_s", "cost_s", "phase", "mapping", "split", "eps", "depth", "throughput_fps",
            "bottleneck_s", "latency_s", *self._extra, "cached", "new_best", best, "best_mapping_so_far")

    def value(self, result: TrialResult, objective: str | None = None) -> float:
        """The objective (or another measured ``objective``) of a result; a missing energy (no
        power model) is the worst value."""
        name = objective or self.objective
        column, _, maximize = PIPELINE_OBJECTIVES[name]
        v = getattr(result, column)
        if v is None:
            return -math.inf if maximize else math.inf
        return float(v)

    def trial_row(self, candidate: Configuration, result: TrialResult) -> tuple:
        return (candidate.split_text, candidate.eps_text, candidate.depth, result.throughput_fps,
                result.bottleneck_s, result.latency_s, *(getattr(result, c) for c in self._extra))

    def summary_fields(self, best: Configuration | None) -> dict:
        return {"best_split": best.split_text if best is not None else None}

    def mapping(self, candidate: Configuration) -> Pipeline:
        return self.pipeline(candidate)

    @property
    def num_layers(self) -> int:
        return self.workload.num_layers

    @property
    def fixed_assignment(self) -> bool:
        """True when the depth decides the EPs (Pipe-search); False for free EP permutations."""
        return self._rule is not None

    def orders(self, depth: int) -> list[tuple[str, ...]]:
        """Every EP assignment of a ``depth``-stage pipeline, one EP name per stage."""
        if self._rule is not None:
            return [self._fixed[depth]]
        if self.assignment == "cores":
            return list(self._core_orders(depth))
        return list(itertools.permutations(self.eps, depth))

    def count_orders(self, depth: int) -> int:
        if self.assignment == "cores":
            return len(self._core_orders(depth))
        return 1 if self._rule is not None else math.perm(len(self.eps), depth)

    def _core_orders(self, depth: int) -> list[tuple[str, ...]]:
        """``assignment="cores"``: every sequence of ``depth`` candidate EPs whose cores fit in
        their clusters, in the order of ``eps`` (listed once per depth, then cached)."""
        if depth in self._orders:
            return self._orders[depth]
        out: list[tuple[str, ...]] = []
        seq: list[str] = []
        left = dict(self._budget)

        def extend() -> None:
            if len(seq) == depth:
                out.append(tuple(seq))
                if len(out) > MAX_ORDERS_PER_DEPTH:
                    raise HetsimError(f"PipelineProblem: more than {MAX_ORDERS_PER_DEPTH:,} EP "
                                      f"assignments of {depth} stages; narrow eps or depths")
                return
            for name in self.eps:
                place, cores = self._ep_cores[name]
                if left[place] >= cores:
                    left[place] -= cores
                    seq.append(name)
                    extend()
                    seq.pop()
                    left[place] += cores

        extend()
        self._orders[depth] = out
        return out

    def fits(self, eps: Sequence[str]) -> bool:
        """Whether stages on ``eps`` can all run at once: distinct candidate EPs (permutations),
        or candidate EPs whose cores fit in their clusters (cores)."""
        if any(e not in self._ep_objects for e in eps):
            return False
        if self.assignment != "cores":
            return len(set(eps)) == len(eps)
        used: dict[str, int] = {}
        for e in eps:
            place, cores = self._ep_cores[e]
            used[place] = used.get(place, 0) + cores
        return all(n <= self._budget[p] for p, n in used.items())

    def stage_eps(self, depth: int) -> tuple[str, ...]:
        """The EPs of the stages when an algorithm does not choose them (Pipe-search): the rule's,
        the first ``depth`` candidate EPs for permutations (Paper II's use of PS, 000 digest §5.5),
        Paper I's core groups over every core of the platform for cores (digest §8 item 6)."""
        if self._rule is not None:
            return self._fixed[depth]
        if self.assignment == "cores":
            return tuple(core_groups(self.platform)(depth))
        return tuple(self.eps[:depth])

    def count_splits(self, depth: int, duplicates: bool | None = None) -> int:
        """Splits of the layers into ``depth`` stages: C(M-1, depth-1) distinct, or Pipe-search's
        Eq. 4 count with duplicate orderings when ``duplicates`` (default: ``count_duplicates``)."""
        dup = self.count_duplicates if duplicates is None else duplicates
        M = self.num_layers
        return count_eq4_with_dups(M, depth) if dup else count_compositions(M, depth)

    @property
    def design_space_size(self) -> int:
        """Configurations in the space (Eq. 4 duplicates included when ``count_duplicates``): the
        denominator of "fraction of the space explored"."""
        return sum(self.count_splits(k) * self.count_orders(k) for k in self.depths)

    @property
    def distinct_space_size(self) -> int:
        """Distinct configurations: what exhaustive search measures."""
        return sum(self.count_splits(k, False) * self.count_orders(k) for k in self.depths)

    @property
    def split_space_size(self) -> int:
        """Distinct splits over all depths, EP assignment not counted: Paper II's denominator
        (000 digest §4 item 9 and §8 item 13)."""
        return sum(self.count_splits(k, False) for k in self.depths)

    def check_enumerable(self, count: int, what: str) -> None:
        """Raise a one-line HetsimError when ``count`` configurations exceed the limit."""
        if self.limit is not None and count > self.limit and not self.force:
            raise HetsimError(
                f"{what}: design space of {count:,} configurations ({self.name}, depths "
                f"{_ranges(self.depths)}, {len(self.eps)} EPs) exceeds the limit of {self.limit:,}; "
                f"narrow the depths or EPs (--depth, --eps), or go ahead anyway (--force; Python: "
                f"PipelineProblem(force=True) or a larger limit)")

    def contains(self, config: Configuration) -> bool:
        k = config.depth
        if k not in self.depths or sum(config.split) != self.num_layers or min(config.split) < 1:
            return False
        if self._rule is not None:
            return config.eps == self._fixed[k]
        return self.fits(config.eps)

    def random_configuration(self, rng: np.random.Generator, depth: int | None = None) -> Configuration:
        """A uniformly random configuration of the space (of one depth, if given)."""
        if depth is None:
            counts = np.array([self.count_splits(k, False) * self.count_orders(k) for k in self.depths],
                              dtype=float)
            depth = int(self.depths[rng.choice(len(self.depths), p=counts / counts.sum())])
        M = self.num_layers
        cuts = np.sort(rng.choice(np.arange(1, M), size=depth - 1, replace=False))
        bounds = np.concatenate(([0], cuts, [M]))
        split = tuple(int(b) for b in np.diff(bounds))
        if self._rule is not None:
            return Configuration(split, self._fixed[depth])
        if self.assignment == "cores":
            orders = self._core_orders(depth)
            return Configuration(split, orders[int(rng.integers(len(orders)))])
        eps = tuple(self.eps[i] for i in rng.permutation(len(self.eps))[:depth])
        return Configuration(split, eps)

    def optimum(self, max_orders: int = 1_000_000) -> tuple[Configuration, float]:
        """The best configuration of the space and its noise-free throughput, exactly: for every
        depth and EP assignment, the best split by
        :meth:`~hetsim.analytic.SplitScorer.best_split` (a min-max dynamic programme, so spaces far
        too large to enumerate are solved too). Needs a closed-form measurement (noise aside: the
        optimum is that of the noise-free measurement) and the throughput objective; a stage on an
        EP that cannot run its layers is excluded (:meth:`capable`). Refuses more than
        ``max_orders`` EP assignments in all."""
        from hetsim.analytic import SplitScorer

        if self.objective != "throughput":
            raise HetsimError(f"optimum of {self.name}: computed for the throughput objective, not "
                              f"{self.objective}")
        m = self.measurement
        if not (m.mode == "stages" or m.engine == "analytic"):
            raise HetsimError(f"optimum of {self.name}: the measurement is a DES stream, which has no "
                              f"closed form; use mode='stages' or engine='analytic'")
        n_orders = sum(self.count_orders(k) for k in self.depths)
        if n_orders > max_orders:
            raise HetsimError(f"optimum of {self.name}: {n_orders:,} EP assignments exceed "
                              f"max_orders={max_orders:,}; narrow eps or depths")
        scorer = SplitScorer(self.platform, self.workload, self.cost,
                             [self._ep_objects[e] for e in self.eps], self.state)
        index = {e: i for i, e in enumerate(self.eps)}
        best, best_fps = None, -math.inf
        for k in self.depths:
            for order in self.orders(k):
                split, fps = scorer.best_split([index[e] for e in order],
                                               [self._incapable.get(e) for e in order])
                if fps > best_fps:
                    best, best_fps = Configuration(split, order), fps
        if best is None or best_fps <= 0:
            raise HetsimError(f"optimum of {self.name}: no configuration can run every layer")
        return best, best_fps

    # -- measuring ----------------------------------------------------------------------------
    def pipeline(self, config: Configuration) -> Pipeline:
        return pipeline_from_split(config.split, [self._ep_objects[e] for e in config.eps])

    def layer_weights(self, hints: bool = True) -> list[int]:
        """Pipe-search/Shisha hints (Eq. 1/2 per layer), or unit weights (Paper I's no-hints
        variant, 000 digest §5.2)."""
        if hints:
            return [int(x) for x in self.workload.layer_weights()]
        return [1] * self.num_layers

    def measure(self, config: Configuration, rng: np.random.Generator | None = None) -> TrialResult:
        """Answer one trial (noise drawn from ``rng``; default: a fresh generator seeded 0)."""
        if not self.contains(config):
            raise HetsimError(f"configuration {config} is not in the design space of {self.name} "
                              f"(depths {_ranges(self.depths)}, eps {', '.join(self.eps)})")
        m = self.measurement
        pipe = self.pipeline(config)
        if not self.capable(config):
            inf = math.inf
            return TrialResult(tuple(inf for _ in config.split), 0.0, m.trial_overhead_s, inf,
                               inf if "energy_J" in self._extra else None,
                               self._memory(pipe))
        if m.mode == "stages":
            compute, transfer = stage_costs(pipe, self.workload, self.cost, self.state)
            base = np.add(compute, transfer)
            runs = np.tile(base, (m.frames, 1))
            if m.noise_sigma > 0:
                rng = rng if rng is not None else np.random.default_rng(0)
                runs = runs * lognormal_factors(rng, m.noise_sigma, runs.shape)
            times = runs.mean(axis=0)
            slowest = float(times.max())
            energy = (steady_energy_per_frame(self.platform, self.workload, pipe, self.cost, self.state,
                                              [float(t) for t in times])
                      if "energy_J" in self._extra else None)
            return TrialResult(tuple(float(t) for t in times),
                               1.0 / slowest if slowest > 0 else math.inf,
                               float(runs.sum()) + m.trial_overhead_s, float(times.sum()), energy,
                               self._memory(pipe))
        from hetsim.evaluation import evaluate
        metrics = evaluate(self.platform, self.workload, pipe, engine=m.engine, cost=self.cost,
                           frames=m.frames, state=self.state, contention=m.contention,
                           noise_sigma=m.noise_sigma, seed=trial_seed(rng, m.noise_sigma))
        # [choice] A stream's energy per frame is its energy over its frames, fill and drain included.
        energy = (metrics.energy_J / metrics.frames
                  if "energy_J" in self._extra and metrics.energy_J is not None else None)
        return TrialResult(tuple(s.time_s for s in metrics.stages), metrics.throughput_fps,
                           metrics.makespan_s + m.trial_overhead_s, metrics.latency_s["mean"], energy,
                           self._memory(pipe))

    def _memory(self, pipe: Pipeline) -> float | None:
        """[choice] A pipeline's memory is the sum of its stages' peak memories (all stages hold
        their weights, working sets and one frame of input buffer at once; on one DRAM that sum is
        what the platform must hold)."""
        if "memory_bytes" not in self._extra:
            return None
        return float(sum(stage_peak_memory(pipe, self.workload, 1)))

    def __repr__(self) -> str:
        return (f"PipelineProblem({self.name}, depths {_ranges(self.depths)}, "
                f"{'fixed EPs' if self.fixed_assignment else 'EPs ' + ','.join(self.eps)}"
                f"{' (core groups)' if self.assignment == 'cores' else ''}, "
                f"{self.design_space_size:,} configurations, {self.measurement.mode} measurement)")


def _ranges(depths: Sequence[int]) -> str:
    ds = list(depths)
    if len(ds) > 1 and ds == list(range(ds[0], ds[-1] + 1)):
        return f"{ds[0]}..{ds[-1]}"
    return ",".join(map(str, ds))
