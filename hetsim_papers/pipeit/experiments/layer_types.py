"""``pipeit:fig6``: the share of the B4 forward pass by layer type (ground-truth op times)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.pipeit.experiments._common import bar_axes
from hetsim_papers.pipeit.experiments.paper import LABELS, NETWORKS
from hetsim_papers.pipeit.experiments.runs import setup

KINDS = ("conv", "dw", "fc", "other")


def fig6_table(ctx: Context) -> tuple[pd.DataFrame, list]:
    s = setup()
    ep = s.platform.ep("B4")
    rows = []
    for n in NETWORKS:
        totals: dict[str, float] = {}
        for op in s.workloads[n].ops:
            kind = str(op.kind) if op.kind in ("conv", "dw", "fc") else "other"
            totals[kind] = totals.get(kind, 0.0) + s.truth.op_time(op, ep)
        whole = sum(totals.values())
        for kind in KINDS:
            rows.append({"cnn": LABELS[n], "kind": kind, "time_ms": 1e3 * totals.get(kind, 0.0),
                         "share": totals.get(kind, 0.0) / whole})
    table = pd.DataFrame(rows)
    top = table.loc[table.groupby("cnn").share.idxmax()].set_index("cnn").kind
    claims = [ctx.equal(f"{LABELS[n]}: dominant layer type", "fc" if n == "alexnet" else "conv", top[LABELS[n]],
                        kind=PREDICTION) for n in NETWORKS]
    return table, claims


def plot_fig6(table: pd.DataFrame):
    fig, ax = plt.subplots(figsize=(7, 4))
    bottom = np.zeros(len(NETWORKS))
    for kind in KINDS:
        v = np.array([float(table[(table.cnn == LABELS[n]) & (table.kind == kind)].share.iloc[0]) for n in NETWORKS])
        ax.bar(range(len(NETWORKS)), v, bottom=bottom, label=kind)
        bottom += v
    bar_axes(ax, "share of B4 forward-pass time (-)", "Fig. 6: time by layer type (B4)")
    return fig


def fig6(ctx: Context) -> Artifact:
    table, claims = fig6_table(ctx)
    notes = ["Ground-truth op times on B4; 'other' = the folded pooling, activation, normalisation, add and concat ops. "
             "AlexNet's fc6-fc8 are GEMVs that stream 234 MB of weights per image (memory-bound)."]
    return Artifact(table, plot_fig6(table), claims, notes)
