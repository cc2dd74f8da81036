"""Closed-form contention of a pipeline: the fluid share of each memory and link by the stages'
demands (the analytic engine's estimate of what the DES's bandwidth servers do).

In the steady state at X frames/s, a memory that several stages use moves X x (the bytes their
layers stream per frame) bytes/s, and a link that several stages' hand-offs cross carries X x (the
bytes of those cuts): neither can exceed its bandwidth. So besides X <= 1 / the slowest stage (the
closed form, each stage timed alone), X <= bandwidth / bytes per frame for every shared memory and
link. The estimate is the least of these bounds::

    X = min(1 / max_i t_i,  min_r capacity_r / bytes_r)

* Exact when nothing saturates: a resource whose bound is not the least changes nothing, and then
  the closed form is the DES's answer whenever the stages' flows fit in the bandwidth at every
  instant (the DES caps each flow at its own uncontended rate).
* When a resource saturates, the estimate is its fluid limit: every byte of a frame must cross it,
  and it delivers at most its bandwidth. The DES lands at or a little below that limit (flows
  capped at their own rates leave some bandwidth idle while only some of them are active).

The resources are those the DES gives a bandwidth server (:func:`hetsim.sim.pipeline.run_pipeline`):
a memory used by two or more stages (a memory only one stage uses runs that stage's closed-form
time), and the narrowest link of two or more stages' hand-offs (a measured transfer replays as a
plain delay and loads no link). A memory with a saturation knee delivers its capacity at as many
flows as stages share it (the most that can be active at once).

:class:`FluidScorer` evaluates the same bound for many splits at once (prefix sums of the bytes),
for :class:`~hetsim.analytic.SplitScorer`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsim.cost import ZERO, CostModel, DvfsState
from hetsim.mapping import Pipeline


@dataclass(frozen=True)
class FluidBound:
    """The least fluid bound of a pipeline's shared resources: ``fps`` (inf when no memory or link
    is shared), the ``resource`` that sets it (``"memory dram"``, ``"link nop"``; None when none
    is shared) and, per shared resource, (capacity B/s, bytes per frame)."""

    fps: float
    resource: str | None
    loads: dict[str, tuple[float, float]]


def memory_capacity_Bps(memory, flows: int) -> float:
    """What a memory delivers in all with ``flows`` flows active (its saturation knee, if any):
    the DES's :meth:`~hetsim.sim.bandwidth.BandwidthServer.capacity_Bps`."""
    bandwidth = memory.bandwidth_GBps * 1e9
    sat = memory.saturation
    if sat is None or flows <= sat.knee_flows:
        return bandwidth
    return bandwidth / (1.0 + sat.loss_per_flow * (flows - sat.knee_flows))


def pipeline_loads(platform, workload, pipe: Pipeline, cost: CostModel,
                   state: DvfsState | None = None) -> dict[str, tuple[float, float]]:
    """(capacity B/s, bytes per frame) of every memory and link two or more stages share."""
    stages = pipe.stages
    mem_bytes: dict[str, list[float]] = {}
    for s in stages:
        d = sum(cost.layer_demands(workload, s.ep, state)[s.first - 1:s.last], ZERO)
        mem_bytes.setdefault(s.ep.memory, []).append(float(d.bytes_))
    loads: dict[str, tuple[float, float]] = {}
    for name, per_stage in mem_bytes.items():
        if len(per_stage) > 1:
            loads[f"memory {name}"] = (memory_capacity_Bps(platform.memory(name), len(per_stage)), sum(per_stage))
    link_bytes: dict[str, list[float]] = {}
    for i, s in enumerate(stages[:-1]):
        nxt = stages[i + 1].ep
        nbytes = float(workload.cut_bytes(s.last))
        route = platform.route(s.ep, nxt)
        if not route.links or route.bottleneck is None or nbytes <= 0:
            continue
        if cost.measured_transfer_s(nbytes, s.ep, nxt) is not None:
            continue   # a measured copy already contains its contention (a plain delay in the DES)
        link_bytes.setdefault(route.bottleneck, []).append(nbytes)
    bandwidth = {lk.name: lk.bandwidth_GBps * 1e9 for lk in platform.links}
    for name, per_route in link_bytes.items():
        if len(per_route) > 1:
            loads[f"link {name}"] = (bandwidth[name], sum(per_route))
    return loads


def fluid_bound(platform, workload, pipe: Pipeline, cost: CostModel,
                state: DvfsState | None = None) -> FluidBound:
    """The least fluid bound of ``pipe``'s shared memories and links (module docstring)."""
    loads = pipeline_loads(platform, workload, pipe, cost, state)
    best, which = math.inf, None
    for name, (capacity, nbytes) in loads.items():
        if nbytes > 0 and capacity / nbytes < best:
            best, which = capacity / nbytes, name
    return FluidBound(best, which, loads)


class FluidScorer:
    """The fluid bound of many splits over one EP order at once: bytes by prefix sums over the
    layers (per EP), summed per shared memory, and the cut bytes per shared link."""

    def __init__(self, platform, workload, cost: CostModel, eps: Sequence, state: DvfsState | None = None):
        self.platform = platform
        self.eps = list(eps)
        nbytes = np.array([[d.bytes_ for d in cost.scoring_demands(workload, ep, state)] for ep in self.eps],
                          dtype=float).T                       # (layers, eps)
        self.prefix = np.vstack([np.zeros((1, len(self.eps))), np.cumsum(nbytes, axis=0)])
        self.cut_bytes = np.asarray(workload.cut_bytes_array(), dtype=float)
        self.memories = [ep.memory for ep in self.eps]
        e = len(self.eps)
        self.link = [[None] * e for _ in range(e)]
        for a in range(e):
            for b in range(e):
                r = platform.route(self.eps[a], self.eps[b])
                # a measured transfer time replays as a plain delay in the DES: it loads no link
                measured = cost.measured_transfer_s(1.0, self.eps[a], self.eps[b]) is not None
                if r.links and r.bottleneck is not None and not measured:
                    self.link[a][b] = r.bottleneck
        self.link_Bps = {lk.name: lk.bandwidth_GBps * 1e9 for lk in platform.links}

    def fps(self, bounds: np.ndarray, order: Sequence[int]) -> np.ndarray | None:
        """(splits,) fluid bound of every split in ``bounds`` (rows [0, c1, ..., M]) with stage i
        on EP ``order[i]``; None when this order shares no memory or link (no bound)."""
        o = [int(x) for x in order]
        out: np.ndarray | None = None
        by_memory: dict[str, list[int]] = {}
        for i, e in enumerate(o):
            by_memory.setdefault(self.memories[e], []).append(i)
        for name, stages in by_memory.items():
            if len(stages) < 2:
                continue
            total = sum(self.prefix[bounds[:, i + 1], o[i]] - self.prefix[bounds[:, i], o[i]] for i in stages)
            cap = memory_capacity_Bps(self.platform.memory(name), len(stages))
            out = _least(out, cap, total)
        by_link: dict[str, list[int]] = {}
        for i in range(len(o) - 1):
            link = self.link[o[i]][o[i + 1]]
            if link is not None:
                by_link.setdefault(link, []).append(i)
        for name, cuts in by_link.items():
            if len(cuts) < 2:
                continue
            total = sum(self.cut_bytes[bounds[:, i + 1]] for i in cuts)
            out = _least(out, self.link_Bps[name], total)
        return out


def _least(current: np.ndarray | None, capacity: float, nbytes) -> np.ndarray:
    with np.errstate(divide="ignore"):
        bound = np.where(nbytes > 0, capacity / np.where(nbytes > 0, nbytes, 1.0), math.inf)
    return bound if current is None else np.minimum(current, bound)
