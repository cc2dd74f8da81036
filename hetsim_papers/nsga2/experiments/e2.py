"""E2 (Figs. 13, 20, 26): the same searches on all 16 devices (8 CPUs + 8 GPUs).

The GPU's parameters are the platform file's assumptions (the thesis measures nothing on a GPU
alone); the tuning procedure gives the model its GPU coefficients and the CPU-GPU medium. Claims:
CPU+GPU never ends better than CPU-only on energy or memory; on latency it is close (within 25 %)
for Advanced-2; AlexNet's Advanced-2 is the one case where it is lower; DenseNet's naive energy is
at least 7x Advanced-2's; AlexNet's naive memory beats Advanced-6's.
"""

from __future__ import annotations

import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.nsga2.experiments import plots
from hetsim_papers.nsga2.experiments.e1 import curves_table
from hetsim_papers.nsga2.experiments.paper import CLOSE
from hetsim_papers.nsga2.experiments.runs import LABEL, PLOTTED, final_minima, run_label, runs


def e2(ctx: Context) -> Artifact:
    gpu = runs(ctx, "cpu+gpu", PLOTTED)
    # Compare with the CPU-only runs of the same seeds.
    cpu = {k: v[:len(gpu[k])] for k, v in runs(ctx, "cpu", PLOTTED).items()}
    claims = []
    networks = list(dict.fromkeys(net for net, _, _ in gpu))
    for net in networks:
        for obj in ("energy_J", "memory_MiB"):
            never = all(final_minima(gpu[(net, c, p)])[obj] >= final_minima(cpu[(net, c, p)])[obj] * (1 - 1e-9)
                        for c, p in PLOTTED)
            claims.append(ctx.true(f"{LABEL[net]}: CPU+GPU never ends better than CPU-only ({obj})",
                                   "never better", "never better" if never else "better somewhere", never,
                                   "every chromosome, final generation", kind=PREDICTION))
        ratio = final_minima(gpu[(net, "advanced", 2)])["latency_s"] / final_minima(cpu[(net, "advanced", 2)])["latency_s"]
        claims.append(ctx.within(f"{LABEL[net]}: Advanced-2 latency, CPU+GPU / CPU-only (close)", "close",
                                 round(ratio, 3), 1 - CLOSE, 1 + CLOSE, kind=PREDICTION))
        if net == "alexnet-onnx":
            claims.append(ctx.true("AlexNet: Advanced-2 on CPU+GPU reaches a lower latency than on CPUs",
                                   "lower", round(ratio, 3), ratio < 1, "ratio < 1",
                                   kind=PREDICTION))
            naive = final_minima(gpu[(net, "naive", 0)])["memory_MiB"]
            adv6 = final_minima(gpu[(net, "advanced", 6)])["memory_MiB"]
            claims.append(ctx.true("AlexNet, CPU+GPU: naive ends below Advanced-6 in memory", "naive lower",
                                   f"{naive:.1f} vs {adv6:.1f} MiB", naive < adv6, "naive < Advanced-6",
                                   kind=PREDICTION))
        if net == "densenet121-onnx":
            r = final_minima(gpu[(net, "naive", 0)])["energy_J"] / final_minima(gpu[(net, "advanced", 2)])["energy_J"]
            claims.append(ctx.true("DenseNet-121, CPU+GPU: naive energy at least 7x Advanced-2", ">= 7",
                                   round(r, 2), r >= 7, ">= 7", kind=PREDICTION))
    table = curves_table(gpu)
    table["devices"] = "cpu+gpu"
    finals = [{"network": LABEL[n], "run": run_label(c, p), "view": view, **final_minima(e)}
              for view, rr in (("cpu", cpu), ("cpu+gpu", gpu)) for (n, c, p), e in rr.items()]
    fig = plots.convergence(table, "E2: population minimum per generation, 8 CPUs + 8 GPUs")
    note = "Final generation, CPU-only vs CPU+GPU:\n" + pd.DataFrame(finals).to_string(
        index=False, float_format=lambda v: f"{v:.4g}")
    return Artifact(table, fig, claims, notes=[note])
