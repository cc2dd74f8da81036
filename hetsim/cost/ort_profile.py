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
* measured copies: ONNX Runtime's ``Memcpy`` nodes between a device and its host, keyed by
  (source device, destination device, the tensor's logical element count), medians; the element
  count comes from the copy's shape, else from its bytes at the device's element size (a bf16
  device's copies are half the bytes of the same tensor on an fp32 host: keyed by bytes, they would
  be looked up at the fp32 size and priced about twice);
* a capability table: which device can run which op (by default, the profiles' evidence: the
  device's own provider ran it), overridable by the user (``capability.csv``);
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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.workload.ops import DTYPE_BYTES

CPU_PROVIDER = "CPUExecutionProvider"
CAPABILITY_COLUMNS = ("op", "op_type", "ep", "capable", "evidence")
#: The bytes per element hetsim assumes for a tensor whose profile records no element type (the
#: rebuilt graph's ops, and its copies at the reference device's precision).
DEFAULT_ELEMENT_BYTES = 4
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
    transfers: pd.DataFrame  # src, dst, elements, bytes, time_s, count, op_type
    runs: pd.DataFrame  # ep, file, run, time_s (model_run), kernels_s (sum of its node times)
    spec: dict[str, Any] | None = None  # the workload: imported from the model, or rebuilt
    notes: list[str] = field(default_factory=list)
    capability: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(
        columns=list(CAPABILITY_COLUMNS)))  # op, op_type, ep, capable (0/1), evidence

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


def _elements(n: NodeRun, element_bytes: float) -> int:
    """A copy's logical element count: from its output shape when the profile records one, else
    its bytes at ``element_bytes`` per element (the device's precision)."""
    shapes = n.out_shapes or n.in_shapes
    if shapes:
        return sum(math.prod(d) for _, d in shapes)
    nbytes = n.output_bytes or n.activation_bytes
    return max(int(round(nbytes / element_bytes)), 1 if nbytes else 0)


def device_element_bytes(profiles: Mapping[str, Sequence[Profile]], mains: Mapping[str, str],
                         reference: str) -> dict[str, float]:
    """Each device's bytes per element, relative to the reference device's (taken as
    :data:`DEFAULT_ELEMENT_BYTES`): the median ratio of a node's ``output_size`` on the device (its
    own provider ran it) to the same node's on the reference, snapped to a power of two within
    10 % (a bf16 device's outputs are half an fp32 host's: 2 bytes). 1 when they share no node."""
    def sizes(dev: str, own: bool) -> dict[str, int]:
        out: dict[str, int] = {}
        for prof in profiles[dev]:
            for run in prof.runs:
                for n in run:
                    if (not n.op_type.startswith("Memcpy") and n.output_bytes > 0
                            and (not own or n.provider == mains[dev])):
                        out.setdefault(n.node, n.output_bytes)
        return out

    ref = sizes(reference, False)
    out = {}
    for dev in profiles:
        mine = sizes(dev, True) if dev != reference else {}
        ratios = [b / ref[node] for node, b in mine.items() if node in ref]
        r = float(np.median(ratios)) if ratios else 1.0
        snapped = 2.0 ** round(math.log2(r)) if r > 0 else 1.0
        out[dev] = DEFAULT_ELEMENT_BYTES * (snapped if abs(r / snapped - 1) <= 0.1 else r)
    return out


def _device_runs(dev: str, files: Sequence[Profile], main: str, host: str, skip_runs: int | None,
                 known: set[str] | None, folded: set[str], element_bytes: float,
                 functions: _Functions):
    """One device's profiled runs past the warm-up: the times of every node its main provider
    ran, its nodes' first events, the nodes another provider ran (fallbacks), its Memcpy times by
    (src, dst, elements, bytes, op type), and a row per run."""
    times: dict[str, list[float]] = {}
    meta: dict[str, NodeRun] = {}
    fallback: dict[str, str] = {}
    copies: dict[tuple[str, str, int, int, str], list[float]] = {}
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
            in_bodies: dict[str, float] = {}   # a function op's time: its body's nodes summed
            for n in run:
                if n.node in functions.aliases:
                    node = functions.aliases[n.node]
                    meta.setdefault(node, replace(n, node=node, op_type=functions.op_types[node]))
                    if n.provider != main:
                        fallback.setdefault(node, n.provider)
                    in_bodies[node] = in_bodies.get(node, 0.0) + n.time_s
                    continue
                if n.op_type.startswith("Memcpy"):
                    to_host = "ToHost" in n.op_type
                    src, dst = (dev, host) if to_host else (host, dev)
                    nbytes = n.output_bytes or n.activation_bytes
                    key = (src, dst, _elements(n, element_bytes), nbytes, n.op_type)
                    copies.setdefault(key, []).append(n.time_s)
                    continue
                if n.node in folded:
                    continue
                if known is not None and n.node not in known:
                    if functions.nodes:   # ONNX Runtime ran them as bodies, named by it
                        shown = ", ".join(f"{k} ({v})" for k, v in list(functions.nodes.items())[:3])
                        raise HetsimError(
                            f"{prof.path}: profile names node {n.node!r} ({n.op_type}), which the "
                            f"model does not have: ONNX Runtime ran the function op(s) {shown} as "
                            "their ONNX function body and named its nodes; profile with `hetsim "
                            "profile`, which inlines them under names that map back")
                    raise HetsimError(f"{prof.path}: profile names node {n.node!r} "
                                      f"({n.op_type}), which the model does not have (a "
                                      "profile of another model, or of an optimized session? "
                                      "profile with graph optimizations disabled)")
                meta.setdefault(n.node, n)
                if n.provider != main:
                    fallback.setdefault(n.node, n.provider)
                    continue
                times.setdefault(n.node, []).append(n.time_s)
            for node, t in in_bodies.items():
                if node not in fallback:
                    times.setdefault(node, []).append(t)
    return times, meta, fallback, copies, run_rows


def _device_rows(dev: str, files: Sequence[Profile], main: str, host: str, skip_runs: int | None,
                 known: set[str] | None, folded: set[str], element_bytes: float,
                 functions: _Functions):
    """One device's rows of the op, transfer and run tables (medians over its runs), the nodes it
    left to another provider, and its notes."""
    times, meta, fallback, copies, run_rows = _device_runs(dev, files, main, host, skip_runs,
                                                           known, folded, element_bytes, functions)
    op_rows, copy_rows, notes = [], [], []
    for node, ts in times.items():
        n = meta[node]
        op_rows.append({"op": node, "ep": dev, "time_s": float(np.median(ts)), "runs": len(ts),
                        "op_type": n.op_type, "provider": n.provider, "index": n.index})
    for (src, dst, elements, nbytes, op_type), ts in copies.items():
        copy_rows.append({"src": src, "dst": dst, "elements": elements, "bytes": nbytes,
                          "time_s": float(np.median(ts)), "count": len(ts), "op_type": op_type})
    if fallback:
        notes.append(f"{dev}: {len(fallback)} nodes ran on another provider than {main} (not "
                     "capable there): " + ", ".join(sorted(fallback)[:4])
                     + (" ..." if len(fallback) > 4 else ""))
    if copies:
        notes.append(f"{dev}: {sum(len(v) for v in copies.values())} Memcpy runs "
                     f"({len(copies)} distinct size/direction), host {host}")
    return op_rows, copy_rows, run_rows, fallback, notes


def _tables(op_rows: list, copy_rows: list, run_rows: list) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The tidy ops (by device, then graph order), transfers and runs tables."""
    ops = pd.DataFrame(op_rows, columns=["op", "ep", "time_s", "runs", "op_type", "provider",
                                         "index"])
    if not ops.empty:
        ops = ops.sort_values(["ep", "index", "op"], kind="stable", ignore_index=True)
    ops = ops.drop(columns="index")
    transfers = pd.DataFrame(copy_rows, columns=["src", "dst", "elements", "bytes", "time_s",
                                                 "count", "op_type"])
    if not transfers.empty:
        transfers = transfers.sort_values(["src", "dst", "elements", "bytes"], ignore_index=True)
    runs = pd.DataFrame(run_rows, columns=["ep", "file", "run", "time_s", "kernels_s"])
    return ops, transfers, runs


def import_ort_profiles(profiles: Mapping[str, Sequence[str | os.PathLike]],
                        model: Any = None, *, skip_runs: int | None = None,
                        host: str | Mapping[str, str] | None = None,
                        providers: Mapping[str, str] | None = None,
                        input_shapes: Mapping[str, Sequence[int]] | None = None,
                        name: str | None = None, reference: str | None = None,
                        capability: str | os.PathLike | pd.DataFrame | None = None) -> MeasuredCosts:
    """Measured costs from ONNX Runtime profiles, one or more files per device.

    ``skip_runs`` runs at the start of every file are warm-up and dropped (default: 1 when a file
    has more than one run: ONNX Runtime's first run allocates its memory arena). ``model`` (a path
    or ``onnx.ModelProto``) names the ops; every profiled node must be one of its nodes. Without
    it the workload is rebuilt from the profiles; either is ``MeasuredCosts.spec``. ``host`` is the
    device whose memory a device's Memcpy nodes copy from/to: one name for every device, or a
    mapping device -> host (several hosts in one import: the same CPU at 1 and 4 threads, each the
    host of the accelerator profiles recorded with it); default the first device measuring the
    CPU. ``providers`` overrides the provider a device's profile measures. ``reference`` is the
    device whose profile gives a rebuilt graph's op sizes and shapes, and the precision copies'
    element counts are relative to (default: the host, which runs every op at the model's own
    precision; a bf16 accelerator's profile would halve them). ``capability`` (a CSV path or a
    table with columns ``ep``, ``capable`` and ``op`` or ``op_type``) overrides the capability
    table's rows that the profiles' evidence fills (:func:`capability_table`).
    """
    if not profiles:
        raise HetsimError("no profiles given (--profile DEVICE=FILE.json)")
    if skip_runs is not None and (isinstance(skip_runs, bool) or not isinstance(skip_runs, int)
                                  or skip_runs < 0):
        raise HetsimError(f"--skip-runs {skip_runs!r}: the warm-up runs to drop, an integer >= 0")
    if reference is not None and reference not in profiles:
        raise HetsimError(f"--reference {reference}: no --profile of that device "
                          f"(devices: {', '.join(profiles)})")
    if isinstance(host, Mapping):
        for dev in host:
            if dev not in profiles:
                raise HetsimError(f"--host {dev}=...: no --profile of device {dev!r} "
                                  f"(devices: {', '.join(profiles)})")
    read: dict[str, list[Profile]] = {dev: [read_ort_profile(f) for f in files]
                                      for dev, files in profiles.items()}
    notes: list[str] = []
    mains: dict[str, str] = {}
    for dev, files in read.items():
        events = [n for prof in files for run in prof.runs for n in run]
        mains[dev] = (providers or {}).get(dev) or _main_provider(events)
    default_host = (host if isinstance(host, str) else
                    next((d for d, m in mains.items() if m == CPU_PROVIDER), "cpu"))
    hosts = {dev: (host.get(dev, default_host) if isinstance(host, Mapping) else default_host)
             for dev in read}
    ref = reference or (default_host if default_host in read else next(iter(read)))

    known: set[str] | None = None
    folded: set[str] = set()
    workload_spec = None
    functions = _Functions({}, {}, {})
    if model is not None:
        from hetsim.workload.onnx_import import import_onnx, load_onnx

        result = import_onnx(model, name, input_shapes=input_shapes)
        known = {op.name for op in result.workload.ops}
        folded = set(result.report.folded)
        workload_spec = result.spec
        functions = _function_map(model if not isinstance(model, str | os.PathLike) else load_onnx(model),
                                  workload_spec)

    element_bytes = device_element_bytes(read, mains, ref)
    op_rows, copy_rows, run_rows = [], [], []
    fallbacks: dict[str, dict[str, str]] = {}
    for dev, files in read.items():
        dev_ops, dev_copies, dev_runs, fallbacks[dev], dev_notes = _device_rows(
            dev, files, mains[dev], hosts[dev], skip_runs, known, folded, element_bytes[dev], functions)
        op_rows += dev_ops
        copy_rows += dev_copies
        run_rows += dev_runs
        notes += dev_notes
    ops, transfers, runs = _tables(op_rows, copy_rows, run_rows)
    odd = {d: b for d, b in element_bytes.items() if b != DEFAULT_ELEMENT_BYTES}
    if odd and not transfers.empty:
        notes.append("copies keyed by element count; devices at another precision than " + ref + ": "
                     + ", ".join(f"{d} {b:g} bytes/element" for d, b in odd.items()))
    if len({hosts[d] for d in read if d != hosts[d]}) > 1:
        notes.append("hosts: " + ", ".join(f"{d} copies with {h}" for d, h in hosts.items() if d != h))
    if model is None:
        workload_spec, more = workload_spec_from_profile(read, name or "profiled", ref)
        notes.append(f"op sizes and shapes from the profile of {ref}"
                     + ("" if reference else " (the host; --reference DEVICE to choose)"))
        notes.extend(more)
    assert workload_spec is not None
    cap = capability_table(workload_spec, ops, mains, fallbacks)
    if capability is not None:
        cap = override_capability(cap, capability)
    return MeasuredCosts(ops, transfers, runs, workload_spec, notes, cap)


@dataclass
class _Functions:
    """A model's function ops ONNX Runtime runs as their body: body node -> model node (as
    :func:`inline_function_ops` names them), the model node's op type, and the function nodes."""

    aliases: dict[str, str]
    op_types: dict[str, str]
    nodes: dict[str, str]   # model node -> op type


def _function_map(proto: Any, spec: Mapping[str, Any]) -> _Functions:
    nodes = {proto.graph.node[i].name or f"{proto.graph.node[i].op_type}": proto.graph.node[i].op_type
             for i in function_op_nodes(proto)}
    if not nodes:
        return _Functions({}, {}, {})
    _, aliases = inline_function_ops(proto)
    types = {op["name"]: op.get("op_type", "") for op in spec.get("ops", [])}
    return _Functions(aliases, {m: types.get(m) or "function" for m in set(aliases.values())}, nodes)


def capability_table(spec: Mapping[str, Any], ops: pd.DataFrame, mains: Mapping[str, str],
                     fallbacks: Mapping[str, Mapping[str, str]]) -> pd.DataFrame:
    """Which device can run which op of the workload ``spec``, from the profiles' evidence: capable
    where the device's own provider ran the op (it has a measured time), not where another provider
    ran it in the device's profile (ONNX Runtime fell back) or where the profile never ran it."""
    measured = set(zip(ops["op"], ops["ep"], strict=True))
    rows = []
    for dev, main in mains.items():
        for op in spec.get("ops", []):
            name = op["name"]
            if (name, dev) in measured:
                capable, evidence = 1, f"ran on {main}"
            elif name in fallbacks.get(dev, {}):
                capable, evidence = 0, f"fell back to {fallbacks[dev][name]}"
            else:
                capable, evidence = 0, "not in the profile"
            rows.append({"op": name, "op_type": op.get("op_type", op.get("kind", "")), "ep": dev,
                         "capable": capable, "evidence": evidence})
    return pd.DataFrame(rows, columns=list(CAPABILITY_COLUMNS))


_YES = {"1": 1, "true": 1, "yes": 1, "0": 0, "false": 0, "no": 0}


def override_capability(table: pd.DataFrame, overrides: str | os.PathLike | pd.DataFrame) -> pd.DataFrame:
    """``table`` with the rows named by ``overrides`` (columns ``ep``, ``capable`` (1/0, true/false,
    yes/no) and ``op`` or ``op_type``: one row may set every op of a type) replaced; every row of
    the overrides must name a device and an op (or op type) of the table (one line otherwise)."""
    if isinstance(overrides, pd.DataFrame):
        df, source = overrides.copy(), "<capability>"
    else:
        from hetsim.cost.measured import read_csv

        source = str(overrides)
        df = read_csv(Path(overrides), source)
    if not {"ep", "capable"} <= set(df.columns) or not {"op", "op_type"} & set(df.columns):
        raise HetsimError(f"{source}: a capability table needs columns ep, capable and op or op_type; "
                          f"has {list(df.columns)}")
    out = table.copy()
    eps, ops, types = set(out["ep"]), set(out["op"]), set(out["op_type"])
    for i, row in enumerate(df.to_dict(orient="records")):
        where = f"{source}: row {i + 2}"
        ep = str(row["ep"])
        if ep not in eps:
            raise HetsimError(f"{where}: ep {ep!r} is not a profiled device ({', '.join(sorted(eps))})")
        flag = _YES.get(str(row["capable"]).strip().lower())
        if flag is None:
            raise HetsimError(f"{where}: capable {row['capable']!r}; allowed: 1/0, true/false, yes/no")
        op = row.get("op")
        if op is not None and not (isinstance(op, float) and math.isnan(op)):
            if str(op) not in ops:
                raise HetsimError(f"{where}: op {str(op)[:60]!r} is not an op of the workload")
            sel = (out["op"] == str(op)) & (out["ep"] == ep)
        else:
            op_type = str(row.get("op_type"))
            if op_type not in types:
                raise HetsimError(f"{where}: op_type {op_type[:60]!r} is not an op type of the "
                                  f"workload ({', '.join(sorted(map(str, types))[:8])})")
            sel = (out["op_type"] == op_type) & (out["ep"] == ep)
        out.loc[sel, "capable"] = flag
        out.loc[sel, "evidence"] = f"set by {source}"
    return out


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
        return _op_from_sizes(n, inputs)
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


def _op_from_sizes(n: NodeRun, inputs: list[str]) -> dict[str, Any]:
    """One workload op of a node event without shapes (older profilers, custom execution
    providers): its bytes as the profile records them (``output_size``, ``activation_size``,
    ``parameter_size``), its output as a vector of that many bytes. Without dims there are no GEMM
    dims to count: a GEMM kind is imported as a memory-bound op (its measured time is what a
    measured cost model replays anyway); element-wise FLOPs count one per output byte's element
    at the 4 bytes hetsim assumes without a dtype."""
    from hetsim.workload.onnx_import import kind_of
    from hetsim.workload.ops import GEMM_KINDS, default_flops

    kind = kind_of(n.op_type) or "other"
    if kind in GEMM_KINDS or kind in ("concat", "add"):   # these need dims or several inputs
        kind = "other" if kind in GEMM_KINDS else "binary" if kind == "add" else "copy"
    elements = max(n.output_bytes // 4, 1)
    op: dict[str, Any] = {"name": n.node, "kind": kind, "op_type": n.op_type, "inputs": inputs,
                          "dims": [elements],
                          "flops": default_flops(kind, elements, n.activation_bytes // 4,
                                                 max(len(inputs), 1)),
                          "input_bytes": n.activation_bytes, "output_bytes": n.output_bytes}
    if n.parameter_bytes:
        op["weight_bytes"] = n.parameter_bytes
    return op


def workload_spec_from_profile(profiles: Mapping[str, Sequence[Profile]], name: str,
                               reference: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """A workload dict (the YAML format) rebuilt from profiled nodes: one generic op per node
    (Memcpy nodes are copies, not ops), kinds and GEMM dims from the op types and shapes
    (:func:`hetsim.workload.onnx_import.count_node`), bytes from the profile's sizes, edges from
    ``input_nodes`` (or, when the profile has none, the execution order: a chain)."""
    from hetsim.workload.onnx_import import DEFAULT_LAYER_KINDS, ORT_DTYPES

    if reference is not None:   # its sizes and shapes first: the nodes it ran are described by it
        profiles = {reference: profiles[reference],
                    **{d: f for d, f in profiles.items() if d != reference}}
    nodes, memcpy_src = _profiled_nodes(profiles)
    order = list(nodes.values())
    has_edges = all(n.input_nodes is not None for n in order)
    notes = []
    unshaped = [n.node for n in order if not n.out_shapes]
    if unshaped:
        notes.append(f"{len(unshaped)} profiled nodes have no output_type_shape: rebuilt from "
                     "their recorded sizes (output_size, activation_size, parameter_size), GEMMs "
                     "as memory-bound ops")
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


# -- ONNX function ops (HardSwish at opset >= 14, ...) ---------------------------------------
#: Separates a model node's name from the index and op type of a node of its function body.
FUNCTION_SEP = "/fn"


def _cpu_kernels() -> set[tuple[str, str, int, int]] | None:
    """(domain, op, first, last opset version) of every kernel ONNX Runtime's CPU provider has; None
    when this onnxruntime does not list them."""
    try:
        from onnxruntime.capi import _pybind_state as ort_c

        defs = ort_c.get_all_opkernel_def()
    except (ImportError, AttributeError):
        return None
    return {("" if d.domain == "ai.onnx" else d.domain, d.op_name, *d.version_range) for d in defs
            if d.provider == CPU_PROVIDER}


def function_op_nodes(model: Any) -> list[int]:
    """The indices of the nodes of ``model`` (an ``onnx.ModelProto``) that ONNX Runtime's CPU provider runs as their
    ONNX function body (no kernel for the op at the model's opset, a schema with a function body:
    HardSwish at opset >= 14). Their body's nodes get names of ONNX Runtime's making in a profile,
    which name no node of the model."""
    import onnx.defs

    kernels = _cpu_kernels()
    if kernels is None:
        return []
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in model.opset_import}
    out = []
    for i, node in enumerate(model.graph.node):
        domain = "" if node.domain == "ai.onnx" else node.domain
        if domain not in opsets:
            continue
        try:
            schema = onnx.defs.get_schema(node.op_type, opsets[domain], domain)
        except onnx.defs.SchemaError:
            continue
        if not schema.function_body.node:   # no body (or one that depends on the context)
            continue
        v = schema.since_version
        if not any(d == domain and op == node.op_type and lo <= v <= hi for d, op, lo, hi in kernels):
            out.append(i)
    return out


def inline_function_ops(model: Any) -> tuple[Any, dict[str, str]]:
    """A copy of ``model`` with every :func:`function_op_nodes` node replaced by its function body,
    the body's nodes named ``<node>/fn<k>_<op type>`` so that their profiled times map back to the
    model's node; and that map (body node -> model node). Unnamed nodes first get the names ONNX
    Runtime gives them (``<OpType>_<index among non-Constant nodes>``, as the importer names them),
    so inlining does not shift them."""
    import onnx
    import onnx.defs

    targets = set(function_op_nodes(model))
    if not targets:
        return model, {}
    out = onnx.ModelProto()
    out.CopyFrom(model)
    opsets = {("" if o.domain == "ai.onnx" else o.domain): o.version for o in out.opset_import}
    index = 0
    for node in out.graph.node:
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            continue
        if not node.name:
            node.name = f"{node.op_type}_{index}"
        index += 1
    aliases: dict[str, str] = {}
    new_nodes = []
    for i, node in enumerate(out.graph.node):
        if i not in targets:
            new_nodes.append(node)
            continue
        domain = "" if node.domain == "ai.onnx" else node.domain
        schema = onnx.defs.get_schema(node.op_type, opsets[domain], domain)
        body = schema.function_body
        given = {a.name: a for a in node.attribute}
        rename = {f: a for f, a in zip(body.input, node.input, strict=False)}
        rename.update({f: "" for f in list(body.input)[len(node.input):]})   # optional, absent
        rename.update({f: a for f, a in zip(body.output, node.output, strict=False)})
        for k, b in enumerate(body.node):
            n = onnx.NodeProto()
            n.CopyFrom(b)
            n.name = f"{node.name}{FUNCTION_SEP}{k}_{b.op_type}"
            for seq in (n.input, n.output):
                for i, t in enumerate(seq):
                    seq[i] = rename.setdefault(t, f"{node.name}{FUNCTION_SEP}:{t}") if t else t
            attrs = []
            for a in n.attribute:
                if a.ref_attr_name:   # an attribute of the function: the node's, else the default
                    src = given.get(a.ref_attr_name)
                    if src is None:
                        default = schema.attributes.get(a.ref_attr_name)
                        if default is None or not default.default_value.name:
                            continue
                        src = default.default_value
                    a2 = onnx.AttributeProto()
                    a2.CopyFrom(src)
                    a2.name = a.name
                    attrs.append(a2)
                else:
                    attrs.append(a)
            del n.attribute[:]
            n.attribute.extend(attrs)
            aliases[n.name] = node.name
            new_nodes.append(n)
    del out.graph.node[:]
    out.graph.node.extend(new_nodes)
    return out, aliases


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
    those paths. Graph optimizations are off, so the profiled nodes are the model's nodes (a
    function op ONNX Runtime runs as its body is inlined first: :func:`inline_function_ops`).
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
    # Function ops ONNX Runtime would run as their body (HardSwish at opset >= 14) are inlined here,
    # their body's nodes named after the model's node, so that the import maps them back.
    proto, _ = inline_function_ops(proto)
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


__all__ = ["CPU_PROVIDER", "MeasuredCosts", "function_op_nodes", "inline_function_ops", "NodeRun", "Profile", "import_ort_profiles",
           "random_inputs", "read_ort_profile", "run_ort_profiles", "workload_spec_from_profile"]
