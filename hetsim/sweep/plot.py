"""What-if curves of a sweep: a metric against an axis, one line per value of a second axis, one
panel per value of a third (``hetsim plot DIR --x AXIS --y METRIC --hue AXIS --facet AXIS``).

Rows that differ in other axes too (seeds, or axes not named) are aggregated: the line is their mean
and a band spans their min..max [choice: a sweep's other axes are repeats or nuisance factors;
plot them as hue or facet to see them]. Failed cells are left out. Labels name the quantity and the
unit its column's name ends with (``throughput_fps`` -> throughput (frames/s), ``_s`` s, ``_GBps``
GB/s, ...). An axis whose values form a geometric progression (``geomspace``) is drawn on a log
scale; a category metric (``bottleneck_stage``) as categories: its most frequent value over the
other axes, steps between integer ticks, never a mean such as stage 1.25.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from hetsim.errors import HetsimError
from hetsim.figures import save_figure

#: Units by name suffix, longest first.
UNITS = (("_pJ_per_byte", "pJ/B"), ("_GBps", "GB/s"), ("_MBps", "MB/s"), ("_fps", "frames/s"),
         ("_MHz", "MHz"), ("_GHz", "GHz"), ("_GiB", "GiB"), ("_bytes", "bytes"), ("_ms", "ms"),
         ("_us", "µs"), ("_ns", "ns"), ("_J", "J"), ("_W", "W"), ("_s", "s"))
#: Columns of a results table that are not axes.
STATUS_COLUMNS = ("cell", "status", "error")
#: At most this many lines (hue values) and panels (facet values) in a default plot.
MAX_HUES, MAX_FACETS = 12, 6


#: Metrics whose values are categories (integers naming a thing, not quantities), with their label.
CATEGORY_METRICS = {"bottleneck_stage": "bottleneck stage"}


def label(name: str) -> str:
    """The axis label of a column: its quantity in words and its unit.

    >>> label("memories.dram.bandwidth_GBps"), label("latency_p99_s"), label("bottleneck_stage")
    ('memories.dram.bandwidth (GB/s)', 'latency p99 (s)', 'bottleneck stage')
    """
    if name in CATEGORY_METRICS:
        return CATEGORY_METRICS[name]
    head, dot, last = name.rpartition(".")
    for suffix, unit in UNITS:
        if last.endswith(suffix) and len(last) > len(suffix):
            return f"{head}{dot}{last[:-len(suffix)].replace('_', ' ')} ({unit})"
    return f"{head}{dot}{last.replace('_', ' ')}"


def is_geometric(values) -> bool:
    """Whether the distinct values (three or more, of one sign) form a geometric progression, as a
    ``geomspace`` axis makes (to 12 significant digits)."""
    v = sorted({float(x) for x in values})
    if len(v) < 3 or not (all(x > 0 for x in v) or all(x < 0 for x in v)):
        return False
    ratios = [b / a for a, b in zip(v, v[1:], strict=False)]
    return all(abs(r / ratios[0] - 1) < 1e-6 for r in ratios) and abs(ratios[0] - 1) > 1e-9


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


def _mode(values: pd.Series) -> float:
    """The most frequent value (the smallest of equally frequent ones)."""
    counts = values.value_counts()
    return float(min(counts.index[counts == counts.max()]))


def _lines(ax, part: pd.DataFrame, x: str, y: str, hue: str | None, hues: list,
           numeric_x: bool, order: list) -> bool:
    """One panel's lines, one per hue value: the mean over the other axes, a min..max band where
    rows were aggregated (returns whether any were); a category metric's most frequent value, in
    steps. A categorical x keeps the table's order."""
    aggregated = False
    category = y in CATEGORY_METRICS
    for hv in hues:
        sub = part if hv is None else part[part[hue] == hv]
        if sub.empty:
            continue
        g = sub.groupby(x, sort=numeric_x)[y].agg(["mean", "min", "max", "count", _mode])
        if not numeric_x:
            g = g.reindex([v for v in order if v in g.index])
        xs = g.index.to_numpy() if numeric_x else range(len(g))
        name = None if hv is None else str(hv)
        if category:
            ax.plot(xs, g["_mode"], marker="o", drawstyle="steps-mid", label=name)
            aggregated = aggregated or bool((g["count"] > 1).any())
            continue
        ax.plot(xs, g["mean"], marker="o", label=name)
        if (g["count"] > 1).any():
            aggregated = True
            ax.fill_between(xs, g["min"], g["max"], alpha=0.15)
        if not numeric_x:
            ax.set_xticks(range(len(g)), [str(v) for v in g.index], rotation=30, ha="right")
    return aggregated


def plot(table: pd.DataFrame, x: str, y: str, hue: str | None = None, facet: str | None = None,
         title: str | None = None, logx: bool | None = None, logy: bool = False):
    """A matplotlib Figure of ``y`` against ``x`` (see the module docstring). ``logx=None``: a log
    x axis where ``x`` is a geometric progression (:func:`is_geometric`)."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    data = _plottable(table, x, y, hue, facet)
    numeric_x = pd.api.types.is_numeric_dtype(data[x])
    if logx is None:
        logx = numeric_x and is_geometric(data[x])
    category = y in CATEGORY_METRICS
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
        if logy and not category:
            ax.set_yscale("log")
        if category:
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        if fv is not None:
            ax.set_title(f"{facet} = {fv}", fontsize=9)
        ax.grid(alpha=0.3)
        if hue and k == 0:
            ax.legend(title=hue, fontsize=8, title_fontsize=8)
    for k in range(len(facets), nrows * ncols):
        axs[k // ncols][k % ncols].set_visible(False)
    note = ("most frequent over the other axes" if category else "mean over the other axes; band: min..max") \
        if aggregated else ""
    fig.suptitle("\n".join(t for t in (title, note) if t), fontsize=10)
    fig.tight_layout()
    return fig


def save(fig, path: str | os.PathLike, flag: str = "--out") -> Path:
    """Write ``fig`` in the format its suffix names (.png, .pdf, .svg) and close it."""
    return save_figure(fig, path, flag, dpi=110, bbox_inches="tight")


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
