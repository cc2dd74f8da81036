"""ONNX Runtime profiles as measured costs: per-op times per device, copy times, the graph itself.

ONNX Runtime's profiler (``SessionOptions.enable_profiling``) writes a Chrome-trace JSON: a list of
events, among them one ``cat: "Node"`` event per node run named ``<node>_kernel_time`` with ``dur``
in microseconds and ``args`` holding ``op_name``, ``provider``, ``activation_size``,
``parameter_size``, ``output_size``, ``input_type_shape``/``output_type_shape`` and, in builds that
write them, ``input_nodes``/``output_nodes``; and one ``cat: "Session"`` event ``model_run`` per
``InferenceSession.run``.

:func:`import_ort_profiles` reads one profile per *device* (the PIM paper's methodology: one
whole-model run per device, that device first in the provider priority list), possibly several
files and several runs each, and gives:

* a measured per-op cost table keyed by (op, device): the median over the runs of the node's
  kernel time. An op that ran on another provider in a device's profile (ONNX Runtime fell back
  to the CPU) has no entry for that device: it is not capable there;
* measured copies: ONNX Runtime's ``Memcpy`` nodes between providers, keyed by (source device,
  destination device, bytes), medians;
* the end-to-end time of every run (``model_run``), to compare a simulation with;
* when no ONNX model is given, the workload graph rebuilt from the profile (node order, sizes,
  shapes, and the edges of ``input_nodes`` when the profile has them).

:class:`hetsim.cost.MeasuredCostModel` replays the tables in both evaluators.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.workload.ops import DTYPE_BYTES

CPU_PROVIDER = "CPUExecutionProvider"
_KERNEL_SUFFIX = "_kernel_time"


@dataclass
class NodeRun:
    """One node's execution in one run of a profile."""

    node: str
    op_type: str
    provider: str
    time_s: float
    index: int  # ONNX Runtime's node index
    activation_bytes: int
    parameter_bytes: int
    output_bytes: int
    input_nodes: list[str] | None
    output_nodes: list[str] | None
    in_shapes: list[tuple[str, tuple[int, ...]]]  # (ORT element type, dims)
    out_shapes: list[tuple[str, tuple[int, ...]]]


@dataclass
class Profile:
    """One ONNX Runtime profile file: the node events of each run, and each run's duration."""

    path: str
    runs: list[list[NodeRun]]
    run_s: list[float]  # model_run durations (NaN when the file has no model_run events)

    @property
    def nodes(self) -> int:
        return max((len(r) for r in self.runs), default=0)


#: Timestamps and durations of a profile, in microseconds (ONNX Runtime's unit): a timestamp counts
#: from the session's start (up to ~30 years), a duration up to ~11 days.
TS_US = (0.0, 1e15)
DUR_US = (0.0, 1e12)
#: Byte counts of a node (activation, parameter, output sizes): what float64 holds exactly.
SIZE_BYTES = 2 ** 53


class _Bad(Exception):
    """A field of one event that is not what ONNX Runtime writes (turned into one line)."""


def _us(ev: dict, key: str, rng: tuple[float, float]) -> float | None:
    """A timestamp or duration of an event, in microseconds; None when absent. ONNX Runtime writes
    integers; a finite number in ``rng`` is accepted, anything else (a string, a boolean, a list,
    null, NaN, a negative or absurd value) is refused, never read as a time."""
    if key not in ev:
        return None
    v = ev[key]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise _Bad(f"{key} {_show(v)} is not a number (microseconds)")
    if not (math.isfinite(v) and rng[0] <= v <= rng[1]):
        raise _Bad(f"{key} {v!r} is not a {'time' if key == 'ts' else 'duration'} in "
                   f"[{rng[0]:g}, {rng[1]:g}] microseconds")
    return float(v)


def _size(args: dict, key: str) -> int:
    """A byte count of a node's args (ONNX Runtime writes them as decimal strings); 0 when absent."""
    v = args.get(key)
    if v is None:
        return 0
    if isinstance(v, str) and v.strip().isdigit() and len(v.strip()) <= 17:
        v = int(v.strip())
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= SIZE_BYTES:
        raise _Bad(f"args.{key} {_show(v)} is not a byte count in [0, 2^53]")
    return v


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:40] + "..."


def _int(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
        return 0


def _names(v: Any) -> list[str] | None:
    """``input_nodes``/``output_nodes``: a list, or one string of names separated by commas,
    semicolons or spaces; None when absent."""
    if v is None:
        return None
    if isinstance(v, list):
        return [str(x) for x in v if str(x)]
    return [x for x in re.split(r"[,;\s]+", str(v)) if x]


def _shapes(v: Any) -> list[tuple[str, tuple[int, ...]]]:
    out = []
    if isinstance(v, list):
        for entry in v:
            if isinstance(entry, dict) and len(entry) == 1:
                (dtype, dims), = entry.items()
                if isinstance(dims, list) and all(isinstance(d, int) and not isinstance(d, bool)
                                                  for d in dims):
                    out.append((str(dtype), tuple(dims)))
    return out


def read_ort_profile(path: str | os.PathLike) -> Profile:
    """Read one ONNX Runtime profile JSON; every problem is one line naming the file.

    Refused: a file that is not a profile (not a list of trace events, no node events), a node
    event without its duration or op name, and any timestamp, duration or size that is not a
    finite non-negative number in its range (ONNX Runtime writes integers: a string, a boolean,
    NaN, a negative or an absurd value is a damaged or forged profile, never a measurement)."""
    from hetsim.loading import check_load
    from hetsim.validation import MAX_JSON_BYTES, decode_text, parse_json, read_input

    p = Path(path)
    raw = read_input(p, MAX_JSON_BYTES, "an ONNX Runtime profile")   # a FIFO or a device is refused
    check_load(str(p), len(raw), "profile-bytes")   # counted before it is parsed
    data = parse_json(decode_text(raw, str(p)), str(p))
    if isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        data = data["traceEvents"]
    if not isinstance(data, list):
        raise HetsimError(f"{p}: not an ONNX Runtime profile (expected a JSON list of trace "
                          f"events, got {type(data).__name__})")
    nodes: list[NodeRun] = []
    node_ts: list[float | None] = []
    runs: list[tuple[float, float]] = []
    for i, ev in enumerate(data):
        if not isinstance(ev, dict):
            raise HetsimError(f"{p}: event {i}: not an ONNX Runtime trace event (a JSON object)")
        cat, name = ev.get("cat"), ev.get("name")
        try:
            if cat == "Session" and name == "model_run":
                ts, dur = _us(ev, "ts", TS_US), _us(ev, "dur", DUR_US)
                if ts is None or dur is None:
                    raise _Bad("a model_run event needs ts and dur")
                runs.append((ts, dur))
                continue
            if cat != "Node" or not isinstance(name, str) or not name.endswith(_KERNEL_SUFFIX):
                continue  # fences, session events, thread-pool events
            args = ev.get("args")
            dur = _us(ev, "dur", DUR_US)
            if not isinstance(args, dict) or dur is None or "op_name" not in args:
                raise HetsimError(f"{p}: event {i} ({_show(name)}): a Node event needs dur and "
                                  "args.op_name (not ONNX Runtime's profile format?)")
            node_ts.append(_us(ev, "ts", TS_US))
            nodes.append(NodeRun(
                node=name[:-len(_KERNEL_SUFFIX)], op_type=str(args["op_name"]),
                provider=str(args.get("provider", CPU_PROVIDER)), time_s=dur * 1e-6,
                index=_int(args.get("node_index", -1)),
                activation_bytes=_size(args, "activation_size"),
                parameter_bytes=_size(args, "parameter_size"),
                output_bytes=_size(args, "output_size"),
                input_nodes=_names(args.get("input_nodes")), output_nodes=_names(args.get("output_nodes")),
                in_shapes=_shapes(args.get("input_type_shape")),
                out_shapes=_shapes(args.get("output_type_shape"))))
        except _Bad as e:
            raise HetsimError(f"{p}: event {i} ({_show(name)}): {e}") from None
    if not nodes:
        raise HetsimError(f"{p}: not an ONNX Runtime profile (no 'Node' events named "
                          f"<node>{_KERNEL_SUFFIX}; enable SessionOptions.enable_profiling)")
    if not runs:
        return Profile(str(p), [nodes], [math.nan])
    if None in node_ts:
        raise HetsimError(f"{p}: node event {node_ts.index(None)} has no ts: with model_run events, "
                          "a node's timestamp says which run it belongs to")
    # A node event belongs to the model_run that contains it: one sorted search for all of them
    # (numpy, in C), so a profile of a million node runs reads in seconds.
    runs.sort()
    starts = np.fromiter((ts for ts, _ in runs), float, len(runs))
    ends = starts + np.fromiter((d for _, d in runs), float, len(runs)) + 1
    times = np.asarray(node_ts, float)
    k = np.searchsorted(starts, times, side="right") - 1
    inside = (k >= 0) & (times <= ends[np.maximum(k, 0)])
    per_run: list[list[NodeRun]] = [[] for _ in runs]
    for n, run, ok in zip(nodes, k.tolist(), inside.tolist(), strict=True):
        if ok:
            per_run[run].append(n)
    keep = [r for r, nodes_of_run in enumerate(per_run) if nodes_of_run]
    return Profile(str(p), [per_run[r] for r in keep], [runs[r][1] * 1e-6 for r in keep])


# -- several profiles -> measured tables -----------------------------------------------------
@dataclass
class MeasuredCosts:
    """What :func:`import_ort_profiles` gives: tidy tables and, optionally, the workload."""

    ops: pd.DataFrame  # op, ep, time_s, runs, op_type, provider
    transfers: pd.DataFrame  # src, dst, bytes, time_s, count, op_type
    runs: pd.DataFrame  # ep, file, run, time_s (model_run), kernels_s (sum of its node times)
    spec: dict[str, Any] | None = None  # the workload: imported from the model, or rebuilt
    notes: list[str] = field(default_factory=list)

    def summary(self) -> pd.DataFrame:
        """Per op type and device: ops, total median time (ms) and share of the device's total."""
        if self.ops.empty:
            return pd.DataFrame(columns=["op_type", "ep", "ops", "time_ms", "share"])
        g = self.ops.groupby(["op_type", "ep"], sort=False).agg(ops=("op", "count"),
                                                                time_s=("time_s", "sum"))
        g = g.reset_index()
        totals = g.groupby("ep")["time_s"].transform("sum")
        g["share"] = g["time_s"] / totals
        g["time_ms"] = g["time_s"] * 1e3
        return g[["op_type", "ep", "ops", "time_ms", "share"]].sort_values(
            ["ep", "time_ms"], ascending=[True, False], ignore_index=True)


def _main_provider(profile_runs: Sequence[NodeRun]) -> str:
    """The provider a device's profile measures: the accelerator when one ran any node (the CPU
    only ran fallbacks then), the CPU otherwise."""
    counts: dict[str, int] = {}
    for n in profile_runs:
        if not n.op_type.startswith("Memcpy"):
            counts[n.provider] = counts.get(n.provider, 0) + 1
    others = {k: v for k, v in counts.items() if k != CPU_PROVIDER}
    if others:
        return max(others, key=lambda k: (others[k], k))
    return CPU_PROVIDER


def _device_runs(dev: str, files: Sequence[Profile], main: str, host: str, skip_runs: int | None,
                 known: set[str] | None, folded: set[str]):
    """One device's profiled runs past the warm-up: the times of every node its main provider
    ran, its nodes' first events, the nodes another provider ran (fallbacks), its Memcpy times by
    (src, dst, bytes, op type), and a row per run."""
    times: dict[str, list[float]] = {}
    meta: dict[str, NodeRun] = {}
    fallback: set[str] = set()
    copies: dict[tuple[str, str, int, str], list[float]] = {}
    run_rows = []
    for prof in files:
        skip = skip_runs if skip_runs is not None else (1 if len(prof.runs) > 1 else 0)
        if skip >= len(prof.runs):
            raise HetsimError(f"{prof.path}: {len(prof.runs)} runs, all skipped as warm-up "
                              f"(skip_runs={skip})")
        for r, (run, run_s) in enumerate(zip(prof.runs, prof.run_s, strict=True)):
            if r < skip:
                continue
            run_rows.append({"ep": dev, "file": prof.path, "run": r, "time_s": run_s,
                             "kernels_s": sum(n.time_s for n in run)})
            for n in run:
                if n.op_type.startswith("Memcpy"):
                    to_host = "ToHost" in n.op_type
                    src, dst = (dev, host) if to_host else (host, dev)
                    nbytes = n.output_bytes or n.activation_bytes
                    copies.setdefault((src, dst, nbytes, n.op_type), []).append(n.time_s)
                    continue
                if n.node in folded:
                    continue
                if known is not None and n.node not in known:
                    raise HetsimError(f"{prof.path}: profile names node {n.node!r} "
                                      f"({n.op_type}), which the model does not have (a "
                                      "profile of another model, or of an optimized session? "
                                      "profile with graph optimizations disabled)")
                meta.setdefault(n.node, n)
                if n.provider != main:
                    fallback.add(n.node)
                    continue
                times.setdefault(n.node, []).append(n.time_s)
    return times, meta, fallback, copies, run_rows


def _device_rows(dev: str, files: Sequence[Profile], main: str, host: str, skip_runs: int | None,
                 known: set[str] | None, folded: set[str]):
    """One device's rows of the op, transfer and run tables (medians over its runs) and its notes."""
    times, meta, fallback, copies, run_rows = _device_runs(dev, files, main, host, skip_runs,
                                                           known, folded)
    op_rows, copy_rows, notes = [], [], []
    for node, ts in times.items():
        n = meta[node]
        op_rows.append({"op": node, "ep": dev, "time_s": float(np.median(ts)), "runs": len(ts),
                        "op_type": n.op_type, "provider": n.provider, "index": n.index})
    for (src, dst, nbytes, op_type), ts in copies.items():
        copy_rows.append({"src": src, "dst": dst, "bytes": nbytes,
                          "time_s": float(np.median(ts)), "count": len(ts), "op_type": op_type})
    if fallback:
        notes.append(f"{dev}: {len(fallback)} nodes ran on another provider than {main} (not "
                     "capable there): " + ", ".join(sorted(fallback)[:4])
                     + (" ..." if len(fallback) > 4 else ""))
    if copies:
        notes.append(f"{dev}: {sum(len(v) for v in copies.values())} Memcpy runs "
                     f"({len(copies)} distinct size/direction), host {host}")
    return op_rows, copy_rows, run_rows, notes


def _tables(op_rows: list, copy_rows: list, run_rows: list) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tidy ops (by device, then graph order), transfers and runs tables."""
    ops = pd.DataFrame(op_rows, columns=["op", "ep", "time_s", "runs", "op_type", "provider",
                                         "index"])
    if not ops.empty:
        ops = ops.sort_values(["ep", "index", "op"], kind="stable", ignore_index=True)
    ops = ops.drop(columns="index")
    transfers = pd.DataFrame(copy_rows, columns=["src", "dst", "bytes", "time_s", "count",
                                                 "op_type"])
    if not transfers.empty:
        transfers = transfers.sort_values(["src", "dst", "bytes"], ignore_index=True)
    runs = pd.DataFrame(run_rows, columns=["ep", "file", "run", "time_s", "kernels_s"])
    return ops, transfers, runs


def import_ort_profiles(profiles: Mapping[str, Sequence[str | os.PathLike]],
                        model: Any = None, *, skip_runs: int | None = None,
                        host: str | None = None, providers: Mapping[str, str] | None = None,
                        input_shapes: Mapping[str, Sequence[int]] | None = None,
                        name: str | None = None) -> MeasuredCosts:
    """Measured costs from ONNX Runtime profiles, one or more files per device.

    ``skip_runs`` runs at the start of every file are warm-up and dropped (default: 1 when a file
    has more than one run: ONNX Runtime's first run allocates its memory arena). ``model`` (a path
    or ``onnx.ModelProto``) names the ops; every profiled node must be one of its nodes. Without
    it the workload is rebuilt from the profiles; either is ``MeasuredCosts.spec``. ``host`` is the device
    whose memory Memcpy nodes copy from/to (default: the first device measuring the CPU);
    ``providers`` overrides the provider a device's profile measures.
    """
    if not profiles:
        raise HetsimError("no profiles given (--profile DEVICE=FILE.json)")
    if skip_runs is not None and (isinstance(skip_runs, bool) or not isinstance(skip_runs, int)
                                  or skip_runs < 0):
        raise HetsimError(f"--skip-runs {skip_runs!r}: the warm-up runs to drop, an integer >= 0")
    read: dict[str, list[Profile]] = {dev: [read_ort_profile(f) for f in files]
                                      for dev, files in profiles.items()}
    notes: list[str] = []
    mains: dict[str, str] = {}
    for dev, files in read.items():
        events = [n for prof in files for run in prof.runs for n in run]
        mains[dev] = (providers or {}).get(dev) or _main_provider(events)
    if host is None:
        host = next((d for d, m in mains.items() if m == CPU_PROVIDER), "cpu")

    known: set[str] | None = None
    folded: set[str] = set()
    workload_spec = None
    if model is not None:
        from hetsim.workload.onnx_import import import_onnx

        result = import_onnx(model, name, input_shapes=input_shapes, allow_unknown=True)
        known = {op.name for op in result.workload.ops}
        folded = set(result.report.folded)
        workload_spec = result.spec

    op_rows, copy_rows, run_rows = [], [], []
    for dev, files in read.items():
        dev_ops, dev_copies, dev_runs, dev_notes = _device_rows(dev, files, mains[dev], host, skip_runs,
                                                                known, folded)
        op_rows += dev_ops
        copy_rows += dev_copies
        run_rows += dev_runs
        notes += dev_notes
    ops, transfers, runs = _tables(op_rows, copy_rows, run_rows)
    if model is None:
        workload_spec, more = workload_spec_from_profile(read, name or "profiled")
        notes.extend(more)
    return MeasuredCosts(ops, transfers, runs, workload_spec, notes)


# -- the workload from a profile -------------------------------------------------------------
def _profiled_nodes(profiles: Mapping[str, Sequence[Profile]]):
    """The profiled nodes in execution order (a topological order) of first appearance over every
    run of every file, Memcpy nodes aside; and each Memcpy node's input nodes."""
    nodes: dict[str, NodeRun] = {}
    for files in profiles.values():
        for prof in files:
            for run in prof.runs:
                for n in run:
                    if not n.op_type.startswith("Memcpy"):
                        nodes.setdefault(n.node, n)
    memcpy_src: dict[str, list[str]] = {}
    for files in profiles.values():
        for prof in files:
            for run in prof.runs:
                for n in run:
                    if n.op_type.startswith("Memcpy") and n.input_nodes is not None:
                        memcpy_src[n.node] = n.input_nodes
    return nodes, memcpy_src


def _op_from_node(n: NodeRun, inputs: list[str]) -> dict[str, Any]:
    """One workload op (the YAML format) of a profiled node: kind and GEMM dims from its op type
    and shapes, bytes from the profile's sizes (output bytes only where they differ from the
    shape's)."""
    from hetsim.workload.onnx_import import ORT_DTYPES, count_node

    in_dims = [d for _, d in n.in_shapes]
    out_dims = [d for _, d in n.out_shapes]
    if not out_dims:
        raise HetsimError(f"profile node {n.node!r} has no output_type_shape: cannot rebuild "
                          "the graph without the model (--model)")
    c = count_node(n.op_type, {}, in_dims, out_dims)
    dtype = ORT_DTYPES.get(n.out_shapes[0][0], "float32")
    op: dict[str, Any] = {"name": n.node, "kind": c.kind, "op_type": n.op_type,
                          "inputs": inputs,
                          "dims": [list(d) for d in out_dims] if len(out_dims) > 1
                          else list(out_dims[0])}
    if dtype != "float32":
        op["dtype"] = dtype
    if c.kind in ("conv", "dw", "fc", "matmul"):
        if c.gemm is None:
            op["kind"] = "other"
        else:
            op["gemm"] = list(c.gemm)
            if c.gemm_groups != 1:
                op["gemm_groups"] = c.gemm_groups
    op["flops"] = c.flops
    op["input_bytes"] = n.activation_bytes
    if n.output_bytes != sum(math.prod(d) for d in out_dims) * DTYPE_BYTES[dtype]:
        op["output_bytes"] = n.output_bytes
    if n.parameter_bytes:
        op["weight_bytes"] = n.parameter_bytes
    return op


def workload_spec_from_profile(profiles: Mapping[str, Sequence[Profile]],
                               name: str) -> tuple[dict[str, Any], list[str]]:
    """A workload dict (the YAML format) rebuilt from profiled nodes: one generic op per node
    (Memcpy nodes are copies, not ops), kinds and GEMM dims from the op types and shapes
    (:func:`hetsim.workload.onnx_import.count_node`), bytes from the profile's sizes, edges from
    ``input_nodes`` (or, when the profile has none, the execution order: a chain)."""
    from hetsim.workload.onnx_import import DEFAULT_LAYER_KINDS, ORT_DTYPES

    nodes, memcpy_src = _profiled_nodes(profiles)
    order = list(nodes.values())
    has_edges = all(n.input_nodes is not None for n in order)
    notes = []
    if not has_edges:
        notes.append("the profile has no input_nodes (stock ONNX Runtime): ops are chained in "
                     "execution order; give the model (--model) for the real graph")
    first_in = order[0].in_shapes[0] if order and order[0].in_shapes else ("float", (1,))
    net = {"name": "input", "dims": list(first_in[1]),
           "dtype": ORT_DTYPES.get(first_in[0], "float32")}
    ops: list[dict[str, Any]] = []
    names = set(nodes)
    for i, n in enumerate(order):
        if has_edges:
            srcs: list[str] = []
            for s in n.input_nodes or []:
                for real in memcpy_src.get(s, [s]):  # look through ORT's copy nodes
                    if real in names and real not in srcs:
                        srcs.append(real)
            inputs = srcs if srcs else []
        else:
            inputs = [order[i - 1].node] if i else []
        ops.append(_op_from_node(n, inputs))
    spec = {"schema": 1, "name": name,
            "description": f"Rebuilt from ONNX Runtime profiles ({len(ops)} nodes)",
            "source": ", ".join(sorted({prof.path for files in profiles.values()
                                         for prof in files})),
            "input": net, "layer_kinds": list(DEFAULT_LAYER_KINDS), "ops": ops}
    return spec, notes


# -- measuring on this machine (``hetsim profile``) -------------------------------------------
def random_inputs(model: Any, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded random values for every graph input of ``model`` (an ``onnx.ModelProto`` whose input
    dims are all fixed): standard normal floats, 0/1 integers (valid token ids, masks, indices),
    random booleans."""
    from hetsim.workload.onnx_import import ONNX_DTYPES

    rng = np.random.default_rng(seed)
    inits = {t.name for t in model.graph.initializer}
    feeds: dict[str, np.ndarray] = {}
    for inp in model.graph.input:
        if inp.name in inits:
            continue
        tt = inp.type.tensor_type
        dims = tuple(int(d.dim_value) for d in tt.shape.dim)
        dtype = ONNX_DTYPES.get(tt.elem_type, "float32")
        if dtype.startswith("float") or dtype == "bfloat16":
            arr: np.ndarray = rng.standard_normal(dims).astype(np.float32 if dtype == "bfloat16"
                                                                else dtype)
        elif dtype == "bool":
            arr = rng.random(dims) < 0.5
        else:
            arr = rng.integers(0, 2, size=dims).astype(dtype)
        feeds[inp.name] = arr
    return feeds


def run_ort_profiles(model_path: str | os.PathLike, threads: Sequence[int], out_dir: str | os.PathLike,
                     runs: int = 10, warmup: int = 2, seed: int = 0,
                     input_shapes: Mapping[str, Sequence[int]] | None = None,
                     progress: Any = None, spinning: bool = False) -> dict[int, Path]:
    """Run ``model_path`` with ONNX Runtime on this machine, profiling enabled, once per intra-op
    thread count (threads pinned to distinct CPUs), ``warmup`` + ``runs`` runs each with seeded
    random inputs; write ONNX Runtime's profile JSON as ``<out_dir>/ort_t<n>.json`` and return
    those paths. Graph optimizations are off, so the profiled nodes are the model's nodes.
    Worker threads sleep between ops unless ``spinning`` (ONNX Runtime's default is to spin: on a
    machine other processes share, a spinning thread fights them for the cores and multi-thread
    runs stall). ``progress(n)`` is called after every run."""
    import onnxruntime as ort

    from hetsim.workload.onnx_import import fix_input_shapes, load_onnx

    cpus = sorted(os.sched_getaffinity(0))
    if not threads or any(t < 1 for t in threads):
        raise HetsimError(f"--threads {list(threads)}: thread counts must be >= 1")
    if max(threads) > len(cpus):
        raise HetsimError(f"--threads {max(threads)}: this process may use {len(cpus)} CPUs "
                          f"({cpus})")
    if runs < 1 or warmup < 0:
        raise HetsimError(f"--runs {runs} / --warmup {warmup}: need runs >= 1 and warmup >= 0")
    source = str(model_path)
    proto = fix_input_shapes(load_onnx(model_path), input_shapes, source)
    feeds = random_inputs(proto, seed)
    data = proto.SerializeToString()
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise HetsimError(f"--out {out}: cannot make the folder ({e.strerror or e})") from None
    from hetsim.validation import check_output_path

    for t in threads:   # the profiles are moved into place: never over a FIFO or a device
        check_output_path(out / f"ort_t{t}.json", "--out")
    paths: dict[int, Path] = {}
    main_affinity = os.sched_getaffinity(0)
    # The model goes to ONNX Runtime as bytes (its input dims may be fixed above): its external
    # weights are looked up beside the model file, never in the working directory.
    weights_dir = str(Path(model_path).resolve().parent)
    try:
        for t in threads:
            so = _session_options(t, cpus, out, spinning)
            so.add_session_config_entry("session.model_external_initializers_file_folder_path", weights_dir)
            os.sched_setaffinity(0, {cpus[0]})  # the calling thread runs ORT's main share
            try:
                session = ort.InferenceSession(data, so, providers=[CPU_PROVIDER])
            except Exception as e:  # onnxruntime raises its own exception types
                raise HetsimError(f"{source}: ONNX Runtime cannot load it: {_first(e)}") from None
            for _ in range(warmup + runs):
                try:
                    session.run(None, feeds)
                except Exception as e:
                    raise HetsimError(f"{source}: ONNX Runtime run failed: {_first(e)}") from None
                if progress is not None:
                    progress(1)
            written = Path(session.end_profiling())
            target = out / f"ort_t{t}.json"
            os.replace(written, target)
            paths[t] = target
    finally:
        os.sched_setaffinity(0, main_affinity)
    return paths


def _session_options(t: int, cpus: list[int], out: Path, spinning: bool) -> Any:
    """A profiling session with ``t`` intra-op threads pinned to distinct CPUs, graph
    optimizations off (the profiled nodes are the model's), sequential, quiet."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.enable_profiling = True
    so.profile_file_prefix = str(out / f".ort_t{t}")
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.intra_op_num_threads = t
    so.inter_op_num_threads = 1
    so.log_severity_level = 3
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    if t > 1:  # worker i on CPU i (ONNX Runtime counts logical processors from 1)
        so.add_session_config_entry("session.intra_op_thread_affinities",
                                    ";".join(str(c + 1) for c in cpus[1:t]))
    return so


def _first(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


__all__ = ["CPU_PROVIDER", "MeasuredCosts", "NodeRun", "Profile", "import_ort_profiles",
           "random_inputs", "read_ort_profile", "run_ort_profiles", "workload_spec_from_profile"]
