"""A CNN workload written out as an ONNX model (NCHW, batch 1), with the zoo's :class:`OnnxGraph`.

    >>> from hetsim.workload import load_workload
    >>> from hetsim.workload.onnx_export import workload_to_onnx
    >>> model = workload_to_onnx(load_workload("yolov3"), weights="random")

Every op becomes the ONNX node the importer (:mod:`hetsim.workload.onnx_import`) maps back to the
same kind, named as the op: conv/dw -> Conv (with a bias, as the CNN formula counts one), pools ->
MaxPool/AveragePool, bn -> BatchNormalization, relu -> Relu, lrn -> LRN, add -> Add (Sum for more
than two inputs), concat -> Concat on channels, softmax -> Softmax, flatten -> Flatten, reshape ->
Reshape, fc -> Gemm. ONNX's Gemm needs a 2-D input, so an fc that reads an H×W×C tensor gets a
Flatten node ``<fc>/flatten`` in front (ARM-CL's fully connected layer flattens internally): that
workload imports back with one more op, a view. Ops the CNN formulas cannot write (a group node
of AlexNet's split convs, a declared ``input_shape``, imported generic ops) are one-line errors.

The layer grouping travels with the model: the metadata property ``hetsim.layer_kinds`` and, on a
node whose op starts (or does not start) a layer against that rule, the doc string
``hetsim.layer_start=1`` (or ``=0``); the importer uses them unless told ``--layers``.
"""

from __future__ import annotations

from typing import Any

from hetsim.errors import HetsimError
from hetsim.workload.model import Workload
from hetsim.workload.onnx_graph import OnnxGraph
from hetsim.workload.ops import OpKind


def workload_to_onnx(workload: Workload, weights: str = "external", seed: int = 0) -> Any:
    """The ONNX model (``onnx.ModelProto``) of a CNN workload. ``weights="external"`` writes
    initializers with their dims and no data (what the importer needs); ``"random"`` writes seeded
    random weights, a model ONNX Runtime can run."""
    g = OnnxGraph(workload.name, weights=weights, seed=seed)
    op_names = {op.name for op in workload.ops}
    input_name = "input" if "input" not in op_names else "input.image"
    for net in workload.inputs.values():
        if len(workload.inputs) > 1 or net.dims != workload.input_shape.nchw():
            raise HetsimError(f"workload {workload.name}: only a single H×W×C image input can be "
                              "written as ONNX")
    x0 = g.input(input_name, workload.input_shape.nchw())
    tensor: dict[str, str] = {}
    consumers = {op.name: 0 for op in workload.ops}
    for op in workload.ops:
        for src in op.inputs:
            consumers[src] += 1
    for op in workload.ops:
        where = f"workload {workload.name}: op {op.name}"
        _check_writable(op, where)
        out = _node(g, op, [tensor[s] for s in op.inputs] or [x0], where)
        if out != op.name:
            raise HetsimError(f"{where}: its name clashes with a tensor of the ONNX graph")
        if op.starts_layer != (str(op.kind) in workload.layer_kinds):
            g.nodes[-1].doc_string = f"{LAYER_START_DOC}={int(op.starts_layer)}"
        tensor[op.name] = out
    outputs = [tensor[op.name] for op in workload.ops if consumers[op.name] == 0]
    model = g.model(*outputs, doc=f"hetsim workload {workload.name}: {workload.description}")
    entry = model.metadata_props.add()
    entry.key, entry.value = LAYER_KINDS_KEY, ",".join(workload.layer_kinds)
    return model


def _check_writable(op, where: str) -> None:
    """Refuse an op the CNN formulas cannot write (module docstring), in one line."""
    if op.explicit:
        raise HetsimError(f"{where}: a generic op ({op.kind}, dims given) has no ONNX writer; "
                          "only CNN kinds are written")
    if op.group_node is not None:
        raise HetsimError(f"{where}: group {op.group_node[0]} of a {op.group_node[1]}-way conv "
                          "run as separate nodes has no ONNX node")
    if op.shape_override:
        raise HetsimError(f"{where}: a declared input_shape (a shape break) has no ONNX form")
    if op.counts.given():
        raise HetsimError(f"{where}: explicit counts ({', '.join(op.counts.given())}) have no "
                          "ONNX form")


def _node(g: OnnxGraph, op, xs: list[str], where: str) -> str:
    """The ONNX node of one CNN op reading tensors ``xs``, named as the op; returns its output."""
    x = xs[0]
    k = op.kind
    if k in (OpKind.CONV, OpKind.DW):
        pads = [op.pad[0], op.pad[0], op.pad[1], op.pad[1]]
        return g.conv(x, op.out_c, op.kernel, op.stride, pads, groups=op.groups,
                      dilation=op.dilation, name=op.name)
    if k in (OpKind.MAXPOOL, OpKind.AVGPOOL):
        pads = [op.pad[0], op.pad[0], op.pad[1], op.pad[1]]
        return g.pool(x, "max" if k == OpKind.MAXPOOL else "avg", op.kernel, op.stride, pads,
                      ceil=op.ceil_mode, name=op.name)
    if k == OpKind.BN:
        return g.batch_norm(x, name=op.name)
    if k == OpKind.RELU:
        return g.relu(x, name=op.name)
    if k == OpKind.LRN:
        return g.lrn(x, name=op.name)
    if k == OpKind.ADD:
        return (g.add(xs[0], xs[1], name=op.name) if len(xs) == 2 else
                g.node("Sum", xs, g.shape(xs[0]), name=op.name))
    if k == OpKind.CONCAT:
        return g.concat(xs, axis=1, name=op.name)
    if k == OpKind.SOFTMAX:
        return g.softmax(x, axis=-1, name=op.name)
    if k == OpKind.FLATTEN:
        return g.flatten(x, name=op.name)
    if k == OpKind.RESHAPE:
        s = op.out_shape
        return g.reshape(x, [1, s.c, s.h, s.w] if (s.h, s.w) != (1, 1) else [1, s.c], name=op.name)
    if k == OpKind.FC:
        if len(g.shape(x)) != 2:   # ONNX's Gemm needs a 2-D input (module docstring)
            x = g.flatten(x, name=f"{op.name}/flatten")
        return g.gemm(x, op.out_c, name=op.name)
    raise HetsimError(f"{where}: kind {k} has no ONNX writer")  # pragma: no cover - every CNN kind


#: Model metadata key holding the workload's ``layer_kinds``, comma-separated.
LAYER_KINDS_KEY = "hetsim.layer_kinds"
#: Node doc string prefix marking a ``layer_start`` override.
LAYER_START_DOC = "hetsim.layer_start"


__all__ = ["LAYER_KINDS_KEY", "LAYER_START_DOC", "workload_to_onnx"]
