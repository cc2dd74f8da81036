"""Ops: the nodes of a workload DAG, with the shape arithmetic the papers use.

Vocabulary (kept from the papers so that the code can be checked against them):

* Pipe-it (001 digest §4.1, eqs. 3-4): input tensor {I_w, I_h, I_d}, filters {F_w, F_h, F_d, Ofm},
  padding Pad, stride S; the convolution lowers by im2col to a GEMM [N×K]·[K×M] with
  N = O_w·O_h, K = F_w·F_h·F_d, M = Ofm.
* Pipe-search / Shisha (000 digest §3.1, eqs. 1-2): input tensor H×W×C, kernel R×S, K filters,
  F outputs of an FC layer; the compile-time "weight" (hint) W_C = H·W·C·R·S·K on the *input* H, W.

Tensors are H×W×C (batch 1, FP32 = 4 bytes per element, as the papers' ARM-CL / XiTAO runs).

This module is hetsim's one op vocabulary: the workload loader, the platform schema (which kinds an
EP may run), the cost models and the ONNX importer all take their kinds and kind sets from here.
Two families share :class:`Op`:

* *CNN kinds* (conv ... reshape): written with their layer fields (kernel, stride, out_c...), their
  H×W×C shapes are inferred and every count follows from the formulas below.
* *Generic kinds* (matmul, unary, binary, layernorm, reduce, the data-movement copies, shape,
  other): imported from ONNX (transformers, LSTMs, anything that is not an H×W×C CNN). They carry
  their full output dims (``out_dims``) and explicit counts (:class:`OpCounts`); an op of a CNN
  kind that does not fit the H×W×C model (a 3-D conv, a batch of 8) is written the same way.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Generic, NamedTuple, TypeVar

_T = TypeVar("_T")


class cached_property(Generic[_T]):  # noqa: N801 - functools' name, its behaviour
    """``functools.cached_property`` without its lock: Python 3.11's takes an RLock on every
    first access (a third of loading a 100,000-op workload); Python 3.12 dropped it too. The value
    lands in the instance's ``__dict__``, which later reads find first."""

    def __init__(self, func: Callable[[Any], _T]) -> None:
        self.func = func
        self.attrname = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.attrname = name

    def __get__(self, instance: Any, owner: type | None = None) -> _T:
        if instance is None:
            return self  # type: ignore[return-value]
        value = instance.__dict__[self.attrname] = self.func(instance)
        return value

#: Bytes per tensor element: every paper runs FP32 (001 digest §3.1; 000 digest §2).
BYTES_PER_ELEMENT = 4

#: Element types an op's tensors may have, with their sizes in bytes (ONNX's names, lower case).
DTYPE_BYTES: dict[str, int] = {
    "float32": 4, "float16": 2, "bfloat16": 2, "float64": 8, "int8": 1, "uint8": 1, "int16": 2,
    "uint16": 2, "int32": 4, "uint32": 4, "int64": 8, "uint64": 8, "bool": 1,
}


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
    RESHAPE = "reshape"  # a view to an explicit shape with the same element count (also Squeeze,
    #                     Unsqueeze, Identity, inference Dropout when imported)
    # -- generic kinds (explicit dims and counts; see the module docstring) --------------------
    MATMUL = "matmul"  # (batched) matrix product: gemm (N, K, M) times gemm_groups (MatMul, Gemm, RNN gates)
    UNARY = "unary"  # element-wise on one tensor: Sigmoid, Tanh, Erf, Gelu, Sqrt, Exp, Cast, ...
    BINARY = "binary"  # element-wise with broadcasting: Sub, Mul, Div, Pow, Where, Add with a constant...
    LAYERNORM = "layernorm"  # LayerNormalization (also Instance/GroupNormalization)
    REDUCE = "reduce"  # ReduceMean/Sum/Max..., ArgMax: fewer elements out than in
    TRANSPOSE = "transpose"  # data movement: a permuted copy
    GATHER = "gather"  # data movement: rows picked by an index tensor (embeddings, Gather of a shape)
    SLICE = "slice"  # data movement: a strided window copied out
    SPLIT = "split"  # data movement: one tensor copied into several
    RESIZE = "resize"  # data movement with interpolation (Resize, Upsample)
    COPY = "copy"  # other data movement: Pad, Tile, Expand, ConstantOfShape, Range, ScatterND...
    SHAPE = "shape"  # metadata: Shape, Size (no tensor data is read)
    OTHER = "other"  # an op type hetsim does not know, imported with --allow-unknown: memory-bound
    STREAM = "stream"  # a STREAM-like memory kernel (platform `kinds` of knl's EPs)


#: The CNN kinds: H×W×C shape inference from the op's layer fields (kernel, stride, out_c...).
CNN_KINDS = frozenset({OpKind.CONV, OpKind.DW, OpKind.FC, OpKind.MAXPOOL, OpKind.AVGPOOL,
                       OpKind.RELU, OpKind.LRN, OpKind.BN, OpKind.ADD, OpKind.CONCAT,
                       OpKind.SOFTMAX, OpKind.FLATTEN, OpKind.RESHAPE})
#: Kinds that are lowered to a GEMM (Pipe-it eq. 4) and so have (N, K, M).
GEMM_KINDS = frozenset({OpKind.CONV, OpKind.DW, OpKind.FC, OpKind.MATMUL})
#: GEMM kinds a BLAS GEMM runs (the GEMM efficiency and the per-GEMM overhead of a cost model
#: apply). dw is not one: ARM-CL runs depthwise convs with a dedicated kernel of its own efficiency.
BLAS_GEMM_KINDS = frozenset({OpKind.CONV, OpKind.FC, OpKind.MATMUL})
#: Kinds with a sliding window (kernel, stride, pad).
WINDOW_KINDS = frozenset({OpKind.CONV, OpKind.DW, OpKind.MAXPOOL, OpKind.AVGPOOL})
POOL_KINDS = frozenset({OpKind.MAXPOOL, OpKind.AVGPOOL})
#: CNN kinds that read several tensors (the other CNN kinds read exactly one; generic kinds read
#: any number).
MULTI_INPUT_KINDS = frozenset({OpKind.ADD, OpKind.CONCAT})
#: Views and metadata: they cost nothing to run (no kernel, no traffic). Their output is still a
#: tensor, so it still has to cross a pipeline cut if a later stage reads it.
VIEW_KINDS = frozenset({OpKind.FLATTEN, OpKind.RESHAPE, OpKind.SHAPE})
#: Kinds that only move data (no arithmetic): 0 FLOPs, bytes read and written.
COPY_KINDS = frozenset({OpKind.CONCAT, OpKind.TRANSPOSE, OpKind.GATHER, OpKind.SLICE,
                        OpKind.SPLIT, OpKind.COPY, OpKind.OTHER, OpKind.STREAM})
#: Kinds counted as one FLOP per output element (element-wise work; orders of magnitude for the
#: memory-bound cost terms, never for a GEMM model).
PER_ELEMENT_KINDS = frozenset({OpKind.RELU, OpKind.BN, OpKind.LRN, OpKind.SOFTMAX, OpKind.UNARY,
                               OpKind.LAYERNORM, OpKind.RESIZE})


def default_flops(kind: OpKind | str, out_elements: int, in_elements: int = 0, n_inputs: int = 1,
                  window: int = 1) -> int:
    """FLOPs of a non-GEMM op by hetsim's counting convention (GEMM kinds: 2·MACs, elsewhere).

    One per output element for element-wise kinds (:data:`PER_ELEMENT_KINDS`); one per output
    element per extra input for add and binary (``a + b`` is 1, ``where(c, a, b)`` 2); the window
    size per output element for pooling (every window element compared or summed once); one per
    *input* element for reduce; 0 for copies, views and unknown ops. The importer and the YAML
    loader both count with this function, so an op's FLOPs do not depend on where it came from.
    """
    kind = OpKind(kind)
    if kind in POOL_KINDS:
        return out_elements * window
    if kind in (OpKind.ADD, OpKind.BINARY):
        return out_elements * max(n_inputs - 1, 0)
    if kind == OpKind.REDUCE:
        return in_elements
    if kind in PER_ELEMENT_KINDS:
        return out_elements
    return 0


@dataclass(frozen=True)
class OpCounts:
    """Counts given explicitly instead of derived from the H×W×C formulas (None = derive).

    Generic ops carry what the importer computed; a CNN op may override single values (an ONNX conv
    without a bias has fewer weight bytes than the formula's filters + bias).
    """

    macs: int | None = None
    flops: int | None = None
    input_bytes: int | None = None
    output_bytes: int | None = None
    weight_bytes: int | None = None
    im2col_bytes: int | None = None
    gemm: tuple[int, int, int] | None = None
    gemm_groups: int | None = None

    def given(self) -> dict[str, object]:
        """The counts that are set, by name."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


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

    @classmethod
    def of_dims(cls, dims: tuple[int, ...] | list[int]) -> Shape:
        """The H×W×C view of a tensor of any rank (same element count): NCHW with N = 1 gives
        (H, W, C); ranks up to 3 are left-padded with 1s ([1, F] -> 1×1×F, [1, 128, 768] ->
        1×128×768); anything else becomes 1×1×(all elements)."""
        d = tuple(int(x) for x in dims)
        if len(d) == 4 and d[0] == 1:
            return cls(d[2], d[3], d[1])
        if len(d) <= 3:
            d = (1,) * (3 - len(d)) + d
            return cls(d[0], d[1], d[2])
        return cls(1, 1, math.prod(d))

    def nchw(self) -> tuple[int, int, int, int]:
        """The NCHW dims (N = 1) of this H×W×C tensor."""
        return (1, self.c, self.h, self.w)


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


def covered_extent(size: int, out: int, kernel: int, stride: int, pad_begin: int) -> int:
    """Input rows (or columns) of extent ``size`` that ``out`` windows of ``kernel`` at ``stride``
    read, the first starting ``pad_begin`` before the input: all of them when windows touch or
    overlap (stride <= kernel), else ``kernel`` per window, clipped to the input."""
    if stride <= kernel:
        return size
    covered = 0
    for i in range(out):
        lo = i * stride - pad_begin
        covered += max(0, min(size, lo + kernel) - max(0, lo))
    return min(size, covered)


@dataclass(frozen=True)
class Op:
    """One node of a workload DAG.

    Fields are what the YAML file says plus the inferred shapes; everything else is a derived
    property (cached, the op being immutable). ``in_shape`` is the tensor the op computes on: for
    a conv it is the whole input tensor (the H×W×C of Eq. 1 and the {I_w, I_h, I_d} of Pipe-it).

    A generic op (``out_dims`` set, see the module docstring) has ``in_shape``/``out_shape`` as the
    H×W×C views of its tensors (:meth:`Shape.of_dims`) and takes its counts from ``counts``.
    """

    name: str
    kind: OpKind
    #: Producer op names; empty = the network input (see ``net_inputs``).
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
    #: Kernel dilation of a conv/dw (ONNX ``dilations``): the window spans d·(R-1)+1 pixels.
    dilation: int = 1
    #: The source framework's op type ("Conv", "MatMul", "Erf", "FusedConv"...); "" when the op was
    #: written by hand. Capability rules and profile matching may use it.
    op_type: str = ""
    #: Element type of the op's output (and its default for inputs): a key of DTYPE_BYTES.
    dtype: str = "float32"
    #: Full dims of every output of a generic op; () for a CNN-kind op (its dims are out_shape).
    out_dims: tuple[tuple[int, ...], ...] = ()
    #: Full dims of every tensor a generic op reads from other ops or the network (not constants).
    in_dims: tuple[tuple[int, ...], ...] = ()
    #: Names of the network inputs this op reads (the network input of a one-input workload).
    net_inputs: tuple[str, ...] = ()
    #: Counts given explicitly (generic ops: all of them; CNN ops: overrides).
    counts: OpCounts = OpCounts()

    # -- shape helpers --------------------------------------------------------------------------
    @property
    def explicit(self) -> bool:
        """True for a generic op: dims and counts given, not inferred from layer fields."""
        return bool(self.out_dims)

    @property
    def elem_bytes(self) -> int:
        """Bytes per element of the op's tensors (4 for FP32)."""
        return DTYPE_BYTES[self.dtype]

    @property
    def dims(self) -> tuple[int, ...]:
        """Full dims of the (first) output: ``out_dims[0]``, or NCHW of ``out_shape``."""
        return self.out_dims[0] if self.out_dims else self.out_shape.nchw()

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
    @property
    def gemm_dims(self) -> tuple[int, int, int]:
        """:attr:`gemm` for an op that must be a GEMM (conv, dw, fc): a clear error otherwise."""
        dims = self.gemm
        if dims is None:
            from hetsim.errors import HetsimError

            raise HetsimError(f"op {self.name}: kind {self.kind} has no GEMM lowering")
        return dims

    @cached_property
    def gemm(self) -> tuple[int, int, int] | None:
        """(N, K, M) of the op's GEMM lowering (Pipe-it eqs. 3-4), per group; None if not a GEMM.

        * conv: N = O_w·O_h (one im2col row per output pixel), K = F_w·F_h·F_d (patch length, F_d
          the channels of one group), M = Ofm / groups.
        * fc: N = 1 (a GEMV at batch 1), K = input features H·W·C, M = outputs.
        * dw: N = O², K = R·S (9), M = C, the 001 digest Appendix A convention, so that N·K·M is
          the MAC count. ARM-CL runs depthwise convs with a dedicated kernel, not a GEMM.
        * generic ops (matmul, an imported conv that is not H×W×C): as given in ``counts``.
        """
        if self.counts.gemm is not None or self.explicit:
            return self.counts.gemm
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
        (whose ``gemm`` already spans all channels), the batch count of a matmul (given), 0 for
        non-GEMM ops."""
        if self.counts.gemm_groups is not None:
            return self.counts.gemm_groups
        if self.explicit:
            return 1 if self.gemm is not None else 0
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
        if self.counts.macs is not None:
            return self.counts.macs
        g = self.gemm
        if g is None:
            return 0
        return g[0] * g[1] * g[2] * self.gemm_groups

    @cached_property
    def window_taps(self) -> int:
        """Output pixels × kernel taps (O_h·O_w·R·S) of a windowed op (conv, dw, pooling), 0 for
        others: what a channel-vectorised kernel pays a fixed cost per (one inner loop over the
        channels per output pixel and tap), apart from its MACs (``dw_tap_cycles``)."""
        if self.kind not in WINDOW_KINDS:
            return 0
        r, s = self.kernel
        return self.out_shape.h * self.out_shape.w * r * s

    @cached_property
    def flops(self) -> int:
        """Floating-point operations: 2·MACs for GEMM kinds (bias adds ignored); otherwise
        :func:`default_flops` (R·S per output element for pooling; 1 per output element for relu,
        bn, lrn, softmax and the other element-wise kinds; one per output element per extra input
        for add; 0 for concat and views). The non-GEMM counts are orders of magnitude, good for
        memory-bound cost terms, never for a GEMM model."""
        if self.counts.flops is not None:
            return self.counts.flops
        if self.kind in GEMM_KINDS:
            return 2 * self.macs
        if self.explicit:
            out = sum(math.prod(d) for d in self.out_dims)
            first_in = math.prod(self.in_dims[0]) if self.in_dims else 0
            n_in = max(len(self.in_dims), 1)
        else:
            out = self.out_shape.elements
            first_in = self.in_shape.elements
            n_in = max(len(self.in_shapes), 1)
        return default_flops(self.kind, out, first_in, n_in, self.kernel[0] * self.kernel[1])

    # -- bytes ---------------------------------------------------------------------------------
    @cached_property
    def input_bytes(self) -> int:
        """Bytes of activations the op reads: every input tensor once (a group node reads its
        1/n channel slice of the first input). A pooling whose stride exceeds its kernel leaves
        rows and columns of its input unread (ResNet50's 1x1 stride-2 shortcut subsampling reads
        a quarter of it): it reads the rows and columns its windows cover."""
        if self.counts.input_bytes is not None:
            return self.counts.input_bytes
        if self.explicit:
            return sum(math.prod(d) for d in self.in_dims) * self.elem_bytes
        first = self.in_shape.elements
        if self.kind in POOL_KINDS and self.stride > min(self.kernel):
            first = (covered_extent(self.in_shape.h, self.out_shape.h, self.kernel[0], self.stride, self.pad[0])
                     * covered_extent(self.in_shape.w, self.out_shape.w, self.kernel[1], self.stride, self.pad[0])
                     * self.in_shape.c)
        if self.group_node is not None:
            first //= self.group_node[1]
        rest = sum(s.elements for s in self.in_shapes[1:])
        return (first + rest) * self.elem_bytes

    @cached_property
    def output_bytes(self) -> int:
        """Bytes of the output tensor(s). This is also what crosses a pipeline cut if a later layer
        reads it (``Workload.cut_bytes``), views included."""
        if self.counts.output_bytes is not None:
            return self.counts.output_bytes
        if self.explicit:
            return sum(math.prod(d) for d in self.out_dims) * self.elem_bytes
        return self.out_shape.elements * self.elem_bytes

    @cached_property
    def weight_bytes(self) -> int:
        """Bytes of parameters: filters plus one bias per output (conv, dw, fc); 4 per channel
        for bn (mean, variance, gamma, beta, as ARM-CL's BatchNormalizationLayer reads them);
        as given for generic ops (their constant inputs)."""
        if self.counts.weight_bytes is not None:
            return self.counts.weight_bytes
        if self.explicit:
            return 0
        if self.kind in GEMM_KINDS:
            n, k, m = self.gemm  # type: ignore[misc]
            params = k * m * self.gemm_groups + self.out_c
            return params * self.elem_bytes
        if self.kind == OpKind.BN:
            return 4 * self.out_c * self.elem_bytes
        return 0

    @cached_property
    def im2col_bytes(self) -> int:
        """Bytes of the im2col image matrix [N×K] per GEMM, times the groups (conv only).

        ARM-CL v18.05 (NCHW, the graph examples' layout) builds it even for 1×1 convs."""
        if self.counts.im2col_bytes is not None:
            return self.counts.im2col_bytes
        if self.kind != OpKind.CONV or self.gemm is None:
            return 0
        n, k, _ = self.gemm
        return n * k * self.gemm_groups * self.elem_bytes

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
        * generic ops: the MACs of a GEMM (Eq. 2 is the MAC count of an fc at batch 1), the input
          size of a pool, 0 otherwise.
        * anything else: 0 (no hint is defined for it).
        """
        if self.explicit:
            if self.kind in GEMM_KINDS:
                return self.macs
            if self.kind in POOL_KINDS:
                return self.in_shape.elements
            return 0
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
        if self.op_type and self.op_type.lower() != str(self.kind):
            parts.append(f"({self.op_type})")
        if self.explicit:
            outs = ", ".join("x".join(map(str, d)) or "scalar" for d in self.out_dims)
            parts.append(f"-> {outs}")
            return " ".join(parts)
        if self.kind in WINDOW_KINDS:
            r, s = self.kernel
            parts.append(f"{r}x{s}/{self.stride}")
        parts.append(f"{self.in_shape} -> {self.out_shape}")
        return " ".join(parts)


__all__ = [
    "BLAS_GEMM_KINDS",
    "BYTES_PER_ELEMENT",
    "CNN_KINDS",
    "COPY_KINDS",
    "DTYPE_BYTES",
    "GEMM_KINDS",
    "MULTI_INPUT_KINDS",
    "PER_ELEMENT_KINDS",
    "POOL_KINDS",
    "VIEW_KINDS",
    "WINDOW_KINDS",
    "Op",
    "OpCounts",
    "OpKind",
    "Shape",
    "default_flops",
    "window_out_size",
]
