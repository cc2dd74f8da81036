"""``hope:fig5``: LE at its minimum, medium and maximum CPU frequency (the GPU unscaled), the six
versions normalised to GPU-only, and HOPE:LP's reductions against MOSAIC and StarPU (§5.3)."""

from __future__ import annotations

from hetsim.experiment import Context
from hetsim_papers.hope.experiments._common import (
    PREDICTION,
    STRUCTURAL,
    artifact,
    figure,
    grouped_bars,
    models,
)
from hetsim_papers.hope.experiments.overall import latency_table, reductions
from hetsim_papers.hope.experiments.paper import FIG5, PP, PP_MAX
from hetsim_papers.hope.experiments.runs import VERSIONS, Setting

PRESETS = ("min", "medium", "max")


def fig5(ctx: Context):
    model_list = models(ctx, few=True)
    presets = ("min", "max") if ctx.quick else PRESETS
    settings = {preset: Setting("hope-le", dvfs=preset) for preset in presets}
    table = latency_table(settings, model_list, ctx=ctx).rename(columns={"phone": "cpu_frequency"})
    red = reductions(table.rename(columns={"cpu_frequency": "phone"}),
                     {("HOPE:LP", "MOSAIC"): None, ("HOPE:LP", "StarPU"): None, ("HOPE:GS", "MOSAIC"): None,
                      ("HOPE:GS", "StarPU"): None}).rename(columns={"phone": "cpu_frequency"})
    claims = []
    for preset in presets:
        sub = red[red.cpu_frequency == preset]
        for base in ("MOSAIC", "StarPU"):
            top, mean = FIG5[preset][base]
            col = sub[f"HOPE:LP vs {base}"]
            if not ctx.quick:
                claims.append(ctx.close(f"{preset} frequency: HOPE:LP vs {base}, average reduction (%)", mean,
                                    round(float(col.mean()), 2), abs_=PP, kind=PREDICTION))
            claims.append(ctx.close(f"{preset} frequency: HOPE:LP vs {base}, largest reduction (%)", top,
                                round(float(col.max()), 2), abs_=PP_MAX, kind=PREDICTION))
    # The CPU version slows down as the clock drops; the GPU version does not move.
    lat = table.pivot_table(index=["cpu_frequency", "model"], columns="version", values="latency_ms")
    cpu_slower = all(all(lat.loc[(a, m), "CPU"] > lat.loc[(b, m), "CPU"] for a, b in zip(presets, presets[1:], strict=False))
                     for m in model_list)
    gpu_same = all(abs(lat.loc[("min", m), "GPU"] - lat.loc[("max", m), "GPU"]) <=
                   0.5 * abs(lat.loc[("min", m), "CPU"] - lat.loc[("max", m), "CPU"]) for m in model_list)
    claims.append(ctx.true("the CPU version slows as the CPU clock drops, the GPU version much less "
                       "(every model)", "yes", "yes" if cpu_slower and gpu_same else "no",
                       cpu_slower and gpu_same, "every model", kind=STRUCTURAL))
    fig, axes = figure(len(presets), 1, (11, 3.2 * len(presets)))
    for ax, preset in zip(axes[:, 0], presets, strict=True):
        grouped_bars(ax, table[table.cpu_frequency == preset].assign(phone=preset), VERSIONS, "normalised",
                     model_list, "latency / GPU-only", f"LE, {preset} CPU frequency: normalised latency")
    axes[0, 0].legend(ncol=6, fontsize=8, loc="upper right")
    out = table.merge(red, on=["cpu_frequency", "model"])
    notes = ["CPU frequencies 652.8 / 1689.6 / 2016 MHz (the middle entry of the 7 is the medium, an "
             "assumption); CPU op times scale by alpha f_max / f + 1 - alpha (alpha the op's compute-bound "
             "fraction), layout transforms as memory-bound CPU work; the GPU is not scaled."]
    return artifact(out, fig, claims, notes)

