"""The ``sustained`` cost model: hetsim's roofline at the clock a core type sustains under load.

A phone or a fanless board runs its big cores at their top DVFS level for seconds, then a thermal
governor caps them: what a pipeline sustains is set by that lower clock. The model reads each core
type's ``sustained.clock_fraction`` f (:mod:`hetsim_example.params`, default 1) and prices an op as
the roofline does with every compute rate of the core type scaled by f::

    compute_s = MACs / (roofline rate x f)          (conv, fc, depthwise; per depthwise tap: / f)
    mem_s     = bytes / bandwidth                    (unchanged: the memory clock is not capped)
    op_time   = overhead + max(compute_s, mem_s)

so a compute-bound op takes 1/f times as long and a memory-bound one as long as before.
Accelerators keep their rates (the block is a core type's).
"""

from __future__ import annotations

from dataclasses import replace

from hetsim.cost import EpRates, RooflineCostModel
from hetsim.cost.base import DvfsState
from hetsim.platform import ExecutionPlace, Platform


class SustainedClockCostModel(RooflineCostModel):
    """The roofline model with each core type's compute rates scaled by its
    ``sustained.clock_fraction`` (module docstring)."""

    name = "sustained"

    def __init__(self, platform: Platform):
        super().__init__(platform)
        self._sustained: dict[tuple, EpRates] = {}

    def ep_rates(self, ep: ExecutionPlace, state: DvfsState | None = None) -> EpRates:
        key = (ep, (state or {}).get(ep.place))
        cached = self._sustained.get(key)
        if cached is not None:
            return cached
        rates = super().ep_rates(ep, state)
        if ep.cluster is not None:   # cores (an accelerator keeps its rates)
            f = self.platform.core_type(self.platform.cluster(ep.cluster).core_type).sustained.clock_fraction
            rates = replace(rates, gemm_MACps=rates.gemm_MACps * f, dw_MACps=rates.dw_MACps * f,
                            gemm_MACps_per_core=rates.gemm_MACps_per_core * f,
                            dw_strided_MACps=None if rates.dw_strided_MACps is None else rates.dw_strided_MACps * f,
                            dw_tap_s=rates.dw_tap_s / f)
        self._sustained[key] = rates
        return rates
