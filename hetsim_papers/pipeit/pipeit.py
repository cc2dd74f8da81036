"""Pipe-it's design-space exploration (Wang et al., TCAD 2019, §IV and §VI).

Offline: given the time matrix T (layer × homogeneous configuration B1..B4, s1..s4, measured or
predicted), choose the pipeline configuration P (stages of one core type each, Big stages first,
every core used) and the contiguous layer allocation L that maximise eq. 11's throughput.

* :func:`find_split` is Algorithm 1: balance two adjacent stages by moving layers, last first,
  from the earlier stage to the later one while the earlier one stays the slower.
* :func:`work_flow` is Algorithm 2: everything starts in stage 1 and "flows like water" through
  repeated front-to-back sweeps of Algorithm 1 until the allocation is stable.
* :func:`merge_stage` is Algorithm 3: start from one single-core stage per core, merge adjacent
  same-type stages while eq. 12 holds (the merged stage beats the slower of the two), Big cluster
  first, re-running Algorithm 2 after every merge. The loop control of the printed pseudocode is
  ambiguous (Algorithm 3's break, §VI-C): ``policy`` selects ``"grow"`` (default: grow stage i while eq. 12 holds,
  then move on to the next pair, the only reading consistent with every result in the paper),
  ``"pairwise"`` (passes of left-to-right pair merges until nothing changes) or ``"literal_break"``
  (leave the cluster's loop at the first failed test).
* :func:`n_pipelines` and :func:`n_design_points` are eqs. 1 and 2.

    design = pipeit_design(platform, workload, cost)       # Algorithm 3 on cost's T matrix
    design.config, design.allocation, str(design.pipeline)  # in the paper's notation, e.g.
    # -> ('B4-s2-s2', [(1, 35), (36, 44), (45, 54)], 'B4:1-35|s2:36-44|s2:45-54')   # Table V, ResNet50

Layers are 0-based and stages half-open ``[first, end)`` inside this module; the results carry the
papers' 1-based inclusive ranges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb
from typing import Any, cast

import numpy as np

from hetsim.cost import CostModel
from hetsim.errors import HetsimError
from hetsim.mapping import Pipeline, pipeline_from_split

#: A stage configuration: (core type symbol, core count), e.g. ("B", 3) = B3.
StageConfig = tuple[str, int]
MERGE_POLICIES = ("grow", "pairwise", "literal_break")


# -- design-space size (eqs. 1, 2) ------------------------------------------------------------------
def n_pipelines(p: int, h_big: int, h_small: int) -> int:
    """Eq. 1: pipeline configurations with p stages, Big stages first, every core used, both
    clusters used: Σ_pB C(H_B−1, p_B−1)·C(H_s−1, p−p_B−1)."""
    return sum(comb(h_big - 1, pb - 1) * comb(h_small - 1, p - pb - 1)
               for pb in range(max(1, p - h_small), min(h_big, p - 1) + 1))


def n_design_points(n_layers: int, h_big: int, h_small: int) -> int:
    """Eq. 2 as printed: Σ_{p=2}^{H} C(W−1, p−1)·C_p (4 272 048 for W = 28, H = 4 + 4; the paper
    prints 5 379 616, the W = 29 value; eq. 2, §IV-B)."""
    return sum(comb(n_layers - 1, p - 1) * n_pipelines(p, h_big, h_small)
               for p in range(2, h_big + h_small + 1))


# -- Algorithms 1 and 2 -----------------------------------------------------------------------------
def _prefix(t: np.ndarray) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.asarray(t, dtype=float))])


def find_split(t_i: np.ndarray, t_next: np.ndarray, first: int, end: int) -> int:
    """Algorithm 1 on layers [first, end): returns k so that stage i keeps [first, k) and stage i+1
    gets [k, end).

    Starting from everything in stage i, the last layer l_j of stage i moves to the front of stage
    i+1 while T^{P_i}(L_i) − T^{P_i}(l_j) > T^{P_{i+1}}(L_{i+1}) + T^{P_{i+1}}(l_j) (strict), i.e.
    while stage i stays the slower one after the move (§VI-B, from l_b backwards).
    """
    t_i = np.asarray(t_i, dtype=float)
    t_next = np.asarray(t_next, dtype=float)
    ti = float(t_i[first:end].sum())
    tn = 0.0
    k = end
    for j in range(end - 1, first - 1, -1):
        new_i, new_n = ti - t_i[j], tn + t_next[j]
        if new_i > new_n:
            ti, tn, k = new_i, new_n, j
        else:
            break
    return k


def work_flow(configs: Sequence[StageConfig], T: Mapping[StageConfig, np.ndarray],
              n_layers: int | None = None, max_sweeps: int = 100_000) -> list[tuple[int, int]]:
    """Algorithm 2: the layer allocation of a fixed pipeline configuration.

    All layers start in stage 1; sweeps of :func:`find_split` over adjacent pairs, front to back,
    repeat until the allocation stops changing. Returns half-open [first, end) per stage (trailing
    stages may be empty).
    """
    if not configs:
        raise HetsimError("work_flow needs at least one stage")
    n_layers = n_layers if n_layers is not None else len(T[configs[0]])
    p = len(configs)
    bounds = [0] + [n_layers] * p          # stage i = [bounds[i], bounds[i+1])
    for _ in range(max_sweeps):
        old = list(bounds)
        for i in range(p - 1):
            bounds[i + 1] = find_split(T[configs[i]], T[configs[i + 1]], bounds[i], bounds[i + 2])
        if bounds == old:
            return [(bounds[i], bounds[i + 1]) for i in range(p)]
    raise HetsimError(f"work_flow did not converge in {max_sweeps} sweeps")  # pragma: no cover


def stage_time(T: Mapping[StageConfig, np.ndarray], config: StageConfig, stage: tuple[int, int]) -> float:
    """Eq. 9: the sum of the stage's layer times on its configuration."""
    first, end = stage
    return float(np.asarray(T[config], dtype=float)[first:end].sum())


def throughput(T: Mapping[StageConfig, np.ndarray], configs: Sequence[StageConfig],
               alloc: Sequence[tuple[int, int]]) -> float:
    """Eq. 11: 1 / the slowest stage."""
    return 1.0 / max(stage_time(T, c, s) for c, s in zip(configs, alloc, strict=True))


def eq12(T: Mapping[StageConfig, np.ndarray], configs: Sequence[StageConfig],
         alloc: Sequence[tuple[int, int]], i: int) -> tuple[bool, StageConfig, float, float]:
    """Eq. 12 for stages i and i+1 (same core type): (holds, merged config, lhs, rhs).

    lhs = T^{P'}(L_i) + T^{P'}(L_{i+1}) on the merged configuration P' = (type, n_i + n_{i+1});
    rhs = max(T^{P_i}(L_i), T^{P_{i+1}}(L_{i+1})). The merge helps when lhs < rhs.
    """
    (ct, a), (ct2, b) = configs[i], configs[i + 1]
    if ct != ct2:
        raise HetsimError(f"eq. 12 merges stages of one core type, not {ct}{a} and {ct2}{b}")
    merged = (ct, a + b)
    lhs = stage_time(T, merged, alloc[i]) + stage_time(T, merged, alloc[i + 1])
    rhs = max(stage_time(T, configs[i], alloc[i]), stage_time(T, configs[i + 1], alloc[i + 1]))
    return lhs < rhs, merged, lhs, rhs


# -- Algorithm 3 ----------------------------------------------------------------------------------
@dataclass
class MergeResult:
    configs: list[StageConfig]
    alloc: list[tuple[int, int]]           # half-open, 0-based; empty stages have first == end
    trace: list[dict] = field(default_factory=list)   # every eq. 12 test and the allocation after it

    @property
    def stages(self) -> list[tuple[StageConfig, tuple[int, int]]]:
        """Non-empty stages as (config, 1-based inclusive layer range)."""
        return [(c, (a + 1, e)) for c, (a, e) in zip(self.configs, self.alloc, strict=True) if e > a]


def merge_stage(T: Mapping[StageConfig, np.ndarray], h_big: int, h_small: int,
                policy: str = "grow", types: tuple[str, str] = ("B", "s")) -> MergeResult:
    """Algorithm 3: the pipeline configuration and its allocation for H_B Big + H_s Small cores.

    ``T`` maps every configuration (type, n), n = 1..H of its type, to per-layer times.
    """
    if policy not in MERGE_POLICIES:
        raise HetsimError(f"merge policy {policy!r}: allowed: {', '.join(MERGE_POLICIES)}")
    big, small = types
    configs: list[StageConfig] = [(big, 1)] * h_big + [(small, 1)] * h_small
    for c in set(configs):
        if c not in T:
            raise HetsimError(f"the time matrix has no column for {c[0]}{c[1]}")
    n_layers = len(T[configs[0]])
    alloc = work_flow(configs, T, n_layers)
    trace: list[dict] = [{"step": "start", "configs": list(configs), "alloc": list(alloc)}]

    def test(i: int) -> bool:
        nonlocal configs, alloc
        ok, merged, lhs, rhs = eq12(T, configs, alloc, i)
        entry = {"step": "eq12", "pair": (configs[i], configs[i + 1]), "merged": merged,
                 "lhs_s": lhs, "rhs_s": rhs, "merged_ok": ok}
        if ok:
            configs = configs[:i] + [merged] + configs[i + 2:]
            alloc = work_flow(configs, T, n_layers)
        entry.update(configs=list(configs), alloc=list(alloc))
        trace.append(entry)
        return ok

    for ct in types:
        if policy in ("grow", "literal_break"):
            i = next(k for k, c in enumerate(configs) if c[0] == ct)
            while i + 1 < len(configs) and configs[i][0] == ct and configs[i + 1][0] == ct:
                if not test(i):
                    if policy == "literal_break":
                        break
                    i += 1
        else:  # pairwise passes
            changed = True
            while changed:
                changed = False
                i = next(k for k, c in enumerate(configs) if c[0] == ct)
                while i + 1 < len(configs) and configs[i][0] == ct and configs[i + 1][0] == ct:
                    if test(i):
                        changed = True
                    i += 1
    return MergeResult(configs, alloc, trace)


# -- every configuration (the space eq. 1 counts) ----------------------------------------------------
def _compositions(total: int) -> list[tuple[int, ...]]:
    """Ordered ways to split ``total`` cores into stages (2^(total-1) of them)."""
    if total == 0:
        return [()]
    return [(first, *rest) for first in range(1, total + 1) for rest in _compositions(total - first)]


def all_configurations(h_big: int, h_small: int, types: tuple[str, str] = ("B", "s")) -> list[list[StageConfig]]:
    """Every pipeline configuration of the design space: Big stages first, every core used, both
    clusters used (Σ_p eq. 1 of them: 64 for 4 + 4)."""
    big, small = types
    return [[(big, n) for n in b] + [(small, n) for n in s]
            for b in _compositions(h_big) for s in _compositions(h_small)]


def best_configuration(T: Mapping[StageConfig, np.ndarray], h_big: int, h_small: int,
                       types: tuple[str, str] = ("B", "s")) -> MergeResult:
    """The configuration oracle: every configuration allocated by Algorithm 2, the best by eq. 11
    (what Algorithm 3's merges approximate without trying them all)."""
    best, best_fps = None, -1.0
    for configs in all_configurations(h_big, h_small, types):
        alloc = work_flow(configs, T)
        fps = throughput(T, configs, alloc)
        if fps > best_fps:
            best, best_fps = MergeResult(configs, alloc), fps
    if best is None:
        raise HetsimError(f"no configuration of {h_big} {types[0]} + {h_small} {types[1]} cores")
    return best


# -- on a platform ----------------------------------------------------------------------------------
@dataclass
class PipeitDesign:
    """Algorithm 3's answer on a platform: the pipeline, Pipe-it's notation and eq. 11's estimate."""

    pipeline: Pipeline
    result: MergeResult
    T: dict[StageConfig, np.ndarray]

    @property
    def config(self) -> str:
        """``B4-s2-s2`` (non-empty stages only)."""
        return self.pipeline.config

    @property
    def allocation(self) -> list[tuple[int, int]]:
        """1-based inclusive layer ranges, ``[(1, 35), (36, 44), (45, 54)]``."""
        return [(s.first, s.last) for s in self.pipeline.stages]

    @property
    def predicted_fps(self) -> float:
        """Eq. 11 on the T matrix the design was made with."""
        return throughput(self.T, self.result.configs, self.result.alloc)


def time_matrix_by_config(platform, workload, cost: CostModel, h_big: int, h_small: int,
                          types: tuple[str, str] = ("B", "s")) -> dict[StageConfig, np.ndarray]:
    """T for configurations type1..type_H of both clusters, from ``cost``."""
    T = {}
    for ct, h in zip(types, (h_big, h_small), strict=True):
        for n in range(1, h + 1):
            T[(ct, n)] = np.asarray(cost.layer_times(workload, platform.ep(f"{ct}{n}")), dtype=float)
    return T


def pipeit_design(platform, workload, cost: CostModel, h_big: int | None = None,
                  h_small: int | None = None, policy: str = "grow",
                  types: tuple[str, str] = ("B", "s")) -> PipeitDesign:
    """Run Algorithm 3 on ``cost``'s T matrix for the platform's two clusters (cluster symbols
    ``types``, Big first). Empty trailing stages are dropped from the pipeline."""
    clusters = {c.symbol: c for c in platform.clusters if c.symbol}
    for ct in types:
        if ct not in clusters:
            raise HetsimError(f"platform {platform.name} has no cluster with symbol {ct!r}")
    h_big = h_big if h_big is not None else clusters[types[0]].cores
    h_small = h_small if h_small is not None else clusters[types[1]].cores
    T = time_matrix_by_config(platform, workload, cost, h_big, h_small, types)
    result = merge_stage(T, h_big, h_small, policy, types)
    stages = result.stages
    pipe = pipeline_from_split([last - first + 1 for _, (first, last) in stages],
                               [platform.ep(f"{c[0]}{c[1]}") for c, _ in stages])
    return PipeitDesign(pipe, result, T)


# -- as explorers of a PipelineProblem -----------------------------------------------------------------
# Imported here, not at the top: the functions above are used by the reproduction without the
# explorer machinery.
from hetsim.exploration._checks import check_choice as _check_choice  # noqa: E402
from hetsim.exploration.base import Explorer, Session  # noqa: E402
from hetsim.exploration.problem import Configuration, PipelineProblem, Problem  # noqa: E402

PREDICTIONS = ("measured", "predictor")


def big_little(platform, types: Sequence[str] | None = None) -> tuple[str, str]:
    """The (Big, Small) cluster symbols: ``types`` if given, else the two symbol-named clusters
    with the faster core first (peak MAC/s of one core at its current DVFS level; [choice]: the
    paper's platforms name their Big cluster, hetsim's YAML does not)."""
    clusters = [c for c in platform.clusters if c.symbol]
    if types is not None:
        symbols = {c.symbol for c in clusters}
        if len(types) != 2 or not set(types) <= symbols or types[0] == types[1]:
            raise HetsimError(f"Pipe-it: types={list(types)!r} must name two cluster symbols of "
                              f"{platform.name} (Big first); symbols: {', '.join(sorted(symbols))}")
        return str(types[0]), str(types[1])
    if len(clusters) < 2:
        raise HetsimError(f"Pipe-it: Algorithm 3 divides the cores of a big.LITTLE platform (two clusters "
                          f"whose cores are EPs, B1..B4 and s1..s4); {platform.name} has "
                          f"{len(clusters) or 'no'} such cluster{'s' if len(clusters) != 1 else ''}: "
                          f"Pipe-it-A2 runs Algorithm 2 on any space")
    if len(clusters) > 2:
        raise HetsimError(f"Pipe-it: Algorithm 3 divides the cores of two clusters (Big and Small); "
                          f"{platform.name} has {len(clusters)} ({', '.join(c.name for c in clusters)}): "
                          f"pass types=(big, small)")

    def peak(c) -> float:
        ct = platform.core_type(c.core_type)
        return ct.macs_per_cycle * ct.level(c.dvfs).freq_MHz

    big, small = sorted(clusters, key=lambda c: -peak(c))   # stable: file order on ties
    return str(big.symbol), str(small.symbol)


class PipeIt(Explorer):
    """Pipe-it's design-time exploration as an explorer (§VI): Algorithm 3 (start from
    one single-core stage per core, merge adjacent same-type stages while eq. 12 holds, Big cluster
    first) with Algorithm 2 (the work flow, made of Algorithm 1's pairwise splits) on a layer-time
    matrix T; the design is then measured once, its only trial.

    Parameters
    ----------
    prediction : {"measured", "predictor"} or a CostModel, default "measured"
        Where T comes from. ``"measured"``: the problem's own cost model, profiled on every
        configuration B1..B_HB, s1..s_Hs (Table VI's "measured layer times"; the profiling, one run
        of the network per configuration and per frame of a trial, is charged to the tuning
        clock). ``"predictor"``: Pipe-it's regression predictor (eqs. 5-8) fitted on the
        micro-benchmarks run on the problem's cost model, which must then be a
        :class:`~hetsim_papers.pipeit.cost.PipeitGroundTruth` (Table V; the micro-benchmarks run once per
        platform, offline, and are not charged). A cost model object: T from it, not charged.
    policy : {"grow", "pairwise", "literal_break"}, default "grow"
        Algorithm 3's loop control (:func:`merge_stage`).
    types : (Big symbol, Small symbol) or None
        The two clusters (default: the faster core first, :func:`big_little`).
    charge_profiling : bool, default True
        Charge the profiling of a measured T to the tuning clock.

    The problem must give stages core groups (``PipelineProblem(..., assignment="cores")``) on a
    platform with two symbol-named clusters, and contain the design (its depth).
    """

    #: Eq. 11: Pipe-it maximises throughput only.
    supported_objectives = ("throughput",)

    def __init__(self, prediction="measured", policy: str = "grow",
                 types: Sequence[str] | None = None, charge_profiling: bool = True):
        self.prediction = prediction
        self.policy = policy
        self.types = types
        self.charge_profiling = charge_profiling

    @property
    def name(self) -> str:
        return "Pipe-it"

    def _check_prediction(self, problem: Problem) -> PipelineProblem:
        owner = type(self).__name__
        if not isinstance(problem, PipelineProblem):
            raise HetsimError(f"{owner} maps pipelines: give a PipelineProblem")
        self._check_charge(owner)
        if isinstance(self.prediction, CostModel):
            return problem
        _check_choice(owner, "prediction", self.prediction, PREDICTIONS)
        if self.prediction == "predictor":
            from hetsim_papers.pipeit.cost import PipeitGroundTruth

            if not isinstance(problem.cost, PipeitGroundTruth):
                raise HetsimError(f"{owner}: prediction='predictor' fits eqs. 5-8 on micro-benchmarks "
                                  f"run on the problem's cost model, which must be a PipeitGroundTruth "
                                  f"(got {type(problem.cost).__name__}); use prediction='measured'")
        return problem

    def _check_charge(self, owner: str) -> None:
        _check_choice(owner, "charge_profiling", self.charge_profiling, (True, False))

    def validate(self, problem: Problem) -> None:
        problem = self._check_prediction(problem)
        _check_choice(type(self).__name__, "policy", self.policy, MERGE_POLICIES)
        big_little(problem.platform, self.types)
        if problem.assignment != "cores":
            raise HetsimError(f"Pipe-it: Algorithm 3 divides the cores of a big.LITTLE platform into "
                              f"stages; {problem.name} gives each stage a "
                              f"{'whole EP' if problem.assignment == 'permutations' else 'fixed EP'}: "
                              f"use assignment='cores' (Pipe-it-A2 runs Algorithm 2 on any space)")

    def _model(self, problem: PipelineProblem) -> CostModel:
        if isinstance(self.prediction, CostModel):
            return self.prediction
        if self.prediction == "predictor":
            from hetsim_papers.pipeit.cost import PipeitGroundTruth, PipeitPredictor

            assert isinstance(problem.cost, PipeitGroundTruth)   # validate() checked it
            return PipeitPredictor.fit(problem.platform, problem.cost)
        return problem.cost

    def _charge(self, session: Session, T: Mapping, what: str) -> None:
        """The profiling of a measured T: every column is one run of the network, repeated for
        every frame of a trial (the measurement's frames)."""
        if self.prediction == "measured" and self.charge_profiling:
            frames = session.problem.measurement.frames
            total = frames * float(sum(np.sum(t) for t in T.values()))
            session.charge(total, what, configurations=len(T))

    def run(self, session: Session) -> Configuration:
        problem = session.problem
        assert isinstance(problem, PipelineProblem)
        platform = problem.platform
        big, small = big_little(platform, self.types)
        h = {c.symbol: c.cores for c in platform.clusters if c.symbol}
        model = self._model(problem)
        T = {(ct, n): np.asarray(model.layer_times(problem.workload, platform.ep(f"{ct}{n}"),
                                                   problem.state), dtype=float)
             for ct in (big, small) for n in range(1, h[ct] + 1)}
        self._charge(session, T, "Pipe-it: profile T")
        result = merge_stage(T, h[big], h[small], self.policy, (big, small))
        stages = result.stages
        config = Configuration(tuple(last - first + 1 for _, (first, last) in stages),
                               tuple(f"{c[0]}{c[1]}" for c, _ in stages))
        session.info["predicted_fps"] = throughput(T, result.configs, result.alloc)
        session.info["merge_trace"] = result.trace
        if not problem.contains(config):
            raise HetsimError(f"Pipe-it: Algorithm 3 designed {config} ({config.depth} stages), which "
                              f"is outside the space of {problem.name} (depths "
                              f"{', '.join(map(str, problem.depths))}); widen depths")
        session.measure(config, "design")
        return config


class PipeItA2(PipeIt):
    """Pipe-it's Algorithm 2 (the work flow, built on Algorithm 1) on every EP assignment of the
    problem, the design with the best eq. 11 throughput on T measured once (its only trial): the
    configuration oracle that Algorithm 3's merges approximate (§VI-C), on any pipeline
    space (core groups, or whole EPs as on the chiplets, where Algorithm 3 does not apply).

    Eq. 11 has no transfer term (Pipe-it's stages hand frames over shared memory): on platforms
    with links the measured throughput can be lower than T predicts. Parameters ``prediction``
    and ``charge_profiling`` as for :class:`PipeIt` (a measured T profiles every candidate EP);
    ``max_assignments`` refuses larger spaces (Algorithm 2 is a Python loop per assignment).
    Trailing stages Algorithm 2 leaves empty are dropped; designs outside the space, or with a
    stage on an EP that cannot run its layers (:meth:`PipelineProblem.capable`), are skipped.
    """

    def __init__(self, prediction="measured", charge_profiling: bool = True,
                 max_assignments: int = 20_000):
        self.prediction = prediction
        self.charge_profiling = charge_profiling
        self.max_assignments = max_assignments

    @property
    def name(self) -> str:
        return "Pipe-it-A2"

    def validate(self, problem: Problem) -> None:
        from hetsim.exploration._checks import check_number

        problem = self._check_prediction(problem)
        check_number(type(self).__name__, "max_assignments", self.max_assignments, low=1, integer=True)
        n = sum(problem.count_orders(k) for k in problem.depths)
        if n > self.max_assignments:
            raise HetsimError(f"Pipe-it-A2: {problem.name} has {n:,} EP assignments, more than "
                              f"max_assignments={self.max_assignments:,}; narrow depths or eps")

    def run(self, session: Session) -> Configuration:
        problem = session.problem
        assert isinstance(problem, PipelineProblem)
        model = self._model(problem)
        # Algorithm 2 and eq. 11 key T by stage configuration: here by EP name.
        T: dict[Any, np.ndarray] = {e: np.asarray(model.layer_times(problem.workload, problem.platform.ep(e), problem.state),
                           dtype=float) for e in problem.eps}
        self._charge(session, T, "Pipe-it-A2: profile T")
        M = problem.num_layers
        best, best_fps = None, -np.inf
        for k in problem.depths:
            for order in problem.orders(k):
                alloc = work_flow(cast(Any, order), T, M)
                kept = [(e, s) for e, s in zip(order, alloc, strict=True) if s[1] > s[0]]
                config = Configuration(tuple(b - a for _, (a, b) in kept), tuple(e for e, _ in kept))
                if not problem.contains(config) or not problem.capable(config):
                    continue   # outside the depths, or a stage on an EP that cannot run its layers
                fps = throughput(T, cast(Any, config.eps), [s for _, s in kept])
                if fps > best_fps:
                    best, best_fps = config, fps
        if best is None:
            raise HetsimError(f"Pipe-it-A2: every design Algorithm 2 made left stages empty, outside "
                              f"the depths of {problem.name}")
        session.info["predicted_fps"] = best_fps
        session.measure(best, "design")
        return best
