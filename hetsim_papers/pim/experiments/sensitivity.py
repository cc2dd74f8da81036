"""How the reproduction's headline numbers move with the choices the paper leaves open: the copy
scale (not recoverable from the text: Fig. 2(b)'s times are lost and Fig. 11's ratios do not pin
it), the order of Fig. 8(a)'s CPU_P endpoints, and how copies are counted (per memory space, the
executor; per edge, the DP's own model)."""

from __future__ import annotations

from functools import lru_cache

import pandas as pd

from hetsim.experiment import Artifact, Context
from hetsim_papers.pim.dcg import Dcg
from hetsim_papers.pim.experiments import calibration as cal
from hetsim_papers.pim.experiments import runs
from hetsim_papers.pim.experiments.paper import FIG9_RANGES, STRUCTURAL, claim

#: Copy factors (times the anchors' copy; the calibration's is about 2.65).
COPY_FACTORS = (0.3, 1.0, 2.0, 3.0, 5.0, 10.0)
#: The factors over which Fig. 11's transfer changes are flat (they cannot fit the copy scale).
FLAT = (1.0, 5.0)
HEADLINE = tuple(FIG9_RANGES)


def headline(values: dict[str, float], factor: float = 1.0, copies: str = "memory",
             ps=runs.SEQUENCE_LENGTHS) -> dict[str, float]:
    """Fig. 9's ranges (OPT over each scheme, lowest and highest over models and p) and Fig. 11's
    changes at p = 16, on the platform with ``values`` and every copy ``factor`` times dearer (copy
    times are proportional to the factor: the DCG is scaled, not rebuilt), from the DCG."""
    scaled = _dcgs(tuple(sorted(values.items())), ps)
    ratios: dict[str, list[float]] = {s: [] for s in HEADLINE}
    out: dict[str, float] = {}
    for (model, p), g0 in scaled.items():
        g = g0.with_costs(edge_s=g0.edge_s * factor)
        opt_a = runs.scheme_assignment(g, "OPT")
        opt = g.total(opt_a, copies)
        for s in HEADLINE:
            ratios[s].append(g.total(runs.scheme_assignment(g, s), copies) / opt)
        if p == 16:
            base = g.latency(runs.scheme_assignment(g, "(PIM,CPU_P,CPU_S)"), copies)
            o = g.latency(opt_a, copies)
            out[f"fig11 {model} compute"] = o[0] / base[0] - 1
            out[f"fig11 {model} transfer"] = o[1] / base[1] - 1
    for s, r in ratios.items():
        out[f"OPT/{s} min"], out[f"OPT/{s} max"] = min(r), max(r)
    return out


@lru_cache(maxsize=4)
def _dcgs(values: tuple[tuple[str, float], ...], ps) -> dict[tuple[str, int], Dcg]:
    plat = cal._platform(dict(values))
    return {(m, p): runs.problem_dcg(m, p, plat) for m in runs.MODELS for p in ps}


def sensitivity(ctx: Context) -> Artifact:
    values = cal.shipped_values()
    fitted = cal.copy_factor_of(runs.platform())
    # Quick: p = 16 only (Fig. 11's p; the Fig. 9 columns then span the models at p = 16).
    ps = (16,) if ctx.quick else runs.SEQUENCE_LENGTHS
    rows = []
    # The shipped platform's copies are `fitted` times the anchors'; rescale them.
    for f in COPY_FACTORS:
        rows.append({"choice": "copy factor", "value": f, **headline(values, f / fitted, ps=ps)})
    rows.append({"choice": "copy factor", "value": f"{fitted:.4g} (fitted)", **headline(values, ps=ps)})
    rows.append({"choice": "copies counted", "value": "per edge", **headline(values, copies="edge", ps=ps)})
    if not ctx.quick:
        rising = cal.calibrate(order="rising")
        rows.append({"choice": "Fig. 8(a) CPU_P endpoints", "value": "rising", **headline(rising.values)})
    table = pd.DataFrame(rows)
    copy = table[table.choice == "copy factor"].set_index("value")
    cols = [k for k in copy.columns if k.startswith("fig11")]
    flat = copy.loc[[f for f in COPY_FACTORS if FLAT[0] <= f <= FLAT[1]], cols]
    span = float((flat.max() - flat.min()).abs().max())
    claims = [claim(ctx, "true", f"Fig. 11's changes do not move with copies {FLAT[0]:g}x-{FLAT[1]:g}x the "
                    "anchors' (they cannot fit the copy scale)", "flat", f"largest spread {span:.4f}",
                    span < 0.01, "< 0.01", kind=STRUCTURAL)]
    return Artifact(table, None, claims)
