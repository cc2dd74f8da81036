"""The workload file format (``workloads/<name>.yaml``, schema 1), validated with pydantic v2.

This layer checks only types and ranges (unknown keys are rejected); the graph-level checks
(kinds, names, shapes, cycles) live in :mod:`hetsim.workload.loader`, where each error can name
the op. See docs/workloads.md for the format.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, StrictBool, Tag

from hetsim.bounds import DIM, Dim, OptDim, OptPosDim, OptWork, PosDim
from hetsim.bounds import schema_version as _version
from hetsim.workload.ops import DTYPE_BYTES

# Strict ints in their ranges (hetsim.bounds): a YAML "3" (string), a bool or 2^63 must not
# silently become a size.
PosInt = PosDim
#: An element type (ONNX's names in lower case).
DType = Literal["float32", "float16", "bfloat16", "float64", "int8", "uint8", "int16", "uint16",
                "int32", "uint32", "int64", "uint64", "bool"]
assert set(DType.__args__) == set(DTYPE_BYTES)  # type: ignore[attr-defined]


def _is_dims(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(
        isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= DIM[1] for x in value)


def _dims_list(value: Any) -> tuple[tuple[int, ...], ...]:
    """``[1, 128, 768]`` (one output) or ``[[1, 64], [1, 64]]`` (several): a tuple of dims."""
    if _is_dims(value):
        return (tuple(value),)
    if (isinstance(value, list | tuple) and value
            and all(isinstance(d, list | tuple) and _is_dims(d) for d in value)):
        return tuple(tuple(d) for d in value)
    raise ValueError(f"must be the output dims [d0, d1, ...] (integers in [0, {DIM[1]}]) or a list "
                     "of them, one per output")


#: Output dims of a generic op: one list of ints, or one list per output.
DimsList = Annotated[tuple[tuple[int, ...], ...], BeforeValidator(_dims_list)]


def _pair(minimum: int, what: str):
    """Accept ``n`` or ``[a, b]`` (ints >= minimum) and return ``(a, b)``: one clear message
    instead of pydantic's report on each branch of an ``int | tuple`` union."""

    def check(value: Any) -> tuple[int, int]:
        if isinstance(value, int) and not isinstance(value, bool):
            value = (value, value)
        if (isinstance(value, list | tuple) and len(value) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) and minimum <= x <= DIM[1]
                        for x in value)):
            return (value[0], value[1])
        raise ValueError(f"must be {what}")

    return BeforeValidator(check)


#: R (= S) or [R, S].
Kernel = Annotated[tuple[int, int], _pair(1, f"a positive int or [R, S] of positive ints (at most {DIM[1]})")]
#: Same pad on both sides, or [top/left, bottom/right].
Pad = Annotated[tuple[int, int], _pair(0, f"a non-negative int or [begin, end] (at most {DIM[1]})")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ShapeSpec(_Model):
    """A tensor H×W×C."""

    h: PosInt
    w: PosInt
    c: PosInt


class TensorSpec(_Model):
    """A named network input of any rank (an imported model's graph input)."""

    name: Annotated[str, Field(min_length=1)]
    dims: list[Dim]
    dtype: DType = "float32"


def _input_form(value: Any) -> str:
    return "tensor" if isinstance(value, dict) and ("dims" in value or "name" in value) else "hwc"


#: ``{h, w, c}`` or ``{name, dims, dtype}``.
InputSpec = Annotated[Annotated[ShapeSpec, Tag("hwc")] | Annotated[TensorSpec, Tag("tensor")],
                      Discriminator(_input_form)]


class OpSpec(_Model):
    """One op as written in the file. Which fields apply depends on ``kind`` (loader checks)."""

    name: Annotated[str, Field(min_length=1)]
    kind: str
    #: Producer names; omitted = the previous op (the network input for the first op);
    #: ``[]`` = the network input.
    inputs: list[str] | None = None
    #: R (= S) or [R, S].
    kernel: Kernel | None = None
    stride: OptPosDim = None
    #: Same on both sides, or [top/left, bottom/right] (ARM-CL's asymmetric pads, e.g. [0, 1]).
    pad: Pad | None = None
    #: Pooling only: round the output size up (ARM-CL DimensionRoundingType::CEIL, Caffe).
    ceil_mode: StrictBool | None = None
    out_c: OptPosDim = None
    #: conv only: groups of a single grouped-conv node.
    groups: OptPosDim = None
    #: conv only: [i, n] = this node is group i of an n-way grouped conv run as n nodes.
    group: tuple[PosInt, PosInt] | None = None
    #: reshape only: the target shape (same element count).
    shape: ShapeSpec | None = None
    #: Declare the input shape instead of inferring it from the producer (a shape break;
    #: SynthNet uses it to restart an AlexNet replica). Single-input kinds only.
    input_shape: ShapeSpec | None = None
    #: Override the workload's ``layer_kinds`` for this op.
    layer_start: StrictBool | None = None
    #: conv/dw: kernel dilation (ONNX ``dilations``).
    dilation: OptPosDim = None
    #: The source framework's op type (``Conv``, ``MatMul``, ``Erf``...), kept for capability rules
    #: and for matching measured profiles.
    op_type: str | None = None
    #: Element type of the op's output (default float32).
    dtype: DType | None = None
    #: Output dims of a generic op (any kind): given dims switch shape inference off and take the
    #: counts below as written (see docs/workloads.md, "Generic ops").
    dims: DimsList | None = None
    #: Counts: required or defaulted for generic ops, overrides of the derived value for CNN ops.
    macs: OptWork = None
    flops: OptWork = None
    input_bytes: OptWork = None
    output_bytes: OptWork = None
    weight_bytes: OptWork = None
    im2col_bytes: OptWork = None
    #: (N, K, M) of the op's GEMM, per group/batch element.
    gemm: tuple[PosInt, PosInt, PosInt] | None = None
    #: How many GEMMs of size ``gemm`` the op runs (batched matmul, RNN time steps).
    gemm_groups: OptDim = None


class WorkloadSpec(_Model):
    """A whole workload file."""

    schema_version: Annotated[Literal[1], _version(1)] = Field(alias="schema")
    name: Annotated[str, Field(min_length=1)]
    description: str = ""
    source: str = ""
    #: The network input: ``{h, w, c}`` or a named tensor ``{name, dims, dtype}``.
    input: InputSpec
    #: Further named network inputs (an imported model with several graph inputs).
    extra_inputs: list[TensorSpec] = Field(default_factory=list)
    #: Op kinds that start a new layer; other ops join the layer of the op before them.
    layer_kinds: Annotated[list[str], Field(min_length=1)]
    ops: Annotated[list[OpSpec], Field(min_length=1)]
