"""The thesis's problem: a CNN over edge devices, measured on the "real" cluster.

:class:`HybridProblem` is a :class:`~hetsim.exploration.placement.PlacementProblem` whose candidates
are hybrid partitions (:class:`~hetsim.mapping.Placement` with splits) over a device view of the
platform, and whose trial runs AutoDiCE's benchmark mode on the DES: 24 inferences one after
another (4 warm-up + 20 measured, thesis §5.1) with the ncnn cost model, blocking MPI transfers
(``comm="mpi"``), link contention and seeded noise. A trial reports the thesis's three
measurements: the inference latency, the maximum energy per device and the maximum peak memory
per device (:func:`hetsim_papers.nsga2.cost.device_metrics`), plus each layer's measured time and each
transfer's, which the thesis's tuning procedure reads (:mod:`hetsim_papers.nsga2.tuning`).

    problem = HybridProblem("xavier-nx-x8", "alexnet-onnx", devices="cpu")
    r = problem.measure(problem.space.placement(chromosome.decode(X), 0))
    r.latency_s, r.energy_J, r.memory_MiB
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hetsim.errors import HetsimError
from hetsim.exploration.placement import PlacementProblem, PlacementResult
from hetsim.exploration.problem import Measurement
from hetsim.mapping import Placement, hybrid_placement
from hetsim.sim.noise import trial_seed
from hetsim_papers.nsga2.cost import MiB, NcnnCostModel, device_metrics, link_class
from hetsim_papers.nsga2.space import HybridSpace, device_view

#: The objectives a trial measures (thesis §4.2: all minimised).
HYBRID_OBJECTIVES = {"latency": ("latency_s", "s"), "energy": ("energy_J", "J"),
                     "memory": ("memory_MiB", "MiB")}


@dataclass(frozen=True)
class HybridResult(PlacementResult):
    """One trial on the real cluster: AutoDiCE's benchmark-mode averages. ``latency_s`` is the mean
    end-to-end latency of the measured inferences, ``energy_J`` the maximum over devices of the
    energy per inference, ``cost_s`` the trial's time (all its inferences)."""

    memory_MiB: float = 0.0     # max over devices of the peak memory
    devices: dict[str, dict[str, float]] = field(default_factory=dict, compare=False, repr=False)
    op_time_s: dict[str, float] = field(default_factory=dict, compare=False, repr=False)  # per layer
    transfers: list[tuple[str, float, float]] = field(default_factory=list, compare=False,
                                                      repr=False)  # (medium, bytes, mean s)


class HybridProblem(PlacementProblem):
    """Platform + CNN + device view, measured as AutoDiCE's benchmark mode on the DES.

    Parameters
    ----------
    platform, workload
        Objects or names (default platform ``xavier-nx-x8``).
    devices
        ``"cpu"`` (the 8 CPUs), ``"cpu+gpu"`` (16 devices) or a list of EP names.
    cost
        The real cluster's cost model (default :class:`~hetsim_papers.nsga2.cost.NcnnCostModel`).
    frames, warmup
        Inferences per trial and how many of them are warm-up (thesis: 24 and 4).
    noise_sigma
        Lognormal noise of every task (the thesis's repeated runs differ by 1-3 % in latency).
    contention
        Links (and memories) shared by concurrent transfers.
    objective
        ``latency`` (default), ``energy`` or ``memory``: the "best" of a trial table.
    """

    def __init__(self, platform="xavier-nx-x8", workload="alexnet-onnx", *, devices="cpu",
                 cost: NcnnCostModel | None = None, frames: int = 24, warmup: int = 4,
                 noise_sigma: float = 0.02, contention: bool = True, objective: str = "latency",
                 state=None):
        from hetsim.evaluation import DagOptions

        if isinstance(platform, str):
            from hetsim.platform import load_platform
            platform = load_platform(platform)
        if isinstance(workload, str):
            from hetsim.workload import load_workload
            workload = load_workload(workload)
        if objective not in HYBRID_OBJECTIVES:
            raise HetsimError(f"HybridProblem: objective={objective!r}; allowed: {', '.join(HYBRID_OBJECTIVES)}")
        if isinstance(frames, bool) or not isinstance(frames, int) or frames < 1:
            raise HetsimError(f"HybridProblem: frames={frames!r} must be an integer >= 1")
        if isinstance(warmup, bool) or not isinstance(warmup, int) or not 0 <= warmup < frames:
            raise HetsimError(f"HybridProblem: warmup={warmup!r} must be an integer in 0..frames-1 ({frames - 1})")
        eps = device_view(platform, devices)
        # remeasure: a mapping deployed twice is run twice (the thesis's Best Energy and Best
        # Latency rows are one design point measured twice, thesis §4.3).
        measurement = Measurement(mode="stream", frames_per_trial=frames, engine="des",
                                  noise_sigma=noise_sigma, contention=contention, remeasure=True)
        super().__init__(platform, workload, cost or NcnnCostModel(platform), eps=eps,
                         dag=DagOptions(comm="mpi"), measurement=measurement, state=state)
        self.warmup = warmup
        self.space = HybridSpace(platform, workload, eps)
        self.objective = objective
        self.objective_column, self.objective_unit = HYBRID_OBJECTIVES[objective]
        self.maximize = False
        self.trial_columns = ("trial", "clock_s", "cost_s", "phase", "mapping", "latency_s", "energy_J",
                              "memory_MiB", "throughput_fps", "cached", "new_best",
                              f"best_{self.objective_column}_so_far", "best_mapping_so_far")

    @property
    def design_space_size(self) -> int:
        """Layer -> non-empty set of devices (Conv/FC) or one device (others): the hybrid space
        without channel shares, the naive chromosome's reach."""
        n = self.space.n_devices
        return (2**n - 1) ** self.space.n_split * n ** (self.space.n_layers - self.space.n_split)

    def single_device(self, device: str) -> Placement:
        """The whole network on one device (the thesis's un-partitioned reference, Table 2)."""
        return hybrid_placement(self.platform, self.workload, {op: [device] for op in self.ops})

    def offload(self, device: str, layer: str, other: str) -> Placement:
        """Everything on ``device`` but ``layer`` on ``other`` (the thesis's memory tuning runs)."""
        return hybrid_placement(self.platform, self.workload,
                                {op: [other if op == layer else device] for op in self.ops})

    def measure(self, candidate: Placement, rng: np.random.Generator | None = None) -> HybridResult:
        from hetsim.metrics import latency_stats
        from hetsim.options import RunOptions
        from hetsim.sim.dag import dag_metrics, run_dag
        from hetsim.tasks import build_tasks

        m = self.measurement
        seed = trial_seed(rng, m.noise_sigma)
        tg = build_tasks(self.platform, self.workload, candidate, self.cost, self.state, comm="mpi")
        options = RunOptions.make(engine="des", frames=m.frames, contention=m.contention,
                                  noise_sigma=m.noise_sigma, seed=seed, in_flight=1,
                                  state=self.state).resolve(candidate)
        run = run_dag(self.platform, tg, options)
        metrics = dag_metrics(self.platform, self.workload, candidate, run, options)
        assert isinstance(self.cost, NcnnCostModel)
        devices = device_metrics(self.cost, self.workload, tg, run, self.state, skip_frames=self.warmup)
        measured = slice(self.warmup, m.frames)
        latency = latency_stats((run.done - run.arrival)[measured])["mean"]
        durations = (run.end - run.start)[measured].mean(axis=0)
        op_time: dict[str, float] = {}
        transfers = []
        for t in tg.tasks:
            if t.kind == "compute":
                assert t.op is not None
                op_time[t.op] = op_time.get(t.op, 0.0) + float(durations[t.index])
            elif t.src is not None and t.dst is not None and t.op is not None:
                transfers.append((link_class(t.src, t.dst, self.platform), t.nbytes, float(durations[t.index])))
        return HybridResult(
            latency_s=float(latency),
            energy_J=max(d["energy_J"] for d in devices.values()),
            throughput_fps=1.0 / latency if latency > 0 else math.inf,
            cost_s=metrics.makespan_s + m.trial_overhead_s, metrics=metrics,
            memory_MiB=max(d["memory_bytes"] for d in devices.values()) / MiB,
            devices=devices, op_time_s=op_time, transfers=transfers)

    def value(self, result: Any) -> float:
        return float(getattr(result, self.objective_column))

    def trial_row(self, candidate: Placement, result: PlacementResult) -> tuple:
        memory = result.memory_MiB if isinstance(result, HybridResult) else float("nan")
        return (result.latency_s, result.energy_J, memory, result.throughput_fps)

    def __repr__(self) -> str:
        return (f"HybridProblem({self.name}, {self.space.n_layers} layers ({self.space.n_split} splittable) on "
                f"{self.space.n_devices} devices, objective {self.objective})")
