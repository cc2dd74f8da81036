"""``pipesearch:fig4``: stage-time shares of the seed and of Pipe-search's optimum, ResNet50,
AlexNet and VGG16 under governor 3 (the most asymmetric setting)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.pipesearch.experiments._common import figure
from hetsim_papers.pipesearch.experiments.calibration import split_text
from hetsim_papers.pipesearch.experiments.paper import FIG4_NETWORKS
from hetsim_papers.pipesearch.experiments.runs import database, measure, pipe_search

MAIN_ALPHA = 10


def fig4_table(ctx: Context) -> tuple[pd.DataFrame, list, tuple[int, ...]]:
    alphas = (3, 10, 15) if ctx.quick else tuple(range(3, 16))
    rows, claims = [], []
    for name, wl in FIG4_NETWORKS.items():
        db = database(wl, (2, 3, 4))
        seed = db.seed(2)
        r = measure("governor3", seed, wl)
        shares = np.array(r.stage_times_s) / sum(r.stage_times_s)
        rows.append({"network": name, "alpha": None, "which": "seed", "split": split_text(seed), "depth": 2,
                     "share_stage1": shares[0], "share_stage2": shares[1], "shares": list(np.round(shares, 3)),
                     "throughput_fps": r.throughput_fps, "trials": None})
        seed_max = float(shares.max())
        for a in alphas:
            ps = pipe_search("governor3", wl, 4, a)
            rb = measure("governor3", ps.best.split, wl)
            sh = np.array(rb.stage_times_s) / sum(rb.stage_times_s)
            rows.append({"network": name, "alpha": a, "which": "optimum", "split": ps.best.split_text,
                         "depth": ps.best.depth, "share_stage1": sh[0], "share_stage2": sh[1] if len(sh) > 1 else None,
                         "shares": list(np.round(sh, 3)), "throughput_fps": ps.best_fps, "trials": ps.n_trials})
        opt = [r_ for r_ in rows if r_["network"] == name and r_["alpha"] == MAIN_ALPHA][0]
        claims += [
            ctx.equal(f"{name}: PS_count chosen (alpha 10)", 2, opt["depth"], kind=PREDICTION),
            ctx.true(f"{name}: seed unbalanced in time (largest stage share)", "clearly unbalanced", seed_max,
                     seed_max >= 0.65, ">= 65%", kind=PREDICTION),
            ctx.true(f"{name}: optimum about 50/50 (largest stage share)", 0.5, max(opt["shares"]),
                     opt["depth"] == 2 and max(opt["shares"]) <= 0.6, "2 stages, <= 60%", kind=PREDICTION),
        ]
    return pd.DataFrame(rows), claims, alphas


def plot_fig4(table: pd.DataFrame):
    fig, ax = figure(8, 4)
    labels, s1, s2, rest = [], [], [], []
    for name in FIG4_NETWORKS:
        for which in ("seed", "optimum"):
            t = table[(table.network == name) & (table.which == which)
                      & ((table.alpha == MAIN_ALPHA) | (table.which == "seed"))].iloc[0]
            labels.append(f"{name}\n{which}\n{t.split}")
            s1.append(100 * t.shares[0])
            s2.append(100 * t.shares[1])
            rest.append(100 * (1 - t.shares[0] - t.shares[1]))
    x = np.arange(len(labels))
    ax.bar(x, s1, color="tab:blue", label="stage 1 (Denver, performance)")
    ax.bar(x, s2, bottom=s1, color="tab:orange", label="stage 2 (A57, powersave\nin 2-stage pipelines)")
    ax.bar(x, rest, bottom=np.add(s1, s2), color="tab:gray", label="stages 3-4")
    ax.axhline(50, ls=":", color="k")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel("share of the summed stage times [%]")
    ax.set_title("Governor 3, 4 cores: seed vs Pipe-search optimum (alpha 10)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def fig4(ctx: Context) -> Artifact:
    table, claims, alphas = fig4_table(ctx)
    notes = [f"alpha swept over {list(alphas)}; the CSV has every alpha's optimum."]
    return Artifact(table, plot_fig4(table), claims, notes)
