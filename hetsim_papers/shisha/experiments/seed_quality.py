"""``shisha:fig6``: Shisha from its own seed vs from 100 random seeds (ResNet50, YOLOv3, chiplet-c2)."""

from __future__ import annotations

import pandas as pd
from matplotlib.ticker import NullFormatter

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.shisha.experiments._common import artifact, figure, within_factor
from hetsim_papers.shisha.experiments.paper import FIG6_RESNET_SLOWER, FIG6_YOLO_BETTER, NETWORKS
from hetsim_papers.shisha.experiments.runs import seed_runs, time_to_best

N_RANDOM = 100      # as the paper; the same in quick mode (100 Shisha runs take < 1 s)
FIG6_NETS = ("resnet50-shisha", "yolov3")


def fig6_table(ctx: Context) -> tuple[pd.DataFrame, list]:
    rows, stats = [], {}
    for w in FIG6_NETS:
        for start, r in seed_runs(w, N_RANDOM, ctx.seed):
            rows.append({"network": NETWORKS[w], "start": start, "seed": r.seed,
                         "seed_mapping": str(r.info["seed_configuration"]),
                         "seed_fps": float(r.trials["throughput_fps"].iloc[0]), "solution_fps": r.best_fps,
                         "time_to_best_s": time_to_best(r), "clock_s": r.clock_s, "trials": r.n_trials})
        df = pd.DataFrame([x for x in rows if x["network"] == NETWORKS[w]])
        sh, rnd = df[df["start"] == "Shisha seed"].iloc[0], df[df["start"] == "random seed"]
        stats[w] = {"slower": rnd["time_to_best_s"].mean() / sh.time_to_best_s - 1,
                    "quality": rnd["solution_fps"].mean() / sh.solution_fps,
                    "better": sh.solution_fps / rnd["solution_fps"].mean() - 1,
                    "always": float((rnd["time_to_best_s"] > sh.time_to_best_s).mean())}
    res, y = stats["resnet50-shisha"], stats["yolov3"]
    claims = [
        within_factor(ctx, "ResNet50: random seeds converge 35% later (mean time-to-best / Shisha's - 1)",
                      FIG6_RESNET_SLOWER, res["slower"], kind=PREDICTION),
        ctx.close("ResNet50: similar solution quality (random-seed mean / Shisha)", 1.0, res["quality"], rel=0.05,
                  kind=PREDICTION),
        within_factor(ctx, "YOLOv3: Shisha's seed gives 16% more throughput than random seeds (mean)",
                      FIG6_YOLO_BETTER, y["better"], kind=PREDICTION),
        ctx.within("YOLOv3: Shisha converges sooner than every random seed (share of random seeds slower)",
                   1.0, y["always"], 0.95, 1.0, kind=PREDICTION),
    ]
    return pd.DataFrame(rows), claims


def plot_fig6(table: pd.DataFrame):
    fig, axes = figure(1, 2, (10, 4))
    for ax, w in zip(axes[0], FIG6_NETS, strict=True):
        d = table[table["network"] == NETWORKS[w]]
        rnd, sh = d[d["start"] == "random seed"], d[d["start"] == "Shisha seed"]
        ax.scatter(rnd["time_to_best_s"], rnd["seed_fps"], s=12, marker="x", color="tab:gray", label="random: seed")
        ax.scatter(rnd["time_to_best_s"], rnd["solution_fps"], s=14, color="tab:blue", label="random: solution")
        ax.scatter(sh["time_to_best_s"], sh["seed_fps"], s=80, marker="*", color="tab:orange", label="Shisha: seed")
        ax.scatter(sh["time_to_best_s"], sh["solution_fps"], s=80, marker="*", color="tab:red",
                   label="Shisha: solution")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("convergence time (s of tuning clock, log)")
        ax.set_ylabel("throughput (frames/s)")
        ax.set_title(f"{NETWORKS[w]} on chiplet-c2, {N_RANDOM} random seeds")
        ax.legend(fontsize=7)
    return fig


def fig6(ctx: Context) -> Artifact:
    table, claims = fig6_table(ctx)
    return artifact(table, plot_fig6(table), claims, [f"{N_RANDOM} random seeds (split and EP mapping uniformly "
                                                     "random), Shisha H3 tuning from each."])
