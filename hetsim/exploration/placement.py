"""The placement problem: which execution place runs each op of a DAG (and in which order).

The second problem of hetsim's problem / algorithm / termination triad, beside
:class:`~hetsim.exploration.problem.PipelineProblem`: a candidate is a
:class:`~hetsim.mapping.Placement` (op -> EP; with an ``order`` it is a plan, with ``splits`` some
ops are divided by channel over several EPs), measured by the one DAG engine (closed-form list
schedule, or the DES with contention and noise) for the latency of one inference, its energy and
its peak memory. DAG schedulers (HOPE, MOSAIC, StarPU, HEFT, the PIM paper's DP, NSGA-II over
split mappings) are explorers of this problem::

    problem = PlacementProblem("hikey970", "googlenet", eps=["big", "little"])
    times = problem.op_times()          # cl[op][EP] of HOPE, inf where an EP cannot run the op
    result = explore(problem, make_explorer("HEFT"), seed=0)
    result.best_mapping, result.best_value                    # the plan and its latency (s)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.cost import CostModel, DvfsState, make_cost_model
from hetsim.errors import HetsimError
from hetsim.exploration.problem import Measurement, Problem
from hetsim.mapping import Placement, Share, validate_placement
from hetsim.metrics import Metrics
from hetsim.sim.noise import trial_seed

OBJECTIVES = {"latency": ("latency_s", "s", False), "energy": ("energy_J", "J", False),
              "throughput": ("throughput_fps", "f/s", True)}


@dataclass(frozen=True)
class PlacementResult:
    """What one trial of a placement measured, and what it cost on the tuning clock."""

    latency_s: float
    energy_J: float | None
    throughput_fps: float
    cost_s: float
    metrics: Metrics = field(repr=False, compare=False)


class PlacementProblem(Problem):
    """Platform + workload (a DAG) + cost model + candidate EPs + how a trial is measured.

    Parameters
    ----------
    platform, workload
        Objects, or names to load.
    cost
        Cost model (default: the one the platform names, ``runtime.cost_model``: the roofline).
    eps
        Candidate EP names (default: every cluster whole, and every accelerator).
    dag
        How a mapping expands into tasks (:class:`hetsim.evaluation.DagOptions`: communication
        lanes, tensor caching, serial execution; default: the platform's ``runtime``).
    measurement
        How a trial runs (default: one inference in closed form, ``Measurement(mode="stream",
        frames_per_trial=1)``; ``engine="des"`` adds contention and noise).
    objective
        ``latency`` (default), ``energy`` or ``throughput``.
    state
        DVFS state for the cost model.
    """

    kind = "placement"

    def __init__(self, platform, workload, cost: CostModel | None = None, *,
                 eps: Sequence[str] | None = None, dag=None, measurement: Measurement | None = None,
                 objective: str = "latency", state: DvfsState | None = None):
        from hetsim.evaluation import DagOptions

        if isinstance(platform, str):
            from hetsim.platform import load_platform
            platform = load_platform(platform)
        if isinstance(workload, str):
            from hetsim.workload import load_workload
            workload = load_workload(workload)
        self.platform, self.workload = platform, workload
        self.cost = cost or make_cost_model(platform, workload=workload)
        self.dag = dag or DagOptions.for_platform(platform)
        self.measurement = measurement or Measurement(mode="stream", frames_per_trial=1)
        if self.measurement.mode != "stream":
            raise HetsimError("PlacementProblem: measurement must be mode='stream' (a placement runs "
                              "whole inferences)")
        if objective not in OBJECTIVES:
            raise HetsimError(f"PlacementProblem: objective={objective!r}; allowed: {', '.join(OBJECTIVES)}")
        self.objective = objective
        self.objective_column, self.objective_unit, self.maximize = OBJECTIVES[objective]
        self.trial_columns = ("trial", "clock_s", "cost_s", "phase", "mapping", "latency_s", "energy_J",
                              "throughput_fps", "cached", "new_best",
                              f"best_{self.objective_column}_so_far", "best_mapping_so_far")
        self.state = state
        names = list(eps) if eps is not None else (
            [c.name for c in platform.clusters] + [a.name for a in platform.accelerators])
        if len(set(names)) != len(names):
            raise HetsimError(f"PlacementProblem: eps lists an EP twice: {names}")
        self.eps = tuple(names)
        self.ep_objects = [platform.ep(n) for n in names]     # unknown names: one-line errors
        self.ops = [op.name for op in workload.ops]
        self._index = {n: i for i, n in enumerate(self.ops)}
        self._times: np.ndarray | None = None

    @property
    def name(self) -> str:
        return f"{self.workload.name} on {self.platform.name}"

    @property
    def design_space_size(self) -> int:
        """Op -> EP assignments with every op on an EP that can run it (orders not counted)."""
        options = np.isfinite(self.op_times()).sum(axis=1)
        return math.prod(int(n) for n in options)

    # -- costs the schedulers read -----------------------------------------------------------
    def op_times(self) -> np.ndarray:
        """T[op, e]: time of every op (workload order) on every candidate EP, s; inf where the EP
        cannot run it (HOPE's cl[op][device])."""
        if self._times is None:
            t = np.empty((len(self.ops), len(self.eps)))
            self.cost.bind(self.workload)
            for i, op in enumerate(self.workload.ops):
                for j, ep in enumerate(self.ep_objects):
                    t[i, j] = (self.cost.op_time(op, ep, self.state) if self.cost.supports(op, ep)
                               else math.inf)
            t.setflags(write=False)
            self._times = t
        return self._times

    def transfer_time(self, tensor: str, src: int | str, dst: int | str) -> float:
        """Time to move ``tensor`` (an op's output) from EP ``src`` to EP ``dst`` (indices into
        ``eps`` or names), s: 0 on one EP or over shared memory."""
        a, b = (self.ep_objects[x] if isinstance(x, int) else self.platform.ep(x) for x in (src, dst))
        return self.cost.transfer_time(self.workload.op(tensor).output_bytes, a, b)

    # -- candidates ------------------------------------------------------------------------------
    def placement(self, assignment: Mapping[str, str] | Sequence[int | str],
                  order: Mapping[str, Sequence[str]] | None = None,
                  splits: Mapping[str, Mapping[str, float]] | None = None,
                  sequential: bool = False) -> Placement:
        """A placement from {op: EP name} or one EP (index or name) per op in workload order
        (a plan with ``order``, a split with ``splits``, one op at a time with ``sequential``)."""
        if isinstance(assignment, Mapping):
            names = [assignment[op] for op in self.ops]
        else:
            if len(assignment) != len(self.ops):
                raise HetsimError(f"{self.name}: an assignment needs one EP per op ({len(self.ops)}), "
                                  f"got {len(assignment)}")
            names = [self.eps[a] if isinstance(a, int | np.integer) else str(a) for a in assignment]
        objects = {n: self.platform.ep(n) for n in set(names)}
        shares = {op: tuple(Share(self.platform.ep(e), float(f)) for e, f in parts.items())
                  for op, parts in (splits or {}).items()}
        plan = {e: tuple(ops) for e, ops in order.items()} if order is not None else None
        return Placement({op: objects[n] for op, n in zip(self.ops, names, strict=True)}, plan, shares,
                         bool(sequential))

    def key(self, candidate: Placement):
        order = tuple(sorted((e, tuple(o)) for e, o in candidate.order.items())) if candidate.order else None
        splits = tuple(sorted((op, tuple((s.ep.name, s.fraction) for s in shares))
                              for op, shares in candidate.splits.items()))
        inputs = tuple(sorted((name, ep.name) for name, ep in candidate.inputs.items()))
        return (tuple(candidate.ep_of[op].name for op in self.ops), order, splits, candidate.sequential, inputs)

    def contains(self, candidate) -> bool:
        if not isinstance(candidate, Placement):
            return False
        try:
            validate_placement(candidate, self.platform, self.workload, self.name, self.cost,
                               serial=self.dag.serial)
        except HetsimError:
            return False
        return all(ep.name in self.eps for ep in candidate.eps)

    # -- measuring -------------------------------------------------------------------------------
    def measure(self, candidate: Placement, rng: np.random.Generator | None = None) -> PlacementResult:
        from hetsim.evaluation import simulate

        m = self.measurement
        seed = trial_seed(rng, m.noise_sigma)
        fields: dict[str, Any] = {"engine": m.engine, "frames": m.frames, "state": self.state}
        if m.engine == "des":
            fields.update(contention=m.contention, noise_sigma=m.noise_sigma, seed=seed)
        metrics = simulate(self.platform, self.workload, candidate, cost=self.cost, dag=self.dag,
                           **fields).metrics
        return PlacementResult(metrics.latency_s["mean"], metrics.energy_J, metrics.throughput_fps,
                               metrics.makespan_s + m.trial_overhead_s, metrics)

    def value(self, result: PlacementResult) -> float:
        v = getattr(result, self.objective_column)
        return math.inf if v is None else float(v)

    def trial_row(self, candidate: Placement, result: PlacementResult) -> tuple:
        return (result.latency_s, result.energy_J, result.throughput_fps)

    def mapping(self, candidate: Placement) -> Placement:
        return candidate

    def __repr__(self) -> str:
        return (f"PlacementProblem({self.name}, {len(self.ops)} ops on {', '.join(self.eps)}, "
                f"objective {self.objective})")
