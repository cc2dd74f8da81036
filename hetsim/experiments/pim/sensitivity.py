"""How the reproduction's headline numbers move with the choices the paper leaves open: the copy
scale (not recoverable from the text: Fig. 2(b)'s times are lost and Fig. 11's ratios do not pin
it), the order of Fig. 8(a)'s CPU_P endpoints, and how copies are counted (per memory space, the
executor; per edge, the DP's own model)."""

from __future__ import annotations

import pandas as pd

from hetsim.experiment import Artifact, Context
from hetsim.experiments.pim import calibration as cal
from hetsim.experiments.pim import runs
from hetsim.experiments.pim.paper import FIG9_RANGES, STRUCTURAL, claim
from hetsim.platform import load_platform

COPY_FACTORS = (0.3, 1.0, 2.0, 3.0, 5.0)
HEADLINE = tuple(FIG9_RANGES)


def _scaled(values: dict[str, float], factor: float) -> dict[str, float]:
    v = dict(values)
    v[f"{cal.UNIT}.conversion_ns_per_element"] *= factor
    v[f"{cal.UNIT}.uncacheable_read_ns_per_byte"] *= factor
    dma = next(lk for lk in load_platform(cal.PLATFORM).links if lk.name == "dma").bandwidth_GBps
    v["links.dma.bandwidth_GBps"] = dma / factor
    return v


def headline(values: dict[str, float], ps=runs.SEQUENCE_LENGTHS, copies: str = "memory") -> dict[str, float]:
    """Fig. 9's ranges (OPT over each scheme, min and max over models and p) and Fig. 11's changes
    at p = 16, on the platform with ``values``, from the DCG (the executor's counting)."""
    plat = cal._platform(values)
    ratios: dict[str, list[float]] = {s: [] for s in HEADLINE}
    out: dict[str, float] = {}
    for model in runs.MODELS:
        for p in ps:
            g = runs.problem_dcg(model, p, plat)
            opt = g.total(runs.scheme_assignment(g, "OPT"), copies)
            for s in HEADLINE:
                ratios[s].append(g.total(runs.scheme_assignment(g, s), copies) / opt)
            if p == 16:
                base = g.latency(runs.scheme_assignment(g, "(PIM,CPU_P,CPU_S)"), copies)
                o = g.latency(runs.scheme_assignment(g, "OPT"), copies)
                out[f"fig11 {model} compute"] = o[0] / base[0] - 1
                out[f"fig11 {model} transfer"] = o[1] / base[1] - 1
    for s, r in ratios.items():
        out[f"OPT/{s} min"], out[f"OPT/{s} max"] = min(r), max(r)
    return out


def sensitivity(ctx: Context) -> Artifact:
    c = cal.calibrate()
    rows = []
    factors = (1.0, 3.0) if ctx.quick else COPY_FACTORS
    for f in factors:
        rows.append({"choice": "copy cost factor", "value": f, **headline(_scaled(c.values, f))})
    if not ctx.quick:
        rising = cal.calibrate(order="rising")
        rows.append({"choice": "Fig. 8(a) CPU_P endpoints", "value": "rising", **headline(rising.values)})
        rows.append({"choice": "copies counted", "value": "per edge", **headline(c.values, copies="edge")})
    table = pd.DataFrame(rows)
    copy = table[table.choice == "copy cost factor"].set_index("value")
    cols = [k for k in copy.columns if k.startswith("fig11") and "transfer" in k]
    flat = copy.loc[[f for f in factors if f >= 1.0], cols]
    span = float((flat.max() - flat.min()).abs().max())
    claims = [claim(ctx, "true", "Fig. 11's transfer changes do not move with copy costs 1x-5x (they cannot "
                    "fit the copy scale)", "flat", f"largest spread {span:.4f}", span < 0.01, "< 0.01",
                    kind=STRUCTURAL)]
    return Artifact(table, None, claims)
