"""E3 (Figs. 14, 21, 27): vertical partitioning (the Split-Point encoding of [18]) vs hybrid
(Advanced-2), both NSGA-II on the 8 CPUs with the same model.

Claims, the thesis's: hybrid ends far lower in memory for AlexNet and VGG-16 (at most 0.8x the
vertical memory) and close to, not better than, vertical on energy and latency (vertical / hybrid
in [0.7, 1]); for DenseNet-121 vertical wins everything, by 7x energy, 2.2x memory and 7.2x
latency (each within a factor of 2). Experiment ``e3fronts`` plots the final Pareto fronts.
"""

from __future__ import annotations

import pandas as pd

from hetsim.experiment import Artifact, Context, experiment
from hetsim.experiments.nsga2 import plots
from hetsim.experiments.nsga2.e1 import curves_table
from hetsim.experiments.nsga2.runs import LABEL, PAPER, final_minima, runs

#: DenseNet-121: the vertical mapping beats hybrid Advanced-2 by these factors (thesis §6).
DENSENET_FACTORS = {"energy_J": 7.0, "memory_MiB": 2.2, "latency_s": 7.2}


@experiment(PAPER, "e3", "E3: vertical (Split-Point) vs hybrid (Advanced-2), 8 CPUs (Figs. 14, 21, 27)")
def e3(ctx: Context) -> Artifact:
    which = (("split-point", 0), ("advanced", 2))
    rr = runs(ctx, "cpu", which)
    claims = []
    for net in dict.fromkeys(n for n, _, _ in rr):
        vertical, hybrid = final_minima(rr[(net, "split-point", 0)]), final_minima(rr[(net, "advanced", 2)])
        ratio = {obj: hybrid[obj] / vertical[obj] for obj in hybrid}
        if net == "densenet121-onnx":
            for obj, factor in DENSENET_FACTORS.items():
                claims.append(ctx.within(f"DenseNet-121: hybrid / vertical, {obj} (vertical wins)", factor,
                                         round(ratio[obj], 2), factor / 2, factor * 2))
        else:
            claims.append(ctx.within(f"{LABEL[net]}: hybrid / vertical memory (hybrid far lower)", "< 0.8",
                                     round(ratio["memory_MiB"], 3), 0.0, 0.8))
            for obj in ("energy_J", "latency_s"):
                claims.append(ctx.within(f"{LABEL[net]}: vertical / hybrid, {obj} (vertical slightly better)",
                                         "slightly below 1", round(1 / ratio[obj], 3), 0.7, 1.0))
    table = curves_table(rr, which).replace({"Advanced-2": "Hybrid (Advanced-2)"})
    fig = plots.convergence(table, "E3: vertical vs hybrid, population minimum per generation, 8 CPUs")
    return Artifact(table, fig, claims, notes=["The final Pareto fronts are experiment e3fronts."])


@experiment(PAPER, "e3fronts", "E3: final Pareto fronts of vertical and hybrid (model objectives)")
def e3fronts(ctx: Context) -> Artifact:
    which = (("split-point", 0), ("advanced", 2), ("naive", 0))
    rr = runs(ctx, "cpu", which)
    fronts = []
    for (net, c, p), explorations in rr.items():
        label = {"split-point": "Vertical", "naive": "Naive"}.get(c, f"Advanced-{p}")
        fronts.append(explorations[0].info["pareto"].drop(columns="genome").assign(network=LABEL[net], run=label))
    table = pd.concat(fronts, ignore_index=True)
    sizes = table.groupby(["network", "run"]).size()
    claims = [ctx.true(f"{net}: every final front is non-empty", "non-empty", int(sizes[net].min()),
                       bool(sizes[net].min() > 0), ">= 1 point") for net in dict.fromkeys(table["network"])]
    return Artifact(table, plots.pareto_fronts(table, "Final Pareto fronts, 8 CPUs (model objectives)"), claims)
