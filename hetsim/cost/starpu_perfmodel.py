"""Per-op measured times from StarPU performance models, as a measured cost table.

StarPU calibrates a history-based (or regression) performance model per codelet and writes it as a
text file, ``$STARPU_HOME/.starpu/sampling/codelets/<version>/<symbol>.<hostname>`` (the format of
StarPU 1.3/1.4's ``perfmodel_history.c``: ``dump_model_file``; ``starpu_perfmodel_display`` shows
it). A file holds the performance model version, then per *combination* of devices (type: 0 CPU,
1 CUDA, 2 OpenCL, 3 MIC, 5 MPI master-slave; device id; cores) and per implementation: the number
of history entries, the linear regression line (``sumlnx sumlnx2 sumlny sumlnxlny alpha beta n
minx maxx``: time = alpha size^beta), the non-linear one (``a b c``: time = a size^b + c), the
multiple-regression coefficients (``0`` when none), then one line per history entry: ``footprint
size [flops] mean dev sum sum2 n``, times in microseconds. Lines starting with ``#`` are comments.

:func:`import_starpu_perfmodels` prices the ops of a workload from such files: each op kind reads
the codelet a symbol names (``--symbol conv2d=conv``; default: a symbol named after the kind), each
device combination is an EP of the platform (``--device cuda0=gpu``: device keys are
``<type><id>``, ``cpu0``, ``cuda0``, ``opencl0``, with ``x<cores>`` for a combination of several
cores, ``cpu0x4``, and ``+`` between the devices of a multi-device combination). An op's time on a
device is the history entry whose ``size`` is the op's data (StarPU's default size: the bytes of
every buffer of the task, here input + weights + output; entries of one size with different
footprints averaged by their samples), else the non-linear regression, else the linear one; an op
with none of these has no row for that EP (the measured table then treats it as unable to run
there, or ``--fallback`` prices it). The result is a ``costs.csv`` for ``--cost-table``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from hetsim.errors import HetsimError

#: StarPU's worker types in its files (starpu_worker_archtype).
DEVICE_TYPES = {0: "cpu", 1: "cuda", 2: "opencl", 3: "mic", 4: "scc", 5: "mpi_ms"}


@dataclass
class HistoryEntry:
    footprint: int
    size: int
    flops: float
    mean_us: float
    dev_us: float
    nsample: int


@dataclass
class ArchModel:
    """One implementation on one device combination: history and regressions (times in µs)."""

    device: str
    impl: int
    entries: list[HistoryEntry] = field(default_factory=list)
    alpha: float = math.nan
    beta: float = math.nan
    minx: int = 0
    maxx: int = 0
    a: float = math.nan
    b: float = math.nan
    c: float = math.nan

    def time_us(self, size: int) -> tuple[float, str] | None:
        """The time of a task of ``size`` bytes and how it was found, or None."""
        same = [e for e in self.entries if e.size == size and e.nsample > 0]
        if same:
            n = sum(e.nsample for e in same)
            return sum(e.mean_us * e.nsample for e in same) / n, "history"
        if not any(math.isnan(v) for v in (self.a, self.b, self.c)):
            return self.a * size ** self.b + self.c, "nl-regression"
        if not any(math.isnan(v) for v in (self.alpha, self.beta)) and size > 0:
            return self.alpha * size ** self.beta, "regression"
        return None


class _Lines:
    """The file's data lines (comments and blank lines dropped, as StarPU's _starpu_drop_comments),
    each with its line number, read one at a time with one-line errors naming file and line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            raise HetsimError(f"{path}: not a StarPU performance model (not text)") from None
        except OSError as e:
            raise HetsimError(f"{path}: cannot read ({e.strerror or e})") from None
        self.lines = [(i + 1, ln.strip()) for i, ln in enumerate(text.splitlines())
                      if ln.strip() and not ln.lstrip().startswith("#")]
        self.pos = 0

    def fields(self, what: str, n: int | tuple[int, ...]) -> tuple[int, list[str]]:
        if self.pos >= len(self.lines):
            raise HetsimError(f"{self.path}: ends before {what}")
        lineno, text = self.lines[self.pos]
        self.pos += 1
        parts = text.split()
        counts = (n,) if isinstance(n, int) else n
        if len(parts) not in counts:
            raise HetsimError(f"{self.path}: line {lineno}: {what}: expected {' or '.join(map(str, counts))} "
                              f"fields, got {text!r}")
        return lineno, parts

    def integer(self, what: str, lineno: int, text: str, base: int = 10, low: int = 0) -> int:
        try:
            v = int(text, base)
        except ValueError:
            raise HetsimError(f"{self.path}: line {lineno}: {what} {text!r} is not an integer") from None
        if v < low:
            raise HetsimError(f"{self.path}: line {lineno}: {what} {v} is below {low}")
        return v

    def number(self, what: str, lineno: int, text: str, nan: bool = True) -> float:
        try:
            v = float(text)
        except ValueError:
            raise HetsimError(f"{self.path}: line {lineno}: {what} {text!r} is not a number") from None
        if math.isinf(v) or (math.isnan(v) and not nan) or (not math.isnan(v) and v < 0 and what in _NON_NEGATIVE):
            raise HetsimError(f"{self.path}: line {lineno}: {what} {text!r}; allowed: a finite number >= 0")
        return v

    def one_int(self, what: str, low: int = 0) -> int:
        lineno, (text,) = self.fields(what, 1)
        return self.integer(what, lineno, text, low=low)


_NON_NEGATIVE = ("mean", "deviation", "flops", "sum", "sum2")


def read_starpu_perfmodel(path: str | os.PathLike) -> list[ArchModel]:
    """Every (device combination, implementation) model of a StarPU performance model file."""
    f = _Lines(Path(path))
    f.one_int("the performance model version")
    ncombs = f.one_int("the number of combinations")
    out: list[ArchModel] = []
    for _ in range(ncombs):
        devices = []
        for _d in range(f.one_int("the number of devices of a combination", low=1)):
            lineno, (t,) = f.fields("a device type", 1)
            kind = f.integer("device type", lineno, t)
            if kind not in DEVICE_TYPES:
                raise HetsimError(f"{f.path}: line {lineno}: device type {kind}; allowed: "
                                  + ", ".join(f"{k} ({v})" for k, v in DEVICE_TYPES.items()))
            devid = f.one_int("a device id")
            cores = f.one_int("a number of cores")
            devices.append(f"{DEVICE_TYPES[kind]}{devid}" + (f"x{cores}" if cores > 1 else ""))
        device = "+".join(devices)
        for impl in range(f.one_int("the number of implementations")):
            nentries = f.one_int("the number of entries")
            model = ArchModel(device, impl)
            lineno, reg = f.fields("the linear regression (sumlnx sumlnx2 sumlny sumlnxlny alpha beta n minx maxx)", 9)
            model.alpha = f.number("alpha", lineno, reg[4])
            model.beta = f.number("beta", lineno, reg[5])
            model.minx = f.integer("minx", lineno, reg[7])
            model.maxx = f.integer("maxx", lineno, reg[8])
            lineno, nl = f.fields("the non-linear regression (a b c)", 3)
            model.a, model.b, model.c = (f.number(k, lineno, v) for k, v in zip("abc", nl, strict=True))
            lineno, ml = f.fields("the multiple regression (ncoeff, coefficients)", tuple(range(1, 64)))
            ncoeff = f.integer("ncoeff", lineno, ml[0])
            if len(ml) != 1 + ncoeff:
                raise HetsimError(f"{f.path}: line {lineno}: {ncoeff} multiple-regression coefficients "
                                  f"announced, {len(ml) - 1} given")
            for _e in range(nentries):
                lineno, e = f.fields("a history entry (footprint size [flops] mean dev sum sum2 n)", (7, 8))
                flops = f.number("flops", lineno, e[2]) if len(e) == 8 else 0.0
                rest = e[3:] if len(e) == 8 else e[2:]
                model.entries.append(HistoryEntry(
                    footprint=f.integer("footprint", lineno, e[0], base=16), size=f.integer("size", lineno, e[1]),
                    flops=flops, mean_us=f.number("mean", lineno, rest[0], nan=False),
                    dev_us=f.number("deviation", lineno, rest[1]), nsample=f.integer("n", lineno, rest[4])))
            out.append(model)
    if f.pos < len(f.lines):
        lineno, text = f.lines[f.pos]
        raise HetsimError(f"{f.path}: line {lineno}: {text!r} after the last combination")
    return out


def op_task_bytes(op) -> int:
    """StarPU's default task size for an op: the bytes of its buffers (input, weights, output)."""
    return int(op.input_bytes + op.weight_bytes + op.output_bytes)


def import_starpu_perfmodels(workload, models: Mapping[str, str | os.PathLike], devices: Mapping[str, str],
                             impl: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """The measured cost table (``op, ep, time_s, source, symbol, size_bytes``) of ``workload``
    from StarPU performance model files ``models`` (op kind -> file) on ``devices`` (StarPU device
    key -> EP name; a combination not listed is left out), with notes for what was left out."""
    rows, notes = [], []
    seen_devices: set[str] = set()
    for kind, path in models.items():
        ops = [op for op in workload.ops if op.kind.value == kind]
        if not ops:
            notes.append(f"{path}: no op of kind {kind!r} in {workload.name}; nothing read from it")
        for model in read_starpu_perfmodel(path):
            seen_devices.add(model.device)
            if model.impl != impl or model.device not in devices:
                continue
            missing = 0
            for op in ops:
                size = op_task_bytes(op)
                found = model.time_us(size)
                if found is None:
                    missing += 1
                    continue
                t_us, source = found
                rows.append({"op": op.name, "ep": devices[model.device], "time_s": t_us * 1e-6,
                             "source": source, "symbol": Path(path).name, "size_bytes": size})
            if missing:
                notes.append(f"{path}: {missing} {kind} op(s) have no entry of their size and no valid "
                             f"regression on {model.device}: not measured on {devices[model.device]}")
    unknown = sorted(set(devices) - seen_devices)
    if unknown:
        raise HetsimError(f"--device {unknown[0]}: no such device combination in the models; they have "
                          f"{', '.join(sorted(seen_devices)) or 'none'}")
    table = pd.DataFrame(rows, columns=["op", "ep", "time_s", "source", "symbol", "size_bytes"])
    return table, notes
