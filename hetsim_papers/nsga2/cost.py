"""The cost models of the hybrid-partitioning thesis (Savva, Leiden 2023; seed 004).

Two models of the same Jetson Xavier NX cluster, as in the thesis:

* :class:`NcnnCostModel` plays the **real cluster**: what AutoDiCE's generated code (ncnn kernels,
  OpenMP on the CPU's 6 cores, Vulkan on the GPU, MPI between devices) would take. It is the
  roofline model plus ncnn's Winograd F(m,3) convolutions (a 3x3 stride-1 convolution with enough
  channels runs (m+2)^2/(9 m^2) of its MACs at its own efficiency), the runtime's resident memory
  and power by kind of work. Its parameters sit in the ``ncnn`` block of each core type and
  accelerator; :func:`device_metrics` turns a DES run of a mapping into the thesis's three real
  measurements per device: energy per inference, peak memory (ncnn frees each weight and blob
  once nothing needs it any more) and the inference latency.

* :class:`ThesisCostModel` is the thesis's **analytical model** (§4.3) as a cost model of the one
  DAG engine: eq. 4.7 ``time = MAC / (frequency x coefficient[layer type, unit])`` and eq. 4.8
  ``time = bytes / speed[link class]``, with the coefficients of a :class:`Coefficients` JSON,
  which :mod:`hetsim_papers.nsga2.tuning` regenerates from the real cluster by the thesis's
  tuning procedure. The vectorised fitness of the NSGA-II search
  (:mod:`hetsim_papers.nsga2.fitness`) computes the same schedule for a whole population; a test
  checks that both agree.

Choices where the thesis is silent are listed in docs/papers/nsga2.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hetsim.cost.base import ZERO, CostModel, Demand, DvfsState
from hetsim.cost.roofline import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform, by_cores
from hetsim.validation import one_line
from hetsim_papers.nsga2.params import NcnnParams

MiB = float(2**20)

#: Layer types of the analytical model (eq. 4.7 has a coefficient per layer type and unit; a
#: convolution has two, one per algorithm ncnn may pick, thesis §4.3.1).
CONV_IM2COL, CONV_WINOGRAD = "conv_im2col", "conv_winograd"


def unit_of(ep: ExecutionPlace) -> str:
    """The thesis's execution unit of an EP: ``cpu`` (cores of a cluster) or ``gpu`` (an
    accelerator)."""
    return "cpu" if ep.cluster else "gpu"


def winograd_conv(op, params: NcnnParams) -> bool:
    """ncnn's choice (thesis §4.3.1: AutoDiCE picks the kernel from the layer's shape): a 3x3,
    stride-1, undilated, ungrouped convolution with at least ``winograd_min_channels`` input and
    output channels runs as Winograd F(m,3) when the unit has a Winograd efficiency."""
    return (params.winograd_efficiency is not None and op.kind == "conv" and op.kernel == (3, 3)
            and op.stride == 1 and op.dilation == 1 and op.groups == 1 and op.group_node is None
            and op.in_shape.c >= params.winograd_min_channels
            and op.out_c >= params.winograd_min_channels)


def winograd_factor(tile: int) -> float:
    """MACs of Winograd F(m x m, 3 x 3) per direct MAC: (m+2)^2 / (9 m^2) (F(6,3): 0.198)."""
    return (tile + 2) ** 2 / (9 * tile**2)


# =====================================================================================
# The real cluster: ncnn on the Xavier NX
# =====================================================================================
class NcnnCostModel(RooflineCostModel):
    """The roofline model with ncnn's Winograd convolutions, plus what :func:`device_metrics`
    needs: the runtime's memory, and power by kind of work (compute-bound op, memory-bound op,
    blocked in communication, idle), all from the ``ncnn`` block of each core type and
    accelerator (docs/platforms.md)."""

    name = "ncnn"

    def params(self, ep: ExecutionPlace) -> NcnnParams:
        p = self.platform
        if ep.accelerator:
            return p.accelerator(ep.accelerator).ncnn
        return p.core_type(p.cluster(ep.place).core_type).ncnn

    def peak_MACps(self, ep: ExecutionPlace, state: DvfsState | None = None) -> float:
        """The EP's peak MAC rate (with the roofline block's parallel efficiency for cores)."""
        p = self.platform
        if ep.accelerator:
            peak = p.accelerator(ep.accelerator).peak_GMACps
            if peak is None:
                raise HetsimError(f"{p.name}: accelerator {ep.accelerator} has no peak_GMACps (the ncnn model needs it)")
            return peak * 1e9
        c = p.cluster(ep.place)
        t = p.core_type(c.core_type)
        level = t.level((state or {}).get(c.name) or c.dvfs)
        return (t.macs_per_cycle * level.freq_MHz * 1e6 * ep.cores
                * by_cores(t.roofline.parallel_efficiency, ep.cores, False))

    def is_winograd(self, op, ep: ExecutionPlace) -> bool:
        return winograd_conv(op, self.params(ep))

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        params = self.params(ep)
        if not winograd_conv(op, params):
            return super().op_demand(op, ep, state)
        r = self.ep_rates(ep, state)
        assert params.winograd_efficiency is not None
        compute = (op.macs * winograd_factor(params.winograd_tile)
                   / (self.peak_MACps(ep, state) * params.winograd_efficiency))
        nbytes = op.input_bytes + op.output_bytes + op.weight_bytes
        busy = max(compute, nbytes / r.bandwidth_Bps)
        return Demand(r.overhead_s + r.gemm_overhead_s, busy, float(nbytes))

    def compute_bound(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> bool:
        """Whether ``op`` spends its time on multiply-adds rather than moving bytes (it then draws
        the place's active power; a memory-bound op draws ``memory_bound_W``)."""
        if not op.macs:
            return False
        d = self.op_demand(op, ep, state)
        return d.busy_s > d.bytes_ / self.ep_rates(ep, state).bandwidth_Bps * (1 + 1e-9)

    def power_W(self, ep: ExecutionPlace, kind: Literal["compute", "memory", "comm", "idle"],
                state: DvfsState | None = None) -> float:
        """Power of ``ep`` doing ``kind`` of work (the ``ncnn`` block's, defaulting to the place's
        active power): a CPU EP of k cores draws k/n of its cluster's whole-cluster figure."""
        p = self.platform
        params = self.params(ep)
        if ep.accelerator:
            a = p.accelerator(ep.accelerator)
            active, idle, share = a.active_W, a.idle_W, 1.0
        else:
            c = p.cluster(ep.place)
            level = p.core_type(c.core_type).level((state or {}).get(c.name) or c.dvfs)
            active = None if level.active_W_per_core is None else level.active_W_per_core * c.cores
            idle = None if level.idle_W_per_core is None else level.idle_W_per_core * c.cores
            share = ep.cores / c.cores
        if active is None or idle is None:
            raise HetsimError(f"platform {p.name}: {ep.place} has no power numbers (active and idle W); "
                              f"the ncnn model needs them for energy")
        memory = params.memory_bound_W if params.memory_bound_W is not None else active
        watts = {"compute": active, "memory": memory, "idle": idle,
                 "comm": params.comm_W if params.comm_W is not None else memory}[kind]
        return watts * share

    def runtime_bytes(self, ep: ExecutionPlace) -> float:
        return self.params(ep).runtime_MiB * MiB


def task_power_split(cost: NcnnCostModel, workload, task, duration: float,
                     state: DvfsState | None = None) -> list[tuple[str, float]]:
    """How a task of ``duration`` seconds splits into kinds of work for the power model: a
    transfer is communication; a compute task's fixed part (layer dispatch, OpenMP fork/join: no
    multiply-adds) and a memory-bound op are ``memory``, a compute-bound op's roofline part
    ``compute``; a gather (the Concat copy) is memory-bound. Parts scale with the task's actual
    duration (noise, contention)."""
    if task.kind != "compute" or task.ep is None:
        return [("comm", duration)]
    d = task.demand
    if d is None or d.time_s <= 0 or task.name.endswith(":gather"):
        return [("memory", duration)]
    fixed = duration * d.fixed_s / d.time_s
    busy_kind = "compute" if cost.compute_bound(workload.op(task.op), task.ep, state) else "memory"
    return [("memory", fixed), (busy_kind, duration - fixed)]


def device_metrics(cost: NcnnCostModel, workload, tg, run, state: DvfsState | None = None,
                   skip_frames: int = 0) -> dict[str, dict[str, float]]:
    """The thesis's real measurements of a DES run (AutoDiCE's benchmark mode), per device (EP):

    * ``energy_J``: energy per inference, averaged over the frames after ``skip_frames``: the
      device's idle power over each inference (arrival to completion), plus the active power over
      its compute-bound work, ``memory_bound_W`` over its memory-bound work, ``comm_W`` over the
      transfers it sends or receives (MPI blocks both ranks), as :func:`task_power_split` divides
      each task;
    * ``memory_bytes``: its peak memory: the runtime's resident memory + the peak of what the
      schedule of the first measured frame holds there, with every weight and blob freed as soon
      as nothing needs it (ncnn: weights held only while their layer runs, blobs until their last
      reader; the thesis's Table 2 peak is below the weights' size for AlexNet and VGG);
    * ``busy_s``: its compute and communication time per inference.

    Only devices the mapping uses appear."""
    from hetsim.tasks import ep_peak_memory

    frames = len(run.done)
    first = min(max(int(skip_frames), 0), frames - 1)
    measured = range(first, frames)
    eps: dict[str, ExecutionPlace] = {}
    for t in tg.tasks:
        if t.ep is not None:
            eps[t.ep.name] = t.ep
    extra: dict[str, float] = {name: 0.0 for name in eps}    # (power - idle) x time, summed
    busy: dict[str, float] = {name: 0.0 for name in eps}
    kinds: tuple[Literal["compute", "memory", "comm"], ...] = ("compute", "memory", "comm")
    watts: dict[tuple[str, str], float] = {
        (name, kind): cost.power_W(ep, kind, state) - cost.power_W(ep, "idle", state)
        for name, ep in eps.items() for kind in kinds}
    for f in measured:
        durations = run.end[f] - run.start[f]
        for t in tg.tasks:
            dt = float(durations[t.index])
            if dt <= 0:
                continue
            names = [t.ep.name] if t.kind == "compute" and t.ep is not None else \
                [lane for lane in t.lanes if lane in eps]
            parts = task_power_split(cost, workload, t, dt, state)
            for name in names:
                extra[name] += sum(watts[(name, kind)] * seconds for kind, seconds in parts)
                busy[name] += dt
    window = float(sum(run.done[f] - run.arrival[f] for f in measured))
    n = len(measured)
    peak = ep_peak_memory(tg, run.start[first] - run.arrival[first], run.end[first] - run.arrival[first],
                          weights="transient")
    out = {}
    for name, ep in eps.items():
        out[name] = {
            "energy_J": (cost.power_W(ep, "idle", state) * window + extra[name]) / n,
            "memory_bytes": cost.runtime_bytes(ep) + peak.get(name, 0.0),
            "busy_s": busy[name] / n,
        }
    return out


# =====================================================================================
# The analytical model (thesis §4.3) and its coefficients JSON
# =====================================================================================
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class UnitCoefficients(_Strict):
    """The coefficients of one execution unit (CPU or GPU), thesis §4.3."""

    frequency_Hz: float = Field(gt=0, description="The unit's clock in eq. 4.7 (only f x coefficient matters).")
    latency: dict[str, float] = Field(
        description="eq. 4.7: layer type -> coefficient (MACs per cycle); a type with 0 costs nothing.")
    memory_coefficient: float = Field(description="eq. 4.9: c_M, real MiB per expected MiB.")
    memory_bias_MiB: float = Field(description="eq. 4.9: b_M, MiB.")
    energy_W: float = Field(ge=0, description="eq. 4.10: c_E, J per second of the device's latency.")


class Coefficients(_Strict):
    """The thesis's coefficients JSON (§4.3): what its tuning process writes and its analytical
    model reads, for one network on one cluster (the energy coefficient differs per network,
    thesis §4.3, so the tuning runs per network)."""

    network: str
    platform: str
    units: dict[str, UnitCoefficients]
    #: eq. 4.8: bytes/s of each communication medium: ``same_device`` (two processes on one
    #: device), ``cpu_gpu`` (a board's CPU and GPU), ``network`` (board to board).
    links_Bps: dict[str, float]
    #: §4.3.2: the small penalty a split layer's slice pays when it is not ready in time, s.
    sync_penalty_s: float = 0.0
    #: ncnn's Winograd rule as the model sees it (F(m,3) tile, minimum channels), per unit.
    winograd: dict[str, tuple[int, int] | None] = Field(default_factory=dict)
    #: eq. 4.7's FC MACs: ``product`` = H^X x H^Y (a GEMV), or ``printed`` = H^X + H^Y (the
    #: thesis's formula as printed).
    fc_macs: Literal["product", "printed"] = "product"
    #: How the coefficients were made (tuning runs, per-type spread), for the record.
    tuning: dict = Field(default_factory=dict)

    def to_json(self, path: str | Path | None = None) -> str:
        text = json.dumps(self.model_dump(mode="json"), indent=2, sort_keys=True)
        if path is not None:
            Path(path).write_text(text)
        return text

    @classmethod
    def from_json(cls, source: str | Path) -> Coefficients:
        """Read a coefficients JSON file (or its text)."""
        from hetsim.validation import parse_json, read_json

        text, where = str(source), "coefficients"
        # hetsim's JSON reader: a FIFO or a device is not read; NaN, infinities and duplicate keys
        # are refused.
        data = parse_json(text, where) if text.lstrip().startswith("{") else read_json(text)
        if not text.lstrip().startswith("{"):
            where = text
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise one_line(where, e) from None

    def unit(self, ep: ExecutionPlace) -> UnitCoefficients:
        u = unit_of(ep)
        if u not in self.units:
            raise HetsimError(f"coefficients for {self.network}: no {u} unit (have {', '.join(self.units)}); "
                              f"tune them on a platform with one")
        return self.units[u]


def layer_type(op, coefficients: Coefficients, unit: str) -> str:
    """The eq. 4.7 layer type of ``op`` on ``unit``: conv_im2col / conv_winograd by ncnn's rule,
    otherwise the op's kind (fc, relu, maxpool, lrn, bn, binary, add, concat, softmax, ...)."""
    if op.kind == "conv":
        rule = coefficients.winograd.get(unit)
        if rule is not None:
            tile, min_channels = rule
            if winograd_conv(op, NcnnParams(winograd_efficiency=1.0, winograd_tile=tile,
                                            winograd_min_channels=min_channels)):
                return CONV_WINOGRAD
        return CONV_IM2COL
    return str(op.kind)


def model_macs(op, kind: str, coefficients: Coefficients, unit: str) -> float:
    """The "MAC" of eq. 4.7: im2col convolution H^Y W^Y C^Y (C^X/g) K^2; Winograd that x
    (m+2)^2/(9 m^2); FC H^X x H^Y (or the printed H^X + H^Y); any other layer its operation
    count (one per output element for ReLU, R x S per output for pooling: hetsim's FLOPs), which
    the per-type coefficient scales."""
    if kind == CONV_WINOGRAD:
        rule = coefficients.winograd[unit]
        assert rule is not None
        return op.macs * winograd_factor(rule[0])
    if kind == "fc" and coefficients.fc_macs == "printed":
        return float(op.in_shape.elements + op.out_shape.elements)
    if op.macs:
        return float(op.macs)
    return float(op.flops)


def link_class(src: ExecutionPlace, dst: ExecutionPlace, platform: Platform) -> str:
    """The eq. 4.8 communication medium between two devices: ``same_device`` (two places of one
    cluster or accelerator), ``cpu_gpu`` (places of one board), ``network``."""
    if src.place == dst.place:
        return "same_device"
    board = {c.name: c.device for c in platform.clusters} | {a.name: a.device for a in platform.accelerators}
    a, b = board.get(src.place), board.get(dst.place)
    return "cpu_gpu" if a is not None and a == b else "network"


class ThesisCostModel(CostModel):
    """The thesis's analytical model (eqs. 4.7 and 4.8) as a cost model of the DAG engine: with
    ``comm="mpi"`` the engine's list schedule is the model's inference latency (each device runs
    its layers in ONNX order, a transfer blocks its sender and receiver). The sync penalty of
    §4.3.2 needs the schedule and is added by the vectorised fitness only."""

    name = "thesis"

    def __init__(self, platform: Platform, coefficients: Coefficients):
        super().__init__(platform)
        self.coefficients = coefficients

    def op_time(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> float:
        u = unit_of(ep)
        unit = self.coefficients.unit(ep)
        kind = layer_type(op, self.coefficients, u)
        coef = unit.latency.get(kind, 0.0)
        macs = model_macs(op, kind, self.coefficients, u)
        if coef <= 0 or macs <= 0:
            return 0.0
        return macs / (unit.frequency_Hz * coef)             # eq. 4.7

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        return Demand(0.0, self.op_time(op, ep, state), 0.0)

    def share_demand(self, op, ep: ExecutionPlace, fraction: float,
                     state: DvfsState | None = None) -> Demand:
        return Demand(0.0, self.op_time(op, ep, state) * fraction, 0.0)   # MACs x share

    def gather_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        return ZERO                       # the Concat has no MACs

    def transfer_time(self, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> float:
        if nbytes <= 0:
            return 0.0
        speed = self.coefficients.links_Bps[link_class(src, dst, self.platform)]
        return nbytes / speed                                   # eq. 4.8


def expected_memory_bytes(placement, workload, platform: Platform) -> dict[str, float]:
    """eq. 4.9's expected memory of each device (before c_M and b_M): the weights of its layers
    (a split layer: its slice), the tensors it produces (a slice, a Concat's whole output) and the
    network inputs it reads, a send buffer of every byte it sends and a receive buffer of every
    byte it receives (each tensor once per destination device)."""
    out: dict[str, float] = {}
    g = workload.graph

    def add(ep_name: str, nbytes: float) -> None:
        out[ep_name] = out.get(ep_name, 0.0) + float(nbytes)

    sent: set[tuple[str, str]] = set()

    def move(tensor: str, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> None:
        if src.name == dst.name or nbytes <= 0 or (tensor, dst.name) in sent:
            return
        sent.add((tensor, dst.name))
        add(src.name, nbytes)
        add(dst.name, nbytes)

    for op in workload.ops:
        devices = placement.devices_of(op.name)
        shares = placement.splits.get(op.name)
        fractions = [s.fraction for s in shares] if shares else [1.0]
        for ep, frac in zip(devices, fractions, strict=True):
            add(ep.name, op.weight_bytes * frac + op.output_bytes * frac)
            for p in g.predecessors(op.name):
                move(p, g.nodes[p]["op"].output_bytes, placement.ep_of[p], ep)
            for name in workload.net_inputs_of(op):
                where = placement.inputs.get(name, ep)
                if where.name == ep.name:
                    add(ep.name, workload.inputs[name].bytes_)
                else:
                    move(f"input:{name}", workload.inputs[name].bytes_, where, ep)
        if shares:
            home = placement.ep_of[op.name]
            add(home.name, op.output_bytes)                     # the Concat's output
            for ep, frac in zip(devices, fractions, strict=True):
                move(f"{op.name}@{ep.name}", op.output_bytes * frac, ep, home)
    return out


def memory_MiB(expected_bytes: float, unit: UnitCoefficients) -> float:
    """eq. 4.9: expected x c_M + b_M, in MiB (the thesis's "MB", read as MiB: docs/papers/nsga2.md)."""
    return expected_bytes / MiB * unit.memory_coefficient + unit.memory_bias_MiB


def fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(c, b) of real = expected x c + b through two points (the thesis's 2 x 2 solve, §4.3.3)."""
    (x1, y1), (x2, y2) = points
    if math.isclose(x1, x2):
        raise HetsimError(f"memory tuning: both devices expect {x1:.3f} MiB; cannot solve for c and b")
    c = (y1 - y2) / (x1 - x2)
    return c, y1 - c * x1


def per_type_mean(samples: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Each layer type's mean coefficient (thesis §6: per-layer coefficients averaged per type)."""
    return {k: float(np.mean(v)) for k, v in samples.items() if len(v)}
