"""``hetsim simulate``: one mapping of a workload on a platform."""

from __future__ import annotations

import click

from hetsim.cli._common import LazyChoice, console, print_metrics, run_options
from hetsim.errors import HetsimError


@click.command()
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--mapping", "-m", required=True,
              help="Pipeline string (B4:1-35|s2:36-44|s2:45-54) or a mapping YAML/JSON file.")
@click.option("--engine", type=click.Choice(["des", "analytic"]), default="des", show_default=True)
@click.option("--frames", "-n", type=int, default=None,
              help="Frames to stream (default 100 for pipelines, 1 for placements).")
@click.option("--no-contention", is_flag=True, help="Memories and links do not slow each other's users.")
@click.option("--flows", type=click.Choice(["stage", "op"]), default="stage", show_default=True,
              help="Memory traffic of a pipeline stage in the DES: one flow per stage execution, or one per op.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice.")
@click.option("--noise", "noise_sigma", type=float, default=0.0, show_default=True,
              help="Sigma of the lognormal measurement noise per stage execution.")
@click.option("--source", type=click.Choice(["saturated", "periodic", "poisson"]), default="saturated",
              show_default=True, help="Frame arrivals.")
@click.option("--interval", "interval_s", type=float, default=None,
              help="Mean seconds between frames for periodic/poisson sources.")
@click.option("--buffer", "buffer_frames", type=int, default=None,
              help="Frames each inter-stage queue of a pipeline holds (default 1).")
@click.option("--in-flight", "in_flight", type=int, default=None,
              help="Frames a DAG placement may have inside the platform at once (default 1).")
@click.option("--dvfs", default=None, help="DVFS preset of the platform (e.g. governor3) or cluster=level,...")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a platform field, e.g. links.nop.latency_ns=1e6 (repeatable).")
@click.option("--cost-table", type=click.Path(), default=None,
              help="Replay measured times from a CSV (columns layer|op, ep, time_s), or a directory "
              "written by `hetsim profile` / `hetsim costs import-ort` (costs.csv, transfers.csv).")
@click.option("--fallback", type=LazyChoice("hetsim.cost:fallback_names"), default=None,
              help="Price what the --cost-table lacks (a layer or op without a row for an EP) with "
              "this model instead of refusing it.")
@click.option("--cost-model", type=LazyChoice("hetsim.cost:cost_model_names"), default=None,
              help="The cost model (default: the platform's, runtime.cost_model; hope: HOPE's, "
                   "docs/papers/hope.md; pim: the PIM paper's; ncnn: the Jetson cluster of the "
                   "hybrid-partitioning thesis, docs/papers/nsga2.md; gemm2: shape-, cache- and "
                   "algorithm-aware, docs/fidelity.md); --cost-table replays measurements.")
@click.option("--comm", type=click.Choice(["free", "consumer", "copy", "mpi"]), default=None,
              help="DAG mappings: transfers overlap everything (free, the default), occupy the consuming "
              "EP (consumer: HOPE's runtime), a copy lane per destination (copy), or both the sending "
              "and the receiving EP (mpi: AutoDiCE's blocking send/receive).")
@click.option("--no-caching", is_flag=True, help="DAG mappings: move a tensor once per consuming op, "
              "not once per destination EP.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--trace", type=click.Path(dir_okay=False), default=None, help="Write a Perfetto trace (JSON; ui.perfetto.dev): a track per EP, link and memory, "
              "flows for transfers, counters for bandwidth, queues and memory held.")
@click.option("--gantt", type=click.Path(dir_okay=False), default=None, help="Write a Gantt chart (.png, .pdf or .svg: the suffix sets the format).")
@click.option("--gantt-frames", type=click.IntRange(min=1), default=12, show_default=True,
              help="Frames the Gantt chart draws (the first ones).")
@click.option("--gantt-layers", is_flag=True, help="Show each pipeline stage's layers in the Gantt chart.")
@click.option("--force", is_flag=True, help="Run even when the run's estimated work (events, memory) "
              "is past the limit (docs/robustness.md).")
@click.pass_context
def simulate(ctx, platform_name, workload_name, mapping, engine, frames, no_contention, flows, seed, noise_sigma,
             source, interval_s, buffer_frames, in_flight, dvfs, overrides, cost_table, fallback, cost_model, comm,
             no_caching, as_json, trace, gantt, gantt_frames, gantt_layers, force):
    """Simulate one mapping of a workload on a platform."""
    from hetsim import loading
    from hetsim.cost import make_cost_model
    from hetsim.evaluation import DagOptions
    from hetsim.evaluation import simulate as run_simulation
    from hetsim.figures import check_figure_path
    from hetsim.mapping import Placement, load_mapping
    from hetsim.platform import load_platform
    from hetsim.sim.trace import plot_gantt, write_trace
    from hetsim.validation import check_output_path
    from hetsim.workload import load_workload

    loading.allow(force)   # --force passes the loading limits too (docs/robustness.md)
    options = run_options(ctx, engine=engine, frames=frames, no_contention=no_contention, flows=flows, seed=seed,
                          noise_sigma=noise_sigma, source=source, interval_s=interval_s,
                          buffer_frames=buffer_frames, in_flight=in_flight, force=force)
    check_output_path(trace, "--trace")
    check_figure_path(gantt, "--gantt")
    if (trace is not None or gantt is not None) and engine != "des":
        raise HetsimError("--trace and --gantt need the des engine (--engine des; the analytic engine has no timeline)")
    platform = load_platform(platform_name, list(overrides), dvfs)
    workload = load_workload(workload_name)
    cost = make_cost_model(platform, cost_table, fallback, cost_model, workload)
    m = load_mapping(mapping, platform, workload, cost)
    dag = None
    if comm is not None or no_caching:
        if not isinstance(m, Placement):
            raise HetsimError("--comm and --no-caching apply to DAG mappings (placement files), not to pipelines")
        base = DagOptions.for_platform(platform)    # the platform's runtime, these flags on top
        dag = DagOptions(comm=comm or base.comm, caching=base.caching and not no_caching, serial=base.serial,
                         residency=base.residency)
    result = run_simulation(platform, workload, m, options, cost=cost, dag=dag, progress=True)
    if trace:
        write_trace(trace, result.run, platform, workload, m, cost, options.state,
                    f"{workload.name} on {platform.name}: {m}")
    if gantt:
        from hetsim.mapping import Pipeline
        from hetsim.sim.trace import stage_layers

        if gantt_layers and not isinstance(m, Pipeline):
            raise HetsimError("--gantt-layers applies to pipelines (a placement's Gantt shows ops already)")
        layers = stage_layers(m, workload, cost, options.state) if gantt_layers else None
        plot_gantt(result.intervals, gantt, f"{workload.name} on {platform.name}: {m}", gantt_frames, layers)
    if as_json:
        click.echo(result.metrics.to_json())
    else:
        print_metrics(result.metrics)
        for path in (trace, gantt):
            if path:
                console.print(f"wrote {path}")
