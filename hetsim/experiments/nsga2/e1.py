"""E1 (Figs. 12, 19, 25): NSGA-II convergence on the 8 CPUs, naive vs Advanced-2/-4/-6.

Each CNN is searched with the naive chromosome and the advanced one (p = 2..6), the analytical
model tuned on the calibrated cluster as the fitness; the curves are each objective's population
minimum per generation (median over seeds). The thesis's orderings are the claims: the advanced
chromosome converges faster than the naive one (its minimum below naive's at every generation, in
energy and latency), and p = 2 ends best in energy and latency. Two of its DenseNet ratios too.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from hetsim.experiment import Artifact, Context, experiment
from hetsim.experiments.nsga2 import plots
from hetsim.experiments.nsga2.runs import (
    LABEL,
    PAPER,
    PLOTTED,
    curve,
    final_minima,
    run_label,
    runs,
)

#: Final predicted values of the thesis's E1 runs (digest §12, from Tables 3, 5, 6): energy J,
#: memory MB, latency s.
FINAL = {
    "alexnet-onnx": {"Naive": (1.971, 51.969, 0.138758), "Advanced-2": (0.360, 42.842, 0.025382),
                     "Advanced-4": (1.020, 42.243, 0.071812), "Advanced-6": (0.863, 42.430, 0.060804)},
    "vgg16-onnx": {"Naive": (31.886, 166.088, 3.492830), "Advanced-2": (1.410, 127.324, 0.154467),
                   "Advanced-4": (6.054, 130.335, 0.663188), "Advanced-6": (25.912, 133.210, 2.838439)},
    "densenet121-onnx": {"Naive": (74.729, 179.430, 9.661204), "Advanced-2": (7.664, 43.369, 0.990801),
                         "Advanced-4": (11.342, 51.167, 1.466380), "Advanced-6": (17.406, 56.660, 2.250321)},
}


def curves_table(all_runs, which=PLOTTED) -> pd.DataFrame:
    rows = []
    for (net, c, p), explorations in all_runs.items():
        if (c, p) not in which:
            continue
        for obj in ("energy_J", "memory_MiB", "latency_s"):
            for g, v in enumerate(curve(explorations, obj)):
                rows.append({"network": LABEL[net], "run": run_label(c, p), "generation": g,
                             "objective": obj, "value": float(v)})
    return pd.DataFrame(rows)


@experiment(PAPER, "e1", "E1: convergence on 8 CPUs, naive vs advanced chromosomes (Figs. 12, 19, 25)")
def e1(ctx: Context) -> Artifact:
    all_runs = runs(ctx, "cpu")
    networks = list(dict.fromkeys(net for net, _, _ in all_runs))
    claims = []
    for net in networks:
        naive, adv = all_runs[(net, "naive", 0)], {p: all_runs[(net, "advanced", p)] for p in (2, 4, 6)}
        for obj in ("energy_J", "latency_s"):
            below = bool(np.all(curve(adv[2], obj) <= curve(naive, obj)))
            claims.append(ctx.true(f"{LABEL[net]}: Advanced-2 below naive at every generation ({obj})",
                                   "advanced converges faster", "yes" if below else "no", below,
                                   "every generation"))
            ends = {p: final_minima(adv[p])[obj] for p in (2, 4, 6)}
            best = min(ends, key=ends.__getitem__)
            claims.append(ctx.equal(f"{LABEL[net]}: best p within the generations ({obj})", 2, best))
        final = {run_label(c, p): final_minima(e) for (n, c, p), e in all_runs.items() if n == net}
        worse = final["Naive"]["memory_MiB"] >= min(final[f"Advanced-{p}"]["memory_MiB"] for p in (2, 4, 6))
        claims.append(ctx.true(f"{LABEL[net]}: an advanced chromosome ends at or below naive in memory",
                               "advanced lower", "yes" if worse else "no", worse, "final generation"))
    if "densenet121-onnx" in networks:
        f = {run_label(c, p): final_minima(e) for (n, c, p), e in all_runs.items() if n == "densenet121-onnx"}
        claims.append(ctx.within("DenseNet-121: naive / Advanced-2 final memory (179.430 / 43.369 MB)",
                                 round(179.430 / 43.369, 2),
                                 round(f["Naive"]["memory_MiB"] / f["Advanced-2"]["memory_MiB"], 2), 2.07, 8.27))
        claims.append(ctx.within("DenseNet-121: naive / Advanced-2 final latency (9661 / 991 ms)",
                                 round(9661.204 / 990.801, 2),
                                 round(f["Naive"]["latency_s"] / f["Advanced-2"]["latency_s"], 2), 4.88, 19.5))
    table = curves_table(all_runs, tuple((c, p) for _, c, p in all_runs))
    finals = []
    for (net, c, p), e in all_runs.items():
        fm = final_minima(e)
        paper = FINAL.get(net, {}).get(run_label(c, p))
        finals.append({"network": LABEL[net], "run": run_label(c, p), **fm,
                       "thesis_energy_J": paper[0] if paper else None,
                       "thesis_memory_MB": paper[1] if paper else None,
                       "thesis_latency_s": paper[2] if paper else None,
                       "seconds": float(np.median([x.info["search"].seconds for x in e]))})
    fig = plots.convergence(curves_table(all_runs), "E1: population minimum per generation, 8 CPUs "
                            "(analytical model)")
    finals_table = pd.DataFrame(finals)
    note = "Final generation (median over seeds) vs the thesis's predicted values:\n" + finals_table.to_string(
        index=False, float_format=lambda v: f"{v:.4g}")
    return Artifact(table, fig, claims, notes=[note])
