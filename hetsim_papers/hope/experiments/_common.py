"""Helpers the HOPE figures share: the models a run covers, claim construction, figures."""

from __future__ import annotations

from collections.abc import Iterable

import matplotlib.pyplot as plt
import pandas as pd

from hetsim.experiment import (
    FIT_DEPENDENT,
    FIT_INPUT,
    PREDICTION,
    STRUCTURAL,
    VECTOR,
    Artifact,
    Context,
    split_wallclock,
)
from hetsim_papers.hope.experiments.paper import MODELS, QUICK_FEW, QUICK_MODELS

__all__ = ["FIT_DEPENDENT", "FIT_INPUT", "PREDICTION", "STRUCTURAL", "VECTOR", "artifact", "figure",
           "grouped_bars", "models"]


def models(ctx: Context, few: bool = False) -> tuple[str, ...]:
    """The models an experiment runs: all seven, or the quick versions' four (``few``: three)."""
    if not ctx.quick:
        return tuple(MODELS)
    return QUICK_FEW if few else QUICK_MODELS


def figure(rows: int, cols: int, size: tuple[float, float]):
    fig, axes = plt.subplots(rows, cols, figsize=size, squeeze=False)
    return fig, axes


#: The tables' wall-clock column: the scheduler's own time on this machine.
WALLCLOCK = ("schedule_s",)


def artifact(table: pd.DataFrame, fig, claims: Iterable, notes: Iterable[str] = (),
             wallclock_figure=None) -> Artifact:
    """The experiment's artifact; the schedulers' wall times go to ``<id>.wallclock.csv`` (and
    ``wallclock_figure`` to ``<id>.wallclock.png``), never into the table, which is the same bytes
    on every run."""
    for f in (fig, wallclock_figure):
        if f is not None:
            f.tight_layout()
    table, wallclock = split_wallclock(table, WALLCLOCK)
    return Artifact(table, fig, list(claims), list(notes), wallclock=wallclock,
                    wallclock_figure=wallclock_figure)


def grouped_bars(ax, table: pd.DataFrame, series: Iterable[str], value: str, xlabels: Iterable[str],
                 ylabel: str, title: str) -> None:
    """Bars of ``value`` per model (x) and series (one colour each), with a legend."""
    series, xlabels = list(series), list(xlabels)
    width = 0.8 / len(series)
    for j, s in enumerate(series):
        sub = table[table["version"] == s].set_index("model").reindex(xlabels)
        ax.bar([i + (j - (len(series) - 1) / 2) * width for i in range(len(xlabels))], sub[value], width,
               label=s)
    ax.set_xticks(range(len(xlabels)), xlabels, rotation=0, fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.axhline(1.0, color="gray", lw=0.8, ls=":")
