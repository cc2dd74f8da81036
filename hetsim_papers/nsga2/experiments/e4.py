"""E4 (Tables 3, 5, 6; Figs. 15-17, 22-24, 28-30): real vs predicted values of the Pareto points.

From each E1 run (naive, Advanced-2..6; the first seed), the Pareto points best in energy, memory
and latency were deployed on the real cluster (the DES) by the explorer; here are their measured
values next to the model's predictions. The thesis's conclusions are the claims: every advanced
best-latency point really beats naive's; the model ranks the chromosomes' best-latency points as
the real cluster does (Kendall's tau >= 0.6: "it mostly ranks mappings correctly"); VGG-16's
Advanced-2 has the lowest real and predicted latency; DenseNet-121's the lowest real and predicted
energy; AlexNet's best real latency beats the un-partitioned one.
"""

from __future__ import annotations

import pandas as pd
from scipy.stats import kendalltau

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.nsga2.experiments import plots
from hetsim_papers.nsga2.experiments.paper import RANK_TAU
from hetsim_papers.nsga2.experiments.runs import E1_RUNS, LABEL, coefficients, run_label, runs

OBJECTIVES = ("energy_J", "memory_MiB", "latency_s")


def deployed_table(ctx: Context) -> pd.DataFrame:
    """One row per (network, chromosome, selected point): real and predicted objectives."""
    rows = []
    for (net, c, p), explorations in runs(ctx, "cpu", E1_RUNS).items():
        e = explorations[0]
        for obj in OBJECTIVES:
            deployed = e.info["deployed"][obj]
            real, predicted = deployed["real"], deployed["predicted"]
            rows.append({"network": LABEL[net], "key": net, "chromosome": run_label(c, p), "point": obj,
                         **{f"real_{o}": float(getattr(real, o)) for o in OBJECTIVES},
                         **{f"predicted_{o}": float(predicted[o]) for o in OBJECTIVES}})
    return pd.DataFrame(rows)


def e4(ctx: Context) -> Artifact:
    table = deployed_table(ctx)
    claims = []
    for net, t in table.groupby("key", sort=False):
        label = LABEL[net]
        lat = t[t["point"] == "latency_s"].set_index("chromosome")
        naive = lat.loc["Naive", "real_latency_s"]
        adv = lat.drop(index="Naive")
        beats = bool((adv["real_latency_s"] < naive).all())
        claims.append(ctx.true(f"{label}: every advanced best-latency point really beats naive's latency",
                               "all advanced faster", f"{int((adv['real_latency_s'] < naive).sum())} of {len(adv)}",
                               beats, "all", kind=PREDICTION))
        tau = float(kendalltau(lat["real_latency_s"], lat["predicted_latency_s"]).statistic)
        claims.append(ctx.within(f"{label}: model ranks the best-latency points like the real cluster (Kendall tau)",
                                 "mostly correct", round(tau, 3), RANK_TAU, 1.0, kind=PREDICTION))
        if net == "vgg16-onnx":
            real, pred = lat["real_latency_s"].idxmin(), lat["predicted_latency_s"].idxmin()
            claims.append(ctx.true("VGG-16: Advanced-2 has the lowest real and predicted latency", "Advanced-2",
                                   f"real {real}, predicted {pred}", real == pred == "Advanced-2", "both",
                                   kind=PREDICTION))
        if net == "densenet121-onnx":
            en = t[t["point"] == "energy_J"].set_index("chromosome")
            real, pred = en["real_energy_J"].idxmin(), en["predicted_energy_J"].idxmin()
            claims.append(ctx.true("DenseNet-121: Advanced-2 has the lowest real and predicted energy", "Advanced-2",
                                   f"real {real}, predicted {pred}", real == pred == "Advanced-2", "both",
                                   kind=PREDICTION))
        if net == "alexnet-onnx":
            single = coefficients(net, "cpu", ctx.quick).tuning["single_device"]["cpu"]["latency_s"]
            best = float(t["real_latency_s"].min())
            claims.append(ctx.true("AlexNet: the best real latency beats the un-partitioned network (26.41 < 28.3 ms)",
                                   "26.41 < 28.3", f"{best * 1e3:.2f} < {single * 1e3:.2f}", best < single,
                                   "below the single device's", kind=PREDICTION))
    fig = plots.real_vs_predicted(table, "E4: real (DES) vs predicted (model) of each chromosome's best points")
    return Artifact(table.drop(columns="key"), fig, claims)
