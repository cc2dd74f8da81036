"""Loading counted before it starts, the way a run's work is (:mod:`hetsim.sim.budget`).

Every loader counts what it is about to build, once its file is read and before the work that
grows with it: the bytes of a YAML document its fallback reader must parse, the ops of a workload,
the entries of a platform, the nodes of an ONNX graph, the bytes of an ONNX Runtime profile. From
the count it estimates the CPU time (at the rate measured here, :data:`RATES`) and the memory,
and refuses past :data:`MAX_LOAD_S` or :data:`MAX_MEMORY_BYTES` unless forced,
with one line that gives the count and the estimate:

    >>> check_load("w.yaml", 3_000_000, "ops")
    Traceback (most recent call last):
    ...
    hetsim.errors.HetsimError: w.yaml: 3,000,000 ops would take ~5 min of CPU and ~17 GiB of memory to load (~10,000 ops/s here), past the limits of 1 min and 4 GiB; give a smaller input, or --force to load it anyway
    >>> with forced():
    ...     check_load("w.yaml", 3_000_000, "ops")   # the caller said so

The ``--force`` of the commands that have one (simulate, explore, sweep, workloads import, costs
import-ort) forces loading too: :func:`allow` sets it for the rest of the command (the CLI resets
it after each command), :func:`forced` for a block of Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import NamedTuple

from hetsim.errors import HetsimError

#: Loads estimated past this much CPU time are refused unless forced (a minute, as runs).
MAX_LOAD_S = 60.0
#: Work (loading, a run, a sweep's results) estimated to hold more memory than this is refused
#: unless forced.
MAX_MEMORY_BYTES = 4 << 30


class Rate(NamedTuple):
    """What loading one unit costs here: CPU seconds and peak bytes (measured with
    benchmarks/loading.py on this 2-core machine at a load average of ~4-6, rounded up: a load
    is refused a little early, never late)."""

    seconds: float
    bytes: float


#: Per unit of each count. ``yaml-bytes``: a YAML document the full Python reader parses (one with
#: anchors, aliases, tags or merge keys; plain documents take libyaml's path, ~15x faster, bounded by
#: the 64 MiB file limit); ``ops`` a workload's ops (validated and built: shapes, counts, layers);
#: ``entries`` a platform's list entries (memories, DVFS levels, clusters, links, ...); ``nodes`` an
#: ONNX graph's nodes (shape inference and import, the workload built); ``profile-bytes`` an ONNX
#: Runtime profile's JSON (parsed, its events read and split into runs).
RATES: dict[str, Rate] = {
    "yaml-bytes": Rate(10e-6, 320.0),
    "ops": Rate(100e-6, 6144.0),
    "entries": Rate(50e-6, 2048.0),
    "nodes": Rate(110e-6, 9216.0),
    "profile-bytes": Rate(0.25e-6, 24.0),
}

_FORCE: ContextVar[bool] = ContextVar("hetsim_load_force", default=False)


def allow(force: bool) -> None:
    """Loading past the limits is allowed (``--force``) for the rest of this context."""
    _FORCE.set(bool(force))


def reset() -> None:
    _FORCE.set(False)


@contextmanager
def forced(force: bool = True) -> Iterator[None]:
    """Within the block, loading past the limits is allowed (``force=True``) or not."""
    token = _FORCE.set(bool(force))
    try:
        yield
    finally:
        _FORCE.reset(token)


def estimate(count: float, unit: str) -> tuple[float, float]:
    """(CPU seconds, bytes) of loading ``count`` ``unit``."""
    rate = RATES[unit]
    return count * rate.seconds, count * rate.bytes


def check_load(source: str, count: float, unit: str) -> None:
    """Refuse, unless forced, loading ``count`` ``unit`` of ``source`` when its estimate passes
    :data:`MAX_LOAD_S` or the memory limit."""
    seconds, memory = estimate(count, unit)
    if (seconds <= MAX_LOAD_S and memory <= MAX_MEMORY_BYTES) or _FORCE.get():
        return
    what = unit.replace("-", " ")
    raise HetsimError(f"{source}: {count:,.0f} {what} would take ~{duration_text(seconds)} of CPU and "
                      f"~{_memory(memory)} of memory to load (~{1 / RATES[unit].seconds:,.0f} {what}/s "
                      f"here), past the limits of {duration_text(MAX_LOAD_S)} and {_memory(MAX_MEMORY_BYTES)}; "
                      "give a smaller input, or --force to load it anyway")


def duration_text(seconds: float) -> str:
    """A duration as people say it: '40 ms', '2.5 s', '12 s', '1.7 min', '2.5 h', '3 days' (the one
    formatter of hetsim's estimates and listings)."""
    if seconds < 1:
        ms = seconds * 1e3
        return f"{ms:.2g} ms" if ms < 10 else f"{ms:.0f} ms"
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 59.5:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.2g} min"
    if seconds < 2 * 86400:
        return f"{seconds / 3600:.2g} h"
    return f"{seconds / 86400:.0f} days"


def _memory(nbytes: float) -> str:
    gib = nbytes / 2 ** 30
    if gib >= 1:
        return f"{gib:.2g} GiB"
    return f"{nbytes / 2 ** 20:.0f} MiB" if nbytes >= 2 ** 20 else f"{nbytes / 1024:.0f} KiB"
