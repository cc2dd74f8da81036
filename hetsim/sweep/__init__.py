"""Sweeps: what-if studies at any scale, on a local process pool or a Dask cluster.

    from hetsim.sweep import load_spec, run_sweep
    result = run_sweep(load_spec("whatif-resnet50-hikey970"), out="results/whatif", progress=True)
    result.table.groupby("memories.dram.bandwidth_GBps")["throughput_fps"].mean()

A SPEC (:mod:`hetsim.sweep.spec`) names a base and the axes that vary; the engine
(:mod:`hetsim.sweep.engine`) counts the cells, runs them in batches, appends each finished cell to a
journal and writes a tidy table; :mod:`hetsim.sweep.plot` draws the what-if curves;
:mod:`hetsim.sweep.tasks` farms out independent runs of a function on the same backends. The tournament
of every registered explorer (``hetsim reproduce tournament``) is a sweep. docs/sweeps.md is the
reference.
"""

from hetsim.sweep.engine import SweepResult, build_table, read_journal, read_results, run_sweep
from hetsim.sweep.plot import default_plots, plot
from hetsim.sweep.spec import (
    Cell,
    SweepSpec,
    check_count,
    count_cells,
    describe,
    expand,
    json_schema,
    list_specs,
    load_spec,
    spec_from_dict,
)
from hetsim.sweep.tasks import default_workers, map_tasks

__all__ = [
    "Cell", "SweepResult", "SweepSpec", "build_table", "check_count", "count_cells", "default_plots",
    "default_workers", "describe", "expand", "json_schema", "list_specs", "load_spec", "map_tasks", "plot",
    "read_journal",
    "read_results", "run_sweep", "spec_from_dict",
]
