"""``hetsim explore``: search mappings with one of the registered algorithms."""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import console, fmt
from hetsim.errors import HetsimError


@click.command("explore")
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--algorithm", "-a", default="Shisha", show_default=True,
              help="PS, PS-nohints, Shisha, ES, RW, HC, SA, HC_s, SA_s; NSGA-II, NSGA-II-naive, "
              "NSGA-II-adv, Split-Point (placements).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="An explorer parameter, e.g. heuristic=H1 or alpha=15 (repeatable).")
@click.option("--depth", "depths", type=int, multiple=True, help="Pipeline depth(s) (default: 2..#EPs).")
@click.option("--eps", default=None,
              help="Comma-separated candidate EPs (default: every EP); for the seed-004 algorithms a view, "
              "cpu or cpu+gpu.")
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
@click.option("--export-autodice", "export_dir", type=click.Path(file_okay=False), default=None,
              help="Write the best placement as AutoDiCE's mapping.json and horizontal.json in this directory.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def explore_cmd(platform_name, workload_name, algorithm, params, depths, eps, cores, max_trials,
                max_clock, target_fps, noise_sigma, seed, dvfs, overrides, force, trials_out, export_dir,
                as_json):
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
        get_algorithm,
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
    if get_algorithm(algorithm).problem == "placement":
        problem = _placement_problem(explorer, platform, workload, eps, depths, cores, noise_sigma)
    else:
        if export_dir:
            raise HetsimError("--export-autodice: applies to placement algorithms (NSGA-II, ...), not pipelines")
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
    written = _export(result, platform, workload, export_dir) if export_dir else []
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
    for path in ([trials_out] if trials_out else []) + written:
        console.print(f"wrote {path}")


def _placement_problem(explorer, platform, workload, eps, depths, cores, noise_sigma):
    """The problem a placement algorithm explores: its own (``make_problem``) or a plain
    :class:`~hetsim.explore.PlacementProblem` over the candidate EPs."""
    from hetsim.explore import Measurement, PlacementProblem

    if depths or cores:
        raise HetsimError("--depth and --cores apply to pipeline algorithms; a placement algorithm maps ops to --eps")
    views = ("cpu", "cpu+gpu")
    names = eps if eps in views else ([e.strip() for e in eps.split(",")] if eps else None)
    factory = getattr(type(explorer), "make_problem", None)
    if factory is not None:
        return factory(platform, workload, eps=names, noise_sigma=noise_sigma or None)
    measurement = Measurement(mode="stream", frames_per_trial=1, engine="des" if noise_sigma else "analytic",
                              noise_sigma=noise_sigma)
    return PlacementProblem(platform, workload, eps=names, measurement=measurement)


def _export(result, platform, workload, directory) -> list[str]:
    """AutoDiCE's mapping.json and horizontal.json of the best placement."""
    from pathlib import Path

    from hetsim.mapping import Placement, to_autodice
    from hetsim.validation import atomic_write

    best = result.best
    if not isinstance(best, Placement):
        raise HetsimError("--export-autodice: the exploration found no placement to export")
    constants = {}
    from hetsim.workload.zoo import GENERATORS

    if workload.name in GENERATORS:   # name the nodes the import folded (DenseNet's Unsqueeze) too
        from hetsim.workload.onnx_import import folded_readers

        constants = folded_readers(GENERATORS[workload.name](), workload)
    mapping, horizontal = to_autodice(best, platform, workload, constants)
    out = []
    for name, data in (("mapping.json", mapping), ("horizontal.json", horizontal)):
        path = Path(directory) / name
        with atomic_write(path) as f:
            json.dump(data, f, indent=1)
        out.append(str(path))
    return out
