"""Workloads to and from networkx graphs, for the field's other tools (saga, schedulers and
analyses written against networkx).

    >>> from hetsim.workload import load_workload, to_networkx, from_networkx
    >>> g = to_networkx(load_workload("alexnet"))
    >>> g.nodes["conv1"]["kind"], g.nodes["conv1"]["macs"], g.edges["conv1", "relu1"]["bytes"]
    ('conv', 105415200, 1161600)
    >>> from_networkx(g).ops == load_workload("alexnet").ops
    True

:func:`to_networkx` gives a ``DiGraph`` with one node per op, in the workload's order: plain
attributes to read (``kind``, ``layer``, ``macs``, ``flops``, ``input_bytes``, ``output_bytes``,
``weight_bytes``, ``dims``, ``gemm``, ``gemm_groups``, ``op_type``: alone, they rebuild the ops as
generic ops with the same counts), the op's file entry as ``spec`` (a dict, what the workload
YAML says of it) and the :class:`~hetsim.workload.ops.Op` itself as ``op``; one edge per tensor
from producer to consumer with its ``bytes`` and ``index`` (the position among the consumer's
inputs). The graph's attributes hold ``name``, ``input`` (and ``extra_inputs``), ``layer_kinds``,
``description``, ``source``.

:func:`from_networkx` builds a workload from such a graph, or from any DAG whose nodes carry op
fields of the workload format (docs/workloads.md: ``kind`` and its fields, or ``dims`` and counts
for a generic op), through the same validation as a file: an error names the graph, the node and the
field. A node's inputs are its ``spec``'s, else its predecessors in the order of the edges'
``index`` (else of the graph's nodes); a node without predecessors reads the network input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
from pydantic import ValidationError

from hetsim.errors import HetsimError
from hetsim.validation import one_line
from hetsim.workload.loader import _FIELDS, _GENERIC_FIELDS, workload_from_dict
from hetsim.workload.model import Workload
from hetsim.workload.ops import Op
from hetsim.workload.schema import OpSpec

#: Op fields a node may carry (besides ``name`` and ``inputs``, which the graph gives).
SPEC_FIELDS = tuple(f for f in OpSpec.model_fields if f not in ("name", "inputs"))
#: ``layer_kinds`` of a graph that names none.
DEFAULT_LAYER_KINDS = ("conv", "dw", "fc", "matmul")
_COUNTS = ("macs", "flops", "input_bytes", "output_bytes", "weight_bytes", "im2col_bytes", "gemm", "gemm_groups")


def op_spec(op: Op, named_inputs: bool) -> dict[str, Any]:
    """The workload-file entry of ``op``: the fields :func:`workload_from_dict` rebuilds the same op
    from (its kind's fields where they differ from the defaults, the counts it was given, its layer
    start). ``named_inputs``: the workload's network inputs are named tensors (an op lists the ones
    it reads); else the one H×W×C input, which an op reads with ``inputs: []``."""
    d: dict[str, Any] = {"name": op.name, "kind": op.kind.value}
    d["inputs"] = list(op.inputs) + (list(op.net_inputs) if named_inputs else [])
    d["layer_start"] = op.starts_layer
    allowed = _GENERIC_FIELDS if op.explicit else _FIELDS[op.kind.value]

    def put(field: str, value: Any, default: Any = None) -> None:
        if field in allowed and value != default:
            d[field] = value

    put("kernel", list(op.kernel), None if op.kind.value in ("conv", "dw", "maxpool", "avgpool") else [1, 1])
    put("stride", op.stride, 1)
    put("pad", list(op.pad), [0, 0])
    put("ceil_mode", op.ceil_mode, False)
    put("dilation", op.dilation, 1)
    if op.kind.value in ("conv", "fc") and not op.explicit:
        d["out_c"] = op.out_shape.c
    if op.kind.value == "conv" or op.explicit:
        put("groups", op.groups, 1)
    if op.group_node is not None:
        d["group"] = list(op.group_node)
    if op.kind.value == "reshape" and not op.explicit:
        d["shape"] = _hwc(op.out_shape)
    if op.shape_override:
        d["input_shape"] = _hwc(op.in_shape)
    if op.explicit:
        d["dims"] = [list(x) for x in op.out_dims]
    if op.op_type:
        d["op_type"] = op.op_type
    if op.dtype != "float32":
        d["dtype"] = op.dtype
    for field in _COUNTS:
        value = getattr(op.counts, field)
        if value is not None:
            d[field] = list(value) if isinstance(value, tuple) else value
    return d


def _hwc(shape) -> dict[str, int]:
    return {"h": shape.h, "w": shape.w, "c": shape.c}


def _named_inputs(w: Workload) -> bool:
    """Whether the workload's inputs must be written as named tensors: several, or one that is not
    a float32 N=1 image, or an op that reads it beside other ops."""
    if len(w.inputs) > 1:
        return True
    (t,) = w.inputs.values()
    if t.name != "input" or t.dtype != "float32" or len(t.dims) != 4 or t.dims[0] != 1:
        return True
    return any(op.net_inputs and op.inputs for op in w.ops)


def to_networkx(workload: Workload) -> nx.DiGraph:
    """The workload as a networkx ``DiGraph`` (module docstring): a new graph, free to modify."""
    named = _named_inputs(workload)
    tensors = [{"name": t.name, "dims": list(t.dims), "dtype": t.dtype} for t in workload.inputs.values()]
    g = nx.DiGraph(name=workload.name, description=workload.description, source=workload.source,
                   layer_kinds=list(workload.layer_kinds),
                   input=tensors[0] if named else _hwc(workload.input_shape), extra_inputs=tensors[1:])
    for op in workload.ops:
        g.add_node(op.name, kind=op.kind.value, layer=op.layer, macs=op.macs, flops=op.flops,
                   input_bytes=op.input_bytes, output_bytes=op.output_bytes, weight_bytes=op.weight_bytes,
                   dims=list(op.dims), gemm=list(op.gemm) if op.gemm is not None else None,
                   gemm_groups=op.gemm_groups if op.gemm is not None else None, op_type=op.op_type,
                   spec=op_spec(op, named), op=op)
    for op in workload.ops:
        for k, src in enumerate(op.inputs):
            g.add_edge(src, op.name, bytes=workload.op(src).output_bytes, index=k)
    return g


def from_networkx(graph: nx.DiGraph, name: str | None = None, *, input: Mapping | None = None,
                  layer_kinds: Sequence[str] | None = None) -> Workload:
    """A workload from a networkx DAG (module docstring). ``name``, ``input`` and ``layer_kinds``
    default to the graph's attributes (``layer_kinds`` then to conv, dw, fc, matmul)."""
    name = str(name or graph.graph.get("name") or "graph")
    where = f"networkx graph {name!r}"
    if not isinstance(graph, nx.DiGraph):
        raise HetsimError(f"{where}: a networkx DiGraph is needed, got {type(graph).__name__}")
    if graph.number_of_nodes() == 0:
        raise HetsimError(f"{where}: the graph has no nodes (a workload needs at least one op)")
    try:
        cycle = nx.find_cycle(graph)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle:
        raise HetsimError(f"{where}: not a DAG: cycle {' -> '.join(str(u) for u, _ in cycle)} -> {cycle[0][0]}")
    names = {v: str(v) for v in graph.nodes}
    if len(set(names.values())) != len(names):
        raise HetsimError(f"{where}: two nodes have the same name as text; op names must be distinct")
    position = {v: i for i, v in enumerate(graph.nodes)}
    order = list(nx.lexicographical_topological_sort(graph, key=position.__getitem__))
    net_input = input if input is not None else graph.graph.get("input")
    if net_input is None:
        raise HetsimError(f"{where}: no network input: give input={{h, w, c}} or {{name, dims, dtype}} "
                          "(or the graph attribute 'input')")
    named = "dims" in dict(net_input) or bool(graph.graph.get("extra_inputs") if input is None else False)
    ops = [_node_entry(graph, v, names, position, where, named) for v in order]
    for v, entry in zip(order, ops, strict=True):
        try:
            OpSpec.model_validate(entry)        # a field's error names the node, not ops[i]
        except ValidationError as e:
            raise one_line(f"{where}: node {names[v]!r}", e) from None
    data = {"schema": 1, "name": name, "description": str(graph.graph.get("description", "")),
            "source": str(graph.graph.get("source", "")), "input": dict(net_input),
            "extra_inputs": list(graph.graph.get("extra_inputs", []) if input is None else []),
            "layer_kinds": list(layer_kinds or graph.graph.get("layer_kinds") or DEFAULT_LAYER_KINDS),
            "ops": ops}
    return workload_from_dict(data, where)


def _node_entry(graph: nx.DiGraph, v, names: dict, position: dict, where: str, named: bool) -> dict[str, Any]:
    """A node's workload-file entry: its ``spec`` (or its Op's), else its op-field attributes; its
    inputs from the spec or the in-edges, checked against each other."""
    attrs = graph.nodes[v]
    if isinstance(attrs.get("spec"), Mapping):
        entry = dict(attrs["spec"])
    elif isinstance(attrs.get("op"), Op):
        entry = op_spec(attrs["op"], named)
    else:
        if "kind" not in attrs:
            raise HetsimError(f"{where}: node {names[v]!r}: no 'kind' (an op kind of the workload format, "
                              "docs/workloads.md; or a 'spec' dict)")
        entry = {f: attrs[f] for f in SPEC_FIELDS if attrs.get(f) not in (None, "")}
    entry["name"] = names[v]
    preds = sorted(graph.predecessors(v), key=lambda u: (graph.edges[u, v].get("index", position[u]), position[u]))
    producers = [names[u] for u in preds]
    if "inputs" in entry and entry["inputs"] is not None:
        listed = [str(x) for x in entry["inputs"]]
        ops_listed = [x for x in listed if x in names.values()]
        if sorted(ops_listed) != sorted(producers):
            raise HetsimError(f"{where}: node {names[v]!r}: its inputs {listed} disagree with its in-edges "
                              f"from {producers}")
        entry["inputs"] = listed
    else:
        entry["inputs"] = producers
    return entry
