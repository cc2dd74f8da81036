"""A cost model that replays measured times from a table (a CSV, or ONNX Runtime profiles).

This is Shisha's methodology (a database of per-layer times per EP type, filled from gem5), the way
to replay on-board measurements (Pipe-it's T matrix) and the PIM paper's (per-op times per device
from one profile run per device). Columns:

    workload (optional), layer | op, ep, time_s [, other columns, ignored]

``layer`` is the 1-based layer index of the workload; ``op`` an op name. ``ep`` is an EP name
(``B4``) or a cluster/accelerator name, which then applies to every EP of that place. A table keyed by
layer charges the whole layer to its first op. In a table keyed by op, an op without an entry for
an EP is *not capable* there (``supports`` is False, a mapping placing it there is rejected with
one line), as an op missing from a device's profile. A layer missing from a layer table is an
error, never a silent zero.

Measured copies (ONNX Runtime's Memcpy nodes, ``hetsim costs import-ort``) come as a second table:

    src, dst, bytes, time_s

keyed by direction (EP or place names, as ``ep``) and bytes. A transfer of a measured size takes
its measured time; another size is interpolated linearly between the nearest measured sizes of
that direction (extrapolated from the two nearest outside them, or proportionally when only one
size was measured). A direction without measurements uses the platform's links. A measured copy
already contains the contention it met, so the DES replays it as a plain delay.

``table`` may be a directory holding ``costs.csv`` and, optionally, ``transfers.csv`` (what
``hetsim profile`` and ``hetsim costs import-ort`` write).

**DVFS.** An optional ``freq_MHz`` column says at which clock of the EP's cluster (or accelerator) a
time was measured; a table may hold one op at several clocks (a GPU kernel at 200 and 800 MHz).
The lookup is state-aware: the EP's clock in the evaluated DVFS state (its level's ``freq_MHz``)
picks the row measured at that clock; between or beyond measured clocks the time follows
``t(f) = a + b / f`` through the two nearest (a part that does not follow the clock, fixed costs
and memory traffic, and one that does: docs/model.md); an op measured at one clock only, asked at
another, is an error (one line), never a silent 1/f scaling. Rows without ``freq_MHz`` hold at
every clock.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from hetsim.cost.base import CostModel, Demand, DvfsState
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform

COSTS_FILE = "costs.csv"
TRANSFERS_FILE = "transfers.csv"


def _read_csv(path: Path, source: str) -> pd.DataFrame:
    import io

    from hetsim.validation import MAX_CSV_BYTES, read_input

    data = read_input(path, MAX_CSV_BYTES, "a CSV table")   # a FIFO or a device is refused
    try:
        return pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise HetsimError(f"{source}: not a readable CSV ({str(e).splitlines()[0]})") from None


#: A measured time of one op or copy: [0, 1e6] s (a profile's 1e294 s op would simulate to
#: 5e-295 frames/s); a copy's size: [0, 2^53] bytes.
MAX_TIME_S = 1e6
MAX_BYTES = 2.0 ** 53


def _times(df: pd.DataFrame, source: str, column: str = "time_s") -> pd.Series:
    times = pd.to_numeric(df[column], errors="coerce")
    high = MAX_TIME_S if column == "time_s" else MAX_BYTES
    bad = df.index[times.isna() | ~(times >= 0) | ~(times <= high)]   # NaN, inf, negative, absurd
    if len(bad):
        raise HetsimError(f"{source}: row {bad[0] + 2}: {column} {df[column][bad[0]]!r} is not "
                          f"a {'time' if column == 'time_s' else 'number'} in [0, {high:g}]")
    return times


class MeasuredCostModel(CostModel):
    name = "measured"

    def __init__(self, platform: Platform, table: str | os.PathLike | pd.DataFrame,
                 transfers: str | os.PathLike | pd.DataFrame | None = None):
        super().__init__(platform)
        if isinstance(table, pd.DataFrame):
            df, source = table.copy(), "<table>"
        else:
            path = Path(table)
            if path.is_dir():
                if transfers is None and (path / TRANSFERS_FILE).is_file():
                    transfers = path / TRANSFERS_FILE
                path = path / COSTS_FILE
            source = str(path)
            df = _read_csv(path, source)
        self.source = source
        if "ep" not in df.columns or "time_s" not in df.columns or not ({"layer", "op"} & set(df.columns)):
            raise HetsimError(f"{source}: needs columns ep, time_s and layer or op; has {list(df.columns)}")
        df["time_s"] = _times(df, source)
        self.keyed_by = "layer" if "layer" in df.columns else "op"
        if "workload" not in df.columns:
            df["workload"] = "*"
        if self.keyed_by == "layer":
            layers = pd.to_numeric(df["layer"], errors="coerce")
            bad = df.index[layers.isna() | (layers < 1) | (layers % 1 != 0)]
            if len(bad):
                raise HetsimError(f"{source}: row {bad[0] + 2}: layer {df['layer'][bad[0]]}; layers are "
                                  f"1-based integers (layer 1 is the first)")
        has_freq = "freq_MHz" in df.columns
        if has_freq:
            freq = pd.to_numeric(df["freq_MHz"], errors="coerce")
            from hetsim.bounds import FREQ_MHZ

            bad = df.index[df["freq_MHz"].notna() & ~((freq >= FREQ_MHZ[0]) & (freq <= FREQ_MHZ[1]))]
            if len(bad):
                raise HetsimError(f"{source}: row {bad[0] + 2}: freq_MHz {df['freq_MHz'][bad[0]]!r} is not "
                                  f"a clock in [{FREQ_MHZ[0]:g}, {FREQ_MHZ[1]:g}] MHz, or leave it empty for a "
                                  "time that holds at every clock")
            df["freq_MHz"] = freq
        # (workload, key, ep) -> {freq_MHz or None: time_s}
        self._table: dict[tuple, dict[float | None, float]] = {}
        for row in df.itertuples(index=False):
            key = getattr(row, self.keyed_by)
            if self.keyed_by == "layer":
                key = int(key)
            f = row.freq_MHz if has_freq else None
            f = None if f is None or pd.isna(f) else float(f)
            self._table.setdefault((str(row.workload), key if self.keyed_by == "layer" else str(key),
                                    str(row.ep)), {})[f] = float(row.time_s)
        self._transfers = self._read_transfers(transfers)

    # -- transfers -------------------------------------------------------------------------
    def _read_transfers(self, transfers) -> dict[tuple[str, str], tuple[np.ndarray, np.ndarray]]:
        if transfers is None:
            return {}
        if isinstance(transfers, pd.DataFrame):
            df, source = transfers.copy(), "<transfers>"
        else:
            source = str(transfers)
            df = _read_csv(Path(transfers), source)
        missing = {"src", "dst", "bytes", "time_s"} - set(df.columns)
        if missing:
            raise HetsimError(f"{source}: needs columns src, dst, bytes, time_s; has {list(df.columns)}")
        df["time_s"] = _times(df, source)
        df["bytes"] = _times(df, source, "bytes")
        out = {}
        for (src, dst), g in df.groupby(["src", "dst"], sort=True):
            # one time per size: the median of repeated sizes
            per = g.groupby("bytes")["time_s"].median().sort_index()
            out[(str(src), str(dst))] = (per.index.to_numpy(float), per.to_numpy(float))
        return out

    def measured_transfer_s(self, nbytes: float, src: ExecutionPlace,
                            dst: ExecutionPlace) -> float | None:
        """The measured time of copying ``nbytes`` from ``src`` to ``dst``; None if that direction
        was never measured."""
        if not self._transfers or nbytes <= 0:
            return None
        for s in (src.name, src.place):
            for d in (dst.name, dst.place):
                curve = self._transfers.get((s, d))
                if curve is not None:
                    return _interpolate(curve[0], curve[1], float(nbytes))
        return None

    def transfer_time(self, nbytes: float, src: ExecutionPlace, dst: ExecutionPlace) -> float:
        measured = self.measured_transfer_s(nbytes, src, dst)
        if measured is not None:
            return measured
        return super().transfer_time(nbytes, src, dst)

    # -- ops -------------------------------------------------------------------------------
    def measured_time(self, workload: str, key, ep: ExecutionPlace, state: DvfsState | None = None) -> float | None:
        """The measured time of a layer (1-based index) or an op (name) of ``workload`` on ``ep`` at
        its clock in ``state`` (rows for the EP, then for its place; rows of the workload, then rows
        without one), or None when the table has none."""
        return self._lookup(workload, key, ep, state)

    def clock_MHz(self, ep: ExecutionPlace, state: DvfsState | None = None) -> float | None:
        """The clock of ``ep``'s cluster or accelerator in DVFS ``state`` (None: an accelerator
        without DVFS levels)."""
        p = self.platform
        level = (state or {}).get(ep.place)
        try:
            if ep.cluster:
                c = p.cluster(ep.cluster)
                return p.core_type(c.core_type).level(level or c.dvfs).freq_MHz
            lvl = p.accelerator(ep.place).level(level)
        except KeyError:
            raise HetsimError(f"DVFS level {level!r} is not a level of {ep.place}") from None
        return lvl.freq_MHz if lvl is not None else None

    def _lookup(self, workload: str, key, ep: ExecutionPlace, state: DvfsState | None = None) -> float | None:
        for w in (workload, "*"):
            for e in (ep.name, ep.place):
                by_freq = self._table.get((w, key, e))
                if by_freq is not None:
                    return self._at_clock(by_freq, ep, state, key)
        return None

    def _at_clock(self, by_freq: dict[float | None, float], ep: ExecutionPlace, state: DvfsState | None,
                  key) -> float:
        """The time at ``ep``'s clock in ``state`` (module docstring: exact, else a + b / f through the
        two nearest measured clocks)."""
        if None in by_freq and len(by_freq) == 1:
            return by_freq[None]
        f = self.clock_MHz(ep, state)
        if f is None or f in by_freq:
            return by_freq[f] if f is not None else by_freq.get(None, next(iter(by_freq.values())))
        measured = sorted(x for x in by_freq if x is not None)
        if len(measured) < 2:
            if None in by_freq:
                return by_freq[None]
            raise HetsimError(f"{self.source}: {key} on {ep.name} was measured at {measured[0]:g} MHz only; the "
                              f"DVFS state asks for {f:g} MHz (measure it there, or at a second clock to "
                              "interpolate)")
        f1, f2 = sorted(measured, key=lambda x: (abs(x - f), x))[:2]
        t1, t2 = by_freq[f1], by_freq[f2]
        b = (t1 - t2) / (1 / f1 - 1 / f2)
        t = t1 + b * (1 / f - 1 / f1)
        if t <= 0:
            raise HetsimError(f"{self.source}: {key} on {ep.name}: a + b/f through {f1:g} and {f2:g} MHz gives "
                              f"{t:.3g} s at {f:g} MHz; measure closer to that clock")
        return float(t)

    def supports(self, op, ep: ExecutionPlace) -> bool:
        """An op-keyed table can run ``op`` on ``ep`` only where it has a time for it (an op absent
        from a device's profile is not capable there)."""
        if self.keyed_by == "layer":
            return True
        w = getattr(op, "workload", "*")
        return any((x, op.name, e) in self._table for x in (w, "*") for e in (ep.name, ep.place))

    def layer_times(self, workload, ep: ExecutionPlace, state: DvfsState | None = None) -> np.ndarray:
        if self.keyed_by == "op":
            return super().layer_times(workload, ep, state)
        out = np.empty(workload.num_layers)
        for i in range(workload.num_layers):
            t = self._lookup(workload.name, i + 1, ep, state)
            if t is None:
                raise HetsimError(f"{self.source}: no time for {workload.name} layer {i + 1} on {ep.name}")
            out[i] = t
        return out

    def op_demand(self, op, ep: ExecutionPlace, state: DvfsState | None = None) -> Demand:
        if self.keyed_by == "layer":
            raise HetsimError(f"{self.source} is keyed by layer; ask it for layer times")
        t = self._lookup(getattr(op, "workload", "*"), op.name, ep, state)
        if t is None:
            raise HetsimError(f"{self.source}: no time for op {op.name} on {ep.name} (not capable "
                              "there: it has no measurement)")
        # A measured time already contains whatever contention the measurement saw: fixed.
        return Demand(t, 0.0, 0.0)

    def layer_demands(self, workload, ep, state=None):
        if self.keyed_by == "layer":
            return [Demand(float(t), 0.0, 0.0) for t in self.layer_times(workload, ep, state)]
        return super().layer_demands(workload, ep, state)


def _interpolate(sizes: np.ndarray, times: np.ndarray, nbytes: float) -> float:
    """Piecewise-linear in bytes through the measured points; outside them, the line through the
    two nearest; with one point, proportional to it."""
    if len(sizes) == 1:
        return float(times[0] * nbytes / sizes[0]) if sizes[0] > 0 else float(times[0])
    if sizes[0] <= nbytes <= sizes[-1]:
        return float(np.interp(nbytes, sizes, times))
    i, j = (0, 1) if nbytes < sizes[0] else (-2, -1)
    slope = (times[j] - times[i]) / (sizes[j] - sizes[i])
    return float(max(times[i] + slope * (nbytes - sizes[i]), 0.0))
