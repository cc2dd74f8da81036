"""``hetsim explore``: search mappings with one of the registered algorithms.

A pipeline algorithm (Pipe-search, Shisha, ES, ...) searches stages of layers; a placement
algorithm (HOPE:GS, HOPE:LP, StarPU-DMDAR, MOSAIC, HEFT, ...) places every op of the DAG on an EP
and orders each EP's ops (the registry says which is which).
"""

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
              help="A registered algorithm: PS, PS-nohints, Shisha, ES, RW, HC, SA, HC_s, SA_s (pipelines); "
              "HOPE:GS, HOPE:LP, StarPU-DMDAR, MOSAIC, HEFT, CPU-only, GPU-only, muLayer, ILP-exact (placements).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="An explorer parameter, e.g. heuristic=H1 or alpha=15 (repeatable).")
@click.option("--depth", "depths", type=int, multiple=True, help="Pipeline depth(s) (default: 2..#EPs).")
@click.option("--eps", default=None, help="Comma-separated candidate EPs (default: every EP; placements: "
              "every cluster whole and every accelerator).")
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
@click.option("--cost-model", type=click.Choice(["roofline", "hope"]), default="roofline", show_default=True,
              help="The cost model (hope: HOPE's phones, docs/papers/hope.md).")
@click.option("--cost-table", type=click.Path(), default=None,
              help="Replay measured times (a CSV, or a directory of `hetsim profile`).")
@click.option("--comm", type=click.Choice(["free", "consumer", "copy"]), default=None,
              help="Placements: where a transfer runs (default free; consumer: on the EP that needs "
              "the data, HOPE's runtime; copy: a copy lane per destination).")
@click.option("--no-caching", is_flag=True, help="Placements: move a tensor once per consuming op.")
@click.option("--plan-out", type=click.Path(dir_okay=False), default=None,
              help="Placements: write the chosen plan as a mapping YAML (hetsim simulate -m FILE).")
@click.option("--trials", "trials_out", type=click.Path(dir_okay=False), default=None,
              help="Write the trial table as CSV.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def explore_cmd(platform_name, workload_name, algorithm, params, depths, eps, cores, max_trials,
                max_clock, target_fps, noise_sigma, seed, dvfs, overrides, force, cost_model, cost_table,
                comm, no_caching, plan_out, trials_out, as_json):
    """Search mappings of a workload with one of the papers' algorithms."""
    import yaml

    from hetsim.cost import make_cost_model
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

    algo = get_algorithm(algorithm)
    placement = algo.problem == "placement"
    given = {"--depth": bool(depths), "--cores": cores is not None, "--target-fps": target_fps is not None,
             "--force": force} if placement else {"--comm": comm is not None, "--no-caching": no_caching,
                                                 "--plan-out": plan_out is not None}
    wrong = [flag for flag, on in given.items() if on]
    if wrong:
        kind = "a placement" if placement else "a pipeline"
        raise HetsimError(f"{wrong[0]} does not apply to {algorithm}, {kind} algorithm")
    platform = load_platform(platform_name, list(overrides), dvfs)
    workload = load_workload(workload_name)
    kwargs = {}
    for item in params:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise HetsimError(f"--param {item!r}: expected key=value, e.g. heuristic=H1")
        value = yaml.safe_load(raw)
        if isinstance(value, str):   # YAML 1.1 reads 1e-6 as a string: a number it is
            try:
                value = float(value)
            except ValueError:
                pass
        kwargs[key] = value
    explorer = make_explorer(algorithm, **kwargs)
    cost = make_cost_model(platform, cost_table, cost_model)
    ep_list = [e.strip() for e in eps.split(",")] if eps else None
    if placement:
        from hetsim.evaluate import DagOptions
        from hetsim.explore import PlacementProblem

        engine = "des" if noise_sigma > 0 else "analytic"
        problem = PlacementProblem(platform, workload, cost, eps=ep_list,
                                   dag=DagOptions(comm=comm or "free", caching=not no_caching),
                                   measurement=Measurement(mode="stream", frames_per_trial=1, engine=engine,
                                                           noise_sigma=noise_sigma))
    else:
        problem = PipelineProblem(
            platform, workload, cost, depths=list(depths) or None, eps=ep_list,
            assignment=core_groups(platform, cores=cores) if cores else "permutations",
            measurement=Measurement(noise_sigma=noise_sigma), force=force)
    terms = [t for t in (MaxTrials(max_trials) if max_trials else None,
                         MaxClock(max_clock) if max_clock else None,
                         TargetThroughput(target_fps) if target_fps else None) if t is not None]
    result = explore(problem, explorer, terms or None, seed=seed, progress=not as_json)
    if trials_out:
        with atomic_write(trials_out) as f:
            result.trials.to_csv(f, index=False)
    if plan_out and result.best is not None:
        from hetsim.mapping import placement_dict

        with atomic_write(plan_out) as f:
            yaml.safe_dump({"description": f"{algorithm} on {workload.name} / {platform.name}",
                            **placement_dict(result.best)}, f, sort_keys=False)
    summary = result.summary()
    if placement:
        summary.update({k: v for k, v in result.info.items() if isinstance(v, int | float | str | bool)})
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
    for path in (trials_out, plan_out):
        if path:
            console.print(f"wrote {path}")
