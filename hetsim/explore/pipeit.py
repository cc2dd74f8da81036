"""Pipe-it's design-space exploration (Wang et al., TCAD 2019, §IV and §VI; 001 digest §5).

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
  ambiguous (digest §5.8): ``policy`` selects ``"grow"`` (default: grow stage i while eq. 12 holds,
  then move on to the next pair, the only reading consistent with every result in the paper),
  ``"pairwise"`` (passes of left-to-right pair merges until nothing changes) or ``"literal_break"``
  (leave the cluster's loop at the first failed test).
* :func:`n_pipelines` and :func:`n_design_points` are eqs. 1 and 2.

    >>> design = pipeit_design(platform, workload, cost)       # Algorithm 3 on cost's T matrix
    >>> design.config, design.allocation, str(design.pipeline)  # in the paper's notation, e.g.
    ('B4-s2-s2', [(1, 35), (36, 44), (45, 54)], 'B4:1-35|s2:36-44|s2:45-54')   # Table V, ResNet50

Layers are 0-based and stages half-open ``[first, end)`` inside this module; the results carry the
papers' 1-based inclusive ranges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from math import comb

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
    prints 5 379 616, the W = 29 value; digest §5.4)."""
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
    while stage i stays the slower one after the move (digest §5.6, iterating from l_b backwards).
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
    trace = [{"step": "start", "configs": list(configs), "alloc": list(alloc)}]

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
