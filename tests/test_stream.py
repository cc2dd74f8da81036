"""STREAM sweeps on the DES bandwidth servers and the memory-side cache model (hetsim/sim/stream.py)."""

from __future__ import annotations

import math

import pytest

from hetsim.errors import HetsimError
from hetsim.platform import load_platform
from hetsim.sim.stream import (
    GIB,
    STREAM_ITERATIONS,
    cache_mode_time_s,
    direct_mapped_hit_fraction,
    one_memory_time_s,
    split_time_s,
    stream_time_s,
)


@pytest.fixture(scope="module")
def knl():
    return load_platform("knl")


def _bandwidths(knl):
    cap = knl.core_type("knl-thread").bandwidth_GBps_per_core * 1e9
    return cap, {m.name: m.bandwidth_GBps * 1e9 for m in knl.memories}


def test_split_matches_the_closed_form(knl):
    """Each memory's threads finish at data / min(n x per-thread cap, memory bandwidth); the sweep ends
    with the slower memory (the barrier), ``iterations`` times."""
    cap, B = _bandwidths(knl)
    for n_m, n_d, gm, gd in [(16, 2, 15, 4), (64, 16, 15, 4), (128, 8, 15, 16), (32, 16, 15, 16)]:
        closed = max(gm * GIB / min(n_m * cap, B["mcdram"]), gd * GIB / min(n_d * cap, B["ddr"]))
        t = split_time_s(knl, {"mcdram": gm, "ddr": gd}, {"mcdram": n_m, "ddr": n_d})
        assert t == pytest.approx(STREAM_ITERATIONS * closed, rel=1e-9)
    assert one_memory_time_s(knl, "ddr", 19, 64) == pytest.approx(10 * 19 * GIB / B["ddr"], rel=1e-9)
    assert one_memory_time_s(knl, "ddr", 19, 64, iterations=3) == pytest.approx(3 * 19 * GIB / B["ddr"], rel=1e-9)


def test_time_ramps_with_threads_then_saturates(knl):
    cap, B = _bandwidths(knl)
    times = [one_memory_time_s(knl, "mcdram", 16, n) for n in (8, 16, 32, 64, 128, 256)]
    saturate = math.ceil(B["mcdram"] / cap)                   # 64 threads draw the whole MCDRAM
    assert times[0] > times[1] > times[2] > times[3]
    assert times[3] == pytest.approx(times[4]) == pytest.approx(times[5])
    assert saturate == 64


def test_a_thread_with_two_memories_splits_its_cap(knl):
    """One thread, equal bytes on both memories: each flow gets half the per-thread cap."""
    cap, _ = _bandwidths(knl)
    t = stream_time_s(knl, [{"mcdram": 1e9, "ddr": 1e9}], iterations=1)
    assert t == pytest.approx(1e9 / (cap / 2), rel=1e-9)


def test_direct_mapped_cache(knl):
    assert direct_mapped_hit_fraction(0, 16) == 1.0
    assert direct_mapped_hit_fraction(16, 16) == pytest.approx(math.exp(-1))
    assert direct_mapped_hit_fraction(31, 16) < direct_mapped_hit_fraction(19, 16) < 1
    # More data -> more misses -> slower per GB; all DDR traffic is miss x (1 + dirty share).
    assert cache_mode_time_s(knl, "mcdram", "ddr", 31, 64) / 31 > cache_mode_time_s(knl, "mcdram", "ddr", 19, 64) / 19
    _, B = _bandwidths(knl)
    miss = 1 - direct_mapped_hit_fraction(19, 16)
    no_dirty = cache_mode_time_s(knl, "mcdram", "ddr", 19, 256, dirty_share=0.0, iterations=1)
    # 256 threads saturate both memories: the slower of the two streams decides.
    assert no_dirty == pytest.approx(max(19 * GIB / B["mcdram"], miss * 19 * GIB / B["ddr"]), rel=1e-9)


def test_bad_input_is_one_line(knl):
    with pytest.raises(HetsimError, match="no memory 'hbm'"):
        split_time_s(knl, {"hbm": 1}, {"hbm": 4})
    with pytest.raises(HetsimError, match="threads on ddr: 0"):
        one_memory_time_s(knl, "ddr", 1, 0)
    with pytest.raises(HetsimError, match="give every memory both"):
        split_time_s(knl, {"ddr": 1, "mcdram": 1}, {"ddr": 4})
    with pytest.raises(HetsimError, match="iterations"):
        one_memory_time_s(knl, "ddr", 1, 4, iterations=0)
    with pytest.raises(HetsimError, match="no memory 'l3'"):
        cache_mode_time_s(knl, "l3", "ddr", 19, 64)
    with pytest.raises(HetsimError, match="footprint"):
        direct_mapped_hit_fraction(1, 0)
    with pytest.raises(HetsimError, match="one core type"):
        stream_time_s(load_platform("jetson-tx2"), [{"lpddr4": 1e9}])
