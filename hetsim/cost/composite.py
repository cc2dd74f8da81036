"""A measured table mixed with another cost model for the entries it lacks.

A user with measured layer times of one EP (an NPU's, from its vendor's profiler) and nothing for
the others, or per-op times of most ops but not all, gets one cost model: the measured time where
the table has one, the fallback model's (the roofline's) elsewhere::

    cost = CompositeCostModel(MeasuredCostModel(platform, "npu_times.csv"), RooflineCostModel(platform))
    cost.coverage(workload, platform.eps())      # how many entries are measured
    # hetsim simulate|explore ... --cost-table npu_times.csv --fallback roofline

* A table keyed by layer: a layer with a row for the EP takes its measured time; another takes the
  sum of the fallback's times of its ops.
* A table keyed by op: an op with a row for the EP takes its measured time; another the fallback's
  (so an op missing from the table is no longer "not capable" there: the fallback decides that).
* Transfers: the measured copies where the table has them (``transfers.csv``), the platform's links
  otherwise (as :class:`~hetsim.cost.MeasuredCostModel` alone does).

[choice] A measured time is replayed as a fixed delay (it contains the contention it met), a
fallback time keeps its roofline split into fixed and memory-bound parts, so the DES contends only
the modelled entries.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hetsim.cost.base import CostModel, Demand, DvfsState
from hetsim.cost.measured import MeasuredCostModel
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace


class CompositeCostModel(CostModel):
    """``measured`` where it has an entry, ``fallback`` for the rest (module docstring)."""

    def __init__(self, measured: MeasuredCostModel, fallback: CostModel):
        if measured.platform is not fallback.platform:
            raise ValueError("the measured and fallback cost models must describe one platform")
        super().__init__(measured.platform)
        self.measured, self.fallback = measured, fallback
        self.name = f"{measured.name}+{fallback.name}"
        self.keyed_by = measured.keyed_by

    # -- ops ------------------------------------------------------------------------------------
    def _op_time(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> float | None:
        if self.keyed_by != "op":
            return None
        return self.measured.measured_time(getattr(op, "workload", "*"), op.name, ep, state)

    def supports(self, op, ep: ExecutionPlace) -> bool:
        flag = self.measured.capable(op, ep)   # the capability table decides where it has a row
        if flag is not None:
            return flag
        return self._op_time(op, ep) is not None or self.fallback.supports(op, ep)

    def why_not(self, op, ep: ExecutionPlace) -> str | None:
        if self.supports(op, ep):
            return None
        if self.measured.capable(op, ep) is False:
            return self.measured.why_not(op, ep)
        return self.fallback.why_not(op, ep)

    def fallback_note(self) -> str | None:
        return self.measured.fallback_note()

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        if self.keyed_by == "layer":
            raise HetsimError(f"{self.measured.source} is keyed by layer; per-op costs (DAG placements) "
                              f"need a table keyed by op")
        t = self._op_time(op, ep, state)
        if t is not None:
            return Demand(t, 0.0, 0.0)
        return self.fallback.op_demand(op, ep, state)

    def share_demand(self, op, ep, fraction, state=None) -> Demand:
        if self._op_time(op, ep) is not None:
            return super().share_demand(op, ep, fraction, state)
        return self.fallback.share_demand(op, ep, fraction, state)

    def gather_demand(self, op, ep, state=None) -> Demand:
        return self.fallback.gather_demand(op, ep, state)

    # -- layers -----------------------------------------------------------------------------------
    def _measured_layer(self, workload, index: int, ep: ExecutionPlace) -> float | None:
        if self.keyed_by != "layer":
            return None
        return self.measured.measured_time(workload.name, index, ep)

    def layer_demands(self, workload, ep: ExecutionPlace, state: DvfsState | None = None) -> list[Demand]:
        if self.keyed_by == "op":
            return super().layer_demands(workload, ep, state)
        out = []
        fallback = None
        for i in range(1, workload.num_layers + 1):
            t = self._measured_layer(workload, i, ep)
            if t is not None:
                out.append(Demand(t, 0.0, 0.0))
                continue
            if fallback is None:
                fallback = self.fallback.layer_demands(workload, ep, state)
            out.append(fallback[i - 1])
        return out

    def layer_times(self, workload, ep: ExecutionPlace, state: DvfsState | None = None) -> np.ndarray:
        if self.keyed_by == "op":
            return super().layer_times(workload, ep, state)
        return np.array([d.time_s for d in self.layer_demands(workload, ep, state)], dtype=float)

    # -- transfers --------------------------------------------------------------------------------
    def transfer_time(self, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> float:
        return self.measured.transfer_time(nbytes, src, dst)

    def measured_transfer_s(self, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> float | None:
        return self.measured.measured_transfer_s(nbytes, src, dst)

    # -- what is measured ---------------------------------------------------------------------------
    def coverage(self, workload, eps: Sequence[ExecutionPlace]) -> tuple[int, int]:
        """(measured, total) entries (layer x EP or op x EP) of ``workload`` on ``eps``."""
        measured = total = 0
        for ep in eps:
            if self.keyed_by == "layer":
                for i in range(1, workload.num_layers + 1):
                    total += 1
                    measured += self._measured_layer(workload, i, ep) is not None
            else:
                for op in workload.ops:
                    total += 1
                    measured += self._op_time(op, ep) is not None
        return measured, total


__all__ = ["CompositeCostModel"]
