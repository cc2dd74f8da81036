"""Workloads: DNNs as DAGs of ops grouped into the layers the papers index.

>>> from hetsim.workload import load_workload
>>> w = load_workload("resnet50")       # Pipe-it's ARM-CL indexing, W = 54
>>> w.num_layers, w.layer(1).gemm
(54, (12544, 147, 64))

See docs/workloads.md for the file format and the shipped networks, docs/import.md for ONNX
(:mod:`hetsim.workload.onnx_import`, :mod:`hetsim.workload.onnx_export`), and networkx graphs
(:mod:`hetsim.workload.graphs`: :func:`to_networkx`, :func:`from_networkx`).
"""

from hetsim.workload.graphs import from_networkx, to_networkx
from hetsim.workload.loader import (
    list_workloads,
    load_workload,
    resolve_workload,
    search_path,
    workload_from_dict,
    workload_yaml,
)
from hetsim.workload.model import Layer, NetInput, Workload
from hetsim.workload.ops import (
    BLAS_GEMM_KINDS,
    BYTES_PER_ELEMENT,
    CNN_KINDS,
    DTYPE_BYTES,
    GEMM_KINDS,
    POOL_KINDS,
    VIEW_KINDS,
    Op,
    OpCounts,
    OpKind,
    Shape,
    window_out_size,
)

__all__ = [
    "BLAS_GEMM_KINDS",
    "BYTES_PER_ELEMENT",
    "CNN_KINDS",
    "DTYPE_BYTES",
    "GEMM_KINDS",
    "POOL_KINDS",
    "VIEW_KINDS",
    "Layer",
    "NetInput",
    "Op",
    "OpCounts",
    "OpKind",
    "Shape",
    "Workload",
    "from_networkx",
    "list_workloads",
    "load_workload",
    "resolve_workload",
    "search_path",
    "to_networkx",
    "window_out_size",
    "workload_from_dict",
    "workload_yaml",
]
