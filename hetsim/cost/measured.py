"""A cost model that replays measured times from a CSV table.

This is Shisha's methodology (a database of per-layer times per EP type, filled from gem5) and the
way to replay on-board measurements (Pipe-it's T matrix). Columns:

    workload (optional), layer | op, ep, time_s [, bytes]

``layer`` is the 1-based layer index of the workload; ``op`` an op name. ``ep`` is an EP name
(``B4``) or a cluster/accelerator name, which then applies to every EP of that place. A table keyed by
layer charges the whole layer to its first op. Missing entries are an error, never a silent zero.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from hetsim.cost.base import CostModel, Demand, DvfsState
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform


class MeasuredCostModel(CostModel):
    name = "measured"

    def __init__(self, platform: Platform, table: str | os.PathLike | pd.DataFrame):
        super().__init__(platform)
        if isinstance(table, pd.DataFrame):
            df, source = table.copy(), "<table>"
        else:
            source = str(table)
            try:
                df = pd.read_csv(Path(table))
            except FileNotFoundError:
                raise HetsimError(f"{source}: no such file") from None
            except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
                raise HetsimError(f"{source}: not a readable CSV ({str(e).splitlines()[0]})") from None
        self.source = source
        if "ep" not in df.columns or "time_s" not in df.columns or not ({"layer", "op"} & set(df.columns)):
            raise HetsimError(f"{source}: needs columns ep, time_s and layer or op; has {list(df.columns)}")
        times = pd.to_numeric(df["time_s"], errors="coerce")
        bad = df.index[times.isna() | (times < 0)]
        if len(bad):
            raise HetsimError(f"{source}: row {bad[0] + 2}: time_s {df['time_s'][bad[0]]!r} is not a time >= 0")
        df["time_s"] = times
        self.keyed_by = "layer" if "layer" in df.columns else "op"
        if "workload" not in df.columns:
            df["workload"] = "*"
        self._table: dict[tuple, float] = {}
        for row in df.itertuples(index=False):
            key = getattr(row, self.keyed_by)
            if self.keyed_by == "layer":
                key = int(key)
            self._table[(str(row.workload), key, str(row.ep))] = float(row.time_s)

    def _lookup(self, workload: str, key, ep: ExecutionPlace) -> float | None:
        for w in (workload, "*"):
            for e in (ep.name, ep.place):
                t = self._table.get((w, key, e))
                if t is not None:
                    return t
        return None

    def layer_times(self, workload, ep: ExecutionPlace, state: DvfsState | None = None) -> np.ndarray:
        if self.keyed_by == "op":
            return super().layer_times(workload, ep, state)
        out = np.empty(workload.num_layers)
        for i in range(workload.num_layers):
            t = self._lookup(workload.name, i + 1, ep)
            if t is None:
                raise HetsimError(f"{self.source}: no time for {workload.name} layer {i + 1} on {ep.name}")
            out[i] = t
        return out

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        if self.keyed_by == "layer":
            raise HetsimError(f"{self.source} is keyed by layer; ask it for layer times")
        t = self._lookup(getattr(op, "workload", "*"), op.name, ep)
        if t is None:
            raise HetsimError(f"{self.source}: no time for op {op.name} on {ep.name}")
        # A measured time already contains whatever contention the measurement saw: fixed.
        return Demand(t, 0.0, 0.0)

    def layer_demands(self, workload, ep, state=None):
        if self.keyed_by == "layer":
            return [Demand(float(t), 0.0, 0.0) for t in self.layer_times(workload, ep, state)]
        return super().layer_demands(workload, ep, state)
