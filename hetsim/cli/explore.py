"""``hetsim explore``: search mappings with one of the registered algorithms."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import check_flag, console, fmt
from hetsim.errors import HetsimError


@click.command("explore")
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
    from hetsim import bounds as B
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
    from hetsim.options import MAX_NOISE_SIGMA
    from hetsim.platform import load_platform
    from hetsim.validation import atomic_write, check_output_path, load_yaml
    from hetsim.workload import load_workload

    # Every number in its range before anything runs (a 0 is refused, not read as "not given").
    check_flag("--max-trials", max_trials, B.TRIALS, integer=True)
    check_flag("--max-clock", max_clock, B.CLOCK_S, "s", low_open=True)
    check_flag("--target-fps", target_fps, B.FPS, "frames/s", low_open=True)
    check_flag("--noise", noise_sigma, (0.0, MAX_NOISE_SIGMA))
    check_flag("--seed", seed, B.SEED, integer=True)
    check_flag("--cores", cores, B.COUNT, integer=True)
    for d in depths:
        check_flag("--depth", d, (1, 1024), "stages", integer=True)
    check_output_path(trials_out, "--trials")
    if eps is not None and not [e for e in eps.split(",") if e.strip()]:
        raise HetsimError(f"--eps {eps!r}: no EP named; give comma-separated EPs, e.g. B4,s4")
    platform = load_platform(platform_name, list(overrides), dvfs)
    workload = load_workload(workload_name)
    kwargs = {}
    for item in params:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise HetsimError(f"--param {item!r}: expected key=value, e.g. heuristic=H1")
        kwargs[key] = load_yaml(raw, f"--param {key}")
    explorer = make_explorer(algorithm, **kwargs)
    problem = PipelineProblem(
        platform, workload, depths=list(depths) or None,
        eps=[e.strip() for e in eps.split(",") if e.strip()] if eps is not None else None,
        assignment=core_groups(platform, cores=cores) if cores is not None else "permutations",
        measurement=Measurement(noise_sigma=noise_sigma), force=force)
    terms = [t for t in (MaxTrials(max_trials) if max_trials is not None else None,
                         MaxClock(max_clock) if max_clock is not None else None,
                         TargetThroughput(target_fps) if target_fps is not None else None)
             if t is not None]
    result = explore(problem, explorer, terms or None, seed=seed, progress=not as_json)
    if trials_out:
        with atomic_write(trials_out) as f:
            result.trials.to_csv(f, index=False)
    summary = result.summary()
    if as_json:
        from hetsim.metrics import clean_json

        click.echo(json.dumps(clean_json(summary), indent=2, default=str))
        return
    t = Table(title=escape(f"{algorithm} on {workload.name} / {platform.name}"), title_justify="left")
    t.add_column("")
    t.add_column("value")
    for key, value in summary.items():
        t.add_row(key, escape(fmt(value)))
    console.print(t)
    if trials_out:
        console.print(f"wrote {trials_out}")
