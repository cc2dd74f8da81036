"""Cross-validation over networks: fit a board without a network, predict that network.

What a what-if user needs to know is how well hetsim predicts what was not measured. For every
held-out network (``--holdout NETWORK``, or each network in turn with K folds over networks):

* per-layer (and per-op) median |error| and rank correlation (Spearman, per EP and clock, median
  over them) of its layer rows;
* pipelines (its whole-network and pipeline rows): median |error| of the frame time, rank
  correlation of the throughputs, and the regret of the pipeline hetsim would pick among them
  (1 - measured throughput of the predicted best / measured best);
* the DVFS slowdown error (a network on one EP at two or more clocks).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from hetsim.calibrate.board import (
    BoardFit,
    calibrate_platform,
    cost_factory,
    predict_rows,
    resolve_rows,
    rows_table,
)
from hetsim.calibrate.report import dvfs_slowdowns
from hetsim.errors import HetsimError
from hetsim.platform import load_platform


@dataclass
class Holdout:
    network: str
    fit: BoardFit                  # fitted without it
    table: pd.DataFrame            # its rows, predicted by that fit

    def _rows(self, kinds) -> pd.DataFrame:
        return self.table[self.table.kind.isin(kinds)]

    @property
    def layer_rows(self) -> int:
        return len(self._rows(["layer", "op"]))

    @property
    def layer_median_abs_error(self) -> float:
        t = self._rows(["layer", "op"])
        return float(np.median(t.error.abs())) if len(t) else math.nan

    @property
    def layer_spearman(self) -> float:
        """Median over (EP, clock) of the rank correlation of its layers' measured and predicted times."""
        t = self._rows(["layer", "op"])
        rs = [_spearman(g.measured_s, g.predicted_s) for _, g in t.groupby(["ep", "clock"]) if len(g) >= 3]
        rs = [r for r in rs if not math.isnan(r)]
        return float(np.median(rs)) if rs else math.nan

    @property
    def pipeline_rows(self) -> int:
        return len(self._rows(["network", "pipeline"]))

    @property
    def pipeline_median_abs_error(self) -> float:
        t = self._rows(["network", "pipeline"])
        return float(np.median(t.error.abs())) if len(t) else math.nan

    @property
    def pipeline_spearman(self) -> float:
        t = self._rows(["network", "pipeline"])
        return _spearman(t.measured_s, t.predicted_s) if len(t) >= 3 else math.nan

    @property
    def regret(self) -> float:
        """1 - measured throughput of the pipeline hetsim predicts fastest / the measured fastest."""
        t = self._rows(["network", "pipeline"])
        if len(t) < 2:
            return math.nan
        picked = t.loc[t.predicted_s.idxmin()]
        return float(1.0 - t.measured_s.min() / picked.measured_s)

    @property
    def picked(self) -> str:
        t = self._rows(["network", "pipeline"])
        if t.empty:
            return ""
        r = t.loc[t.predicted_s.idxmin()]
        return f"{r.mapping} @ {r.clock}"

    @property
    def dvfs_median_abs_error(self) -> float:
        s = dvfs_slowdowns(self.table)
        return float(np.median(s.error.abs())) if len(s) else math.nan

    def scores(self) -> dict:
        return {"network": self.network, "layer_rows": self.layer_rows,
                "layer_median_abs_error": self.layer_median_abs_error, "layer_spearman": self.layer_spearman,
                "pipeline_rows": self.pipeline_rows, "pipeline_median_abs_error": self.pipeline_median_abs_error,
                "pipeline_spearman": self.pipeline_spearman, "regret": self.regret, "picked": self.picked,
                "dvfs_median_abs_error": self.dvfs_median_abs_error}


def _spearman(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return math.nan
    return float(spearmanr(a, b).statistic)


def predict_table(fit: BoardFit, table: pd.DataFrame, workloads: dict | None = None) -> pd.DataFrame:
    """The rows of ``table`` predicted on the fitted platform (the rows-table of :func:`rows_table`)."""
    overrides = fit.overrides
    cache: dict = {}

    def platform_for(dvfs):
        if dvfs not in cache:
            cache[dvfs] = load_platform(fit.source, overrides, dvfs)
        return cache[dvfs]

    rows = resolve_rows(platform_for(None), table, workloads, fit.source)
    return rows_table(rows, predict_rows(rows, platform_for, fit.factory or cost_factory(fit.cost)))


def folds_of(networks: Sequence[str], k: int | None) -> list[list[str]]:
    """K folds over the networks (sorted, dealt round-robin: deterministic); None or k >= n: one
    network per fold (leave one out)."""
    nets = sorted(networks)
    if k is None or k >= len(nets):
        return [[n] for n in nets]
    if k < 2:
        raise HetsimError(f"--kfold {k}: at least 2 folds")
    return [nets[i::k] for i in range(k)]


def crossvalidate(platform: str | os.PathLike, table: pd.DataFrame, folds: Sequence[Sequence[str]],
                  **fit_kwargs) -> list[Holdout]:
    """For each fold: fit without its networks, predict each of them."""
    known = set(table.network)
    out = []
    for fold in folds:
        for n in fold:
            if n not in known:
                raise HetsimError(f"--holdout {n}: no rows of that network; networks measured: "
                                  f"{', '.join(sorted(known))}")
        if set(fold) == known:
            raise HetsimError(f"holding out {', '.join(fold)} leaves nothing to fit on; measure another network")
        fit = calibrate_platform(platform, table, exclude=list(fold), **fit_kwargs)
        for n in fold:
            out.append(Holdout(n, fit, predict_table(fit, table[table.network == n], fit_kwargs.get("workloads"))))
    return out


def scores_table(results: Sequence[Holdout]) -> pd.DataFrame:
    return pd.DataFrame([h.scores() for h in results])


def ablation(platform: str | os.PathLike, table: pd.DataFrame, mechanisms: Sequence[str],
             folds: Sequence[Sequence[str]] | None = None, **fit_kwargs) -> pd.DataFrame:
    """Refit with all ``mechanisms`` and with each one off; in-sample errors, or (with ``folds``)
    the held-out scores' medians over the networks."""
    variants = [("all", list(mechanisms))] + [(f"no {m}", [x for x in mechanisms if x != m]) for m in mechanisms]
    if mechanisms:
        variants.append(("base only", []))
    rows = []
    for label, mech in variants:
        spec = mech if mech else "none"
        if folds:
            s = scores_table(crossvalidate(platform, table, folds, mechanisms=spec, **fit_kwargs))
            rows.append({"variant": label, "layer_median_abs_error": s.layer_median_abs_error.median(),
                         "pipeline_median_abs_error": s.pipeline_median_abs_error.median(),
                         "pipeline_spearman": s.pipeline_spearman.median(), "regret": s.regret.median(),
                         "dvfs_median_abs_error": s.dvfs_median_abs_error.median()})
        else:
            fit = calibrate_platform(platform, table, mechanisms=spec, **fit_kwargs)
            h = Holdout("(in sample)", fit, fit.table)
            rows.append({"variant": label, "layer_median_abs_error": h.layer_median_abs_error,
                         "pipeline_median_abs_error": h.pipeline_median_abs_error,
                         "pipeline_spearman": h.pipeline_spearman, "regret": h.regret,
                         "dvfs_median_abs_error": h.dvfs_median_abs_error})
    return pd.DataFrame(rows)
