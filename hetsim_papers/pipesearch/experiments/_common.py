"""Helpers shared by Paper I's figure modules."""

from __future__ import annotations

from matplotlib.figure import Figure


def figure(w: float = 7.0, h: float = 4.0, ncols: int = 1):
    fig = Figure(figsize=(w, h), layout="constrained")
    axes = fig.subplots(1, ncols)
    return fig, axes
