"""The ``pipeit:`` block of a core type: what only Pipe-it's ground truth reads."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from hetsim.bounds import OptBandwidth_GBps, OptCount
from hetsim.platform.params import CostParams


class PipeitCoreParams(CostParams):
    """``core_types[].pipeit``: what only the Pipe-it ground truth (:class:`hetsim_papers.pipeit.cost.PipeitGroundTruth`)
    reads on top of the roofline block."""

    readers: ClassVar[tuple[str, ...]] = ("pipeit-ground-truth",)
    v1_fields: ClassVar[tuple[str, ...]] = ("gemm_tile_cols", "gemv_GBps_per_core")

    gemm_tile_cols: OptCount = Field(
        default=None, description="If set, a GEMM's M columns are computed in blocks of this many (arm_gemm's "
        "output block width), so M is padded up to a multiple of it.")
    gemv_GBps_per_core: OptBandwidth_GBps = Field(
        default=None, description="Rate at which one core streams the weights of a fully connected layer (a GEMV at "
        "batch 1, memory-bound), GB/s (default: bandwidth_GBps_per_core).")
