"""The ``ncnn:`` block of a core type or accelerator: the ncnn runtime model."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from hetsim.bounds import Count, Memory_MiB, OptFraction, OptPower_W, WinogradTile
from hetsim.platform.params import CostParams


class NcnnParams(CostParams):
    """``core_types[].ncnn`` / ``accelerators[].ncnn``: what the ncnn runtime model of the hybrid
    partitioning reproduction (:class:`hetsim_papers.nsga2.cost.NcnnCostModel`: the Jetson cluster that
    AutoDiCE deploys on, seed 004) reads on top of the roofline block: Winograd convolutions, the
    runtime's own memory, and the power drawn by kind of work."""

    readers: ClassVar[tuple[str, ...]] = ("ncnn",)

    winograd_efficiency: OptFraction = Field(
        default=None, description="Fraction of the peak MAC rate a Winograd convolution's batched GEMMs "
        "sustain on its reduced MACs. None: every convolution runs as im2col + GEMM.")
    winograd_tile: WinogradTile = Field(
        default=6, description="Output tile m of Winograd F(m x m, 3 x 3): a 3x3 convolution costs "
        "(m+2)^2 / (9 m^2) of its direct MACs (F(6,3): 0.198).")
    winograd_min_channels: Count = Field(
        default=16, description="A 3x3 stride-1 ungrouped convolution with at least this many input and "
        "output channels runs as Winograd.")
    runtime_MiB: Memory_MiB = Field(
        default=0.0, description="Memory the runtime process holds besides tensors and weights (libraries, "
        "MPI, allocator pools, a GPU context), MiB.")
    memory_bound_W: OptPower_W = Field(
        default=None, description="Power of the whole place while it runs a memory-bound op, W (default: "
        "its active power).")
    comm_W: OptPower_W = Field(
        default=None, description="Power of the whole place while it is blocked in a send or receive, W "
        "(MPI busy-polls; default: memory_bound_W).")
