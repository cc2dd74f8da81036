"""``hope:fig7``: HE's CPU alone as two devices, the 2 big cores and the 4 LITTLE cores, with no
communication cost between them (§5.5): big-only, StarPU, HOPE:GS and HOPE:LP, normalised to
big-only."""

from __future__ import annotations

from hetsim.experiment import Context
from hetsim_papers.hope.experiments._common import (
    PREDICTION,
    artifact,
    figure,
    grouped_bars,
    models,
)
from hetsim_papers.hope.experiments.overall import latency_table, reductions
from hetsim_papers.hope.experiments.paper import FIG7_LP_VS_STARPU, PP
from hetsim_papers.hope.experiments.runs import Setting

SERIES = ("CPU", "StarPU", "HOPE:GS", "HOPE:LP")
SETTING = Setting("hope-he", eps=("big", "little"))


def fig7(ctx: Context):
    model_list = models(ctx)
    table = latency_table({"HE big+LITTLE": SETTING}, model_list, SERIES, ctx=ctx)
    big = table[table.version == "CPU"].set_index("model")["latency_ms"]
    table["normalised"] = [row.latency_ms / big[row.model] for row in table.itertuples()]
    red = reductions(table, {("HOPE:LP", "StarPU"): None, ("HOPE:GS", "StarPU"): None, ("HOPE:LP", "CPU"): None})
    lp = red.set_index("model")["HOPE:LP vs StarPU"]
    gs = red.set_index("model")["HOPE:GS vs StarPU"]
    claims = [ctx.close(f"{m}: HOPE:LP vs StarPU on big + LITTLE (%)", FIG7_LP_VS_STARPU[m], round(float(lp[m]), 2),
                    abs_=PP, kind=PREDICTION) for m in model_list]
    if not ctx.quick:
        paper_mean = sum(FIG7_LP_VS_STARPU.values()) / len(FIG7_LP_VS_STARPU)
        claims.append(ctx.close("HOPE:LP vs StarPU on big + LITTLE, average over the 7 models (%)",
                            round(paper_mean, 2), round(float(lp.mean()), 2), abs_=PP, kind=PREDICTION))
    claims.append(ctx.close("HOPE:GS performs like StarPU (no communication to save; average reduction, %)", 0.0,
                        round(float(gs.mean()), 2), abs_=PP, kind=PREDICTION))
    fig, axes = figure(1, 1, (11, 3.6))
    grouped_bars(axes[0, 0], table, SERIES, "normalised", model_list, "latency / big cores only",
                 "HE, 2 big + 4 LITTLE cores, CPU only: latency normalised to the big cores alone")
    axes[0, 0].legend(ncol=4, fontsize=8)
    notes = ["'CPU' is the 2 big cores alone; the LITTLE cores are the 4 Cortex-A55 at 1.95 GHz; a tensor "
             "moves between the clusters for free (shared memory and layout, §4.1)."]
    return artifact(table.merge(red, on=["phone", "model"]), fig, claims, notes)
