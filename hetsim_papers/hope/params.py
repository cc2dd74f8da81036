"""The ``hope:`` blocks of a core type and an accelerator: what HOPE's cost model reads."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from hetsim.bounds import OptBandwidth_GBps, OptFraction, Overhead_us, UnitInterval
from hetsim.platform.params import CostParams


class HopeCoreParams(CostParams):
    """``core_types[].hope``: what HOPE's cost model (:class:`hetsim_papers.hope.cost.HopeCostModel`)
    adds to the roofline block for a CPU: how an op's time scales with the core clock (HOPE gives
    no cost model, docs/papers/hope.md: ``cl(f) = cl(f_max) [alpha f_max / f + 1 - alpha]``)."""

    readers: ClassVar[tuple[str, ...]] = ("hope",)

    alpha_memory: UnitInterval = Field(
        default=0.5, description="Compute-bound fraction alpha of a memory-bound op (and of a layout "
        "transform): the share of its time at f_max that scales with 1 / f. A compute-bound op's "
        "alpha is 1; an op between the two has alpha = max(compute time / roofline time, this).")


class HopeAcceleratorParams(CostParams):
    """``accelerators[].hope``: HOPE's cost model for a GPU: op kinds it runs poorly, and the cost
    of handing a tensor between it and a CPU cluster, C = sync + copy + layout transform (HOPE
    §4.1; the cost model: docs/papers/hope.md)."""

    readers: ClassVar[tuple[str, ...]] = ("hope",)

    dw_efficiency: OptFraction = Field(
        default=None, description="Fraction of peak_GMACps a depthwise convolution sustains on this "
        "accelerator (default: roofline.efficiency).")
    sync_us: Overhead_us = Field(
        default=0.0, description="Fixed cost of one hand-off to or from a CPU cluster (map/unmap the "
        "buffer, wait for the event), us.")
    zero_copy: bool = Field(
        default=True, description="Buffers shared with the CPU (CL_MEM_ALLOC_HOST_PTR + "
        "clEnqueueMapBuffer, HOPE §4.4): no copy, only the layout transform.")
    copy_GBps: OptBandwidth_GBps = Field(
        default=None, description="Copy rate of a hand-off when zero_copy is false, GB/s (default: the "
        "memory's bandwidth).")
    layout_GBps: OptBandwidth_GBps = Field(
        default=None, description="Rate of the layout transform of a hand-off (MNN: NC4HW4 on the CPU, "
        "an OpenCL image on the GPU), done by the CPU at its maximum frequency, GB/s of tensor; slower "
        "CPU clocks scale it by the core type's hope.alpha_memory (default: no transform).")
