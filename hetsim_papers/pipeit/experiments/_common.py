"""Helpers shared by Pipe-it's figure modules."""

from __future__ import annotations

from hetsim_papers.pipeit.experiments.paper import LABELS, NETWORKS


def floats(xs) -> str:
    return "[" + ", ".join(f"{x:.3g}" for x in xs) + "]"


def pct(x: float) -> float:
    return 100.0 * x


def bar_axes(ax, ylabel: str, title: str):
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.set_xticks(range(len(NETWORKS)), [LABELS[n] for n in NETWORKS])
    ax.legend(fontsize=8)
