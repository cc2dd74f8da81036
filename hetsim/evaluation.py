"""``evaluate(mapping) -> Metrics``: one entry point over both engines and every mapping form.

    >>> platform = load_platform("hikey970"); workload = load_workload("resnet50")
    >>> pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    >>> m = evaluate(platform, workload, pipe, engine="des", frames=50)
    >>> round(m.throughput_fps, 3)
    2.875

How the run goes is a :class:`~hetsim.options.RunOptions` (or its fields as keywords), validated
once: an option the engine or the mapping form would ignore is refused with one line. Unless asked
otherwise (``engine="analytic"``), every entry point runs the DES, RunOptions' default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from hetsim import analytic
from hetsim.cost import CostModel, RooflineCostModel
from hetsim.mapping import Pipeline, Placement
from hetsim.metrics import Metrics
from hetsim.options import RunOptions
from hetsim.sim import budget
from hetsim.sim.dag import simulate_dag
from hetsim.sim.pipeline import simulate_pipeline
from hetsim.sim.trace import Interval, intervals_of
from hetsim.tasks import Comm, Residency, build_tasks


@dataclass
class Result:
    """The metrics of a run and its raw record (``run``: a PipelineRun or DagRun of the DES; None
    for the analytic engine). ``intervals`` (for traces and Gantt charts) are made from the record
    when first asked for: a long run that only wants its metrics does not pay for them."""

    metrics: Metrics
    run: Any = None

    @cached_property
    def intervals(self) -> list[Interval]:
        return intervals_of(self.run) if self.run is not None else []


@dataclass(frozen=True)
class DagOptions:
    """How a DAG mapping expands into tasks (see :mod:`hetsim.tasks`): where communication is
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
             progress: bool = False, **fields) -> Result:
    """Evaluate ``mapping`` and keep the run's record, from which the per-frame intervals (for
    traces and Gantt charts) are made when first asked for; ``intervals=False`` keeps no record
    (as :func:`evaluate` does).

    ``options`` or its fields as keywords (``engine="des", frames=50, noise_sigma=0.02, ...``);
    a ``source=FrameSource(...)`` keyword is accepted for the source and its interval.

    The run's work is counted first (:mod:`hetsim.sim.budget`): past ``budget.MAX_EVENTS`` it is
    refused with the estimate unless ``options.force``. ``progress=True`` shows a progress bar on
    stderr when the run is long (``budget.PROGRESS_EVENTS``)."""
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
        est = budget.estimate_pipeline(platform, workload, mapping, cost, opts)
        budget.check(est, opts)
        if opts.engine == "analytic":
            return Result(analytic.evaluate_pipeline(platform, workload, mapping, cost, opts))
        with _bar(progress and est.long, est, opts.frames) as tick:
            m, run = simulate_pipeline(platform, workload, mapping, cost, opts, progress=tick)
        return Result(m, run if intervals else None)
    dag = dag or DagOptions.for_platform(platform)
    tg = build_tasks(platform, workload, mapping, cost, opts.state, dag.comm, dag.caching, dag.serial,
                     dag.residency, dag.overlap)
    est = budget.estimate_dag(tg, opts)
    budget.check(est, opts)
    if opts.engine == "analytic":
        return Result(analytic.evaluate_placement(platform, workload, mapping, tg, opts))
    with _bar(progress and est.long, est, opts.frames) as tick:
        m, drun = simulate_dag(platform, workload, mapping, tg, opts, progress=tick)
    return Result(m, drun if intervals else None)


@contextmanager
def _bar(enabled: bool, est: budget.WorkEstimate, frames: int | None) -> Iterator[Callable[[float], None] | None]:
    """A transient rich progress bar on stderr over the run's frames; yields its ``tick(done)``
    (frames completed, possibly fractional) or None when off."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        Progress,
        TaskProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(),
                   TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    task = bar.add_task(f"{est.path}, {frames:,} frames", total=frames)
    with bar:
        yield lambda done: bar.update(task, completed=done)


def evaluate(platform, workload, mapping: Pipeline | Placement, options: RunOptions | None = None,
             **fields) -> Metrics:
    """The metrics of ``mapping``: :func:`simulate` without the run's record.

    One default engine whatever the arguments: :class:`~hetsim.options.RunOptions`' own, the DES
    (as ``hetsim simulate``), so ``evaluate(p, w, m)``, ``evaluate(p, w, m, RunOptions())`` and
    ``simulate(p, w, m).metrics`` are the same run; ``engine="analytic"`` asks for the closed
    forms."""
    return simulate(platform, workload, mapping, options, intervals=False, **fields).metrics
