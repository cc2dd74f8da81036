"""Figures of the reproduction: convergence panels, real-vs-predicted bars, Pareto fronts."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

OBJECTIVE_AXES = {"energy_J": "max energy per device (J)", "memory_MiB": "max peak memory per device (MiB)",
                  "latency_s": "latency (s)"}


def _objective_panels(frame: pd.DataFrame) -> tuple[Figure, list]:
    """A figure with one row per network of ``frame`` and one panel per objective, and its panels
    as (row, column, network, objective, axes), row by row."""
    networks = list(dict.fromkeys(frame["network"]))
    fig = Figure(figsize=(12, 3.0 * len(networks)), layout="constrained")
    axes = np.atleast_2d(fig.subplots(len(networks), 3, squeeze=False))
    return fig, [(r, c, net, obj, axes[r, c]) for r, net in enumerate(networks)
                 for c, obj in enumerate(OBJECTIVE_AXES)]


def convergence(curves: pd.DataFrame, title: str) -> Figure:
    """One row per network, one panel per objective: the population minimum per generation of
    each run (``curves``: network, run, generation, objective, value)."""
    fig, panels = _objective_panels(curves)
    for r, c, net, obj, ax in panels:
        sel = curves[(curves["network"] == net) & (curves["objective"] == obj)]
        for run, g in sel.groupby("run", sort=False):
            ax.plot(g["generation"], g["value"], label=run)
        ax.set_title(f"{net}: {OBJECTIVE_AXES[obj]}", fontsize=9)
        ax.set_xlabel("generation")
        ax.set_yscale("log")
        if r == 0 and c == 0:
            ax.legend(fontsize=7)
    fig.suptitle(title)
    return fig


def real_vs_predicted(table: pd.DataFrame, title: str) -> Figure:
    """Grouped bars per network and objective: real (DES) and predicted (model) value of each
    chromosome's Pareto point best in that objective (the thesis's Figs. 15-17, 22-24, 28-30)."""
    fig, panels = _objective_panels(table)
    for r, c, net, obj, ax in panels:
        sel = table[(table["network"] == net) & (table["point"] == obj)]
        x = np.arange(len(sel))
        ax.bar(x - 0.2, sel[f"real_{obj}"], 0.4, label="real (DES)")
        ax.bar(x + 0.2, sel[f"predicted_{obj}"], 0.4, label="predicted (model)")
        ax.set_xticks(x, sel["chromosome"], rotation=30, fontsize=7)
        ax.set_title(f"{net}: best-{obj.split('_')[0]} point, {OBJECTIVE_AXES[obj]}", fontsize=8)
        if r == 0 and c == 0:
            ax.legend(fontsize=7)
    fig.suptitle(title)
    return fig


def pareto_fronts(fronts: pd.DataFrame, title: str) -> Figure:
    """Final Pareto fronts (``fronts``: network, run, energy_J, memory_MiB, latency_s) projected
    on memory vs latency and energy vs memory."""
    networks = list(dict.fromkeys(fronts["network"]))
    fig = Figure(figsize=(9, 3.2 * len(networks)), layout="constrained")
    axes = np.atleast_2d(fig.subplots(len(networks), 2, squeeze=False))
    for r, net in enumerate(networks):
        for c, (x, y) in enumerate((("latency_s", "memory_MiB"), ("memory_MiB", "energy_J"))):
            ax = axes[r, c]
            for run, g in fronts[fronts["network"] == net].groupby("run", sort=False):
                ax.scatter(g[x], g[y], s=10, label=run)
            ax.set_xlabel(OBJECTIVE_AXES[x], fontsize=8)
            ax.set_ylabel(OBJECTIVE_AXES[y], fontsize=8)
            ax.set_xscale("log")
            ax.set_title(net, fontsize=9)
            if r == 0 and c == 0:
                ax.legend(fontsize=7)
    fig.suptitle(title)
    return fig
