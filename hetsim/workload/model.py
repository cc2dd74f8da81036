"""Layers and workloads: the ops grouped into the pipeline units the papers index.

A *layer* is the unit a pipeline split is made of: Pipe-it's "major layer" (a conv, dw or fc node
with the non-conv nodes that follow it, Pipe-it §IV-A) or Pipe-search's / Shisha's layer (a
node of the chain, Pipe-search §2.2). Layers are contiguous in the ops' file order, which is a
topological order, so a pipeline stage = a run of consecutive layers, and a cut after layer c
splits the DAG in two.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.workload.ops import DTYPE_BYTES, Op, Shape, cached_property


@dataclass(frozen=True)
class NetInput:
    """A network input: a graph input of an imported model, or the H×W×C image of a CNN."""

    name: str
    dims: tuple[int, ...]
    dtype: str = "float32"

    @property
    def bytes_(self) -> int:
        return math.prod(self.dims) * DTYPE_BYTES[self.dtype]

    @property
    def shape(self) -> Shape:
        return Shape.of_dims(self.dims)


@dataclass(frozen=True)
class Layer:
    """A pipeline unit: consecutive ops, the first layer-start op being the *major* op.

    The sums are over the layer's ops (computed once here). ``input_bytes``/``output_bytes`` are
    the activation traffic of running the ops one after another (each op reads its inputs and
    writes its output); the bytes handed to the next stage at a cut are ``Workload.cut_bytes``.
    """

    index: int  # 1-based, as in the papers' tables
    name: str  # name of the major op (Appendix A / Table 6 naming)
    ops: tuple[Op, ...]
    major: Op = field(repr=False)
    macs: int = field(init=False)
    flops: int = field(init=False)
    weight_bytes: int = field(init=False)
    weight_hint: int = field(init=False)
    input_bytes: int = field(init=False, repr=False)
    output_bytes: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ops = self.ops   # attribute reads, not getattr by name: 100,000 layers load in a blink
        for key, value in (("macs", sum(op.macs for op in ops)), ("flops", sum(op.flops for op in ops)),
                           ("weight_bytes", sum(op.weight_bytes for op in ops)),
                           ("weight_hint", sum(op.weight_hint for op in ops)),
                           ("input_bytes", sum(op.input_bytes for op in ops)),
                           ("output_bytes", sum(op.output_bytes for op in ops))):
            object.__setattr__(self, key, value)

    @property
    def kinds(self) -> tuple[str, ...]:
        """Op kinds in order, e.g. ('conv', 'relu', 'lrn', 'maxpool')."""
        return tuple(str(op.kind) for op in self.ops)

    @property
    def gemm(self) -> tuple[int, int, int] | None:
        """(N, K, M) of the major op (Pipe-it eq. 4)."""
        return self.major.gemm


class Workload:
    """A DNN as a DAG of ops grouped into layers. Treat it as immutable: it is cached and shared.

    Attributes:
        name, description, source: identification and citation.
        input_shape: the (first) network input H×W×C.
        inputs: every network input by name (:class:`NetInput`), the first being ``input_shape``'s.
        graph: ``networkx.DiGraph`` (frozen); node = op name with attribute ``op`` (the Op) and
            ``layer``; edge producer -> consumer with attribute ``bytes`` (the producer's tensor).
        ops: all ops in file order, which is a topological order.
        layers: the layers, ``layers[i - 1]`` being layer i.
        layer_kinds: op kinds that start a new layer in this workload.
    """

    def __init__(self, name: str, ops: Sequence[Op], *, input_shape: Shape,
                 layer_kinds: Sequence[str], description: str = "", source: str = "",
                 path: Path | None = None, inputs: Sequence[NetInput] | None = None):
        self.name = name
        self.description = description
        self.source = source
        self.input_shape = input_shape
        if not inputs:
            inputs = [NetInput("input", input_shape.nchw())]
        self.inputs: dict[str, NetInput] = {t.name: t for t in inputs}
        self.input_name = inputs[0].name
        self.layer_kinds = tuple(str(k) for k in layer_kinds)
        self.path = path
        self.ops: tuple[Op, ...] = tuple(ops)
        self._by_name = {op.name: op for op in self.ops}
        #: op name -> its position in ``ops`` (a topological order: the ONNX node order of imports)
        self.op_index: dict[str, int] = {op.name: i for i, op in enumerate(self.ops)}
        if len(self._by_name) != len(self.ops):
            raise ValueError(f"workload {name}: duplicate op names")

        for op in self.ops:
            for net in op.net_inputs:
                if net not in self.inputs:
                    raise ValueError(f"workload {name}: op {op.name} reads unknown network input "
                                     f"{net!r}")

        self.layers: tuple[Layer, ...] = self._group_layers()
        self.num_layers = len(self.layers)
        self._cut_bytes = self._compute_cut_bytes()
        self._weights = self._readonly(np.array([lay.weight_hint for lay in self.layers],
                                                dtype=np.int64))
        self._macs = self._readonly(np.array([lay.macs for lay in self.layers], dtype=np.int64))

    @cached_property
    def graph(self) -> nx.DiGraph:
        """The ops as a frozen ``networkx.DiGraph`` (see the class docstring), made when first
        asked for: a pipeline never needs it, and for 100,000 ops it is a second of loading."""
        graph = nx.DiGraph(name=self.name)
        graph.add_nodes_from((op.name, {"op": op, "layer": op.layer}) for op in self.ops)
        graph.add_edges_from((src, op.name, {"bytes": self._by_name[src].output_bytes})
                             for op in self.ops for src in op.inputs)
        return nx.freeze(graph)

    @cached_property
    def predecessors(self) -> dict[str, tuple[str, ...]]:
        """Each op's producers in ``graph.predecessors``'s order (its inputs, each once), looked up
        once per op of every candidate the task builder expands."""
        g = self.graph
        return {op.name: tuple(g.predecessors(op.name)) for op in self.ops}

    @cached_property
    def output_ops(self) -> tuple[str, ...]:
        """The ops no op reads (the network's outputs), in workload order."""
        g = self.graph
        return tuple(op.name for op in self.ops if g.out_degree(op.name) == 0)

    # -- construction helpers -------------------------------------------------------------
    def _group_layers(self) -> tuple[Layer, ...]:
        groups: dict[int, list[Op]] = {}
        for op in self.ops:
            groups.setdefault(op.layer, []).append(op)
        if sorted(groups) != list(range(1, len(groups) + 1)):
            raise ValueError(f"workload {self.name}: layer indices are not 1..L")
        layers = []
        for index in range(1, len(groups) + 1):
            ops = tuple(groups[index])
            # The major op is the op that started the layer (Pipe-it's conv/dw/fc node, or a
            # pool in Pipe-search's VGG16); a layer-less workload falls back to its first op.
            major = next((op for op in ops if op.starts_layer), ops[0])
            layers.append(Layer(index=index, name=major.name, ops=ops, major=major))
        return tuple(layers)

    def _compute_cut_bytes(self) -> np.ndarray:
        """Bytes crossing a cut after layer c, for c = 0..L (0 and L carry nothing).

        A tensor produced in layer p and last read in layer q > p crosses every cut c with
        p <= c < q, and is counted once however many later ops read it (it is sent once to the
        next stage, which forwards what later stages need). A difference array makes this O(ops).
        The network input counts as produced in layer 1 (stage 1 receives it).
        """
        L = self.num_layers
        diff = np.zeros(L + 2, dtype=np.int64)
        last_reader: dict[str, int] = {}
        input_last: dict[str, int] = {}
        for op in self.ops:
            for net in self.net_inputs_of(op):
                input_last[net] = max(input_last.get(net, 1), op.layer)
            for src in op.inputs:
                last_reader[src] = max(last_reader.get(src, 0), op.layer)
        for src, q in last_reader.items():
            producer = self._by_name[src]
            if q > producer.layer:
                diff[producer.layer] += producer.output_bytes
                diff[q] -= producer.output_bytes
        for net, q in input_last.items():
            if q > 1:
                nbytes = self.inputs[net].bytes_
                diff[1] += nbytes
                diff[q] -= nbytes
        cuts = np.cumsum(diff)[: L + 1]
        cuts[0] = 0
        return self._readonly(cuts)

    @staticmethod
    def _readonly(a: np.ndarray) -> np.ndarray:
        a.setflags(write=False)
        return a

    def net_inputs_of(self, op: Op) -> tuple[str, ...]:
        """Names of the network inputs ``op`` reads: its ``net_inputs``, or the (first) network
        input for a CNN-kind op without producers (the file format's ``inputs: []``)."""
        if op.net_inputs:
            return op.net_inputs
        return (self.input_name,) if not op.inputs and not op.explicit else ()

    # -- queries ------------------------------------------------------------------------------
    def layer(self, i: int) -> Layer:
        """Layer i, 1-based as in the papers (``layer(1)`` is the first)."""
        if not 1 <= i <= self.num_layers:
            raise HetsimError(f"workload {self.name}: layer {i} out of range 1..{self.num_layers}")
        return self.layers[i - 1]

    def op(self, name: str) -> Op:
        try:
            return self._by_name[name]
        except KeyError:
            raise HetsimError(f"workload {self.name}: no op named {name!r}") from None

    def cut_bytes(self, c: int) -> int:
        """Bytes that cross a pipeline cut placed after layer c (1 <= c < L; 0 and L give 0):
        the output of every op in layers <= c read by any op in a layer > c, each tensor once."""
        if not 0 <= c <= self.num_layers:
            raise HetsimError(f"workload {self.name}: cut {c} out of range 0..{self.num_layers}")
        return int(self._cut_bytes[c])

    def cut_bytes_array(self) -> np.ndarray:
        """Read-only int64 array of length L+1: index c = ``cut_bytes(c)``."""
        return self._cut_bytes

    def layer_weights(self) -> np.ndarray:
        """Read-only int64 array of per-layer weight hints (index 0 = layer 1): the sum of the
        layer's ops' Eq. 1/Eq. 2/pool hints, the ``L = {LW_1..LW_M}`` of Pipe-search."""
        return self._weights

    def layer_macs(self) -> np.ndarray:
        """Read-only int64 array of per-layer true MACs (index 0 = layer 1)."""
        return self._macs

    @property
    def total_macs(self) -> int:
        return int(self._macs.sum())

    @property
    def total_weight_hint(self) -> int:
        return int(self._weights.sum())

    def summary(self) -> pd.DataFrame:
        """One row per layer: index, name, kinds, macs, gemm (of the major op), weight_hint,
        weight_bytes, output_bytes (op traffic) and cut_bytes (bytes crossing a cut after it)."""
        rows = [{
            "index": lay.index,
            "name": lay.name,
            "kinds": ",".join(lay.kinds),
            "macs": lay.macs,
            "gemm": lay.gemm,
            "weight_hint": lay.weight_hint,
            "weight_bytes": lay.weight_bytes,
            "output_bytes": lay.output_bytes,
            "cut_bytes": int(self._cut_bytes[lay.index]),
        } for lay in self.layers]
        return pd.DataFrame(rows).set_index("index")

    def __repr__(self) -> str:
        return (f"Workload({self.name!r}, {self.num_layers} layers, {len(self.ops)} ops, "
                f"{self.total_macs / 1e9:.3f} GMAC)")
