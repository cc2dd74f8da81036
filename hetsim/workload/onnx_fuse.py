"""An ONNX-to-ONNX pass that fuses operators the way MNN's converter does before HOPE schedules.

HOPE (seed 002, digest §1.1, §10 item 1) schedules the operators of the *MNN* graph, which is the
framework graph after MNN's converter passes (``tools/converter/source/optimizer/PostConverter.cpp``
in alibaba/MNN). :func:`fuse_mnn` applies the passes of that pipeline that change how many
operators there are, in MNN's order, and writes the result as ONNX that ONNX Runtime can still run:

1. ``remove_useless`` — MNN ``RemoveUnusefulOp`` + ``RemoveDropout``: Identity, Dropout (inference),
   a Split with one output (TF-slim NASNet's ``tf.split(num_or_size_splits=1)``) and a Concat of
   one input disappear; their consumers read the input directly.
2. ``dedup`` (off by default, see :func:`fuse_mnn`) — MNN ``FuseDupOp``: two ops of the same
   type, attributes and *identical inputs* compute the same tensor; the later one is dropped.
   MNN only compares ops without parameters, ReLU/ReLU6, constants, unary, binary and reduction
   ops; :data:`DEDUP_OPS` is that list in ONNX names. (NASNet applies ``relu`` to the same hidden
   state in several branches and cells.)
3. ``conv`` — MNN ``MergeBNToConvolution`` / ``MergeScaleToConvolution`` /
   ``MergeReluToConvolution`` / ``MergeRelu6ToConvolution`` (``MergeToConvolution.hpp``): starting
   at a Conv whose output is not a graph output, while its output has exactly one consumer, a
   per-channel constant Add (TF's BiasAdd, MNN ``ConvBiasAdd``) or a BatchNormalization is folded
   into the weights and bias, and then a Relu, LeakyRelu or Clip(0, 6) (ReLU6) becomes the conv's
   activation. The result is ``FusedConv`` (domain ``com.microsoft``, ``activation`` attribute)
   when there is an activation, a plain ``Conv`` otherwise. BN cannot fold after an activation
   (MNN refuses too); a BN that follows no conv (NASNet's factorized reduction) stays.
4. ``matmul_bias`` — MNN ``FuseMatMulBias`` (``ConvertMatMulToConv2D.cpp``): a 2-D MatMul by a
   constant weight followed, as its only consumer, by an Add of a constant of its output width
   becomes one Gemm.
5. ``dedup`` again when on (MNN runs ``FuseDupOp`` after the merges too).

MNN passes that change op counts and are *not* applied, with why: ``AddTensorFormatConverter``
inserts NC4HW4<->NCHW layout converters, which HOPE models as communication operators instead
(digest §5.2-§5.3); ``ConvertMatMulToConv2D`` wraps a dense layer in two Reshapes, a kernel choice
and not a scheduling unit; ``MergeReluToBinaryOp`` (Add + Relu) has no ONNX Runtime form and no
such pair occurs in HOPE's seven networks; ``TransformGroupConvolution`` splits grouped (not
depthwise) convs, which these networks do not have.

Weights keep their shapes: a folded conv gets new initializers named after the conv; their data
is computed when the model carries data and is left absent (external) when it does not.

>>> from hetsim.workload.onnx_export import workload_to_onnx
>>> model = workload_to_onnx(load_workload("mobilenet"))    # 27 Conv + BN + Relu triples, 5 more nodes
>>> mnn_op_count(fuse_mnn(model))  # 27 fused convs + 5 + the Input op
33
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from hetsim.errors import HetsimError

#: Contrib domain of ONNX Runtime's fused kernels (``FusedConv``).
MS_DOMAIN = "com.microsoft"

#: Op types MNN's ``FuseDupOp`` may merge when inputs and attributes are equal (ops without
#: parameters, ReLU/ReLU6, unary, binary and reduction ops; ONNX names).
DEDUP_OPS = frozenset({
    "Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Abs", "Neg",
    "Reciprocal", "Erf", "Floor", "Ceil", "Sin", "Cos", "Add", "Sub", "Mul", "Div", "Pow", "Max",
    "Min", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
})

#: The passes of :func:`fuse_mnn`, in the order they run.
PASSES = ("remove_useless", "dedup", "conv", "matmul_bias")

_ACTIVATIONS = {"Relu", "LeakyRelu", "Clip"}


def mnn_op_count(model: onnx.ModelProto) -> int:
    """Operators as MNN counts them: every node, plus one ``Input`` op per graph input that is not
    an initializer (MNN's ``onnxConverter.cpp`` creates an ``OpType_Input`` for each)."""
    inits = {t.name for t in model.graph.initializer}
    return len(model.graph.node) + sum(1 for i in model.graph.input if i.name not in inits)


def fuse_mnn(model: onnx.ModelProto, *, remove_useless: bool = True, dedup: bool = False,
             conv: bool = True, matmul_bias: bool = True) -> onnx.ModelProto:
    """The model after MNN's op-count-changing converter passes (module docstring); each pass can
    be switched off to measure what it contributes. The input model is not modified.

    ``dedup`` is off by default: HOPE cites MNN as of its MLSys 2020 paper, and ``FuseDupOp``
    entered MNN's converter later (``FuseDupOp.cpp``: "Created by MNN on 2021/02/23"); switch it
    on for the graphs a current MNN builds."""
    return _Fuser(model).run(remove_useless=remove_useless, dedup=dedup, conv=conv,
                             matmul_bias=matmul_bias)


class _Fuser:
    """One graph being rewritten: its nodes, initializers and who reads each tensor."""

    def __init__(self, model: onnx.ModelProto):
        self.model = onnx.ModelProto()
        self.model.CopyFrom(model)
        g = self.model.graph
        self.nodes: list[onnx.NodeProto] = list(g.node)
        self.inits: dict[str, TensorProto] = {t.name: t for t in g.initializer}
        self.graph_outputs = {o.name for o in g.output}
        self._check_order(g)
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model)
        except Exception as exc:  # noqa: BLE001 - a malformed model is a user error
            raise HetsimError(f"onnx model {g.name!r}: shape inference failed: {exc}") from exc
        self.value_info = {vi.name: vi for vi in inferred.graph.value_info}
        self.used_names = {n.name for n in self.nodes} | set(self.inits) | {
            o for n in self.nodes for o in n.output} | {i.name for i in g.input}

    def _check_order(self, g: onnx.GraphProto) -> None:
        """Every node reads tensors that exist before it: the graph is acyclic and listed in a
        topological order, as ONNX requires (a cycle shows as a read before the write)."""
        known = {i.name for i in g.input} | set(self.inits) | {""}
        for k, n in enumerate(self.nodes):
            missing = next((i for i in n.input if i not in known), None)
            if missing is not None:
                raise HetsimError(
                    f"onnx model {g.name!r}: node {k} ({n.name or n.op_type}) reads {missing!r}, "
                    f"which no earlier node, graph input or initializer provides; allowed: an "
                    f"acyclic graph with nodes in topological order")
            known.update(n.output)

    # -- bookkeeping ------------------------------------------------------------------------
    def consumers(self) -> dict[str, list[onnx.NodeProto]]:
        out: dict[str, list[onnx.NodeProto]] = {}
        for n in self.nodes:
            for i in n.input:
                out.setdefault(i, []).append(n)
        return out

    def rename_input(self, old: str, new: str) -> None:
        """Every reader of tensor ``old`` reads ``new`` instead."""
        for n in self.nodes:
            for k, i in enumerate(n.input):
                if i == old:
                    n.input[k] = new

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used_names:
            name, k = f"{base}_{k}", k + 1
        self.used_names.add(name)
        return name

    def const_array(self, name: str) -> np.ndarray | None:
        """The data of initializer ``name``; None when it is not an initializer or has no data."""
        t = self.inits.get(name)
        if t is None or t.data_location == TensorProto.EXTERNAL:
            return None
        return numpy_helper.to_array(t)

    # -- passes -----------------------------------------------------------------------------
    def run(self, *, remove_useless: bool, dedup: bool, conv: bool,
            matmul_bias: bool) -> onnx.ModelProto:
        if remove_useless:
            self.remove_useless()
        if dedup:
            self.dedup()
        if conv:
            self.fuse_convs()
        if matmul_bias:
            self.fuse_matmul_bias()
        if dedup:
            self.dedup()
        return self.finish()

    def remove_useless(self) -> None:
        """MNN RemoveUnusefulOp / RemoveDropout: pass-through ops vanish."""
        keep = []
        for n in self.nodes:
            passthrough = (
                n.op_type == "Identity"
                or (n.op_type == "Dropout" and (len(n.output) == 1 or not n.output[1]))
                or (n.op_type == "Split" and len(n.output) == 1)
                or (n.op_type == "Concat" and len(n.input) == 1))
            if passthrough and n.output[0] not in self.graph_outputs:
                self.rename_input(n.output[0], n.input[0])
            else:
                keep.append(n)
        self.nodes = keep

    def dedup(self) -> None:
        """MNN FuseDupOp: the same op on the same inputs computes the same tensor once."""
        changed = True
        while changed:
            changed = False
            seen: dict[tuple, onnx.NodeProto] = {}
            keep = []
            for n in self.nodes:
                if n.op_type not in DEDUP_OPS or n.domain not in ("", "ai.onnx"):
                    keep.append(n)
                    continue
                key = (n.op_type, tuple(n.input), len(n.output),
                       tuple(sorted(a.SerializeToString() for a in n.attribute)))
                first = seen.get(key)
                if first is None or any(o in self.graph_outputs for o in n.output):
                    seen.setdefault(key, n)
                    keep.append(n)
                    continue
                for o_new, o_old in zip(first.output, n.output, strict=True):
                    self.rename_input(o_old, o_new)
                changed = True
            self.nodes = keep

    def fuse_convs(self) -> None:
        """MNN MergeToConvolution: Conv [+ bias Add] [+ BatchNormalization] [+ activation]."""
        readers = self.consumers()
        dropped: set[int] = set()
        replace: dict[int, onnx.NodeProto] = {}
        for n in self.nodes:
            # MNN folds into a conv whose weights are constants (MergeBNToConvolution refuses a
            # conv with a weight input).
            if n.op_type != "Conv" or n.domain not in ("", "ai.onnx") or len(n.input) < 2 \
                    or n.input[1] not in self.inits:
                continue
            w = n.input[1]
            chain: list[onnx.NodeProto] = []
            out = n.output[0]
            activation: onnx.NodeProto | None = None
            stage = 0  # 0: bias add allowed, 1: BN allowed, 2: activation only
            while out not in self.graph_outputs and len(readers.get(out, [])) == 1:
                nxt = readers[out][0]
                if nxt.domain not in ("", "ai.onnx") or id(nxt) in dropped:
                    break
                if stage == 0 and self._is_bias_add(nxt, out, w):
                    stage = 1
                elif stage <= 1 and self._is_foldable_bn(nxt, out):
                    stage = 2
                elif nxt.op_type in _ACTIVATIONS and self._activation(nxt, out) is not None:
                    activation = nxt
                else:
                    break
                chain.append(nxt)
                out = nxt.output[0]
                if activation is not None:
                    break
            if not chain:
                continue
            replace[id(n)] = self._fused_conv(n, chain, activation, out)
            dropped.update(id(c) for c in chain)
        self.nodes = [replace.get(id(n), n) for n in self.nodes if id(n) not in dropped]

    def _is_bias_add(self, node: onnx.NodeProto, x: str, weight: str) -> bool:
        """A per-channel constant Add after a conv (TF's BiasAdd; MNN ConvBiasAdd)."""
        if node.op_type != "Add" or len(node.input) != 2 or x not in node.input:
            return False
        other = node.input[1] if node.input[0] == x else node.input[0]
        if other == x or other not in self.inits:
            return False
        m = int(self.inits[weight].dims[0])
        return list(self.inits[other].dims) in ([m], [m, 1, 1], [1, m, 1, 1])

    def _is_foldable_bn(self, node: onnx.NodeProto, x: str) -> bool:
        return (node.op_type == "BatchNormalization" and len(node.output) == 1
                and node.input[0] == x and all(p in self.inits for p in node.input[1:5]))

    def _activation(self, node: onnx.NodeProto, x: str) -> tuple[str, list[float]] | None:
        """FusedConv's (activation, activation_params) for ``node``, or None if MNN keeps it."""
        if node.input[0] != x or len(node.output) != 1:
            return None
        if node.op_type == "Relu":
            return "Relu", []
        if node.op_type == "LeakyRelu":
            alpha = next((a.f for a in node.attribute if a.name == "alpha"), 0.01)
            return "LeakyRelu", [alpha]
        # MNN merges ReLU6 only (MergeRelu6ToConvolution): Clip with constant bounds 0 and 6.
        bounds = [self.const_array(i) if i else None for i in list(node.input[1:3])]
        if len(bounds) == 2 and all(b is not None and b.size == 1 for b in bounds):
            lo, hi = (float(b.reshape(-1)[0]) for b in bounds)  # type: ignore[union-attr]
            if (lo, hi) == (0.0, 6.0):
                return "Clip", [lo, hi]
        return None

    def _fused_conv(self, conv: onnx.NodeProto, chain: list[onnx.NodeProto],
                    activation: onnx.NodeProto | None, out: str) -> onnx.NodeProto:
        w_name = conv.input[1]
        b_name = conv.input[2] if len(conv.input) > 2 and conv.input[2] else None
        m = int(self.inits[w_name].dims[0])
        folds = [c for c in chain if c is not activation]
        if folds:
            w_name, b_name = self._fold(conv, folds, w_name, b_name, m)
        inputs = [conv.input[0], w_name] + ([b_name] if b_name else [])
        attrs = {a.name: helper.get_attribute_value(a) for a in conv.attribute}
        name = conv.name or conv.output[0]
        if activation is None:
            return helper.make_node("Conv", inputs, [out], name=name, **attrs)
        act, params = self._activation(activation, activation.input[0]) or ("Relu", [])
        if params:
            attrs["activation_params"] = params
        return helper.make_node("FusedConv", inputs, [out], name=name, domain=MS_DOMAIN,
                                activation=act, **attrs)

    def _fold(self, conv: onnx.NodeProto, folds: list[onnx.NodeProto], w_name: str,
              b_name: str | None, m: int) -> tuple[str, str]:
        """New weight and bias initializers with the bias adds and BNs of ``folds`` folded in
        (MergeBNToConvolution: alpha = gamma / sqrt(var + eps); W' = alpha W;
        b' = alpha (b - mean) + beta)."""
        base = conv.name or conv.output[0]
        w_old = self.inits[w_name]
        weight = self.const_array(w_name)
        bias = np.zeros(m, np.float32) if b_name is None else self.const_array(b_name)
        have_data = weight is not None and bias is not None
        for node in folds:
            params = ([self.const_array(i) for i in node.input[1:5]]
                      if node.op_type == "BatchNormalization" else
                      [self.const_array(i) for i in node.input if i in self.inits])
            if any(p is None for p in params):
                have_data = False
            if not have_data:
                continue
            assert weight is not None and bias is not None
            if node.op_type == "Add":
                bias = bias + params[0].reshape(-1)  # type: ignore[union-attr]
            else:
                gamma, beta, mean, var = (p.reshape(-1) for p in params)  # type: ignore[union-attr]
                eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-5)
                alpha = gamma / np.sqrt(var + eps)
                weight = weight * alpha.reshape((-1,) + (1,) * (weight.ndim - 1))
                bias = alpha * (bias - mean) + beta
        new_w, new_b = self.fresh(f"{base}.weight_fused"), self.fresh(f"{base}.bias_fused")
        if have_data:
            assert weight is not None and bias is not None
            self.inits[new_w] = numpy_helper.from_array(weight.astype(np.float32), new_w)
            self.inits[new_b] = numpy_helper.from_array(bias.astype(np.float32), new_b)
        else:
            self.inits[new_w] = _absent_like(w_old, new_w, list(w_old.dims))
            self.inits[new_b] = _absent_like(w_old, new_b, [m])
        return new_w, new_b

    def fuse_matmul_bias(self) -> None:
        """MNN FuseMatMulBias: MatMul(x, W const 2-D) -> Add(bias const) becomes one Gemm."""
        readers = self.consumers()
        dropped: set[int] = set()
        replace: dict[int, onnx.NodeProto] = {}
        for n in self.nodes:
            if n.op_type != "MatMul" or n.input[1] not in self.inits:
                continue
            w = self.inits[n.input[1]]
            x_vi = self.value_info.get(n.input[0])
            x_rank = len(x_vi.type.tensor_type.shape.dim) if x_vi is not None else None
            if x_rank is None:
                x_rank = next((len(i.type.tensor_type.shape.dim) for i in self.model.graph.input
                               if i.name == n.input[0]), None)
            out = n.output[0]
            if len(w.dims) != 2 or x_rank != 2 or out in self.graph_outputs:
                continue
            nxt = readers.get(out, [])
            if len(nxt) != 1 or nxt[0].op_type != "Add":
                continue
            add = nxt[0]
            other = add.input[1] if add.input[0] == out else add.input[0]
            b = self.inits.get(other)
            if b is None or [d for d in b.dims if d != 1] not in ([w.dims[1]], []) or \
                    int(np.prod(b.dims)) != w.dims[1]:
                continue
            bias = other
            if list(b.dims) != [w.dims[1]]:
                arr = self.const_array(other)
                bias = self.fresh(f"{n.name or out}.bias")
                self.inits[bias] = (numpy_helper.from_array(arr.reshape(-1), bias) if arr is not None
                                    else _absent_like(b, bias, [int(w.dims[1])]))
            replace[id(n)] = helper.make_node("Gemm", [n.input[0], n.input[1], bias],
                                              [add.output[0]], name=n.name or out)
            dropped.add(id(add))
        self.nodes = [replace.get(id(n), n) for n in self.nodes if id(n) not in dropped]

    # -- the result -------------------------------------------------------------------------
    def finish(self) -> onnx.ModelProto:
        g = self.model.graph
        read = {i for n in self.nodes for i in n.input} | self.graph_outputs
        produced = [o for n in self.nodes for o in n.output]
        del g.node[:]
        g.node.extend(self.nodes)
        del g.initializer[:]
        g.initializer.extend(t for name, t in self.inits.items() if name in read)
        # Graph inputs that name initializers (old exporters) go with their initializer.
        kept_inits = {t.name for t in g.initializer}
        inputs = [i for i in g.input if i.name in kept_inits or i.name not in self.inits]
        del g.input[:]
        g.input.extend(inputs)
        # Shapes of the intermediate tensors, for readers (and tools) that do not know FusedConv.
        del g.value_info[:]
        g.value_info.extend(self.value_info[o] for o in produced
                            if o in self.value_info and o not in self.graph_outputs)
        if any(n.domain == MS_DOMAIN for n in self.nodes) and \
                not any(o.domain == MS_DOMAIN for o in self.model.opset_import):
            self.model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
        return self.model


def _absent_like(like: TensorProto, name: str, dims: Iterable[int]) -> TensorProto:
    """An initializer of shape ``dims`` whose data is absent, stored like ``like`` (external)."""
    t = TensorProto()
    t.name, t.data_type = name, like.data_type
    t.dims.extend(int(d) for d in dims)
    t.data_location = TensorProto.EXTERNAL
    location = next((e.value for e in like.external_data if e.key == "location"), "weights")
    entry = t.external_data.add()
    entry.key, entry.value = "location", location
    return t


def op_type_counts(model: onnx.ModelProto) -> Counter[str]:
    """How many nodes of each op type (``FusedConv:Relu`` for a fused activation)."""
    out: Counter[str] = Counter()
    for n in model.graph.node:
        act = next((a.s.decode() for a in n.attribute if a.name == "activation"), None)
        out[f"{n.op_type}:{act}" if act else n.op_type] += 1
    return out
