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
TARGETS = ("platform", "workload", "mapping", "cli", "bytes", "sweep",
           "ort", "onnx", "spec", "paths", "json", "load")


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


def _plugin(name: str) -> bool:
    """Whether the plugin ``name`` (a paper, the host tool) is loaded."""
    from hetsim.plugins import plugins

    return name in {p.name for p in plugins()}


#: The host tool's recorded measurements (calibrate host --from), when the host plugin is there.
_HOST_MEASUREMENTS = REPO / "hetsim_host" / "tests" / "data" / "quick.measurements.json"


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
    #: files that are not regular files, made in the case's folder: name -> "fifo", "chardev" (a
    #: copy of /dev/null's device: root only, else a FIFO), "dir", or "link:<target>" (a symlink)
    specials: dict[str, str] = field(default_factory=dict)
    #: where the case may write (paths relative to its folder, prefixes); None: anywhere in it.
    #: A file that appears elsewhere in the folder (or a special file replaced) is "unsafe": counted
    #: as a crash (a write outside the named output, or over a device)
    writes_under: tuple[str, ...] | None = None
    #: the loading limit (hetsim.loading.MAX_LOAD_S) the case runs under (the "load" target)
    load_limit_s: float | None = None

    def __repr__(self) -> str:     # what hypothesis prints for a failing example
        files = {k: (v[:200] + b"..." if len(v) > 200 else v) for k, v in self.files.items()}
        return (f"Case({self.target}: {self.what}; argv={self.argv!r}; files={files!r}; "
                f"specials={self.specials!r}; must_refuse={self.must_refuse} {self.why})")


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
FREE_FORM["spec"] = FREE_FORM["sweep"]
#: Paths whose values a sweep validates per cell, when the cell runs (a --set value, a run option of
#: an axis): a --dry-run cannot refuse them, so the oracle judges only their structure there.
PER_CELL = {"sweep": (("base", "set"), ("base", "params"), ("axes", "set"), ("axes", "run"),
                      ("axes", "measurement"), ("axes", "params"), ("axes", "algorithm"))}
#: A sweep that runs: a cell refuses its bad values itself (its row says why, the sweep exits 0).
PER_CELL["spec"] = PER_CELL["sweep"] + (("base",),)
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
        ["profile", str(_ONNX), "--out", "{dir}/p", "--threads", "0"],
        ["profile", str(_ONNX), "--out", "{dir}/p", "--runs", "0"],
        ["profile", str(_ONNX), "--out", "{dir}/p", "--threads", "1,nan"],
    ]))
    refuse = any(v in " ".join(argv) for v in ("x=0x3", "x=-1", "--threads 0", "--runs 0", "1,nan", "9" * 30))
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


# -- ONNX Runtime profiles ---------------------------------------------------------------------------
_CPU = "CPUExecutionProvider"


def _ort_node(name: str, op: str, dur: int, ts: int) -> dict:
    return {"cat": "Node", "pid": 1, "tid": 1, "dur": dur, "ts": ts, "ph": "X", "name": f"{name}_kernel_time",
            "args": {"op_name": op, "provider": _CPU, "node_index": "0", "activation_size": "768",
                     "parameter_size": "448", "output_size": "1024", "input_type_shape": [{"float": [1, 3, 8, 8]}],
                     "output_type_shape": [{"float": [1, 4, 8, 8]}]}}


def ort_profile(runs: int = 3) -> list[dict]:
    """A profile of the corpus's tiny model (tests/malformed/profiles/model.onnx: conv, relu) in
    ONNX Runtime's format: ``runs`` model_run events, each holding its two node events."""
    events: list[dict] = [{"cat": "Session", "name": "session_initialization", "ph": "X", "ts": 0, "dur": 5}]
    ts = 10
    for _ in range(runs):
        start = ts
        for name, op, dur in (("conv", "Conv", 50), ("relu", "Relu", 20)):
            events.append(_ort_node(name, op, dur, ts))
            ts += dur + 1
        events.append({"cat": "Session", "name": "model_run", "ph": "X", "ts": start, "dur": ts - start + 2})
        ts += 10
    return events


#: Fields of a profile's events hetsim reads as numbers (a non-physical value there must be refused).
_ORT_NUMBERS = {"dur", "ts", "activation_size", "parameter_size", "output_size"}
#: JSON texts no JSON reader of hetsim takes: Python's NaN and infinities, a number that overflows.
_JSON_NONFINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e999"]


def _raw_json(tree: Any, path: tuple, raw: str) -> bytes:
    """``tree`` as JSON with the value at ``path`` replaced by the text ``raw`` (NaN, 1e400...)."""
    marker = "\\u0000RAW\\u0000"
    _set(tree, path, marker)
    return json.dumps(tree).replace(json.dumps(marker), raw).encode()


@st.composite
def ort_case(draw) -> Case:
    """A mutation of an ONNX Runtime profile: a number of an event non-physical (negative, NaN,
    infinite, huge, a string, a boolean, null, a list), a key deleted or given twice, an event
    turned into something else, the runs' order; imported with or without the model."""
    events = ort_profile(draw(st.sampled_from([1, 3])))
    all_paths = [p for p in paths(events) if len(p) >= 2]
    path = draw(st.sampled_from(all_paths))
    key = path[-1]
    old = get(events, path)
    read = isinstance(key, str) and key in _ORT_NUMBERS and get(events, path[:1]).get("cat") in ("Node", "Session") \
        and (get(events, path[:1]).get("cat") == "Node" or get(events, path[:1]).get("name") == "model_run")
    kind = draw(st.sampled_from(["negative", "nonfinite", "huge", "string", "bool", "null", "list", "delete",
                                 "duplicate", "zero", "plausible", "dict", "deep"]))
    refuse, why, what = False, "", f"{'.'.join(map(str, path))}: {kind}"
    data: bytes
    if kind == "nonfinite":
        raw = draw(st.sampled_from(_JSON_NONFINITE))
        data = _raw_json(events, path, raw)
        refuse, why = True, f"{raw} in a JSON file"
        what += f" {raw}"
    elif kind == "duplicate" and isinstance(get(events, path[:-1]), dict):
        parent = get(events, path[:-1])
        text = json.dumps(parent)
        dup = text[:-1] + f", {json.dumps(key)}: {json.dumps(old)}}}"
        data = _raw_json(events, path[:-1], dup)
        refuse, why = True, "duplicate key"
    elif kind == "deep":
        depth = draw(st.sampled_from([100, 10_000, 100_000]))
        data = _raw_json(events, path, "[" * depth + "]" * depth)
        refuse = read or depth > 900
        why = f"nesting {depth} deep" + (f" where {key} goes" if read else "")
    else:
        if kind == "delete":
            parent = get(events, path[:-1])
            if isinstance(parent, dict):
                del parent[key]
            else:
                parent.pop(key)
            refuse = read and key in ("dur",) or (key == "op_name")
            why = f"{key} deleted"
        else:
            value = {"negative": -5, "huge": 1e300, "string": "abc", "bool": True, "null": None, "list": [old],
                     "zero": 0, "plausible": _plausible(old) if _is_number(old) else old,
                     "dict": {"value": old}}.get(kind, old)
            if kind == "string" and isinstance(old, str) and old.isdigit():
                value = "-" + old   # a size written as a string: make it a negative one
            _set(events, path, value)
            what += f" {str(value)[:20]!r}"
            if read and kind in ("negative", "huge", "string", "bool", "list", "dict"):
                refuse, why = True, f"{kind} {key}"
            if read and kind == "null" and key in ("dur", "ts"):
                refuse, why = True, f"null {key}"
        data = json.dumps(events).encode()
    files = {"p.json": data}
    argv = ["costs", "import-ort", "--profile", "C1={dir}/p.json", "--out", "{dir}/out"]
    if draw(st.booleans()):
        files["m.onnx"] = _ONNX.read_bytes()
        argv += ["--model", "{dir}/m.onnx"]
    return Case("ort", what, argv, files, refuse, why, writes_under=("out",))


# -- ONNX graphs ------------------------------------------------------------------------------------
def _onnx_model():
    import onnx

    return onnx.load_model_from_string(_ONNX.read_bytes())


@st.composite
def onnx_case(draw) -> Case:
    """A mutation of a small ONNX graph (conv, relu) at the protobuf level: two nodes writing one
    tensor (not SSA), a cycle, a dangling input, odd dims and attributes, unknown op types, odd
    names; imported with ``workloads import``."""
    from onnx import AttributeProto, helper

    m = _onnx_model()
    g = m.graph
    kind = draw(st.sampled_from(["ssa", "ssa_input", "cycle", "dangling", "dim", "attr", "op_type", "names",
                                 "no_output", "opset", "initializer", "dup_node_name", "extra_node"]))
    refuse, why, what = False, "", kind
    if kind == "ssa":            # another node writes the conv's output tensor too (the graph still complete)
        g.node.append(helper.make_node("Sigmoid", [g.input[0].name], [g.node[0].output[0]], name="again"))
        refuse, why = True, "two nodes write one tensor"
    elif kind == "ssa_input":    # a node writes the graph's input
        g.node[1].output[0] = g.input[0].name
        refuse, why = True, "a node writes the graph input"
    elif kind == "cycle":        # the conv reads the relu's output
        g.node[0].input[0] = g.node[1].output[0]
        refuse, why = True, "a cycle"
    elif kind == "dangling":
        g.node[1].input[0] = "nowhere"
    elif kind == "dim":
        v = draw(st.sampled_from([0, -1, 2 ** 31, 2 ** 62, 1]))
        g.input[0].type.tensor_type.shape.dim[draw(st.integers(0, 3))].dim_value = v
        what += f" {v}"
    elif kind == "attr":
        attr = draw(st.sampled_from(["kernel_shape", "strides", "pads", "group", "dilations"]))
        v = draw(st.sampled_from([[0, 0], [-1, -1], [2 ** 40, 2 ** 40], [1], []]))
        node = g.node[0]
        keep = [a for a in node.attribute if a.name != attr]
        del node.attribute[:]
        node.attribute.extend(keep)
        if attr == "group":
            node.attribute.append(helper.make_attribute(attr, v[0] if v else 0))
        else:
            node.attribute.append(helper.make_attribute(attr, v, attr_type=AttributeProto.INTS))
        what += f" {attr}={v}"
    elif kind == "op_type":
        g.node[draw(st.integers(0, 1))].op_type = draw(st.sampled_from(["Nope", "", "conv", "Conv2D"]))
    elif kind == "names":
        g.node[draw(st.integers(0, 1))].name = draw(st.sampled_from(["", "a/b", "../x", "ℬ", "x" * 10_000, "\u202e"]))
    elif kind == "no_output":
        del g.output[:]
    elif kind == "opset":
        m.opset_import[0].version = draw(st.sampled_from([1, 999, 0]))
    elif kind == "initializer":
        if g.initializer:
            g.initializer[0].dims[0] = draw(st.sampled_from([0, 2 ** 40, 7]))
    elif kind == "dup_node_name":
        g.node[1].name = g.node[0].name
    elif kind == "extra_node":
        g.node.append(helper.make_node("Relu", [g.node[1].output[0]], ["extra"], name="extra"))
    return Case("onnx", what, ["workloads", "import", "{dir}/m.onnx", "--out", "{dir}/out/w.yaml"],
                {"m.onnx": m.SerializeToString()}, refuse, why, writes_under=("out",))


# -- sweep SPECs, run ------------------------------------------------------------------------------------
SPEC_SEED = {
    "schema": 1, "name": "fuzz", "max_cells": 8,
    "base": {"platform": "hikey970", "workload": "alexnet", "mapping": "B4:1-5|s4:6-11", "engine": "analytic",
             "frames": 2},
    "axes": {"set": {"memories.dram.bandwidth_GBps": {"geomspace": [4, 16, 2]}}, "seed": [0, 1]},
}
#: Generators whose finite ends overflow a float64 in between (b - a, b / a): every value a cell
#: gets must still be finite (a journal line is JSON).
_AXIS_OVERFLOW = [
    {"geomspace": [1e-300, 1e300, 3]}, {"geomspace": [5e-324, 1.7976931348623157e308, 2]},
    {"geomspace": [-1e-300, -1e300, 2]}, {"linspace": [-1.7976931348623157e308, 1.7976931348623157e308, 3]},
    {"linspace": [1e308, -1e308, 2]}, {"range": [-1e308, 1e308, 1e303]}, {"range": [1.7e308, 1.79e308, 1e306]},
    {"geomspace": [1e-320, 1e-310, 2]}, {"linspace": [0, 1e-320, 2]},
]


@st.composite
def spec_case(draw) -> Case:
    """A small SPEC run for real (``sweep --out -j 1 --no-plots``): its YAML tree mutated as the
    other trees, or an axis replaced by a generator whose ends overflow a float64 in between. A
    cell's bad value is refused by the cell (its row says why), never by a crash; the journal and
    the table stay readable."""
    seed = Seed("fuzz", "spec.yaml", yaml.safe_dump(SPEC_SEED, sort_keys=False),
                ("sweep", "{dir}/spec.yaml", "--out", "{dir}/out", "-j", "1", "--no-plots"))
    if draw(st.booleans()):
        tree = json.loads(json.dumps(SPEC_SEED))
        where = draw(st.sampled_from(["set", "seed", "run"]))
        gen = draw(st.sampled_from(_AXIS_OVERFLOW))
        if where == "set":
            tree["axes"]["set"]["memories.dram.bandwidth_GBps"] = gen
        elif where == "seed":
            tree["axes"]["seed"] = gen
        else:
            tree["axes"]["run"] = {"interval_s": gen}
        case = Case("spec", f"axes.{where}: {gen}", list(seed.argv), {"spec.yaml": dump(tree)})
    else:
        case = draw(tree_case("spec", [seed]))
    case.target = "spec"
    case.writes_under = ("out",)
    return case


# -- output paths, special files, names ---------------------------------------------------------------
#: Commands with an output path: (name, argv with {out}, kind of output: file or dir, fast enough).
_OUTPUT_COMMANDS = [
    ("trace", ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-11", "--frames", "2", "--trace", "{out}"], "file"),
    ("gantt", ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-11", "--frames", "2", "--gantt", "{out}"], "file"),
    ("trials", ["explore", "-p", "hikey970", "-w", "alexnet", "-a", "RW", "--eps", "B4,s4", "--max-trials", "2",
                "--trials", "{out}"], "file"),
    ("csv", ["costs", "show", "-p", "hikey970", "-w", "alexnet", "--ep", "B4", "--csv", "{out}"], "file"),
    ("schema", ["platforms", "schema", "--out", "{out}"], "file"),
    ("export", ["workloads", "export", "squeezenet", "--out", "{out}.onnx"], "file"),
    ("import", ["workloads", "import", "{dir}/m.onnx", "--out", "{out}"], "file.yaml"),
    ("import-dir", ["workloads", "import", "{dir}/m.onnx", "--out", "{out}"], "dir"),
    ("ort", ["costs", "import-ort", "--profile", "C1={dir}/p.json", "--out", "{out}"], "dir"),
    ("sweep", ["sweep", "{dir}/spec.yaml", "--out", "{out}", "-j", "1", "--no-plots"], "dir"),
    ("calibrate", ["calibrate", "host", "--from", str(_HOST_MEASUREMENTS), "--out",
                   "{out}.yaml"], "file"),
]
#: Names that become file names (``--name``): every one but the plain ones must be refused before
#: any work, and nothing may be written outside the output folder.
_NAMES = ["ok-name", "Ok.v2", "../x", "../../x", "{dir}/abs", ".", "..", ".hidden", "a/b", "a\\b", "", "x" * 300,
          "tab\tname", "é"]
_NAME_COMMANDS = [
    ["costs", "import-ort", "--profile", "C1={dir}/p.json", "--out", "{dir}/a/b/out", "--name", "{name}"],
    ["workloads", "import", "{dir}/m.onnx", "--out", "{dir}/a/b/out", "--name", "{name}"],
    ["calibrate", "host", "--from", str(_HOST_MEASUREMENTS), "--out",
     "{dir}/a/b/out/h.yaml", "--name", "{name}"],
]
#: Inputs that may be a special file: (argv with {in}, the file's name).
_INPUT_COMMANDS = [
    ["simulate", "-p", "{in}", "-w", "alexnet", "-m", "B4:1-11", "--frames", "2"],
    ["simulate", "-p", "hikey970", "-w", "{in}", "-m", "B4:1-11", "--frames", "2"],
    ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "{in}", "--frames", "2"],
    ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-11", "--frames", "2", "--cost-table", "{in}"],
    ["sweep", "{in}", "--dry-run"],
    ["workloads", "import", "{in}", "--out", "{dir}/w.yaml"],
    ["costs", "import-ort", "--profile", "C1={in}", "--out", "{dir}/o"],
    ["calibrate", "host", "--from", "{in}", "--out", "{dir}/h.yaml"],
    ["platforms", "validate", "{in}"],
]


def _support_files() -> dict[str, bytes]:
    spec = dict(SPEC_SEED, axes={"seed": [0]})
    return {"m.onnx": _ONNX.read_bytes(), "p.json": json.dumps(ort_profile()).encode(),
            "spec.yaml": dump(spec)}


@st.composite
def paths_case(draw) -> Case:
    """Where outputs go and what inputs are: an output path that is a FIFO, a device, a link to one,
    a folder, under a file, empty, 250 bytes long, unicode, or a plain new or existing file; a name
    that becomes a file name (``--name ../../x``); an input that is a FIFO, a device, a folder or a
    link to one. A special file must be refused and left as it was; nothing may be written outside
    the output named; an input that never ends must not be read."""
    kind = draw(st.sampled_from(["output", "output", "name", "input"]))
    files = _support_files()
    if kind == "name":
        name = draw(st.sampled_from(_NAMES))
        argv = [a.replace("{name}", name) for a in draw(st.sampled_from([c for c in _NAME_COMMANDS if c[0] != "calibrate" or _plugin("host")]))]
        strict = argv[0] == "calibrate"   # a platform's name; the others are workloads' names
        ok = name in ("ok-name", "Ok.v2") or (name == "é" and not strict)
        return Case("paths", f"--name {name[:30]!r} ({argv[0]} {argv[1]})", argv, files, not ok,
                    f"--name {name[:30]!r}", writes_under=("a/b/out",))
    if kind == "input":
        special = draw(st.sampled_from(["fifo", "chardev", "dir", "link:{dir}/f", "link:/dev/zero"]))
        argv = draw(st.sampled_from(_INPUT_COMMANDS))
        name = "in.yaml" if "costs" not in argv else "in.json"
        specials = {name: special}
        if special == "link:{dir}/f":
            specials = {"f": "fifo", name: special}
        argv = [a.replace("{in}", "{dir}/" + name) for a in argv]
        return Case("paths", f"input {special} ({' '.join(argv[:2])})", argv, files, True,
                    f"an input that is {special}", specials=specials, writes_under=())
    name_kind = draw(st.sampled_from(["fifo", "chardev", "link-fifo", "link-chardev", "dir", "under-file", "empty",
                                      "long", "unicode", "new", "existing", "deep-new"]))
    cmd, argv, out_kind = draw(st.sampled_from([c for c in _OUTPUT_COMMANDS if c[0] != "calibrate" or _plugin("host")]))
    base = {"fifo": "t", "chardev": "t", "link-fifo": "t", "link-chardev": "t", "dir": "t", "under-file": "f/t",
            "empty": "", "long": "t" * 240, "unicode": "ℬé😀", "new": "t", "existing": "t",
            "deep-new": "a/b/c/t"}[name_kind]
    suffix = ".yaml" if out_kind == "file.yaml" else ""
    specials: dict[str, str] = {}
    rel = base + suffix if base else ""
    # the file a "{out}.onnx" / "{out}.yaml" command writes
    target = rel + (".onnx" if "{out}.onnx" in argv else ".yaml" if "{out}.yaml" in argv else "")
    if name_kind in ("fifo", "chardev"):
        specials[target] = name_kind
    elif name_kind.startswith("link-"):
        specials["real"] = name_kind[5:]
        specials[target] = "link:{dir}/real"
    elif name_kind == "dir" and out_kind != "dir":
        specials[target] = "dir"
    elif name_kind == "under-file":
        files["f"] = b"a file\n"
    elif name_kind == "existing" and out_kind != "dir":
        files[target] = b"old\n"
    out = "{dir}/" + rel if rel else ""
    argv = [a.replace("{out}", out) for a in argv]
    if out_kind == "dir":
        # a folder output: a special file, a file or an empty name there is refused
        refuse = name_kind in ("fifo", "chardev", "link-fifo", "link-chardev", "under-file", "empty")
    else:
        refuse = name_kind in ("fifo", "chardev", "link-fifo", "link-chardev", "dir", "under-file", "empty")
    if name_kind == "empty" and "{out}." in " ".join(_OUTPUT_COMMANDS[[c for c, *_ in _OUTPUT_COMMANDS].index(cmd)][1]):
        refuse = True   # ".onnx" / ".yaml" alone: a hidden file, but refused as no name is no result either
    # what the command may write: the output named (its first folder for a deep path), with the suffix
    # the command adds ("{out}.onnx", "{out}.yaml")
    where = (target.split("/")[0] if target else "",) if not name_kind.startswith("link-") else (target, "real")
    if cmd == "calibrate" and rel:   # the raw measurements go beside the platform file
        where += (f"{rel}.measurements.json",)
    allowed = tuple(w for w in where if w) or None
    return Case("paths", f"{cmd} -> {name_kind}", argv, files, refuse, f"{name_kind} as {cmd}'s output",
                specials=specials, writes_under=allowed)


# -- JSON readers ---------------------------------------------------------------------------------------
@st.composite
def json_case(draw) -> Case:
    """Every JSON reader (ONNX Runtime profiles, calibrate host --from, NSGA-II's coefficients, a
    sweep's journal on --resume) given NaN, an infinity, a number that overflows, a duplicate key,
    nesting 100,000 deep, a number of 5,000 digits, or other encodings: refused in one line."""
    reader = draw(st.sampled_from(["profile", "journal", *(["measurements"] if _plugin("host") else []),
                                   *(["coefficients"] if _plugin("nsga2") else [])]))
    injection = draw(st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "dup", "deep", "digits",
                                      "utf16", "bom", "plain"]))
    measurements = json.loads(_HOST_MEASUREMENTS.read_text()) if reader == "measurements" else None
    if reader == "profile":
        tree: Any = ort_profile()
        path = (1, "dur")
        argv = ["costs", "import-ort", "--profile", "C1={dir}/f.json", "--out", "{dir}/out"]
    elif reader == "measurements":
        tree = measurements
        path = ("measurements", "gemm", 0, "time_s")
        argv = ["calibrate", "host", "--from", "{dir}/f.json", "--out", "{dir}/out/h.yaml"]
    elif reader == "coefficients":
        from hetsim_papers.nsga2.cost import Coefficients  # noqa: F401 - the plugin is installed
        tree = None
        path = ()
        argv = ["explore", "-p", "xavier-nx-x8", "-w", "alexnet-onnx", "-a", "NSGA-II", "--json", "--param",
                "n_gen=1", "--param", "pop_size=4", "--param", "coefficients={dir}/f.json"]
    else:
        tree = None
        path = ()
        argv = ["sweep", "{dir}/spec.yaml", "--out", "{dir}/out", "-j", "1", "--no-plots", "--resume"]
    refuse = injection not in ("bom", "plain", "utf16") or reader == "coefficients" and injection == "plain"
    if reader == "coefficients":
        text = '{"network": "alexnet", "units": {"cpu": {"x": NaN}}}'
        base = json.loads(text.replace("NaN", "1"))
        tree, path = base, ("units", "cpu", "x")
    if reader == "journal":
        record = {"id": "0" * 16, "cell": 0, "axes": {"seed": 0}, "status": "ok", "error": None,
                  "metrics": {"throughput_fps": 1.0}, "seconds": 0.1}
        tree, path = record, ("metrics", "throughput_fps")
    if injection in ("NaN", "Infinity", "-Infinity", "1e400", "deep", "digits"):
        raw = {"deep": "[" * 100_000 + "]" * 100_000, "digits": "9" * 5000}.get(injection, injection)
        data = _raw_json(tree, path, raw)
    elif injection == "dup":
        parent = get(tree, path[:-1])
        dup = json.dumps(parent)[:-1] + f", {json.dumps(path[-1])}: 1}}"
        data = _raw_json(tree, path[:-1], dup)
    else:
        data = json.dumps(tree).encode()
        if injection == "utf16":
            data = json.dumps(tree).encode("utf-16")
        elif injection == "bom":
            data = b"\xef\xbb\xbf" + data
    files = {"f.json": data}
    if reader == "journal":
        files = {"spec.yaml": _support_files()["spec.yaml"], "out/cells.jsonl": data + b"\n"}
    return Case("json", f"{reader}: {injection}", argv, files, refuse, f"{injection} in {reader}",
                writes_under=("out",) if reader != "coefficients" else None)


# -- loading counted before it starts ---------------------------------------------------------------------
def _relu_workload(n: int) -> bytes:
    lines = ["schema: 1", "name: big", "input: {h: 4, w: 4, c: 2}", "layer_kinds: [conv]", "ops:",
             "  - {name: c0, kind: conv, kernel: 1, out_c: 2}"]
    lines += [f"  - {{name: r{i}, kind: relu}}" for i in range(n - 1)]
    return ("\n".join(lines) + "\n").encode()


def _dvfs_platform(n: int) -> bytes:
    tree = yaml.safe_load((REPO / "platforms" / "hikey970.yaml").read_text())
    ct = tree["core_types"][0]
    level = ct["dvfs"][-1]
    ct["dvfs"] = [dict(level, name=f"l{i}", freq_MHz=100.0 + i) for i in range(n)]
    ct["default_dvfs"] = "l0"
    for c in tree["clusters"]:
        if c["core_type"] == ct["name"]:
            c.pop("dvfs", None)
    tree.pop("dvfs_presets", None)
    return dump(tree)


def _chain_onnx(n: int) -> bytes:
    from hetsim.workload.onnx_graph import OnnxGraph

    g = OnnxGraph("chain")
    y = g.input("x", (1, 2, 4, 4))
    for _ in range(n):
        y = g.relu(y)
    return g.model(y).SerializeToString()


def _platform_entries(data: dict) -> int:
    """A platform's list entries, one level into each (what hetsim.platform.loader counts)."""
    n = 0
    for value in data.values():
        if isinstance(value, list | dict):
            n += len(value)
            for item in value if isinstance(value, list) else value.values():
                if isinstance(item, dict):
                    n += sum(len(v) for v in item.values() if isinstance(v, list | dict))
    return n


@st.composite
def load_case(draw) -> Case:
    """Inputs counted before they load: a workload of n ops, a platform of n DVFS levels, an ONNX graph
    of n nodes, a profile of n runs, under a loading limit made small (``hetsim.loading.MAX_LOAD_S``),
    with or without ``--force``: past the estimate the load is refused in one line before the work;
    forced, or under the limit, it loads."""
    from hetsim.loading import RATES, estimate

    what = draw(st.sampled_from(["workload", "platform", "onnx", "profile"]))
    n = draw(st.sampled_from([5, 200, 2000, 20_000]))
    limit = draw(st.sampled_from([1e-4, 0.01, 0.1, 60.0]))
    force = draw(st.booleans())
    if what == "workload":
        files = {"big.yaml": _relu_workload(n)}
        argv = ["simulate", "-p", "hikey970", "-w", "{dir}/big.yaml", "-m", "B4:1-1", "--frames", "1", "--engine",
                "analytic"]
        count, unit = n, "ops"
    elif what == "platform":
        n = min(n, 2000)
        files = {"p.yaml": _dvfs_platform(n)}
        argv = ["simulate", "-p", "{dir}/p.yaml", "-w", "alexnet", "-m", "B4:1-11", "--frames", "2"]
        count, unit = None, "entries"
    elif what == "onnx":
        n = min(n, 2000)
        files = {"m.onnx": _chain_onnx(n)}
        argv = ["workloads", "import", "{dir}/m.onnx", "--out", "{dir}/out/w.yaml"]
        count, unit = n, "nodes"
    else:
        files = {"p.json": json.dumps(ort_profile(n)).encode()}
        argv = ["costs", "import-ort", "--profile", "C1={dir}/p.json", "--out", "{dir}/out"]
        count, unit = len(files["p.json"]), "profile-bytes"
    if count is None:
        count = _platform_entries(yaml.safe_load(files["p.yaml"]))
    if force:
        argv.append("--force")
    seconds, memory = estimate(count, unit)
    refuse = not force and seconds > limit
    assert RATES[unit].seconds > 0
    return Case("load", f"{what} of {n} (est. {seconds:.3g} s, limit {limit:g} s){' --force' if force else ''}",
                argv, files, refuse, f"{count:,} {unit} past a limit of {limit:g} s" if refuse else "",
                load_limit_s=limit)


def strategy(target: str, seeds: dict[str, list[Seed]] | None = None):
    """The hypothesis strategy of ``target``'s cases."""
    seeds = seeds or all_seeds()
    if target in ("platform", "workload", "mapping", "sweep"):
        return tree_case(target, seeds[target])
    if target == "bytes":
        return bytes_case(seeds)
    if target == "cli":
        return cli_case()
    extra = {"ort": ort_case, "onnx": onnx_case, "spec": spec_case, "paths": paths_case, "json": json_case,
             "load": load_case}
    if target in extra:
        return extra[target]()
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
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        _make_specials(folder, case.specials)
        before = _snapshot(folder)
        argv = [a.replace("{dir}", str(folder)) for a in case.argv]
        with warnings.catch_warnings(record=True) as caught, _memory_cap(CASE_MEMORY_BYTES), \
                _load_limit(case.load_limit_s):
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
        unsafe = _unsafe(folder, before, case)
        if unsafe:
            return Outcome("crash", f"unsafe: {unsafe}", seconds)
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


def _make_specials(folder: Path, specials: dict[str, str]) -> None:
    import stat as st_

    for name, kind in specials.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "fifo" or (kind == "chardev" and os.geteuid() != 0):
            os.mkfifo(path)
        elif kind == "chardev":   # /dev/null's device numbers, in the case's folder
            os.mknod(path, 0o666 | st_.S_IFCHR, os.makedev(1, 3))
        elif kind == "dir":
            path.mkdir()
        elif kind.startswith("link:"):
            os.symlink(kind[5:].replace("{dir}", str(folder)), path)
        else:
            raise ValueError(kind)


def _snapshot(folder: Path) -> dict[str, int]:
    """Every path under ``folder`` (not following links) and its file type."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = Path(root) / name
            out[str(p.relative_to(folder))] = os.lstat(p).st_mode & 0o170000
    return out


def _unsafe(folder: Path, before: dict[str, int], case: Case) -> str | None:
    """A special file of the case replaced, or a file written outside ``case.writes_under``."""
    after = _snapshot(folder)
    for name in case.specials:
        if after.get(name) != before.get(name):
            return f"{name} ({case.specials[name]}) was replaced or removed"
    if case.writes_under is None:
        return None
    new = [n for n, mode in after.items() if n not in before and mode != 0o040000]
    outside = [n for n in new if not any(n == w or n.startswith(w.rstrip("/") + "/") for w in case.writes_under)]
    return f"wrote {outside[0]!r} outside {list(case.writes_under)}" if outside else None


@contextlib.contextmanager
def _load_limit(seconds: float | None):
    if seconds is None:
        yield
        return
    from hetsim import loading

    old = loading.MAX_LOAD_S
    loading.MAX_LOAD_S = seconds
    try:
        yield
    finally:
        loading.MAX_LOAD_S = old


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
