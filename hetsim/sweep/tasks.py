"""Independent tasks farmed out to the sweep's backends: a local process pool or a Dask cluster.

A sweep's cells are described by JSON configs; some studies instead have a handful of long,
independent runs of their own functions (a reproduction's NSGA-II searches, one per network,
chromosome and seed). :func:`map_tasks` runs ``fn(item)`` for every item on the same backends as
:func:`~hetsim.sweep.engine.run_sweep` and returns the results in the items' order, so the caller
sees exactly what a loop would have given it, whichever backend ran them:

    results = map_tasks(search, [(net, p, seed) for ...], workers=2)

``fn`` must be importable by name (a module-level function) and its items and results picklable.
With ``workers=1``, or a single item, everything runs in this process. Local workers are forked,
so what this process computed before the call (caches, tuned coefficients) is theirs for free;
each worker uses one BLAS thread (the pool is the parallelism). ``progress(done, total)`` is called
in this process as results come back.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from hetsim.errors import HetsimError


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def map_tasks(fn: Callable[[Any], Any], items: Sequence[Any], *, workers: int | None = None,
              scheduler: str | None = None, progress: Callable[[int, int], None] | None = None) -> list:
    """``[fn(item) for item in items]``, computed by ``workers`` local processes (default: every
    core) or by the Dask cluster at ``scheduler`` (module docstring). An exception in a task is
    raised here, after the tasks in flight are cancelled."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise HetsimError(f"workers={workers!r}: must be an integer >= 1")
    items = list(items)
    total = len(items)
    n_workers = workers or default_workers()
    if scheduler is None and (n_workers == 1 or total <= 1):
        out = []
        for k, item in enumerate(items):
            out.append(fn(item))
            if progress is not None:
                progress(k + 1, total)
        return out
    if scheduler is not None:
        return _dask(fn, items, scheduler, progress)
    return _local(fn, items, min(n_workers, total), progress)


def _local(fn, items: list, workers: int, progress) -> list:
    import multiprocessing
    from concurrent.futures import FIRST_EXCEPTION, ProcessPoolExecutor, wait

    from hetsim.sweep.cells import init_worker

    # fork: the workers start with this process's caches (spawn would recompute them)
    ctx = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    results: list = [None] * len(items)
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=init_worker) as pool:
        futures = {pool.submit(fn, item): k for k, item in enumerate(items)}
        pending = set(futures)
        done_count = 0
        while pending:
            done, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for f in done:
                if f.exception() is not None:
                    for p in pending:
                        p.cancel()
                    raise f.exception()  # type: ignore[misc]
                results[futures[f]] = f.result()
                done_count += 1
                if progress is not None:
                    progress(done_count, len(items))
    return results


def _dask(fn, items: list, address: str, progress) -> list:
    from hetsim.sweep.engine import _Dask

    backend = _Dask(address)
    try:
        from distributed import as_completed

        futures = [backend.client.submit(fn, item, pure=False) for item in items]
        index = {f.key: k for k, f in enumerate(futures)}
        results: list = [None] * len(items)
        for n, f in enumerate(as_completed(futures), start=1):
            results[index[f.key]] = f.result()
            if progress is not None:
                progress(n, len(items))
        return results
    finally:
        backend.close()
