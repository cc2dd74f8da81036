"""The ``pim:`` blocks of a core type and an accelerator: the PIM paper's per-op model."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from hetsim.bounds import ElementBytes, Factor, Overhead_us, PerUnit_ns, PosPerUnit_ns, Speedup
from hetsim.platform.params import CostParams


class PimCpuParams(CostParams):
    """``core_types[].pim``: the CPU side of the PIM paper's per-op model (:class:`hetsim_papers.pim.cost.PimCostModel`,
    seed 003, docs/papers/pim.md). A one-core EP is the paper's CPU_S (ONNX Runtime kernels run
    serially); an EP of more cores is CPU_P (its thread-parallel kernels, for the op types in
    ``parallel_op_types`` only)."""

    readers: ClassVar[tuple[str, ...]] = ("pim",)

    op_overhead_us: Overhead_us = Field(
        default=0.0, description="Fixed cost of every ONNX Runtime node on the CPU (kernel dispatch), us; "
        "all that a view or shape node costs.")
    elementwise_ns: PosPerUnit_ns = Field(
        default=1.0, description="One core's time per output element of an element-wise op (add, sub, mul; "
        "copies per element moved; reductions per element read), ns.")
    function_factor: Factor = Field(
        default=1.0, description="Element-wise ops that evaluate a function (Div, Pow, Sqrt, Erf, Tanh, "
        "Exp, Softmax...) take this many times elementwise_ns per element.")
    matmul_ns_per_weight: PerUnit_ns = Field(
        default=0.0, description="One core's MatMul/Gemm cost per element of the second operand (the "
        "weight, loaded once and then reused from cache), ns.")
    matmul_ns_per_mac: PosPerUnit_ns = Field(
        default=1.0, description="One core's MatMul/Gemm cost per multiply-accumulate, ns.")
    parallel_speedup_elementwise: Speedup = Field(
        default=1.0, description="A multi-core EP divides the per-element part of an element-wise op by "
        "this (CPU_P's thread-parallel kernels).")
    parallel_overhead_elementwise_us: Overhead_us = Field(
        default=0.0, description="Fork/join cost a multi-core EP adds to an element-wise op, us.")
    parallel_speedup_matmul: Speedup = Field(
        default=1.0, description="A multi-core EP divides the variable part of a MatMul/Gemm by this.")
    parallel_overhead_matmul_us: Overhead_us = Field(
        default=0.0, description="Fork/join cost a multi-core EP adds to a MatMul/Gemm, us.")
    parallel_op_types: list[str] | None = Field(
        default=None, description="ONNX op types a multi-core EP runs thread-parallel (any other op is not "
        "capable there); default: the paper's set (MatMul, Gemm, Add, Sub, Mul, Div: "
        "hetsim_papers.pim.networks.CPU_P_OP_TYPES).")
    handoff_us: Overhead_us = Field(
        default=0.0, description="Cost of handing a tensor between two CPU EPs on one memory (CPU_S <-> "
        "CPU_P: no copy, an optional synchronisation), us.")


class PimUnitParams(CostParams):
    """``accelerators[].pim``: the PIM unit of the PIM paper's model (:class:`hetsim_papers.pim.cost.PimCostModel`):
    its per-op costs (a MatMul or Gemm streams the weight once per row of the activation at
    ``peak_GMACps``) and the CPU <-> PIM copy (a CPU-side type conversion, then a DMA over the
    link at its bandwidth, slower out of the PIM's uncacheable memory)."""

    readers: ClassVar[tuple[str, ...]] = ("pim",)

    op_overhead_us: Overhead_us = Field(default=0.0, description="Fixed cost of every op on the PIM unit, us.")
    elementwise_ns: PerUnit_ns = Field(
        default=0.0, description="The PIM unit's time per output element of an element-wise op, ns.")
    transpose_ns_per_weight: PerUnit_ns = Field(
        default=0.0, description="Extra cost of a Gemm whose weight must be transposed first ((p,q)x(r,q)^T, "
        "Table 2 Gemm (2)), per weight element, ns.")
    wire_bytes_per_element: ElementBytes = Field(
        default=2.0, description="Bytes per element the DMA moves after the type conversion (bfloat16: 2).")
    host_bytes_per_element: ElementBytes = Field(
        default=4.0, description="Bytes per element of a tensor on the CPU side (float32: 4).")
    conversion_ns_per_element: PerUnit_ns = Field(
        default=0.0, description="CPU time of the fp32 <-> bf16 conversion per element, either direction, ns.")
    uncacheable_read_ns_per_byte: PerUnit_ns = Field(
        default=0.0, description="Extra DMA time per wire byte of a PIM -> CPU copy, which reads the PIM's "
        "uncacheable memory (a CPU -> PIM copy reads cacheable memory at the link's bandwidth), ns.")
    copy_setup_us: Overhead_us = Field(default=0.0, description="Fixed cost of every CPU <-> PIM copy, us.")
