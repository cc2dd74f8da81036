"""Finding, validating and building workloads from their YAML files.

Validation happens in two passes. pydantic (:mod:`hetsim.workload.schema`) checks types, ranges
and unknown keys; then :func:`workload_from_dict` checks the graph (kinds, fields per kind, input
names, cycles, order, shapes) while inferring every tensor shape. Every problem becomes one
:class:`HetsimError` line ``<file>: <where>: <what> (allowed: ...)``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import ValidationError

from hetsim.errors import HetsimError
from hetsim.paths import search_path as _search_path
from hetsim.validation import one_line, read_yaml
from hetsim.workload.model import Workload
from hetsim.workload.ops import (
    MULTI_INPUT_KINDS,
    POOL_KINDS,
    WINDOW_KINDS,
    Op,
    OpKind,
    Shape,
    window_out_size,
)
from hetsim.workload.schema import OpSpec, ShapeSpec, WorkloadSpec

_KINDS = tuple(k.value for k in OpKind)

# Fields (besides name, kind, inputs, layer_start) that each kind accepts, and those it needs.
_SINGLE = frozenset({"input_shape"})
_FIELDS: dict[str, frozenset[str]] = {
    "conv": frozenset({"kernel", "stride", "pad", "out_c", "groups", "group"}) | _SINGLE,
    "dw": frozenset({"kernel", "stride", "pad", "out_c"}) | _SINGLE,
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
_OPTIONAL_FIELDS = ("kernel", "stride", "pad", "ceil_mode", "out_c", "groups", "group", "shape",
                    "input_shape")


# -- search path ----------------------------------------------------------------------------
def search_path() -> list[Path]:
    """Directories searched for workload ``<name>.yaml`` files (see :func:`hetsim.paths.search_path`)."""
    return _search_path("workloads")


def list_workloads() -> list[str]:
    """Names of all workloads on the search path, sorted."""
    names: set[str] = set()
    for d in search_path():
        names.update(p.stem for p in d.iterdir() if p.suffix in (".yaml", ".yml"))
    return sorted(names)


def resolve_workload(name_or_path: str | os.PathLike) -> Path:
    """The file a workload name or path refers to (a path ends in .yaml/.yml or has a slash)."""
    text = os.fspath(name_or_path)
    if text.endswith((".yaml", ".yml")) or os.sep in text or "/" in text:
        return Path(text)
    for d in search_path():
        for suffix in (".yaml", ".yml"):
            p = d / f"{text}{suffix}"
            if p.is_file():
                return p
    raise HetsimError(f"unknown workload {text!r}; available: "
                      f"{', '.join(list_workloads()) or 'none (check $HETSIM_WORKLOADS)'}")


def load_workload(name_or_path: str | os.PathLike) -> Workload:
    """Load a workload by name (``resnet50``, looked up on :func:`search_path`) or by path.

    Loaded workloads are cached on (resolved path, mtime), so repeated loads are free and return
    the same immutable object; editing the file invalidates the entry.
    """
    path = resolve_workload(name_or_path)
    if not path.is_file():
        raise HetsimError(f"{path}: no such workload file")
    resolved = path.resolve()
    return _load_file(resolved, resolved.stat().st_mtime_ns)


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

    ``source_name`` starts every error message (normally the file's path).
    """
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
        index = self._check_names_and_fields()
        inputs = self._resolve_inputs(index)
        self._check_acyclic_and_ordered(inputs, index)

        shapes: dict[str, Shape] = {}
        net_input = _shape(spec.input)
        layer_kinds = set(spec.layer_kinds)
        ops: list[Op] = []
        layer, seen_start = 1, False
        for i, o in enumerate(spec.ops):
            in_shapes = [shapes[s] for s in inputs[i]] if inputs[i] else [net_input]
            # Pipe-it §1.2: a layer starts at a major op; everything else joins the layer of the
            # op before it. Ops ahead of the first layer start join layer 1.
            starts = o.layer_start if o.layer_start is not None else o.kind in layer_kinds
            if starts:
                if seen_start:
                    layer += 1
                seen_start = True
            op = self._make_op(i, o, tuple(inputs[i]), in_shapes, layer, starts)
            shapes[o.name] = op.out_shape
            ops.append(op)
        return Workload(spec.name, ops, input_shape=net_input, layer_kinds=spec.layer_kinds,
                        description=spec.description, source=spec.source, path=path)

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
            allowed = _FIELDS[o.kind]
            for field in _OPTIONAL_FIELDS:
                if getattr(o, field) is not None and field not in allowed:
                    extra = ", ".join(sorted(allowed)) or "none"
                    raise self.fail(self.where(i), f"field {field!r} does not apply to kind "
                                    f"{o.kind!r} (its fields: {extra})")
            for field in _REQUIRED.get(o.kind, ()):
                if getattr(o, field) is None:
                    raise self.fail(self.where(i), f"kind {o.kind!r} needs {field!r}")
        return index

    def _resolve_inputs(self, index: dict[str, int]) -> list[list[str]]:
        resolved: list[list[str]] = []
        for i, o in enumerate(self.spec.ops):
            if o.inputs is None:
                names = [self.spec.ops[i - 1].name] if i > 0 else []
            else:
                names = list(o.inputs)
            for name in names:
                if name not in index:
                    raise self.fail(self.where(i), f"unknown input {name!r} "
                                    "(inputs must name ops of this workload; [] = network input)")
            n = max(len(names), 1)
            if o.kind in MULTI_INPUT_KINDS and n < 2:
                raise self.fail(self.where(i), f"{o.kind} needs at least 2 inputs, got {n}")
            if o.kind not in MULTI_INPUT_KINDS and n != 1:
                raise self.fail(self.where(i), f"{o.kind} takes exactly 1 input, got {n}")
            resolved.append(names)
        return resolved

    def _check_acyclic_and_ordered(self, inputs: list[list[str]], index: dict[str, int]) -> None:
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
    def _make_op(self, i: int, o: OpSpec, inputs: tuple[str, ...], in_shapes: list[Shape],
                 layer: int, starts: bool) -> Op:
        where = self.where(i)
        kind = OpKind(o.kind)
        override = o.input_shape is not None
        if override:
            in_shapes[0] = _shape(o.input_shape)
        x = in_shapes[0]
        kernel = o.kernel or (1, 1)
        pad = o.pad or (0, 0)
        stride = o.stride or 1
        groups = o.groups or 1
        group_node = tuple(o.group) if o.group is not None else None
        c_in = x.c

        if group_node is not None:
            g, n = group_node
            if not 1 <= g <= n or n < 2:
                raise self.fail(where, f"group {list(group_node)} must be [i, n] with "
                                "1 <= i <= n and n >= 2")
            if x.c % n:
                raise self.fail(where, f"group count {n} does not divide the {x.c} input channels")
            c_in = x.c // n
            if groups != 1:
                raise self.fail(where, "use either 'groups' or 'group', not both")
        if kind == OpKind.CONV and (c_in % groups or o.out_c % groups):
            raise self.fail(where, f"groups {groups} must divide input channels {c_in} and "
                            f"out_c {o.out_c}")

        if kind in WINDOW_KINDS:
            r, s = kernel
            if pad[0] >= min(r, s) or pad[1] >= min(r, s):
                raise self.fail(where, f"pad {list(pad)} must be smaller than kernel "
                                f"{_kernel_text(kernel)}")
            ceil = bool(o.ceil_mode)
            oh = window_out_size(x.h, r, stride, pad, ceil)
            ow = window_out_size(x.w, s, stride, pad, ceil)
            if oh < 1 or ow < 1:
                raise self.fail(where, f"kernel {_kernel_text(kernel)} exceeds padded input "
                                f"{x.h + pad[0] + pad[1]}x{x.w + pad[0] + pad[1]}")
            if kind == OpKind.CONV:
                out = Shape(oh, ow, o.out_c)
            elif kind == OpKind.DW:
                if o.out_c is not None and o.out_c != x.c:
                    raise self.fail(where, f"out_c {o.out_c} of a dw conv must equal its input "
                                    f"channels {x.c} (depth multiplier 1)")
                groups = x.c
                out = Shape(oh, ow, x.c)
            else:
                out = Shape(oh, ow, x.c)
        elif kind == OpKind.FC:
            out = Shape(1, 1, o.out_c)
        elif kind == OpKind.ADD:
            for name, s in zip(inputs[1:], in_shapes[1:], strict=True):
                if s != x:
                    raise self.fail(where, f"add inputs disagree: {inputs[0]} is {x}, "
                                    f"{name} is {s} (add needs equal shapes)")
            out = x
        elif kind == OpKind.CONCAT:
            for name, s in zip(inputs[1:], in_shapes[1:], strict=True):
                if (s.h, s.w) != (x.h, x.w):
                    raise self.fail(where, f"concat inputs disagree: {inputs[0]} is {x}, "
                                    f"{name} is {s} (concat joins channels of equal HxW)")
            out = Shape(x.h, x.w, sum(s.c for s in in_shapes))
        elif kind == OpKind.FLATTEN:
            out = Shape(1, 1, x.elements)
        elif kind == OpKind.RESHAPE:
            out = _shape(o.shape)
            if out.elements != x.elements:
                raise self.fail(where, f"reshape to {out} ({out.elements} elements) from {x} "
                                f"({x.elements} elements); a reshape keeps the element count")
        else:  # relu, lrn, bn, softmax: shape-preserving
            out = x

        return Op(name=o.name, kind=kind, inputs=inputs, in_shape=x, out_shape=out,
                  layer=layer, starts_layer=starts, kernel=kernel, stride=stride, pad=pad,
                  ceil_mode=bool(o.ceil_mode) and kind in POOL_KINDS, groups=groups,
                  group_node=group_node, in_shapes=tuple(in_shapes), shape_override=override)


def _shape(s: ShapeSpec) -> Shape:
    return Shape(s.h, s.w, s.c)


def _kernel_text(kernel: tuple[int, int]) -> str:
    return str(kernel[0]) if kernel[0] == kernel[1] else f"{kernel[0]}x{kernel[1]}"
