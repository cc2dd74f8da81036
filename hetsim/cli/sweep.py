"""``hetsim sweep``: run a what-if SPEC over its axes on a local pool or a Dask cluster."""

from __future__ import annotations

import click
from rich.markup import escape

from hetsim.cli._common import console
from hetsim.errors import HetsimError


@click.command("sweep")
@click.argument("spec", required=False)
@click.option("--out", "-o", type=click.Path(file_okay=False), default=None,
              help="Directory for the journal, results.csv and plots (required to run).")
@click.option("--workers", "-j", type=int, default=None,
              help="Local worker processes (default: every core; 1 runs in this process).")
@click.option("--scheduler", default=None, metavar="tcp://HOST:PORT",
              help="Send the cells to this Dask scheduler instead of a local pool.")
@click.option("--resume", is_flag=True, help="Continue a sweep in OUT: cells already done are skipped.")
@click.option("--force", is_flag=True, help="Run even when the cell count exceeds the SPEC's max_cells.")
@click.option("--batch", type=int, default=None, help="Cells per task (default: sized to ~0.2 s).")
@click.option("--dry-run", is_flag=True, help="Validate the SPEC and count its cells; run nothing.")
@click.option("--no-plots", is_flag=True, help="Skip the default plot per metric.")
@click.option("--schema", "schema", is_flag=True, help="Print the JSON Schema of SPEC files and exit.")
def sweep(spec, out, workers, scheduler, resume, force, batch, dry_run, no_plots, schema) -> None:
    """Run every cell of SPEC (a YAML file, or a shipped SPEC by name: tournament, ...).

    One row per cell (the axes' values and the metrics) is appended to OUT/cells.jsonl as cells
    finish; OUT/results.csv is the tidy table and OUT/plots/ one plot per metric.
    """
    from hetsim import loading
    from hetsim.cli._common import check_flag
    from hetsim.sweep import json_schema, load_spec, run_sweep
    from hetsim.sweep.engine import summarize_errors
    from hetsim.sweep.spec import check_count, describe

    loading.allow(force)   # --force passes the loading limits too (this process's loads)
    check_flag("--workers", workers, (1, 1024), "processes", integer=True)
    check_flag("--batch", batch, (1, 10 ** 6), "cells", integer=True)
    if out is not None:
        from hetsim.validation import check_output_dir

        check_output_dir(out, "--out")
    if schema:
        click.echo(json_schema())
        return
    if spec is None:
        raise HetsimError("give a SPEC file (or a shipped SPEC's name); --schema prints the format")
    s = load_spec(spec)
    if dry_run:
        n = check_count(s, force)
        console.print(f"{s.source}: {n:,} cells ({describe(s)}), {s.kind} cells", soft_wrap=True)
        return
    if out is None:
        raise HetsimError("--out DIR is required: where the journal, results.csv and plots go")
    if workers is not None and scheduler is not None:
        raise HetsimError("--workers is for the local pool; with --scheduler the Dask cluster's "
                          "workers run the cells")
    result = run_sweep(s, out, workers=workers, scheduler=scheduler, resume=resume, force=force,
                       batch=batch, progress=True, plots=not no_plots, console=console)
    ok = len(result.table) - result.failed
    console.print(f"done: {ok:,} cells ok, {result.failed:,} failed"
                  + (f", {result.skipped:,} from before" if result.skipped else ""), soft_wrap=True)
    if result.ran:
        console.print(f"ran {result.ran:,} cells in {result.seconds:.1f} s ({result.cells_per_s:.1f} "
                      f"cells/s)", soft_wrap=True)
    for line in summarize_errors(result.errors):
        console.print(f"  [red]{escape(line)}[/red]", highlight=False)
    for f in result.files:
        if f.suffix != ".png":
            console.print(f"wrote {f}")
    plots = [f for f in result.files if f.suffix == ".png"]
    if plots:
        console.print(f"wrote {len(plots)} plots in {plots[0].parent}")
