"""E3 (Figs. 14, 21, 27): vertical partitioning (the Split-Point encoding of [18]) vs hybrid
(Advanced-2), both NSGA-II on the 8 CPUs with the same model; and the final Pareto fronts.

Claims, the thesis's: hybrid ends far lower in memory for AlexNet and VGG-16 (at most 0.8x the
vertical memory) and close to, not better than, vertical on energy and latency (vertical / hybrid
in [0.7, 1]); for DenseNet-121 vertical wins everything, by 7x energy, 2.2x memory and 7.2x
latency (each within a factor of 2). :func:`pareto` plots the final fronts (naive, Advanced-2,
vertical) and claims the trade-off the thesis's Tables 3, 5, 6 show: each network's Advanced-2
front has a best-memory point that is not its best-latency point.
"""

from __future__ import annotations

import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.nsga2.experiments import plots
from hetsim_papers.nsga2.experiments.e1 import curves_table
from hetsim_papers.nsga2.experiments.paper import (
    DENSENET_E3_FACTORS,
    FAR_LOWER,
    RATIO_FACTOR,
    SLIGHTLY,
)
from hetsim_papers.nsga2.experiments.runs import LABEL, final_minima, runs


def e3(ctx: Context) -> Artifact:
    which = (("split-point", 0), ("advanced", 2))
    rr = runs(ctx, "cpu", which)
    claims = []
    for net in dict.fromkeys(n for n, _, _ in rr):
        vertical, hybrid = final_minima(rr[(net, "split-point", 0)]), final_minima(rr[(net, "advanced", 2)])
        ratio = {obj: hybrid[obj] / vertical[obj] for obj in hybrid}
        if net == "densenet121-onnx":
            for obj, factor in DENSENET_E3_FACTORS.items():
                claims.append(ctx.within(f"DenseNet-121: hybrid / vertical, {obj} (vertical wins)", factor,
                                         round(ratio[obj], 2), factor / RATIO_FACTOR, factor * RATIO_FACTOR,
                                         kind=PREDICTION))
        else:
            claims.append(ctx.within(f"{LABEL[net]}: hybrid / vertical memory (hybrid far lower)",
                                     f"< {FAR_LOWER}", round(ratio["memory_MiB"], 3), 0.0, FAR_LOWER,
                                     kind=PREDICTION))
            for obj in ("energy_J", "latency_s"):
                claims.append(ctx.within(f"{LABEL[net]}: vertical / hybrid, {obj} (vertical slightly better)",
                                         "slightly below 1", round(1 / ratio[obj], 3), *SLIGHTLY, kind=PREDICTION))
    table = curves_table(rr, which).replace({"Advanced-2": "Hybrid (Advanced-2)"})
    fig = plots.convergence(table, "E3: vertical vs hybrid, population minimum per generation, 8 CPUs")
    return Artifact(table, fig, claims)


def pareto(ctx: Context) -> Artifact:
    which = (("naive", 0), ("advanced", 2), ("split-point", 0))
    rr = runs(ctx, "cpu", which)
    fronts, claims = [], []
    for (net, c, p), explorations in rr.items():
        label = {"split-point": "Vertical", "naive": "Naive"}.get(c, f"Advanced-{p}")
        front = explorations[0].info["pareto"].drop(columns="genome")
        fronts.append(front.assign(network=LABEL[net], run=label))
        if (c, p) == ("advanced", 2):
            search = explorations[0].info["search"]
            memory, latency = search.argmin("memory_MiB"), search.argmin("latency_s")
            distinct = bool(search.F[memory, 2] > search.F[latency, 2] and search.F[latency, 1] > search.F[memory, 1])
            claims.append(ctx.true(f"{LABEL[net]}: Advanced-2's best-memory and best-latency points differ "
                                   "(a trade-off)", "different points",
                                   f"{search.F[memory, 1]:.1f} MiB / {search.F[memory, 2] * 1e3:.1f} ms vs "
                                   f"{search.F[latency, 1]:.1f} MiB / {search.F[latency, 2] * 1e3:.1f} ms",
                                   distinct, "each worse in the other objective", kind=PREDICTION))
    table = pd.concat(fronts, ignore_index=True)
    return Artifact(table, plots.pareto_fronts(table, "Final Pareto fronts, 8 CPUs (model objectives)"), claims)
