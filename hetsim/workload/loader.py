"""Finding, validating and building workloads from their YAML files.

Validation happens in two passes. pydantic (:mod:`hetsim.workload.schema`) checks types, ranges
and unknown keys; then :func:`workload_from_dict` checks the graph (kinds, fields per kind, input
names, cycles, order, shapes) while inferring every tensor shape. Every problem becomes one
:class:`HetsimError` line ``<file>: <where>: <what> (allowed: ...)``.

:func:`workload_yaml` writes a workload dict (what :func:`workload_from_dict` reads) back as the
file format, one op per line, the way ``workloads/make_zoo.py`` writes the shipped files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import ValidationError

from hetsim.bounds import WORK
from hetsim.errors import HetsimError
from hetsim.paths import search_path as _search_path
from hetsim.validation import check_path, one_line, read_yaml
from hetsim.workload.model import NetInput, Workload
from hetsim.workload.ops import (
    CNN_KINDS,
    GEMM_KINDS,
    MULTI_INPUT_KINDS,
    POOL_KINDS,
    WINDOW_KINDS,
    Op,
    OpCounts,
    OpKind,
    Shape,
    window_out_size,
)
from hetsim.workload.schema import OpSpec, ShapeSpec, TensorSpec, WorkloadSpec

_KINDS = tuple(k.value for k in OpKind)
#: The counts of an op checked against hetsim.bounds.WORK (2^53), and their sum over the workload
#: against int64 (the layer tables are int64 arrays).
_CHECKED_COUNTS = ("macs", "flops", "input_bytes", "output_bytes", "weight_bytes", "im2col_bytes",
                   "weight_hint")
_INT64_SAFE = 2 ** 62

#: Count fields: any op may give them (generic ops: their counts; CNN ops: overrides).
_COUNT_FIELDS = ("macs", "flops", "input_bytes", "output_bytes", "weight_bytes", "im2col_bytes",
                 "gemm", "gemm_groups")
_COMMON = frozenset({"op_type", "dtype", *_COUNT_FIELDS})

# Fields (besides name, kind, inputs, layer_start and _COMMON) that each CNN kind accepts, and
# those it needs.
_SINGLE = frozenset({"input_shape"})
_FIELDS: dict[str, frozenset[str]] = {
    "conv": frozenset({"kernel", "stride", "pad", "out_c", "groups", "group", "dilation"}) | _SINGLE,
    "dw": frozenset({"kernel", "stride", "pad", "out_c", "dilation"}) | _SINGLE,
    "fc": frozenset({"out_c"}) | _SINGLE,
    "maxpool": frozenset({"kernel", "stride", "pad", "ceil_mode"}) | _SINGLE,
    "avgpool": frozenset({"kernel", "stride", "pad", "ceil_mode"}) | _SINGLE,
    "relu": _SINGLE, "lrn": _SINGLE, "bn": _SINGLE, "softmax": _SINGLE, "flatten": _SINGLE,
    "reshape": frozenset({"shape"}) | _SINGLE,
    "add": frozenset(), "concat": frozenset(),
}
_REQUIRED: dict[str, tuple[str, ...]] = {
    "conv": ("kernel", "out_c"), "dw": ("kernel",), "fc": ("out_c",),
    "maxpool": ("kernel",), "avgpool": ("kernel",), "reshape": ("shape",),
}
#: Fields of a generic op (one with ``dims``): window fields are kept for cost models that look
#: at them, the shape comes from ``dims``.
_GENERIC_FIELDS = frozenset({"dims", "kernel", "stride", "pad", "ceil_mode", "groups", "dilation"})
_OPTIONAL_FIELDS = ("kernel", "stride", "pad", "ceil_mode", "out_c", "groups", "group", "shape",
                    "input_shape", "dilation", "dims", *sorted(_COMMON))


# -- search path ----------------------------------------------------------------------------
def search_path() -> list[Path]:
    """Directories searched for workload ``<name>.yaml`` files (see :func:`hetsim.paths.search_path`)."""
    return _search_path("workloads")


def list_workloads() -> list[str]:
    """Names of all workloads on the search path, sorted (the zoo's generated networks are
    listed by :data:`hetsim.workload.networks.generated()`)."""
    names: set[str] = set()
    for d in search_path():
        names.update(p.stem for p in d.iterdir() if p.suffix in (".yaml", ".yml"))
    return sorted(names)


def resolve_workload(name_or_path: str | os.PathLike) -> Path:
    """The file a workload name or path refers to (a path ends in .yaml/.yml or has a slash)."""
    text = os.fspath(name_or_path)
    check_path(str(text), "workload")
    if text.endswith((".yaml", ".yml")) or os.sep in text or "/" in text:
        return Path(text)
    for d in search_path():
        for suffix in (".yaml", ".yml"):
            p = d / f"{text}{suffix}"
            if p.is_file():
                return p
    raise HetsimError(f"unknown workload {text!r}; available: "
                      f"{', '.join(list_workloads()) or 'none (check $HETSIM_WORKLOADS)'} "
                      f"(and the generated networks of the installed plugins, '+mnn' for MNN's fusions)")


def load_workload(name_or_path: str | os.PathLike) -> Workload:
    """Load a workload by name (``resnet50``, looked up on :func:`search_path`) or by path.

    Loaded workloads are cached on (resolved path, mtime), so repeated loads are free and return
    the same immutable object; editing the file invalidates the entry. A name no file on the
    search path has may be a network the zoo generates (:func:`generated_workload`).
    """
    try:
        path = resolve_workload(name_or_path)
    except HetsimError:
        text = os.fspath(name_or_path)
        if text.partition("+")[0] in _zoo_names():
            return generated_workload(text)
        raise
    if not path.exists():
        raise HetsimError(f"{path}: no such workload file")
    if not path.is_file():   # a folder, a FIFO, a device: the reader says which, and reads none
        read_yaml(path)
    resolved = path.resolve()
    return _load_file(resolved, resolved.stat().st_mtime_ns)


#: Converter passes a generated network's name may ask for after a ``+``: ``nasnet-large+mnn`` is
#: the zoo's NASNet-Large after MNN's fusions (:func:`hetsim.workload.onnx_fuse.fuse_mnn`), the
#: graph HOPE schedules.
ZOO_PASSES = ("mnn",)


def _zoo_names() -> frozenset[str]:
    from hetsim.workload.networks import generated

    return frozenset(generated())


@lru_cache(maxsize=32)
def generated_workload(name: str) -> Workload:
    """A network of :data:`hetsim.workload.networks.generated()` as a workload: built, imported from
    ONNX (:func:`~hetsim.workload.onnx_import.import_onnx`) and cached; ``<name>+mnn`` after MNN's
    converter fusions. ``load_workload`` falls back to this for names no file has."""
    from hetsim.workload.networks import generated
    from hetsim.workload.onnx_fuse import fuse_mnn
    from hetsim.workload.onnx_import import import_onnx

    base, plus, passes = name.partition("+")
    if base not in generated():
        raise HetsimError(f"unknown generated network {base!r}; allowed: {', '.join(sorted(generated()))}")
    if plus and passes not in ZOO_PASSES:
        raise HetsimError(f"workload {name!r}: unknown pass {passes!r} after '+'; allowed: "
                          f"{', '.join(ZOO_PASSES)}")
    model = generated()[base]()
    if passes == "mnn":
        model = fuse_mnn(model)
    return import_onnx(model, name, source=f"<zoo {name}>").workload


@lru_cache(maxsize=64)
def _load_file(path: Path, _mtime_ns: int) -> Workload:
    shown = _display(path)
    data = read_yaml(shown)
    workload = workload_from_dict(data, str(shown), path=path)
    if workload.name != path.stem:
        # Results and cost caches are keyed by the name: it must say which file it came from.
        raise HetsimError(f"{shown}: name: {workload.name!r} must match the file name "
                          f"{path.stem!r}")
    return workload


def _display(path: Path) -> Path:
    """``path`` relative to the working directory when it lies below it (shorter messages)."""
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


# -- building ------------------------------------------------------------------------------
def workload_from_dict(data: Mapping[str, Any], source_name: str = "<workload>",
                       path: Path | None = None) -> Workload:
    """Validate a parsed workload file and build the :class:`Workload`.

    ``source_name`` starts every error message (normally the file's path). Its ops are counted
    before they are built (:func:`hetsim.loading.check_load`).
    """
    from hetsim.loading import check_load

    ops = data.get("ops") if isinstance(data, Mapping) else None
    if isinstance(ops, list):
        check_load(source_name, len(ops), "ops")
    try:
        spec = WorkloadSpec.model_validate(data)
    except ValidationError as e:
        raise one_line(source_name, e) from None
    return _Builder(spec, source_name).build(path)


class _Builder:
    def __init__(self, spec: WorkloadSpec, source: str):
        self.spec = spec
        self.source = source

    def fail(self, where: str, what: str) -> HetsimError:
        return HetsimError(f"{self.source}: {where}: {what}")

    def where(self, i: int) -> str:
        return f"ops[{i}] ({self.spec.ops[i].name})"

    def build(self, path: Path | None) -> Workload:
        spec = self.spec
        for j, kind in enumerate(spec.layer_kinds):
            if kind not in _KINDS:
                raise self.fail(f"layer_kinds[{j}]", f"unknown kind {kind!r} "
                                f"(allowed: {', '.join(_KINDS)})")
        self.nets = self._network_inputs()
        index = self._check_names_and_fields()
        inputs, nets = self._resolve_inputs(index)
        self._check_acyclic_and_ordered(inputs, index)

        built: dict[str, Op] = {}
        primary = next(iter(self.nets.values()))
        layer_kinds = set(spec.layer_kinds)
        ops: list[Op] = []
        layer, seen_start = 1, False
        for i, o in enumerate(spec.ops):
            # Pipe-it §1.2: a layer starts at a major op; everything else joins the layer of the
            # op before it. Ops ahead of the first layer start join layer 1.
            starts = o.layer_start if o.layer_start is not None else o.kind in layer_kinds
            if starts:
                if seen_start:
                    layer += 1
                seen_start = True
            producers = [built[s] for s in inputs[i]]
            readers = [self.nets[n] for n in nets[i]]
            if o.dims is not None:
                op = self._make_generic(i, o, producers, readers, layer, starts)
            else:
                in_shapes = [p.out_shape for p in producers] + [t.shape for t in readers]
                op = self._make_op(i, o, tuple(inputs[i]), in_shapes, layer, starts,
                                   tuple(nets[i]))
            self._check_counts(i, op)
            built[o.name] = op
            ops.append(op)
        for name in _CHECKED_COUNTS:
            total = sum(getattr(op, name) for op in ops)
            if total > _INT64_SAFE:
                raise self.fail("ops", f"the ops' {name.replace('_', ' ')} add up to {total:.3g}, past "
                                f"2^62 = {_INT64_SAFE:.3g} (hetsim sums them in int64)")
        return Workload(spec.name, ops, input_shape=primary.shape, layer_kinds=spec.layer_kinds,
                        description=spec.description, source=spec.source, path=path,
                        inputs=list(self.nets.values()))

    def _network_inputs(self) -> dict[str, NetInput]:
        """The network inputs by name: ``input`` (named ``input`` when given as H×W×C) first."""
        first = self.spec.input
        tensors = [first if isinstance(first, TensorSpec) else None, *self.spec.extra_inputs]
        nets: dict[str, NetInput] = {}
        for j, t in enumerate(tensors):
            if t is None:
                assert isinstance(first, ShapeSpec)
                nets["input"] = NetInput("input", _shape(first).nchw())
                continue
            if t.name in nets:
                raise self.fail("extra_inputs" if j else "input",
                                f"duplicate network input name {t.name!r}")
            nets[t.name] = NetInput(t.name, tuple(t.dims), t.dtype)
        return nets

    def _check_counts(self, i: int, op: Op) -> None:
        """Every count of an op (given or derived from its shapes) within 2^53, the largest
        integer float64 holds exactly (the cost models work in float64): a shape of 2^31 x 2^31
        is refused here, not an OverflowError later."""
        for name in _CHECKED_COUNTS:
            value = getattr(op, name)
            if value > WORK[1]:
                raise self.fail(self.where(i), f"{name.replace('_', ' ')} {value:.3g} is past 2^53 = "
                                f"{WORK[1]:.3g}, the largest count hetsim keeps exact (check the shapes)")

    # -- structural checks --------------------------------------------------------------
    def _check_names_and_fields(self) -> dict[str, int]:
        index: dict[str, int] = {}
        for i, o in enumerate(self.spec.ops):
            if o.name in index:
                raise self.fail(self.where(i), f"duplicate op name {o.name!r} "
                                f"(first used by ops[{index[o.name]}])")
            index[o.name] = i
            if o.kind not in _KINDS:
                raise self.fail(self.where(i), f"unknown kind {o.kind!r} "
                                f"(allowed: {', '.join(_KINDS)})")
            if o.name in self.nets and (o.name != "input" or isinstance(self.spec.input,
                                                                        TensorSpec)):
                raise self.fail(self.where(i), f"op name {o.name!r} is also the name of a "
                                "network input")
            generic = o.dims is not None
            if not generic and o.kind not in CNN_KINDS:
                raise self.fail(self.where(i), f"kind {o.kind!r} needs 'dims' (its output "
                                "dims: only the CNN kinds infer their shape)")
            allowed = (_GENERIC_FIELDS if generic else _FIELDS[o.kind]) | _COMMON
            for field in _OPTIONAL_FIELDS:
                if getattr(o, field) is not None and field not in allowed:
                    extra = ", ".join(sorted(allowed)) or "none"
                    what = "a generic op (one with 'dims')" if generic else f"kind {o.kind!r}"
                    raise self.fail(self.where(i), f"field {field!r} does not apply to {what} "
                                    f"(its fields: {extra})")
            if generic:
                if o.kind in GEMM_KINDS and o.gemm is None:
                    raise self.fail(self.where(i), f"kind {o.kind!r} with 'dims' needs 'gemm' "
                                    "[N, K, M]")
                continue
            for field in _REQUIRED.get(o.kind, ()):
                if getattr(o, field) is None:
                    raise self.fail(self.where(i), f"kind {o.kind!r} needs {field!r}")
        return index

    def _resolve_inputs(self, index: dict[str, int]) -> tuple[list[list[str]], list[list[str]]]:
        """Per op: the producer ops it reads and the network inputs it reads (``[]`` or a first op
        without ``inputs`` = the first network input)."""
        resolved: list[list[str]] = []
        nets: list[list[str]] = []
        primary = next(iter(self.nets))
        named = isinstance(self.spec.input, TensorSpec) or bool(self.spec.extra_inputs)
        for i, o in enumerate(self.spec.ops):
            if o.inputs is None:
                names = [self.spec.ops[i - 1].name] if i > 0 else []
            else:
                names = list(o.inputs)
            ops_read, nets_read = [], []
            for name in names:
                if name in index:
                    ops_read.append(name)
                elif named and name in self.nets:
                    nets_read.append(name)
                else:
                    raise self.fail(self.where(i), f"unknown input {name!r} "
                                    "(inputs must name ops of this workload or its named network "
                                    "inputs; [] = network input)")
            if not names:
                nets_read = [primary]
            n = max(len(names), 1)
            if o.dims is None and o.kind in MULTI_INPUT_KINDS and n < 2:
                raise self.fail(self.where(i), f"{o.kind} needs at least 2 inputs, got {n}")
            if o.dims is None and o.kind not in MULTI_INPUT_KINDS and n != 1:
                raise self.fail(self.where(i), f"{o.kind} takes exactly 1 input, got {n}")
            resolved.append(ops_read)
            nets.append(nets_read)
        return resolved, nets

    def _check_acyclic_and_ordered(self, inputs: list[list[str]], index: dict[str, int]) -> None:
        # Every input listed before its reader is a topological order, so no cycle: only a file
        # that fails this needs the graph (to name the cycle, which is the better message).
        if all(index[src] < i for i, srcs in enumerate(inputs) for src in srcs):
            return
        graph = nx.DiGraph()
        graph.add_nodes_from(o.name for o in self.spec.ops)
        graph.add_edges_from((src, o.name) for o, srcs in zip(self.spec.ops, inputs, strict=True)
                             for src in srcs)
        if not nx.is_directed_acyclic_graph(graph):
            cycle = [u for u, _ in nx.find_cycle(graph)]
            first = min(cycle, key=index.__getitem__)
            k = cycle.index(first)
            loop = cycle[k:] + cycle[:k] + [first]
            raise self.fail(self.where(index[first]),
                            f"inputs form a cycle {' -> '.join(loop)} (a workload is a DAG)")
        for i, srcs in enumerate(inputs):
            for src in srcs:
                if index[src] >= i:
                    raise self.fail(self.where(i), f"input {src!r} is listed later (ops[{index[src]}]);"
                                    " list ops in a topological order")

    # -- shape inference ------------------------------------------------------------------
    def _make_generic(self, i: int, o: OpSpec, producers: list[Op], readers: list[NetInput],
                      layer: int, starts: bool) -> Op:
        """A generic op: shapes from ``dims``, counts as written (input bytes default to the
        bytes of every tensor it reads from other ops and the network)."""
        assert o.dims is not None
        first = producers[0].out_shape if producers else readers[0].shape
        in_dims = tuple(p.dims for p in producers) + tuple(t.dims for t in readers)
        input_bytes = o.input_bytes
        if input_bytes is None:
            input_bytes = (sum(p.output_bytes for p in producers)
                           + sum(t.bytes_ for t in readers))
        counts = OpCounts(macs=o.macs, flops=o.flops, input_bytes=input_bytes,
                          output_bytes=o.output_bytes, weight_bytes=o.weight_bytes,
                          im2col_bytes=o.im2col_bytes,
                          gemm=tuple(o.gemm) if o.gemm is not None else None,  # type: ignore[arg-type]
                          gemm_groups=o.gemm_groups)
        return Op(name=o.name, kind=OpKind(o.kind), inputs=tuple(p.name for p in producers),
                  in_shape=first, out_shape=Shape.of_dims(o.dims[0]), layer=layer,
                  starts_layer=starts, kernel=o.kernel or (1, 1), stride=o.stride or 1,
                  pad=o.pad or (0, 0), ceil_mode=bool(o.ceil_mode), groups=o.groups or 1,
                  in_shapes=tuple(p.out_shape for p in producers) + tuple(t.shape for t in readers),
                  dilation=o.dilation or 1, op_type=o.op_type or "", dtype=o.dtype or "float32",
                  out_dims=o.dims, in_dims=in_dims, net_inputs=tuple(t.name for t in readers),
                  counts=counts)

    def _make_op(self, i: int, o: OpSpec, inputs: tuple[str, ...], in_shapes: list[Shape],
                 layer: int, starts: bool, nets: tuple[str, ...] = ()) -> Op:
        where = self.where(i)
        kind = OpKind(o.kind)
        override = o.input_shape is not None
        if o.input_shape is not None:
            in_shapes[0] = _shape(o.input_shape)
        x = in_shapes[0]
        names = list(inputs) + list(nets)  # what the op reads, in in_shapes order
        kernel = o.kernel or (1, 1)
        pad = o.pad or (0, 0)
        stride = o.stride or 1
        dilation = o.dilation or 1
        groups = o.groups or 1
        group_node = (o.group[0], o.group[1]) if o.group is not None else None
        out_c = o.out_c or 0  # required (checked) for the kinds that use it
        c_in = self._group_channels(where, group_node, x, groups)
        if kind == OpKind.CONV and (c_in % groups or out_c % groups):
            raise self.fail(where, f"groups {groups} must divide input channels {c_in} and "
                            f"out_c {o.out_c}")
        if kind in WINDOW_KINDS:
            out, groups = self._window_out(where, kind, o, x, kernel, pad, stride, dilation, out_c, groups)
        else:
            out = self._out_shape(where, kind, o, x, names, in_shapes, out_c)

        counts = OpCounts(macs=o.macs, flops=o.flops, input_bytes=o.input_bytes,
                          output_bytes=o.output_bytes, weight_bytes=o.weight_bytes,
                          im2col_bytes=o.im2col_bytes,
                          gemm=tuple(o.gemm) if o.gemm is not None else None,  # type: ignore[arg-type]
                          gemm_groups=o.gemm_groups)
        return Op(name=o.name, kind=kind, inputs=inputs, in_shape=x, out_shape=out,
                  layer=layer, starts_layer=starts, kernel=kernel, stride=stride, pad=pad,
                  ceil_mode=bool(o.ceil_mode) and kind in POOL_KINDS, groups=groups,
                  group_node=group_node, in_shapes=tuple(in_shapes), shape_override=override,
                  dilation=dilation, op_type=o.op_type or "", dtype=o.dtype or "float32",
                  net_inputs=nets, counts=counts)


    def _group_channels(self, where: str, group_node: tuple[int, int] | None, x: Shape, groups: int) -> int:
        """The input channels the op reads: all of them, or its share [i, n] of a group split
        (AutoDiCE-style channel groups; not with 'groups')."""
        if group_node is None:
            return x.c
        g, n = group_node
        if not 1 <= g <= n or n < 2:
            raise self.fail(where, f"group {list(group_node)} must be [i, n] with "
                            "1 <= i <= n and n >= 2")
        if x.c % n:
            raise self.fail(where, f"group count {n} does not divide the {x.c} input channels")
        if groups != 1:
            raise self.fail(where, "use either 'groups' or 'group', not both")
        return x.c // n

    def _window_out(self, where: str, kind: OpKind, o: OpSpec, x: Shape, kernel: tuple[int, int],
                    pad: tuple[int, int], stride: int, dilation: int, out_c: int,
                    groups: int) -> tuple[Shape, int]:
        """The output shape of a windowed op (conv, dw, pool) and its groups (a dw conv: one per
        channel)."""
        # A dilated kernel spans d·(R-1)+1 input pixels (ONNX Conv "dilations").
        r, s = (dilation * (k - 1) + 1 for k in kernel)
        if pad[0] >= min(r, s) or pad[1] >= min(r, s):
            raise self.fail(where, f"pad {list(pad)} must be smaller than kernel "
                            f"{_kernel_text((r, s))}")
        ceil = bool(o.ceil_mode)
        oh = window_out_size(x.h, r, stride, pad, ceil)
        ow = window_out_size(x.w, s, stride, pad, ceil)
        if oh < 1 or ow < 1:
            raise self.fail(where, f"kernel {_kernel_text(kernel)} exceeds padded input "
                            f"{x.h + pad[0] + pad[1]}x{x.w + pad[0] + pad[1]}")
        if kind == OpKind.CONV:
            return Shape(oh, ow, out_c), groups
        if kind == OpKind.DW:
            if o.out_c is not None and o.out_c != x.c:
                raise self.fail(where, f"out_c {o.out_c} of a dw conv must equal its input "
                                f"channels {x.c} (depth multiplier 1)")
            return Shape(oh, ow, x.c), x.c
        return Shape(oh, ow, x.c), groups

    def _out_shape(self, where: str, kind: OpKind, o: OpSpec, x: Shape, names: list[str],
                   in_shapes: list[Shape], out_c: int) -> Shape:
        """The output shape of an op without a window; add and concat check their inputs agree."""
        if kind == OpKind.FC:
            return Shape(1, 1, out_c)
        if kind == OpKind.ADD:
            for name, other in zip(names[1:], in_shapes[1:], strict=True):
                if other != x:
                    raise self.fail(where, f"add inputs disagree: {names[0]} is {x}, "
                                    f"{name} is {other} (add needs equal shapes)")
            return x
        if kind == OpKind.CONCAT:
            for name, other in zip(names[1:], in_shapes[1:], strict=True):
                if (other.h, other.w) != (x.h, x.w):
                    raise self.fail(where, f"concat inputs disagree: {names[0]} is {x}, "
                                    f"{name} is {other} (concat joins channels of equal HxW)")
            return Shape(x.h, x.w, sum(t.c for t in in_shapes))
        if kind == OpKind.FLATTEN:
            return Shape(1, 1, x.elements)
        if kind == OpKind.RESHAPE:
            assert o.shape is not None  # required for reshape (checked)
            out = _shape(o.shape)
            if out.elements != x.elements:
                raise self.fail(where, f"reshape to {out} ({out.elements} elements) from {x} "
                                f"({x.elements} elements); a reshape keeps the element count")
            return out
        return x   # relu, lrn, bn, softmax: shape-preserving


def _shape(s: ShapeSpec) -> Shape:
    return Shape(s.h, s.w, s.c)


def _kernel_text(kernel: tuple[int, int]) -> str:
    return str(kernel[0]) if kernel[0] == kernel[1] else f"{kernel[0]}x{kernel[1]}"


# -- writing ---------------------------------------------------------------------------------
#: Key order of an op line (readers scan them left to right; ``workloads/make_zoo.py`` writes the
#: CNN keys in the same order).
OP_KEY_ORDER = ("name", "kind", "op_type", "inputs", "kernel", "stride", "pad", "dilation",
                "ceil_mode", "out_c", "groups", "group", "shape", "input_shape", "dims", "dtype",
                "gemm", "gemm_groups", "macs", "flops", "input_bytes", "output_bytes",
                "weight_bytes", "im2col_bytes", "layer_start")
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_./-]*$")
_YAML_WORDS = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, str):
        return v if _PLAIN.match(v) and v.lower() not in _YAML_WORDS else json.dumps(v)
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{k}: {_scalar(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_scalar(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as YAML")


def workload_yaml(data: Mapping[str, Any], header: str = "") -> str:
    """The workload file for ``data`` (a dict :func:`workload_from_dict` accepts): top-level keys
    in the usual order, one op per line, ``# L<i>`` after each op that starts layer i.
    ``header`` lines are written first as comments."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    for key in ("schema", "name", "description", "source", "input", "extra_inputs",
                "layer_kinds"):
        if key in data and (key != "extra_inputs" or data[key]):
            value = data[key]
            text = json.dumps(value) if key in ("description", "source") else _scalar(value)
            lines.append(f"{key}: {text}")
    lines.append("ops:")
    kinds = set(data["layer_kinds"])
    layer, seen = 1, False
    for op in data["ops"]:
        note = ""
        if op.get("layer_start", op["kind"] in kinds):
            layer += 1 if seen else 0
            seen = True
            note = f"  # L{layer}"
        unknown = set(op) - set(OP_KEY_ORDER)
        if unknown:
            raise ValueError(f"op {op.get('name')}: unknown keys {sorted(unknown)}")
        body = ", ".join(f"{k}: {_scalar(op[k])}" for k in OP_KEY_ORDER if k in op)
        lines.append(f"  - {{{body}}}{note}")
    return "\n".join(lines) + "\n"
