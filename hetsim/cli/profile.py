"""``hetsim profile``: run an ONNX model with ONNX Runtime on this machine and keep its profile."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from hetsim.bounds import SEED
from hetsim.cli._common import check_flag, console
from hetsim.errors import HetsimError

if TYPE_CHECKING:
    from hetsim.platform import Platform


def _threads(text: str | None) -> list[int]:
    if text is None:
        n = len(os.sched_getaffinity(0))
        return sorted({1, n})
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise HetsimError(f"--threads {text!r}: expected thread counts such as 1,2") from None
    if not values:
        raise HetsimError(f"--threads {text!r}: expected thread counts such as 1,2")
    return list(dict.fromkeys(values))


def platform_yaml(name: str, cores: int, threads: list[int]) -> str:
    """A platform whose EPs are this machine's thread settings: C1, C2... on one cluster. Its
    numbers are placeholders: it is for replaying measured costs (--cost-table), not the roofline
    model (``hetsim calibrate host`` measures those)."""
    eps = ", ".join(f"C{t}" for t in threads)
    return "\n".join([
        "# Written by `hetsim profile`: this machine's ONNX Runtime thread settings as EPs "
        f"({eps}).",
        "# Replay the measured costs beside this file with --cost-table; the rates below are",
        "# placeholders [not measured], never used by the measured cost model (for a roofline",
        "# platform of this machine, run `hetsim calibrate host`).",
        "schema: 2",
        f"name: {name}",
        f"description: \"this machine under ONNX Runtime, EPs {eps} (measured costs only)\"",
        "memories:",
        "  - {name: dram, bandwidth_GBps: 10}  # [placeholder]",
        "core_types:",
        "  - name: cpu",
        "    macs_per_cycle: 1  # [placeholder]",
        "    dvfs:",
        "      - {name: nominal, freq_MHz: 1000}  # [placeholder]",
        "clusters:",
        f"  - {{name: cpu, symbol: C, core_type: cpu, cores: {cores}, memory: dram}}  "
        "# the CPUs ONNX Runtime's threads were pinned to",
        "runtime:  # how the profiled sessions ran: ONNX Runtime's sequential executor, one node at a time",
        "  serial: true",
        "  residency: memory",
        "",
    ])


@click.command("profile")
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Directory for ONNX Runtime's profiles, the cost table, the workload and a "
              "platform YAML.")
@click.option("--threads", default=None, metavar="1,2",
              help="Intra-op thread counts, one profiled session each (default: 1 and all CPUs).")
@click.option("--runs", type=int, default=10, show_default=True, help="Measured runs per session.")
@click.option("--warmup", type=int, default=2, show_default=True,
              help="Runs before the measured ones (dropped from the costs).")
@click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME=1x3x224x224",
              help="Fix a graph input's dims (needed for symbolic dims).")
@click.option("--name", default=None, help="Workload name (default: the model's file name).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random inputs.")
@click.option("--spin", is_flag=True, help="Let ONNX Runtime's worker threads spin between ops (its "
              "default; off here: on a shared machine spinning threads stall each other).")
def profile(model, out, threads, runs, warmup, input_shapes, name, seed, spin) -> None:
    """Measure MODEL on this machine with ONNX Runtime (one session per thread count, threads
    pinned, random inputs) and write its profiles, a measured cost table per op and thread count,
    the workload and a platform whose EPs are the thread settings (C1, C2, ...)."""
    from hetsim.cli._common import progress_bar
    from hetsim.cli.costs import print_summary, write_tables
    from hetsim.cost.ort_profile import import_ort_profiles, run_ort_profiles
    from hetsim.validation import check_name, check_output_dir
    from hetsim.workload.onnx_import import import_onnx, parse_input_shapes

    counts = _threads(threads)
    # Every number checked before the progress bar starts (one line, nothing else on stderr).
    ncpu = len(os.sched_getaffinity(0))
    for n in counts:
        check_flag("--threads", n, (1, ncpu), f"threads (this process may use {ncpu} CPUs)", integer=True)
    check_flag("--runs", runs, (1, 10 ** 6), "runs", integer=True)
    check_flag("--warmup", warmup, (0, 10 ** 6), "runs", integer=True)
    check_flag("--seed", seed, SEED, integer=True)
    shapes = parse_input_shapes(input_shapes)
    # The name becomes the workload's file and the platform's name (<name>-ort): checked before
    # anything runs or is written.
    wname = check_name(name if name is not None else Path(model).stem,
                       "--name" if name is not None else "workload name (the model's file name; give --name)",
                       strict=True)
    check_output_dir(out, "--out")
    imported = import_onnx(model, wname, input_shapes=shapes, allow_unknown=True)  # fail early
    out_dir = Path(out)
    err = Console(stderr=True)
    load_before = os.getloadavg()[0]
    with progress_bar(err) as bar:
        task = bar.add_task("ONNX Runtime runs", total=len(counts) * (runs + warmup))
        paths = run_ort_profiles(model, counts, out_dir, runs=runs, warmup=warmup, seed=seed,
                                 input_shapes=shapes, progress=lambda n: bar.advance(task, n),
                                 spinning=spin)
    load_after = os.getloadavg()[0]
    measured = import_ort_profiles({f"C{t}": [paths[t]] for t in counts}, model,
                                   skip_runs=warmup, input_shapes=shapes, name=wname)
    written = write_tables(measured, out_dir, imported.spec,
                           f"Imported by `hetsim profile {model}`.")
    platform = _write_platform(out_dir, wname, counts, written)
    print_summary(measured)
    _end_to_end(platform, imported.spec, measured, out_dir, wname, counts)
    cpus = len(os.sched_getaffinity(0))
    busy = max(load_before, load_after) > cpus - 0.5
    console.print(f"load average {load_before:.2f} before, {load_after:.2f} after, on {cpus} CPUs"
                  + (": the machine was busy, so runs include other processes' interference"
                     if busy else ""), soft_wrap=True)
    console.print(f"wrote {', '.join(escape(str(p)) for p in [*paths.values(), *written])}",
                  soft_wrap=True)


def _write_platform(out_dir: Path, wname: str, counts: list[int], written: list) -> Platform:
    """platform.yaml (the thread settings as EPs), checked by loading it before it is written;
    appended to ``written``."""
    import yaml

    from hetsim.platform import platform_from_dict
    from hetsim.validation import atomic_write

    text = platform_yaml(f"{wname}-ort", max(counts), counts)
    platform = platform_from_dict(yaml.safe_load(text), str(out_dir / "platform.yaml"))
    with atomic_write(out_dir / "platform.yaml") as f:
        f.write(text)
    written.append(out_dir / "platform.yaml")
    return platform


def _end_to_end(platform, spec: dict, measured, out_dir: Path, wname: str, counts: list[int]) -> None:
    """The end-to-end check: every op on one EP, in order (a sequential run), simulated with the
    measured costs, against ONNX Runtime's own end-to-end time of the same runs."""
    from hetsim.cost import MeasuredCostModel
    from hetsim.evaluation import evaluate
    from hetsim.mapping import load_mapping
    from hetsim.workload import workload_from_dict

    workload = workload_from_dict(spec, str(out_dir / f"{wname}.yaml"))
    cost = MeasuredCostModel(platform, measured.ops)
    t = Table("EP", "ONNX Runtime run, median (ms)", "fastest run (ms)",
              "simulated sequential (ms)", "error", title="end to end", title_justify="left")
    for n in counts:
        ep = f"C{n}"
        runs_ep = measured.runs[measured.runs.ep == ep]
        measured_s = float(runs_ep.time_s.median())
        pipe = load_mapping(f"{ep}:1-{workload.num_layers}", platform, workload, cost)
        sim_s = evaluate(platform, workload, pipe, cost=cost, engine="analytic", frames=1).latency_s["mean"]
        t.add_row(ep, f"{measured_s * 1e3:.3f}", f"{runs_ep.time_s.min() * 1e3:.3f}",
                  f"{sim_s * 1e3:.3f}", f"{(sim_s - measured_s) / measured_s:+.1%}")
    console.print(t)
