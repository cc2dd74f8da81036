"""The schedules HOPE's figures read, cached: each (setting, model, version) is scheduled and
simulated once per process (everything is deterministic), whichever figure asks first.

A *setting* is a phone (calibrated, :func:`~hetsim_papers.hope.experiments.calibration.phone`), a DVFS
preset, the devices (EPs) the schedulers may use, and the cost model's switches: ``acl`` (one
layout on CPU and GPU: Fig. 6) and μLayer's per-layer synchronisation. Every version runs on HOPE's
runtime as the one DAG engine replays it: one queue per device in plan order, a tensor moved to a
device once (tensor caching is on for every version, §5.2), its transfer and layout transform
charged to the device that needs it (``DagOptions(comm="consumer")``, HOPE §2.1.1, eq. 1), no memory
contention (the closed-form schedule, which the DES reproduces exactly without contention;
``Setting(contention=True)`` measures with the DES and the shared memory instead).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from hetsim.evaluation import DagOptions
from hetsim.experiment import Context
from hetsim.exploration import Measurement, PlacementProblem, explore, make_explorer
from hetsim.tasks import Comm
from hetsim.workload import load_workload
from hetsim_papers.hope import milp
from hetsim_papers.hope.cost import HopeCostModel
from hetsim_papers.hope.experiments.calibration import phone
from hetsim_papers.hope.experiments.paper import MODELS, PLATFORMS

#: Fig. 4's six versions, and the explorer each one is.
VERSIONS = {"CPU": "CPU-only", "GPU": "GPU-only", "MOSAIC": "MOSAIC", "StarPU": "StarPU-DMDAR",
            "HOPE:GS": "HOPE:GS", "HOPE:LP": "HOPE:LP"}
#: Every algorithm a figure may run, by its label in the figures.
ALGORITHMS = {**VERSIONS, "HEFT": "HEFT", "muLayer": "muLayer", "ILP-exact": "ILP-exact"}
#: Where HOPE's runtime charges a transfer (HOPE §2.1.1, eq. 1: the consumer's device).
COMM: Comm = "consumer"


@dataclass(frozen=True)
class Setting:
    """Phone, DVFS preset, devices and cost-model switches of a run."""

    platform: str
    dvfs: str | None = None
    eps: tuple[str, ...] = ()
    acl: bool = False
    split_sync_s: float = 0.0
    comm: Comm = COMM
    #: How a plan is measured: the closed form (no contention), or the DES with the memory shared
    #: by CPU and GPU as a bandwidth server (an ablation).
    contention: bool = False

    def devices(self) -> tuple[str, ...]:
        return self.eps or (PLATFORMS[self.platform][1], "gpu")


@dataclass(frozen=True)
class Run:
    """One version on one model in one setting: the simulated latency of one inference (s), the
    scheduler's wall time and processor time (s), the peak memory of each device during the
    inference (bytes: weights resident, every buffer and cached copy until its last reader) and
    what the scheduler reported."""

    latency_s: float
    wall_s: float
    placement: object = field(repr=False, compare=False)
    info: dict = field(repr=False, compare=False, default_factory=dict)
    peak_memory_bytes: dict = field(repr=False, compare=False, default_factory=dict)
    process_s: float = field(default=0.0, compare=False)


@lru_cache(maxsize=256)
def problem(setting: Setting, model: str) -> PlacementProblem:
    p = phone(setting.platform, setting.dvfs)
    cost = HopeCostModel(p, same_layout=setting.acl, split_sync_s=setting.split_sync_s)
    measurement = Measurement(mode="stream", frames_per_trial=1,
                              engine="des" if setting.contention else "analytic", contention=setting.contention)
    return PlacementProblem(p, load_workload(MODELS[model]), cost, eps=list(setting.devices()),
                            dag=DagOptions(comm=setting.comm), measurement=measurement)


#: A run's key: (setting, model, version, params sorted by name).
Key = tuple[Setting, str, str, tuple[tuple[str, Any], ...]]
#: Every run scheduled so far in this process (everything is deterministic).
_RUNS: dict[Key, Run] = {}


def _schedule(key: Key) -> Run:
    """Schedule ``model`` with ``version`` (a label of :data:`ALGORITHMS`) and simulate the plan.
    The scheduler's times include what its ILPs answered from earlier solves in this process
    took when solved (:data:`hetsim_papers.hope.milp.REUSED`): a run's time is that of the
    scheduler alone, whatever ran before it."""
    setting, model, version, params = key
    reused = dict(milp.REUSED)
    r = explore(problem(setting, model), make_explorer(ALGORITHMS[version], **dict(params)), seed=0)
    metrics = r.best_result.metrics
    info = {k: v for k, v in r.info.items() if not callable(v)}
    wall_s, process_s = (float(r.info["schedule_wall_s"]) + milp.REUSED["wall_s"] - reused["wall_s"],
                         float(r.info.get("schedule_process_s", 0.0)) + milp.REUSED["process_s"] - reused["process_s"])
    return Run(r.best_value, wall_s, r.best, info, dict(metrics.ep_peak_memory_bytes or {}), process_s)


def key(setting: Setting, model: str, version: str, **params) -> Key:
    return (setting, model, version, tuple(sorted(params.items())))


def _schedule_group(keys: list[Key]) -> tuple[list[Run], list]:
    """:func:`_schedule` of runs that may share ILPs (:func:`_sharing`: the ablations' variants of
    HOPE:LP, a plan measured twice), one after the other in one worker; and the ILP solutions
    they found, for the runs scheduled after them in this process and the workers it forks next."""
    since = milp.solved_count()
    return [_schedule(k) for k in keys], milp.solutions(since)


def _sharing(k: Key) -> tuple:
    """The runs that may share HOPE's ILPs: HOPE:LP's with HOPE's ILP (``ilp="paper"``) on one
    phone, preset and model; any other run solves none (its own task)."""
    setting, model, version, params = k
    if version == "HOPE:LP" and dict(params).get("ilp", "paper") == "paper":
        return (setting.platform, setting.dvfs, model)
    return k


#: The models whose schedules take longest (HOPE:LP's ILPs, SQZ's whole-graph pass), in that
#: order: scheduled first, so that the workers finish together.
_SLOW = {"PN-L": 0, "NAS-L": 1, "SQZ": 2, "PN-M": 3, "IN-V4": 4, "IN-V3": 5}


def prefetch(ctx: Context | None, keys) -> None:
    """Schedule the runs of ``keys`` not run yet, in parallel on the context's workers
    (:meth:`~hetsim.experiment.Context.map`: every run depends on its key alone, so the results
    are a loop's), a worker taking the HOPE:LP runs of one phone, preset and model together (they
    may share ILPs: :func:`_sharing`). The phones are calibrated here first, so that forked
    workers inherit them, and the ILP solutions the workers found are kept here, so that the
    workers of the next prefetch inherit them too (an ablation's modules that Fig. 4's HOPE:LP
    solved are not solved again)."""
    todo = [k for k in dict.fromkeys(keys) if k not in _RUNS]
    if not todo:
        return
    groups: dict[tuple, list[Key]] = {}
    for k in todo:
        phone(k[0].platform, k[0].dvfs)
        groups.setdefault(_sharing(k), []).append(k)
    tasks = sorted(groups.values(), key=lambda g: (_SLOW.get(g[0][1], 9), g[0][2] != "HOPE:LP", -len(g)))
    done = (ctx.map(_schedule_group, tasks, "schedule groups") if ctx is not None
            else [_schedule_group(g) for g in tasks])
    for group, (scheduled, solved) in zip(tasks, done, strict=True):
        _RUNS.update(zip(group, scheduled, strict=True))
        milp.adopt_solutions(solved)


def run(setting: Setting, model: str, version: str, params: tuple[tuple[str, Any], ...] = ()) -> Run:
    """The run of ``model`` by ``version`` in ``setting`` (scheduled now unless prefetched)."""
    k = (setting, model, version, tuple(sorted(params)))
    if k not in _RUNS:
        _RUNS[k] = _schedule(k)
    return _RUNS[k]


def latency(setting: Setting, model: str, version: str, **params) -> float:
    return run(setting, model, version, tuple(sorted(params.items()))).latency_s


def reduction_pct(hope_s: float, baseline_s: float) -> float:
    """The paper's convention: (L_baseline - L_HOPE) / L_baseline, in % (HOPE §5.2)."""
    return 100.0 * (baseline_s - hope_s) / baseline_s
