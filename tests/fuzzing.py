"""The fuzzing harness: mutations of hetsim's input files and command lines, run through the CLI
in-process, each case classified.

A *case* is one ``hetsim ...`` command line and the files it reads, made by mutating what hetsim
ships: the platform, workload and mapping files (keys deleted, renamed, duplicated; values turned
negative, zero, NaN, infinite, huge, tiny, into strings, booleans, nested lists; strings emptied or
made unicode), the same files as bytes (truncated, re-encoded, bytes flipped, random bytes, alias
bombs, deep nesting, numbers of 100,000 digits) and the command lines of ``simulate``, ``explore``
and friends (every number out of range, odd paths and mapping strings). Each case ends in one
*outcome class*:

``error``
    exit 2 and exactly one stderr line ``hetsim: error: ...`` (besides ``hetsim: warning:`` and
    ``hetsim: note:`` lines): a clean refusal.
``result``
    exit 0, no numeric warning, and (for ``--json``) physical numbers: a finite positive
    throughput, finite non-negative latencies, makespan and energy.
``crash``
    any other exception (a traceback in a real run), exit code, or a stderr of several lines.
``hang``
    the case ran past its time budget: ``CASE_BUDGET_S`` of CPU time (user + system: SIGPROF
    interrupts it; CPU time, so that a machine loaded by others does not turn a run of a few
    seconds into a "hang"), or ``CASE_WALL_S`` of wall time (SIGALRM: a case blocked without
    spending CPU).
``silent``
    exit 0 although the mutation made the input non-physical (the mutation says so: a negative,
    NaN, infinite or huge number, a string or boolean where a number goes, a duplicate key, an
    unknown key, a zero where a rate or size goes...), or a result whose numbers are not physical
    (a null throughput, an overflow warning).

The test suite (tests/test_fuzz.py) runs a few hundred cases and fails on any crash, hang or
silent acceptance; ``make fuzz`` runs thousands. To count outcomes without stopping at the first
bad case (docs/robustness.md's tables)::

    python tests/fuzzing.py --cases 2000 --seed 0 [--json report.json] [--strict]

runs ``--cases`` cases of every target and prints the outcome table (``make fuzz`` does this with
2,000 per target, 12,000 in all, and ``--strict``: exit 1 on any bad case). Every random choice is
hypothesis's, seeded by ``--seed`` (same seed, same cases).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

#: Seconds a case may run before it counts as a hang. Every case the harness makes is small (an
#: AlexNet-sized workload, a few frames, a bounded exploration): seconds at most when it works.
CASE_BUDGET_S = 10.0
#: Wall seconds a case may take, whatever its CPU time (a case waiting on something that never comes).
CASE_WALL_S = 60.0
#: Address space a case may add (bytes): past it numpy's allocations fail with MemoryError (a
#: crash) instead of the kernel's OOM killer ending the whole run.
CASE_MEMORY_BYTES = 4 << 30

OUTCOMES = ("error", "result", "crash", "hang", "silent")
TARGETS = ("platform", "workload", "mapping", "cli", "bytes", "sweep")


# -- what is installed: a plugin left out (HETSIM_DISABLE_PLUGINS) or deleted takes its files, cost
# models, algorithms and the cases made of them along; the seeds are hetsim's files and the installed
# plugins' -------------------------------------------------------------------------------------------
def _data_files(kind: str) -> list[Path]:
    """The YAML files of ``kind`` (platforms, workloads, sweeps): hetsim's, then the plugins'."""
    from hetsim.plugins import folders

    return sorted((REPO / kind).glob("*.yaml")) + [p for d in folders(kind) for p in sorted(d.glob("*.yaml"))]


def _platforms() -> set[str]:
    from hetsim.platform import list_platforms

    return set(list_platforms())


def _cost_models() -> tuple[str, ...]:
    from hetsim.cost import cost_model_names

    return cost_model_names()


def _algorithms() -> set[str]:
    from hetsim.exploration.registry import algorithms

    return {a.name for a in algorithms()}


# -- cases ---------------------------------------------------------------------------------------
@dataclass
class Case:
    """One command line and the files it reads. ``{dir}`` in ``argv`` is the case's folder."""

    target: str
    what: str                                  # the mutation, one line
    argv: list[str]
    files: dict[str, bytes] = field(default_factory=dict)
    must_refuse: bool = False                  # the input is non-physical: exit 0 is a silent acceptance
    why: str = ""                              # why it must be refused

    def __repr__(self) -> str:     # what hypothesis prints for a failing example
        files = {k: (v[:200] + b"..." if len(v) > 200 else v) for k, v in self.files.items()}
        return (f"Case({self.target}: {self.what}; argv={self.argv!r}; files={files!r}; "
                f"must_refuse={self.must_refuse} {self.why})")


@dataclass
class Outcome:
    cls: str
    detail: str
    seconds: float


# -- YAML text of mutated trees ------------------------------------------------------------------
class Raw(str):
    """A scalar written as is (a number of 100,000 digits Python will not format)."""


class Pairs(list):
    """A mapping written with these (key, value) pairs, duplicates included."""


class _Dumper(yaml.SafeDumper):
    pass


_Dumper.add_representer(Raw, lambda d, v: d.represent_scalar("tag:yaml.org,2002:int", str(v)))
# Quote strings a YAML 1.2 reader takes for floats ('1e3'): the mutation means a string.
_Dumper.add_implicit_resolver("tag:yaml.org,2002:float",
                              re.compile(r"^[-+]?[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
                              list("-+0123456789"))
_Dumper.add_representer(Pairs, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", list(v)))


def dump(tree: Any) -> bytes:
    return yaml.dump(tree, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                     default_flow_style=None, width=4096).encode()


# -- seeds ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Seed:
    """A valid input and the command line that reads it (``{file}`` = where the case writes it)."""

    name: str
    filename: str
    text: str
    argv: tuple[str, ...]
    extra: tuple[tuple[str, bytes], ...] = ()


def _platform_mapping(data: dict) -> str:
    """Alexnet (11 layers) over the first two places of a platform (one if it has one)."""
    places = [c["name"] for c in data.get("clusters", [])] + [a["name"] for a in data.get("accelerators", [])]
    if len(places) >= 2:
        return f"{places[0]}:1-5|{places[1]}:6-11"
    return f"{places[0]}:1-11"


#: A PIM-paper placement of the generated BERT (what a ``runtime.cost_model: pim`` platform runs:
#: its model reads each op's Table 2 form from the ONNX graph): two MatMuls on the PIM unit and
#: CPU_P, the rest on CPU_S (pim-zynq's places).
_PIM_PLACEMENT = (b"placement: {encoder.layer.0.attention.query.MatMul: PIM, "
                  b"encoder.layer.0.attention.key.MatMul: CPU_P}\ndefault: CPU_S\n")


def platform_seeds() -> list[Seed]:
    """Every shipped platform, simulated as its runtime block says (its cost model, its DAG
    execution): AlexNet over its first two places, or, on a PIM-model platform, the generated
    BERT placed over its PIM unit and CPUs; platforms with a switched link also with ``--comm mpi``."""
    from hetsim.plugins import cost_model_specs

    seeds = []
    for path in _data_files("platforms"):
        text = path.read_text()
        data = yaml.safe_load(text)
        if (data.get("runtime") or {}).get("cost_model") == "pim":
            seeds.append(Seed(path.stem, "platform.yaml", text,
                              ("simulate", "-p", "{dir}/platform.yaml", "-w", "bert-small-p8", "-m",
                               "{dir}/pim.yaml", "--json", "--frames", "2"),
                              (("pim.yaml", _PIM_PLACEMENT),)))
            continue
        m = _platform_mapping(data)
        seeds.append(Seed(path.stem, "platform.yaml", text,
                          ("simulate", "-p", "{dir}/platform.yaml", "-w", "alexnet", "-m", m,
                           "--json", "--frames", "4")))
        for model, spec in cost_model_specs().items():   # the cost model of a block the platform fills
            if model not in ("roofline", "gemm2") and not spec.needs_workload and \
                    re.search(rf"^\s+{re.escape(model)}:", text, re.M):
                seeds.append(Seed(f"{path.stem}+{model}", "platform.yaml", text,
                                  ("simulate", "-p", "{dir}/platform.yaml", "-w", "alexnet", "-m", m,
                                   "--cost-model", model, "--json", "--frames", "2")))
        if any(lk.get("switched") for lk in data.get("links") or []):
            places = [c["name"] for c in data.get("clusters", [])]
            split = (f"placement: {{}}\ndefault: {places[0]}\n"
                     f"splits: {{conv1: {{{places[0]}: 0.5, {places[1]}: 0.5}}}}\n")
            seeds.append(Seed(path.stem + "+mpi", "platform.yaml", text,
                              ("simulate", "-p", "{dir}/platform.yaml", "-w", "alexnet", "-m",
                               "{dir}/split.yaml", "--comm", "mpi", "--json", "--frames", "2"),
                              (("split.yaml", split.encode()),)))
    return seeds


#: A workload of generic ops (an attention block's matmuls, as an import writes them).
GENERIC_WORKLOAD = """\
schema: 1
name: generic
input: {name: x, dims: [1, 16, 64], dtype: float32}
layer_kinds: [matmul]
ops:
  - {name: q, kind: matmul, op_type: MatMul, inputs: [x], dims: [1, 16, 64], gemm: [16, 64, 64], weight_bytes: 16384}
  - {name: k, kind: matmul, op_type: MatMul, inputs: [x], dims: [1, 16, 64], gemm: [16, 64, 64], weight_bytes: 16384}
  - {name: s, kind: matmul, op_type: MatMul, inputs: [q, k], dims: [1, 16, 16], gemm: [16, 64, 16]}
  - {name: p, kind: softmax, op_type: Softmax, inputs: [s], dims: [1, 16, 16], flops: 1280}
  - {name: o, kind: matmul, op_type: MatMul, inputs: [p, x], dims: [1, 16, 64], gemm: [16, 16, 64], macs: 16384}
"""

_PLACEMENT_B4 = b"placement: {}\ndefault: B4\n"


def workload_seeds() -> list[Seed]:
    texts = {p.stem: p.read_text() for p in _data_files("workloads")}
    texts["generic"] = GENERIC_WORKLOAD
    seeds = []
    for name, text in texts.items():
        # A placement of every op on B4 (any layer count), as a mapping file beside it.
        seeds.append(Seed(name, f"{name}.yaml", text,
                          ("simulate", "-p", "hikey970", "-w", f"{{dir}}/{name}.yaml", "-m",
                           "{dir}/b4.yaml", "--json", "--frames", "2"),
                          (("b4.yaml", _PLACEMENT_B4),)))
    return seeds


_MAPPINGS = {
    "pipeline": {"pipeline": "B4:1-35|s2:36-44|s2:45-54"},
    "stages": {"description": "Pipe-it's best", "stages": [
        {"ep": "B4", "layers": [1, 35]}, {"ep": "s2", "layers": [36, 44]}, {"ep": "s2", "layers": [45, 54]}]},
    "placement": {"placement": {"conv1": "B4", "logits": "s4"}, "default": "B4"},
    "split": {"placement": {}, "default": "B4", "splits": {"conv1": {"B4": 0.5, "s4": 0.5}}},
}


def mapping_seeds() -> list[Seed]:
    return [Seed(name, "mapping.yaml", yaml.safe_dump(tree, sort_keys=False),
                 ("simulate", "-p", "hikey970", "-w", "resnet50", "-m", "{dir}/mapping.yaml",
                  "--json", "--frames", "3"))
            for name, tree in _MAPPINGS.items()]


def sweep_seeds() -> list[Seed]:
    """The shipped sweep SPECs (hetsim's and the plugins': the tournament), validated and counted
    (``--dry-run``: no cell runs)."""
    return [Seed(p.stem, "spec.yaml", p.read_text(), ("sweep", "{dir}/spec.yaml", "--dry-run"))
            for p in _data_files("sweeps")]


def all_seeds() -> dict[str, list[Seed]]:
    return {"platform": platform_seeds(), "workload": workload_seeds(), "mapping": mapping_seeds(),
            "sweep": sweep_seeds()}


# -- the oracle for file mutations ------------------------------------------------------------------
#: Dicts whose keys are the user's names (presets, op names, op kinds), not schema fields: renaming
#: one of their keys is not an error in itself. Paths with "*" for any key or index.
FREE_FORM = {
    "platform": (("dvfs_presets",), ("dvfs_presets", "*"), ("core_types", "*", "roofline", "kind_GBps"),
                 ("core_types", "*", "roofline", "kind_overhead_us")),
    "workload": (),
    "mapping": (("placement",), ("order",), ("splits",), ("splits", "*")),
    "sweep": (("base", "set"), ("base", "params"), ("axes", "set"), ("axes", "run"), ("axes", "measurement"),
              ("axes", "params"), ("axes", "params", "*")),
}
#: Paths whose values a sweep validates per cell, when the cell runs (a --set value, a run option of
#: an axis): a --dry-run cannot refuse them, so the oracle judges only their structure there.
PER_CELL = {"sweep": (("base", "set"), ("base", "params"), ("axes", "set"), ("axes", "run"),
                      ("axes", "measurement"), ("axes", "params"), ("axes", "algorithm"))}
#: Fields whose value is a rate, a size, a count of hardware or a fraction of peak: zero is as
#: non-physical there as a negative value (a platform with 0 GB/s, a 0-wide kernel).
POSITIVE = frozenset({
    "bandwidth_GBps", "bandwidth_GBps_per_core", "freq_MHz", "macs_per_cycle", "peak_GMACps", "cores",
    "capacity_GiB", "l2_KiB", "gemm_efficiency", "dw_efficiency", "parallel_efficiency", "efficiency",
    "gemm_tile_rows", "gemm_tile_cols", "gemm_pack_GBps", "im2col_GBps", "gemv_GBps_per_core", "gemv_GBps",
    "knee_flows", "kind_GBps", "schema",
    "h", "w", "c", "out_c", "kernel", "stride", "groups", "dilation", "group", "gemm",
    "layers", "splits",
    "frames", "buffer_frames", "in_flight", "frames_per_trial", "max_trials", "max_clock_s",
    "target_fps", "max_cells", "depths", "space_limit",
    # the blocks of the PIM paper, the hybrid partitioning (ncnn) and HOPE
    "function_factor", "matmul_ns_per_mac", "parallel_speedup_elementwise", "parallel_speedup_matmul",
    "wire_bytes_per_element", "host_bytes_per_element", "winograd_efficiency", "winograd_tile",
    "winograd_min_channels", "copy_GBps", "layout_GBps",
})
HUGE_ABS = 1e30


def _matches(path: tuple, pattern: tuple) -> bool:
    return len(path) == len(pattern) and all(p == "*" or p == q for p, q in zip(pattern, path, strict=True))


def _free_form(target: str, path: tuple) -> bool:
    return any(_matches(path, pat) for pat in FREE_FORM[target])


def field_of(target: str, path: tuple) -> str:
    """The schema field a value at ``path`` belongs to: the last key whose dict is not free-form
    (a free-form dict's entries belong to the dict's own field: kind_GBps.lrn is kind_GBps)."""
    name = ""
    for i, part in enumerate(path):
        if isinstance(part, str) and not _free_form(target, path[:i]):
            name = part
    return name


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


# -- tree mutations --------------------------------------------------------------------------------
def paths(tree: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into ``tree`` (dict keys and list indices), the root excluded."""
    out = []
    if isinstance(tree, dict):
        items = list(tree.items())
    elif isinstance(tree, list):
        items = list(enumerate(tree))
    else:
        return out
    for k, v in items:
        out.append(prefix + (k,))
        out.extend(paths(v, prefix + (k,)))
    return out


def get(tree: Any, path: tuple) -> Any:
    for p in path:
        tree = tree[p]
    return tree


def _set(tree: Any, path: tuple, value: Any) -> None:
    get(tree, path[:-1])[path[-1]] = value


NUMBER_VALUES = {
    # kind -> (values, must the value be refused in any numeric field?)
    "negative": [-1, -0.5, -1e-300, -(2 ** 63), -1.7976931348623157e308, -0.0001],
    "zero": [0, 0.0],
    "nonfinite": [math.nan, math.inf, -math.inf],
    "huge": [1e30, 1e300, 1.7976931348623157e308, 2 ** 63, 2 ** 64 + 1, 10 ** 30,
             Raw("9" * 5000), Raw("7" * 100_000)],
    "tiny": [5e-324, 1e-300, 1e-30],
    "string": ["1e3", "3", "", "abc", "∞", "NaN", "0x10"],
    "bool": [True, False],
}


@st.composite
def tree_case(draw, target: str, seeds: list[Seed]) -> Case:
    """One mutation of a seed file's YAML tree."""
    seed = draw(st.sampled_from(seeds))
    tree = yaml.safe_load(seed.text)
    all_paths = paths(tree)
    path = draw(st.sampled_from(all_paths))
    parent = get(tree, path[:-1])
    old = get(tree, path)
    fld = field_of(target, path)
    in_free_form = _free_form(target, path[:-1])
    kinds = ["delete", "rename", "duplicate", "null", "wrap", "dict", "plausible"]
    if _is_number(old):
        kinds += ["negative", "zero", "nonfinite", "huge", "tiny", "string", "bool"] * 3
    elif isinstance(old, str):
        kinds += ["empty", "unicode", "long", "to_number", "to_bool"]
    elif isinstance(old, bool):
        kinds += ["to_number", "string_bool"]
    kind = draw(st.sampled_from(kinds))
    refuse, why = False, ""
    where = ".".join(str(p) for p in path)
    what = f"{seed.name}: {where}: {kind}"

    if kind in NUMBER_VALUES:
        value = draw(st.sampled_from(NUMBER_VALUES[kind]))
        _set(tree, path, value)
        what += f" {str(value)[:20]!r}"
        if kind in ("negative", "nonfinite", "huge", "string", "bool"):
            refuse, why = True, f"{kind} value in numeric field {fld}"
        elif kind == "zero" and fld in POSITIVE:
            refuse, why = True, f"zero in positive field {fld}"
    elif kind == "delete":
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    elif kind == "rename":
        if not isinstance(parent, dict):
            return draw(tree_case(target, seeds))
        new = draw(st.sampled_from(["x_" + str(path[-1]), str(path[-1]).upper() + "_", "näme", "", "1"]))
        if new in parent:
            new = new + "_"
        items = [(new if k == path[-1] else k, v) for k, v in parent.items()]
        parent.clear()
        parent.update(items)
        what += f" -> {new!r}"
        if not in_free_form:
            refuse, why = True, f"unknown key {new!r}"
    elif kind == "duplicate":
        if not isinstance(parent, dict):
            return draw(tree_case(target, seeds))
        dup = draw(st.sampled_from(["same", "other"]))
        value = old if dup == "same" else (_plausible(old) if _is_number(old) else old)
        pairs = Pairs(list(parent.items()) + [(path[-1], value)])
        if path[:-1]:
            _set(tree, path[:-1], pairs)
        else:
            tree = pairs
        refuse, why = True, "duplicate key"
    elif kind == "null":
        _set(tree, path, None)
    elif kind == "wrap":
        depth = draw(st.sampled_from([1, 2, 3, 10, 100]))
        value = old
        for _ in range(depth):
            value = [value]
        _set(tree, path, value)
        what += f" x{depth}"
        if depth >= 2:
            refuse, why = True, f"value wrapped in {depth} lists"
    elif kind == "dict":
        _set(tree, path, {"value": old})
        if not (isinstance(old, dict) and in_free_form):
            refuse, why = True, "value wrapped in a mapping"
    elif kind == "plausible":
        if not _is_number(old):
            return draw(tree_case(target, seeds))
        value = _plausible(old)
        _set(tree, path, value)
        what += f" {value!r}"
    elif kind == "empty":
        _set(tree, path, "")
    elif kind == "unicode":
        value = draw(st.sampled_from(["ℬ4", "名前", "\u202eevil", "a\u0000b", "😀", "e\u0301"]))
        _set(tree, path, value)
        what += f" {value!r}"
    elif kind == "long":
        _set(tree, path, old * 2000 if old else "x" * 100_000)
    elif kind == "to_number":
        _set(tree, path, draw(st.sampled_from([0, 1, 3.5, -1])))
        refuse, why = True, f"number where {fld} is a {type(old).__name__}"
    elif kind == "to_bool":
        _set(tree, path, True)
        refuse, why = True, f"boolean where {fld} is a string"
    elif kind == "string_bool":
        _set(tree, path, draw(st.sampled_from(["true", "yes", "1"])))
        refuse, why = True, f"string where {fld} is a boolean"
    if refuse and kind != "duplicate" and any(path[:len(p)] == p for p in PER_CELL.get(target, ())):
        refuse, why = False, ""   # validated when the cell runs, not by --dry-run
    files = {seed.filename: dump(tree), **dict(seed.extra)}
    return Case(target, what, list(seed.argv), files, refuse, why)


def _plausible(v: float) -> float:
    """A value in the field's ordinary range: half of it (integers stay integers)."""
    if isinstance(v, int):
        return max(1, v // 2)
    return v / 2


# -- byte mutations -----------------------------------------------------------------------------------
_ONNX = TESTS / "malformed" / "profiles" / "model.onnx"


def _alias_bomb(levels: int, width: int) -> str:
    lines = [f"b0: &b0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


@st.composite
def bytes_case(draw, seeds: dict[str, list[Seed]]) -> Case:
    """A seed file (or a small ONNX model) as bytes: truncated, re-encoded, flipped, replaced."""
    target = draw(st.sampled_from(["platform", "workload", "mapping", "validate", "onnx"]))
    if target == "onnx":
        data = _ONNX.read_bytes()
        argv = ["workloads", "import", "{dir}/model.onnx", "--out", "{dir}/w.yaml"]
        filename, extra = "model.onnx", {}
    else:
        seed = draw(st.sampled_from(seeds["platform" if target == "validate" else target]))
        data = seed.text.encode()
        argv = (["platforms", "validate", "{dir}/platform.yaml"] if target == "validate"
                else list(seed.argv))
        filename, extra = seed.filename, dict(seed.extra)
    kind = draw(st.sampled_from(["truncate", "random", "flip", "encoding", "empty", "nul", "bomb",
                                 "deep", "digits", "alias_ok", "tab"]))
    refuse, why, what = False, "", f"{target}: {kind}"
    if kind == "truncate":
        cut = draw(st.integers(0, max(0, len(data) - 1)))
        data = data[:cut]
        what += f" at {cut}"
    elif kind == "random":
        data = draw(st.binary(min_size=1, max_size=2048))
    elif kind == "flip":
        data = bytearray(data)
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] = draw(st.integers(0, 255))
        data = bytes(data)
    elif kind == "encoding":
        enc = draw(st.sampled_from(["utf-16", "utf-16-le", "utf-32", "latin-1", "utf-8-sig", "cp1252"]))
        text = data.decode("utf-8", errors="replace") if target != "onnx" else "é" + data.decode("latin-1")
        text = text.replace("description: ", "description: é ", 1)
        data = text.encode(enc, errors="replace")
        what += f" {enc}"
    elif kind == "empty":
        data = b""
    elif kind == "nul":
        i = draw(st.integers(0, len(data)))
        data = data[:i] + b"\x00" + data[i:]
    elif kind == "bomb":
        levels, width = draw(st.sampled_from([(9, 9), (12, 10), (6, 30), (30, 2)]))
        data = _alias_bomb(levels, width).encode() + data
        what += f" {width}^{levels}"
        refuse, why = True, "alias bomb"
    elif kind == "deep":
        depth = draw(st.sampled_from([100, 1000, 5000, 100_000]))
        data = data + f"\ndeep: {'[' * depth}1{']' * depth}\n".encode()
        what += f" {depth}"
        refuse, why = True, "unknown key deep"
    elif kind == "digits":
        n = draw(st.sampled_from([5000, 100_000, 1_000_000]))
        data = data.replace(b": 2\n", b": " + b"9" * n + b"\n", 1) if b": 2\n" in data else (
            data + b"\nbig: " + b"9" * n + b"\n")
        what += f" {n}"
        refuse, why = True, f"a number of {n} digits"
    elif kind == "alias_ok":
        # A small, legitimate use of an anchor: must not be refused for being an alias.
        data = b"# anchors are YAML\n" + data
    elif kind == "tab":
        data = data.replace(b"  ", b"\t", 1)
    if target == "onnx" and kind in ("bomb", "deep", "digits"):
        refuse = False   # not YAML: just bytes
    return Case("bytes", what, argv, {filename: data, **extra}, refuse, why)


# -- command-line mutations -----------------------------------------------------------------------------
#: Values no numeric option takes; "1_000" and " 3" are numbers to Python (and click) and may pass.
BAD_NUMBERS = ["-1", "nan", "inf", "-inf", "1e308", "1e400", str(2 ** 63), str(10 ** 30), "9" * 5000, "",
               "abc", "0x10"]
ODD_NUMBERS = ["1_000", " 3"]

_SET_PATHS = [
    ("memories.dram.bandwidth_GBps", "bandwidth_GBps"), ("clusters.big.cores", "cores"),
    ("core_types.cortex-a73.roofline.gemm_efficiency", "gemm_efficiency"),
    ("core_types.cortex-a73.macs_per_cycle", "macs_per_cycle"),
    ("core_types.cortex-a73.dvfs.max.freq_MHz", "freq_MHz"), ("links.cci.latency_ns", "latency_ns"),
    ("links.cci.bandwidth_GBps", "bandwidth_GBps"), ("power.static_W", "static_W"),
    ("core_types.cortex-a73.roofline.parallel_efficiency", "parallel_efficiency"),
]
_SET_VALUES = [
    # (text, must refuse in any numeric field, must refuse in a positive field)
    ("1e6", False, False), ("0.5", False, False), ("2", False, False), ("0", False, True),
    ("-1", True, True), (".inf", True, True), (".nan", True, True), ("1e308", True, True),
    ("'1e6'", True, True), ("true", True, True), ("[[[1]]]", True, True), ("{a: 1}", True, True),
    ("9" * 5000, True, True), ("&a [*a]", True, True), ("", False, False), ("1e-300", False, False),
    ("[1, 0.9]", False, False), ("null", False, False),
]


@st.composite
def cli_case(draw) -> Case:
    """A command line with one or more options out of their range (or in it)."""
    command = draw(st.sampled_from(["simulate", "simulate", "simulate", "explore", "explore",
                                    "set", "mapping", "other", "models", "models", "models"]))
    if command == "simulate":
        return draw(_simulate_case())
    if command == "explore":
        return draw(_explore_case())
    if command == "set":
        path, fld = draw(st.sampled_from(_SET_PATHS))
        text, bad, bad_positive = draw(st.sampled_from(_SET_VALUES))
        if fld == "parallel_efficiency" and text in ("[1, 0.9]",):
            bad = False
        elif fld == "parallel_efficiency" and text not in ("[[[1]]]", "{a: 1}", "&a [*a]", "'1e6'", "true", ""):
            pass
        refuse = bad or (bad_positive and fld in POSITIVE)
        if fld in ("gemm_efficiency", "parallel_efficiency") and text in ("1e6", "2"):
            refuse = True     # an efficiency above 1
        argv = ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-5|s4:6-11", "--json",
                "--frames", "3", "--set", f"{path}={text}"]
        return Case("cli", f"--set {path}={text[:20]}", argv, {}, refuse,
                    f"--set {fld}={text[:20]}" if refuse else "")
    if command == "models":
        return draw(_models_case())
    if command == "mapping":
        kind = draw(st.sampled_from(["long", "digits", "huge", "unicode", "empty", "pipes", "spaces",
                                     "valid"]))
        m = {"long": "|".join(f"B1:{i}-{i}" for i in range(1, draw(st.sampled_from([55, 500, 5000])))),
             "digits": "B4:1-" + "9" * draw(st.sampled_from([20, 5000, 100_000])),
             "huge": f"B4:1-{2 ** 63}", "unicode": "Ｂ4:1-54", "empty": "", "pipes": "|||",
             "spaces": "  B4 : 1 - 54  ", "valid": "B4:1-35|s2:36-44|s2:45-54"}[kind]
        return Case("cli", f"-m {kind}", ["simulate", "-p", "hikey970", "-w", "resnet50", "-m", m,
                                          "--json", "--frames", "3"])
    argv = draw(st.sampled_from([
        ["reproduce", "--list"], ["reproduce", "nosuchpaper"], ["reproduce", "shisha:nofig"],
        ["reproduce"], ["platforms", "show", "nosuch"], ["platforms", "show", "hikey970"],
        ["workloads", "show", "alexnet", "--json"], ["workloads", "show", "../../etc/passwd"],
        ["platforms", "validate", "{dir}/missing.yaml"], ["platforms", "validate", "{dir}"],
        ["workloads", "import", str(_ONNX), "--out", "{dir}/w.yaml", "--input-shape", "x=0x3x8x8"],
        ["workloads", "import", str(_ONNX), "--out", "{dir}/w.yaml", "--input-shape", "x=1x3x8x" + "9" * 30],
        ["workloads", "import", str(_ONNX), "--out", "{dir}/w.yaml", "--input-shape", "x=-1x3x8x8"],
        ["workloads", "import", str(_ONNX), "--out", "{dir}/w.yaml"],
        ["workloads", "import", str(_ONNX), "--out", ""],
        ["calibrate", "host", "--out", "{dir}/x.txt"],
        ["validate", "host", "-p", "hikey970", "-w", "alexnet", "--frames", "0"],
        ["validate", "host", "-p", "hikey970", "-w", "alexnet", "--repeats", "-1"],
        ["validate", "host", "-p", "hikey970", "-w", "alexnet", "--scale", "nan"],
        ["validate", "host", "-p", "hikey970", "-w", "alexnet", "--scale", "0"],
        ["profile", str(_ONNX), "--out", "{dir}/p", "--threads", "0"],
        ["profile", str(_ONNX), "--out", "{dir}/p", "--runs", "0"],
        ["profile", str(_ONNX), "--out", "{dir}/p", "--threads", "1,nan"],
    ]))
    refuse = any(v in " ".join(argv) for v in ("x=0x3", "x=-1", "--frames 0", "--repeats -1",
                                                  "--scale nan", "--scale 0", "--threads 0",
                                                  "--runs 0", "1,nan", "9" * 30))
    return Case("cli", " ".join(argv[:4]), argv, {}, refuse, "a number out of range" if refuse else "")


# -- the flags and blocks of the later papers: cost models by name, DAG execution, NSGA-II, PIM --
_XAVIER_SPLIT = b"placement: {}\ndefault: nx01-cpu\nsplits: {conv1: {nx01-cpu: 0.5, nx02-cpu: 0.5}}\n"
#: --set paths of the new platform blocks: (platform, path, field), of the installed platforms.
_MODEL_SET_PATHS = [row for row in [
    ("xavier-nx-x8", "core_types.carmel.ncnn.winograd_efficiency", "winograd_efficiency"),
    ("xavier-nx-x8", "core_types.carmel.ncnn.winograd_tile", "winograd_tile"),
    ("xavier-nx-x8", "core_types.carmel.ncnn.winograd_min_channels", "winograd_min_channels"),
    ("xavier-nx-x8", "core_types.carmel.ncnn.runtime_MiB", "runtime_MiB"),
    ("xavier-nx-x8", "core_types.carmel.ncnn.comm_W", "comm_W"),
    ("xavier-nx-x8", "links.eth.switched", "switched"),
    ("xavier-nx-x8", "runtime.comm", "comm"),
    ("xavier-nx-x8", "runtime.cost_model", "cost_model"),
    ("xavier-nx-x8", "runtime.serial", "serial"),
    ("hope-me", "core_types.kryo360-gold.hope.alpha_memory", "alpha_memory"),
    ("hope-me", "accelerators.gpu.hope.sync_us", "sync_us"),
    ("hope-me", "accelerators.gpu.hope.copy_GBps", "copy_GBps"),
    ("pim-zynq", "core_types.cortex-a53.pim.elementwise_ns", "elementwise_ns"),
    ("pim-zynq", "core_types.cortex-a53.pim.parallel_speedup_matmul", "parallel_speedup_matmul"),
    ("pim-zynq", "accelerators.PIM.pim.wire_bytes_per_element", "wire_bytes_per_element"),
    ("pim-zynq", "accelerators.PIM.pim.copy_setup_us", "copy_setup_us"),
] if row[0] in _platforms()]
#: Fields of those that are not numbers: (values they take, values that must be refused).
_MODEL_SET_WORDS = {
    "switched": (["true", "false", "1", "'yes'", "null"], {"1", "'yes'", "null"}),
    "serial": (["true", "false", "0", "'true'"], {"0", "'true'"}),
    "comm": (["mpi", "copy", "free", "consumer", "nosuch", "1", "''"], {"nosuch", "1", "''"}),
    "cost_model": (["roofline", "hope", "ncnn", "pim", "nosuch", "0"], {"nosuch", "0"}),   # and those not installed
}
#: Fields where 1 is the lower end (a speedup) or 2 (a Winograd tile): below it must be refused.
_AT_LEAST = {"parallel_speedup_matmul": 1.0, "winograd_tile": 2, "winograd_min_channels": 1}
_FRACTIONS = {"winograd_efficiency", "alpha_memory"}


def _model_run(platform: str) -> tuple[list[str], dict[str, bytes]]:
    """A simulate command line that reads ``platform``'s cost-model blocks."""
    if platform == "pim-zynq":
        return (["simulate", "-p", "pim-zynq", "-w", "bert-small-p8", "-m", "{dir}/pim.yaml", "--json",
                 "--frames", "2"], {"pim.yaml": _PIM_PLACEMENT})
    if platform == "hope-me":
        return (["simulate", "-p", "hope-me", "-w", "alexnet", "-m", "big:1-5|gpu:6-11", "--cost-model", "hope",
                 "--json", "--frames", "2"], {})
    return (["simulate", "-p", "xavier-nx-x8", "-w", "alexnet", "-m", "{dir}/split.yaml", "--cost-model", "ncnn",
             "--json", "--frames", "2"], {"split.yaml": _XAVIER_SPLIT})


#: Values of any algorithm parameter; the ones no parameter of any paper takes must be refused.
_PARAM_VALUES = ["-1", "0", "1", "0.5", ".nan", ".inf", "1e308", "true", "'x'", "[a, b]", "[[1]]", "{a: 1}", "null",
                 "1000000000", "1e-300"]
_PARAM_REFUSED = {".nan", ".inf", "1e308", "[[1]]", "{a: 1}"}
#: The problem each kind of algorithm explores: a pipeline of AlexNet on hikey970, a placement of
#: SqueezeNet on hope-me (HOPE's baselines) or of the generated BERT on pim-zynq (the PIM paper's),
#: a hybrid partition of AlexNet on xavier-nx-x8 (one generation of 4).
_PARAM_RUNS = {
    "pipeline": ["-p", "hikey970", "-w", "alexnet", "--max-trials", "4"],
    "hope": ["-p", "hope-me", "-w", "squeezenet"],
    "pim": ["-p", "pim-zynq", "-w", "bert-small-p8"],
    "hybrid": ["-p", "xavier-nx-x8", "-w", "alexnet-onnx", "--param", "n_gen=1", "--param", "pop_size=4"],
}


def _problem_run(algorithm: str) -> str:
    from hetsim.exploration.registry import get_algorithm

    a = get_algorithm(algorithm)
    if a.problem == "placement":
        return "pim" if "PIM" in a.paper else "hope"
    return a.problem if a.problem in _PARAM_RUNS else "pipeline"


def _algorithm_params() -> list[tuple[str, str]]:
    """(algorithm, parameter) of every registered algorithm whose problem's platform is installed
    (its fixed ones and the hybrid search's population sizes aside)."""
    from hetsim.exploration.registry import algorithms

    out = []
    for a in algorithms():
        if _PARAM_RUNS[_problem_run(a.name)][1] not in _platforms():
            continue
        fixed = dict(a.fixed)
        for key in a.parameters():
            if key not in fixed and not (a.problem == "hybrid" and key in ("pop_size", "n_gen")):
                out.append((a.name, key))
    return out


@st.composite
def _models_case(draw) -> Case:
    """``--cost-model``, ``--comm``, ``--no-caching``, the blocks of PIM/ncnn/HOPE through ``--set``,
    NSGA-II's and DUET's ``--param``, ``--export-autodice``/``--plan-out``, ``workloads export
    --seed``, ``sweep --workers/--batch`` and imports of the malformed ONNX corpus."""
    xavier = "xavier-nx-x8" in _platforms() and "NSGA-II" in _algorithms()
    available = {"set": bool(_MODEL_SET_PATHS), "flags": xavier, "nsga2": xavier, "export": xavier,
                 "pim": "pim-zynq" in _platforms() and "DUET" in _algorithms()}
    kind = draw(st.sampled_from([k for k in ["set", "set", "flags", "nsga2", "pim", "export", "sweep", "onnx",
                                             "param", "param"] if available.get(k, True)]))
    if kind == "param":
        algorithm, key = draw(st.sampled_from(_algorithm_params()))
        value = draw(st.sampled_from(_PARAM_VALUES))
        argv = ["explore", *_PARAM_RUNS[_problem_run(algorithm)], "-a", algorithm, "--param", f"{key}={value}",
                "--json"]
        refuse = value in _PARAM_REFUSED
        return Case("cli", f"{algorithm} --param {key}={value}", argv, {}, refuse,
                    f"--param {key}={value}" if refuse else "")
    if kind == "set":
        platform, path, fld = draw(st.sampled_from(_MODEL_SET_PATHS))
        argv, files = _model_run(platform)
        if fld in _MODEL_SET_WORDS:
            values, bad = _MODEL_SET_WORDS[fld]
            text = draw(st.sampled_from(values))
            refuse = text in bad or (fld == "cost_model" and text not in _cost_models())
        else:
            text, bad_any, bad_positive = draw(st.sampled_from(_SET_VALUES))
            refuse = bad_any or (bad_positive and (fld in POSITIVE or fld in _AT_LEAST))
            try:
                v = float(text)
            except ValueError:
                v = None
            if v is not None and fld in _AT_LEAST and v < _AT_LEAST[fld]:
                refuse = True
            if v is not None and fld in _FRACTIONS and v > 1:
                refuse = True
            if v is not None and fld == "winograd_tile" and not v.is_integer():
                refuse = True
            if text.startswith("[") and text != "[[[1]]]":
                refuse = True   # a list where one number goes
        argv += ["--set", f"{path}={text}"]
        return Case("cli", f"{platform} --set {path}={text[:20]}", argv, files, refuse,
                    f"--set {fld}={text[:20]}" if refuse else "")
    if kind == "flags":
        pipeline = draw(st.booleans())
        argv, files = (["simulate", "-p", "xavier-nx-x8", "-w", "alexnet", "-m", "nx01-cpu:1-5|nx02-cpu:6-11",
                        "--json", "--frames", "2"], {}) if pipeline else _model_run("xavier-nx-x8")
        argv = [a for a in argv]
        if "--cost-model" in argv:
            i = argv.index("--cost-model")
            del argv[i:i + 2]
        refuse, why = False, []
        model = draw(st.sampled_from(["", "roofline", "hope", "ncnn", "pim", "nosuch", "NCNN", "-"]))
        if model:
            argv += ["--cost-model", model]
            if model not in _cost_models():
                refuse = True
                why.append(f"--cost-model {model!r}")
        comm = draw(st.sampled_from([None, "free", "consumer", "copy", "mpi", "nosuch", ""]))
        if comm is not None:
            argv += ["--comm", comm]
            if comm not in ("free", "consumer", "copy", "mpi") or pipeline:
                refuse = True
                why.append(f"--comm {comm!r}" + (" with a pipeline" if pipeline else ""))
        if draw(st.booleans()):
            argv += ["--no-caching"]
            if pipeline:
                refuse = True
                why.append("--no-caching with a pipeline")
        return Case("cli", " ".join(argv[5:])[:80], argv, files, refuse, "; ".join(why))
    if kind == "nsga2":
        argv = ["explore", "-p", "xavier-nx-x8", "-w", "alexnet-onnx", "-a",
                draw(st.sampled_from(["NSGA-II", "NSGA-II-adv"])), "--json", "--param", "n_gen=1"]
        pop = draw(st.sampled_from(["4", "6", "0", "-1", "1e308", ".nan", "true", "'4'", str(2 ** 63), "[4]"]))
        argv += ["--param", f"pop_size={pop}"]
        refuse = pop not in ("4", "6")
        return Case("cli", f"NSGA-II pop_size={pop}", argv, {}, refuse, f"pop_size={pop}" if refuse else "")
    if kind == "pim":
        x = draw(st.sampled_from(["0", "0.25", "1", "-0.5", "2", ".nan", ".inf", "'0.5'", "true"]))
        argv = ["explore", "-p", "pim-zynq", "-w", "bert-small-p8", "-a", "DUET", "--param", f"x={x}", "--json"]
        refuse = x not in ("0", "0.25", "1")
        return Case("cli", f"DUET x={x}", argv, {}, refuse, f"x={x}" if refuse else "")
    if kind == "export":
        where = draw(st.sampled_from(["{dir}/ad", "{dir}/new/deep/ad", "", "{dir}/file.txt", "{dir}/file.txt/ad"]))
        plan = draw(st.sampled_from([None, "{dir}/plan.yaml", "", "{dir}"]))
        argv = ["explore", "-p", "xavier-nx-x8", "-w", "alexnet-onnx", "-a", "NSGA-II", "--json",
                "--param", "n_gen=1", "--param", "pop_size=4", "--export-autodice", where]
        refuse = where in ("", "{dir}/file.txt", "{dir}/file.txt/ad")
        if plan is not None:
            argv += ["--plan-out", plan]
            refuse = refuse or plan in ("", "{dir}")
        return Case("cli", f"--export-autodice {where!r} --plan-out {plan!r}", argv, {"file.txt": b"x\n"},
                    refuse, "an output path no file can have" if refuse else "")
    if kind == "sweep":
        spec = REPO / "sweeps" / "whatif-resnet50-hikey970.yaml"
        flag = draw(st.sampled_from(["--workers", "--batch"]))
        v = draw(st.sampled_from(["1", "2", "0", "-1", str(2 ** 63), "1e3", "nan"]))
        argv = ["sweep", str(spec), "--dry-run", flag, v]
        refuse = v not in ("1", "2")
        return Case("cli", f"sweep {flag} {v}", argv, {}, refuse, f"{flag} {v}" if refuse else "")
    # onnx: the malformed corpus, and workloads export's seed
    if draw(st.booleans()):
        model = draw(st.sampled_from(sorted((TESTS / "malformed" / "onnx").glob("*.onnx"))))
        return Case("cli", f"workloads import {model.name}",
                    ["workloads", "import", "{dir}/m.onnx", "--out", "{dir}/w.yaml"],
                    {"m.onnx": model.read_bytes()})
    seed = draw(st.sampled_from(["0", "7", "-1", str(2 ** 64), "nan"]))
    refuse = seed not in ("0", "7")
    return Case("cli", f"workloads export --seed {seed}",
                ["workloads", "export", "alexnet", "--out", "{dir}/a.onnx", "--seed", seed], {}, refuse,
                f"--seed {seed}" if refuse else "")


#: simulate options: flag -> (values, which values must be refused; "*" = all but the listed good ones)
_SIMULATE_OPTIONS: dict[str, tuple[list[str], set[str]]] = {
    "--frames": (["1", "3", "50", "0", "-1", "3.5", "10000000", "1000000000", str(2 ** 63), "1e3"] + BAD_NUMBERS + ODD_NUMBERS,
                 {"1", "3", "50", *ODD_NUMBERS}),
    "--noise": (["0", "0.05", "1", "5", "5.0001", "1e6", "1e-300"] + BAD_NUMBERS + ODD_NUMBERS,
                {"0", "0.05", "1", "5", "1e-300", *ODD_NUMBERS}),
    "--seed": (["0", "1", str(2 ** 31), str(2 ** 63 - 1), str(2 ** 64), "-1"] + BAD_NUMBERS + ODD_NUMBERS,
               {"0", "1", str(2 ** 31), str(2 ** 63 - 1), *ODD_NUMBERS}),
    "--buffer": (["1", "2", "10", "0", "100000", "1000000000"] + BAD_NUMBERS + ODD_NUMBERS,
                 {"1", "2", "10", "100000", *ODD_NUMBERS}),
    "--interval": (["0.01", "1", "0", "1e-300", "1e300"] + BAD_NUMBERS + ODD_NUMBERS,
                   {"0.01", "1", *ODD_NUMBERS}),
}


@st.composite
def _simulate_case(draw) -> Case:
    argv = ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-5|s4:6-11", "--json"]
    refuse, why = False, []
    options = draw(st.lists(st.sampled_from(sorted(_SIMULATE_OPTIONS)), min_size=1, max_size=3, unique=True))
    if "--frames" not in options:
        argv += ["--frames", "3"]
    chosen = {}
    for flag in options:
        values, good = _SIMULATE_OPTIONS[flag]
        v = draw(st.sampled_from(values))
        chosen[flag] = v
        argv += [flag, v]
        if flag == "--interval":
            argv += ["--source", draw(st.sampled_from(["periodic", "poisson"]))]
        if v not in good:
            refuse = True
            why.append(f"{flag} {v[:20]}")
    extra = draw(st.sampled_from(["", "engine", "contention", "trace", "gantt", "dvfs", "placement"]))
    if chosen.get("--frames") == "10000000" and extra in ("engine", "contention") and why == ["--frames 10000000"]:
        # 1e7 frames is in --frames' range and, on the analytic schedule or the max-plus
        # recurrence (0.05 and ~0.12 events per stage and frame), under the work limit: a result
        refuse, why = False, []
    if extra == "engine":
        argv += ["--engine", "analytic"]
        if chosen.get("--noise", "0") != "0":
            refuse = True    # noise the analytic engine would ignore is refused
            why.append("--noise with --engine analytic")
    elif extra == "contention":
        argv += ["--no-contention"]
    elif extra in ("trace", "gantt"):
        where = draw(st.sampled_from(["{dir}/out.json", "{dir}/new/dir/out.json", "", "{dir}"]))
        argv += [f"--{extra}", where]
        if where in ("", "{dir}"):
            refuse = True
            why.append(f"--{extra} {where!r}")
    elif extra == "dvfs":
        v = draw(st.sampled_from(["big=low", "big=", "=low", ",,", "nosuch", "big=low,little=mid"]))
        argv += ["--dvfs", v]
        if v in ("big=", "=low", ",,", "nosuch"):
            refuse = True
            why.append(f"--dvfs {v!r}")
    return Case("cli", " ".join(argv[8:])[:80], argv, {}, refuse, "; ".join(why))


_EXPLORE_OPTIONS: dict[str, tuple[list[str], set[str]]] = {
    "--max-trials": (["1", "5", "0", "-1", str(2 ** 63)] + BAD_NUMBERS + ODD_NUMBERS, {"1", "5", *ODD_NUMBERS}),
    "--max-clock": (["0.001", "1", "0", "1e300"] + BAD_NUMBERS + ODD_NUMBERS, {"0.001", "1", *ODD_NUMBERS}),
    "--target-fps": (["0.5", "1000", "0"] + BAD_NUMBERS + ODD_NUMBERS, {"0.5", "1000", *ODD_NUMBERS}),
    "--noise": (["0", "0.05", "6"] + BAD_NUMBERS + ODD_NUMBERS, {"0", "0.05", *ODD_NUMBERS}),
    "--seed": (["0", "7", "-1", str(2 ** 64)] + BAD_NUMBERS + ODD_NUMBERS, {"0", "7", *ODD_NUMBERS}),
    "--depth": (["1", "2", "0", "-1", "100", str(2 ** 63)] + BAD_NUMBERS + ODD_NUMBERS,
                {"1", "2", "100", *ODD_NUMBERS}),
}


@st.composite
def _explore_case(draw) -> Case:
    algorithm = draw(st.sampled_from([a for a in ["Shisha", "PS", "ES", "RW", "HC", "SA", "HC_s", "SA_s"]
                                      if a in _algorithms()] + ["nosuch"]))
    argv = ["explore", "-p", "hikey970", "-w", "alexnet", "-a", algorithm, "--json"]
    refuse, why = algorithm == "nosuch", ["unknown algorithm"] if algorithm == "nosuch" else []
    space = draw(st.sampled_from(["eps", "cores", "cores0", "cores9", "eps_bad"]))
    argv += {"eps": ["--eps", "B4,s4"], "cores": ["--cores", "4"], "cores0": ["--cores", "0"],
             "cores9": ["--cores", "9"], "eps_bad": ["--eps", ","]}[space]
    if space in ("cores0", "cores9", "eps_bad"):
        refuse = True
        why.append(space)
    options = draw(st.lists(st.sampled_from(sorted(_EXPLORE_OPTIONS)), max_size=3, unique=True))
    if "--max-trials" not in options:
        argv += ["--max-trials", "8"]
    for flag in options:
        values, good = _EXPLORE_OPTIONS[flag]
        v = draw(st.sampled_from(values))
        argv += [flag, v]
        if v not in good:
            refuse = True
            why.append(f"{flag} {v[:20]}")
    extra = draw(st.sampled_from(["", "trials", "trials_dir", "trials_empty", "param"]))
    if extra == "trials":
        argv += ["--trials", "{dir}/t.csv"]
    elif extra == "trials_dir":
        argv += ["--trials", "{dir}/new/dir/t.csv"]
    elif extra == "trials_empty":
        argv += ["--trials", ""]
        refuse = True
        why.append("--trials ''")
    elif extra == "param":
        p = draw(st.sampled_from(["alpha=-1", "alpha=nan", "alpha=1e308", "bogus=1", "=", "alpha"]))
        argv += ["--param", p]
        refuse = True
        why.append(f"--param {p}")
    return Case("cli", " ".join(argv[5:])[:80], argv, {}, refuse, "; ".join(why))


def strategy(target: str, seeds: dict[str, list[Seed]] | None = None):
    """The hypothesis strategy of ``target``'s cases."""
    seeds = seeds or all_seeds()
    if target in ("platform", "workload", "mapping", "sweep"):
        return tree_case(target, seeds[target])
    if target == "bytes":
        return bytes_case(seeds)
    if target == "cli":
        return cli_case()
    raise ValueError(f"unknown target {target!r}; allowed: {', '.join(TARGETS)}")


# -- running and classifying -------------------------------------------------------------------------
class Hang(BaseException):
    """Raised by SIGPROF or SIGALRM when a case passes its budget (a BaseException: no ``except Exception``
    in hetsim swallows it)."""


@contextlib.contextmanager
def _budget(seconds: float):
    """Raise :class:`Hang` past ``seconds`` of the process's CPU time or ``CASE_WALL_S`` (at least
    ``seconds``) of wall time."""
    def alarm(signum, frame):
        raise Hang()

    old_prof = signal.signal(signal.SIGPROF, alarm)
    old_alrm = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, max(CASE_WALL_S, seconds))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGPROF, old_prof)
        signal.signal(signal.SIGALRM, old_alrm)


@contextlib.contextmanager
def _memory_cap(extra_bytes: int):
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    try:
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
    except OSError:
        yield
        return
    cap = used + extra_bytes
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def _physical(obj: Any) -> str | None:
    """Why a ``simulate --json`` / ``explore --json`` output is not physical (None if it is)."""
    def finite(v: Any, low: float = 0.0, strict: bool = False) -> bool:
        return (_is_number(v) and math.isfinite(v) and (v > low if strict else v >= low))

    if not isinstance(obj, dict):
        return None
    if "throughput_fps" in obj:
        if not finite(obj["throughput_fps"], strict=True):
            return f"throughput_fps {obj['throughput_fps']!r}"
        for k, v in (obj.get("latency_s") or {}).items():
            if not finite(v):
                return f"latency_s.{k} {v!r}"
        if not finite(obj.get("makespan_s"), strict=True):
            return f"makespan_s {obj.get('makespan_s')!r}"
        if obj.get("energy_J") is not None and not finite(obj["energy_J"]):
            return f"energy_J {obj['energy_J']!r}"
        for s in obj.get("stages", []):
            if not finite(s.get("time_s")):
                return f"stage time_s {s.get('time_s')!r}"
    if "best_fps" in obj and not finite(obj["best_fps"], strict=True):
        # an exploration stopped before its first measured trial (a tiny --max-clock) has no best
        if not (obj["best_fps"] is None and obj.get("measured") == 0):
            return f"best_fps {obj['best_fps']!r}"
    return None


def run_case(case: Case, base: Path | None = None, budget_s: float = CASE_BUDGET_S) -> Outcome:
    """Run ``case`` in-process in a folder of its own and classify what happened."""
    from conftest import run_hetsim

    folder = Path(tempfile.mkdtemp(prefix="case-", dir=base))
    t0 = time.perf_counter()
    try:
        for name, data in case.files.items():
            (folder / name).write_bytes(data)
        argv = [a.replace("{dir}", str(folder)) for a in case.argv]
        with warnings.catch_warnings(record=True) as caught, _memory_cap(CASE_MEMORY_BYTES):
            warnings.simplefilter("always")
            try:
                with _budget(budget_s):
                    run = run_hetsim(*argv, cwd=folder)
            except Hang:
                return Outcome("hang", f"still running after {budget_s:g} s of CPU time (or "
                               f"{max(CASE_WALL_S, budget_s):g} s of wall time)", time.perf_counter() - t0)
            except BaseException as e:   # noqa: BLE001 - every escape is the crash we count
                tb = traceback.extract_tb(e.__traceback__)
                where = next((f"{Path(fr.filename).name}:{fr.lineno}" for fr in reversed(tb)
                              if "hetsim" in fr.filename), "?")
                return Outcome("crash", f"{type(e).__name__} at {where}: {str(e)[:160]}",
                               time.perf_counter() - t0)
        seconds = time.perf_counter() - t0
        # Warnings (a plausibility slip) and notes (what explore chose) are not errors: the error
        # must be the one line left.
        lines = [ln for ln in run.stderr.strip().splitlines()
                 if not ln.startswith(("hetsim: warning: ", "hetsim: note: "))]
        if run.returncode == 2:
            if argv[:2] == ["platforms", "validate"] and lines and all(
                    line.startswith(argv[2]) for line in lines) and "Traceback" not in run.stderr:
                # the validator lists every problem of the file, one line each, by design
                return Outcome("error", lines[0][:300], seconds)
            if len(lines) == 1 and lines[0].startswith("hetsim: error: ") and "Traceback" not in run.stderr:
                return Outcome("error", lines[0][len("hetsim: error: "):][:300], seconds)
            return Outcome("crash", f"exit 2 with {len(lines)} stderr lines: {run.stderr[:300]!r}", seconds)
        if run.returncode != 0:
            return Outcome("crash", f"exit {run.returncode}: {run.stderr[-300:]!r}", seconds)
        if case.must_refuse:
            return Outcome("silent", f"accepted: {case.why}", seconds)
        numeric = [w for w in caught if issubclass(w.category, RuntimeWarning)]
        if numeric:
            return Outcome("silent", f"a numeric warning: {numeric[0].message}", seconds)
        try:
            obj = json.loads(run.stdout) if run.stdout.lstrip().startswith("{") else None
        except ValueError:
            obj = None
        why = _physical(obj)
        if why:
            return Outcome("silent", f"non-physical result: {why}", seconds)
        return Outcome("result", "", seconds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def check(case: Case, base: Path | None = None) -> Outcome:
    """Run ``case``; fail (AssertionError) on a crash, hang or silent acceptance."""
    out = run_case(case, base)
    assert out.cls in ("error", "result"), f"{out.cls}: {out.detail}\n{case!r}"
    return out


# -- counting outcomes -------------------------------------------------------------------------------
def tally(cases_per_target: int, seed: int = 0, targets: tuple[str, ...] = TARGETS,
          log: Any = None) -> dict[str, Counter]:
    """Run ``cases_per_target`` cases of each target (hypothesis, seeded) and count outcomes by
    class; never stops at a bad case. ``log(target, case, outcome)`` sees every case."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    seeds = all_seeds()
    counts: dict[str, Counter] = {}
    base = Path(tempfile.mkdtemp(prefix="hetsim-fuzz-"))

    def runner(target: str, counter: Counter):
        @hseed(seed)
        @settings(max_examples=cases_per_target, database=None, deadline=None,
                  phases=[Phase.generate], suppress_health_check=list(HealthCheck))
        @given(case=strategy(target, seeds))
        def run(case: Case) -> None:
            out = run_case(case, base)
            counter[out.cls] += 1
            if log is not None:
                log(target, case, out)

        return run

    try:
        for target in targets:
            counts[target] = Counter()
            runner(target, counts[target])()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return counts


def table(counts: dict[str, Counter]) -> str:
    """The outcome table (markdown)."""
    lines = ["| target | cases | " + " | ".join(OUTCOMES) + " |", "|---|---:|" + "---:|" * len(OUTCOMES)]
    total: Counter = Counter()
    for target, c in counts.items():
        total.update(c)
        lines.append(f"| {target} | {sum(c.values())} | " + " | ".join(str(c[o]) for o in OUTCOMES) + " |")
    lines.append(f"| **all** | {sum(total.values())} | " + " | ".join(str(total[o]) for o in OUTCOMES) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Count hetsim's outcomes on fuzzed inputs.")
    ap.add_argument("--cases", type=int, default=200, help="cases per target")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--targets", default=",".join(TARGETS))
    ap.add_argument("--json", dest="json_out", default=None, help="write every bad case here")
    ap.add_argument("--strict", action="store_true", help="exit 1 if a case crashed, hung or was "
                    "silently accepted (make fuzz)")
    args = ap.parse_args(argv)
    bad: list[dict] = []
    t0 = time.time()

    def log(target: str, case: Case, out: Outcome) -> None:
        if out.cls not in ("error", "result"):
            bad.append({"target": target, "class": out.cls, "detail": out.detail, "what": case.what,
                        "argv": case.argv, "why": case.why})
            print(f"[{out.cls}] {target}: {case.what[:90]} -> {out.detail[:160]}", file=sys.stderr)

    counts = tally(args.cases, args.seed, tuple(args.targets.split(",")), log)
    print(table(counts))
    print(f"\n{sum(sum(c.values()) for c in counts.values())} cases in {time.time() - t0:.0f} s")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"counts": {t: dict(c) for t, c in counts.items()},
                                                   "bad": bad}, indent=1))
    if args.strict and bad:
        sys.exit(1)


if __name__ == "__main__":
    os.environ.setdefault("COLUMNS", "80")
    main()
