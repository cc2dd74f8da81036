"""The cost-model interface every evaluator and explorer talks to.

A cost model answers two questions: how long an op takes on an execution place in a given DVFS
state (``op_time``), and how long a transfer takes between two EPs (``transfer_time``). For the DES
contention model it also splits an op's time into a fixed part and a fluid part that moves bytes
through the EP's memory (``op_demand``). Everything else (layer times, stage times, the vectorised
time matrix explorers score millions of candidates with) derives from these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform

#: DVFS state: cluster name -> level name. Clusters not named use their initial level.
DvfsState = Mapping[str, str]


@dataclass(frozen=True)
class Demand:
    """An op's (or a stage's) cost split for the contention model.

    ``fixed_s`` is spent whatever else runs (per-op overhead); ``busy_s`` is the uncontended time of
    the roofline part, during which ``bytes_`` cross the EP's memory port. Under contention that part
    proceeds as a fluid flow capped at ``bytes_ / busy_s``; alone it takes exactly ``busy_s``.
    """

    fixed_s: float
    busy_s: float
    bytes_: float

    @property
    def time_s(self) -> float:
        return self.fixed_s + self.busy_s

    def __add__(self, other: Demand) -> Demand:
        return Demand(self.fixed_s + other.fixed_s, self.busy_s + other.busy_s,
                      self.bytes_ + other.bytes_)


ZERO = Demand(0.0, 0.0, 0.0)


class CostModel:
    """Base class. Subclasses implement :meth:`op_demand` (and may override :meth:`layer_times`
    when they know layers rather than ops, as a measured per-layer table does)."""

    name = "base"

    def __init__(self, platform: Platform):
        self.platform = platform
        self._layer_cache: dict[tuple, np.ndarray] = {}
        self._layer_demand_cache: dict[tuple, list[Demand]] = {}

    # -- the interface --------------------------------------------------------------------
    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        raise NotImplementedError

    def bind(self, workload) -> None:
        """Tell the model the network its ops belong to, before pricing them one by one: a model
        whose op costs depend on the ops around them (the gemm2 model's cache reuse distances)
        computes that context here. Layer times call it themselves; the default does nothing."""

    def op_time(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> float:
        return self.op_demand(op, ep, state).time_s

    def transfer_time(self, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> float:
        return self.platform.route(src, dst).time_s(nbytes)

    def measured_transfer_s(self, nbytes: float, src: ExecutionPlace,
                            dst: ExecutionPlace) -> float | None:
        """A transfer time measured on the real system (it already contains the contention it
        met: the DES replays it as a plain delay), or None to model it on the platform's links."""
        return None

    def supports(self, op, ep: ExecutionPlace) -> bool:
        """Whether ``ep`` can run ``op`` at all (an accelerator may lack an op kind)."""
        return True

    def why_not(self, op, ep: ExecutionPlace) -> str | None:
        """Why ``ep`` cannot run ``op``, in a few words for an error line (None: it can)."""
        return None if self.supports(op, ep) else f"{ep.name} cannot run kind {op.kind}"

    def share_demand(self, op, ep: ExecutionPlace, fraction: float,
                     state: DvfsState | None = None) -> Demand:
        """The cost of computing ``fraction`` of ``op``'s output channels on ``ep`` (a split op:
        μLayer, hybrid partitioning): the fixed part whole, the rest in proportion."""
        d = self.op_demand(op, ep, state)
        return Demand(d.fixed_s, d.busy_s * fraction, d.bytes_ * fraction)

    def gather_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        """The cost of gathering a split op's slices into its output on ``ep`` (a concat): free
        here (slices written in place); cost models that know memory bandwidth charge the copy."""
        return ZERO

    # -- the frame's way in (core_types[].input_stage, feeder_share; docs/calibrate.md) -------
    def input_ep(self, first: ExecutionPlace) -> ExecutionPlace | None:
        """The EP that runs the input stage of a pipeline whose first stage is on ``first``
        (``runtime.input_ep``, else ``first``), or None when that EP's core type has no input stage
        (accelerators have none: their frames come from a core)."""
        name = self.platform.runtime.input_ep
        ep = self.platform.ep(name) if name else first
        if ep.cluster is None:
            return None
        t = self.platform.core_type(self.platform.cluster(ep.cluster).core_type)
        return ep if t.input_stage is not None else None

    def input_time(self, ep: ExecutionPlace, state: DvfsState | None = None) -> float:
        """One frame's input stage on ``ep`` at its level in ``state``, s (0 without one)."""
        if ep.cluster is None:
            return 0.0
        c = self.platform.cluster(ep.cluster)
        t = self.platform.core_type(c.core_type)
        if t.input_stage is None:
            return 0.0
        return t.input_stage.time_s(t.level((state or {}).get(c.name) or c.dvfs).freq_MHz)

    def feeder_factor(self, ep: ExecutionPlace) -> float:
        """How much slower the layers of a first stage on ``ep`` run while the feeder thread takes
        ``feeder_share`` of its cluster: 1 / (1 - share), 1 without one."""
        if ep.cluster is None:
            return 1.0
        share = self.platform.core_type(self.platform.cluster(ep.cluster).core_type).feeder_share
        return 1.0 / (1.0 - share) if share else 1.0

    # -- derived quantities (cached) ---------------------------------------------------------
    def layer_demands(self, workload, ep: ExecutionPlace,
                      state: DvfsState | None = None) -> list[Demand]:
        """Per-layer demands (index 0 = layer 1), each the sum over the layer's ops."""
        key = (workload.name, id(workload), ep, _state_key(state))
        cached = self._layer_demand_cache.get(key)
        if cached is None:
            cached = []
            for layer in workload.layers:
                d = ZERO
                for op in layer.ops:
                    d = d + self.op_demand(op, ep, state)
                cached.append(d)
            self._layer_demand_cache[key] = cached
        return cached

    def layer_times(self, workload, ep: ExecutionPlace,
                    state: DvfsState | None = None) -> np.ndarray:
        """Time of every layer on ``ep`` (index 0 = layer 1), s."""
        key = (workload.name, id(workload), ep, _state_key(state))
        cached = self._layer_cache.get(key)
        if cached is None:
            cached = np.array([d.time_s for d in self.layer_demands(workload, ep, state)], dtype=float)
            cached.setflags(write=False)
            self._layer_cache[key] = cached
        return cached

    def scoring_demands(self, workload, ep: ExecutionPlace,
                        state: DvfsState | None = None) -> list[Demand]:
        """:meth:`layer_demands` for a scorer of many mappings at once: a layer the model cannot
        price on ``ep`` (a measured table without an incapable op's time: an infinite time, or an
        error) is ZERO, which the scorer masks as infeasible anyway (a model that prices every op
        keeps its numbers)."""
        try:
            demands = self.layer_demands(workload, ep, state)
        except HetsimError:
            if all(self.supports(op, ep) for op in workload.ops):
                raise
            return [ZERO if any(not self.supports(op, ep) for op in layer.ops)
                    else sum((self.op_demand(op, ep, state) for op in layer.ops), ZERO)
                    for layer in workload.layers]
        return [d if np.isfinite(d.time_s) else ZERO for d in demands]

    def time_matrix(self, workload, eps: Sequence[ExecutionPlace],
                    state: DvfsState | None = None) -> np.ndarray:
        """T[l, e]: time of layer l+1 on eps[e] (Pipe-it's T matrix), s."""
        return np.column_stack([self.layer_times(workload, ep, state) for ep in eps])


def _state_key(state: DvfsState | None) -> tuple:
    return tuple(sorted(state.items())) if state else ()
