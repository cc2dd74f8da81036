"""``pipeit:table1``: the major layers W per CNN (Table I) and the design-space counts of eqs. 1-2."""

from __future__ import annotations

import pandas as pd

from hetsim.experiment import STRUCTURAL, VECTOR, Artifact, Context
from hetsim.workload import load_workload
from hetsim_papers.pipeit.experiments.paper import LABELS, NETWORKS, TABLE_I
from hetsim_papers.pipeit.pipeit import n_design_points, n_pipelines


def table1(ctx: Context) -> Artifact:
    rows = []
    for n in NETWORKS:
        w = load_workload(n)
        rows.append({"cnn": LABELS[n], "W_paper": TABLE_I[n], "W_hetsim": w.num_layers,
                     "gmac": w.layer_macs().sum() / 1e9,
                     "design_points_eq2": n_design_points(w.num_layers, 4, 4)})
    table = pd.DataFrame(rows)
    # The workloads were built to Table I's major-layer counts: the five claims echo that construction.
    claims = [ctx.equal(f"{LABELS[n]}: W major layers", TABLE_I[n], int(table.W_hetsim[i]), kind=STRUCTURAL)
              for i, n in enumerate(NETWORKS)]
    counts = [n_pipelines(p, 4, 4) for p in range(2, 9)]
    claims += [
        ctx.equal("4B+4s: pipeline configurations over p = 2..8 (eq. 1)", 64, sum(counts), kind=VECTOR),
        ctx.equal("4B+4s: C_p for p = 2..8 (derived from eq. 1)", [1, 6, 15, 20, 15, 6, 1], counts, kind=VECTOR),
        ctx.equal("3B+2s: pipeline configurations (Table VII's space; derived from eq. 1, the paper prints none)", 8,
                  sum(n_pipelines(p, 3, 2) for p in range(2, 6)), kind=VECTOR),
        ctx.equal("MobileNet (W = 28): design points D_W (eq. 2)", 5_379_616, n_design_points(28, 4, 4),
                  kind=VECTOR),
    ]
    notes = ["Eq. 2 as printed gives 4,272,048 design points for W = 28 (closed form C(W+H-3, H-1)); the "
             "paper's 5,379,616 is the W = 29 value (eq. 2, §IV-B). hetsim evaluates the equation as printed."]
    return Artifact(table, None, claims, notes)
