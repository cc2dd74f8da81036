"""``evaluate(mapping) -> Metrics``: one entry point over both engines and every mapping form.

    >>> platform = load_platform("hikey970"); workload = load_workload("resnet50")
    >>> pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    >>> m = evaluate(platform, workload, pipe, engine="des", frames=50)
    >>> round(m.throughput_fps, 3)
    2.875

How the run goes is a :class:`~hetsim.options.RunOptions` (or its fields as keywords), validated
once: an option the engine or the mapping form would ignore is refused with one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hetsim import analytic
from hetsim.cost import CostModel, RooflineCostModel
from hetsim.mapping import Pipeline, Placement
from hetsim.metrics import Metrics
from hetsim.options import RunOptions
from hetsim.sim.dag import simulate_dag
from hetsim.sim.pipeline import simulate_pipeline
from hetsim.sim.tasks import Comm, Residency, build_tasks
from hetsim.sim.trace import Interval, intervals_of


@dataclass
class Result:
    metrics: Metrics
    intervals: list[Interval] = field(default_factory=list)


@dataclass(frozen=True)
class DagOptions:
    """How a DAG mapping expands into tasks (see :mod:`hetsim.sim.tasks`): where communication is
    charged (``comm``), whether a tensor crosses to an EP once (``caching``), whether every
    task runs one at a time (``serial``), where a copy resides (``residency``: per EP or per memory
    space) and whether the serial executor's copies overlap the computation on a DMA lane
    (``overlap``)."""

    comm: Comm = "free"
    caching: bool = True
    serial: bool = False
    residency: Residency = "ep"
    overlap: bool = False

    @classmethod
    def for_platform(cls, platform) -> DagOptions:
        """The platform's default execution (its ``runtime`` block)."""
        r = platform.runtime
        return cls(comm=r.comm, caching=r.caching, serial=r.serial, residency=r.residency)


def simulate(platform, workload, mapping: Pipeline | Placement, options: RunOptions | None = None, *,
             cost: CostModel | None = None, dag: DagOptions | None = None, intervals: bool = True,
             **fields) -> Result:
    """Evaluate ``mapping`` and keep the per-frame intervals (for traces and Gantt charts;
    ``intervals=False`` skips them, as :func:`evaluate` does).

    ``options`` or its fields as keywords (``engine="des", frames=50, noise_sigma=0.02, ...``);
    a ``source=FrameSource(...)`` keyword is accepted for the source and its interval."""
    if options is None:
        source = fields.pop("source", None)
        if source is not None and not isinstance(source, str):
            fields["source"], fields["interval_s"] = source.kind, source.interval_s
            if source.kind == "saturated":
                del fields["source"], fields["interval_s"]
        options = RunOptions.make(**fields)
    elif fields:
        raise TypeError("give options or keyword fields, not both")
    opts = options.resolve(mapping)
    cost = cost or RooflineCostModel(platform)
    if isinstance(mapping, Pipeline):
        if opts.engine == "analytic":
            return Result(analytic.evaluate_pipeline(platform, workload, mapping, cost, opts))
        m, run = simulate_pipeline(platform, workload, mapping, cost, opts)
        return Result(m, intervals_of(run) if intervals else [])
    dag = dag or DagOptions.for_platform(platform)
    tg = build_tasks(platform, workload, mapping, cost, opts.state, dag.comm, dag.caching, dag.serial,
                     dag.residency, dag.overlap)
    if opts.engine == "analytic":
        return Result(analytic.evaluate_placement(platform, workload, mapping, tg, opts))
    m, drun = simulate_dag(platform, workload, mapping, tg, opts)
    return Result(m, intervals_of(drun) if intervals else [])


def evaluate(platform, workload, mapping: Pipeline | Placement, options: RunOptions | None = None,
             **fields) -> Metrics:
    """The metrics of ``mapping`` (see :func:`simulate`; the engine defaults to analytic)."""
    if options is None:
        fields.setdefault("engine", "analytic")
    return simulate(platform, workload, mapping, options, intervals=False, **fields).metrics


from hetsim._callable import make_callable  # noqa: E402

make_callable(__name__, evaluate)   # ``hetsim.evaluate(...)`` whichever import bound the module first
