"""``hetsim workloads list | show``."""

from __future__ import annotations

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import console, fmt
from hetsim.errors import HetsimError


@click.group()
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
        t.add_row(*[escape(fmt(v)) for v in row])
    console.print(t)
