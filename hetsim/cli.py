"""The ``hetsim`` command line.

Every user error ends as one line on stderr (``hetsim: error: ...``) and exit code 2; no traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hetsim.errors import HetsimError

console = Console()


def _fail(message: str) -> None:
    click.echo(f"hetsim: error: {message}", err=True)
    sys.exit(2)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the click group and turn every user error into one line and exit 2."""
    try:
        cli.main(args=argv, prog_name="hetsim", standalone_mode=False)
    except HetsimError as e:
        _fail(str(e))
    except click.exceptions.Abort:
        _fail("aborted")
    except click.ClickException as e:
        _fail(" ".join(e.format_message().split()))
    except click.exceptions.Exit as e:
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted")
    except BrokenPipeError:
        sys.exit(0)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="hetsim")
def cli() -> None:
    """hetsim: simulate DNN mappings on heterogeneous platforms."""


# -- simulate -------------------------------------------------------------------------------------
@cli.command()
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--mapping", "-m", required=True,
              help="Pipeline string (B4:1-35|s2:36-44|s2:45-54) or a mapping YAML/JSON file.")
@click.option("--engine", type=click.Choice(["des", "analytic"]), default="des", show_default=True)
@click.option("--frames", "-n", type=int, default=None,
              help="Frames to stream (default 100 for pipelines, 1 for placements).")
@click.option("--no-contention", is_flag=True, help="Memories and links do not slow each other's users.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice.")
@click.option("--noise", "noise_sigma", type=float, default=0.0, show_default=True,
              help="Sigma of the lognormal measurement noise per stage execution.")
@click.option("--source", type=click.Choice(["saturated", "periodic", "poisson"]), default="saturated",
              show_default=True, help="Frame arrivals.")
@click.option("--interval", "interval_s", type=float, default=None,
              help="Mean seconds between frames for periodic/poisson sources.")
@click.option("--buffer", "buffer_frames", type=int, default=1, show_default=True,
              help="Frames each inter-stage queue holds.")
@click.option("--dvfs", default=None, help="DVFS preset of the platform (e.g. governor3) or cluster=level,...")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a platform field, e.g. links.nop.latency_ns=1e6 (repeatable).")
@click.option("--cost-table", type=click.Path(dir_okay=False), default=None,
              help="Replay measured times from a CSV (columns layer|op, ep, time_s).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--trace", type=click.Path(dir_okay=False), default=None, help="Write a Chrome/Perfetto trace.")
@click.option("--gantt", type=click.Path(dir_okay=False), default=None, help="Write a Gantt chart PNG.")
def simulate(platform_name, workload_name, mapping, engine, frames, no_contention, seed, noise_sigma,
             source, interval_s, buffer_frames, dvfs, overrides, cost_table, as_json, trace, gantt):
    """Simulate one mapping of a workload on a platform."""
    from hetsim.cost import make_cost_model
    from hetsim.evaluate import simulate as run_simulation
    from hetsim.mapping import load_mapping
    from hetsim.platform import load_platform
    from hetsim.sim.source import FrameSource
    from hetsim.sim.trace import plot_gantt, write_chrome_trace
    from hetsim.workload import load_workload

    platform = load_platform(platform_name, list(overrides), dvfs)
    workload = load_workload(workload_name)
    cost = make_cost_model(platform, cost_table)
    m = load_mapping(mapping, platform, workload, cost)
    src = FrameSource(source, interval_s)
    if (trace or gantt) and engine != "des":
        raise HetsimError("--trace and --gantt need the des engine (the analytic engine has no timeline)")
    result = run_simulation(platform, workload, m, engine=engine, cost=cost, frames=frames,
                            contention=not no_contention, source=src, buffer_frames=buffer_frames,
                            noise_sigma=noise_sigma, seed=seed)
    if trace:
        write_chrome_trace(result.intervals, trace, f"{workload.name} on {platform.name}: {m}")
    if gantt:
        plot_gantt(result.intervals, gantt, f"{workload.name} on {platform.name}: {m}")
    if as_json:
        click.echo(result.metrics.to_json())
    else:
        print_metrics(result.metrics)
        for path in (trace, gantt):
            if path:
                console.print(f"wrote {path}")


def print_metrics(m) -> None:
    title = escape(f"{m.workload} on {m.platform} [{m.engine}{', contention' if m.contention else ''}]")
    t = Table(title=title, title_justify="left")
    for col in ("stage", "EP", "layers", "time (ms)", "compute (ms)", "transfer (ms)", "util"):
        t.add_column(col, justify="right" if col not in ("EP",) else "left")
    for i, s in enumerate(m.stages, 1):
        mark = " *" if m.bottleneck == i - 1 else ""
        t.add_row(f"{i}{mark}", s.ep, f"{s.layers[0]}-{s.layers[1]}", f"{s.time_s * 1e3:.2f}",
                  f"{s.compute_s * 1e3:.2f}", f"{s.transfer_s * 1e3:.2f}", f"{s.utilization:.0%}")
    if m.stages:
        console.print(t)
    lat = m.latency_s
    console.print(f"mapping            {m.mapping}")
    console.print(f"throughput         {m.throughput_fps:.3f} frames/s (steady state; "
                  f"{m.stream_throughput_fps:.3f} over the {m.frames}-frame stream)")
    console.print(f"latency            mean {lat['mean'] * 1e3:.2f} ms, p50 {lat['p50'] * 1e3:.2f} ms, "
                  f"p99 {lat['p99'] * 1e3:.2f} ms")
    console.print(f"makespan           {m.makespan_s:.4f} s")
    energy = "n/a (no power model)" if m.energy_J is None else (
        f"{m.energy_J:.3f} J ({m.energy_J / m.frames:.4f} J/frame)")
    console.print(f"energy             {energy}")


# -- explore ------------------------------------------------------------------------------------
@cli.command("explore")
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--algorithm", "-a", default="Shisha", show_default=True,
              help="PS, PS-nohints, Shisha, ES, RW, HC, SA, HC_s, SA_s.")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="An explorer parameter, e.g. heuristic=H1 or alpha=15 (repeatable).")
@click.option("--depth", "depths", type=int, multiple=True, help="Pipeline depth(s) (default: 2..#EPs).")
@click.option("--eps", default=None, help="Comma-separated candidate EPs (default: every EP).")
@click.option("--cores", type=int, default=None,
              help="Paper I's per-core space: split the first N cores into stages (Pipe-search on TX2).")
@click.option("--max-trials", type=int, default=None, help="Stop after this many trials.")
@click.option("--max-clock", type=float, default=None, help="Stop when the tuning clock passes this (s).")
@click.option("--target-fps", type=float, default=None, help="Stop at the first mapping this fast.")
@click.option("--noise", "noise_sigma", type=float, default=0.0, show_default=True,
              help="Lognormal measurement noise of each trial.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--dvfs", default=None, help="DVFS preset (e.g. governor3).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a platform field.")
@click.option("--force", is_flag=True, help="Enumerate a design space past the size limit.")
@click.option("--trials", "trials_out", type=click.Path(dir_okay=False), default=None,
              help="Write the trial table as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def explore_cmd(platform_name, workload_name, algorithm, params, depths, eps, cores, max_trials,
                max_clock, target_fps, noise_sigma, seed, dvfs, overrides, force, trials_out, as_json):
    """Search mappings of a workload with one of the papers' algorithms."""
    import yaml

    from hetsim.explore import (
        MaxClock,
        MaxTrials,
        Measurement,
        PipelineProblem,
        TargetThroughput,
        core_groups,
        explore,
        make_explorer,
    )
    from hetsim.platform import load_platform
    from hetsim.validation import atomic_write
    from hetsim.workload import load_workload

    platform = load_platform(platform_name, list(overrides), dvfs)
    workload = load_workload(workload_name)
    kwargs = {}
    for item in params:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise HetsimError(f"--param {item!r}: expected key=value, e.g. heuristic=H1")
        kwargs[key] = yaml.safe_load(raw)
    explorer = make_explorer(algorithm, **kwargs)
    problem = PipelineProblem(
        platform, workload, depths=list(depths) or None,
        eps=[e.strip() for e in eps.split(",")] if eps else None,
        assignment=core_groups(platform, cores=cores) if cores else "permutations",
        measurement=Measurement(noise_sigma=noise_sigma), force=force)
    terms = [t for t in (MaxTrials(max_trials) if max_trials else None,
                         MaxClock(max_clock) if max_clock else None,
                         TargetThroughput(target_fps) if target_fps else None) if t is not None]
    result = explore(problem, explorer, terms or None, seed=seed, progress=not as_json)
    if trials_out:
        with atomic_write(trials_out) as f:
            result.trials.to_csv(f, index=False)
    summary = result.summary()
    if as_json:
        from hetsim.metrics import _clean

        click.echo(json.dumps(_clean(summary), indent=2, default=str))
        return
    t = Table(title=escape(f"{algorithm} on {workload.name} / {platform.name}"), title_justify="left")
    t.add_column("")
    t.add_column("value")
    for key, value in summary.items():
        t.add_row(key, escape(_fmt(value)))
    console.print(t)
    if trials_out:
        console.print(f"wrote {trials_out}")


# -- platforms ------------------------------------------------------------------------------------
@cli.group()
def platforms() -> None:
    """List, show, validate platforms; export their JSON Schema."""


@platforms.command("list")
def platforms_list() -> None:
    """Every platform on the search path."""
    from hetsim.platform import list_platforms, load_platform

    t = Table("name", "clusters", "accelerators", "description")
    for name in list_platforms():
        try:
            p = load_platform(name)
        except HetsimError as e:
            t.add_row(name, "", "", f"[red]invalid: {escape(str(e))}[/red]")
            continue
        t.add_row(name, ", ".join(f"{c.name} ({c.cores}x {c.core_type})" for c in p.clusters),
                  ", ".join(a.name for a in p.accelerators), escape(p.description))
    console.print(t)


@platforms.command("show")
@click.argument("name")
@click.option("--dvfs", default=None, help="Apply a DVFS preset first.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE")
def platforms_show(name, dvfs, overrides) -> None:
    """The execution places of a platform, with peak rates and memories."""
    from hetsim.cost import RooflineCostModel
    from hetsim.platform import load_platform

    p = load_platform(name, list(overrides), dvfs)
    cost = RooflineCostModel(p)
    console.print(f"[bold]{p.name}[/bold]: {escape(p.description)}")
    t = Table("EP", "place", "cores", "core type", "DVFS", "freq (MHz)", "peak GEMM (GMAC/s)",
              "memory", "bandwidth (GB/s)", title="execution places", title_justify="left")
    for ep in p.eps():
        params = cost._ep_params(ep, None)
        if ep.cluster:
            c = p.cluster(ep.cluster)
            level = p.core_type(c.core_type).level(c.dvfs)
            t.add_row(ep.name, c.name, str(ep.cores), c.core_type, level.name, f"{level.freq_MHz:g}",
                      f"{params[0] / 1e9:.2f}", c.memory, f"{params[3] / 1e9:g}")
        else:
            a = p.accelerator(ep.accelerator)
            t.add_row(ep.name, a.name, "-", a.kind, "-", "-", f"{params[0] / 1e9:.2f}", a.memory,
                      f"{params[3] / 1e9:g}")
    console.print(t)
    if p.links:
        lt = Table("link", "connects", "bandwidth (GB/s)", "latency (ns)", "energy (pJ/B)",
                   title="links", title_justify="left")
        for lk in p.links:
            lt.add_row(lk.name, ", ".join(lk.connects), f"{lk.bandwidth_GBps:g}", f"{lk.latency_ns:g}",
                       f"{lk.energy_pJ_per_byte:g}")
        console.print(lt)
    if p.dvfs_presets:
        console.print("DVFS presets: " + "; ".join(
            f"{k} ({', '.join(f'{c}={lv}' for c, lv in v.items())})" for k, v in p.dvfs_presets.items()))
    console.print(f"power model: {'yes' if p.has_power_model else 'no'}")


@platforms.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def platforms_validate(files) -> None:
    """Report every error of each file with its field path (exit 2 if any)."""
    from hetsim.platform import validate_file

    bad = 0
    for f in files:
        errors = validate_file(f)
        if errors:
            bad += 1
            for line in errors:
                click.echo(line, err=True)
        else:
            click.echo(f"{f}: ok")
    if bad:
        sys.exit(2)


@platforms.command("schema")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to a file.")
def platforms_schema(out) -> None:
    """The JSON Schema of platform files (for editors)."""
    from hetsim.platform import json_schema
    from hetsim.validation import atomic_write

    text = json_schema()
    if out:
        with atomic_write(out) as f:
            f.write(text + "\n")
    else:
        click.echo(text)


# -- workloads ------------------------------------------------------------------------------------
@cli.group()
def workloads() -> None:
    """List and show workloads."""


@workloads.command("list")
def workloads_list() -> None:
    """Every workload on the search path."""
    from hetsim.workload import list_workloads, load_workload

    t = Table("name", "layers", "ops", "GMAC", "description")
    for name in list_workloads():
        try:
            w = load_workload(name)
        except HetsimError as e:
            t.add_row(name, "", "", "", f"[red]invalid: {escape(str(e))}[/red]")
            continue
        t.add_row(name, str(w.num_layers), str(len(w.ops)), f"{sum(op.macs for op in w.ops) / 1e9:.3f}",
                  escape(w.description))
    console.print(t)


@workloads.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the layer table as JSON records.")
def workloads_show(name, as_json) -> None:
    """The layers of a workload: ops, GEMM dimensions, MACs, weight hints, bytes."""
    from hetsim.workload import load_workload

    w = load_workload(name)
    df = w.summary()
    if as_json:
        click.echo(df.to_json(orient="records"))
        return
    console.print(f"[bold]{w.name}[/bold]: {escape(w.description)} ({w.num_layers} layers, {len(w.ops)} ops)")
    t = Table(*[str(c) for c in df.columns])
    for row in df.itertuples(index=False):
        t.add_row(*[escape(_fmt(v)) for v in row])
    console.print(t)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


# -- reproduce ------------------------------------------------------------------------------------
@cli.command()
@click.argument("spec", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every experiment of every paper.")
@click.option("--quick", is_flag=True, help="The smaller versions (what CI runs).")
@click.option("--out", type=click.Path(file_okay=False), default="results", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Base seed of every experiment.")
@click.option("--list", "list_", is_flag=True, help="List the experiments and exit.")
@click.option("--strict", is_flag=True, help="Exit with code 1 when a claim fails.")
def reproduce(spec, all_, quick, out, seed, list_, strict) -> None:
    """Regenerate papers' figures and tables: SPEC is a paper (pipesearch) or paper:id (shisha:fig4).

    Writes OUT/<paper>/<id>.csv and .png, and OUT/scorecard.md + scorecard.json.
    """
    from hetsim.experiment import run_experiment, select, write_outcome, write_scorecard

    if not spec and not all_ and not list_:
        raise HetsimError("say what to reproduce: a paper (pipesearch), paper:id (shisha:fig4) or --all")
    chosen = select(list(spec), all_ or (list_ and not spec))
    if list_:
        t = Table("experiment", "title")
        for e in chosen:
            t.add_row(f"{e.paper}:{e.id}", escape(e.title))
        console.print(t)
        return
    out_dir = Path(out)
    outcomes = []
    for e in chosen:
        with console.status(f"{e.paper}:{e.id} {e.title}"):
            outcome = run_experiment(e, quick=quick, seed=seed, progress=False)
        write_outcome(outcome, out_dir)
        claims = outcome.artifact.claims
        ok = sum(c.passed for c in claims)
        mark = "[green]ok[/green]" if ok == len(claims) else f"[red]{len(claims) - ok} failed[/red]"
        console.print(f"{e.paper}:{e.id:<10} {ok}/{len(claims)} claims {mark}  ({outcome.seconds:.1f} s)")
        outcomes.append(outcome)
    md, js = write_scorecard(outcomes, out_dir, quick)
    total = sum(len(o.artifact.claims) for o in outcomes)
    passed = sum(c.passed for o in outcomes for c in o.artifact.claims)
    console.print(f"{passed}/{total} claims pass; wrote {md} and {js}")
    if strict and passed < total:
        sys.exit(1)


# -- demo -----------------------------------------------------------------------------------------
@cli.command()
@click.option("--out", type=click.Path(file_okay=False), default="results", show_default=True)
def demo(out) -> None:
    """Pipe-it's B4-s2-s2 ResNet50 pipeline on hikey970: table, Gantt PNG and Perfetto trace."""
    from hetsim.cost import RooflineCostModel
    from hetsim.evaluate import simulate as run_simulation
    from hetsim.mapping import load_mapping
    from hetsim.platform import load_platform
    from hetsim.sim.trace import plot_gantt, write_chrome_trace
    from hetsim.workload import load_workload

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
    write_chrome_trace(result.intervals, out / "demo_trace.json", f"resnet50 on hikey970: {pipe}")
    plot_gantt(result.intervals, out / "demo_gantt.png", f"ResNet50 on hikey970: {pipe}")
    console.print(f"wrote {out / 'demo_gantt.png'} and {out / 'demo_trace.json'} "
                  "(open the trace in ui.perfetto.dev)")


def _register_host_commands() -> None:
    """``hetsim calibrate host`` and ``hetsim validate host`` (hetsim/host/commands.py)."""
    from hetsim.host.commands import calibrate, validate

    cli.add_command(calibrate)
    cli.add_command(validate)


_register_host_commands()


if __name__ == "__main__":
    main()
