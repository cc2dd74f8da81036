"""``hetsim explore``: search mappings with one of the registered algorithms.

The flags fill an :class:`~hetsim.exploration.spec.ExplorationSpec`, the one description of an
exploration that ``hetsim sweep`` and the tournament build from too; :func:`~hetsim.exploration.
spec.build` resolves its defaults and builds the problem, the explorer and the stopping rules (its
errors name the flags, :data:`FLAGS`), and this module runs it and prints or writes the result.

A pipeline algorithm (Shisha, Pipe-search, ES, NSGA-II-pipe, ...) searches stages of layers; with
no ``--eps`` the candidate EPs are derived (:func:`hetsim.exploration.space.default_eps`: each cluster
whole and each accelerator, fastest first) and a note on stderr says what was chosen, so the command
works on every platform. A placement algorithm (HOPE:GS, HOPE:LP, StarPU-DMDAR, MOSAIC, HEFT,
CPU-only, GPU-only, muLayer, ILP-exact; the PIM paper's OPT, OPT-path, MILP, DUET, Priority) places
every op of the DAG on an EP and orders each EP's ops, on the platform's DAG execution (its
``runtime``: pim-zynq's ONNX Runtime runs one op at a time). Every error names the flag at fault and
what is allowed.
"""

from __future__ import annotations

import json

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import LazyChoice, PluginHelpOption, console, fmt
from hetsim.errors import HetsimError

OBJECTIVES = ("throughput", "latency", "energy", "memory")

#: The flag of each setting of the spec (key path -> flag), for messages.
FLAGS = {
    "platform": "--platform", "workload": "--workload", "set": "--set", "dvfs": "--dvfs",
    "cost_model": "--cost-model", "cost_table": "--cost-table", "fallback": "--fallback",
    "algorithm": "--algorithm", "params": "--param", "seed": "--seed",
    "problem.assignment": "--assignment", "problem.eps": "--eps", "problem.cores": "--cores",
    "problem.depths": "--depth", "problem.force": "--force", "problem.objective": "--objective",
    "problem.track": "--pareto", "problem.comm": "--comm", "problem.caching": "--no-caching",
    "measurement.engine": "--engine", "measurement.frames_per_trial": "--frames",
    "measurement.noise_sigma": "--noise", "termination.max_trials": "--max-trials",
    "termination.max_clock_s": "--max-clock", "termination.target_fps": "--target-fps",
}


def _parse_params(params) -> dict:
    from hetsim.validation import load_yaml

    out = {}
    for item in params:
        key, eq, raw = item.partition("=")
        if not eq or not key:
            raise HetsimError(f"--param {item!r}: expected key=value, e.g. heuristic=H1")
        out[key] = load_yaml(raw, f"--param {key}")   # hetsim's YAML: 1e6 is a number
    return out


def _parse_sets(overrides) -> dict:
    """--set key.path=value flags as the spec's ``set``: each value read as YAML (a number is a
    number, as in a sweep's SPEC); a string keeps its text (``"1"`` quoted stays a string)."""
    from hetsim.platform.loader import split_override
    from hetsim.validation import load_yaml

    out = {}
    for text in overrides:
        key, raw = split_override(text)
        value = load_yaml(raw, f"--set {key}")
        out[key] = raw if isinstance(value, str) else value
    return out


def _parse_eps(eps: str | None) -> list[str] | None:
    if eps is None:
        return None
    names = [e.strip() for e in eps.split(",") if e.strip()]
    if not names:
        raise HetsimError("--eps: give comma-separated EP names, e.g. --eps big,little")
    return names


def _parse_pareto(pareto: str | None, objective: str | None) -> list[str] | None:
    """--pareto A,B: two different objectives, --objective (if given) one of them."""
    if pareto is None:
        return None
    pair = [o.strip() for o in pareto.split(",") if o.strip()]
    if len(pair) != 2 or len(set(pair)) != 2 or any(o not in OBJECTIVES for o in pair):
        raise HetsimError(f"--pareto {pareto!r}: give two different objectives A,B of "
                          f"{', '.join(OBJECTIVES)}, e.g. --pareto throughput,energy")
    if objective is not None and objective not in pair:
        raise HetsimError(f"--objective {objective} is not one of --pareto {pareto}; drop --objective "
                          f"(the front's first objective is the one best is judged by)")
    return pair


def flags_spec(platform_name, workload_name, algorithm=None, params=(), depths=(), eps=None, cores=None,
               assignment_kind=None, objective=None, pareto=None, engine=None, frames=None, cost_table=None,
               fallback=None, max_trials=None, max_clock=None, target_fps=None, noise_sigma=0.0, seed=0,
               dvfs=None, overrides=(), force=False, cost_model=None, comm=None, no_caching=False):
    """The :class:`~hetsim.exploration.spec.ExplorationSpec` of ``hetsim explore``'s flags (only the
    flags given are set; errors name the flag)."""
    from hetsim.exploration.spec import ExplorationSpec

    pair = _parse_pareto(pareto, objective)
    if pair is not None:
        objective = objective or pair[0]
    problem = {"assignment": assignment_kind, "eps": _parse_eps(eps), "cores": cores,
               "depths": list(depths) or None, "force": force or None, "objective": objective,
               "track": [o for o in pair if o != objective] if pair else None, "comm": comm,
               "caching": False if no_caching else None}
    measurement = {"engine": engine, "frames_per_trial": frames, "noise_sigma": noise_sigma or None}
    termination = {"max_trials": max_trials, "max_clock_s": max_clock, "target_fps": target_fps}
    data = {"platform": platform_name, "workload": workload_name, "set": _parse_sets(overrides) or None,
            "dvfs": dvfs, "cost_model": cost_model, "cost_table": cost_table, "fallback": fallback,
            "algorithm": algorithm, "params": _parse_params(params) or None, "problem": _given(problem),
            "measurement": _given(measurement), "termination": _given(termination), "seed": seed}
    return ExplorationSpec.make(FLAGS, **_given(data))


def _given(fields: dict) -> dict:
    """The fields given (a flag left out is a default the spec resolves, not a value)."""
    return {k: v for k, v in fields.items() if v is not None and v != {}}


@click.command("explore")
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--algorithm", "-a", default=None, cls=PluginHelpOption, listing="hetsim.cli.explore:_installed",
              help="An algorithm of the registry (default: one that fits the request, said in a note; "
                   "NSGA-II-pipe with --pareto; docs/explorers.md says which fits which platform). "
                   "{installed}")
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
@click.option("--assignment", "assignment_kind", type=click.Choice(["permutations", "cores", "auto"]),
              default=None,
              help="How stages get EPs: distinct whole EPs (permutations, the default) or disjoint "
                   "core groups of the clusters (cores: B2-B2-s3-s1, Pipe-it's space; the default "
                   "for Pipe-it); auto: permutations where the EPs lie on distinct clusters or "
                   "accelerators, else cores. With cores, --eps may name core counts of one cluster (B1,B2,...).")
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
              help="Write a figure (.png, .pdf or .svg: the suffix sets the format): the Pareto front with "
              "--pareto, else the best-so-far convergence.")
@click.option("--export-autodice", "export_dir", type=click.Path(file_okay=False), default=None,
              help="Placements: write the chosen mapping as AutoDiCE's mapping.json and horizontal.json "
                   "in this directory (hetsim simulate -m DIR/mapping.json).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def explore_cmd(plan_out, trials_out, plot_out, export_dir, as_json, **flags):
    """Search mappings of a workload with one of the registered algorithms."""
    from hetsim import loading
    from hetsim.exploration.spec import build
    from hetsim.figures import check_figure_path
    from hetsim.validation import check_output_dir, check_output_path

    loading.allow(flags["force"])   # --force passes the loading limits too (docs/robustness.md)
    spec = flags_spec(**flags)   # every flag but the outputs describes the exploration
    # Every output path writable before anything runs.
    check_output_path(trials_out, "--trials")
    check_figure_path(plot_out, "--plot")
    check_output_path(plan_out, "--plan-out")
    check_output_dir(export_dir, "--export-autodice")
    setup = build(spec, names=FLAGS)
    names = flags["platform_name"], flags["workload_name"]
    if setup.kind == "pipeline":
        _explore_pipeline(setup, flags["pareto"], plan_out, trials_out, plot_out, export_dir, as_json, *names)
    else:
        _explore_placement(setup, plan_out, trials_out, plot_out, export_dir, as_json, *names)


def _flush_notes(notes: list[str]) -> None:
    """Notes on what the command chose, printed (stderr) once the run succeeded, so that an error
    stays the one line on stderr."""
    for text in notes:
        click.echo(f"hetsim: note: {text}", err=True)


def _explore_pipeline(setup, pareto, plan_out, trials_out, plot_out, export_dir, as_json, platform_name,
                      workload_name) -> None:
    """A pipeline algorithm's exploration, its summary (and Pareto front), how to simulate the best
    mapping, and the trial table and plot."""
    from hetsim.exploration.moo import pareto_front

    algorithm, problem = setup.algorithm, setup.problem
    if plan_out is not None:
        raise HetsimError(f"--plan-out does not apply to {algorithm}, a pipeline algorithm (placements only: "
                          f"HOPE:GS, HOPE:LP, StarPU-DMDAR, ...)")
    if export_dir is not None:
        raise HetsimError("--export-autodice applies to placement algorithms (NSGA-II, ...), not to pipelines")
    try:
        setup.explorer.validate(problem)
    except HetsimError as e:
        raise HetsimError(f"--algorithm {algorithm} / --param: {e}") from None
    # A progress bar only where someone watches (a terminal), never in a pipe or a captured run.
    result = setup.run(progress=not as_json and console.is_terminal)
    _flush_notes(setup.notes)
    front = pareto_front(result, list(problem.objectives)) if pareto is not None else None
    _write_pipeline_files(result, algorithm, setup.workload, setup.platform, pareto, trials_out, plot_out)
    if as_json:
        _echo_json(result.summary(), front)
        return
    _print_pipeline_result(result, problem, front, setup.workload, setup.platform, platform_name, workload_name,
                           trials_out, plot_out)


def _explore_placement(setup, plan_out, trials_out, plot_out, export_dir, as_json, platform_name,
                       workload_name) -> None:
    """A placement algorithm's exploration (the plan measured), its summary with what the scheduler
    reports (wall time, prediction, ...), and the plan as a mapping file."""
    algorithm, problem, platform, workload = setup.algorithm, setup.problem, setup.platform, setup.workload
    if plot_out is not None:
        raise HetsimError(f"--plot does not apply to {algorithm}, a placement algorithm (it places ops on EPs, "
                          f"it does not cut stages)")
    result = setup.run()
    written = _export_autodice(result, platform, workload, export_dir) if export_dir else []
    _flush_notes(setup.notes)
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

    from hetsim.figures import save_figure

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
    save_figure(fig, path, "--plot", dpi=120)


def _installed() -> str:
    """The registered algorithms by problem kind (the --algorithm help): hetsim's and every
    installed plugin's."""
    from hetsim.exploration.registry import PROBLEM_KINDS, algorithms

    what = {"pipeline": "stages of layers", "placement": "op -> EP plans of the DAG",
            "hybrid": "partitions over devices"}
    text = "; ".join(f"{kind} ({what.get(kind, kind)}): {', '.join(a.name for a in found)}"
                     for kind in PROBLEM_KINDS if (found := algorithms(kind)))
    return text[:1].upper() + text[1:] + "."
