"""The workload file format (``workloads/<name>.yaml``, schema 1), validated with pydantic v2.

This layer checks only types and ranges (unknown keys are rejected); the graph-level checks
(kinds, names, shapes, cycles) live in :mod:`hetsim.workload.loader`, where each error can name
the op. See docs/workloads.md for the format.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, Strict

# Strict ints: a YAML "3" (string) or a bool must not silently become a size.
PosInt = Annotated[int, Strict(), Field(gt=0)]


def _pair(minimum: int, what: str):
    """Accept ``n`` or ``[a, b]`` (ints >= minimum) and return ``(a, b)``: one clear message
    instead of pydantic's report on each branch of an ``int | tuple`` union."""

    def check(value: Any) -> tuple[int, int]:
        if isinstance(value, int) and not isinstance(value, bool):
            value = (value, value)
        if (isinstance(value, list | tuple) and len(value) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) and x >= minimum
                        for x in value)):
            return (value[0], value[1])
        raise ValueError(f"must be {what}")

    return BeforeValidator(check)


#: R (= S) or [R, S].
Kernel = Annotated[tuple[int, int], _pair(1, "a positive int or [R, S] of positive ints")]
#: Same pad on both sides, or [top/left, bottom/right].
Pad = Annotated[tuple[int, int], _pair(0, "a non-negative int or [begin, end]")]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ShapeSpec(_Model):
    """A tensor H×W×C."""

    h: PosInt
    w: PosInt
    c: PosInt


class OpSpec(_Model):
    """One op as written in the file. Which fields apply depends on ``kind`` (loader checks)."""

    name: Annotated[str, Field(min_length=1)]
    kind: str
    #: Producer names; omitted = the previous op (the network input for the first op);
    #: ``[]`` = the network input.
    inputs: list[str] | None = None
    #: R (= S) or [R, S].
    kernel: Kernel | None = None
    stride: PosInt | None = None
    #: Same on both sides, or [top/left, bottom/right] (ARM-CL's asymmetric pads, e.g. [0, 1]).
    pad: Pad | None = None
    #: Pooling only: round the output size up (ARM-CL DimensionRoundingType::CEIL, Caffe).
    ceil_mode: bool | None = None
    out_c: PosInt | None = None
    #: conv only: groups of a single grouped-conv node.
    groups: PosInt | None = None
    #: conv only: [i, n] = this node is group i of an n-way grouped conv run as n nodes.
    group: tuple[PosInt, PosInt] | None = None
    #: reshape only: the target shape (same element count).
    shape: ShapeSpec | None = None
    #: Declare the input shape instead of inferring it from the producer (a shape break;
    #: SynthNet uses it to restart an AlexNet replica). Single-input kinds only.
    input_shape: ShapeSpec | None = None
    #: Override the workload's ``layer_kinds`` for this op.
    layer_start: bool | None = None


class WorkloadSpec(_Model):
    """A whole workload file."""

    schema_version: Literal[1] = Field(alias="schema")
    name: Annotated[str, Field(min_length=1)]
    description: str = ""
    source: str = ""
    input: ShapeSpec
    #: Op kinds that start a new layer; other ops join the layer of the op before them.
    layer_kinds: Annotated[list[str], Field(min_length=1)]
    ops: Annotated[list[OpSpec], Field(min_length=1)]
