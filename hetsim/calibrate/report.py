"""What a board calibration reports: residuals per network, per cluster and per clock, the
measured-vs-predicted plot, the held-out scores and the ablation (docs/calibrate.md)."""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError

#: Figure formats by suffix (matplotlib writes each).
PLOT_FORMATS = {".png": "png", ".svg": "svg", ".pdf": "pdf"}


def plot_format(path: str | os.PathLike) -> str:
    fmt = PLOT_FORMATS.get(Path(path).suffix.lower())
    if fmt is None:
        raise HetsimError(f"--plot {path}: the suffix says the format; allowed: {', '.join(PLOT_FORMATS)}")
    return fmt


def plot_fit(table: pd.DataFrame, path: str | os.PathLike, title: str = "") -> None:
    """Measured vs predicted time of every row (log-log): layers and ops as dots coloured by network,
    whole networks and pipelines as larger marks, the diagonal and +-10 % about it."""
    import matplotlib.pyplot as plt  # the backend is the caller's (the hetsim command draws to files)

    from hetsim.validation import atomic_write

    fmt = plot_format(path)
    fig, ax = plt.subplots(figsize=(6.4, 5.6))
    networks = sorted(set(table.network))
    colors = {n: plt.get_cmap("tab10")(i % 10) for i, n in enumerate(networks)}
    marks = {"layer": ("o", 10, 0.55), "op": ("o", 8, 0.55), "network": ("s", 46, 0.9), "pipeline": ("D", 40, 0.9)}
    for kind, (marker, size, alpha) in marks.items():
        for n in networks:
            sub = table[(table.kind == kind) & (table.network == n)]
            if sub.empty:
                continue
            ax.scatter(sub.measured_s * 1e3, sub.predicted_s * 1e3, s=size, marker=marker, alpha=alpha,
                       color=colors[n], edgecolors="black" if kind in ("network", "pipeline") else "none",
                       linewidths=0.5, label=n if kind == table.kind.iloc[0] or kind == "layer" else None)
    lo = float(min(table.measured_s.min(), table.predicted_s.min())) * 1e3 / 1.3
    hi = float(max(table.measured_s.max(), table.predicted_s.max())) * 1e3 * 1.3
    xs = np.array([lo, hi])
    ax.plot(xs, xs, color="black", lw=0.8)
    for f in (0.9, 1.1):
        ax.plot(xs, xs * f, color="grey", lw=0.6, ls="--")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("measured (ms)")
    ax.set_ylabel("predicted (ms)")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles, strict=True))
    ax.legend(uniq.values(), uniq.keys(), fontsize=8, loc="upper left", title="dots: layers/ops; squares: "
              "networks; diamonds: pipelines", title_fontsize=7)
    layer = table[table.kind.isin(["layer", "op"])]
    frame = table[table.kind.isin(["network", "pipeline"])]
    parts = []
    if not layer.empty:
        parts.append(f"layers/ops median |error| {np.median(layer.error.abs()):.1%}")
    if not frame.empty:
        parts.append(f"networks/pipelines {np.median(frame.error.abs()):.1%}")
    ax.set_title((title + "\n" if title else "") + ", ".join(parts), fontsize=9)
    ax.grid(True, which="both", alpha=0.2)
    fig.tight_layout()
    with atomic_write(path, "wb") as f:
        fig.savefig(f, format=fmt, dpi=120)
    plt.close(fig)


def pct(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:+.1%}"


def apct(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.1%}"


def summary_markdown(table: pd.DataFrame, by: str, title: str) -> str:
    from hetsim.calibrate.board import error_summary

    s = error_summary(table, by)
    lines = [f"### {title}", "", f"| {by} | rows | median abs error | median error | max abs error |",
             "|---|---:|---:|---:|---:|"]
    for r in s.itertuples():
        lines.append(f"| {getattr(r, by)} | {r.rows} | {apct(r.median_abs_error)} | {pct(r.median_error)} | "
                     f"{apct(r.max_abs_error)} |")
    return "\n".join(lines)


def fit_markdown(fit, title: str = "") -> str:
    """The residual report of a :class:`~hetsim.calibrate.board.BoardFit`."""
    t = fit.table
    out = [f"## {title or 'Calibration of ' + fit.source}", "",
           f"Cost model {fit.cost}; mechanisms: {', '.join(['base', *fit.mechanisms])}; "
           f"{len(t)} rows" + (f"; held out: {', '.join(fit.excluded)}" if fit.excluded else "") + ".", "",
           "| parameter | value |", "|---|---:|"]
    out += [f"| `{k}` | {v:.4g} |" for k, v in fit.values.items()]
    out.append("")
    for by, name in (("kind", "per kind of row"), ("network", "per network"), ("place", "per cluster"),
                     ("ep", "per EP"), ("clock", "per clock")):
        if by == "ep" and (t.ep == "").all():
            continue
        out += [summary_markdown(t, by, name), ""]
    return "\n".join(out)


def dvfs_slowdowns(table: pd.DataFrame) -> pd.DataFrame:
    """Per network and EP with whole-network rows (or a full set of layer rows) at two or more
    clocks: the slowdown from the fastest clock to each other, measured and predicted."""
    rows = []
    frames = table[table.kind == "network"]
    for (net, ep), g in frames.groupby(["network", "ep"]):
        if len(g) < 2:
            continue
        top = g.loc[g.measured_s.idxmin()]
        for r in g.itertuples():
            if r.Index == top.name:
                continue
            m = r.measured_s / top.measured_s
            p = r.predicted_s / top.predicted_s
            rows.append({"network": net, "ep": ep, "from": top.clock, "to": r.clock, "measured": m,
                         "predicted": p, "error": p / m - 1})
    return pd.DataFrame(rows, columns=["network", "ep", "from", "to", "measured", "predicted", "error"])


def holdout_markdown(results: Sequence) -> str:
    """One line per held-out network (:class:`~hetsim.calibrate.crossval.Holdout`)."""
    lines = ["| held out | layer rows | layer median abs error | layer rank corr. | pipelines | "
             "pipeline median abs error | pipeline rank corr. | regret | DVFS slowdown error |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for h in results:
        lines.append(f"| {h.network} | {h.layer_rows} | {apct(h.layer_median_abs_error)} | {_r(h.layer_spearman)} | "
                     f"{h.pipeline_rows} | {apct(h.pipeline_median_abs_error)} | {_r(h.pipeline_spearman)} | "
                     f"{apct(h.regret)} | {apct(h.dvfs_median_abs_error)} |")
    return "\n".join(lines)


def _r(x: float) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"
