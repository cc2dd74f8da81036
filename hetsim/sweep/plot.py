"""What-if curves of a sweep: a metric against an axis, one line per value of a second axis, one
panel per value of a third (``hetsim plot DIR --x AXIS --y METRIC --hue AXIS --facet AXIS``).

Rows that differ in other axes too (seeds, or axes not named) are aggregated: the line is their mean
and a band spans their min..max [choice: a sweep's other axes are repeats or nuisance factors;
plot them as hue or facet to see them]. Failed cells are left out. Labels carry the unit that the
column's name ends with (``_fps`` frames/s, ``_s`` s, ``_GBps`` GB/s, ...).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from hetsim.errors import HetsimError
from hetsim.validation import atomic_write

#: Units by name suffix, longest first.
UNITS = (("_pJ_per_byte", "pJ/B"), ("_GBps", "GB/s"), ("_MBps", "MB/s"), ("_fps", "frames/s"),
         ("_MHz", "MHz"), ("_GHz", "GHz"), ("_GiB", "GiB"), ("_bytes", "bytes"), ("_ms", "ms"),
         ("_us", "µs"), ("_ns", "ns"), ("_J", "J"), ("_W", "W"), ("_s", "s"))
#: Columns of a results table that are not axes.
STATUS_COLUMNS = ("cell", "status", "error")
#: At most this many lines (hue values) and panels (facet values) in a default plot.
MAX_HUES, MAX_FACETS = 12, 6


def label(name: str) -> str:
    """``memories.dram.bandwidth_GBps`` -> ``memories.dram.bandwidth_GBps (GB/s)``."""
    for suffix, unit in UNITS:
        if name.endswith(suffix):
            return f"{name} ({unit})"
    return name


def split_columns(table: pd.DataFrame, axes: list[str] | None = None) -> tuple[list[str], list[str]]:
    """(axis columns, metric columns) of a results table: axes sit between ``cell`` and
    ``status``."""
    cols = list(table.columns)
    if axes is None:
        if "status" not in cols:
            raise HetsimError("not a sweep results table (no status column)")
        start = cols.index("cell") + 1 if "cell" in cols else 0
        axes = cols[start:cols.index("status")]
    metrics = [c for c in cols if c not in axes and c not in STATUS_COLUMNS]
    return axes, metrics


def _plottable(table: pd.DataFrame, x: str, y: str, hue: str | None, facet: str | None) -> pd.DataFrame:
    """The finished cells with a numeric ``y``, after checking the flags name axes and a metric."""
    axes, metrics = split_columns(table)
    for flag, name in (("--x", x), ("--hue", hue), ("--facet", facet)):
        if name is not None and name not in axes:
            raise HetsimError(f"{flag} {name!r} is not an axis of this sweep; axes: {', '.join(axes) or 'none'}")
    if y not in metrics:
        raise HetsimError(f"--y {y!r} is not a metric of this sweep; metrics: {', '.join(metrics) or 'none'}")
    data = table[table["status"] == "ok"] if "status" in table else table
    data = data[pd.to_numeric(data[y], errors="coerce").notna()]
    if data.empty:
        raise HetsimError(f"no finished cell has a value of {y!r} to plot")
    return data.assign(**{y: pd.to_numeric(data[y])})


def _lines(ax, part: pd.DataFrame, x: str, y: str, hue: str | None, hues: list,
           numeric_x: bool, order: list) -> bool:
    """One panel's lines, one per hue value: the mean over the other axes, a min..max band where
    rows were aggregated (returns whether any were). A categorical x keeps the table's order."""
    aggregated = False
    for hv in hues:
        sub = part if hv is None else part[part[hue] == hv]
        if sub.empty:
            continue
        g = sub.groupby(x, sort=numeric_x)[y].agg(["mean", "min", "max", "count"])
        if not numeric_x:
            g = g.reindex([v for v in order if v in g.index])
        xs = g.index.to_numpy() if numeric_x else range(len(g))
        ax.plot(xs, g["mean"], marker="o", label=None if hv is None else str(hv))
        if (g["count"] > 1).any():
            aggregated = True
            ax.fill_between(xs, g["min"], g["max"], alpha=0.15)
        if not numeric_x:
            ax.set_xticks(range(len(g)), [str(v) for v in g.index], rotation=30, ha="right")
    return aggregated


def plot(table: pd.DataFrame, x: str, y: str, hue: str | None = None, facet: str | None = None,
         title: str | None = None, logx: bool = False, logy: bool = False):
    """A matplotlib Figure of ``y`` against ``x`` (see the module docstring)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = _plottable(table, x, y, hue, facet)
    numeric_x = pd.api.types.is_numeric_dtype(data[x])
    facets = list(dict.fromkeys(data[facet])) if facet else [None]
    hues = list(dict.fromkeys(data[hue])) if hue else [None]
    ncols = min(len(facets), 3)
    nrows = math.ceil(len(facets) / ncols)
    fig, axs = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 3.8 * nrows), squeeze=False,
                            sharey=True)
    order = list(dict.fromkeys(data[x]))
    aggregated = False
    for k, fv in enumerate(facets):
        ax = axs[k // ncols][k % ncols]
        part = data if fv is None else data[data[facet] == fv]
        aggregated = _lines(ax, part, x, y, hue, hues, numeric_x, order) or aggregated
        ax.set_xlabel(label(x))
        if k % ncols == 0:
            ax.set_ylabel(label(y))
        if logx and numeric_x:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        if fv is not None:
            ax.set_title(f"{facet} = {fv}", fontsize=9)
        ax.grid(alpha=0.3)
        if hue and k == 0:
            ax.legend(title=hue, fontsize=8, title_fontsize=8)
    for k in range(len(facets), nrows * ncols):
        axs[k // ncols][k % ncols].set_visible(False)
    note = "mean over the other axes; band: min..max" if aggregated else ""
    fig.suptitle("\n".join(t for t in (title, note) if t), fontsize=10)
    fig.tight_layout()
    return fig


def save(fig, path: str | os.PathLike) -> Path:
    import matplotlib.pyplot as plt

    path = Path(path)
    with atomic_write(path, "wb") as f:
        fig.savefig(f, format="png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def default_plots(table: pd.DataFrame, spec, out_dir: Path) -> list[Path]:
    """One PNG per metric with values: x the first axis that varies (numeric axes first), hue and
    facet the next ones when they have few values."""
    if table.empty or "status" not in table:
        return []
    axes = [n for n in table.columns[1:list(table.columns).index("status")]]
    _, metrics = split_columns(table, axes)
    varying = [a for a in axes if table[a].nunique(dropna=False) > 1]
    if not varying:
        return []
    numeric = [a for a in varying if pd.api.types.is_numeric_dtype(table[a]) and a != "seed"]
    x = (numeric or [a for a in varying if a != "seed"] or varying)[0]
    rest = [a for a in varying if a not in (x, "seed")]
    hue = next((a for a in rest if table[a].nunique() <= MAX_HUES), None)
    facet = next((a for a in rest if a != hue and table[a].nunique() <= MAX_FACETS), None)
    ok = table[table["status"] == "ok"]
    written = []
    for y in metrics:
        if y not in ok or pd.to_numeric(ok[y], errors="coerce").notna().sum() == 0:
            continue
        fig = plot(table, x, y, hue, facet, title=spec.name)
        written.append(save(fig, out_dir / f"{y}.png"))
    return written
