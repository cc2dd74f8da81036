"""``hetsim explore``: search mappings with one of the registered algorithms.

A pipeline algorithm (Shisha, Pipe-search, ES, NSGA-II-pipe, ...) searches stages of layers; with
no ``--eps`` the candidate EPs are derived (:func:`hetsim.exploration.space.default_eps`: each cluster
whole and each accelerator, fastest first) and a note on stderr says what was chosen, so the command
works on every platform. A placement algorithm (HOPE:GS, HOPE:LP, StarPU-DMDAR, MOSAIC, HEFT,
CPU-only, GPU-only, muLayer, ILP-exact; the PIM paper's OPT, OPT-path, MILP, DUET, Priority) places
every op of the DAG on an EP and orders each EP's ops (:func:`_explore_placement`), on the
platform's DAG execution (its ``runtime``: pim-zynq's ONNX Runtime runs one op at a time). Every error names the flag at fault and what is allowed.
"""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import LazyChoice, check_flag, console, fmt
from hetsim.errors import HetsimError

OBJECTIVES = ("throughput", "latency", "energy", "memory")


_NOTES: list[str] = []


def _note(text: str) -> None:
    """A note on what the command chose; printed (stderr) once the run succeeded, so that an
    error stays the one line on stderr."""
    _NOTES.append(text)


def _flush_notes() -> None:
    for text in _NOTES:
        click.echo(f"hetsim: note: {text}", err=True)
    _NOTES.clear()


def _parse_params(params) -> dict:
    from hetsim.validation import load_yaml

    out = {}
    for item in params:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise HetsimError(f"--param {item!r}: expected key=value, e.g. heuristic=H1")
        out[key] = load_yaml(raw, f"--param {key}")   # hetsim's YAML: 1e6 is a number
    return out


def _algorithm(name: str, params: dict):
    """The explorer, with errors that name --algorithm / --param and list what is allowed."""
    from hetsim.exploration.registry import algorithms, make_explorer

    pipeline = [a for a in algorithms("pipeline")]
    names = [a.name for a in pipeline]
    if name not in names:
        if any(a.name == name for a in algorithms()):
            raise HetsimError(f"--algorithm: {name!r} maps DAG placements, not pipelines; allowed: "
                              f"{', '.join(names)}")
        raise HetsimError(f"--algorithm: unknown algorithm {name!r}; allowed: {', '.join(names)}")
    algo = next(a for a in pipeline if a.name == name)
    _check_params(name, algo.parameters(), params)
    return make_explorer(name, **params)


def _eps(text: str, platform) -> list[str]:
    names = [e.strip() for e in text.split(",") if e.strip()]
    if not names:
        raise HetsimError("--eps: give comma-separated EP names, e.g. --eps big,little")
    allowed = ", ".join(platform.topology.ep_forms())
    seen: dict[str, str] = {}
    for n in names:
        try:
            ep = platform.ep(n)
        except HetsimError:
            raise HetsimError(f"--eps {n!r}: no such EP on {platform.name}; allowed: {allowed}") from None
        if n in seen:
            raise HetsimError(f"--eps lists {n} twice")
        if ep.place in seen.values():
            first = next(k for k, v in seen.items() if v == ep.place)
            raise HetsimError(f"--eps {first},{n}: both are cores of {ep.place}, and each stage owns a whole "
                              f"EP; give EPs on distinct clusters or accelerators (e.g. "
                              f"--eps {','.join(_places(platform))}), or --cores N for Pipe-search's "
                              f"per-core stages")
        seen[n] = ep.place
    return names


def _places(platform) -> list[str]:
    return [c.name for c in platform.clusters] + [a.name for a in platform.accelerators]


@click.command("explore")
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--algorithm", "-a", default=None,
              help="A pipeline algorithm of the registry (default Shisha; NSGA-II-pipe with --pareto): "
                   "Shisha, PS, PS-nohints, ES, RW, HC, SA, HC_s, SA_s, NSGA-II-pipe, ... "
                   "(docs/explorers.md says which fits which platform); or a placement algorithm "
                   "(op -> EP plans of the DAG): HOPE:GS, HOPE:LP, StarPU-DMDAR, MOSAIC, HEFT, CPU-only, "
                   "GPU-only, muLayer, ILP-exact (docs/papers/hope.md); OPT, OPT-path, MILP, DUET, Priority "
                   "(docs/papers/pim.md).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="An algorithm parameter, e.g. heuristic=H1 or alpha=15 (repeatable; "
                   "docs/explorers.md lists each algorithm's).")
@click.option("--depth", "depths", type=click.IntRange(min=1), multiple=True,
              help="Pipeline depth(s) (default: 2..the number of EPs; larger ones are capped).")
@click.option("--eps", default=None,
              help="Comma-separated candidate EPs, on distinct clusters or accelerators (default: "
                   "each cluster whole and each accelerator, fastest first).")
@click.option("--cores", type=click.IntRange(min=1), default=None,
              help="Paper I's per-core space: split the first N cores into stages (Pipe-search on TX2).")
@click.option("--assignment", "assignment_kind", type=click.Choice(["permutations", "cores"]),
              default=None,
              help="How stages get EPs: distinct whole EPs (permutations, the default) or disjoint "
                   "core groups of the clusters (cores: B2-B2-s3-s1, Pipe-it's space; the default "
                   "for Pipe-it). With cores, --eps may name core counts of one cluster (B1,B2,...).")
@click.option("--objective", type=click.Choice(OBJECTIVES), default=None,
              help="What to optimise (default throughput): latency of a frame, energy per frame "
                   "(needs a power model), memory (peak bytes).")
@click.option("--pareto", default=None, metavar="A,B",
              help="Two objectives to trade off, e.g. throughput,energy: the Pareto front of every "
                   "trial as a table (and a plot with --plot).")
@click.option("--engine", type=click.Choice(["analytic", "des"]), default=None,
              help="How a trial is measured: analytic (default; each stage timed alone, closed form) or "
                   "des (a stream of --frames frames through the DES, with contention).")
@click.option("--frames", type=click.IntRange(min=1), default=None,
              help="Frames per trial (default 1 for analytic, 20 for des).")
@click.option("--cost-table", type=click.Path(), default=None,
              help="Measured times (CSV with layer|op, ep, time_s; or a directory from `hetsim "
                   "profile`/`costs import-ort`) instead of the roofline model.")
@click.option("--fallback", type=LazyChoice("hetsim.cost:fallback_names"), default=None,
              help="Price what --cost-table lacks with this model instead of refusing it.")
@click.option("--max-trials", type=click.IntRange(min=1), default=None, help="Stop after this many trials.")
@click.option("--max-clock", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop when the tuning clock passes this many seconds.")
@click.option("--target-fps", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop at the first mapping this fast (frames/s).")
@click.option("--noise", "noise_sigma", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Lognormal measurement noise of each trial.")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--dvfs", default=None, help="DVFS preset (e.g. governor3).")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a platform field.")
@click.option("--force", is_flag=True, help="Enumerate a design space past the size limit.")
@click.option("--cost-model", type=LazyChoice("hetsim.cost:cost_model_names"), default=None,
              help="The cost model (default: the platform's, runtime.cost_model; hope: HOPE's phones "
                   "hope-le/me/he, docs/papers/hope.md; pim: the PIM paper's pim-zynq, docs/papers/pim.md; "
                   "ncnn: the Jetson cluster of the hybrid-partitioning thesis, which its NSGA-II always uses).")
@click.option("--comm", type=click.Choice(["free", "consumer", "copy", "mpi"]), default=None,
              help="Placements: where a transfer runs (default free; consumer: on the EP that needs "
                   "the data, HOPE's runtime; copy: a copy lane per destination; mpi: on both ends).")
@click.option("--no-caching", is_flag=True, help="Placements: move a tensor once per consuming op.")
@click.option("--plan-out", type=click.Path(dir_okay=False), default=None,
              help="Placements: write the chosen plan as a mapping YAML (hetsim simulate -m FILE).")
@click.option("--trials", "trials_out", type=click.Path(dir_okay=False), default=None,
              help="Write the trial table as CSV.")
@click.option("--plot", "plot_out", type=click.Path(dir_okay=False), default=None,
              help="Write a PNG: the Pareto front with --pareto, else the best-so-far convergence.")
@click.option("--export-autodice", "export_dir", type=click.Path(file_okay=False), default=None,
              help="Placements: write the chosen mapping as AutoDiCE's mapping.json and horizontal.json "
                   "in this directory (hetsim simulate -m DIR/mapping.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def explore_cmd(platform_name, workload_name, algorithm, params, depths, eps, cores, assignment_kind,
                objective, pareto, engine, frames, cost_table, fallback, max_trials, max_clock,
                target_fps, noise_sigma, seed, dvfs, overrides, force, cost_model, comm, no_caching, plan_out,
                trials_out, plot_out, export_dir, as_json):
    """Search mappings of a workload with one of the registered algorithms."""
    from hetsim import loading
    from hetsim.exploration import explore
    from hetsim.exploration.moo import pareto_front

    _NOTES.clear()
    loading.allow(force)   # --force passes the loading limits too (docs/robustness.md)
    _check_ranges_and_outputs(max_trials, max_clock, target_fps, noise_sigma, seed, cores, frames, depths,
                              trials_out, plot_out, plan_out, export_dir)
    platform, workload, cost = _load(platform_name, workload_name, overrides, dvfs, cost_table, fallback,
                                     cost_model)

    if algorithm is not None and _is_placement(algorithm):
        wrong = _first_given({"--depth": bool(depths), "--cores": cores is not None,
                              "--assignment": assignment_kind is not None, "--pareto": pareto is not None,
                              "--target-fps": target_fps is not None, "--force": force,
                              "--plot": plot_out is not None})
        if wrong:
            raise HetsimError(f"{wrong} does not apply to {algorithm}, a placement algorithm (it places "
                              f"ops on EPs, it does not cut stages)")
        return _explore_placement(platform, workload, cost, algorithm, _parse_params(params), eps, objective,
                                  engine, frames, noise_sigma, seed, comm, no_caching, plan_out, trials_out,
                                  as_json, platform_name, workload_name, export_dir, cost_table is not None)
    if export_dir is not None:
        raise HetsimError("--export-autodice applies to placement algorithms (NSGA-II, ...), not to pipelines")

    objective, track = _objectives(platform, objective, pareto)
    if algorithm is None:
        algorithm = _default_algorithm(pareto, objective, cores)
    kwargs = _parse_params(params)
    wrong = _first_given({"--comm": comm is not None, "--no-caching": no_caching,
                          "--plan-out": plan_out is not None})
    if wrong:
        raise HetsimError(f"{wrong} does not apply to {algorithm}, a pipeline algorithm (placements only: "
                          f"HOPE:GS, HOPE:LP, StarPU-DMDAR, ...)")
    explorer = _algorithm(algorithm, kwargs)
    problem = _pipeline_problem(platform, workload, cost, algorithm, eps, cores, assignment_kind, depths,
                                engine, frames, noise_sigma, force, objective, track)
    if cores is not None and (algorithm == "Shisha" or getattr(explorer, "start", None) == "shisha"):
        raise HetsimError(f"--algorithm {algorithm} gives each stage a whole EP (Shisha's seed), but --cores "
                          f"fixes the stages' core groups (Paper I); with --cores use PS, PS-nohints, ES, RW, "
                          f"HC, SA or NSGA-II-pipe")
    try:
        explorer.validate(problem)
    except HetsimError as e:
        raise HetsimError(f"--algorithm {algorithm} / --param: {e}") from None
    terms = _terminations(max_trials, max_clock, target_fps)
    # A progress bar only where someone watches (a terminal), never in a pipe or a captured run.
    result = explore(problem, explorer, terms or None, seed=seed, progress=not as_json and console.is_terminal)
    _flush_notes()

    front = pareto_front(result, [objective, *track]) if pareto is not None else None
    _write_pipeline_files(result, algorithm, workload, platform, pareto, trials_out, plot_out)
    if as_json:
        _echo_json(result.summary(), front)
        return
    _print_pipeline_result(result, problem, front, workload, platform, platform_name, workload_name,
                           trials_out, plot_out)


def _check_ranges_and_outputs(max_trials, max_clock, target_fps, noise_sigma, seed, cores, frames, depths,
                              trials_out, plot_out, plan_out, export_dir) -> None:
    """Every number in its range (finite, with an upper end) and every output path writable, before
    anything runs; click's ranges have already refused zeros and negatives."""
    from hetsim import bounds as B
    from hetsim.options import MAX_NOISE_SIGMA
    from hetsim.validation import check_output_dir, check_output_path

    check_flag("--max-trials", max_trials, B.TRIALS, integer=True)
    check_flag("--max-clock", max_clock, B.CLOCK_S, "s", low_open=True)
    check_flag("--target-fps", target_fps, B.FPS, "frames/s", low_open=True)
    check_flag("--noise", noise_sigma, (0.0, MAX_NOISE_SIGMA))
    check_flag("--seed", seed, B.SEED, integer=True)
    check_flag("--cores", cores, B.COUNT, integer=True)
    check_flag("--frames", frames, B.FRAMES, "frames", integer=True)
    for d in depths:
        check_flag("--depth", d, (1, 1024), "stages", integer=True)
    check_output_path(trials_out, "--trials")
    check_output_path(plot_out, "--plot")
    check_output_path(plan_out, "--plan-out")
    check_output_dir(export_dir, "--export-autodice")


def _load(platform_name, workload_name, overrides, dvfs, cost_table, fallback, cost_model):
    """The platform, the workload and the cost model; with --cost-table, a note on how much of the
    workload the table measured (the rest comes from the fallback model)."""
    from hetsim.cost import CompositeCostModel, make_cost_model
    from hetsim.platform import load_platform
    from hetsim.workload import load_workload

    platform = load_platform(platform_name, list(overrides), dvfs)
    workload = load_workload(workload_name)
    cost = make_cost_model(platform, cost_table, fallback, cost_model, workload)
    if isinstance(cost, CompositeCostModel):
        measured, total = cost.coverage(workload, [platform.ep(n) for n in _places(platform)])
        _note(f"--cost-table: {measured} of {total} ({cost.keyed_by}, EP) times measured on "
              f"{', '.join(_places(platform))}; the rest from the {cost.fallback.name} model")
    return platform, workload, cost


def _first_given(flags: dict[str, bool]) -> str | None:
    """The first of the flags given (the one an error that they do not apply names), else None."""
    return next((flag for flag, on in flags.items() if on), None)


def _objectives(platform, objective, pareto) -> tuple[str, list[str]]:
    """The objective best is judged by and the tracked ones (--pareto's other objective); energy
    only on a platform with a power model."""
    track: list[str] = []
    if pareto is not None:
        pair = [o.strip() for o in pareto.split(",") if o.strip()]
        if len(pair) != 2 or len(set(pair)) != 2 or any(o not in OBJECTIVES for o in pair):
            raise HetsimError(f"--pareto {pareto!r}: give two different objectives A,B of "
                              f"{', '.join(OBJECTIVES)}, e.g. --pareto throughput,energy")
        if objective is not None and objective not in pair:
            raise HetsimError(f"--objective {objective} is not one of --pareto {pareto}; drop --objective "
                              f"(the front's first objective is the one best is judged by)")
        objective = objective or pair[0]
        track = [o for o in pair if o != objective]
    objective = objective or "throughput"
    if "energy" in (objective, *track) and not platform.has_power_model:
        raise HetsimError(f"--objective/--pareto energy: {platform.name} has no power model (every cluster's "
                          f"DVFS level and every accelerator needs active and idle watts, docs/platforms.md); "
                          f"allowed here: throughput, latency, memory")
    return objective, track


def _default_algorithm(pareto, objective: str, cores) -> str:
    """The default fits the request: Shisha for throughput over whole EPs; Pipe-search over
    Paper I's per-core stages (--cores); NSGA-II for a front or another objective (Shisha and
    Pipe-search optimise throughput only)."""
    if pareto is not None:
        _note("--pareto: searching with NSGA-II-pipe (pymoo's NSGA-II on both objectives); "
              "-a chooses another algorithm, whose trials then give the front")
        return "NSGA-II-pipe"
    if objective != "throughput":
        _note(f"--objective {objective}: searching with NSGA-II-pipe (Shisha, the default, optimises "
              f"throughput only); -a chooses another")
        return "NSGA-II-pipe"
    if cores is not None:
        _note("--cores: searching with PS (Pipe-search, Paper I's per-core space; Shisha gives each "
              "stage a whole EP); -a chooses another")
        return "PS"
    return "Shisha"


def _pipeline_problem(platform, workload, cost, algorithm, eps, cores, assignment_kind, depths, engine,
                      frames, noise_sigma, force, objective, track):
    """The design space (the stages' EPs, the depths) and how a trial is measured, as a
    :class:`PipelineProblem`."""
    from hetsim.exploration import Measurement, PipelineProblem

    assignment, names, n_eps = _stage_eps(platform, workload, cost, algorithm, eps, cores, assignment_kind)
    depth_list = _depths(depths, algorithm, n_eps, cores, names, workload)
    if engine == "des":
        measurement = Measurement(mode="stream", engine="des", frames_per_trial=frames or 20,
                                  noise_sigma=noise_sigma)
    else:
        measurement = Measurement(frames_per_trial=frames, noise_sigma=noise_sigma)
    return PipelineProblem(platform, workload, cost, depths=depth_list, eps=names,
                           assignment=assignment, measurement=measurement, force=force,
                           objective=objective, track=track)


def _stage_eps(platform, workload, cost, algorithm, eps, cores, assignment_kind):
    """How stages get EPs (whole EPs, disjoint core groups, or Paper I's first N cores), the EP
    names given or derived, and how many stages they allow at most."""
    from hetsim.exploration import core_groups
    from hetsim.exploration.space import default_eps

    if cores is not None and eps is not None:
        raise HetsimError("--cores and --eps both choose the stages' EPs: give one of them")
    if cores is not None and assignment_kind is not None:
        raise HetsimError("--cores and --assignment both choose how stages get EPs: give one of them")
    every = platform.eps()
    shared = len({ep.place for ep in every}) < len(every)   # core counts of a cluster (B1..B4)
    if assignment_kind is None and algorithm == "Pipe-it" and cores is None and shared:
        assignment_kind = "cores"
        _note("Pipe-it: stages on disjoint core groups (--assignment cores), the space Algorithm 3 "
              "merges cores in")
    if assignment_kind == "cores":
        names = [e.strip() for e in eps.split(",") if e.strip()] if eps is not None else None
        for n in names or ():
            platform.ep(n)   # unknown names: one line naming the EP and the forms allowed
        # The most stages the platform's EPs allow (one per core where a cluster's cores are EPs,
        # one per whole cluster or accelerator otherwise); PipelineProblem checks the EPs given.
        smallest: dict[str, int] = {}
        for ep in every:
            smallest[ep.place] = min(ep.cores, smallest.get(ep.place, ep.cores))
        n_eps = sum((platform.cluster(pl).cores if pl in {c.name for c in platform.clusters} else 1) // c
                    for pl, c in smallest.items())
        return "cores", names, n_eps
    if cores is not None:
        total_cores = sum(c.cores for c in platform.clusters)
        if cores > total_cores:
            raise HetsimError(f"--cores {cores}: {platform.name} has {total_cores} cores; allowed: 1..{total_cores}")
        return core_groups(platform, cores=cores), None, cores
    if eps is not None:
        names = _eps(eps, platform)
    else:
        names, note = default_eps(platform, workload, cost)
        _note(f"{platform.name}: {note}")
    return "permutations", names, len(names)


def _depths(depths, algorithm, n_eps: int, cores, names, workload) -> list[int] | None:
    """The pipeline depths to search (None: PipelineProblem's default, 2..the number of EPs), the
    ones given capped at what the EPs and layers allow."""
    from hetsim.exploration.space import cap_depths

    depth_list = list(depths) or None
    if depth_list is None and algorithm == "Pipe-it":
        depth_list = list(range(1, n_eps + 1))   # Algorithm 3 may merge down to one stage
    if depth_list is not None:
        depth_list, capped = cap_depths(depth_list, n_eps, workload.num_layers)
        if capped:
            _note(capped)
        if cores is not None:
            depth_list = [d for d in depth_list if d >= 2] or depth_list
    elif n_eps < 2 and cores is None:
        depth_list = [1]
        _note(f"one candidate EP ({names[0] if names else ''}): a one-stage pipeline")
    return depth_list


def _terminations(max_trials, max_clock, target_fps) -> list:
    """The stopping rules given (--max-trials, --max-clock, --target-fps)."""
    from hetsim.exploration import MaxClock, MaxTrials, TargetThroughput

    return [t for t in (MaxTrials(max_trials) if max_trials is not None else None,
                        MaxClock(max_clock) if max_clock is not None else None,
                        TargetThroughput(target_fps) if target_fps is not None else None)
            if t is not None]


def _write_pipeline_files(result, algorithm, workload, platform, pareto, trials_out, plot_out) -> None:
    """The trial table (CSV) and the plot: the Pareto front with --pareto, else the convergence."""
    from hetsim.exploration.moo import plot_front
    from hetsim.validation import atomic_write

    if trials_out:
        with atomic_write(trials_out) as f:
            result.trials.to_csv(f, index=False)
    if plot_out:
        if pareto is not None:
            import matplotlib.pyplot as plt

            plt.close(plot_front(result, [o.strip() for o in pareto.split(",")], plot_out,
                                 f"{algorithm} on {workload.name} / {platform.name}"))
        else:
            _plot_convergence(result, plot_out, f"{algorithm} on {workload.name} / {platform.name}")


def _echo_json(summary: dict, front=None) -> None:
    """The summary (with the Pareto front's rows, if any) as one JSON object on stdout."""
    from hetsim.metrics import clean_json

    out = dict(summary)
    if front is not None:
        out["pareto_front"] = front.to_dict(orient="records")
    click.echo(json.dumps(clean_json(out), indent=2, default=str))


def _summary_table(result, summary: dict, workload, platform) -> None:
    """The run's summary as a two-column table titled by the algorithm, workload and platform."""
    t = Table(title=escape(f"{result.algorithm} on {workload.name} / {platform.name}"), title_justify="left")
    t.add_column("")
    t.add_column("value")
    for key, value in summary.items():
        t.add_row(key, escape(fmt(value)))
    console.print(t)


def _print_pipeline_result(result, problem, front, workload, platform, platform_name, workload_name,
                           trials_out, plot_out) -> None:
    """The summary, the Pareto front, how to simulate the best mapping (or why none is feasible)
    and the files written."""
    _summary_table(result, result.summary(), workload, platform)
    if front is not None:
        ft = Table(title=f"Pareto front ({len(front)} of {result.n_distinct} distinct configurations)",
                   title_justify="left")
        for c in front.columns:
            ft.add_column(c)
        for row in front.itertuples(index=False):
            ft.add_row(*(escape(fmt(v)) for v in row))
        console.print(ft)
    if result.best is None or not problem.capable(result.best):
        console.print("no feasible mapping found: every trial put a layer on an EP that cannot run one "
                      "of its ops (see `hetsim platforms show`); try --eps without that EP, or ES")
    elif result.best_mapping:
        console.print(f"simulate it: hetsim simulate -p {platform_name} -w {workload_name} "
                      f"-m '{result.best_mapping}'", soft_wrap=True)
    for path in (trials_out, plot_out):
        if path:
            console.print(f"wrote {path}")


def _is_placement(name: str) -> bool:
    from hetsim.exploration.registry import algorithms

    return any(a.name == name and a.problem in ("placement", "hybrid") for a in algorithms())


def _explore_placement(platform, workload, cost, algorithm, kwargs, eps, objective, engine, frames, noise_sigma,
                       seed, comm, no_caching, plan_out, trials_out, as_json, platform_name, workload_name,
                       export_dir=None, measured=False):
    """``hetsim explore`` with a placement algorithm: a :class:`PlacementProblem` over the given EPs
    (default: each cluster whole and each accelerator), the plan measured once, its summary, what
    the scheduler reports (wall time, prediction, ...), and the plan as a mapping file."""
    from hetsim.exploration import explore
    from hetsim.exploration.registry import get_algorithm, make_explorer

    _check_params(algorithm, get_algorithm(algorithm).parameters(), kwargs)
    explorer = make_explorer(algorithm, **kwargs)
    factory = getattr(type(explorer), "make_problem", None)
    problem = None
    if factory is not None:
        problem = _own_problem(factory, platform, workload, cost, algorithm, eps, objective, engine, frames,
                               noise_sigma, comm, no_caching, measured)
    allowed_objectives = ("latency", "energy", "throughput", "memory") if problem is not None else (
        "latency", "energy", "throughput")
    objective = objective or "latency"
    if objective not in allowed_objectives:
        raise HetsimError(f"--objective {objective}: a placement is judged by {', '.join(allowed_objectives)}")
    if problem is None:
        problem = _placement_problem(platform, workload, cost, eps, objective, engine, frames, noise_sigma,
                                     comm, no_caching)
    result = explore(problem, explorer, None, seed=seed, progress=False)
    written = _export_autodice(result, platform, workload, export_dir) if export_dir else []
    _flush_notes()
    _write_placement_files(result, algorithm, workload, platform, trials_out, plan_out)
    summary = _placement_summary(result)
    if as_json:
        _echo_json(summary)
        return
    _summary_table(result, summary, workload, platform)
    if plan_out:
        flags = (f" --cost-model {problem.cost.name}" if problem.cost.name in ("hope", "ncnn") else "") + (
            f" --comm {problem.dag.comm}" if problem.dag.comm != "free" else "")
        console.print(f"simulate it: hetsim simulate -p {platform_name} -w {workload_name} -m {plan_out}{flags}",
                      soft_wrap=True)
    for path in [trials_out, plan_out, *written]:
        if path:
            console.print(f"wrote {path}")


def _check_params(name: str, allowed: dict, params) -> None:
    """Every --param is one of the algorithm's parameters; the error lists them with defaults."""
    for key in params:
        if key not in allowed:
            listing = ", ".join(f"{k}={v!r}" for k, v in allowed.items()) or "none"
            raise HetsimError(f"--param {key}: {name} has no parameter {key!r}; its parameters (with "
                              f"defaults): {listing}")


def _own_problem(factory, platform, workload, cost, algorithm, eps, objective, engine, frames, noise_sigma,
                 comm, no_caching, measured):
    """The problem of an algorithm with its own (the hybrid-partitioning NSGA-II: the ncnn cluster,
    MPI transfers, AutoDiCE's benchmark runs); --eps is a device view or EP names."""
    wrong = _first_given({"--comm": comm is not None, "--no-caching": no_caching,
                          "--engine": engine is not None, "--frames": frames is not None,
                          "--cost-table": measured, "--cost-model": cost.name not in ("roofline", "ncnn")})
    if wrong:
        raise HetsimError(f"{wrong} does not apply to {algorithm}: it measures on its own problem "
                          f"(the ncnn model, MPI transfers, AutoDiCE's benchmark mode)")
    views = ("cpu", "cpu+gpu")
    devices = eps if eps in views else ([e.strip() for e in eps.split(",") if e.strip()] if eps else None)
    return factory(platform, workload, eps=devices, noise_sigma=noise_sigma or None,
                   objective=objective or "latency")


def _placement_problem(platform, workload, cost, eps, objective, engine, frames, noise_sigma, comm,
                       no_caching):
    """A :class:`PlacementProblem` over the EPs given (each known, none twice), measured on the
    platform's DAG execution."""
    from dataclasses import replace

    from hetsim.evaluation import DagOptions
    from hetsim.exploration import Measurement, PlacementProblem

    names = None
    if eps is not None:
        names = [e.strip() for e in eps.split(",") if e.strip()]
        for n in names:
            try:
                platform.ep(n)
            except HetsimError:
                raise HetsimError(f"--eps {n!r}: no such EP on {platform.name}; allowed: "
                                  f"{', '.join(platform.topology.ep_forms())}") from None
        if len(set(names)) != len(names):
            raise HetsimError(f"--eps lists an EP twice: {','.join(names)}")
    engine = engine or ("des" if noise_sigma > 0 else "analytic")
    if objective == "energy" and not platform.has_power_model:
        raise HetsimError(f"--objective energy: {platform.name} has no power model (docs/platforms.md); "
                          "allowed here: latency, throughput")
    # The platform's runtime (pim-zynq: ONNX Runtime's serial executor), --comm / --no-caching on top.
    base = DagOptions.for_platform(platform)
    dag = replace(base, comm=comm or base.comm, caching=base.caching and not no_caching)
    return PlacementProblem(platform, workload, cost, eps=names, objective=objective, dag=dag,
                            measurement=Measurement(mode="stream", frames_per_trial=frames or 1,
                                                    engine=engine, noise_sigma=noise_sigma))


def _write_placement_files(result, algorithm, workload, platform, trials_out, plan_out) -> None:
    """The trial table (CSV) and the chosen plan as a mapping YAML (hetsim simulate -m FILE)."""
    import yaml

    from hetsim.mapping import placement_dict
    from hetsim.validation import atomic_write

    if trials_out:
        with atomic_write(trials_out) as f:
            result.trials.to_csv(f, index=False)
    if plan_out and result.best is not None:
        with atomic_write(plan_out) as f:
            yaml.safe_dump({"description": f"{algorithm} on {workload.name} / {platform.name}",
                            **placement_dict(result.best)}, f, sort_keys=False, allow_unicode=True)


def _placement_summary(result) -> dict:
    """The run's summary with what the scheduler reports (OPT: its profiling runs), scalars only."""
    summary = result.summary()
    for key, value in result.info.items():
        if isinstance(value, int | float | str | bool):
            summary[key] = value
        elif isinstance(value, dict):
            summary.update({f"{key}.{k}": v for k, v in value.items() if isinstance(v, int | float | str | bool)})
    return summary


def _export_autodice(result, platform, workload, directory) -> list[str]:
    """AutoDiCE's mapping.json and horizontal.json of the chosen placement (the ONNX nodes the
    import folded into constants, e.g. DenseNet-121's Unsqueeze, go with the op that reads them)."""
    from pathlib import Path

    from hetsim.mapping import Placement, to_autodice
    from hetsim.validation import atomic_write
    from hetsim.workload.networks import generated

    if not isinstance(result.best, Placement):
        raise HetsimError("--export-autodice: the exploration chose no placement to export")
    constants = {}
    if workload.name in generated():
        from hetsim.workload.onnx_import import folded_readers

        constants = folded_readers(generated()[workload.name](), workload)
    mapping, horizontal = to_autodice(result.best, platform, workload, constants)
    out = []
    for name, data in (("mapping.json", mapping), ("horizontal.json", horizontal)):
        path = Path(directory) / name
        with atomic_write(path) as f:
            json.dump(data, f, indent=1)
        out.append(str(path))
    return out


def _plot_convergence(result, path, title: str) -> None:
    """The best-so-far objective against the tuning clock (every improvement and the last trial)."""
    import matplotlib.pyplot as plt

    from hetsim.validation import atomic_write

    problem = result.problem
    column = result.trials.columns[-2]
    t = result.trials
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.step(t["clock_s"], t[column], where="post")
    ax.set_xlabel("tuning clock (s)")
    ax.set_ylabel(f"best {problem.objective} so far ({problem.objective_unit})")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    with atomic_write(path, "wb") as f:
        fig.savefig(f, format="png", dpi=120)
    plt.close(fig)
