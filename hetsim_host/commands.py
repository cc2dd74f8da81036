"""``hetsim calibrate host`` and ``hetsim validate host``: two click groups, registered on the main
command line with ``cli.add_command(calibrate)`` and ``cli.add_command(validate)``.

Progress bars and tables go to stderr when ``--json`` asks for one object on stdout.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from hetsim.cli._common import LazyChoice, progress_bar
from hetsim.errors import HetsimError


# -- calibrate --------------------------------------------------------------------------------
@click.group()
def calibrate() -> None:
    """Measure a machine and fit a platform YAML to it."""


@calibrate.command("host")
@click.option("--out", "out", type=click.Path(dir_okay=False), default="results/host/host.yaml",
              show_default=True, help="Platform YAML to write; the raw measurements go beside it "
              "(<name>.measurements.json).")
@click.option("--name", default="host", show_default=True, help="Platform name in the YAML.")
@click.option("--quick", is_flag=True, help="A tiny benchmark plan (seconds, rough): for tests.")
@click.option("--statistic", type=click.Choice(["median", "p20"]), default="median", show_default=True,
              help="Which statistic of each measurement's repetitions the fits use: the median, or the 20th "
              "percentile (on a machine other processes share, the undisturbed runs are the fast ones).")
@click.option("--from", "from_json", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Refit from a saved <name>.measurements.json instead of measuring.")
def calibrate_host(out, name, quick, statistic, from_json) -> None:
    """Micro-benchmark this machine (GEMMs, memory bandwidth, im2col, op kernels) and fit the
    roofline cost model's parameters to it (about two minutes on 2 cores)."""
    import yaml

    from hetsim.platform import platform_from_dict
    from hetsim.validation import atomic_write, check_name, check_output_path
    from hetsim_host.fit import fit_gemm2, fit_host, platform_yaml, unify_clock
    from hetsim_host.microbench import (
        BenchPlan,
        cpus,
        frame_jitter,
        run_all,
        with_statistic,
    )

    check_output_path(out, "--out")
    check_name(name, "--name", strict=True)   # the platform's name: checked before two minutes of measuring
    out_path = Path(out)
    if out_path.suffix not in (".yaml", ".yml"):
        raise HetsimError(f"--out {out}: the platform file must end in .yaml or .yml")
    raw_path = out_path.with_name(out_path.stem + ".measurements.json")
    check_output_path(raw_path, "--out (its measurements file)")
    plan = BenchPlan.quick() if quick else BenchPlan()
    units = plan.units(len(cpus()))
    console = Console(stderr=True)
    if from_json:
        measurements = read_measurements(from_json)
    else:
        with progress_bar(console) as bar:
            tasks = {phase: bar.add_task(phase, total=n) for phase, n in units.items() if n}
            measurements = run_all(plan, lambda phase, n: bar.advance(tasks[phase], n) if phase in tasks else None)
    fitted = with_statistic(measurements, statistic)
    fit = fit_host(fitted)
    gemm2 = fit_gemm2(fitted, fit) if fitted.contexts else None
    if gemm2 is not None:
        unify_clock(fit, gemm2)
    text = platform_yaml(fit, measurements, name, raw_path.name, gemm2)
    text = text.replace("schema: 2", f"# Fitted on the {statistic} of each measurement's repetitions.\nschema: 2", 1)
    platform_from_dict(yaml.safe_load(text), str(out_path))  # never write a platform that fails to load
    jitter = frame_jitter(measurements)
    with atomic_write(raw_path) as f:
        json.dump({"measurements": measurements.to_dict(), "fit": {
            "statistic": statistic, "residuals": fit.residuals, "peak_GMACps": fit.peak_MACps / 1e9,
            "frame_jitter_sigma": jitter,
            **({"gemm2": {"block": gemm2.block, "residuals": gemm2.residuals,
                          "choices": {k: str(v) for k, v in gemm2.choices.items()}}} if gemm2 else {})}},
                  f, indent=1)
    with atomic_write(out_path) as f:
        f.write(text)
    Console().print(_fit_table(name, fit, gemm2, jitter))
    click.echo(f"wrote {out_path} and {raw_path}")


def read_measurements(path: str | Path):
    """A saved ``<name>.measurements.json`` (``calibrate host --from``): its ``measurements``,
    every problem one line naming the file (not JSON, nested too deeply, NaN or infinite numbers,
    a missing or misspelt section, a time that is not a finite positive number)."""
    from hetsim.validation import read_json
    from hetsim_host.microbench import Measurements

    data = read_json(path, what="a measurements file")
    raw = data.get("measurements") if isinstance(data, dict) else None
    if not isinstance(raw, dict):
        raise HetsimError(f"{path}: not a measurements file of `hetsim calibrate host` (no "
                          "'measurements' mapping at the top)")
    fields = Measurements.__dataclass_fields__
    unknown = sorted(set(raw) - set(fields))
    if unknown or "machine" not in raw:
        what = f"unknown section {unknown[0]!r}" if unknown else "no 'machine' section"
        raise HetsimError(f"{path}: measurements: {what}; sections: {', '.join(fields)}")
    for key, value in raw.items():
        if key in ("machine", "load"):
            if not isinstance(value, dict):
                raise HetsimError(f"{path}: measurements.{key}: a mapping, not {type(value).__name__}")
        elif key == "network_input":
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1 << 16:
                raise HetsimError(f"{path}: measurements.network_input: an input size in [1, 65536] "
                                  f"(got {value!r})")
        elif not isinstance(value, list) or not all(isinstance(r, dict) for r in value):
            raise HetsimError(f"{path}: measurements.{key}: a list of measurements (mappings)")
        else:
            _check_rows(path, key, value)
    return Measurements(**raw)


def _check_rows(path, key: str, rows: list[dict]) -> None:
    """Every number of a measurement finite; times positive, sizes and counts non-negative."""
    for i, row in enumerate(rows):
        for field, value in row.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                continue   # names and labels (kind, op, context, set, step)
            if field.endswith("_s") and not (0 < value < 1e6):
                raise HetsimError(f"{path}: measurements.{key}.{i}.{field}: a time in (0, 1e6) s "
                                  f"(got {value!r})")
            if value < 0:
                raise HetsimError(f"{path}: measurements.{key}.{i}.{field}: must not be negative "
                                  f"(got {value!r})")


def _fit_table(name: str, fit, gemm2, jitter: float) -> Table:
    """The fitted platform's parameters and median errors (the roofline's, then gemm2's)."""
    t = Table("parameter", "value", title=f"fitted platform {name}", title_justify="left")
    t.add_row("peak (GMAC/s/core)", f"{fit.peak_MACps / 1e9:.1f} ({fit.macs_per_cycle:g} MAC/cycle @ {fit.freq_MHz:g} MHz)")
    t.add_row("gemm_efficiency", f"{fit.gemm_efficiency:.3f}")
    t.add_row("parallel_efficiency", ", ".join(f"{x:.3f}" for x in fit.parallel_efficiency))
    t.add_row("op_overhead_us", f"{fit.op_overhead_s * 1e6:.2f}")
    t.add_row("gemm_overhead_us", ", ".join(f"{x * 1e6:.1f}" for x in fit.gemm_overhead_s))
    t.add_row("gemm_pack_GBps", f"{fit.gemm_pack_Bps / 1e9:.2f}")
    t.add_row("im2col_GBps", ", ".join(f"{x / 1e9:.2f}" for x in fit.im2col_Bps))
    t.add_row("bandwidth per core / memory (GB/s)",
              f"{fit.core_bandwidth_Bps / 1e9:.2f} / {fit.memory_bandwidth_Bps / 1e9:.2f}")
    for k, v in sorted(fit.kind_Bps.items()):
        t.add_row(f"kind_GBps.{k}", ", ".join(f"{x / 1e9:.2f}" for x in v))
    if fit.dw_efficiency is not None:
        t.add_row("dw_efficiency", f"{fit.dw_efficiency:.4f}")
    if fit.dw_strided_efficiency is not None:
        t.add_row("dw_strided_efficiency", f"{fit.dw_strided_efficiency:.4f}")
    if fit.dw_parallel_efficiency:
        t.add_row("dw_parallel_efficiency", ", ".join(f"{x:.3f}" for x in fit.dw_parallel_efficiency))
    t.add_row("frame jitter (sigma of log time)", f"{jitter:.3f}")
    for k, r in fit.residuals.items():
        t.add_row(f"median |error| {k}", f"{r:.1%}")
    if gemm2 is not None:
        for k in ("kernel_efficiency", "tile_rows", "tile_cols", "block_k", "overlap", "residency"):
            t.add_row(f"gemm2.{k}", f"{gemm2.block[k]:.3g}" if isinstance(gemm2.block[k], float) else str(gemm2.block[k]))
        for k, r in gemm2.residuals.items():
            t.add_row(f"median |error| {k}", f"{r:.1%}")
    return t


# -- validate ---------------------------------------------------------------------------------
@click.group()
def validate() -> None:
    """Compare the simulator with real runs."""


@validate.command("host")
@click.option("--platform", "-p", "platform_name", required=True,
              help="Calibrated platform (from `hetsim calibrate host`), name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--mapping", "-m", "mappings", multiple=True,
              help="Pipeline string on the host cluster (repeatable). Default: the whole network on 1 "
              "core, on all cores, and the best 2-stage pipeline the simulator finds.")
@click.option("--frames", "-n", type=int, default=30, show_default=True, help="Frames per run.")
@click.option("--repeats", "-r", type=int, default=3, show_default=True,
              help="Runs per mapping (taken in turns; the median is reported).")
@click.option("--scale", type=float, default=1.0, show_default=True,
              help="Scale the input resolution (H and W) by this factor.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random weights.")
@click.option("--noise", "noise_sigma", type=float, default=None,
              help="Sigma of the DES's lognormal noise per stage execution. Default: the frame jitter "
              "`calibrate host` measured (in <platform>.measurements.json beside the platform), else 0.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="Directory for report.md, report.png, report.json [default: results/validation/<workload>].")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a field of the platform (repeatable), e.g. "
              "core_types.cpu.gemm2.conv_policy=armcl: the executor then runs 3x3 stride-1 convs with Winograd.")
@click.option("--cost", "costs", multiple=True, type=LazyChoice("hetsim.cost:fallback_names"),
              help="Cost model(s) to simulate with (repeatable; the first picks the default pipeline and "
              "heads the report). Default: roofline.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def validate_host_cmd(platform_name, workload_name, mappings, frames, repeats, scale, seed, noise_sigma,
                      out_dir, overrides, costs, as_json) -> None:
    """Run a workload for real (numpy, one pinned process per stage) and compare per-layer times
    and pipeline throughput with the DES on the calibrated platform."""
    from hetsim import bounds as B
    from hetsim.cli._common import check_flag
    from hetsim.platform import load_platform
    from hetsim.platform.loader import resolve_platform
    from hetsim_host.executor import WorkloadRef
    from hetsim_host.validate import (
        check_validation,
        host_cluster,
        measured_jitter,
        report_markdown,
        validate_host,
        write_report,
    )

    check_flag("--frames", frames, (3, 10 ** 6), "frames", integer=True)
    check_flag("--repeats", repeats, (1, 1000), "runs", integer=True)
    check_flag("--scale", scale, (1e-3, 100.0), "x the input resolution")
    check_flag("--seed", seed, B.SEED, integer=True)
    check_flag("--noise", noise_sigma, B.NOISE_SIGMA)
    platform = load_platform(platform_name, list(overrides))
    if noise_sigma is None:
        noise_sigma = measured_jitter(resolve_platform(platform_name))
    # The executor is the framework: it picks each conv's algorithm by the platform's conv_policy.
    policy = platform.core_type(host_cluster(platform).core_type).gemm2.conv_policy
    ref = WorkloadRef(workload_name, scale, conv_policy=policy)
    workload = ref.load()
    costs = tuple(costs) or ("roofline",)
    check_validation(platform, ref, list(mappings) or None, frames, repeats, costs)   # errors before the bar
    out = Path(out_dir) if out_dir else Path("results") / "validation" / workload.name
    from hetsim.validation import check_output_dir

    check_output_dir(out, "--out")   # before the runs: '' or a file, a FIFO, a device there is refused
    console = Console(stderr=True)
    with progress_bar(console) as bar:
        task = bar.add_task("frames", total=None)

        def progress(label, done, total):
            bar.update(task, completed=done, total=total, description=label)

        report = validate_host(platform, ref, list(mappings) or None, frames, repeats, seed,
                               noise_sigma=noise_sigma, progress=progress, costs=costs)
    paths = write_report(report, out)
    if as_json:
        d = report.to_dict()
        click.echo(json.dumps({"layer_mape": d["layer_mape"], "layer_mape_by_cost": d["layer_mape_by_cost"],
            "mappings": [{k: m[k] for k in ("mapping", "measured_fps", "simulated_fps", "error", "by_cost")}
                         for m in d["mappings"]],
            "workload": d["workload"], "platform": d["platform"], "report": str(paths[0])}))
    else:
        Console().print(report_markdown(report), markup=False, highlight=False)
        click.echo("wrote " + ", ".join(str(p) for p in paths))
