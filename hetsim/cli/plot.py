"""``hetsim plot``: what-if curves of a sweep's results."""

from __future__ import annotations

from pathlib import Path

import click

from hetsim.cli._common import console


@click.command("plot")
@click.argument("dir", type=click.Path(file_okay=False))
@click.option("--x", "x", required=True, help="The axis on the x axis (e.g. memories.dram.bandwidth_GBps).")
@click.option("--y", "y", required=True, help="The metric (e.g. throughput_fps).")
@click.option("--hue", default=None, help="An axis drawn as one line per value.")
@click.option("--facet", default=None, help="An axis drawn as one panel per value.")
@click.option("--logx", is_flag=True, help="Logarithmic x axis (default: when the axis is a geomspace).")
@click.option("--logy", is_flag=True, help="Logarithmic y axis.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False), default=None,
              help="Figure to write, .png, .pdf or .svg as its suffix says (default DIR/plots/<y>-vs-<x>.png).")
def plot(dir, x, y, hue, facet, logx, logy, out_file) -> None:
    """Plot METRIC against an axis of the sweep in DIR (other axes: mean, band min..max)."""
    from hetsim.figures import check_figure_path
    from hetsim.sweep import plot as draw
    from hetsim.sweep import read_results
    from hetsim.sweep.plot import save
    from hetsim.validation import check_name

    if out_file is None:   # the default file name is made of the axis names: one that leaves DIR is refused
        out_file = Path(dir) / "plots" / check_name(f"{y}-vs-{x}.png".replace("/", "_"), "--x/--y")
    check_figure_path(out_file, "--out")
    table = read_results(dir)
    fig = draw(table, x, y, hue, facet, title=_title(Path(dir)), logx=True if logx else None, logy=logy)
    path = save(fig, out_file)
    console.print(f"wrote {path}")


def _title(out: Path) -> str:
    """The sweep's name (from the spec.yaml it left), else the directory's."""
    from hetsim.errors import HetsimError
    from hetsim.validation import read_yaml

    try:   # read_yaml: a FIFO or a device named spec.yaml is not read
        name = read_yaml(out / "spec.yaml").get("name")
    except (HetsimError, AttributeError):
        name = None
    return str(name or out.name)
