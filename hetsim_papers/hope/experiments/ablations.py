"""``hope:ablations``: what HOPE's parts contribute (node merging §3.2, tensor caching §4.3): node merging off and on, GS's
window K = 1 (a greedy earliest-finish list scheduler, StarPU's rule) against K = 4, LP's module
size NT in {8, 12, 16}, the paper's level count against the exact vertex cut, the modules solved
under the engine's rules (tensor caching, transfers on their lanes) instead of HOPE's ILP, and two
readings the paper leaves open: StarPU without a transfer model (its ``dm`` policy: what a runtime
that cannot price MNN's layout transforms sees), and communication on a copy lane instead of the
consumer's device; and the plans measured by the DES with CPU and GPU sharing the memory's
bandwidth (memory contention, which the paper's ILP and the figures leave out)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from hetsim.experiment import Context
from hetsim_papers.hope.experiments._common import PREDICTION, artifact, figure, models
from hetsim_papers.hope.experiments.paper import PLATFORMS
from hetsim_papers.hope.experiments.runs import Setting, key, latency, prefetch, reduction_pct

#: label -> (version, parameters, setting changes)
VARIANTS: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "StarPU": ("StarPU", {}, {}),
    "GS": ("HOPE:GS", {}, {}),
    "GS, short on the fastest EP": ("HOPE:GS", {"short": "fastest"}, {}),
    "GS, no merging": ("HOPE:GS", {"merge_threshold_s": None}, {}),
    "GS, K = 1": ("HOPE:GS", {"k": 1}, {}),
    "GS, K = 1, no merging": ("HOPE:GS", {"k": 1, "merge_threshold_s": None}, {}),
    "LP": ("HOPE:LP", {}, {}),
    "LP, myopic (each module alone, short on the fastest EP)": ("HOPE:LP", {"scope": "module", "short": "fastest"}, {}),
    "LP, each module alone": ("HOPE:LP", {"scope": "module"}, {}),
    "LP, no whole-graph pass": ("HOPE:LP", {"whole_graph_s": None}, {}),
    "LP, short on the fastest EP": ("HOPE:LP", {"short": "fastest"}, {}),
    "LP, tails objective": ("HOPE:LP", {"objective": "tails", "lookahead": 0}, {}),
    "LP, no merging": ("HOPE:LP", {"merge_threshold_s": None}, {}),
    "LP, NT = 8": ("HOPE:LP", {"nt": 8}, {}),
    "LP, NT = 16": ("HOPE:LP", {"nt": 16}, {}),
    "LP, exact cut": ("HOPE:LP", {"cut": "exact"}, {}),
    "LP, ILP under the engine's rules": ("HOPE:LP", {"ilp": "engine", "short": "fastest"}, {}),
    "HEFT": ("HEFT", {}, {}),
    "StarPU-DM (no transfer model)": ("StarPU", {"data_aware": False}, {}),
    "StarPU, copy lane": ("StarPU", {}, {"comm": "copy"}),
    "LP, copy lane": ("HOPE:LP", {}, {"comm": "copy"}),
    "StarPU, memory contention": ("StarPU", {}, {"contention": True}),
    "LP, memory contention": ("HOPE:LP", {}, {"contention": True}),
    "MOSAIC, memory contention": ("MOSAIC", {}, {"contention": True}),
}


def ablations(ctx: Context):
    model_list = models(ctx, few=True)
    phones = {"hope-he": PLATFORMS["hope-he"]} if ctx.quick else PLATFORMS
    prefetch(ctx, [key(Setting(name, **change), m, version, **params) for name in phones for m in model_list
                   for version, params, change in VARIANTS.values()])
    rows = []
    for name, (label, _) in phones.items():
        for m in model_list:
            for variant, (version, params, change) in VARIANTS.items():
                setting = Setting(name, **change)
                rows.append({"phone": label, "model": m, "variant": variant,
                             "latency_ms": latency(setting, m, version, **params) * 1e3})
    table = pd.DataFrame(rows)
    lat = table.pivot_table(index=["phone", "model"], columns="variant", values="latency_ms")

    def gain(a: str, b: str) -> float:
        """Mean reduction (%) of variant a against variant b over phones and models."""
        return float(sum(reduction_pct(x, y) for x, y in zip(lat[a], lat[b], strict=True)) / len(lat))

    merging, window = gain("GS", "GS, no merging"), gain("GS", "GS, K = 1")
    claims = [
        ctx.true("HOPE:GS gains from node merging (mean reduction, merging on vs off, %)", "> 0",
             round(merging, 2), merging > 0, "> 0", kind=PREDICTION),
        ctx.true("HOPE:GS gains from its K-op window (mean reduction, K = 4 vs K = 1, %)", "> 0",
             round(window, 2), window > 0, "> 0", kind=PREDICTION),
    ]
    summary = pd.DataFrame([{"variant": v, "mean_reduction_vs_StarPU_pct": gain(v, "StarPU")}
                            for v in VARIANTS if v != "StarPU"])
    fig, axes = figure(1, 1, (9, 4))
    axes[0, 0].barh(summary.variant, summary.mean_reduction_vs_StarPU_pct, color="tab:blue")
    axes[0, 0].axvline(0, color="k", lw=0.8)
    axes[0, 0].set_xlabel("mean latency reduction against StarPU-DMDAR (%), phones x models")
    axes[0, 0].set_title("What HOPE's parts contribute")
    notes = ["Mean reduction against StarPU (%): " + ", ".join(
        f"{r.variant} {r.mean_reduction_vs_StarPU_pct:+.2f}" for r in summary.itertuples())]
    return artifact(table, fig, claims, notes)
