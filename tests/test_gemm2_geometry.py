"""The gemm2 geometry cache (issue 14, "make the gemm2 fit cheap"): an op's geometry (algorithm,
steps, threads, work, bytes per cache level) is computed once and shared by the models of platforms
that differ only in the rates a fit moves (``PRICE_FIELDS``); the result is exactly the uncached one.

Fast: two networks on two EPs of each board, no fit is run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hetsim.cost import Gemm2CostModel
from hetsim.cost.gemm2 import PRICE_FIELDS, GeometryCache, geometry_key
from hetsim.errors import HetsimError
from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim.workload.ops import VIEW_KINDS

#: The host calibration platform: a saved host calibration (tests/data/host.yaml, 2026-11-23) with a
#: gemm2 block of the shape `hetsim calibrate host` writes (tiles, K block, cache sizes, one-thread
#: kernels, Winograd, ingest).
HOST = str(Path(__file__).parent / "data" / "host.yaml")
HOST_GEMM2 = ["core_types.cpu.l1d_KiB=48", "clusters.host.l2_KiB=1024", "clusters.host.l2_private=true",
              "clusters.host.l3_KiB=32768", *(f"core_types.cpu.gemm2.{k}" for k in (
                  "tile_rows=2", "tile_cols=8", "block_k=128", "tile_overhead_cycles=18.7",
                  "pack_cycles_per_byte=0.18", "overlap=0.0037", "gemm_macs_per_thread=262144",
                  "l2_bytes_per_cycle=21.8", "l3_GBps=68.0", "parallel_efficiency=[1.0, 0.45]",
                  "gemm_call_us=[2.3, 5792.7]", "kernel_threads=1", "im2col_cycles_per_byte=0.39",
                  "kind_cycles_per_byte={relu: 0.15, maxpool: 0.69, lrn: 1.22, concat: 0.07}",
                  "dw_macs_per_cycle=0.58", "conv_policy=armcl", "winograd_cycles_per_element=1.59",
                  "frame_ingest_us=30", "frame_ingest_ns_per_byte=0.5"))]
#: (platform, overrides, the fitted rates moved, EPs with a DVFS state, networks)
BOARDS = {
    "hikey970": ("hikey970", [], ["core_types.cortex-a73.gemm2.kernel_efficiency=0.2",
                                  "core_types.cortex-a53.gemm2.dw_macs_per_cycle=0.09",
                                  "core_types.cortex-a53.gemm2.gemv_GBps_per_core=0.11",
                                  "core_types.cortex-a53.gemm2.op_overhead_us=177"],
                 [("B4", None), ("s2", {"little": "low"})], ("alexnet", "mobilenet")),
    "jetson-tx2": ("jetson-tx2", [], ["core_types.denver2.gemm2.kernel_efficiency=0.3",
                                      "core_types.cortex-a57.gemm2.parallel_efficiency=[1.0, 0.6]"],
                   [("D2", None), ("A4", {"a57": "powersave"})], ("vgg16", "googlenet")),
    "host": (HOST, HOST_GEMM2, ["core_types.cpu.gemm2.kernel_efficiency=0.5",
                                "core_types.cpu.gemm2.op_overhead_us=3",
                                "core_types.cpu.gemm2.overlap=1.0"],
             [("C1", None), ("C2", None)], ("alexnet", "squeezenet")),
}


def _demands(cost, workloads, eps):
    out = {}
    for w in workloads:
        cost.bind(w)
        for ep, state in eps:
            for op in w.ops:
                b = None if op.kind in VIEW_KINDS else cost.breakdown(op, ep, state)
                out[(w.name, ep.name, op.name)] = (cost.op_demand(op, ep, state),
                                                   b and [(s.name, s.cycles, s.fixed_s, s.core_s, s.mem_s,
                                                           s.busy_s, s.dram_B, s.levels) for s in b.steps])
    return out


@pytest.mark.parametrize("board", list(BOARDS))
def test_a_geometry_from_other_rates_prices_exactly_as_a_fresh_one(board):
    """A model that reuses geometries computed under other rates (a fit's next evaluation) gives
    every op_demand and every step bit for bit as a model computing its own."""
    name, base, moved, eps_states, networks = BOARDS[board]
    workloads = [load_workload(n) for n in networks]
    shared = GeometryCache()
    first = load_platform(name, base)
    eps = [(first.ep(ep), state) for ep, state in eps_states]
    before = _demands(Gemm2CostModel(first, geometry=shared), workloads, eps)
    misses = shared.misses
    moved_platform = load_platform(name, [*base, *moved])
    cached = _demands(Gemm2CostModel(moved_platform, geometry=shared), workloads, eps)
    assert shared.misses == misses and shared.hits > 0          # every geometry was reused
    fresh_cache = GeometryCache()
    fresh = _demands(Gemm2CostModel(load_platform(name, [*base, *moved]), geometry=fresh_cache), workloads, eps)
    assert fresh_cache.misses > 0
    assert cached == fresh                                       # exact, not approximate
    assert cached != before                                      # the moved rates do move times


@pytest.mark.parametrize("change", ["core_types.cortex-a73.gemm2.tile_rows=4", "clusters.big.l2_KiB=512",
                                    "core_types.cortex-a73.gemm2.conv_policy=armcl",
                                    "core_types.cortex-a73.gemm2.caches=false"])
def test_changing_a_geometry_parameter_is_a_new_geometry(change):
    """tile_rows, a cache size, the conv policy or a switch enter the key: the shared cache computes
    new geometries, and the times are those of a fresh model of the changed board."""
    w = load_workload("squeezenet")
    shared = GeometryCache()
    base = load_platform("hikey970")
    eps = [(base.ep("B4"), None), (base.ep("B1"), None)]
    before = _demands(Gemm2CostModel(base, geometry=shared), [w], eps)
    misses = shared.misses
    changed = _demands(Gemm2CostModel(load_platform("hikey970", [change]), geometry=shared), [w], eps)
    assert shared.misses > misses
    assert changed == _demands(Gemm2CostModel(load_platform("hikey970", [change])), [w], eps)
    assert changed != before


@pytest.mark.parametrize("field, value", [
    ("kernel_efficiency", "0.3"), ("dw_macs_per_cycle", "0.5"), ("dw_strided_macs_per_cycle", "0.4"),
    ("dw_tap_cycles", "3.0"),
    ("gemv_efficiency", "0.5"),
    ("gemv_GBps_per_core", "2.0"), ("gemv_GBps_per_core", "[2.0, 1.5]"), ("gemv_row_cycles", "[100, 60]"),
    ("gemv_call_us", "[12.0, 20.0]"), ("kind_overhead_us", "{softmax: [40.0, 45.0]}"),
    ("parallel_efficiency", "[1.0, 0.8]"), ("gemm_call_us", "5.0"),
    ("op_overhead_us", "50"), ("l2_bytes_per_cycle", "4"), ("l3_GBps", "10"), ("overlap", "0.5")])
def test_price_fields_do_not_enter_the_geometry(field, value):
    """Each of PRICE_FIELDS moved alone leaves the key and every op's geometry (computed afresh)
    unchanged: the cache may share geometries across them."""
    assert field in PRICE_FIELDS
    over = [f"core_types.{t}.gemm2.{field}={value}" for t in ("cortex-a73", "cortex-a53")]
    w = load_workload("mobilenet")
    base, moved = Gemm2CostModel(load_platform("hikey970"), [w]), Gemm2CostModel(load_platform("hikey970", over), [w])
    for ep in ("B4", "s1"):
        e0, e1 = base.ep_view(base.platform.ep(ep)), moved.ep_view(moved.platform.ep(ep))
        assert geometry_key(e0) == geometry_key(e1)
        for op in w.ops:
            if op.kind not in VIEW_KINDS:
                assert base._geometry(op, e0, base.context(op)) == moved._geometry(op, e1, moved.context(op))


def test_every_other_field_enters_the_key():
    """The key holds every gemm2 field but the price fields (a field added later is in the key)."""
    e = Gemm2CostModel(load_platform("hikey970")).ep_view(load_platform("hikey970").ep("B4"))
    keyed = {name for name, _ in geometry_key(e)[-1]}
    assert keyed | PRICE_FIELDS == set(type(e.params).model_fields)
    assert not keyed & PRICE_FIELDS


def test_the_cache_is_bounded_and_never_wrong_past_its_bound():
    w = load_workload("alexnet")
    p = load_platform("hikey970")
    small = GeometryCache(max_entries=3)
    capped = _demands(Gemm2CostModel(p, geometry=small), [w], [(p.ep("B4"), None)])
    assert len(small) <= 3
    assert capped == _demands(Gemm2CostModel(p), [w], [(p.ep("B4"), None)])
    with pytest.raises(HetsimError, match="max_entries 0: must be at least 1"):
        GeometryCache(max_entries=0)
