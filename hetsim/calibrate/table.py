"""The measurements a board calibration fits: one tidy table, from a CSV, ONNX Runtime profiles or
ARM Compute Library logs (docs/calibrate.md "What to measure").

A tidy CSV has one row per measured quantity; columns (others are kept and ignored)::

    network      workload name or YAML path (alias: workload)                        required
    layer        1-based layer index or layer name  } one of them: a per-layer or per-op row;
    op           op name                            } neither: a whole-network or pipeline row
    ep           EP name (B4, s2, C1, gpu)           } or cluster + cores (B4 = big, 4)
    cluster, cores                                  }
    mapping      a pipeline string (B2:1-8|s4:9-21): a pipeline row (no ep, layer or op)
    freq_MHz     clock of the EP's cluster: one of its core type's DVFS levels   } optional, one
    dvfs         a level name (layer/op/network rows) or a preset / cluster=level } of them
    time_s       one execution of the layer or op; one frame of a network or pipeline (1 / rate)
    throughput_fps   network and pipeline rows: frames per second (instead of time_s)
    stage        1-based position of the stage the layer or op ran in when measured (default 1:
                 measured alone, so it fed itself; a later stage's times carry no feeder)
    weight       weight of the row in the fit (default 1)
    label        free text naming the row in reports (default: network, what, where)

A whole-network row (``ep`` and no ``layer``/``op``) is the network on that EP alone: ``mapping``
``EP:1-N``. Rows are checked against the platform and the networks before anything is fitted: a bad
row is one line naming the file, the row, the column, the value and what is allowed.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError

#: The kinds of rows, in the order the report lists them.
ROW_KINDS = ("layer", "op", "network", "pipeline")
#: Columns of the normalised table (what :func:`read_measurements` returns).
COLUMNS = ("kind", "network", "layer", "op", "ep", "mapping", "freq_MHz", "dvfs", "time_s", "value", "unit",
           "stage", "weight", "label", "source")


def _blank(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v)) or (isinstance(v, str) and not v.strip())


def _text(v) -> str:
    if _blank(v):
        return ""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v).strip()


def _number(v, where: str, column: str, positive: bool = True, integer: bool = False) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise HetsimError(f"{where}: column {column} {v!r} is not a number") from None
    if not math.isfinite(x) or (positive and x <= 0) or (not positive and x < 0):
        raise HetsimError(f"{where}: column {column} {v!r}: allowed: a finite number "
                          f"{'> 0' if positive else '>= 0'}")
    if integer and not x.is_integer():
        raise HetsimError(f"{where}: column {column} {v!r}: allowed: a whole number")
    return x


def normalise(df: pd.DataFrame, source: str) -> pd.DataFrame:
    """A raw tidy table (the CSV's columns) as the normalised one (:data:`COLUMNS`), row by row
    checked for what can be checked without the platform and the networks."""
    if "network" not in df.columns and "workload" in df.columns:
        df = df.rename(columns={"workload": "network"})
    if "network" not in df.columns:
        raise HetsimError(f"{source}: no column 'network' (the workload each row measured); columns: "
                          f"{', '.join(map(str, df.columns))}; docs/calibrate.md lists them")
    if "time_s" not in df.columns and "throughput_fps" not in df.columns:
        raise HetsimError(f"{source}: no column 'time_s' or 'throughput_fps'")
    if df.empty:
        raise HetsimError(f"{source}: no rows")
    rows = []
    for i, r in enumerate(df.to_dict("records")):
        where = f"{source} row {i + 2}"   # the header is line 1
        get = lambda c, r=r: r.get(c)     # noqa: E731 - a missing column reads as blank
        network = _text(get("network"))
        if not network:
            raise HetsimError(f"{where}: column network is empty")
        layer, op, mapping = _text(get("layer")), _text(get("op")), _text(get("mapping"))
        if re.fullmatch(r"[0-9]+\.0*", layer):   # an index written by a float column (pandas: 3.0)
            layer = layer.split(".")[0]
        ep = _text(get("ep"))
        if not ep and not _blank(get("cluster")):
            if _blank(get("cores")):
                raise HetsimError(f"{where}: column cluster {get('cluster')!r} needs a column cores")
            cores = int(_number(get("cores"), where, "cores", integer=True))
            ep = f"{_text(get('cluster'))}:{cores}"
        if layer and op:
            raise HetsimError(f"{where}: both layer {layer!r} and op {op!r}; a row measures one of them")
        if mapping and (layer or op or ep):
            raise HetsimError(f"{where}: a pipeline row (mapping {mapping!r}) has no layer, op or ep")
        if not mapping and not ep:
            raise HetsimError(f"{where}: no ep (or cluster and cores) and no mapping: say where it ran")
        kind = "layer" if layer else "op" if op else "pipeline" if mapping else "network"
        freq = get("freq_MHz")
        dvfs = _text(get("dvfs"))
        if not _blank(freq) and dvfs:
            raise HetsimError(f"{where}: both freq_MHz and dvfs; give one")
        freq_MHz = _number(freq, where, "freq_MHz") if not _blank(freq) else float("nan")
        if kind == "pipeline" and not _blank(freq):
            raise HetsimError(f"{where}: a pipeline row names its clocks with dvfs (a preset or "
                              "cluster=level,...), not freq_MHz")
        t, fps = get("time_s"), get("throughput_fps")
        if not _blank(t) and not _blank(fps):
            raise HetsimError(f"{where}: both time_s and throughput_fps; give one")
        if _blank(t) and _blank(fps):
            raise HetsimError(f"{where}: neither time_s nor throughput_fps")
        if not _blank(fps):
            if kind in ("layer", "op"):
                raise HetsimError(f"{where}: a {kind} row gives time_s, not throughput_fps")
            value, unit = _number(fps, where, "throughput_fps"), "fps"
            time_s = 1.0 / value
        else:
            value, unit = _number(t, where, "time_s"), "s"
            time_s = value
        stage = int(_number(get("stage"), where, "stage", integer=True)) if not _blank(get("stage")) else 1
        weight = _number(get("weight"), where, "weight") if not _blank(get("weight")) else 1.0
        rows.append({"kind": kind, "network": network, "layer": layer, "op": op, "ep": ep,
                     "mapping": mapping, "freq_MHz": freq_MHz, "dvfs": dvfs, "time_s": time_s,
                     "value": value, "unit": unit, "stage": stage, "weight": weight,
                     "label": _text(get("label")), "source": where})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def read_measurements(path: str | os.PathLike) -> pd.DataFrame:
    """A tidy CSV (module docstring) as the normalised table."""
    import io

    from hetsim.validation import MAX_CSV_BYTES, read_input

    p = Path(path)
    if p.is_dir():
        raise HetsimError(f"{path}: a directory, not a CSV file")
    data = read_input(p, MAX_CSV_BYTES, "a CSV table")   # a FIFO or a device is refused
    try:
        df = pd.read_csv(io.BytesIO(data), dtype={"layer": str, "op": str, "ep": str, "mapping": str, "dvfs": str,
                                                  "network": str, "workload": str, "cluster": str})
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise HetsimError(f"{path}: not a readable CSV ({' '.join(str(e).split())[:120]})") from None
    return normalise(df, str(p))


def concat(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    tables = [t for t in tables if not t.empty]
    if not tables:
        raise HetsimError("no measurements: give --measurements FILE.csv, --ort EP=PROFILE.json or "
                          "--acl EP=LOG.json")
    return pd.concat(tables, ignore_index=True)


# -- ONNX Runtime profiles -------------------------------------------------------------------------
def from_ort(profiles: Mapping[str, Sequence[str | os.PathLike]], network: str,
             model: str | os.PathLike | None = None, skip_runs: int | None = None) -> pd.DataFrame:
    """Per-op rows and one whole-network row per EP from ONNX Runtime profiles (``{EP: [files]}``,
    through :func:`hetsim.cost.ort_profile.import_ort_profiles`: medians over the runs past the
    warm-up). The op names are the ONNX nodes', which ``network`` (the imported model's workload)
    must have; the network row is the median ``model_run`` time."""
    from hetsim.cost.ort_profile import import_ort_profiles

    measured = import_ort_profiles(profiles, model, skip_runs=skip_runs)
    rows = [{"network": network, "op": r.op, "ep": r.ep, "time_s": r.time_s}
            for r in measured.ops.itertuples()]
    for ep, runs in measured.runs.groupby("ep", sort=False):
        rows.append({"network": network, "ep": ep, "time_s": float(np.median(runs.time_s))})
    files = ", ".join(f"{ep}={f}" for ep, fs in profiles.items() for f in fs)
    return normalise(pd.DataFrame(rows), f"ONNX Runtime profiles {files}")


# -- ARM Compute Library ---------------------------------------------------------------------------
#: The instrument whose measurements :func:`from_acl` reads: ARM Compute Library's benchmark
#: framework (tests/framework/instruments/SchedulerTimer.cpp) times every kernel it schedules and
#: names it ``SchedulerTimer/<graph node>/<kernel> #<n>``; its JSON printer
#: (tests/framework/printers/JSONPrinter.cpp, ``--log-format=json``) writes
#: ``{"tests": {TEST: {"measurements": {NAME: {"raw": [one value per iteration], "unit": "ms"}}}}}``.
ACL_INSTRUMENT = "SchedulerTimer/"
_ACL_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


@dataclass(frozen=True)
class AclKernel:
    node: str           # the graph node (a layer or op of the network)
    kernel: str         # NEGEMMMatrixMultiplyKernel, ...
    times_s: tuple[float, ...]


def read_acl_log(path: str | os.PathLike) -> list[AclKernel]:
    """The SchedulerTimer kernels of an ARM Compute Library benchmark JSON log (:data:`ACL_INSTRUMENT`)."""
    from hetsim.validation import read_json

    p = Path(path)
    if p.is_dir():
        raise HetsimError(f"{path}: a directory, not an ARM Compute Library log")
    data = read_json(p, what="an ARM Compute Library log")   # size limit, no FIFO, strict JSON
    tests = data.get("tests") if isinstance(data, dict) else None
    if not isinstance(tests, dict) or not tests:
        raise HetsimError(f"{path}: no 'tests' object: not an ARM Compute Library benchmark log "
                          "(run the graph example with --instruments=SCHEDULER_TIMER_MS --log-format=json)")
    out = []
    for test in tests.values():
        for name, m in (test.get("measurements") or {}).items():
            if not name.startswith(ACL_INSTRUMENT):
                continue
            rest, _, _number_part = name[len(ACL_INSTRUMENT):].rpartition(" #")
            node, _, kernel = rest.rpartition("/")
            unit = _ACL_UNITS.get(str(m.get("unit", "ms")).strip())
            if unit is None:
                raise HetsimError(f"{path}: measurement {name!r} has unit {m.get('unit')!r}; allowed: "
                                  f"{', '.join(_ACL_UNITS)}")
            raw = m.get("raw") or []
            values = [float(v) for item in raw for v in (item if isinstance(item, list) else [item])]
            out.append(AclKernel(node, kernel, tuple(v * unit for v in values)))
    if not out:
        raise HetsimError(f"{path}: no {ACL_INSTRUMENT.rstrip('/')} measurements (run with "
                          "--instruments=SCHEDULER_TIMER_MS)")
    return out


def from_acl(logs: Mapping[str, Sequence[str | os.PathLike]], network: str) -> pd.DataFrame:
    """Per-op rows from ARM Compute Library SchedulerTimer logs (``{EP: [files]}``): every graph
    node's kernels summed per iteration, the median over iterations. A node without a name (ARM-CL
    graph tensors, kernels run outside a node) has no op to charge and is left out."""
    rows = []
    for ep, files in logs.items():
        per_node: dict[str, list[float]] = {}     # node -> its time in every iteration of every file
        for f in files:
            in_file: dict[str, np.ndarray] = {}
            for k in read_acl_log(f):
                if not k.node:
                    continue
                times = np.asarray(k.times_s)
                acc = in_file.get(k.node)
                if acc is not None and len(acc) != len(times):
                    raise HetsimError(f"{f}: node {k.node!r}: kernels measured over different numbers of "
                                      "iterations; one log per run")
                in_file[k.node] = times if acc is None else acc + times
            for node, ts in in_file.items():
                per_node.setdefault(node, []).extend(ts.tolist())
        rows += [{"network": network, "op": node, "ep": ep, "time_s": float(np.median(ts))}
                 for node, ts in per_node.items() if ts]
    files = ", ".join(f"{ep}={f}" for ep, fs in logs.items() for f in fs)
    return normalise(pd.DataFrame(rows), f"ARM Compute Library logs {files}")
