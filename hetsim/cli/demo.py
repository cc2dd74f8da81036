"""``hetsim demo``: Pipe-it's ResNet50 pipeline on hikey970, with a Gantt chart and a trace."""

from __future__ import annotations

from pathlib import Path

import click

from hetsim.cli._common import console, print_metrics


@click.command()
@click.option("--out", type=click.Path(file_okay=False), default="results", show_default=True)
def demo(out) -> None:
    """Pipe-it's B4-s2-s2 ResNet50 pipeline on hikey970: table, Gantt PNG and Perfetto trace."""
    from hetsim.cost import RooflineCostModel
    from hetsim.evaluation import simulate as run_simulation
    from hetsim.mapping import load_mapping
    from hetsim.platform import load_platform
    from hetsim.sim.trace import plot_gantt, write_trace
    from hetsim.validation import check_output_dir, check_output_path
    from hetsim.workload import load_workload

    check_output_dir(out, "--out")   # '' is refused, as every other --out '' (not the working folder)
    for name in ("demo_trace.json", "demo_gantt.png"):
        check_output_path(Path(out) / name, "--out")
    platform = load_platform("hikey970")
    workload = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    pipe = load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload, cost)
    console.print("[bold]Pipe-it's chosen pipeline for ResNet50 (Table V): B4-s2-s2, "
                  "layers [1,35] [36,44] [45,54][/bold]")
    analytic = run_simulation(platform, workload, pipe, engine="analytic", cost=cost, frames=50).metrics
    result = run_simulation(platform, workload, pipe, engine="des", cost=cost, frames=50)
    print_metrics(result.metrics)
    console.print(f"analytic (no contention) throughput: {analytic.throughput_fps:.3f} frames/s")
    for single in ("B4", "s4"):
        alone = load_mapping(f"{single}:1-{workload.num_layers}", platform, workload, cost)
        fps = run_simulation(platform, workload, alone, engine="des", cost=cost, frames=50).metrics
        console.print(f"{single} alone: {fps.throughput_fps:.3f} frames/s")
    out = Path(out)
    write_trace(out / "demo_trace.json", result.run, platform, workload, pipe, cost, title=f"resnet50 on hikey970: {pipe}")
    plot_gantt(result.intervals, out / "demo_gantt.png", f"ResNet50 on hikey970: {pipe}")
    console.print(f"wrote {out / 'demo_gantt.png'} and {out / 'demo_trace.json'} "
                  "(open the trace in ui.perfetto.dev)")
