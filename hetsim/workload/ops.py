"""Ops: the nodes of a workload DAG, with the shape arithmetic the papers use.

Vocabulary (kept from the papers so that the code can be checked against them):

* Pipe-it (001 digest §4.1, eqs. 3-4): input tensor {I_w, I_h, I_d}, filters {F_w, F_h, F_d, Ofm},
  padding Pad, stride S; the convolution lowers by im2col to a GEMM [N×K]·[K×M] with
  N = O_w·O_h, K = F_w·F_h·F_d, M = Ofm.
* Pipe-search / Shisha (000 digest §3.1, eqs. 1-2): input tensor H×W×C, kernel R×S, K filters,
  F outputs of an FC layer; the compile-time "weight" (hint) W_C = H·W·C·R·S·K on the *input* H, W.

Tensors are H×W×C (batch 1, FP32 = 4 bytes per element, as the papers' ARM-CL / XiTAO runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import NamedTuple

#: Bytes per tensor element: every paper runs FP32 (001 digest §3.1; 000 digest §2).
BYTES_PER_ELEMENT = 4


class OpKind(StrEnum):
    """What an op computes. A ``StrEnum``, so ``op.kind == "conv"`` works."""

    CONV = "conv"  # (grouped) convolution, lowered to GEMM by im2col (Pipe-it eqs. 3-4)
    DW = "dw"  # depthwise convolution (one filter per channel; not a GEMM in ARM-CL)
    FC = "fc"  # fully connected = GEMV at batch 1 (Pipe-it §V-D)
    MAXPOOL = "maxpool"
    AVGPOOL = "avgpool"
    RELU = "relu"  # any pointwise activation: ReLU, ReLU6 (MobileNet), leaky ReLU (Darknet)
    LRN = "lrn"  # local response normalisation (AlexNet, GoogLeNet)
    BN = "bn"  # batch normalisation at inference (per-channel scale and shift)
    ADD = "add"  # element-wise sum (residual connections)
    CONCAT = "concat"  # channel concatenation (inception, fire modules, grouped-conv halves)
    SOFTMAX = "softmax"
    FLATTEN = "flatten"  # a view: H×W×C -> 1×1×(H·W·C); no data moves
    RESHAPE = "reshape"  # a view to an explicit shape with the same element count


#: Kinds that are lowered to a GEMM (Pipe-it eq. 4) and so have (N, K, M).
GEMM_KINDS = frozenset({OpKind.CONV, OpKind.DW, OpKind.FC})
#: Kinds with a sliding window (kernel, stride, pad).
WINDOW_KINDS = frozenset({OpKind.CONV, OpKind.DW, OpKind.MAXPOOL, OpKind.AVGPOOL})
POOL_KINDS = frozenset({OpKind.MAXPOOL, OpKind.AVGPOOL})
#: Kinds that read several tensors (all other kinds read exactly one).
MULTI_INPUT_KINDS = frozenset({OpKind.ADD, OpKind.CONCAT})
#: Views: they cost nothing to run (no kernel, no traffic). Their output is still a tensor, so it
#: still has to cross a pipeline cut if a later stage reads it.
VIEW_KINDS = frozenset({OpKind.FLATTEN, OpKind.RESHAPE})


class Shape(NamedTuple):
    """An activation tensor, H×W×C (height, width, channels/depth)."""

    h: int
    w: int
    c: int

    @property
    def elements(self) -> int:
        return self.h * self.w * self.c

    def __str__(self) -> str:
        return f"{self.h}x{self.w}x{self.c}"


def window_out_size(size: int, kernel: int, stride: int, pad: tuple[int, int],
                    ceil_mode: bool = False) -> int:
    """Output extent of a sliding window along one axis (Pipe-it eq. 3).

    ``O = floor((I - F + pad_begin + pad_end) / S) + 1``; Pipe-it writes ``2·Pad`` because its
    pads are symmetric, ARM-CL also uses asymmetric ones such as (0, 1) for MobileNet's stride-2
    depthwise convs. With ``ceil_mode`` (ARM-CL ``DimensionRoundingType::CEIL``, Caffe pooling)
    the division rounds up, but as in Caffe/PyTorch the last window must start inside the input or
    its leading pad. Returns a value < 1 when the kernel does not fit in the padded input.
    """
    span = size + pad[0] + pad[1] - kernel
    if span < 0:
        return 0
    if not ceil_mode:
        return span // stride + 1
    out = -(-span // stride) + 1
    if (out - 1) * stride >= size + pad[0]:
        out -= 1
    return out


@dataclass(frozen=True)
class Op:
    """One node of a workload DAG.

    Fields are what the YAML file says plus the inferred shapes; everything else is a derived
    property (cached, the op being immutable). ``in_shape`` is the tensor the op computes on: for
    a conv it is the whole input tensor (the H×W×C of Eq. 1 and the {I_w, I_h, I_d} of Pipe-it).
    """

    name: str
    kind: OpKind
    #: Producer op names; empty = the network input.
    inputs: tuple[str, ...]
    #: H×W×C of the first input (or the shape declared by ``input_shape``, see ``shape_override``).
    in_shape: Shape
    out_shape: Shape
    #: 1-based index of the layer (pipeline unit) this op belongs to.
    layer: int
    #: True if this op started its layer (the layer's *major* op).
    starts_layer: bool = False
    kernel: tuple[int, int] = (1, 1)  # (R, S) = (F_h, F_w)
    stride: int = 1
    pad: tuple[int, int] = (0, 0)  # (top/left, bottom/right), the same on both axes
    ceil_mode: bool = False
    #: Convolution groups of a single grouped-conv node (``dw``: the channel count).
    groups: int = 1
    #: (i, n): this node is group i (1-based) of an n-way grouped conv that the framework runs as
    #: n separate nodes, each reading channels [(i-1)·C/n, i·C/n) of its input. ARM-CL does this
    #: for AlexNet's conv2/4/5 (001 digest Table I note), so each half is its own major layer.
    group_node: tuple[int, int] | None = None
    #: Shapes of all inputs, in ``inputs`` order (add/concat read several).
    in_shapes: tuple[Shape, ...] = ()
    #: True when ``in_shape`` was declared with ``input_shape`` rather than inferred from the
    #: producer (a deliberate shape break, used only by SynthNet; see docs/workloads.md).
    shape_override: bool = False

    # -- shape helpers --------------------------------------------------------------------------
    @property
    def out_c(self) -> int:
        """Output channels (Ofm, K of Eq. 1, F of Eq. 2)."""
        return self.out_shape.c

    @cached_property
    def filter_depth(self) -> int:
        """Channels each filter sees: F_d of Pipe-it eq. 4 (= C / groups, halved for group nodes)."""
        c = self.in_shape.c
        if self.group_node is not None:
            c //= self.group_node[1]
        return c // self.groups

    # -- GEMM lowering (Pipe-it eqs. 3-4) ----------------------------------------------------
    @cached_property
    def gemm(self) -> tuple[int, int, int] | None:
        """(N, K, M) of the op's GEMM lowering (Pipe-it eqs. 3-4), per group; None if not a GEMM.

        * conv: N = O_w·O_h (one im2col row per output pixel), K = F_w·F_h·F_d (patch length, F_d
          the channels of one group), M = Ofm / groups.
        * fc: N = 1 (a GEMV at batch 1), K = input features H·W·C, M = outputs.
        * dw: N = O², K = R·S (9), M = C, the 001 digest Appendix A convention, so that N·K·M is
          the MAC count. ARM-CL runs depthwise convs with a dedicated kernel, not a GEMM.
        """
        if self.kind == OpKind.CONV:
            r, s = self.kernel
            return (self.out_shape.h * self.out_shape.w, r * s * self.filter_depth,
                    self.out_c // self.groups)
        if self.kind == OpKind.DW:
            r, s = self.kernel
            return (self.out_shape.h * self.out_shape.w, r * s, self.out_c)
        if self.kind == OpKind.FC:
            return (1, self.in_shape.elements, self.out_c)
        return None

    @cached_property
    def gemm_groups(self) -> int:
        """How many GEMMs of size ``gemm`` the op runs: ``groups`` for conv, 1 for fc and dw
        (whose ``gemm`` already spans all channels), 0 for non-GEMM ops."""
        if self.kind == OpKind.CONV:
            return self.groups
        return 1 if self.kind in GEMM_KINDS else 0

    # -- work -----------------------------------------------------------------------------------
    @cached_property
    def macs(self) -> int:
        """True multiply-accumulates: N·K·M·gemm_groups (Pipe-it eq. 4 "arithmetic ∝ N·K·M").

        Uses the strided output size, unlike ``weight_hint``. Grouped conv divides K by the groups;
        dw = O_h·O_w·R·S·C; fc = in_features·out. Pooling, element-wise and views are 0 MACs
        (their cost is memory traffic, see ``input_bytes``/``output_bytes``).
        """
        g = self.gemm
        if g is None:
            return 0
        return g[0] * g[1] * g[2] * self.gemm_groups

    @cached_property
    def flops(self) -> int:
        """Floating-point operations: 2·MACs for conv/dw/fc (bias adds ignored); R·S per output
        element for pooling (every window element is compared or summed once); 1 per output
        element for relu, bn, lrn, softmax and one per output element per extra input for add;
        0 for concat and views. The non-GEMM counts are orders of magnitude, good for memory-bound
        cost terms, never for a GEMM model."""
        if self.kind in GEMM_KINDS:
            return 2 * self.macs
        n = self.out_shape.elements
        if self.kind in POOL_KINDS:
            return n * self.kernel[0] * self.kernel[1]
        if self.kind == OpKind.ADD:
            return n * (len(self.in_shapes) - 1)
        if self.kind in (OpKind.RELU, OpKind.BN, OpKind.LRN, OpKind.SOFTMAX):
            return n
        return 0

    # -- bytes (FP32) ---------------------------------------------------------------------------
    @cached_property
    def input_bytes(self) -> int:
        """Bytes of activations the op reads: every input tensor once (a group node reads its
        1/n channel slice of the first input)."""
        first = self.in_shape.elements
        if self.group_node is not None:
            first //= self.group_node[1]
        rest = sum(s.elements for s in self.in_shapes[1:])
        return (first + rest) * BYTES_PER_ELEMENT

    @cached_property
    def output_bytes(self) -> int:
        """Bytes of the output tensor. This is also what crosses a pipeline cut if a later layer
        reads it (``Workload.cut_bytes``), views included."""
        return self.out_shape.elements * BYTES_PER_ELEMENT

    @cached_property
    def weight_bytes(self) -> int:
        """Bytes of parameters: filters plus one bias per output (conv, dw, fc); 4 per channel
        for bn (mean, variance, gamma, beta, as ARM-CL's BatchNormalizationLayer reads them)."""
        if self.kind in GEMM_KINDS:
            n, k, m = self.gemm  # type: ignore[misc]
            params = k * m * self.gemm_groups + self.out_c
            return params * BYTES_PER_ELEMENT
        if self.kind == OpKind.BN:
            return 4 * self.out_c * BYTES_PER_ELEMENT
        return 0

    @cached_property
    def im2col_bytes(self) -> int:
        """Bytes of the im2col image matrix [N×K] per GEMM, times the groups (conv only).

        ARM-CL v18.05 (NCHW, the graph examples' layout) builds it even for 1×1 convs."""
        if self.kind != OpKind.CONV:
            return 0
        n, k, _ = self.gemm  # type: ignore[misc]
        return n * k * self.gemm_groups * BYTES_PER_ELEMENT

    # -- Pipe-search / Shisha compile-time hint -------------------------------------------
    @cached_property
    def weight_hint(self) -> int:
        """The layer "weight" of Pipe-search and Shisha (000 digest §3.1), an op count from shapes.

        * conv (Eq. 1): W_C = H·W·C·R·S·K on the **input** H, W: stride is ignored, so a stride-2
          conv's hint is 4× its MACs, a mismatch the papers' online tuning is there to absorb.
          C is the filter depth (``filter_depth``), which is the paper's C for the ungrouped convs
          the papers use.
        * dw: Eq. 1 with C/groups = 1, i.e. H·W·C·R·S.
        * fc (Eq. 2): W_fc = H·W·C·F with H×W×C the input tensor.
        * pooling: the input tensor size H·W·C (Pipe-search; VGG16 pool1 = 3.2 M).
        * anything else: 0 (no hint is defined for it).
        """
        h, w, c = self.in_shape
        if self.kind in (OpKind.CONV, OpKind.DW):
            r, s = self.kernel
            return h * w * self.filter_depth * r * s * self.out_c
        if self.kind == OpKind.FC:
            return h * w * c * self.out_c
        if self.kind in POOL_KINDS:
            return h * w * c
        return 0

    def describe(self) -> str:
        """A short human-readable description, e.g. ``conv 3x3/2 56x56x64 -> 28x28x64``."""
        parts = [str(self.kind)]
        if self.kind in WINDOW_KINDS:
            r, s = self.kernel
            parts.append(f"{r}x{s}/{self.stride}")
        parts.append(f"{self.in_shape} -> {self.out_shape}")
        return " ".join(parts)


__all__ = [
    "BYTES_PER_ELEMENT",
    "GEMM_KINDS",
    "MULTI_INPUT_KINDS",
    "POOL_KINDS",
    "VIEW_KINDS",
    "WINDOW_KINDS",
    "Op",
    "OpKind",
    "Shape",
    "window_out_size",
]
