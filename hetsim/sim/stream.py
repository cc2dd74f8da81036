"""STREAM-like memory sweeps on the DES bandwidth servers, and a memory-side cache model.

A sweep is what STREAM Triad does once per iteration: every thread moves its share of the data
through one or more memories, and an OpenMP barrier ends the sweep. Each thread is a flow on its
memory's :class:`~hetsim.sim.BandwidthResource` (max-min fair sharing), capped at the per-thread
bandwidth of the platform's core type (``bandwidth_GBps_per_core``, one schema core = one hardware
thread). Shisha (Paper II, §2 and Figs. 1-2) uses it to show that where data lives and how many
threads sweep each memory decide the time on Intel's Knights Landing (``platforms/knl.yaml``).

    knl = load_platform("knl")
    split_time_s(knl, {"mcdram": 15, "ddr": 4}, {"mcdram": 64, "ddr": 16})   # Fig. 2, [15-4]

The cache model (:func:`cache_mode_time_s`) puts one memory in front of another as a direct-mapped
memory-side cache (KNL's "cache mode" [ext]); the schema has no cache notion, so the cache is named
by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import simpy

from hetsim.errors import HetsimError
from hetsim.platform import Platform
from hetsim.sim.bandwidth import BandwidthResource

#: Bytes in the papers' "GB" of data: KNL's 16 GB of MCDRAM is the platform's 16 GiB.
GIB = 2**30
#: [ext] STREAM's default NTIMES: sweeps per run.
STREAM_ITERATIONS = 10
#: Triad ``a = b + s*c`` writes one array of three: the share of evicted cache lines that are dirty.
TRIAD_DIRTY_SHARE = 1 / 3


def stream_time_s(platform: Platform, threads: Sequence[Mapping[str, float]],
                  iterations: int = STREAM_ITERATIONS) -> float:
    """Seconds for ``iterations`` sweeps in which thread i moves ``threads[i][memory]`` bytes through
    each named memory. A thread's memories are concurrent flows, its per-thread cap split over them
    in proportion to their bytes; a barrier ends every sweep."""
    env = simpy.Environment()
    servers = {m.name: BandwidthResource.for_memory(env, m) for m in platform.memories}
    for flows in threads:
        for mem in flows:
            if mem not in servers:
                raise HetsimError(f"platform {platform.name}: no memory {mem!r} for a stream thread; "
                                  f"memories: {', '.join(servers)}")
    if iterations < 1:
        raise HetsimError(f"stream iterations: {iterations!r}; allowed: an integer >= 1")
    core_types = {platform.cluster(c.name).core_type for c in platform.clusters}
    if len(core_types) != 1:
        raise HetsimError(f"platform {platform.name}: a stream needs one core type (its threads), "
                          f"found {', '.join(sorted(core_types))}")
    per_thread = platform.core_type(core_types.pop()).bandwidth_GBps_per_core
    cap = per_thread * 1e9 if per_thread else math.inf

    def sweeps():
        for _ in range(iterations):
            events = []
            for flows in threads:
                total = sum(flows.values())
                for mem, nbytes in flows.items():
                    events.append(servers[mem].transfer(nbytes, cap * nbytes / total))
            yield env.all_of(events)

    env.process(sweeps())
    env.run()
    return float(env.now)


def _count(n: int, what: str) -> int:
    if not isinstance(n, int) or n < 1:
        raise HetsimError(f"stream threads on {what}: {n!r}; allowed: an integer >= 1")
    return n


def split_time_s(platform: Platform, data_GiB: Mapping[str, float], threads: Mapping[str, int],
                 iterations: int = STREAM_ITERATIONS) -> float:
    """Data placed across memories (``{memory: GiB}``), each memory swept by its own threads
    (``{memory: count}``), all concurrently: Shisha's Fig. 2 ("[15-4]" = 15 GB in MCDRAM, 4 in DDR)."""
    if set(data_GiB) != set(threads):
        raise HetsimError(f"stream split: data on {sorted(data_GiB)} but threads on {sorted(threads)}; "
                          "give every memory both")
    flows: list[dict[str, float]] = []
    for mem, gib in data_GiB.items():
        n = _count(threads[mem], mem)
        flows += [{mem: gib * GIB / n}] * n
    return stream_time_s(platform, flows, iterations)


def one_memory_time_s(platform: Platform, memory: str, data_GiB: float, threads: int,
                      iterations: int = STREAM_ITERATIONS) -> float:
    """All data in one memory, ``threads`` threads (Shisha's Fig. 1, "DDR only")."""
    return split_time_s(platform, {memory: data_GiB}, {memory: threads}, iterations)


def direct_mapped_hit_fraction(footprint_GiB: float, capacity_GiB: float) -> float:
    """Steady-state hit fraction of a sweep over ``footprint_GiB`` through a direct-mapped cache of
    ``capacity_GiB`` with pages at random physical addresses: a line hits when no other line of the
    footprint maps to its set, probability exp(-footprint / capacity)."""
    if capacity_GiB <= 0 or footprint_GiB < 0:
        raise HetsimError(f"cache model: footprint {footprint_GiB!r} GiB, capacity {capacity_GiB!r} GiB; "
                          "allowed: footprint >= 0, capacity > 0")
    return math.exp(-footprint_GiB / capacity_GiB)


def cache_mode_time_s(platform: Platform, cache: str, backing: str, data_GiB: float, threads: int,
                      dirty_share: float = TRIAD_DIRTY_SHARE, iterations: int = STREAM_ITERATIONS) -> float:
    """``cache`` (its ``capacity_GiB``) as a direct-mapped memory-side cache in front of ``backing``,
    ``threads`` threads (Shisha's Fig. 1, "cache mode"). Every byte goes through the cache (hits,
    and the fills of misses); a miss also reads its line from the backing memory and evicts a line,
    written back when dirty: the backing memory moves miss x (1 + dirty_share) of the data. A
    thread's two flows run concurrently."""
    names = [m.name for m in platform.memories]
    for mem in (cache, backing):
        if mem not in names:
            raise HetsimError(f"platform {platform.name}: no memory {mem!r} for cache mode; "
                              f"memories: {', '.join(names)}")
    capacity = platform.memory(cache).capacity_GiB
    if capacity is None:
        raise HetsimError(f"platform {platform.name}: memory {cache!r} has no capacity_GiB; "
                          "a cache needs one")
    miss = 1.0 - direct_mapped_hit_fraction(data_GiB, capacity)
    per = data_GiB * GIB / _count(threads, cache)
    return stream_time_s(platform, [{cache: per, backing: per * miss * (1 + dirty_share)}] * threads,
                         iterations)
