"""Calibrate a board: fit a platform's cost-model parameters to measured times (``hetsim calibrate
platform``, docs/calibrate.md).

The inputs are a platform YAML with the hardware facts (core types, clocks, cores, memories) and a
tidy table of measured times (:mod:`hetsim.calibrate.table`): per layer or per op on an EP at a
clock, whole networks on one EP, pipelines. Every row is predicted by the cost model on the
platform (a layer's time, an op's, a frame's, a pipeline's throughput by the closed form) and the
parameters are fitted by :func:`hetsim.calibrate.fit_overrides` (least squares on log ratios, the
same optimizer the papers' fits use).

What is fitted comes in **mechanisms**, each switchable, each a platform field whose absence is the
model without it:

* ``base``: one GEMM efficiency per core type, its per-op overhead and its multicore efficiency
  at every measured core count (what a board fitted "the Pipe-it way" has). Always on.
* ``kinds``: per-kind and per-shape terms, so that several networks fit at once: a GEMM
  efficiency per conv kernel shape (``roofline.kind_efficiency.conv3x3``), the fully connected
  layers' streaming rate (``gemv_GBps``), depthwise efficiency, per-kind rates of the memory-bound
  kernels (``kind_GBps``), the per-GEMM overhead.
* ``clock``: the share of compute time that does not follow the core clock
  (``roofline.clock_independent_share``; t = a + b/f), from rows at two or more clocks.
* ``input``: the per-frame input stage (``core_types[].input_stage``: fixed_us + Mcycles / f),
  from whole-network or pipeline rows (a frame's time beyond its layers').
* ``feeder``: the first stage's share lost to the feeder thread (``core_types[].feeder_share``),
  from layers measured both as a first and as a later stage (or pipelines).

``auto`` switches on every mechanism the rows can identify. :func:`ablation` refits with each one
off; :func:`holdout` fits without one network and scores it (per-layer and pipeline errors, rank
correlation, the regret of the pipeline hetsim would pick).
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from hetsim.calibrate.fit import Fit, fit_overrides
from hetsim.cost import CostModel, make_cost_model
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform, load_platform
from hetsim.platform.params import by_cores

#: The mechanisms, in the order they are reported.
MECHANISMS = ("kinds", "clock", "input", "feeder")
MECHANISM_TEXT = {
    "base": "one GEMM efficiency, per-op overhead and multicore efficiency per core type",
    "kinds": "per-kind and per-shape terms (conv shapes, fc streaming, depthwise, memory-bound kernels)",
    "clock": "clock-independent share of compute time (t = a + b/f), from two or more clocks",
    "input": "per-frame input stage (fixed_us + Mcycles / f) before the first layer",
    "feeder": "the first stage's share lost to the feeder thread",
}
#: Cost models the parameter sets know.
COST_MODELS = ("roofline", "gemm2")
#: A conv kernel shape gets an efficiency of its own when its convs hold at least this share of a
#: core type's conv MACs in the rows (smaller ones keep gemm_efficiency: too little to fit).
SHAPE_MIN_SHARE = 0.05
#: A memory-bound kind gets a rate of its own when it holds at least this share of a core type's
#: predicted time in the rows.
KIND_MIN_SHARE = 0.005
#: Kinds priced by their bytes in the roofline (``kind_GBps``) that the ``kinds`` mechanism fits.
MEMORY_KINDS = ("relu", "maxpool", "avgpool", "lrn", "bn", "add", "concat", "softmax")
#: How much a core type's clocks must differ (relative) to count as two clocks.
_CLOCK_TOL = 1e-3


# -- rows resolved against the platform ------------------------------------------------------------
@dataclass(frozen=True)
class Row:
    """One measured row, resolved: where it ran, what it measured, in which unit."""

    index: int
    kind: str                        # layer | op | network | pipeline
    network: str
    workload: Any
    ep: ExecutionPlace | None        # layer, op, network rows
    state: Mapping[str, str]         # cluster -> level (layer, op, network rows)
    dvfs: str | None                 # pipeline rows: a preset or cluster=level,...
    layer: int | None                # 0-based
    op: Any
    mapping: str                     # network rows: EP:1-N; pipeline rows: as given
    stage: int
    measured: float                  # in ``unit``
    unit: str                        # s | fps
    weight: float
    source: str
    core_types: tuple[str, ...]      # the core types whose parameters the row depends on
    clock: str                       # for the report: "1800 MHz", "governor1", "default"
    given_label: str = ""

    @property
    def label(self) -> str:
        if self.given_label:
            return self.given_label
        what = (f"layer {(self.layer or 0) + 1}" if self.kind == "layer" else f"op {self.op.name}"
                if self.kind == "op" else self.mapping)
        where = f" on {self.ep}" if self.kind in ("layer", "op") else ""
        return f"{self.network} {what}{where} @ {self.clock}"

    @property
    def place(self) -> str:
        """Cluster or accelerator (the pipeline rows: ``pipeline``)."""
        return self.ep.place if self.ep is not None else "pipeline"


def _load_workload(name: str, cache: dict):
    from hetsim.workload import load_workload

    if name not in cache:
        cache[name] = load_workload(name)
    return cache[name]


def _level_of(platform: Platform, cluster: str, freq: float, dvfs: str, where: str) -> tuple[str, float]:
    c = platform.cluster(cluster)
    t = platform.core_type(c.core_type)
    if dvfs:
        try:
            lvl = t.level(dvfs)
        except KeyError:
            raise HetsimError(f"{where}: column dvfs {dvfs!r} is not a level of core type {t.name} (cluster "
                              f"{cluster}); levels: {', '.join(lv.name for lv in t.dvfs)}") from None
        return lvl.name, lvl.freq_MHz
    if not math.isnan(freq):
        for lvl in t.dvfs:
            if abs(lvl.freq_MHz - freq) <= max(0.5, 1e-4 * freq):
                return lvl.name, lvl.freq_MHz
        raise HetsimError(f"{where}: column freq_MHz {freq:g} is not a clock of core type {t.name} (cluster "
                          f"{cluster}); its DVFS levels: "
                          + ", ".join(f"{lv.name} {lv.freq_MHz:g}" for lv in t.dvfs))
    lvl = t.level(c.dvfs)
    return lvl.name, lvl.freq_MHz


def resolve_rows(platform: Platform, table: pd.DataFrame, workloads: dict | None = None,
                 source: str | os.PathLike | None = None) -> list[Row]:
    """Check every row against ``platform`` (loaded from ``source``, which pipeline rows in a DVFS
    setting reload) and its network, and resolve it (one line per error)."""
    from hetsim.mapping import Pipeline, load_mapping

    workloads = {} if workloads is None else workloads
    cost = make_cost_model(platform, model="roofline")
    rows: list[Row] = []
    for i, r in enumerate(table.to_dict("records")):
        where = r["source"]
        try:
            w = _load_workload(r["network"], workloads)
        except HetsimError as e:
            raise HetsimError(f"{where}: column network {r['network']!r}: {e}") from None
        ep, state, dvfs, layer, op, clock = None, {}, None, None, None, "default"
        mapping = r["mapping"]
        types: tuple[str, ...] = ()
        if r["kind"] != "pipeline":
            try:
                ep = platform.ep(r["ep"])
            except HetsimError as e:
                raise HetsimError(f"{where}: column ep {r['ep']!r}: {e}") from None
            if ep.cluster is not None:
                level, freq = _level_of(platform, ep.cluster, r["freq_MHz"], r["dvfs"], where)
                state = {ep.cluster: level}
                clock = f"{freq:g} MHz"
                types = (platform.cluster(ep.cluster).core_type,)
            else:
                if r["dvfs"] or not math.isnan(r["freq_MHz"]):
                    raise HetsimError(f"{where}: EP {ep} is an accelerator; calibrate platform reads clocks "
                                      "of clusters only")
                types = (f"accelerator:{ep.accelerator}",)
            if r["kind"] == "layer":
                text = r["layer"]
                if text.isdigit():
                    layer = int(text) - 1
                    if not 0 <= layer < w.num_layers:
                        raise HetsimError(f"{where}: column layer {text}: {w.name} has layers 1-{w.num_layers}")
                else:
                    names = [lay.name for lay in w.layers]
                    if text not in names:
                        raise HetsimError(f"{where}: column layer {text!r} is not a layer of {w.name} "
                                          f"(an index 1-{w.num_layers} or a name: {', '.join(names[:4])}, ...)")
                    layer = names.index(text)
            elif r["kind"] == "op":
                ops = {o.name: o for o in w.ops}
                if r["op"] in ops:
                    op = ops[r["op"]]
                else:
                    names = [lay.name for lay in w.layers]
                    if r["op"] not in names:
                        raise HetsimError(f"{where}: column op {r['op']!r} is not an op or a layer of {w.name}")
                    layer = names.index(r["op"])      # ARM-CL names a graph node by its layer
            else:
                mapping = f"{ep}:1-{w.num_layers}"
        else:
            dvfs = r["dvfs"] or None
            try:
                p = load_platform(source or platform.name, None, dvfs) if dvfs else platform
                pipe = load_mapping(mapping, p, w, cost)
            except HetsimError as e:
                raise HetsimError(f"{where}: {e}") from None
            if not isinstance(pipe, Pipeline):
                raise HetsimError(f"{where}: column mapping {mapping!r}: calibration fits pipelines, not placements")
            types = tuple(dict.fromkeys(p.cluster(s.ep.cluster).core_type if s.ep.cluster else
                                        f"accelerator:{s.ep.accelerator}" for s in pipe.stages))
            clock = dvfs or "default"
        kind = "layer" if r["kind"] == "op" and op is None else r["kind"]
        rows.append(Row(i, kind, r["network"], w, ep, state, dvfs, layer, op, mapping, int(r["stage"]),
                        float(r["value"]), r["unit"], float(r["weight"]), where, types, clock,
                        str(r.get("label") or "")))
    return rows


# -- predictions -----------------------------------------------------------------------------------
CostFactory = Callable[[Platform], CostModel]


def cost_factory(cost: str | CostFactory) -> CostFactory:
    if callable(cost):
        return cost
    if cost not in COST_MODELS:
        raise HetsimError(f"cost model {cost!r}: calibrate platform fits {', '.join(COST_MODELS)}")
    return lambda platform: make_cost_model(platform, model=cost)


def frame_period_s(cost: CostModel, workload, ep: ExecutionPlace, state: Mapping[str, str] | None = None) -> float:
    """One frame of ``workload`` alone on ``ep`` (a one-stage pipeline): its layers (slowed by the
    feeder) and the input stage, on the same EP before them or on ``runtime.input_ep`` in parallel."""
    layers = float(cost.layer_times(workload, ep, state).sum())
    factor = cost.feeder_factor(ep)
    if factor != 1.0:
        layers *= factor
    inp = cost.input_ep(ep)
    if inp is None:
        return layers
    t = cost.input_time(inp, state)
    return layers + t if inp == ep else max(layers, t)


def predict_rows(rows: Sequence[Row], platform_for: Callable[[str | None], Platform],
                 factory: CostFactory) -> np.ndarray:
    """Every row's prediction in its unit (s or fps) on the platform ``platform_for(dvfs)``."""
    from hetsim.analytic import evaluate_pipeline
    from hetsim.mapping import Pipeline, load_mapping

    costs: dict[int, CostModel] = {}

    def cost_of(p: Platform) -> CostModel:
        c = costs.get(id(p))
        if c is None:
            c = costs[id(p)] = factory(p)
        return c

    platforms: dict[str | None, Platform] = {}

    def platform_at(dvfs: str | None) -> Platform:
        p = platforms.get(dvfs)
        if p is None:
            p = platforms[dvfs] = platform_for(dvfs)
        return p

    out = np.empty(len(rows))
    for k, r in enumerate(rows):
        if r.kind == "pipeline":
            p = platform_at(r.dvfs)
            cost = cost_of(p)
            pipe = load_mapping(r.mapping, p, r.workload, cost)
            assert isinstance(pipe, Pipeline)   # resolve_rows refused placements
            fps = evaluate_pipeline(p, r.workload, pipe, cost).throughput_fps
            out[k] = fps if r.unit == "fps" else 1.0 / fps
            continue
        cost = cost_of(platform_at(None))
        assert r.ep is not None
        if r.kind == "network":
            period = frame_period_s(cost, r.workload, r.ep, r.state)
            out[k] = 1.0 / period if r.unit == "fps" else period
            continue
        if r.kind == "layer":
            t = float(cost.layer_times(r.workload, r.ep, r.state)[r.layer])
        else:
            cost.bind(r.workload)
            t = cost.op_time(r.op, r.ep, r.state)
        if r.stage == 1:
            f = cost.feeder_factor(r.ep)
            if f != 1.0:
                t *= f
        out[k] = t
    return out


# -- what the rows can identify, and the parameters -------------------------------------------------
@dataclass
class ParameterSet:
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    x0: dict[str, float] = field(default_factory=dict)
    fixed: list[str] = field(default_factory=list)
    mechanisms: dict[str, list[str]] = field(default_factory=dict)   # mechanism -> core types it covers

    def add(self, mechanism: str, owner: str, key: str, bounds: tuple[float, float], start: float | None) -> None:
        lo, hi = bounds
        self.bounds[key] = bounds
        s = start if start is not None and start > 0 else math.sqrt(lo * hi)
        self.x0[key] = min(max(s, lo), hi)
        owners = self.mechanisms.setdefault(mechanism, [])
        if owner not in owners:
            owners.append(owner)


def _get(data: dict, path: str) -> Any:
    """The value at a dotted override path of a raw platform dict (None when absent)."""
    node: Any = data
    for part in path.split("."):
        if isinstance(node, list):
            if part.isdigit() and not any(isinstance(x, dict) for x in node):
                node = node[int(part)] if int(part) < len(node) else None
            else:
                node = next((x for x in node if isinstance(x, dict) and x.get("name") == part), None)
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
        if node is None:
            return None
    return node


def identifiable(platform: Platform, rows: Sequence[Row]) -> dict[str, list[str]]:
    """Mechanism -> the core types whose rows can identify it (``kinds`` and ``base``: every core
    type measured; ``clock``: two or more clocks; ``input``: a frame or pipeline row with the core
    type first; ``feeder``: rows with it first and rows with it later)."""
    out: dict[str, list[str]] = {m: [] for m in ("base", *MECHANISMS)}
    clocks: dict[str, set[float]] = {}
    first: dict[str, bool] = {}
    later: dict[str, bool] = {}
    frames: set[str] = set()
    for r in rows:
        for t in r.core_types:
            if t not in out["base"]:
                out["base"].append(t)
        if r.ep is not None and r.ep.cluster is not None:
            t = r.core_types[0]
            lvl = platform.core_type(t).level(r.state.get(r.ep.cluster))
            clocks.setdefault(t, set()).add(lvl.freq_MHz)
            if r.kind == "network":
                frames.add(t)
            (first if r.stage == 1 else later)[t] = True
        elif r.kind == "pipeline":
            types = r.core_types
            if types and not types[0].startswith("accelerator:"):
                frames.add(types[0])
                first[types[0]] = True
            for t in types[1:]:
                later[t] = True
    out["kinds"] = [t for t in out["base"] if not t.startswith("accelerator:")]
    out["clock"] = [t for t, fs in clocks.items() if len(fs) >= 2 and (max(fs) - min(fs)) / max(fs) > _CLOCK_TOL]
    out["input"] = sorted(frames)
    out["feeder"] = [t for t in first if later.get(t)]
    return out


def parameter_set(platform: Platform, data: dict, rows: Sequence[Row], mechanisms: Sequence[str],
                  cost: str = "roofline", factory: CostFactory | None = None) -> ParameterSet:
    """The parameters ``mechanisms`` fit on the core types the rows measure, with bounds, starting
    values (the platform's own, inside the bounds) and the fixed overrides that give list entries
    a place (a multicore curve as long as the cluster)."""
    if cost not in COST_MODELS:
        raise HetsimError(f"cost model {cost!r}: calibrate platform fits {', '.join(COST_MODELS)}")
    ids = identifiable(platform, rows)
    ps = ParameterSet()
    block = cost
    counts: dict[str, set[int]] = {}
    for r in rows:
        if r.ep is not None and r.ep.cluster is not None:
            counts.setdefault(r.core_types[0], set()).add(r.ep.cores)
        elif r.kind == "pipeline":
            p = platform
            for s in _stages(r, p):
                if s.cluster is not None:
                    counts.setdefault(p.cluster(s.cluster).core_type, set()).add(s.cores)
    for t in ids["base"]:
        if t.startswith("accelerator:"):
            a = t.split(":", 1)[1]
            base = f"accelerators.{a}.roofline"
            ps.add("base", t, f"{base}.efficiency", (0.005, 1.0), _get(data, f"{base}.efficiency"))
            ps.add("base", t, f"{base}.op_overhead_us", (1e-3, 1e5), _get(data, f"{base}.op_overhead_us") or 1.0)
            continue
        prefix = f"core_types.{t}.{block}"
        max_cores = max(c.cores for c in platform.clusters if c.core_type == t)
        measured = sorted(counts.get(t, {1}))
        eff_key = "gemm_efficiency" if block == "roofline" else "kernel_efficiency"
        ps.add("base", t, f"{prefix}.{eff_key}", (0.005, 1.0), _get(data, f"{prefix}.{eff_key}"))
        ps.add("base", t, f"{prefix}.op_overhead_us", (1e-3, 1e5), _get(data, f"{prefix}.op_overhead_us") or 1.0)
        _curve(ps, "base", t, f"{prefix}.parallel_efficiency", data, measured, max_cores, (0.05, 1.0), 1.0, False)
    for t in ids["kinds"] if "kinds" in mechanisms else ():
        prefix = f"core_types.{t}.{block}"
        max_cores = max(c.cores for c in platform.clusters if c.core_type == t)
        measured = sorted(counts.get(t, {1}))
        shapes, kinds, has_dw, has_fc = _coverage(platform, rows, t, factory)
        if block == "roofline":
            for shape in shapes:
                ps.add("kinds", t, f"{prefix}.kind_efficiency.{shape}", (0.005, 1.0),
                       _get(data, f"{prefix}.kind_efficiency.{shape}") or _get(data, f"{prefix}.gemm_efficiency"))
            ps.add("kinds", t, f"{prefix}.gemm_overhead_us", (1e-3, 1e5), _scalar(_get(data, f"{prefix}.gemm_overhead_us")) or 1.0)
            if has_dw:
                ps.add("kinds", t, f"{prefix}.dw_efficiency", (1e-4, 1.0), _get(data, f"{prefix}.dw_efficiency")
                       or _get(data, f"{prefix}.gemm_efficiency"))
                _curve(ps, "kinds", t, f"{prefix}.dw_parallel_efficiency", data, measured, max_cores, (0.05, 1.0),
                       1.0, False, fallback=f"{prefix}.parallel_efficiency")
            if has_fc:
                _curve(ps, "kinds", t, f"{prefix}.gemv_GBps", data, measured, max_cores, (0.05, 500.0), 5.0, True)
            for k in kinds:
                _curve(ps, "kinds", t, f"{prefix}.kind_GBps.{k}", data, measured, max_cores, (0.01, 500.0), 5.0, True)
        else:
            if has_dw:
                ps.add("kinds", t, f"{prefix}.dw_macs_per_cycle", (1e-3, 64.0), _get(data, f"{prefix}.dw_macs_per_cycle"))
            if has_fc:
                ps.add("kinds", t, f"{prefix}.gemv_GBps_per_core", (0.05, 500.0),
                       _scalar(_get(data, f"{prefix}.gemv_GBps_per_core")) or 5.0)
            for k in kinds:
                ps.add("kinds", t, f"{prefix}.kind_cycles_per_byte.{k}", (1e-3, 100.0),
                       _get(data, f"{prefix}.kind_cycles_per_byte.{k}") or 0.5)
            ps.add("kinds", t, f"{prefix}.gemm_call_us", (1e-3, 1e5), _scalar(_get(data, f"{prefix}.gemm_call_us")) or 1.0)
    if "clock" in mechanisms and block == "roofline":
        for t in ids["clock"]:
            key = f"core_types.{t}.roofline.clock_independent_share"
            ps.add("clock", t, key, (1e-3, 0.95), _get(data, key) or 0.2)
    if "input" in mechanisms:
        for t in ids["input"]:
            base = f"core_types.{t}.input_stage"
            ps.add("input", t, f"{base}.fixed_us", (1e-2, 1e7), _get(data, f"{base}.fixed_us") or 100.0)
            if t in ids["clock"]:
                ps.add("input", t, f"{base}.Mcycles", (1e-4, 1e5), _get(data, f"{base}.Mcycles") or 0.1)
    if "feeder" in mechanisms:
        for t in ids["feeder"]:
            key = f"core_types.{t}.feeder_share"
            ps.add("feeder", t, key, (1e-3, 0.9), _get(data, key) or 0.1)
    return ps


def _scalar(v) -> float | None:
    if isinstance(v, list):
        return float(v[0]) if v else None
    return float(v) if isinstance(v, (int, float)) else None


def _curve(ps: ParameterSet, mechanism: str, owner: str, key: str, data: dict, measured: list[int], max_cores: int,
           bounds: tuple[float, float], default: float, scales: bool, fallback: str | None = None) -> None:
    """Fit a per-core-count list (entry n-1 for n cores) at the measured counts: the whole list is
    fixed first (the platform's own curve, as long as the cluster), then each measured entry is a
    parameter. ``scales``: a rate whose scalar form is one core's (n cores: n x it)."""
    current = _get(data, key)
    if current is None and fallback is not None:
        current = _get(data, fallback)
    if current is None:
        current = default
    full = [float(by_cores(current, n, scales)) for n in range(1, max_cores + 1)]
    if not scales and len(measured) == 1 and measured[0] == 1 and key.endswith("parallel_efficiency"):
        return   # one core measured: the curve's first entry is 1 by definition, nothing to fit
    ps.fixed.append(f"{key}={full!r}")
    for n in measured:
        if n > max_cores:
            continue
        if not scales and n == 1:
            continue   # a multicore efficiency is 1 on one core
        ps.add(mechanism, owner, f"{key}.{n - 1}", bounds, full[n - 1])


def _stages(r: Row, platform: Platform) -> list[ExecutionPlace]:
    from hetsim.mapping import Pipeline, load_mapping

    pipe = load_mapping(r.mapping, platform, r.workload, make_cost_model(platform, model="roofline"))
    assert isinstance(pipe, Pipeline)
    return [s.ep for s in pipe.stages]


def _coverage(platform: Platform, rows: Sequence[Row], core_type: str,
              factory: CostFactory | None) -> tuple[list[str], list[str], bool, bool]:
    """What a core type's rows cover: conv shapes with >= SHAPE_MIN_SHARE of its conv MACs,
    memory-bound kinds with >= KIND_MIN_SHARE of its predicted time, whether dw and fc ops occur."""
    cost = (factory or cost_factory("roofline"))(platform)
    conv_macs: dict[str, float] = {}
    kind_s: dict[str, float] = {}
    total = 0.0
    has_dw = has_fc = False
    seen: set[tuple] = set()
    for r in rows:
        eps: list[ExecutionPlace] = []
        if r.ep is not None:
            if r.core_types[0] == core_type:
                eps = [r.ep]
        elif r.kind == "pipeline":
            eps = [e for e in _stages(r, platform) if e.cluster and platform.cluster(e.cluster).core_type == core_type]
        for ep in eps:
            ops = ([r.op] if r.op is not None else r.workload.layers[r.layer].ops if r.layer is not None
                   else r.workload.ops)
            for op in ops:
                key = (id(r.workload), op.name, ep.name)
                if key in seen:
                    continue
                seen.add(key)
                t = cost.op_time(op, ep)
                total += t
                if op.kind == "conv" and op.macs:
                    shape = f"conv{op.kernel[0]}x{op.kernel[1]}"
                    conv_macs[shape] = conv_macs.get(shape, 0.0) + op.macs
                elif op.kind == "dw":
                    has_dw = True
                elif op.kind == "fc":
                    has_fc = True
                elif op.kind in MEMORY_KINDS:
                    kind_s[op.kind] = kind_s.get(op.kind, 0.0) + t
    all_conv = sum(conv_macs.values())
    shapes = sorted(s for s, m in conv_macs.items() if all_conv and m / all_conv >= SHAPE_MIN_SHARE)
    kinds = sorted(k for k, s in kind_s.items() if total and s / total >= KIND_MIN_SHARE)
    return shapes, kinds, has_dw, has_fc


# -- the fit ---------------------------------------------------------------------------------------
@dataclass
class BoardFit:
    """A calibrated platform: the values, the rows with their predictions, what was fitted on what."""

    source: str                              # the platform YAML (or name) fitted
    data: dict                               # its raw dict (migrated)
    values: dict[str, float]
    fixed: list[str]
    mechanisms: list[str]                    # on, in MECHANISMS order
    covered: dict[str, list[str]]            # mechanism -> core types it was fitted for
    table: pd.DataFrame                      # the rows: measured, predicted, error
    cost: str = "roofline"
    inputs: list[str] = field(default_factory=list)   # what the rows came from (files)
    excluded: list[str] = field(default_factory=list)  # networks held out
    factory: CostFactory | None = None                 # prices the rows when not ``cost`` (a paper's model)
    left_out: list[str] = field(default_factory=list)  # rows the cost model cannot run where they ran

    @property
    def overrides(self) -> list[str]:
        return [*self.fixed, *(f"{k}={v!r}" for k, v in self.values.items())]

    def platform(self, dvfs: str | None = None) -> Platform:
        return load_platform(self.source, self.overrides, dvfs)

    def summary(self, by: str) -> pd.DataFrame:
        """Median |error|, median error, max |error| and rows, per ``by`` (network, place, ep,
        clock, kind)."""
        return error_summary(self.table, by)

    def to_fit(self) -> Fit:
        """The frame rows as a :class:`hetsim.calibrate.Fit` (stated vs fitted throughput, what
        :func:`~hetsim.calibrate.fit_platform` returns): the papers' residual tables read it."""
        t = self.table[self.table.kind.isin(["network", "pipeline"])]
        fps = t.unit == "fps"
        table = pd.DataFrame({
            "label": t.label.tolist(), "workload": t.network.tolist(), "mapping": t.mapping.tolist(),
            "dvfs": t.dvfs.tolist(),
            "stated_fps": t.measured.where(fps, 1.0 / t.measured).tolist(),
            "fitted_fps": t.predicted.where(fps, 1.0 / t.predicted).tolist(),
        })
        table["error"] = table["fitted_fps"] / table["stated_fps"] - 1
        return Fit(self.source, dict(self.values), table, list(self.fixed), self.cost)

    def fitted_dict(self, name: str | None = None) -> dict:
        """The platform's raw dict with the fit applied and its provenance recorded."""
        from hetsim.platform.loader import apply_override

        data = copy.deepcopy(self.data)
        for ov in self.overrides:
            apply_override(data, ov, source=self.source)
        if name:
            data["name"] = name
        networks = sorted(set(self.table.network))
        eps = sorted(set(self.table.ep[self.table.ep != ""]))
        clocks = sorted(set(self.table.clock))
        data["provenance"] = {
            "cost_parameters": "fitted",
            "source": "; ".join(self.inputs) or "measurements",
            "fitted_on": [f"networks: {', '.join(networks)}", f"EPs: {', '.join(eps) or 'pipelines only'}",
                          f"clocks: {', '.join(clocks)}",
                          "rows: " + ", ".join(f"{(self.table.kind == k).sum()} {k}" for k in
                                               ("layer", "op", "network", "pipeline") if (self.table.kind == k).any()),
                          *([f"held out: {', '.join(self.excluded)}"] if self.excluded else []),
                          f"cost model: {self.cost}"],
            "mechanisms": ["base", *self.mechanisms],
        }
        data.setdefault("sources", [])
        data["sources"] = [*data["sources"], "hetsim calibrate platform: " + ("; ".join(self.inputs) or "measurements")]
        return data

    def yaml_text(self, name: str | None = None) -> str:
        import yaml

        data = self.fitted_dict(name)
        med = np.median(np.abs(self.table.error)) if len(self.table) else float("nan")
        header = [f"# Written by `hetsim calibrate platform` from {self.source} (its comments are not carried over).",
                  f"# Fitted: {', '.join(['base', *self.mechanisms])} ({self.cost} model), "
                  f"{len(self.table)} rows, median |error| {med:.1%}.",
                  "# Fitted values:"]
        header += [f"#   {k} = {v:.6g}" for k, v in self.values.items()]
        return "\n".join(header) + "\n" + yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=110)


def calibrate_platform(platform: str | os.PathLike, table: pd.DataFrame, mechanisms: str | Sequence[str] = "auto",
                       cost: str = "roofline", factory: CostFactory | None = None,
                       exclude: Sequence[str] = (), fixed: Sequence[str] = (),
                       extra: Mapping[str, tuple[float, float]] | None = None,
                       parameters: Mapping[str, tuple[float, float]] | None = None,
                       x0: Mapping[str, float] | None = None, loss: str = "linear",
                       inputs: Sequence[str] = (), workloads: dict | None = None) -> BoardFit:
    """Fit ``platform`` (a YAML path or name) to the rows of ``table`` (:mod:`hetsim.calibrate.table`),
    leaving out the networks of ``exclude``.

    ``mechanisms``: ``auto`` (all the rows can identify), ``none`` or a list of :data:`MECHANISMS`.
    ``cost``: the model whose parameters are fitted (``factory`` prices rows with another model
    reading the same blocks: a paper's ground truth). ``fixed``: overrides set before the fit;
    ``extra``: more parameters (override key -> bounds); ``parameters``: exactly these (no
    mechanism's), with starting values ``x0`` (default: the middle of the bounds on a log scale).
    """
    from hetsim.platform.loader import migrate, resolve_platform
    from hetsim.validation import read_yaml

    path = resolve_platform(platform)
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise HetsimError(f"{path}: not a platform (a mapping at the top)")
    data = copy.deepcopy(data)
    migrate(data)
    base = load_platform(path, list(fixed))
    subset = table[~table.network.isin(list(exclude))] if exclude else table
    if subset.empty:
        raise HetsimError(f"no rows left to fit once {', '.join(exclude)} is held out")
    rows = resolve_rows(base, subset, workloads, path)
    fac = factory or cost_factory(cost)
    rows, left_out = runnable_rows(rows, fac(base))
    on: list[str]
    if parameters is not None:
        ps = ParameterSet(dict(parameters), dict(x0 or {}), [], {"base": []})
        on = []
    else:
        ids = identifiable(base, rows)
        if cost == "gemm2":
            ids["clock"] = []   # gemm2 splits an op's time by the clock each part follows (gemm2.clocks)
        on = _mechanisms(mechanisms, ids, cost)
        ps = parameter_set(base, data, rows, on, cost, fac)
        if x0:
            ps.x0.update({k: v for k, v in x0.items() if k in ps.bounds})
    for k, b in (extra or {}).items():
        ps.bounds[k] = b
    fixed_all = [*fixed, *ps.fixed]
    start = None if parameters is not None and not x0 else ps.x0
    values: dict[str, float] = {}
    predicted = np.empty(len(rows))
    # Core types no row links (a pipeline over two clusters does) are fitted one at a time: their
    # parameters move only their own rows (Pipe-it's per-cluster fits), and each fit is smaller.
    for group_rows, keys in _groups(rows, list(ps.bounds)):
        bounds = {k: ps.bounds[k] for k in keys}
        others = [f"{k}={v!r}" for k, v in (start or {}).items() if k not in bounds and k in ps.bounds]
        sub = [r for r in group_rows]

        def predict(platform_for: Callable[[str | None], Platform], sub=sub) -> np.ndarray:
            return predict_rows(sub, platform_for, fac)

        if bounds:
            got, pred = fit_overrides(str(path), bounds, predict, np.array([r.measured for r in sub]),
                                      np.array([r.weight for r in sub]),
                                      None if start is None else {k: start[k] for k in keys if k in start},
                                      [*fixed_all, *others], loss=loss)
            values.update(got)
        else:
            pred = predict(lambda dvfs: load_platform(path, fixed_all, dvfs))
        for r, v in zip(sub, pred, strict=True):
            predicted[r.index] = v
    values = {k: values[k] for k in ps.bounds}
    covered = {m: ts for m, ts in ps.mechanisms.items()}
    order = sorted(range(len(rows)), key=lambda i: rows[i].index)
    return BoardFit(os.fspath(platform), data, values, fixed_all, on, covered,
                    rows_table([rows[i] for i in order], predicted[[rows[i].index for i in order]]), cost,
                    list(inputs), list(exclude), factory, left_out)


def runnable_rows(rows: Sequence[Row], cost: CostModel) -> tuple[list[Row], list[str]]:
    """The rows ``cost`` can price, renumbered, and the labels of the others: an op measured on an
    EP the model says cannot run it (a multi-thread ONNX Runtime profile times every op, where a
    model may run only some op types on that EP), or a layer or whole network with such an op."""
    kept: list[Row] = []
    left: list[str] = []
    for r in rows:
        if r.kind == "pipeline" or r.ep is None:
            ok = True
        elif r.kind == "op":
            ok = cost.supports(r.op, r.ep)
        else:
            ops = r.workload.layers[r.layer].ops if r.kind == "layer" else r.workload.ops
            ok = all(cost.supports(op, r.ep) for op in ops)
        if ok:
            kept.append(replace(r, index=len(kept)))
        else:
            left.append(r.label)
    if not kept:
        raise HetsimError(f"no row left to fit: the cost model cannot run any of the {len(rows)} rows where they "
                          f"were measured (e.g. {left[0]})")
    return kept, left


def _owner(key: str) -> str | None:
    """The core type or accelerator a parameter belongs to (None: the platform as a whole)."""
    parts = key.split(".")
    if len(parts) > 2 and parts[0] == "core_types":
        return parts[1]
    if len(parts) > 2 and parts[0] == "accelerators":
        return f"accelerator:{parts[1]}"
    return None


def _groups(rows: Sequence[Row], keys: list[str]) -> list[tuple[list[Row], list[str]]]:
    """Rows and parameters that must be fitted together: core types linked by a row, and every
    parameter of the platform as a whole with everything."""
    import networkx as nx

    g = nx.Graph()
    for r in rows:
        g.add_nodes_from(r.core_types)
        nx.add_path(g, r.core_types)
    owners = {k: _owner(k) for k in keys}
    if any(o is None for o in owners.values()) or g.number_of_nodes() == 0:
        return [(list(rows), keys)]
    out = []
    for comp in sorted(nx.connected_components(g), key=lambda c: sorted(c)):
        out.append(([r for r in rows if r.core_types and r.core_types[0] in comp],
                    [k for k in keys if owners[k] in comp]))
    return out


def _mechanisms(spec: str | Sequence[str], ids: Mapping[str, list[str]], cost: str = "roofline") -> list[str]:
    if isinstance(spec, str):
        if spec == "auto":
            return [m for m in MECHANISMS if ids.get(m)]
        if spec == "none":
            return []
        spec = [s.strip() for s in spec.split(",") if s.strip()]
    out = []
    for m in spec:
        if m not in MECHANISMS:
            raise HetsimError(f"mechanism {m!r}: allowed: {', '.join(MECHANISMS)}, auto or none")
        if m == "clock" and cost == "gemm2":
            raise HetsimError("mechanism 'clock' is the roofline's: gemm2 splits every op's time by the clock "
                              "each part follows itself (its switch gemm2.clocks)")
        if not ids.get(m):
            raise HetsimError(f"mechanism {m!r}: the measurements cannot identify it ({_NEEDS[m]})")
        out.append(m)
    return [m for m in MECHANISMS if m in out]


_NEEDS = {
    "kinds": "it needs rows on a CPU core type",
    "clock": "it needs rows of one core type at two or more clocks",
    "input": "it needs whole-network or pipeline rows",
    "feeder": "it needs rows of one core type measured both as a first and as a later stage",
}


def rows_table(rows: Sequence[Row], predicted: np.ndarray) -> pd.DataFrame:
    """One line per row: where, what, measured and predicted (in seconds; per frame for network and
    pipeline rows), error = predicted time / measured time - 1."""
    out = []
    for r, p in zip(rows, predicted, strict=True):
        m_s, p_s = (1.0 / r.measured, 1.0 / p) if r.unit == "fps" else (r.measured, p)
        out.append({"label": r.label, "kind": r.kind, "network": r.network, "layer": (r.layer + 1) if r.layer is not None else None,
                    "op": r.op.name if r.op is not None else "", "ep": str(r.ep) if r.ep is not None else "",
                    "place": r.place, "mapping": r.mapping if r.kind in ("network", "pipeline") else "",
                    "clock": r.clock, "stage": r.stage, "measured_s": m_s, "predicted_s": p_s,
                    "error": p_s / m_s - 1, "unit": r.unit, "measured": r.measured, "predicted": float(p),
                    "dvfs": r.dvfs, "source": r.source})
    return pd.DataFrame(out)


def error_summary(table: pd.DataFrame, by: str) -> pd.DataFrame:
    if table.empty:
        return pd.DataFrame(columns=[by, "rows", "median_abs_error", "median_error", "max_abs_error"])
    g = table.assign(abs_error=table.error.abs()).groupby(by, sort=True)
    return pd.DataFrame({"rows": g.size(), "median_abs_error": g.abs_error.median(),
                         "median_error": g.error.median(), "max_abs_error": g.abs_error.max()}).reset_index()


def file_digest(path: str | os.PathLike) -> str:
    h = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]
    return f"{path} (sha256 {h})"
