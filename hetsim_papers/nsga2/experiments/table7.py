"""Table 7: improvement of hybrid partitioning over the un-partitioned network, real values.

(Table 2 - best real value over the deployed Pareto points of E1) / Table 2, per objective, with
both sides measured on the real cluster (the DES: its single-device run, calibrated to Table 2,
and the E4 deployments); "-" where nothing improved. The thesis's percentages are claims within
10 percentage points; its "-" cells are claims that nothing improves.
"""

from __future__ import annotations

import pandas as pd

from hetsim.experiment import PREDICTION, Artifact, Context
from hetsim_papers.nsga2.experiments.e4 import deployed_table
from hetsim_papers.nsga2.experiments.paper import TABLE7, TABLE7_PP
from hetsim_papers.nsga2.experiments.runs import LABEL, coefficients


def table7(ctx: Context) -> Artifact:
    deployed = deployed_table(ctx)
    rows, claims = [], []
    for net, t in deployed.groupby("key", sort=False):
        single: dict[str, float] = coefficients(net, "cpu", ctx.quick).tuning["single_device"]["cpu"]
        for obj in ("energy_J", "memory_MiB", "latency_s"):
            best = float(t[f"real_{obj}"].min())
            gain = (single[obj] - best) / single[obj] * 100
            paper = TABLE7[net][obj]
            rows.append({"network": LABEL[net], "objective": obj, "single_device": single[obj], "best_real": best,
                         "improvement_pct": gain if gain > 0 else None, "thesis_pct": paper})
            name = f"{LABEL[net]}: {obj.split('_')[0]} improvement over un-partitioned (%)"
            if paper is None:
                claims.append(ctx.true(name, "-", round(gain, 2) if gain > 0 else "-", gain <= 0, "no improvement",
                                       kind=PREDICTION))
            else:
                claims.append(ctx.close(name, paper, round(gain, 2), abs_=TABLE7_PP, kind=PREDICTION))
    return Artifact(pd.DataFrame(rows), None, claims)
