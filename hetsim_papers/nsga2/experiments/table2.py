"""Table 2: the three CNNs un-partitioned on one CPU device; the calibration anchor.

The workloads' node and parameter counts are checked against Table 2's columns; the "real"
cluster (the DES) is fitted to its latency, energy and memory (:mod:`.calibration`), and the fit's
residuals are the claims: latency is fitted exactly (three parameters, three latencies); one
runtime constant cannot give all three memories, nor two powers all three energies.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from hetsim.experiment import FIT_INPUT, STRUCTURAL, Artifact, Context
from hetsim.workload.networks import generated
from hetsim_papers.nsga2.experiments.calibration import LABEL, NETWORKS, calibrate
from hetsim_papers.nsga2.experiments.paper import TABLE2, TABLE2_REL
from hetsim_papers.nsga2.networks import parameter_count


def table2(ctx: Context) -> Artifact:
    fit = calibrate()
    claims = []
    rows = []
    for n in NETWORKS:
        model = generated()[n]()
        nodes, params = len(model.graph.node), parameter_count(model) / 1e6
        rows.append({"network": LABEL[n], "quantity": "ONNX nodes", "stated": TABLE2[n]["layers"],
                     "fitted": nodes, "error": nodes / TABLE2[n]["layers"] - 1})
        rows.append({"network": LABEL[n], "quantity": "parameters (million)",
                     "stated": TABLE2[n]["params_million"], "fitted": params,
                     "error": params / TABLE2[n]["params_million"] - 1})
        claims.append(ctx.equal(f"{LABEL[n]}: ONNX nodes (Table 2 'Num. Layers')", TABLE2[n]["layers"], nodes,
                                kind=STRUCTURAL))
        claims.append(ctx.close(f"{LABEL[n]}: parameters, million (Table 2, rounded as printed)",
                                TABLE2[n]["params_million"], round(params, 1), abs_=0.5, kind=STRUCTURAL))
    for r in fit.table.itertuples():
        claims.append(ctx.close(f"{r.network}: single-device {r.quantity} of the calibrated DES",
                                r.stated, round(float(r.fitted), 4), rel=TABLE2_REL[r.quantity], kind=FIT_INPUT))
    table = pd.concat([pd.DataFrame(rows), fit.table], ignore_index=True)
    values = "; ".join(f"{k.split('.')[-1]}={v:.4g}" for k, v in fit.values.items())
    fig = Figure(figsize=(9, 3), layout="constrained")
    axes = fig.subplots(1, 3)
    for ax, q in zip(axes, ("latency (ms)", "energy (J)", "memory (MiB)"), strict=True):
        sel = fit.table[fit.table["quantity"] == q]
        x = range(len(sel))
        ax.bar([i - 0.2 for i in x], sel["stated"], 0.4, label="Table 2")
        ax.bar([i + 0.2 for i in x], sel["fitted"], 0.4, label="calibrated DES")
        ax.set_xticks(list(x), sel["network"], fontsize=8)
        ax.set_title(q, fontsize=9)
    axes[0].legend(fontsize=7)
    return Artifact(table, fig, claims, notes=[f"Fitted CPU parameters: {values}."])
