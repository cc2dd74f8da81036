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

    check_figure_path(out_file, "--out")
    table = read_results(dir)
    fig = draw(table, x, y, hue, facet, title=_title(Path(dir)), logx=True if logx else None, logy=logy)
    safe = x.replace("/", "_")
    path = save(fig, out_file or Path(dir) / "plots" / f"{y}-vs-{safe}.png")
    console.print(f"wrote {path}")


def _title(out: Path) -> str:
    """The sweep's name (from the spec.yaml it left), else the directory's."""
    import yaml

    try:
        name = (yaml.safe_load((out / "spec.yaml").read_text()) or {}).get("name")
    except (OSError, ValueError, yaml.YAMLError, AttributeError):   # ValueError: not UTF-8
        name = None
    return str(name or out.name)
