"""Helpers shared by Paper II's figure modules: the factor-of-2 claim, plain-number claims, figures."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from hetsim.experiment import Artifact, Claim, ClaimClass, Context
from hetsim_papers.shisha.experiments.paper import FACTOR

COLORS = {"Shisha": "tab:red", "PS": "tab:purple", "ES": "black", "RW": "tab:gray", "SA": "tab:blue",
          "HC": "tab:green", "SA_s": "tab:cyan", "HC_s": "tab:olive"}


def within_factor(ctx: Context, claim: str, paper_value: float, sim_value: float, factor: float = FACTOR, *,
                  kind: ClaimClass) -> Claim:
    """Passes when sim is within ``factor`` of the paper's value (counts, fractions, speed-ups)."""
    return ctx.within(claim, paper_value, sim_value, paper_value / factor, paper_value * factor, kind=kind)


def artifact(table: pd.DataFrame, figure, claims: list, notes: list[str]) -> Artifact:
    """An Artifact whose claim values are plain Python numbers (not numpy scalars)."""
    for c in claims:
        for attr in ("paper_value", "sim_value"):
            v = getattr(c, attr)
            if isinstance(v, np.generic):
                setattr(c, attr, v.item())
    return Artifact(table, figure, claims, notes)


def figure(nrows: int = 1, ncols: int = 1, size=(7.0, 4.2)):
    fig = Figure(figsize=size, layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False)
    return fig, axes
