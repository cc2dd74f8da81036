"""ONNX models as hetsim workloads: shape inference, op mapping, counting, layer grouping.

    from hetsim.workload.onnx_import import workload_from_onnx
    w = workload_from_onnx("resnet18.onnx", input_shapes={"input": (1, 3, 224, 224)})

The model is read with the ``onnx`` package without its external weight data (an initializer's
dims give its bytes), ONNX's shape inference (with data propagation, so the Shape -> Gather ->
Concat -> Reshape chains of exported transformers resolve) gives every tensor's dims, and every
node becomes one hetsim op (:mod:`hetsim.workload.ops`):

* A node of an NCHW CNN at batch 1 (Conv, pools, BatchNormalization, Relu, LRN, Add, Concat on
  channels, Softmax, Flatten, Reshape, Gemm on a flattened input) becomes the native CNN kind
  (conv with kernel/stride/pad/groups, maxpool, fc...), so that a shipped CNN written out as ONNX
  imports to the same workload; a counted value that differs from the CNN formula (an ONNX conv
  without a bias) is written as an override.
* Every other node is a *generic* op: its output dims, and counts computed here by the rules of
  docs/import.md (GEMM dims and batch count for MatMul/Gemm/Conv/LSTM, one FLOP per element for
  element-wise ops, bytes from the tensors it reads and writes, weights from its constant inputs).
* ``Constant`` nodes and nodes that read only constants are constants, not ops (ONNX Runtime
  turns the former into initializers; the latter are listed in the report as folded).
* An op type hetsim does not know is an error naming it and its node; with ``allow_unknown`` it is
  imported as kind ``other`` (memory-bound, its tensors' bytes) and listed in the report.

The result is a workload dict in the YAML file format (``hetsim workloads import`` writes it),
which :func:`hetsim.workload.workload_from_dict` builds, so an imported file round-trips.
"""

from __future__ import annotations

import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from hetsim.bounds import DIM
from hetsim.errors import HetsimError
from hetsim.workload.loader import workload_from_dict
from hetsim.workload.model import Workload
from hetsim.workload.onnx_export import LAYER_KINDS_KEY, LAYER_START_DOC
from hetsim.workload.ops import (
    DTYPE_BYTES,
    GEMM_KINDS,
    OpKind,
    Shape,
    default_flops,
    window_out_size,
)

Dims = tuple[int, ...]

#: Op kinds whose nodes start a layer unless the user says otherwise (Pipe-it's conv/dw/fc major
#: layers, and the matmuls of transformers and RNNs).
DEFAULT_LAYER_KINDS = ("conv", "dw", "fc", "matmul")

#: ONNX TensorProto element types -> hetsim dtype names.
ONNX_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
               7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
               16: "bfloat16"}
#: The element type names of ONNX Runtime's profile (``output_type_shape``) -> hetsim dtypes.
ORT_DTYPES = {"float": "float32", "float16": "float16", "double": "float64", "bfloat16": "bfloat16",
              "int8": "int8", "uint8": "uint8", "int16": "int16", "uint16": "uint16",
              "int32": "int32", "uint32": "uint32", "int64": "int64", "uint64": "uint64",
              "bool": "bool"}

# -- the op-type table: ONNX op type -> hetsim kind ---------------------------------------------
UNARY_OPS = frozenset({
    "Sigmoid", "Tanh", "Erf", "Gelu", "FastGelu", "QuickGelu", "BiasGelu", "Sqrt", "Exp", "Log",
    "Neg", "Abs", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan", "Asin",
    "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Cast", "CastLike", "Not",
    "IsNaN", "IsInf", "HardSigmoid", "HardSwish", "Softplus", "Softsign", "Elu", "Selu", "Celu",
    "Mish", "ThresholdedRelu", "Shrink", "Hardmax", "CumSum", "NonZero"})
ACTIVATION_OPS = frozenset({"Relu", "LeakyRelu", "Clip", "PRelu"})  # hetsim's relu kind
BINARY_OPS = frozenset({
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mean", "Sum", "Mod", "Equal", "Less",
    "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor", "Where", "BitShift",
    "BitwiseAnd", "BitwiseOr", "BitwiseXor"})
REDUCE_OPS = frozenset({
    "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
    "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "TopK"})
VIEW_OPS = {"Reshape": "reshape", "Squeeze": "reshape", "Unsqueeze": "reshape",
            "Identity": "reshape", "Dropout": "reshape", "Flatten": "flatten"}
COPY_OPS = {"Transpose": "transpose", "Gather": "gather", "GatherElements": "gather",
            "GatherND": "gather", "Slice": "slice", "Split": "split", "Resize": "resize",
            "Upsample": "resize", "Concat": "concat", "Pad": "copy", "Tile": "copy",
            "Expand": "copy", "ConstantOfShape": "copy", "Range": "copy", "ScatterND": "copy",
            "ScatterElements": "copy", "Trilu": "copy", "DepthToSpace": "copy",
            "SpaceToDepth": "copy", "OneHot": "copy", "EyeLike": "copy"}
SHAPE_OPS = frozenset({"Shape", "Size"})
NORM_OPS = {"BatchNormalization": "bn", "LayerNormalization": "layernorm",
            "InstanceNormalization": "layernorm", "GroupNormalization": "layernorm",
            "SimplifiedLayerNormalization": "layernorm", "SkipLayerNormalization": "layernorm",
            "LRN": "lrn", "Softmax": "softmax", "LogSoftmax": "softmax"}
POOL_OPS = {"MaxPool": "maxpool", "AveragePool": "avgpool", "GlobalAveragePool": "avgpool",
            "GlobalMaxPool": "maxpool", "LpPool": "avgpool", "GlobalLpPool": "avgpool"}
CONV_OPS = frozenset({"Conv", "FusedConv", "ConvTranspose"})
GEMM_OPS = frozenset({"MatMul", "Gemm", "FusedMatMul", "MatMulInteger"})
RNN_OPS = {"LSTM": 4, "GRU": 3, "RNN": 1}  # gates per hidden unit
#: FLOPs per hidden unit per time step besides the gate GEMMs (ONNX operator definitions): LSTM 4
#: gates x (2 bias adds + activation) + 3 for the cell state + 2 for the hidden state; GRU 3 gates
#: x 3 + reset product 1 + update 4; RNN 2 bias adds + activation.
RNN_ELEMENTWISE_FLOPS = {"LSTM": 17, "GRU": 14, "RNN": 3}

KNOWN_OPS = (UNARY_OPS | ACTIVATION_OPS | BINARY_OPS | REDUCE_OPS | set(VIEW_OPS) | set(COPY_OPS)
             | SHAPE_OPS | set(NORM_OPS) | set(POOL_OPS) | CONV_OPS | GEMM_OPS | set(RNN_OPS))


def kind_of(op_type: str) -> str | None:
    """The hetsim kind an ONNX op type maps to in general (None: hetsim does not know it).
    Native CNN mapping may refine it (Gemm -> fc, grouped Conv -> dw)."""
    if op_type in CONV_OPS:
        return "conv"
    if op_type in GEMM_OPS:
        return "matmul"
    if op_type in RNN_OPS:
        return "matmul"
    if op_type in POOL_OPS:
        return POOL_OPS[op_type]
    if op_type in NORM_OPS:
        return NORM_OPS[op_type]
    if op_type in ACTIVATION_OPS:
        return "relu"
    if op_type in UNARY_OPS:
        return "unary"
    if op_type == "Add" or op_type == "Sum":
        return "add"
    if op_type in BINARY_OPS:
        return "binary"
    if op_type in REDUCE_OPS:
        return "reduce"
    if op_type in VIEW_OPS:
        return VIEW_OPS[op_type]
    if op_type in COPY_OPS:
        return COPY_OPS[op_type]
    if op_type in SHAPE_OPS:
        return "shape"
    return None


# -- counting from dims (shared with the ONNX Runtime profile import) ------------------------
@dataclass
class Counted:
    """What counting one node from its tensors' dims gives."""

    kind: str
    gemm: tuple[int, int, int] | None = None
    gemm_groups: int | None = None
    macs: int = 0
    flops: int = 0
    window: int = 1  # pooling window size (for FLOPs)


def _prod(d: Iterable[int]) -> int:
    return math.prod(int(x) for x in d)


def count_node(op_type: str, attrs: Mapping[str, Any], in_dims: Sequence[Dims | None],
               out_dims: Sequence[Dims]) -> Counted:
    """Kind, GEMM dims, MACs and FLOPs of one node from its tensors' dims (every input, constants
    included, in ONNX order; None = an absent optional input) and attributes. Attributes missing
    (an ONNX Runtime profile has none) are inferred from the dims where possible: a conv's groups
    from its filter, a Gemm's transposition from its output, a pool's window as in/out elements.
    """
    kind = kind_of(op_type) or "other"
    x = in_dims[0] if in_dims else None
    out = out_dims[0] if out_dims else ()
    out_el = sum(_prod(d) for d in out_dims)
    in_el = _prod(x) if x is not None else 0
    n_in = sum(1 for d in in_dims if d is not None)

    if op_type in CONV_OPS and x is not None and len(in_dims) > 1 and in_dims[1] is not None:
        return _count_conv(op_type, attrs, x, in_dims[1], out, out_el)
    if op_type in GEMM_OPS and in_dims:
        return _count_gemm(op_type, attrs, in_dims, out)
    if op_type in RNN_OPS and x is not None and len(in_dims) >= 3 and in_dims[2] is not None:
        return _count_rnn(op_type, attrs, x, in_dims[2])
    if op_type in POOL_OPS:
        ks = attrs.get("kernel_shape")
        if op_type.startswith("Global") and x is not None:
            window = _prod(x[2:])
        elif ks:
            window = _prod(ks)
        else:  # no attributes: the window at least covers the input pixels per output pixel
            window = max(in_el // max(_prod(out), 1), 1)
        c = Counted(kind, window=window)
        c.flops = default_flops(kind, out_el, window=window)
        return c

    if kind in ("add", "binary"):
        return Counted(kind, flops=default_flops(kind, out_el, n_inputs=n_in))
    return Counted(kind, flops=default_flops(kind, out_el, in_el, n_in))


def _count_conv(op_type: str, attrs: Mapping[str, Any], x: Dims, w: Dims, out: Dims, out_el: int) -> Counted:
    """A convolution (input x, filter w) as grouped GEMMs: ConvTranspose, depthwise or grouped conv."""
    spatial_k = _prod(w[2:])
    if op_type == "ConvTranspose":
        g = int(attrs.get("group", 1))
        c_in = x[1]
        m_total = w[1] * g
        gemm = (x[0] * _prod(x[2:]), c_in // g, (m_total // g) * spatial_k)
        c = Counted("conv", gemm, g)
    else:
        c_in = x[1]
        g = int(attrs.get("group", c_in // w[1] if w[1] else 1))
        m = w[0]
        rows = out[0] * _prod(out[2:]) if out else 0
        if g > 1 and g == c_in == m:  # depthwise: the dw convention N = O², K = R·S, M = C
            c = Counted("dw", (rows, spatial_k, m), 1)
        else:
            c = Counted("conv", (rows, w[1] * spatial_k, m // g), g)
    assert c.gemm is not None and c.gemm_groups is not None
    c.macs = _prod(c.gemm) * c.gemm_groups
    c.flops = 2 * c.macs
    if op_type == "FusedConv":  # the fused activation: one FLOP per output element
        c.flops += out_el
    return c


def _count_gemm(op_type: str, attrs: Mapping[str, Any], in_dims: Sequence[Dims | None], out: Dims) -> Counted:
    """A Gemm or MatMul (batched by broadcasting; B prepacked away in a profile: K from A)."""
    a, b = in_dims[0], in_dims[1] if len(in_dims) > 1 else None
    if op_type == "Gemm" and a is not None and out:
        n, m = out[0], out[1]
        trans_a = attrs.get("transA")
        if trans_a is None:  # no attributes (a profile): A is [N, K] unless that fails
            trans_a = 0 if a[0] == n else 1
        k = a[0] if trans_a else a[1]
        c = Counted("matmul", (n, k, m), 1)
    elif a is not None and b is not None:
        a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
        b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
        batch = np.broadcast_shapes(a2[:-2], b2[:-2]) if len(a2) > 2 or len(b2) > 2 else ()
        c = Counted("matmul", (a2[-2], a2[-1], b2[-1]), _prod(batch))
    elif a is not None and out:  # B prepacked away (an ONNX Runtime profile): K from A
        batch = out[:-2]
        c = Counted("matmul", (out[-2] if len(out) > 1 else 1, a[-1], out[-1]), _prod(batch))
    else:
        return Counted("matmul")
    assert c.gemm is not None and c.gemm_groups is not None
    c.macs = _prod(c.gemm) * c.gemm_groups
    c.flops = 2 * c.macs
    return c


def _count_rnn(op_type: str, attrs: Mapping[str, Any], x: Dims, r: Dims) -> Counted:
    """An RNN/GRU/LSTM (R: [directions, gates·H, H]) as one GEMM per step and direction, plus its
    gates' elementwise FLOPs."""
    gates = RNN_OPS[op_type]
    dirs, hidden = r[0], r[2]
    layout = int(attrs.get("layout", 0))
    seq, rows, feat = (x[1], x[0], x[2]) if layout else (x[0], x[1], x[2])
    rnn = (rows, feat + hidden, gates * hidden)
    c = Counted("matmul", rnn, seq * dirs)
    c.macs = _prod(rnn) * seq * dirs
    c.flops = 2 * c.macs + seq * dirs * rows * hidden * RNN_ELEMENTWISE_FLOPS[op_type]
    return c


# -- the importer ----------------------------------------------------------------------------
@dataclass
class Tensor:
    """One tensor of the graph as the importer sees it."""

    name: str
    dims: Dims | None
    dtype: str
    const: bool = False  # an initializer, a Constant's output or a folded node's output
    producer: str | None = None  # op name (a node output)
    net: bool = False  # a network (graph) input
    data: np.ndarray | None = None  # small constants with data (shape vectors, axes)

    @property
    def bytes_(self) -> int:
        return _prod(self.dims) * DTYPE_BYTES[self.dtype] if self.dims is not None else 0

    @property
    def image(self) -> bool:
        """NCHW at batch 1, or [1, F]: a tensor the CNN kinds can describe as H×W×C."""
        return self.dims is not None and len(self.dims) in (2, 4) and self.dims[0] == 1


@dataclass
class ImportReport:
    """What the import did, for the user: counts by kind and every choice worth knowing."""

    source: str
    nodes: int = 0
    ops: int = 0
    by_kind: Counter = field(default_factory=Counter)
    by_op_type: Counter = field(default_factory=Counter)
    folded: list[str] = field(default_factory=list)  # constant-only nodes (not ops)
    constants: int = 0  # Constant nodes
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (node, op type) as 'other'
    generic_cnn: list[tuple[str, str]] = field(default_factory=list)  # (node, why not native)
    renamed: list[tuple[str, str]] = field(default_factory=list)  # (ONNX name, op name)

    def lines(self) -> list[str]:
        """The report as lines for a terminal."""
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.by_kind.items()))
        out = [f"{self.nodes} nodes -> {self.ops} ops ({kinds})"]
        if self.constants or self.folded:
            out.append(f"{self.constants} Constant nodes and {len(self.folded)} nodes reading only "
                       "constants are constants, not ops"
                       + (f" ({_few(self.folded)})" if self.folded else ""))
        for node, op_type in self.unknown:
            out.append(f"unknown op type {op_type} (node {node}): imported as kind 'other', "
                       "memory-bound, from its tensor sizes")
        if self.generic_cnn:
            out.append(f"{len(self.generic_cnn)} CNN nodes outside the HxWxC model, imported as "
                       f"generic ops: {_few(f'{n} ({why})' for n, why in self.generic_cnn)}")
        if self.renamed:
            out.append(f"{len(self.renamed)} nodes renamed (unnamed or duplicate names): "
                       f"{_few(f'{a or chr(34) * 2} -> {b}' for a, b in self.renamed)}")
        return out


def _few(items: Iterable[str], n: int = 4) -> str:
    items = list(items)
    more = f", ... ({len(items) - n} more)" if len(items) > n else ""
    return ", ".join(items[:n]) + more


@dataclass
class ImportResult:
    """The workload dict (YAML format), the built workload and the report."""

    spec: dict[str, Any]
    workload: Workload
    report: ImportReport


def load_onnx(path: str | os.PathLike) -> Any:
    """Read an ONNX model without its external weight data; one-line errors."""
    import onnx
    from google.protobuf.message import DecodeError

    from hetsim.validation import MAX_ONNX_BYTES, read_input

    p = Path(path)
    data = read_input(p, MAX_ONNX_BYTES, "an ONNX model")   # a FIFO or a device is refused
    try:
        model = onnx.load_model_from_string(data)   # external weights stay where they are
    except (DecodeError, RuntimeWarning, ValueError, UnicodeDecodeError) as e:
        raise HetsimError(f"{p}: not an ONNX model ({_first_line(e) or 'protobuf parse error'})") from None
    if not model.graph.node:
        raise HetsimError(f"{p}: not an ONNX model (no graph nodes; is it an ONNX file?)")
    return model


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def parse_input_shapes(items: Iterable[str]) -> dict[str, Dims]:
    """``NAME=1x3x224x224`` (or ``1,3,224,224``) items -> {name: dims}."""
    shapes: dict[str, Dims] = {}
    for item in items:
        name, sep, text = item.partition("=")
        dims = [d.strip() for d in re.split(r"[x,]", text.strip()) if d.strip()]
        if (not sep or not name or not dims
                or not all(d.isascii() and d.isdigit() and len(d) <= 10 for d in dims)):
            raise HetsimError(f"--input-shape {item[:60]!r}: expected NAME=1x3x224x224")
        values = tuple(int(d) for d in dims)
        if not all(1 <= d <= DIM[1] for d in values):
            raise HetsimError(f"--input-shape {item[:60]!r}: every dim must be an integer in "
                              f"[1, {DIM[1]}]")
        shapes[name.strip()] = values
    return shapes


def parse_layers(spec: str | Sequence[str] | None) -> tuple[list[str], set[str], re.Pattern | None]:
    """``--layers``: comma-separated hetsim kinds (``conv,matmul``), ONNX op types (``Conv,Gemm``)
    and/or ``re:PATTERN`` (a layer starts at every node whose name matches). Default: the kinds
    conv, dw, fc, matmul."""
    if spec is None:
        return list(DEFAULT_LAYER_KINDS), set(), None
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    kinds: list[str] = []
    types: set[str] = set()
    pattern = None
    all_kinds = {k.value for k in OpKind}
    for raw in items:
        item = raw.strip()
        if not item:
            continue
        if item.startswith("re:"):
            try:
                pattern = re.compile(item[3:])
            except re.error as e:
                raise HetsimError(f"--layers {item!r}: bad regular expression ({e})") from None
        elif item in all_kinds:
            kinds.append(item)
        elif item in KNOWN_OPS or item[:1].isupper():
            types.add(item)
        else:
            raise HetsimError(f"--layers {item!r}: not a hetsim kind ({', '.join(sorted(all_kinds))}),"
                              " an ONNX op type (Conv, MatMul, ...) or re:PATTERN")
    if not (kinds or types or pattern):
        raise HetsimError("--layers: empty (give kinds, op types or re:PATTERN)")
    return kinds, types, pattern


def fix_input_shapes(model: Any, input_shapes: Mapping[str, Sequence[int]] | None,
                 source: str) -> Any:
    """A copy of ``model`` whose graph inputs have the dims ``input_shapes`` gives; an input left
    with a symbolic dim is a one-line error that says which ``--input-shape`` to give."""
    import onnx

    shapes = dict(input_shapes or {})
    model = onnx.ModelProto.FromString(model.SerializeToString())  # never edit the caller's
    inits = {t.name for t in model.graph.initializer}
    real = [i for i in model.graph.input if i.name not in inits]
    names = [i.name for i in real]
    for name in shapes:
        if name not in names:
            raise _fail(source, f"--input-shape names {name!r}, which is not a graph input "
                        f"(inputs: {', '.join(names) or 'none'})")
    for inp in real:
        tt = inp.type.tensor_type
        if not inp.type.HasField("tensor_type"):
            raise _fail(source, f"graph input {inp.name!r} is not a tensor")
        if inp.name in shapes:
            dims = list(shapes[inp.name])
            if tt.HasField("shape") and len(tt.shape.dim) not in (0, len(dims)):
                raise _fail(source, f"--input-shape {inp.name}: {len(dims)} dims given, the "
                            f"model declares {len(tt.shape.dim)}")
            tt.shape.ClearField("dim")
            for d in dims:
                tt.shape.dim.add().dim_value = int(d)
            continue
        if not tt.HasField("shape"):
            raise _fail(source, f"graph input {inp.name!r} has no shape; give --input-shape "
                        f"{inp.name}=1x3x224x224")
        symbolic = [d.dim_param or "?" for d in tt.shape.dim if not d.HasField("dim_value")]
        if symbolic:
            raise _fail(source, f"graph input {inp.name!r} has symbolic dims "
                        f"{', '.join(symbolic)}; give --input-shape {inp.name}=" +
                        "x".join(str(d.dim_value) if d.HasField("dim_value") else "N"
                                 for d in tt.shape.dim))
    return model



def _fail(source: str, what: str) -> HetsimError:
    return HetsimError(f"{source}: {what}")


class _Importer:
    def __init__(self, model: Any, source: str, input_shapes: Mapping[str, Sequence[int]] | None,
                 allow_unknown: bool):
        self.source = source
        self.allow_unknown = allow_unknown
        self.model = fix_input_shapes(model, input_shapes, source)
        self.report = ImportReport(source)
        self.tensors: dict[str, Tensor] = {}
        self.ops: list[dict[str, Any]] = []
        self.onnx_dims: dict[str, Dims] = {}  # op name -> ONNX output dims (for the native check)
        self.layer_marks: dict[str, bool] = {}  # node name -> layer_start (hetsim's own exports)
        self.first_output: dict[str, str] = {}  # op name -> its first output tensor

    def fail(self, what: str) -> HetsimError:
        return HetsimError(f"{self.source}: {what}")

    # -- preparing the graph ------------------------------------------------------------------
    def _infer(self) -> Any:
        import onnx

        try:
            return onnx.shape_inference.infer_shapes(self.model, strict_mode=False, data_prop=True)
        except Exception as e:  # onnx raises InferenceError, ValidationError, RuntimeError...
            raise self.fail(f"ONNX shape inference failed: {_first_line(e)}") from None

    def _dtype(self, elem_type: int, what: str) -> str:
        dtype = ONNX_DTYPES.get(elem_type)
        if dtype is None:
            import onnx

            name = onnx.TensorProto.DataType.Name(elem_type) if elem_type else "undefined"
            raise self.fail(f"{what} has element type {name}, which hetsim cannot size "
                            f"(allowed: {', '.join(sorted(set(ONNX_DTYPES.values())))})")
        return dtype

    def _value_dims(self, vi: Any) -> Dims | None:
        tt = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not tt.HasField("shape"):
            return None
        if not all(d.HasField("dim_value") for d in tt.shape.dim):
            return None
        return tuple(int(d.dim_value) for d in tt.shape.dim)

    # -- the walk -----------------------------------------------------------------------------
    def run(self, name: str, layers: str | Sequence[str] | None) -> ImportResult:
        # A model written by `hetsim workloads export` carries its layer grouping.
        meta = {p.key: p.value for p in self.model.metadata_props}
        if layers is None and LAYER_KINDS_KEY in meta:
            layers = meta[LAYER_KINDS_KEY]
        self.layer_marks = {n.name: n.doc_string.endswith("=1") for n in self.model.graph.node
                            if n.doc_string.startswith(LAYER_START_DOC + "=")}
        kinds, types, pattern = parse_layers(layers)
        self._check_ssa(self.model.graph)
        model = self._infer()
        graph = model.graph
        net_inputs = self._graph_tensors(graph)
        infos = {vi.name: vi for vi in [*graph.value_info, *graph.output, *graph.input]}
        used: set[str] = {t["name"] for t in net_inputs}
        index_no_const = 0
        for node in self._topological(graph.node):
            self.report.nodes += 1
            if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
                self.report.constants += 1
                self._constant(node)
                continue
            # ONNX Runtime names an unnamed node <OpType>_<index among non-Constant nodes>: the
            # same name here lets its profile find the op.
            op_name = node.name or f"{node.op_type}_{index_no_const}"
            k = 1
            while op_name in used:
                op_name = f"{node.name or node.op_type}_{k}"
                k += 1
            if op_name != node.name:
                self.report.renamed.append((node.name, op_name))
            index_no_const += 1
            used.add(op_name)
            self._add_node(node, op_name, infos)
        if not self.ops:
            raise self.fail("no ops: every node reads only constants")

        return self._finish(name, net_inputs, kinds, types, pattern, graph)

    def _graph_tensors(self, graph: Any) -> list[dict[str, Any]]:
        """The initializers (constants; small ones with their data, for shape arithmetic) and the
        graph inputs as tensors; returns the network's inputs (the graph inputs that are not
        initializers)."""
        from onnx import numpy_helper

        inits = {t.name: t for t in graph.initializer}
        for t in graph.initializer:
            data = None
            if t.data_location != 1 and _prod(t.dims) <= 64 and t.data_type in (6, 7, 1):
                data = numpy_helper.to_array(t)
            self.tensors[t.name] = Tensor(t.name, tuple(int(d) for d in t.dims),
                                          self._dtype(t.data_type, f"initializer {t.name!r}"),
                                          const=True, data=data)
        net_inputs: list[dict[str, Any]] = []
        for inp in graph.input:
            if inp.name in inits:
                continue
            dims = self._value_dims(inp)
            dtype = self._dtype(inp.type.tensor_type.elem_type, f"graph input {inp.name!r}")
            self.tensors[inp.name] = Tensor(inp.name, dims, dtype, net=True)
            net_inputs.append({"name": inp.name, "dims": list(dims or ()), "dtype": dtype})
        if not net_inputs:
            raise self.fail("the graph has no inputs (only initializers)")
        return net_inputs

    def _add_node(self, node: Any, op_name: str, infos: dict[str, Any]) -> None:
        """One non-Constant node: its outputs as tensors and, unless it reads only constants
        (then it is folded into a constant, as ONNX Runtime does), an op."""
        ins = [self.tensors.get(t) if t else None for t in node.input]
        for t, tname in zip(ins, node.input, strict=True):
            if tname and t is None:
                raise self.fail(f"node {op_name} ({node.op_type}) reads {tname!r}, which no "
                                "node, initializer or graph input produces")
        outs = [self._output(o, infos, node) for o in node.output if o]
        live = [t for t in ins if t is not None and not t.const]
        if not live:  # reads only constants: a constant itself (ONNX Runtime folds these)
            self.report.folded.append(op_name)
            for o in outs:
                o.const, o.producer = True, None
            return
        op = self._node_op(node, op_name, ins, outs)
        self.first_output[op_name] = outs[0].name
        for o in outs:
            o.producer = op_name
        self.onnx_dims[op_name] = outs[0].dims or ()
        self.ops.append(op)

    def _check_ssa(self, graph: Any) -> None:
        """Every tensor assigned once (ONNX's static single assignment, which onnx.checker
        enforces): a node writing a tensor another node or the graph's inputs already define
        would make one of the producers vanish from the imported graph."""
        defined = {t.name: "a graph input" for t in graph.input}
        defined.update((t.name, "an initializer") for t in graph.initializer)
        for i, node in enumerate(graph.node):
            for out in node.output:
                if not out:
                    continue
                first = defined.get(out)
                if first is not None:
                    raise self.fail(f"node {node.name or i!r} ({node.op_type}) writes tensor {out!r}, "
                                    f"which {first} already defines: an ONNX graph assigns every tensor "
                                    "once (SSA); the model is malformed")
                defined[out] = f"node {node.name or i!r} ({node.op_type})"

    def _topological(self, nodes: Sequence[Any]) -> list[Any]:
        """The nodes in an order where every tensor is produced before it is read (ONNX requires
        the file order to be one; exporters sometimes break it)."""
        import networkx as nx

        produced = {o: i for i, n in enumerate(nodes) for o in n.output if o}
        if all(produced.get(t, -1) < i for i, n in enumerate(nodes) for t in n.input if t):
            return list(nodes)
        g = nx.DiGraph()
        g.add_nodes_from(range(len(nodes)))
        g.add_edges_from((produced[t], i) for i, n in enumerate(nodes) for t in n.input
                         if t in produced)
        try:
            order = list(nx.lexicographical_topological_sort(g))
        except nx.NetworkXUnfeasible:
            raise self.fail("the graph has a cycle (an ONNX graph is a DAG)") from None
        return [nodes[i] for i in order]

    def _constant(self, node: Any) -> None:
        from onnx import helper, numpy_helper

        out = node.output[0]
        attr = node.attribute[0] if node.attribute else None
        data = None
        if attr is not None and attr.name == "value":
            data = numpy_helper.to_array(attr.t)
        elif attr is not None:
            data = np.asarray(helper.get_attribute_value(attr))
        dtype = _np_dtype(data) if data is not None else "float32"
        self.tensors[out] = Tensor(out, tuple(data.shape) if data is not None else (), dtype,
                                   const=True, data=data if data is not None and data.size <= 64
                                   else None)

    def _output(self, tname: str, infos: Mapping[str, Any], node: Any) -> Tensor:
        vi = infos.get(tname)
        dims = self._value_dims(vi) if vi is not None else None
        elem = vi.type.tensor_type.elem_type if vi is not None else 0
        dtype = ONNX_DTYPES.get(elem, "float32") if elem else None
        if dims is None:
            dims = self._own_dims(node, tname)
        if dtype is None:  # unknown to ONNX's inference (a contrib op): that of its first input
            first = self.tensors.get(node.input[0]) if node.input else None
            dtype = first.dtype if first is not None else "float32"
        t = Tensor(tname, dims, dtype)
        self.tensors[tname] = t
        return t

    def _own_dims(self, node: Any, tname: str) -> Dims | None:
        """Output dims ONNX's inference did not give (contrib ops such as FusedConv): convolution
        and pooling arithmetic here; otherwise None (an error where the dims are needed)."""
        if node.op_type not in ("FusedConv", "Conv", "MaxPool", "AveragePool") or not node.input:
            return None
        from onnx import helper

        x = self.tensors.get(node.input[0])
        if x is None or x.dims is None or len(x.dims) < 3:
            return None
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        spatial = len(x.dims) - 2
        if node.op_type in ("FusedConv", "Conv"):
            w = self.tensors.get(node.input[1]) if len(node.input) > 1 else None
            if w is None or w.dims is None:
                return None
            kernel, channels = list(w.dims[2:]), w.dims[0]
        else:
            kernel, channels = list(attrs.get("kernel_shape", [])), x.dims[1]
        strides = attrs.get("strides", [1] * spatial)
        dil = attrs.get("dilations", [1] * spatial)
        pads = _pads(attrs, x.dims[2:], kernel, strides, dil)
        if pads is None:
            return None
        out = [x.dims[0], channels]
        for i in range(spatial):
            eff = dil[i] * (kernel[i] - 1) + 1
            out.append(window_out_size(x.dims[2 + i], eff, strides[i], (pads[i], pads[i + spatial]),
                                       bool(attrs.get("ceil_mode", 0))))
        return tuple(out)

    # -- one node -> one op -------------------------------------------------------------------
    def _node_op(self, node: Any, name: str, ins: list[Tensor | None], outs: list[Tensor]) -> dict:
        from onnx import helper

        op_type = node.op_type
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        self.report.by_op_type[op_type] += 1
        if kind_of(op_type) is None:
            if not self.allow_unknown:
                raise self.fail(f"node {name}: op type {op_type!r}"
                                f"{' (domain ' + node.domain + ')' if node.domain else ''} is not "
                                "one hetsim imports (see docs/import.md; --allow-unknown imports "
                                "it as a memory-bound op)")
            self.report.unknown.append((name, op_type))
        for o in outs:
            if o.dims is None:
                raise self.fail(f"node {name} ({op_type}): cannot infer the dims of its output "
                                f"{o.name!r} (give --input-shape for symbolic inputs)")
        op = self._native(node, name, op_type, attrs, ins, outs)
        if op is None:
            op = self._generic(name, op_type, attrs, ins, outs)
        return op

    def _io(self, name: str, ins: list[Tensor | None]) -> dict[str, Any]:
        """The ``inputs`` of an op: producer ops and network inputs, in order, once each."""
        names: list[str] = []
        for t in ins:
            if t is None or t.const:
                continue
            src = t.producer if t.producer is not None else t.name
            if src not in names:
                names.append(src)
        return {"inputs": names}

    def _native(self, node: Any, name: str, op_type: str, attrs: dict, ins: list[Tensor | None],
                outs: list[Tensor]) -> dict | None:
        """The CNN-kind op for an NCHW batch-1 node, or None (with the reason in the report when
        the node is a CNN op type that does not fit)."""
        live = [t for t in ins if t is not None and not t.const]
        consts = [t for t in ins if t is not None and t.const]
        x, y = live[0], outs[0]
        if len(outs) != 1 or not x.image or not y.image:
            return self._reject(name, op_type, "not NCHW at batch 1") if op_type in CONV_OPS | set(POOL_OPS) \
                else None
        if any(t.producer is not None and self.first_output[t.producer] != t.name for t in live):
            # reads a second output of a node (Split): the CNN kinds see a producer's first only
            return self._reject(name, op_type, "reads a second output of its producer")
        common: dict[str, Any] = {"op_type": op_type}
        if y.dtype != "float32":
            common["dtype"] = y.dtype
        if op_type in ("Conv", "FusedConv"):
            return self._native_conv(name, op_type, attrs, ins, live, consts, x, y, common)
        if op_type in ("MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"):
            return self._native_pool(node, name, op_type, attrs, ins, x, common)
        if op_type == "BatchNormalization" or op_type in ACTIVATION_OPS or op_type in ("LRN", "Softmax"):
            return self._native_pointwise(name, op_type, ins, live, consts, x, y, common)
        if op_type in ("Add", "Sum", "Concat", "Flatten", "Reshape"):
            return self._native_join_reshape(name, op_type, attrs, ins, live, consts, x, y, common)
        if op_type in ("Gemm", "MatMul"):
            return self._native_fc(name, op_type, attrs, ins, live, consts, x, y, common)
        return None

    def _reject(self, name: str, op_type: str, why: str) -> dict | None:
        """None: no CNN kind for this node; a CNN op type's reason goes in the report (generic_cnn)."""
        if op_type in CONV_OPS or op_type in POOL_OPS or op_type in ("Gemm", "BatchNormalization"):
            self.report.generic_cnn.append((name, why))
        return None

    def _native_conv(self, name: str, op_type: str, attrs: dict, ins: list[Tensor | None], live: list[Tensor],
                     consts: list[Tensor], x: Tensor, y: Tensor, common: dict) -> dict | None:
        """A 2-D conv (or depthwise conv) of one activation by constant filters; weight_bytes only
        where the constants differ from the kind's formula."""
        dtype = y.dtype
        w = ins[1]
        if len(live) != 1 or w is None or not w.const or w.dims is None or len(w.dims) != 4 \
                or len(x.dims) != 4:  # type: ignore[arg-type]
            return self._reject(name, op_type, "not a 2-D conv of one activation by constant filters")
        window = _window(attrs, x.dims[2:], list(w.dims[2:]))  # type: ignore[index]
        if isinstance(window, str):
            return self._reject(name, op_type, window)
        stride, pad, dilation = window
        c_in, m, g = x.dims[1], w.dims[0], int(attrs.get("group", 1))  # type: ignore[index]
        kh, kw = w.dims[2], w.dims[3]
        kernel: Any = kh if kh == kw else [kh, kw]
        params = sum(t.bytes_ for t in consts)
        if g > 1 and g == c_in == m:
            op = {"name": name, "kind": "dw", **self._io(name, ins), "kernel": kernel}
            formula = (kh * kw * m + m) * DTYPE_BYTES[dtype]
        else:
            op = {"name": name, "kind": "conv", **self._io(name, ins), "kernel": kernel}
            formula = (kh * kw * (c_in // g) * (m // g) * g + m) * DTYPE_BYTES[dtype]
        _set_window(op, stride, pad, dilation)
        if op["kind"] == "conv":
            op["out_c"] = m
            if g > 1:
                op["groups"] = g
        op.update(common)
        if params != formula:
            op["weight_bytes"] = params
        if op_type == "FusedConv":  # conv + its activation, one node: +1 FLOP per output
            counted = count_node(op_type, attrs, [t.dims if t else None for t in ins],
                                 [y.dims])  # type: ignore[list-item]
            op["flops"] = counted.flops
        return op

    def _native_pool(self, node: Any, name: str, op_type: str, attrs: dict, ins: list[Tensor | None],
                     x: Tensor, common: dict) -> dict | None:
        """A 2-D undilated max/average pool with one output, or a global pool."""
        if op_type in ("GlobalAveragePool", "GlobalMaxPool"):
            if len(x.dims) != 4:  # type: ignore[arg-type]
                return self._reject(name, op_type, "not 4-D")
            h, w_ = x.dims[2], x.dims[3]  # type: ignore[index]
            return {"name": name, "kind": POOL_OPS[op_type], **self._io(name, ins),
                    "kernel": h if h == w_ else [h, w_], **common}
        if len(x.dims) != 4 or (op_type == "MaxPool" and len(node.output) > 1 and  # type: ignore[arg-type]
                                node.output[1]):
            return self._reject(name, op_type, "not a 2-D pool with one output")
        ks = list(attrs.get("kernel_shape", []))
        if len(ks) != 2 or any(d != 1 for d in attrs.get("dilations", [1, 1])):
            return self._reject(name, op_type, "not a 2-D undilated window")
        window = _window(attrs, x.dims[2:], ks)  # type: ignore[index]
        if isinstance(window, str):
            return self._reject(name, op_type, window)
        stride, pad, _ = window
        op = {"name": name, "kind": POOL_OPS[op_type], **self._io(name, ins),
              "kernel": ks[0] if ks[0] == ks[1] else ks}
        _set_window(op, stride, pad, 1)
        if attrs.get("ceil_mode"):
            op["ceil_mode"] = True
        op.update(common)
        return op

    def _native_pointwise(self, name: str, op_type: str, ins: list[Tensor | None], live: list[Tensor],
                          consts: list[Tensor], x: Tensor, y: Tensor, common: dict) -> dict | None:
        """BatchNormalization with constant statistics; an activation, LRN or Softmax of one
        activation, its shape kept."""
        if op_type == "BatchNormalization":
            if len(live) != 1 or len(consts) != 4:
                return self._reject(name, op_type, "statistics are not constants")
            op = {"name": name, "kind": "bn", **self._io(name, ins), **common}
            params = sum(t.bytes_ for t in consts)
            if params != 4 * x.dims[1] * DTYPE_BYTES[y.dtype]:  # type: ignore[index]
                op["weight_bytes"] = params
            return op
        if len(live) != 1 or x.dims != y.dims:
            return None
        kind = {"LRN": "lrn", "Softmax": "softmax"}.get(op_type, "relu")
        op = {"name": name, "kind": kind, **self._io(name, ins), **common}
        params = sum(t.bytes_ for t in consts if t.dtype not in _INT_DTYPES)
        if op_type == "PRelu" and params:
            op["weight_bytes"] = params
        return op

    def _native_join_reshape(self, name: str, op_type: str, attrs: dict, ins: list[Tensor | None],
                             live: list[Tensor], consts: list[Tensor], x: Tensor, y: Tensor,
                             common: dict) -> dict | None:
        """Add/Sum of two or more distinct producers' images, a channel Concat of images, and a
        Flatten or Reshape of one activation."""
        if op_type in ("Add", "Sum"):
            if consts or len(live) < 2 or any(t.dims != y.dims or not t.image for t in live):
                return None
            if len({t.producer or t.name for t in live}) != len(live):
                return None  # x + x: one producer, the CNN add needs two
            return {"name": name, "kind": "add", **self._io(name, ins), **common}
        if op_type == "Concat":
            axis = int(attrs.get("axis", 1)) % len(y.dims)  # type: ignore[arg-type]
            if consts or axis != 1 or any(not t.image or len(t.dims) != len(y.dims)  # type: ignore[arg-type]
                                          for t in live):
                return None
            if len({t.producer or t.name for t in live}) != len(live):
                return None
            return {"name": name, "kind": "concat", **self._io(name, ins), **common}
        if op_type == "Flatten":
            if len(live) != 1 or Shape.of_dims(y.dims) != Shape(1, 1, _prod(x.dims)):  # type: ignore[arg-type]
                return None
            return {"name": name, "kind": "flatten", **self._io(name, ins), **common}
        if len(live) != 1:
            return None
        s = Shape.of_dims(y.dims)  # type: ignore[arg-type]
        return {"name": name, "kind": "reshape", **self._io(name, ins),
                "shape": {"h": s.h, "w": s.w, "c": s.c}, **common}

    def _native_fc(self, name: str, op_type: str, attrs: dict, ins: list[Tensor | None], live: list[Tensor],
                   consts: list[Tensor], x: Tensor, y: Tensor, common: dict) -> dict | None:
        """A Gemm or MatMul of a vector by constant weights (fc); only a Gemm's misfit is reported."""
        b = ins[1] if len(ins) > 1 else None
        if (len(live) != 1 or b is None or not b.const or b.dims is None or len(b.dims) != 2
                or len(x.dims) != 2 or attrs.get("transA", 0)):  # type: ignore[arg-type]
            return self._reject(name, op_type, "not a vector times constant weights") if op_type == "Gemm" \
                else None
        k, m = (b.dims[1], b.dims[0]) if attrs.get("transB", 0) else (b.dims[0], b.dims[1])
        if k != x.dims[1] or y.dims != (1, m):  # type: ignore[index]
            return self._reject(name, op_type, "weights do not match") if op_type == "Gemm" else None
        op = {"name": name, "kind": "fc", **self._io(name, ins), "out_c": m, **common}
        params = sum(t.bytes_ for t in consts)
        if params != (k * m + m) * DTYPE_BYTES[y.dtype]:
            op["weight_bytes"] = params
        return op

    def _generic(self, name: str, op_type: str, attrs: dict, ins: list[Tensor | None],
                 outs: list[Tensor]) -> dict:
        """A generic op: output dims and counts from the tensors (docs/import.md)."""
        counted = count_node(op_type, attrs, [t.dims if t is not None else None for t in ins],
                             [o.dims for o in outs])  # type: ignore[misc]
        kind = counted.kind
        live = [t for t in ins if t is not None and not t.const]
        consts = [t for t in ins if t is not None and t.const]
        seen: set[str] = set()
        live_bytes = 0
        for t in live:
            if t.name not in seen:
                seen.add(t.name)
                live_bytes += t.bytes_
        out_bytes = sum(o.bytes_ for o in outs)
        # Constant float inputs are parameters; integer constants are arguments (a Reshape's
        # target, Slice's starts, axes) and move no data worth counting.
        weight_bytes = sum(t.bytes_ for t in consts if t.dtype not in _INT_DTYPES)
        input_bytes = live_bytes
        if kind == "shape":
            input_bytes, weight_bytes = 0, 0  # reads metadata, not the tensor
        elif kind == "gather":
            # Reads the gathered rows (= its output) and the indices, not the whole table: an
            # embedding lookup does not stream the embedding matrix.
            indices = [t for t in ins[1:] if t is not None and not t.const]
            input_bytes = out_bytes + sum(t.bytes_ for t in indices)
            weight_bytes = 0
        elif kind == "slice":
            input_bytes = out_bytes  # reads the window it copies out
            weight_bytes = 0
        elif kind in ("reshape", "flatten"):
            weight_bytes = 0
        op: dict[str, Any] = {"name": name, "kind": kind, "op_type": op_type,
                              **self._io(name, ins)}
        w = ins[1] if op_type in CONV_OPS and len(ins) > 1 else None
        if w is not None and w.dims is not None and len(w.dims) == 4:  # for cost models that look
            op["kernel"] = w.dims[2] if w.dims[2] == w.dims[3] else list(w.dims[2:])
        dims = [list(o.dims) for o in outs]  # type: ignore[arg-type]
        op["dims"] = dims[0] if len(dims) == 1 else dims
        dtype = outs[0].dtype
        if dtype != "float32":
            op["dtype"] = dtype
        if kind in GEMM_KINDS and counted.gemm is not None:
            op["gemm"] = list(counted.gemm)
            if counted.gemm_groups != 1:
                op["gemm_groups"] = counted.gemm_groups
            if counted.macs != _prod(counted.gemm) * (counted.gemm_groups or 0):
                op["macs"] = counted.macs
        elif kind in GEMM_KINDS:  # a matmul without dims to count: a memory-bound op
            op["kind"] = kind = "other"
        op["flops"] = counted.flops
        op["input_bytes"] = input_bytes
        if any(o.dtype != dtype for o in outs):
            op["output_bytes"] = out_bytes  # outputs of different element types
        if weight_bytes:
            op["weight_bytes"] = weight_bytes
        if kind == "conv" and op_type == "ConvTranspose":
            op["im2col_bytes"] = 0  # col2im, not im2col
        return op

    # -- the workload -------------------------------------------------------------------------
    def _finish(self, name: str, net_inputs: list[dict], kinds: list[str], types: set[str],
                pattern: re.Pattern | None, graph: Any) -> ImportResult:
        image_input = (len(net_inputs) == 1 and net_inputs[0]["dtype"] == "float32"
                       and len(net_inputs[0]["dims"]) == 4 and net_inputs[0]["dims"][0] == 1)
        first_name = net_inputs[0]["name"]
        if image_input:
            _, c, h, w = net_inputs[0]["dims"]
            spec_input: dict[str, Any] = {"h": h, "w": w, "c": c}
            # The H×W×C form has no name: the ops that read it say `inputs: []` (or nothing).
            for op in self.ops:
                if first_name in op["inputs"]:
                    if op["inputs"] != [first_name]:
                        image_input = False
                        break
            if image_input:
                for op in self.ops:
                    if op["inputs"] == [first_name]:
                        op["inputs"] = []
        if not image_input:
            spec_input = dict(net_inputs[0])
        layer_kinds = kinds or list(DEFAULT_LAYER_KINDS)
        previous = None
        for op in self.ops:
            starts = (op["kind"] in kinds or op["op_type"] in types
                      or (pattern is not None and pattern.search(op["name"]) is not None))
            starts = self.layer_marks.get(op["name"], starts)
            if starts != (op["kind"] in layer_kinds):
                op["layer_start"] = starts
            # The file format defaults `inputs` to the previous op: write only real branches.
            if op["inputs"] == ([previous] if previous else []) and previous is not None:
                del op["inputs"]
            previous = op["name"]
        if self.ops and self.ops[0].get("inputs") == [] and image_input:
            del self.ops[0]["inputs"]
        spec = {
            "schema": 1,
            "name": name,
            "description": f"Imported from ONNX ({graph.name or 'unnamed graph'}, "
                           f"{self.report.nodes} nodes)",
            "source": self.source,
            "input": spec_input,
            "extra_inputs": [dict(t) for t in net_inputs[1:]] if not image_input else [],
            "layer_kinds": layer_kinds,
            "ops": self.ops,
        }
        if not spec["extra_inputs"]:
            del spec["extra_inputs"]
        workload = self._build(spec)
        for built in workload.ops:
            self.report.by_kind[str(built.kind)] += 1
        self.report.ops = len(workload.ops)
        return ImportResult(spec, workload, self.report)

    def _build(self, spec: dict) -> Workload:
        """Build the workload; a native op whose inferred H×W×C disagrees with ONNX's dims (which
        the checks above should prevent) falls back to a generic op."""
        workload = workload_from_dict(spec, self.source)
        bad = [op.name for op in workload.ops
               if not op.explicit and op.out_shape != Shape.of_dims(self.onnx_dims[op.name])]
        if bad:  # pragma: no cover - a guard against a native mapping rule being wrong
            raise self.fail(f"internal: native shapes disagree with ONNX for {_few(bad)}")
        return workload


_INT_DTYPES = frozenset({"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                         "bool"})


def _np_dtype(data: np.ndarray) -> str:
    name = str(data.dtype)
    return name if name in DTYPE_BYTES else "float32"


def _pads(attrs: Mapping[str, Any], spatial: Sequence[int], kernel: Sequence[int],
          strides: Sequence[int], dilations: Sequence[int]) -> list[int] | None:
    """ONNX pads [b1, b2, ..., e1, e2, ...] from ``pads`` or ``auto_pad``."""
    n = len(spatial)
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto in ("NOTSET", ""):
        pads = list(attrs.get("pads", [0] * (2 * n)))
        return pads if len(pads) == 2 * n else None
    if auto == "VALID":
        return [0] * (2 * n)
    begin, end = [], []
    for i in range(n):  # SAME_UPPER / SAME_LOWER: output = ceil(input / stride)
        eff = dilations[i] * (kernel[i] - 1) + 1
        total = max((math.ceil(spatial[i] / strides[i]) - 1) * strides[i] + eff - spatial[i], 0)
        small = total // 2
        begin.append(small if auto == "SAME_UPPER" else total - small)
        end.append(total - begin[-1])
    return begin + end


def _window(attrs: Mapping[str, Any], spatial: Sequence[int],
            kernel: Sequence[int]) -> tuple[int, tuple[int, int], int] | str:
    """(stride, (pad begin, pad end), dilation) of a 2-D window the CNN kinds can express (the
    same on both axes), or why not."""
    strides = list(attrs.get("strides", [1, 1]))
    dil = list(attrs.get("dilations", [1, 1]))
    pads = _pads(attrs, spatial, kernel, strides, dil)
    if pads is None or len(strides) != 2 or len(dil) != 2:
        return "not 2-D"
    if strides[0] != strides[1]:
        return f"strides {strides} differ"
    if dil[0] != dil[1]:
        return f"dilations {dil} differ"
    if pads[0] != pads[1] or pads[2] != pads[3]:
        return f"pads {pads} differ between the axes"
    eff = [dil[0] * (k - 1) + 1 for k in kernel]
    if max(pads) >= min(eff):
        return f"pads {pads} not smaller than the kernel"
    return strides[0], (pads[0], pads[2]), dil[0]


def _set_window(op: dict, stride: int, pad: tuple[int, int], dilation: int) -> None:
    if stride != 1:
        op["stride"] = stride
    if pad != (0, 0):
        op["pad"] = pad[0] if pad[0] == pad[1] else list(pad)
    if dilation != 1:
        op["dilation"] = dilation


# -- entry points ----------------------------------------------------------------------------
def import_onnx(model: Any, name: str | None = None, *,
                input_shapes: Mapping[str, Sequence[int]] | None = None,
                layers: str | Sequence[str] | None = None, allow_unknown: bool = False,
                source: str | None = None) -> ImportResult:
    """Import an ONNX model (a path or an ``onnx.ModelProto``): the workload dict, the workload and
    the report. ``name`` defaults to the file's stem (or the graph's name); ``input_shapes`` fixes
    symbolic input dims; ``layers`` is the ``--layers`` spec (:func:`parse_layers`)."""
    if isinstance(model, str | os.PathLike):
        path = Path(model)
        src = source or str(path)
        proto = load_onnx(path)
        default_name = path.stem
    else:
        proto = model
        src = source or f"<onnx {proto.graph.name or 'model'}>"
        default_name = proto.graph.name or "model"
    from hetsim.loading import check_load

    check_load(src, len(proto.graph.node), "nodes")   # counted before shape inference
    try:
        return _Importer(proto, src, input_shapes, allow_unknown).run(name or default_name, layers)
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError,
            OverflowError) as e:
        # A model whose protobuf parses but whose fields contradict each other (an attribute of
        # the wrong type, a tensor whose data does not fit its dims: what a corrupted file gives).
        # hetsim's own errors are HetsimErrors; anything else here is the model's inconsistency.
        raise HetsimError(f"{src}: a malformed ONNX model: {type(e).__name__}: {_first_line(e)[:160]}") from None


def folded_readers(model: Any, workload: Workload) -> dict[str, str]:
    """The ONNX nodes the import folded into constants (nodes that read only constants, e.g.
    DenseNet-121's Unsqueeze of Scale's gamma) -> the first op of ``workload`` that reads their
    output (through other folded nodes), so that a mapping can place every node of the model."""
    names = {op.name for op in workload.ops}
    nodes = list(model.graph.node)
    name_of = [n.name or n.output[0] for n in nodes]
    readers: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for tensor in node.input:
            readers.setdefault(tensor, []).append(i)
    out: dict[str, str] = {}
    for i, node in enumerate(nodes):
        if name_of[i] in names:
            continue
        frontier, seen = list(node.output), set()
        while frontier:
            tensor = frontier.pop(0)
            for j in readers.get(tensor, ()):
                if name_of[j] in names:
                    out.setdefault(name_of[i], name_of[j])
                elif j not in seen:
                    seen.add(j)
                    frontier.extend(nodes[j].output)
            if name_of[i] in out:
                break
    return out


def workload_from_onnx(model: Any, name: str | None = None, **kwargs: Any) -> Workload:
    """The workload of an ONNX model (a path or an ``onnx.ModelProto``); see :func:`import_onnx`."""
    return import_onnx(model, name, **kwargs).workload


__all__ = ["ImportReport", "ImportResult", "count_node", "fix_input_shapes", "folded_readers", "import_onnx",
           "kind_of", "load_onnx",
           "parse_input_shapes", "parse_layers", "workload_from_onnx"]
