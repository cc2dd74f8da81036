"""Running a sweep: cells counted, sent in batches to a local process pool or a Dask cluster, their
rows appended to a journal as they finish, the tidy table written at the end.

    result = run_sweep(load_spec("whatif-resnet50-hikey970"), out="results/whatif")
    result.table          # one row per cell: cell, the axes' values, status, error, metrics

Files in ``out``:

* ``cells.jsonl``, the journal: one JSON line per finished cell (its id, index, axis values,
  status, one-line error, metrics, seconds), appended with one ``write`` per returned batch, so a
  killed sweep loses at most the cells in flight; a torn last line is dropped on resume;
* ``results.csv``: the table, one row per cell of the SPEC in cell order (written atomically at the
  end, and when interrupted); identical bytes whichever backend ran the cells;
* ``spec.yaml``: the SPEC as run; ``plots/<metric>.png``: the default what-if plots.

``resume=True`` skips the cells whose id the journal holds (ids hash what a cell runs, so adding
a value to an axis and resuming runs only the new cells).

Execution: ``workers=1`` runs in this process; otherwise a :class:`ProcessPoolExecutor` of
``workers`` processes (default: every core), or, with ``scheduler``, a Dask distributed cluster
(:mod:`distributed`; the workers need hetsim installed): its address (``"tcp://host:port"``), a
``distributed.Client`` (left open) or a cluster object such as ``LocalCluster``. Cells travel in
batches sized to take ~0.2 s each (at most 50 cells): a task costs far more than a millisecond cell;
a Dask task is named after its cells (:func:`batch_key`).
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
from rich.markup import escape

from hetsim.errors import HetsimError
from hetsim.sweep.cells import init_worker, run_batch
from hetsim.sweep.spec import Cell, SweepSpec, check_count, describe, dump_spec, iter_cells
from hetsim.validation import atomic_write, parse_json

JOURNAL = "cells.jsonl"
RESULTS = "results.csv"
SPEC_COPY = "spec.yaml"
#: This machine's times per cell (never in results.csv): the explorer cells' wall_s and the
#: journal's seconds.
WALLCLOCK_FILE = "wallclock.csv"
WALLCLOCK = ("wall_s",)
#: Batches aim at this many seconds of work each, and hold at most MAX_BATCH cells.
TARGET_BATCH_S = 0.2
MAX_BATCH = 50
#: Bytes a finished cell holds until results.csv is written: its journal record in memory and its
#: row of the table (measured ~1.2 KB for a mapping cell with a set axis and a seed; rounded up).
BYTES_PER_CELL = 2048
#: Sweeps of up to this many cells keep them in memory once made; larger ones stream them.
KEEP_CELLS = 50_000
#: The lock file of a running sweep (in its folder).
LOCK = ".lock"
#: How long to try to reach a Dask scheduler.
CONNECT_TIMEOUT = "20s"


@dataclass
class SweepResult:
    spec: SweepSpec
    cells: Sequence[Cell]        # made on demand (CellList): a large sweep's cells are not held
    table: pd.DataFrame
    ran: int = 0                 # cells run now
    failed: int = 0              # of all the SPEC's cells, those whose status is error
    skipped: int = 0             # cells found done in the journal (resume)
    seconds: float = 0.0
    out: Path | None = None
    files: list[Path] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)   # distinct error lines and their counts
    busy_s: float = 0.0          # seconds the workers spent in the cells run now (their sum)

    @property
    def cells_per_s(self) -> float:
        return self.ran / self.seconds if self.seconds > 0 else float("nan")


# -- the journal -------------------------------------------------------------------------------------
def read_journal(path: Path, repair: bool = False) -> dict[str, dict]:
    """Finished cells by id. A last line without its newline (a write cut by a kill) is ignored,
    and with ``repair`` cut off the file so appends start on a fresh line."""
    if not path.is_file():
        return {}
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data) and repair:
        with open(path, "r+b") as f:
            f.truncate(end)
    records: dict[str, dict] = {}
    for n, line in enumerate(data[:end].splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = parse_json(line.decode(), str(path))   # NaN, infinities, duplicate keys refused
            cell_id = rec["id"]
            if not isinstance(cell_id, str):
                raise TypeError(cell_id)
        except (ValueError, KeyError, TypeError, HetsimError):
            raise HetsimError(f"{path}: line {n} is not a cell record; the journal is damaged "
                              f"(move it away to start the sweep afresh)") from None
        records.setdefault(cell_id, rec)   # a cell is recorded once; keep the first if ever twice
    return records


class _Journal:
    """Appends records with one ``os.write`` per batch (O_APPEND)."""

    def __init__(self, path: Path):
        self.path = path
        # 0o666: the umask gives the permissions, as for every file hetsim writes
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)

    def append(self, records: list[dict]) -> None:
        data = "".join(json.dumps(r, allow_nan=False) + "\n" for r in records).encode()
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def close(self) -> None:
        os.fsync(self.fd)
        os.close(self.fd)


def build_table(cells: Iterable[Cell], records: dict[str, dict]) -> pd.DataFrame:
    """One row per finished cell of ``cells``, in cell order: cell, the axes, status, error, metrics."""
    rows = []
    for c in cells:
        r = records.get(c.id)
        if r is None:
            continue
        rows.append({"cell": c.index, **c.axes, "status": r["status"], "error": r["error"],
                     **r["metrics"]})
    return pd.DataFrame(rows)


def read_results(out: str | os.PathLike) -> pd.DataFrame:
    """The table of a sweep directory: ``results.csv``, or (for a sweep still running or killed)
    the journal's rows in cell order."""
    out = Path(out)
    csv, journal = out / RESULTS, out / JOURNAL
    if csv.is_file() and (not journal.is_file() or csv.stat().st_mtime >= journal.stat().st_mtime):
        return pd.read_csv(csv)
    if not journal.is_file():
        raise HetsimError(f"{out}: no sweep results here ({RESULTS} or {JOURNAL})")
    records = sorted(read_journal(journal).values(), key=lambda r: r["cell"])
    return pd.DataFrame([{"cell": r["cell"], **r["axes"], "status": r["status"], "error": r["error"],
                          **r["metrics"]} for r in records])


# -- backends ----------------------------------------------------------------------------------------
class _InProcess:
    slots = 1

    def submit(self, batch):
        return _Done(run_batch(batch))

    def wait(self, futures):
        return list(futures)

    def close(self, cancel: bool = False) -> None:
        pass


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value


class _LocalPool:
    def __init__(self, workers: int):
        from concurrent.futures import ProcessPoolExecutor

        self.pool = ProcessPoolExecutor(max_workers=workers, initializer=_init_pool_worker,
                                        initargs=(os.getpid(),))
        self.slots = 2 * workers
        # Start every worker now, before a progress bar starts its thread (workers fork this process).
        for f in [self.pool.submit(run_batch, []) for _ in range(workers)]:
            f.result()

    def submit(self, batch):
        return self.pool.submit(run_batch, batch)

    def wait(self, futures):
        from concurrent.futures import FIRST_COMPLETED, wait

        return list(wait(futures, return_when=FIRST_COMPLETED).done)

    def close(self, cancel: bool = False) -> None:
        self.pool.shutdown(wait=not cancel, cancel_futures=cancel)


def _init_pool_worker(parent: int) -> None:
    """A local pool worker dies with the sweep: a ``kill -9`` of the sweep alone would otherwise
    leave its workers alive forever, holding its stdout and stderr open (a caller waiting for
    their end hangs). Linux kills the worker when its parent dies (``PR_SET_PDEATHSIG``); a
    watcher thread does the same elsewhere, within a second."""
    import multiprocessing
    import signal
    import sys
    import threading

    forked = os.getppid() == parent   # else a fork server started it (or the sweep is gone)
    if forked and sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)   # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - no libc prctl: the thread below
            pass
        if os.getppid() != parent:   # the sweep died before the line above took effect
            os._exit(1)

    def watch() -> None:
        if forked:
            while os.getppid() == parent:
                time.sleep(1.0)
        else:
            starter = multiprocessing.parent_process()
            if starter is None:
                return
            starter.join()   # its sentinel closes when it dies
        os._exit(1)

    threading.Thread(target=watch, name="hetsim-parent-watch", daemon=True).start()
    init_worker()


class _Dask:
    def __new__(cls, scheduler: Any = None):
        # A distributed.Client or a cluster object (LocalCluster, ...) instead of an address.
        if cls is _Dask and scheduler is not None and not isinstance(scheduler, str):
            return super().__new__(_DaskOf)
        return super().__new__(cls)

    def __init__(self, address: str):
        try:
            from distributed import Client
        except ImportError:  # pragma: no cover - a dependency
            raise HetsimError("--scheduler needs the 'distributed' package (pip install distributed)") from None
        # distributed logs every failed reconnection with its traceback: while the sweep runs, a
        # lost cluster is the one line below, not pages of stderr.
        self._levels = {name: logging.getLogger(name).level for name in
                        ["distributed", *logging.root.manager.loggerDict] if name.startswith("distributed")}
        for name in self._levels:
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self.address = address
        try:
            self.client = Client(address, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as e:
            self._restore()
            raise HetsimError(f"--scheduler {address}: cannot reach a Dask scheduler there "
                              f"({' '.join(str(e).split()) or type(e).__name__}); start one with "
                              f"'dask scheduler' and workers with 'dask worker {address}'") from None
        try:
            threads = sum(self.client.nthreads().values())
            if threads == 0:
                self.client.wait_for_workers(1, timeout=60)
                threads = sum(self.client.nthreads().values())
        except (OSError, TimeoutError) as e:
            self.close()
            raise HetsimError(f"--scheduler {address}: no Dask worker joined within 60 s "
                              f"({type(e).__name__}); start workers with 'dask worker {address}'") from None
        self.slots = 2 * max(1, threads)

    def _restore(self) -> None:
        for name, level in self._levels.items():
            logging.getLogger(name).setLevel(level)

    def submit(self, batch):
        return self.client.submit(run_batch, batch, pure=False, key=batch_key(batch))

    def wait(self, futures):
        from distributed import wait

        return list(wait(futures, return_when="FIRST_COMPLETED").done)

    def close(self, cancel: bool = False) -> None:
        try:
            self.client.close(timeout=5)
        except Exception:  # noqa: BLE001 - a lost scheduler: nothing left to close
            pass
        finally:
            self._restore()


def _lost_backend(e: BaseException) -> HetsimError | None:
    """The one line for a backend lost mid-sweep (a Dask scheduler or its connection gone: its
    futures cancelled, its streams closed), or None for any other exception."""
    from concurrent.futures import CancelledError

    if isinstance(e, CancelledError) or type(e).__module__.split(".")[0] == "distributed":
        return HetsimError(f"lost the Dask cluster mid-sweep ({type(e).__name__}: "
                           f"{' '.join(str(e).split())[:160] or 'cancelled'}); the cells finished so far are "
                           "saved: rerun with --resume when the cluster is back")
    return None


class _DaskOf(_Dask):
    """The Dask backend on a ``distributed.Client`` the caller holds (left open after the sweep), or
    on a cluster object such as a ``LocalCluster`` (a client of its own, closed after the sweep;
    the cluster stays the caller's)."""

    def __init__(self, scheduler: Any):
        from distributed import Client

        self._levels: dict[str, int] = {}
        if isinstance(scheduler, Client):
            self.client, self._own = scheduler, False
        elif isinstance(getattr(scheduler, "scheduler_address", None), str):
            self.client, self._own = Client(scheduler, timeout=CONNECT_TIMEOUT), True
        else:
            raise HetsimError(f"scheduler={scheduler!r}: give a Dask scheduler's address (tcp://host:8786), a "
                              "distributed.Client or a cluster (distributed.LocalCluster)")
        threads = sum(self.client.nthreads().values())
        if threads == 0:
            self.client.wait_for_workers(1, timeout=60)
            threads = sum(self.client.nthreads().values())
        self.slots = 2 * max(1, threads)

    def close(self, cancel: bool = False) -> None:
        if self._own:
            super().close(cancel)


def batch_key(batch: list[tuple[str, dict]]) -> tuple:
    """A Dask task's key named after its cells: ``("<algorithm or mapping> cells", "<platform>
    <workload> seed <s>", first cell id, number of cells)``; the dashboard groups tasks by the
    first part (``ES cells``, ``mapping cells``)."""
    cell_id, config = batch[0]
    what = config.get("label") or config.get("algorithm") or config.get("kind", "sweep")
    where = f"{config.get('platform')} {config.get('workload')} seed {config.get('seed')}"
    # dask.utils.key_split stops at a '-' before a word that is not letters: keep the name whole
    return (f"{what} cells".replace("-", "_"), where, cell_id, len(batch))


# -- running -----------------------------------------------------------------------------------------
def run_sweep(spec: SweepSpec, out: str | os.PathLike | None = None, *, workers: int | None = None,
              scheduler: Any = None, resume: bool = False, force: bool = False,
              batch: int | None = None, progress: bool = False, plots: bool = True,
              console=None) -> SweepResult:
    """Run every cell of ``spec`` (see the module docstring); ``out=None`` keeps everything in memory.

    Counted before anything starts: the cells (past ``max_cells``) and the memory their records
    will hold (past :data:`hetsim.sim.budget.MAX_MEMORY_BYTES`), each refused unless ``force``.
    The cells are made as they are sent (never all at once). A sweep with an ``out`` folder holds
    a lock on it while it runs: a second sweep there (fresh or ``--resume``) is refused."""
    n = check_count(spec, force)
    check_memory(spec, n, force)
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        raise HetsimError(f"--workers {workers!r}: must be at least 1")
    if batch is not None and (isinstance(batch, bool) or batch < 1):
        raise HetsimError(f"--batch {batch!r}: must be at least 1")
    if out is None:
        return _run_sweep(spec, n, None, workers, scheduler, resume, batch, progress, plots, console)
    out_dir = Path(out)
    with _SweepLock(out_dir):
        return _run_sweep(spec, n, out_dir, workers, scheduler, resume, batch, progress, plots, console)


def check_memory(spec: SweepSpec, n: int, force: bool = False) -> None:
    """Refuse, unless ``force``, a sweep whose finished cells would hold more memory than
    :data:`~hetsim.sim.budget.MAX_MEMORY_BYTES` (each keeps its record until the table is written)."""
    from hetsim.sim.budget import MAX_MEMORY_BYTES

    need = n * BYTES_PER_CELL
    if need > MAX_MEMORY_BYTES and not force:
        raise HetsimError(f"sweep of {n:,} cells ({describe(spec)}): its results would hold ~"
                          f"{need / 2**30:,.1f} GiB of memory (~{BYTES_PER_CELL:,} bytes a cell), past the "
                          f"limit of {MAX_MEMORY_BYTES >> 30} GiB; narrow the axes, or --force to run it anyway")


class CellList(Sequence[Cell]):
    """The cells of a SPEC as a sequence made on demand: its length, iteration in cell order and
    indexing, without holding them (:func:`hetsim.sweep.spec.iter_cells`)."""

    def __init__(self, spec: SweepSpec, n: int):
        self.spec, self.n = spec, n
        # Up to the default max_cells they are made once and kept (as before): a pass over them is
        # then free; past it, every pass makes them again.
        self._kept: list[Cell] | None = list(iter_cells(spec)) if n <= KEEP_CELLS else None

    def __len__(self) -> int:
        return self.n

    def __iter__(self) -> Iterator[Cell]:
        return iter(self._kept) if self._kept is not None else iter_cells(self.spec)

    def __getitem__(self, i):
        if self._kept is not None:
            return self._kept[i]
        if isinstance(i, slice):
            return list(itertools.islice(iter_cells(self.spec), *i.indices(self.n)))
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(i)
        return next(itertools.islice(iter_cells(self.spec), i, None))


class _SweepLock:
    """An exclusive lock on a sweep's folder (``flock`` on ``OUT/.lock``, released when the sweep
    ends or its process dies): two sweeps started together on one ``--out``, or a ``--resume``
    while the first still runs, would both run every cell."""

    def __init__(self, out_dir: Path):
        self.out_dir = out_dir
        self.fd: int | None = None

    def __enter__(self) -> _SweepLock:
        from hetsim.validation import check_output_path

        check_output_path(self.out_dir / LOCK, "--out")   # not a FIFO or a device
        try:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            self.fd = os.open(self.out_dir / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
        except OSError as e:
            raise HetsimError(f"--out {self.out_dir}: cannot make the sweep's folder there "
                              f"({e.strerror or e})") from None
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return self
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.pread(self.fd, 32, 0).decode(errors="replace").strip()
            os.close(self.fd)
            self.fd = None
            raise HetsimError(f"--out {self.out_dir}: another sweep is running there"
                              + (f" (process {holder})" if holder.isdigit() else "")
                              + "; wait for it to finish (then --resume), or choose another --out") from None
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, str(os.getpid()).encode(), 0)
        return self

    def __exit__(self, *exc) -> None:
        if self.fd is not None:
            os.close(self.fd)   # releases the lock
            self.fd = None


def _run_sweep(spec: SweepSpec, n: int, out_dir: Path | None, workers: int | None, scheduler: str | None,
               resume: bool, batch: int | None, progress: bool, plots: bool, console) -> SweepResult:
    t_start = time.perf_counter()
    cells = CellList(spec, n)
    records = _open_out(spec, out_dir, resume) if out_dir is not None else {}
    # Cells done before (resume): counted in one pass over the cells, none of them kept.
    skipped = sum(1 for c in cells if c.id in records) if records else 0
    todo = (c for c in cells if c.id not in records)
    label = spec.name or Path(spec.source).stem
    if console is not None and progress:
        console.print(f"sweep {escape(label)}: {n:,} cell{'s' if n != 1 else ''} ({escape(describe(spec))})"
                      + (f"; {skipped:,} done before, {n - skipped:,} to run" if skipped else ""),
                      soft_wrap=True)
    busy_s = 0.0
    if n - skipped:
        busy_s = _run_cells(todo, n - skipped, cells, records, out_dir, workers, scheduler, batch,
                            (progress, console, escape(label)))
    table = build_table(cells, records)
    result = SweepResult(spec, cells, table, ran=n - skipped, skipped=skipped,
                         seconds=time.perf_counter() - t_start, out=out_dir, busy_s=busy_s)
    if not table.empty:
        bad = table[table["status"] != "ok"]
        result.failed = len(bad)
        result.errors = {str(k): int(v) for k, v in bad["error"].value_counts().items()}
    if out_dir is not None:
        _write_outputs(result, out_dir, records, plots)
    return result


def _open_out(spec: SweepSpec, out_dir: Path, resume: bool) -> dict[str, dict]:
    """The output directory made, the spec copied in, and the records of the cells a previous run
    journaled (a sweep there without --resume is refused)."""
    path = out_dir / JOURNAL
    from hetsim.validation import check_output_path

    # appended to (and the lock written): a FIFO there would block the sweep, a device swallow it
    check_output_path(path, "--out")
    if path.exists() and not resume:
        raise HetsimError(f"{out_dir} already holds a sweep ({JOURNAL}): pass --resume to finish it "
                          f"(cells done are skipped), or choose another --out")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise HetsimError(f"--out {out_dir}: cannot make the sweep's folder there ({e.strerror or e})") from None
    records = read_journal(path, repair=True)
    with atomic_write(out_dir / SPEC_COPY) as f:
        f.write(dump_spec(spec))
    return records


def _run_cells(todo: Iterator[Cell], n_todo: int, cells: Sequence[Cell], records: dict[str, dict],
               out_dir: Path | None, workers: int | None, scheduler: Any, batch: int | None,
               bar_args: tuple) -> float:
    """Run the cells to do on the backend (Dask, in process, or the local pool), each result in
    ``records`` and journaled as it lands; interrupted, the table of what is done is still written.
    ``bar_args``: the progress bar's (enabled, console, label). Returns the cells' busy seconds."""
    failed_now = 0
    busy_s = 0.0
    journal = None
    backend: _Dask | _InProcess | _LocalPool | None = (_Dask(scheduler) if scheduler else
               _InProcess() if (workers or os.cpu_count() or 1) == 1 else
               _LocalPool(min(workers or os.cpu_count() or 1, n_todo)))
    if out_dir is not None:
        journal = _Journal(out_dir / JOURNAL)
    bar = _Progress(n_todo, *bar_args)
    index: dict[str, tuple[Cell, int]] = {}   # the cells sent and not yet back (and how many: a
    # SPEC may list one cell twice, e.g. a mapping twice in its axis)

    def sent(cell: Cell) -> tuple[str, dict]:
        index[cell.id] = (cell, index[cell.id][1] + 1 if cell.id in index else 1)
        return cell.id, cell.config

    def finished(results: list[tuple]) -> None:
        nonlocal failed_now, busy_s
        recs = []
        for cell_id, status, error, metrics, seconds in results:
            busy_s += seconds
            c, k = index.pop(cell_id)
            if k > 1:
                index[cell_id] = (c, k - 1)
            rec = {"id": cell_id, "cell": c.index, "axes": c.axes, "status": status,
                   "error": error, "metrics": metrics, "seconds": round(seconds, 6)}
            records[cell_id] = rec
            recs.append(rec)
            failed_now += status != "ok"
        if journal is not None:
            journal.append(recs)
        bar.advance(len(results), failed_now)

    complete = False
    try:
        assert backend is not None
        _drive(backend, map(sent, todo), batch, finished)
        complete = True
    except KeyboardInterrupt:
        if backend is not None:
            backend.close(cancel=True)
        backend = None
        raise
    finally:
        bar.stop()
        if journal is not None:
            journal.close()
        if backend is not None:
            backend.close()
        if out_dir is not None and not complete:
            _write_table(out_dir, cells, records)   # what is done, readable while interrupted
    return busy_s


def _write_outputs(result: SweepResult, out_dir: Path, records: dict[str, dict], plots: bool) -> None:
    """results.csv, the default plots and the SPEC's ``report`` (a plugin's, e.g. the tournament's);
    each file in ``result.files``."""
    result.files.append(_write_table(out_dir, result.cells, records))
    if plots:
        from hetsim.sweep.plot import default_plots

        # no plot of a wall-clock column: the plots are the same bytes on every run
        result.files.extend(default_plots(result.table.drop(columns=list(WALLCLOCK), errors="ignore"),
                                          result.spec, out_dir / "plots"))
    if result.spec.report is not None:
        from hetsim.plugins import resolve, sweep_reports

        result.files.extend(resolve(sweep_reports()[result.spec.report])(result, out_dir))


def _write_table(out_dir: Path, cells: Iterable[Cell], records: dict[str, dict]) -> Path:
    """results.csv, without the wall-clock column of explorer cells (``wall_s``: the same bytes
    whichever run or backend made it), and wallclock.csv: per cell, its ``wall_s`` and the seconds
    its worker spent on it."""
    table = build_table(cells, records)
    wall = [c for c in WALLCLOCK if c in table.columns]
    with atomic_write(out_dir / RESULTS) as f:
        table.drop(columns=wall).to_csv(f, index=False)
    if not table.empty:
        times = table[["cell", *wall]].assign(
            seconds=[records[c.id]["seconds"] for c in cells if c.id in records])
        with atomic_write(out_dir / WALLCLOCK_FILE) as f:
            times.to_csv(f, index=False)
    return out_dir / RESULTS


def _drive(backend, todo: Iterator[tuple[str, dict]], batch: int | None,
           finished: Callable[[list[tuple]], None]) -> None:
    """Keep ``backend.slots`` batches in flight; size them from the measured seconds per cell.
    The cells are taken from ``todo`` as batches are made (a look-ahead of one batch per slot
    sizes the last batches so that every slot gets work)."""
    pending: deque[tuple[str, dict]] = deque()
    inflight: dict[Any, int] = {}
    cell_s: float | None = None
    n_done = 0
    total_s = 0.0

    def refill(k: int) -> None:
        pending.extend(itertools.islice(todo, max(0, k - len(pending))))

    refill(backend.slots)
    while pending or inflight:
        while pending and len(inflight) < backend.slots:
            if batch is not None:
                size = batch
            elif cell_s is None:
                size = 1          # the first batches measure what a cell costs
            else:
                size = int(min(MAX_BATCH, max(1, TARGET_BATCH_S / max(cell_s, 1e-6))))
            refill(size * backend.slots)
            if batch is None and cell_s is not None:
                size = min(size, max(1, -(-len(pending) // backend.slots)))   # work for every slot
            chunk = [pending.popleft() for _ in range(min(size, len(pending)))]
            inflight[backend.submit(chunk)] = len(chunk)
            refill(1)
        try:
            done = backend.wait(list(inflight))
        except Exception as e:
            lost = _lost_backend(e)
            if lost is None:
                raise
            raise lost from None
        for fut in done:
            size = inflight.pop(fut)
            results = _result(fut)
            n_done += len(results)
            total_s += sum(r[4] for r in results)
            cell_s = total_s / n_done
            finished(results)


def _result(fut) -> list[tuple]:
    try:
        return fut.result()
    except KeyboardInterrupt:
        raise
    except Exception as e:
        from concurrent.futures.process import BrokenProcessPool

        lost = _lost_backend(e)
        if lost is not None:
            raise lost from None
        if isinstance(e, BrokenProcessPool):
            raise HetsimError("a worker process died (out of memory?) while running cells; the cells "
                              "finished so far are saved: rerun with --resume") from None
        raise HetsimError(f"a batch of cells failed on its worker ({type(e).__name__}: "
                          f"{' '.join(str(e).split())}); the cells finished so far are saved: rerun "
                          f"with --resume") from None


class _Progress:
    """A rich progress bar: cells done of those to run, failed, elapsed, ETA."""

    def __init__(self, total: int, enabled: bool, console, label: str):
        self.enabled = enabled
        self.failed = 0
        if not enabled:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("cells, [red]{task.fields[failed]} failed[/red]"),
                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                            console=console, transient=True,
                            disable=console is not None and not console.is_terminal)
        self.bar.start()
        self.task = self.bar.add_task(label, total=total, failed=0)

    def advance(self, n: int, failed: int) -> None:
        if self.enabled:
            self.bar.update(self.task, advance=n, failed=failed)

    def stop(self) -> None:
        if self.enabled:
            self.bar.stop()


def summarize_errors(errors: dict[str, int], limit: int = 5) -> Iterable[str]:
    """The most frequent error lines, with counts."""
    for line, count in sorted(errors.items(), key=lambda kv: -kv[1])[:limit]:
        yield f"{count:>6} x {line}"
