"""A small builder of ONNX graphs, for the networks hetsim generates by code (never downloads).

Networks the papers use (HOPE's Inception and NASNet family, the PIM paper's transformers, the
edge-partitioning CNNs) are written as code that emits a real ONNX model with the ``onnx``
package; ``hetsim workloads import`` (or :func:`hetsim.workload.onnx_import.workload_from_onnx`)
turns it into a workload like any model a user brings. The builder tracks every tensor's shape
(NCHW for images) so that a network reads like its definition::

    g = OnnxGraph("tiny")
    x = g.input("x", (1, 3, 32, 32))
    y = g.relu(g.conv(x, 16, 3, pad=1))
    y = g.global_avg_pool(y)
    model = g.model(g.flatten(y))

Weights are initializers whose *shape* is real and whose data is absent (``weights="external"``:
an external-data reference that is never read; what a model exported without its weights looks
like) unless ``weights="random"`` asks for seeded random values (a model onnxruntime can run).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import onnx

from hetsim.workload.ops import window_out_size

Dims = tuple[int, ...]

_DTYPES = {"float32": "FLOAT", "int64": "INT64", "float16": "FLOAT16", "bfloat16": "BFLOAT16", "int8": "INT8",
           "bool": "BOOL"}


def _elem(dtype: str) -> int:
    """ONNX's element type of a dtype name. onnx is imported when a model is built, not when a
    module of networks is imported (listing the networks needs no [onnx] extra)."""
    from onnx import TensorProto

    return int(getattr(TensorProto, _DTYPES[dtype]))

#: ONNX opset the generated models declare.
OPSET = 17


def broadcast(a: Dims, b: Dims) -> Dims:
    """numpy broadcasting of two shapes (ONNX multidirectional broadcasting)."""
    return tuple(np.broadcast_shapes(a, b))


def _pair(v: int | Sequence[int]) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def tf_same_pads(size: int, kernel: int, stride: int, dilation: int = 1) -> tuple[int, int]:
    """TensorFlow's ``padding='SAME'`` along one axis: the output has ceil(size / stride) elements
    and the odd padding element goes at the end (TF-slim networks are defined with it)."""
    span = dilation * (kernel - 1) + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + span - size, 0)
    return total // 2, total - total // 2


def _resolve_pads(pad: int | str | Sequence[int], h: int, w: int, kh: int, kw: int, stride: int,
                  dilation: int = 1) -> list[int]:
    """ONNX pads (top, left, bottom, right) from one value, (pad_h, pad_w), ONNX's 4 values,
    "valid" (0) or "same" (TensorFlow's SAME, :func:`tf_same_pads`)."""
    if isinstance(pad, str):
        if pad.lower() == "valid":
            return [0, 0, 0, 0]
        if pad.lower() != "same":
            raise ValueError(f"pad={pad!r}: allowed: an int, 2 or 4 ints, 'same', 'valid'")
        (t, b), (left, r) = tf_same_pads(h, kh, stride, dilation), tf_same_pads(w, kw, stride, dilation)
        return [t, left, b, r]
    if isinstance(pad, int):
        return [pad] * 4
    return list(pad) * 2 if len(pad) == 2 else list(pad)


class OnnxGraph:
    """Nodes, initializers and the shape of every tensor of one graph under construction.

    Every op method takes tensor names and returns the name of its output; names are made unique
    from ``name`` (or the op type) with a counter, in the order nodes are added (a topological
    order, as ONNX requires).
    """

    def __init__(self, name: str, weights: str = "external", seed: int = 0):
        if weights not in ("external", "random"):
            raise ValueError(f"weights={weights!r}: allowed: 'external', 'random'")
        self.name = name
        self.weights = weights
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.inputs: list[onnx.ValueInfoProto] = []
        self.shapes: dict[str, Dims] = {}
        self.dtypes: dict[str, str] = {}
        self._counts: dict[str, int] = {}

    # -- names, tensors ---------------------------------------------------------------------
    def fresh(self, base: str) -> str:
        n = self._counts.get(base, 0)
        self._counts[base] = n + 1
        return base if n == 0 and base not in self.shapes else f"{base}_{n}"

    def shape(self, tensor: str) -> Dims:
        return self.shapes[tensor]

    def input(self, name: str, dims: Sequence[int], dtype: str = "float32") -> str:
        from onnx import helper

        self.inputs.append(helper.make_tensor_value_info(name, _elem(dtype), list(dims)))
        self.shapes[name], self.dtypes[name] = tuple(int(d) for d in dims), dtype
        return name

    def weight(self, base: str, dims: Sequence[int], dtype: str = "float32",
               init: str = "normal") -> str:
        """An initializer of shape ``dims`` (data absent unless ``weights="random"``).

        Random data is seeded: ``init="normal"`` draws N(0, 1/fan_in), ``init="positive"`` draws
        U(0.5, 1.5) (batch-norm scales and variances, which must stay positive)."""
        from onnx import TensorProto, numpy_helper

        if init not in ("normal", "positive"):
            raise ValueError(f"init={init!r}: allowed: 'normal', 'positive'")
        name = self.fresh(base)
        dims = tuple(int(d) for d in dims)
        if self.weights == "random" or dtype == "int64":
            if dtype == "int64":
                raise ValueError("use const() for integer tensors")
            if init == "positive":
                data = self.rng.uniform(0.5, 1.5, dims).astype(np.float32)
            else:
                fan_in = max(1, math.prod(dims[1:]))
                # float32 draws directly: AlexNet's 61 M weights in about a second, not three.
                data = self.rng.standard_normal(dims, dtype=np.float32) / np.float32(math.sqrt(fan_in))
            t = numpy_helper.from_array(data, name)
        else:
            t = TensorProto()
            t.name, t.data_type = name, _elem(dtype)
            t.dims.extend(dims)
            t.data_location = TensorProto.EXTERNAL
            entry = t.external_data.add()
            entry.key, entry.value = "location", f"{self.name}.weights"
        self.initializers.append(t)
        self.shapes[name], self.dtypes[name] = dims, dtype
        return name

    def const(self, base: str, values: float | Sequence[int] | Sequence[float],
              dtype: str = "int64") -> str:
        """A small constant initializer with real data (shape vectors, axes; a bare number gives a
        0-d scalar)."""
        from onnx import numpy_helper

        name = self.fresh(base)
        arr = np.asarray(values, dtype=np.int64 if dtype == "int64" else np.float32)
        self.initializers.append(numpy_helper.from_array(arr, name))
        self.shapes[name], self.dtypes[name] = tuple(arr.shape), dtype
        return name

    def node(self, op_type: str, inputs: Sequence[str], out_dims: Dims | Sequence[Dims], *,
             name: str | None = None, n_outputs: int = 1, dtype: str | None = None, **attrs) -> str:
        """Add any node; ``out_dims`` is the output shape (a list of shapes for several outputs).
        Returns the first output's name (all of them are ``<name>``, ``<name>:1``...)."""
        from onnx import helper

        node_name = self.fresh(name or op_type.lower())
        outs = [node_name] + [f"{node_name}:{i}" for i in range(1, n_outputs)]
        dims: Any = out_dims  # one shape, or one per output
        all_dims = [tuple(dims)] if n_outputs == 1 else [tuple(d) for d in dims]
        out_dtype = dtype or (self.dtypes.get(inputs[0], "float32") if inputs else "float32")
        for o, d in zip(outs, all_dims, strict=True):
            self.shapes[o], self.dtypes[o] = tuple(int(x) for x in d), out_dtype
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=node_name, **attrs))
        return outs[0]

    # -- convolutional networks (NCHW) -------------------------------------------------------
    def conv(self, x: str, out_c: int, kernel: int | Sequence[int], stride: int = 1,
             pad: int | str | Sequence[int] = 0, groups: int = 1, dilation: int = 1,
             bias: bool = True, name: str | None = None) -> str:
        """Conv; ``pad`` is one value, (pad_h, pad_w), ONNX's (top, left, bottom, right), "valid"
        or "same" (TensorFlow's SAME: the odd element at the end)."""
        n, c, h, w = self.shape(x)
        kh, kw = _pair(kernel)
        pads = _resolve_pads(pad, h, w, kh, kw, stride, dilation)
        oh = (h + pads[0] + pads[2] - dilation * (kh - 1) - 1) // stride + 1
        ow = (w + pads[1] + pads[3] - dilation * (kw - 1) - 1) // stride + 1
        base = name or "conv"
        inputs = [x, self.weight(f"{base}.weight", (out_c, c // groups, kh, kw))]
        if bias:
            inputs.append(self.weight(f"{base}.bias", (out_c,)))
        return self.node("Conv", inputs, (n, out_c, oh, ow), name=name, kernel_shape=[kh, kw],
                         strides=[stride, stride], pads=pads, group=groups,
                         dilations=[dilation, dilation])

    def batch_norm(self, x: str, epsilon: float = 1e-5, name: str | None = None) -> str:
        """Inference BatchNormalization (scale, bias, running mean and variance per channel)."""
        c = self.shape(x)[1]
        base = name or "bn"
        params = [self.weight(f"{base}.{p}", (c,), init="positive" if p in ("scale", "var")
                              else "normal") for p in ("scale", "bias", "mean", "var")]
        return self.node("BatchNormalization", [x, *params], self.shape(x), name=name,
                         epsilon=float(epsilon))

    def pool(self, x: str, kind: str, kernel: int | Sequence[int], stride: int | None = None,
             pad: int | str | Sequence[int] = 0, ceil: bool = False, name: str | None = None) -> str:
        """MaxPool or AveragePool (``kind`` "max" or "avg"); ``pad`` as for :meth:`conv`. An
        average excludes the padding (``count_include_pad=0``, TensorFlow's and Caffe's SAME)."""
        n, c, h, w = self.shape(x)
        kh, kw = _pair(kernel)
        s = stride or kh
        pads = _resolve_pads(pad, h, w, kh, kw, s)
        # ONNX's rule (as Caffe's and PyTorch's): with ceil_mode the last window must still start
        # inside the input or its leading pad.
        oh = window_out_size(h, kh, s, (pads[0], pads[2]), ceil)
        ow = window_out_size(w, kw, s, (pads[1], pads[3]), ceil)
        op = "MaxPool" if kind == "max" else "AveragePool"
        attrs: dict[str, Any] = {"kernel_shape": [kh, kw], "strides": [s, s], "pads": pads}
        if ceil:
            attrs["ceil_mode"] = 1
        if op == "AveragePool":
            attrs["count_include_pad"] = 0
        return self.node(op, [x], (n, c, oh, ow), name=name, **attrs)

    def global_avg_pool(self, x: str, name: str | None = None) -> str:
        n, c = self.shape(x)[:2]
        return self.node("GlobalAveragePool", [x], (n, c, 1, 1), name=name)

    def lrn(self, x: str, size: int = 5, name: str | None = None) -> str:
        return self.node("LRN", [x], self.shape(x), name=name, size=size, alpha=1e-4, beta=0.75,
                         bias=1.0)

    def flatten(self, x: str, axis: int = 1, name: str | None = None) -> str:
        d = self.shape(x)
        return self.node("Flatten", [x], (math.prod(d[:axis]), math.prod(d[axis:])), name=name,
                         axis=axis)

    def concat(self, xs: Sequence[str], axis: int = 1, name: str | None = None) -> str:
        dims = list(self.shape(xs[0]))
        dims[axis] = sum(self.shape(t)[axis] for t in xs)
        return self.node("Concat", list(xs), tuple(dims), name=name, axis=axis)

    # -- dense algebra ---------------------------------------------------------------------
    def gemm(self, x: str, out_features: int, trans_b: bool = True, bias: bool = True,
             name: str | None = None) -> str:
        """Gemm with a weight initializer: [M, K] x W^T (trans_b) or x W, + bias."""
        m, k = self.shape(x)
        base = name or "gemm"
        w = self.weight(f"{base}.weight", (out_features, k) if trans_b else (k, out_features))
        inputs = [x, w] + ([self.weight(f"{base}.bias", (out_features,))] if bias else [])
        return self.node("Gemm", inputs, (m, out_features), name=name, transB=int(trans_b))

    def matmul(self, a: str, b: str, name: str | None = None) -> str:
        """MatMul with numpy semantics (batched, broadcasting over leading dims)."""
        da, db = self.shape(a), self.shape(b)
        if len(db) == 1:
            out = da[:-1]
        elif len(da) == 1:
            out = db[:-2] + db[-1:]
        else:
            out = broadcast(da[:-2], db[:-2]) + (da[-2], db[-1])
        return self.node("MatMul", [a, b], out, name=name)

    def linear(self, x: str, out_features: int, name: str | None = None) -> str:
        """MatMul by a [K, N] weight initializer (PyTorch's Linear as exported without fusion)."""
        w = self.weight(f"{name or 'linear'}.weight", (self.shape(x)[-1], out_features))
        return self.matmul(x, w, name=name)

    # -- element-wise and the rest ------------------------------------------------------------
    def unary(self, op_type: str, x: str, name: str | None = None, **attrs) -> str:
        """Relu, Sigmoid, Tanh, Erf, Sqrt, Exp, Clip, ... (shape-preserving, one input)."""
        return self.node(op_type, [x], self.shape(x), name=name, **attrs)

    def relu(self, x: str, name: str | None = None) -> str:
        return self.unary("Relu", x, name)

    def relu6(self, x: str, name: str | None = None) -> str:
        """ReLU6 as ONNX writes it: Clip(x, 0, 6) with the bounds as scalar inputs."""
        lo, hi = (self.const(f"{name or 'clip'}.{b}", v, dtype="float32")
                  for b, v in (("min", 0.0), ("max", 6.0)))
        return self.node("Clip", [x, lo, hi], self.shape(x), name=name)

    def binary(self, op_type: str, a: str, b: str, name: str | None = None) -> str:
        """Add, Sub, Mul, Div, Pow with broadcasting."""
        return self.node(op_type, [a, b], broadcast(self.shape(a), self.shape(b)), name=name)

    def add(self, a: str, b: str, name: str | None = None) -> str:
        return self.binary("Add", a, b, name)

    def softmax(self, x: str, axis: int = -1, name: str | None = None) -> str:
        return self.node("Softmax", [x], self.shape(x), name=name, axis=axis)

    def transpose(self, x: str, perm: Sequence[int], name: str | None = None) -> str:
        d = self.shape(x)
        return self.node("Transpose", [x], tuple(d[p] for p in perm), name=name, perm=list(perm))

    def reshape(self, x: str, dims: Sequence[int], name: str | None = None) -> str:
        """Reshape to ``dims`` (one -1 allowed), the target given as a constant initializer."""
        d = list(dims)
        known = math.prod(v for v in d if v != -1)
        if -1 in d:
            d[d.index(-1)] = math.prod(self.shape(x)) // known
        target = self.const(f"{name or 'reshape'}.shape", list(dims))
        return self.node("Reshape", [x, target], tuple(d), name=name)

    def reduce_mean(self, x: str, axes: Sequence[int], keepdims: bool = True,
                    name: str | None = None) -> str:
        d = list(self.shape(x))
        axes = [a % len(d) for a in axes]
        out = [1 if i in axes else v for i, v in enumerate(d)] if keepdims else \
            [v for i, v in enumerate(d) if i not in axes]
        # opset 17: axes is an attribute of ReduceMean (an input from opset 18).
        return self.node("ReduceMean", [x], tuple(out), name=name, axes=list(axes),
                         keepdims=int(keepdims))

    def unsqueeze(self, x: str, axes: Sequence[int], name: str | None = None) -> str:
        """Unsqueeze (opset 13+: ``axes`` is a constant input) inserting size-1 dims at ``axes``."""
        d = list(self.shape(x))
        rank = len(d) + len(axes)
        for a in sorted(a % rank for a in axes):
            d.insert(a, 1)
        target = self.const(f"{name or 'unsqueeze'}.axes", list(axes))
        return self.node("Unsqueeze", [x, target], tuple(d), name=name)

    def split(self, x: str, sizes: Sequence[int], axis: int = 1, name: str | None = None) -> list[str]:
        d = list(self.shape(x))
        outs = []
        for s in sizes:
            dd = list(d)
            dd[axis] = s
            outs.append(tuple(dd))
        # One output (TF's split(num_or_size_splits=1)) is a plain shape for node().
        first = self.node("Split", [x, self.const(f"{name or 'split'}.sizes", list(sizes))],
                          outs if len(outs) > 1 else outs[0],
                          name=name, n_outputs=len(sizes), axis=axis)
        return [first] + [f"{first}:{i}" for i in range(1, len(sizes))]

    def pad(self, x: str, pads: Sequence[int], name: str | None = None) -> str:
        """Zero Pad; ``pads`` is ONNX's [begin of each axis..., end of each axis...]."""
        d = self.shape(x)
        if len(pads) != 2 * len(d):
            raise ValueError(f"pads {list(pads)}: need {2 * len(d)} values for a rank-{len(d)} tensor")
        out = tuple(v + pads[i] + pads[i + len(d)] for i, v in enumerate(d))
        return self.node("Pad", [x, self.const(f"{name or 'pad'}.pads", list(pads))], out,
                         name=name, mode="constant")

    def slice(self, x: str, starts: Sequence[int], ends: Sequence[int], axes: Sequence[int],
              name: str | None = None) -> str:
        """Slice with step 1 (``ends`` may be large, as in numpy's ``a[1:]``)."""
        d = list(self.shape(x))
        for s, e, a in zip(starts, ends, axes, strict=True):
            lo, hi = (min(max(v + d[a] if v < 0 else v, 0), d[a]) for v in (s, e))
            d[a] = max(hi - lo, 0)
        base = name or "slice"
        inputs = [x, self.const(f"{base}.starts", list(starts)), self.const(f"{base}.ends", list(ends)),
                  self.const(f"{base}.axes", list(axes))]
        return self.node("Slice", inputs, tuple(d), name=name)

    # -- indexing and integer shape computation ------------------------------------------------
    # A traced PyTorch export computes view shapes at run time: Shape -> Gather -> Unsqueeze ->
    # Concat -> Reshape, on int64 tensors. These helpers give such nodes int64 outputs; the caller
    # knows the values (it built the shapes), so a Reshape of a computed shape passes ``out_dims``.
    def shape_of(self, x: str, name: str | None = None) -> str:
        """Shape: the int64 vector of ``x``'s dimensions."""
        return self.node("Shape", [x], (len(self.shape(x)),), name=name, dtype="int64")

    def gather(self, data: str, indices: str, axis: int = 0, name: str | None = None) -> str:
        """Gather along ``axis`` (an embedding lookup, or one entry of a Shape vector)."""
        d = self.shape(data)
        axis %= len(d)
        out = d[:axis] + self.shape(indices) + d[axis + 1:]
        return self.node("Gather", [data, indices], out, name=name, dtype=self.dtypes[data],
                         axis=axis)

    def cast(self, x: str, to: str, name: str | None = None) -> str:
        """Cast to ``to`` (a dtype name: "float32", "int64", ...)."""
        if to not in _DTYPES:
            raise ValueError(f"cast to {to!r}: allowed: {', '.join(_DTYPES)}")
        return self.node("Cast", [x], self.shape(x), name=name, dtype=to, to=_elem(to))

    # -- the model --------------------------------------------------------------------------
    def model(self, *outputs: str, doc: str = "", value_info: bool = True) -> onnx.ModelProto:
        """The ONNX model whose graph outputs are ``outputs`` (with their shapes). With
        ``value_info`` the builder's shape of every intermediate tensor is declared too (readers
        need no shape inference, and a test can compare it with ONNX's)."""
        from onnx import helper

        def info(t: str) -> onnx.ValueInfoProto:
            return helper.make_tensor_value_info(t, _elem(self.dtypes[t]), list(self.shapes[t]))
        outs = [info(o) for o in outputs]
        inner = [info(o) for n in self.nodes for o in n.output if o not in outputs] \
            if value_info else []
        graph = helper.make_graph(self.nodes, self.name, self.inputs, outs,
                                  initializer=self.initializers, doc_string=doc, value_info=inner)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="hetsim")
        model.ir_version = 8
        return model


# -- what a generated model contains (to check it against the published tables) ------------------
def tensor_shapes(model: onnx.ModelProto) -> dict[str, Dims]:
    """The static shape of every tensor: graph inputs and outputs, initializers, and value_info
    after ONNX shape inference (value_info already in the model covers contrib ops, whose
    outputs shape inference cannot derive)."""
    import onnx

    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - fall back on what the model declares
        inferred = model
    g = inferred.graph
    shapes: dict[str, Dims] = {t.name: tuple(int(d) for d in t.dims) for t in g.initializer}
    for vi in [*model.graph.value_info, *g.value_info, *g.input, *g.output]:
        dims = vi.type.tensor_type.shape.dim
        if all(d.HasField("dim_value") for d in dims):
            shapes.setdefault(vi.name, tuple(int(d.dim_value) for d in dims))
    return shapes


def count_macs(model: onnx.ModelProto) -> int:
    """Multiply-accumulates of the convolutions (Conv, FusedConv) and dense products (Gemm,
    MatMul): what published "mult-adds" tables count. Other ops count 0."""
    shapes = tensor_shapes(model)
    total = 0
    for n in model.graph.node:
        if n.op_type in ("Conv", "FusedConv"):
            out, w = shapes[n.output[0]], shapes[n.input[1]]
            total += math.prod(out) * math.prod(w[1:])  # each output: C/groups · kh · kw MACs
        elif n.op_type == "Gemm":
            trans_a = next((a.i for a in n.attribute if a.name == "transA"), 0)
            a = shapes[n.input[0]]
            total += math.prod(shapes[n.output[0]]) * (a[0] if trans_a else a[1])
        elif n.op_type == "MatMul":
            total += math.prod(shapes[n.output[0]]) * shapes[n.input[0]][-1]
    return total


def count_params(model: onnx.ModelProto) -> int:
    """Elements of the floating-point initializers (weights, biases, batch-norm parameters and
    statistics, as Keras's "Total params"); integer constants (shapes, axes) are not parameters."""
    from onnx import TensorProto

    floats = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.DOUBLE)
    return sum(math.prod(t.dims) for t in model.graph.initializer if t.data_type in floats
               and t.dims)
