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

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.nsga2.experiments import plots
from hetsim_papers.nsga2.experiments.paper import DENSENET_E1_RATIOS, E1_FINAL, RATIO_FACTOR
from hetsim_papers.nsga2.experiments.runs import (
    LABEL,
    PLOTTED,
    curve,
    final_minima,
    run_label,
    runs,
)


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
                                   "every generation", kind=PREDICTION))
            ends = {p: final_minima(adv[p])[obj] for p in (2, 4, 6)}
            best = min(ends, key=ends.__getitem__)
            claims.append(ctx.equal(f"{LABEL[net]}: best p within the generations ({obj})", 2, best,
                                    kind=PREDICTION))
        final = {run_label(c, p): final_minima(e) for (n, c, p), e in all_runs.items() if n == net}
        worse = final["Naive"]["memory_MiB"] >= min(final[f"Advanced-{p}"]["memory_MiB"] for p in (2, 4, 6))
        claims.append(ctx.true(f"{LABEL[net]}: an advanced chromosome ends at or below naive in memory",
                               "advanced lower", "yes" if worse else "no", worse, "final generation",
                               kind=PREDICTION))
    if "densenet121-onnx" in networks:
        f = {run_label(c, p): final_minima(e) for (n, c, p), e in all_runs.items() if n == "densenet121-onnx"}
        for obj, ratio in DENSENET_E1_RATIOS.items():
            claims.append(ctx.within(f"DenseNet-121: naive / Advanced-2 final {obj}", round(ratio, 2),
                                     round(f["Naive"][obj] / f["Advanced-2"][obj], 2), ratio / RATIO_FACTOR,
                                     ratio * RATIO_FACTOR, kind=PREDICTION))
    table = curves_table(all_runs, tuple((c, p) for _, c, p in all_runs))
    finals = []
    for (net, c, p), e in all_runs.items():
        fm = final_minima(e)
        paper = E1_FINAL.get(net, {}).get(run_label(c, p))
        finals.append({"network": LABEL[net], "run": run_label(c, p), **fm,
                       "thesis_energy_J": paper[0] if paper else None,
                       "thesis_memory_MB": paper[1] if paper else None,
                       "thesis_latency_s": paper[2] if paper else None,
                       "seconds": float(np.median([x.info["search"].seconds for x in e]))})
    fig = plots.convergence(curves_table(all_runs), "E1: population minimum per generation, 8 CPUs "
                            "(analytical model)")
    finals_table = pd.DataFrame(finals)
    # The searches' wall times are this machine's: in e1.wallclock.csv, not in the note (the
    # scorecard is the same bytes on every run).
    note = "Final generation (median over seeds) vs the thesis's predicted values:\n" + finals_table.drop(
        columns="seconds").to_string(index=False, float_format=lambda v: f"{v:.4g}")
    return Artifact(table, fig, claims, notes=[note], wallclock=finals_table[["network", "run", "seconds"]])
