"""``shisha:fig9``: SynthNet's throughput against the inter-chiplet latency (chiplet-c5)."""

from __future__ import annotations

import math

import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.shisha.experiments._common import artifact, figure
from hetsim_papers.shisha.experiments.paper import FIG9_KNEE_S, SAME
from hetsim_papers.shisha.experiments.runs import latency_sweep


def fig9_claims(ctx: Context, table: pd.DataFrame) -> list:
    base = table["fixed_best_fps"].iloc[0]
    rel = table["fixed_best_fps"] / base
    flat = float(rel[table["latency_s"] <= FIG9_KNEE_S].min())
    dropped = table.loc[rel < 1 - SAME, "latency_s"]
    knee = float(dropped.iloc[0]) if len(dropped) else math.inf
    near = float(table.loc[table["latency_s"] > FIG9_KNEE_S, "shisha_over_es"].min())
    return [
        ctx.close("throughput flat (within 1%) up to 1 ms of extra latency", 1.0, flat, rel=SAME, kind=PREDICTION),
        ctx.within("throughput drops (> 1%) only above 1 ms (first decade with a drop, s)", "> 1 ms", knee,
                   1e-2, 1.0, kind=PREDICTION),
        ctx.within("above 1 ms Shisha still finds near-optimal solutions (min Shisha / ES)", "near 1", near,
                   0.9, 1.0, kind=PREDICTION),
    ]


def plot_fig9(table: pd.DataFrame):
    fig, ax = figure(1, 1, (7, 4))
    ax = ax[0, 0]
    ax.plot(table["latency_s"], table["fixed_best_fps"], "o-", label="best configuration at 1 ns")
    ax.plot(table["latency_s"], table["shisha_fps"], "s--", label="Shisha re-tuned")
    ax.plot(table["latency_s"], table["es_fps"], "k:", label="ES")
    ax.axvline(FIG9_KNEE_S, color="gray", lw=1, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("inter-chiplet latency per transfer (s, log)")
    ax.set_ylabel("throughput (frames/s)")
    ax.set_title("SynthNet on chiplet-c5")
    ax.legend()
    return fig


def fig9(ctx: Context) -> Artifact:
    table = latency_sweep((0, 3, 6, 7, 8, 9) if ctx.quick else tuple(range(10)), ctx.seed)
    return artifact(table, plot_fig9(table), fig9_claims(ctx, table),
                    ["Latency set with --set links.nop.latency_ns (1 ns is the platform's "
                     "baseline); the sending stage pays each transfer (docs/model.md)."])
