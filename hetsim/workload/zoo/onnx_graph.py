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

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hetsim.workload.ops import window_out_size

Dims = tuple[int, ...]

_DTYPES = {"float32": TensorProto.FLOAT, "int64": TensorProto.INT64, "float16": TensorProto.FLOAT16,
           "bfloat16": TensorProto.BFLOAT16, "int8": TensorProto.INT8, "bool": TensorProto.BOOL}

#: ONNX opset the generated models declare.
OPSET = 17


def broadcast(a: Dims, b: Dims) -> Dims:
    """numpy broadcasting of two shapes (ONNX multidirectional broadcasting)."""
    return tuple(np.broadcast_shapes(a, b))


def _pair(v: int | Sequence[int]) -> tuple[int, int]:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


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
        self.inputs.append(helper.make_tensor_value_info(name, _DTYPES[dtype], list(dims)))
        self.shapes[name], self.dtypes[name] = tuple(int(d) for d in dims), dtype
        return name

    def weight(self, base: str, dims: Sequence[int], dtype: str = "float32") -> str:
        """An initializer of shape ``dims`` (data absent unless ``weights="random"``)."""
        name = self.fresh(base)
        dims = tuple(int(d) for d in dims)
        if self.weights == "random" or dtype == "int64":
            if dtype == "int64":
                raise ValueError("use const() for integer tensors")
            fan_in = max(1, math.prod(dims[1:]))
            data = (self.rng.standard_normal(dims) / math.sqrt(fan_in)).astype(np.float32)
            t = numpy_helper.from_array(data, name)
        else:
            t = TensorProto()
            t.name, t.data_type = name, _DTYPES[dtype]
            t.dims.extend(dims)
            t.data_location = TensorProto.EXTERNAL
            entry = t.external_data.add()
            entry.key, entry.value = "location", f"{self.name}.weights"
        self.initializers.append(t)
        self.shapes[name], self.dtypes[name] = dims, dtype
        return name

    def const(self, base: str, values: Sequence[int] | Sequence[float], dtype: str = "int64") -> str:
        """A small constant initializer with real data (shape vectors, axes, scalars)."""
        name = self.fresh(base)
        arr = np.asarray(values, dtype=np.int64 if dtype == "int64" else np.float32)
        self.initializers.append(numpy_helper.from_array(arr, name))
        self.shapes[name], self.dtypes[name] = tuple(arr.shape), dtype
        return name

    def node(self, op_type: str, inputs: Sequence[str], out_dims: Dims | Sequence[Dims], *,
             name: str | None = None, n_outputs: int = 1, dtype: str | None = None, **attrs) -> str:
        """Add any node; ``out_dims`` is the output shape (a list of shapes for several outputs).
        Returns the first output's name (all of them are ``<name>``, ``<name>:1``...)."""
        node_name = self.fresh(name or op_type.lower())
        outs = [node_name] + [f"{node_name}:{i}" for i in range(1, n_outputs)]
        all_dims = [tuple(out_dims)] if n_outputs == 1 else [tuple(d) for d in out_dims]  # type: ignore[arg-type]
        out_dtype = dtype or (self.dtypes.get(inputs[0], "float32") if inputs else "float32")
        for o, d in zip(outs, all_dims, strict=True):
            self.shapes[o], self.dtypes[o] = tuple(int(x) for x in d), out_dtype
        self.nodes.append(helper.make_node(op_type, list(inputs), outs, name=node_name, **attrs))
        return outs[0]

    # -- convolutional networks (NCHW) -------------------------------------------------------
    def conv(self, x: str, out_c: int, kernel: int | Sequence[int], stride: int = 1,
             pad: int | Sequence[int] = 0, groups: int = 1, dilation: int = 1, bias: bool = True,
             name: str | None = None) -> str:
        """Conv; ``pad`` is one value, (pad_h, pad_w) or ONNX's (top, left, bottom, right)."""
        n, c, h, w = self.shape(x)
        kh, kw = _pair(kernel)
        pads = [pad] * 4 if isinstance(pad, int) else (list(pad) * 2 if len(pad) == 2 else list(pad))
        oh = (h + pads[0] + pads[2] - dilation * (kh - 1) - 1) // stride + 1
        ow = (w + pads[1] + pads[3] - dilation * (kw - 1) - 1) // stride + 1
        base = name or "conv"
        inputs = [x, self.weight(f"{base}.weight", (out_c, c // groups, kh, kw))]
        if bias:
            inputs.append(self.weight(f"{base}.bias", (out_c,)))
        return self.node("Conv", inputs, (n, out_c, oh, ow), name=name, kernel_shape=[kh, kw],
                         strides=[stride, stride], pads=pads, group=groups,
                         dilations=[dilation, dilation])

    def batch_norm(self, x: str, name: str | None = None) -> str:
        c = self.shape(x)[1]
        base = name or "bn"
        params = [self.weight(f"{base}.{p}", (c,)) for p in ("scale", "bias", "mean", "var")]
        return self.node("BatchNormalization", [x, *params], self.shape(x), name=name)

    def pool(self, x: str, kind: str, kernel: int | Sequence[int], stride: int | None = None,
             pad: int | Sequence[int] = 0, ceil: bool = False, name: str | None = None) -> str:
        """MaxPool or AveragePool (``kind`` "max" or "avg")."""
        n, c, h, w = self.shape(x)
        kh, kw = _pair(kernel)
        s = stride or kh
        pads = [pad] * 4 if isinstance(pad, int) else (list(pad) * 2 if len(pad) == 2 else list(pad))
        # ONNX's rule (as Caffe's and PyTorch's): with ceil_mode the last window must still start
        # inside the input or its leading pad.
        oh = window_out_size(h, kh, s, (pads[0], pads[2]), ceil)
        ow = window_out_size(w, kw, s, (pads[1], pads[3]), ceil)
        op = "MaxPool" if kind == "max" else "AveragePool"
        attrs = {"kernel_shape": [kh, kw], "strides": [s, s], "pads": pads}
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

    def split(self, x: str, sizes: Sequence[int], axis: int = 1, name: str | None = None) -> list[str]:
        d = list(self.shape(x))
        outs = []
        for s in sizes:
            dd = list(d)
            dd[axis] = s
            outs.append(tuple(dd))
        first = self.node("Split", [x, self.const(f"{name or 'split'}.sizes", list(sizes))], outs,
                          name=name, n_outputs=len(sizes), axis=axis)
        return [first] + [f"{first}:{i}" for i in range(1, len(sizes))]

    # -- the model --------------------------------------------------------------------------
    def model(self, *outputs: str, doc: str = "") -> onnx.ModelProto:
        """The ONNX model whose graph outputs are ``outputs`` (with their shapes)."""
        outs = [helper.make_tensor_value_info(o, _DTYPES[self.dtypes[o]], list(self.shapes[o]))
                for o in outputs]
        graph = helper.make_graph(self.nodes, self.name, self.inputs, outs,
                                  initializer=self.initializers, doc_string=doc)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                                  producer_name="hetsim")
        model.ir_version = 8
        return model
