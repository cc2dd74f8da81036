"""The gemm2 cost model (issue 14): each mechanism against hand-computed vectors, switched on and
off; accelerator DVFS; measured tables with a clock column; the one-line errors.

Fast: small platforms and workloads built in memory.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from helpers import chain_workload

from hetsim.cost import Gemm2CostModel, MeasuredCostModel, RooflineCostModel, make_cost_model
from hetsim.cost.gemm2 import Access, Level, combine, conv_algorithm, memory_time, op_table
from hetsim.errors import HetsimError
from hetsim.evaluation import evaluate
from hetsim.mapping import load_mapping
from hetsim.platform import platform_from_dict
from hetsim.platform.loader import apply_dvfs
from hetsim.platform.schema import Gemm2CoreParams
from hetsim.power import energy_J
from hetsim.workload import workload_from_dict
from hetsim.workload.ops import Op, OpCounts, OpKind, Shape

MB = 1 << 20


def platform(gemm2: dict | None = None, *, l1=32, l2=1024, l3=None, l2_private=False, cores=2,
             mem_GBps=10.0, per_core_GBps=5.0, accel: dict | None = None, little: dict | None = None):
    """One cluster `big` (symbol B) at 2 GHz (and 500 MHz), 8 MAC/cycle; optional accelerator."""
    d = {
        "schema": 2, "name": "g2toy",
        "memories": [{"name": "dram", "bandwidth_GBps": mem_GBps}],
        "core_types": [{"name": "fast", "macs_per_cycle": 8, "bandwidth_GBps_per_core": per_core_GBps,
                        "l1d_KiB": l1, "dvfs": [{"name": "hi", "freq_MHz": 2000}, {"name": "lo", "freq_MHz": 500}],
                        "gemm2": gemm2 or {}}],
        "clusters": [{"name": "big", "symbol": "B", "core_type": "fast", "cores": cores, "memory": "dram",
                      "l2_KiB": l2, "l2_private": l2_private, **({"l3_KiB": l3} if l3 else {})}],
    }
    if little is not None:
        d["core_types"].append({"name": "slow", "macs_per_cycle": 2, "bandwidth_GBps_per_core": 2.0,
                                "l1d_KiB": 32, "dvfs": [{"name": "hi", "freq_MHz": 1500}], "gemm2": little})
        d["clusters"].append({"name": "little", "symbol": "s", "core_type": "slow", "cores": 4,
                              "memory": "dram", "l2_KiB": 512})
    if accel is not None:
        d["accelerators"] = [accel]
    return platform_from_dict(d)


def matmul(n: int, k: int, m: int, name: str = "mm") -> Op:
    """A GEMM op N×K by K×M whose K×M operand is a weight (as a conv's filters)."""
    return Op(name, OpKind.MATMUL, ("x",), Shape(1, n, k), Shape(1, n, m), 1, True, out_dims=((n, m),),
              in_dims=((n, k),), counts=OpCounts(macs=n * k * m, gemm=(n, k, m), gemm_groups=1,
                                                 weight_bytes=4 * k * m, input_bytes=4 * n * k,
                                                 output_bytes=4 * n * m))


def conv_net(kernel: int = 3, stride: int = 1, size: int = 16, c: int = 8, m: int = 16, first_relu: bool = True):
    ops = ([{"name": "r0", "kind": "relu"}] if first_relu else []) + [
        {"name": "cv", "kind": "conv", "kernel": kernel, "stride": stride, "pad": kernel // 2, "out_c": m},
        {"name": "r1", "kind": "relu"}]
    return workload_from_dict({"schema": 1, "name": f"cv{kernel}", "input": {"h": size, "w": size, "c": c},
                               "layer_kinds": ["relu"] if first_relu else ["conv"], "ops": ops})


NO_MEMORY = {"caches": True, "overlap": 1.0}    # default levels: L1/L2 free, DRAM at 10 GB/s


# -- the GEMM: tiles, threads, K blocks, packing, calls ---------------------------------------------
def test_neutral_gemm_is_macs_over_the_peak():
    p = platform()
    cost = Gemm2CostModel(p)
    op = matmul(64, 64, 64)
    cost._context[id(op)] = cost.context(op).__class__((0.0,), 0.0, False)   # everything in L1
    b = cost.breakdown(op, p.ep("B1"))
    assert b.algorithm == "gemm" and b.mem_s == 0.0
    assert b.time_s == pytest.approx(64 ** 3 / (8 * 2e9))


@pytest.mark.parametrize("tiles, n, m, k, threads, macs", [
    (True, 10, 13, 9, 1, 16 * 24 * 9),        # N 10 -> 16 (tiles of 8), M 13 -> 24 (tiles of 12)
    (False, 10, 13, 9, 1, 10 * 13 * 9),       # no tiles: the true MACs
    (True, 40, 12, 9, 2, 24 * 12 * 9),        # 5 row tiles on 2 threads: the busiest has 3 (24 rows)
    (False, 40, 12, 9, 2, 20 * 12 * 9),       # even split
])
def test_tiles_pad_n_and_m_and_the_busiest_thread_decides(tiles, n, m, k, threads, macs):
    p = platform({"tiles": tiles, "tile_rows": 8, "tile_cols": 12})
    cost = Gemm2CostModel(p)
    op = matmul(n, k, m)
    cost._context[id(op)] = cost.context(op).__class__((0.0,), 0.0, False)
    assert cost.breakdown(op, p.ep(f"B{threads}")).core_s == pytest.approx(macs / (8 * 2e9))


def test_k_blocks_packing_call_and_efficiency_add_their_terms():
    g = {"tile_rows": 4, "tile_cols": 8, "block_k": 32, "tile_overhead_cycles": 10.0,
         "pack_cycles_per_byte": 0.5, "gemm_call_us": [3.0, 7.0], "kernel_efficiency": 0.5}
    p = platform(g)
    cost = Gemm2CostModel(p)
    op = matmul(8, 100, 16)                  # 2 row tiles x 2 col tiles, K = 100: 4 blocks of 32
    cost._context[id(op)] = cost.context(op).__class__((0.0,), 0.0, False)
    b = cost.breakdown(op, p.ep("B1"))
    kernel = 8 * 16 * 100 / (8 * 0.5)
    tiles = 2 * 2 * 4 * 10.0
    pack = 0.5 * 4 * (8 * 100 + 100 * 16)
    assert b.core_s == pytest.approx((kernel + tiles + pack) / 2e9)
    assert b.fixed_s == pytest.approx(3e-6)
    # two threads: call cost of 2 threads, one row tile each, packing split
    b2 = cost.breakdown(op, p.ep("B2"))
    assert b2.fixed_s == pytest.approx(7e-6)
    assert b2.core_s == pytest.approx((kernel / 2 + tiles / 2 + pack / 2) / 2e9)


def test_small_gemms_use_fewer_threads():
    p = platform({"gemm_macs_per_thread": 1000, "tiles": False})
    cost = Gemm2CostModel(p)
    small, big = matmul(10, 10, 15), matmul(100, 10, 10)       # 1500 and 10000 MACs
    assert cost.breakdown(small, p.ep("B2")).steps[0].threads == 2     # ceil(1500/1000) = 2
    assert cost.breakdown(matmul(10, 10, 9), p.ep("B2")).steps[0].threads == 1
    assert cost.breakdown(big, p.ep("B2")).steps[0].threads == 2


# -- caches: levels, reuse distance, residency ---------------------------------------------------------
def test_levels_capacities_and_bandwidths():
    p = platform({"l2_bytes_per_cycle": 16, "l3_GBps": 20}, l2=1024, l3=8192, l2_private=True)
    e = Gemm2CostModel(p).ep_view(p.ep("B2"))
    lv = {x.name: x for x in e.levels(2)}
    assert lv["L1"].capacity_B == 2 * 32 * 1024 and lv["L1"].bandwidth_Bps == math.inf
    assert lv["L2"].capacity_B == 2 * MB and lv["L2"].bandwidth_Bps == 2 * 16 * 2e9   # private: x2
    assert lv["L3"].capacity_B == 8 * MB and lv["L3"].bandwidth_Bps == 2 * 20e9
    assert lv["DRAM"].bandwidth_Bps == min(2 * 5e9, 10e9)
    shared = Gemm2CostModel(platform(l2_private=False)).ep_view(p.ep("B2")).levels(2)
    assert shared[1].capacity_B == 1 * MB                                          # one shared L2


@pytest.mark.parametrize("rule, distance, expected", [
    ("lru", 0.5 * MB, {"L2": 1.0}),
    ("lru", 4 * MB, {"DRAM": 1.0}),
    ("lru", 16 * 1024, {"L1": 1.0}),
    # proportional: the levels hold capacity / distance of it, cumulatively (L1 1/16 of 512 KiB)
    ("proportional", 0.5 * MB, {"L1": 1 / 16, "L2": 15 / 16}),
    ("proportional", 4 * MB, {"L1": 1 / 128, "L2": 1 / 4 - 1 / 128, "DRAM": 3 / 4}),
    ("proportional", 16 * 1024, {"L1": 1.0}),
])
def test_reuse_distance_picks_the_level(rule, distance, expected):
    g = Gemm2CoreParams(residency=rule, l2_bytes_per_cycle=8)
    levels = [Level("L1", 32 * 1024, math.inf), Level("L2", MB, 8 * 2e9), Level("DRAM", math.inf, 1e9)]
    nbytes = 1e6
    mem, dram, by = memory_time(levels, [Access(nbytes, distance)], g)
    assert {k: v / nbytes for k, v in by.items() if v} == pytest.approx(expected)
    assert dram == pytest.approx(nbytes * expected.get("DRAM", 0.0))
    assert mem == pytest.approx(nbytes * (expected.get("L2", 0.0) / 16e9 + expected.get("DRAM", 0.0) / 1e9))


def test_caches_off_reads_everything_from_dram_and_writes_allocate():
    levels = [Level("L1", 32 * 1024, math.inf), Level("DRAM", math.inf, 1e9)]
    off = Gemm2CoreParams(caches=False)
    assert memory_time(levels, [Access(1e6, 10.0)], off)[:2] == pytest.approx((1e-3, 1e6))
    on = Gemm2CoreParams()
    assert memory_time(levels, [Access(1e6, math.inf, write=True)], on)[:2] == pytest.approx((2e-3, 2e6))
    no_wa = Gemm2CoreParams(write_allocate=False)
    assert memory_time(levels, [Access(1e6, math.inf, write=True)], no_wa)[:2] == pytest.approx((1e-3, 1e6))


@pytest.mark.parametrize("overlap, expected", [(1.0, 3.0), (0.0, 5.0), (0.5, 4.0)])
def test_core_and_memory_combine_by_the_overlap(overlap, expected):
    assert combine(2.0, 3.0, overlap) == expected


def test_bind_gives_reuse_distances_from_the_network():
    w = chain_workload([8, 8, 8], size=16)
    cost = Gemm2CostModel(platform())
    cost.bind(w)
    ops = w.ops
    foot = [o.output_bytes + o.weight_bytes + o.im2col_bytes for o in ops]
    frame = w.inputs[w.input_name].bytes_ + sum(foot)
    c2 = cost.context(w.op("conv2"))
    assert c2.input_distances_B == (w.op("relu1").output_bytes,)       # right after its producer
    assert c2.weight_distance_B == frame                                 # one frame ago
    assert cost.context(w.op("conv1")).reads_frame and not c2.reads_frame
    # an input read two ops after its producer also counts the op between
    r3 = cost.context(w.op("conv3"))
    assert r3.input_distances_B == (w.op("relu2").output_bytes,)
    assert cost.context(w.op("relu2")).input_distances_B == (w.op("conv2").output_bytes,)


def test_weights_of_a_network_that_fits_the_cache_stay_cached():
    """Issue 14's SqueezeNet case: the same conv costs less when its network fits in the caches."""
    small = chain_workload([8, 8], size=8, name="small")
    p = platform({"l2_bytes_per_cycle": 32, "overlap": 0.0}, l2=2048)
    cost = Gemm2CostModel(p)
    layer_small = cost.breakdown(small.op("conv2"), p.ep("B1"))
    cost.bind(small)
    in_network = cost.breakdown(small.op("conv2"), p.ep("B1"))
    assert layer_small.steps[-1].levels.get("DRAM", 0) > 0            # unbound: cold weights
    assert in_network.dram_B < layer_small.dram_B
    assert in_network.time_s < layer_small.time_s


# -- algorithms ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("policy, kernel, stride, im2col_1x1, algo", [
    ("im2col", 3, 1, True, "im2col"),
    ("armcl", 3, 1, True, "winograd"),
    ("armcl", 3, 2, True, "im2col"),
    ("armcl", 5, 1, True, "im2col"),
    ("armcl", 1, 1, True, "im2col"),
    ("armcl", 1, 1, False, "gemm1x1"),
    ("im2col", 1, 1, False, "gemm1x1"),
])
def test_conv_algorithm_as_the_framework_picks_it(policy, kernel, stride, im2col_1x1, algo):
    w = conv_net(kernel, stride)
    g = Gemm2CoreParams(conv_policy=policy, im2col_1x1=im2col_1x1)
    assert conv_algorithm(w.op("cv"), g) == algo
    assert conv_algorithm(w.op("cv"), Gemm2CoreParams(conv_policy=policy, im2col_1x1=im2col_1x1,
                                                      algorithms=False)) == "im2col"


def test_winograd_runs_above_the_direct_mac_peak_and_shows_in_the_op_table():
    w = conv_net(3, 1, size=32, c=64, m=64)
    p = platform({"conv_policy": "armcl", "winograd_tile": 4, "winograd_cycles_per_element": 0.5})
    cost = Gemm2CostModel(p, [w])
    op = w.op("cv")
    b = cost.breakdown(op, p.ep("B1"))
    assert [s.name for s in b.steps] == ["winograd-input", "gemm", "winograd-output"]
    gemm = b.steps[1]
    # F(4x4, 3x3): 64 tiles of 4x4 outputs, 36 GEMMs of (64 x 64) . (64 x 64)
    assert gemm.cycles == pytest.approx(36 * 64 * 64 * 64 / 8)
    assert op.macs / b.busy_s > 8 * 2e9                      # above the FP32 MAC peak of direct MACs
    table = op_table(cost, w, p.ep("B1"))
    assert table.set_index("op").loc["cv", "algorithm"] == "winograd"
    im2col = Gemm2CostModel(platform({"conv_policy": "armcl", "algorithms": False}), [w])
    assert im2col.breakdown(op, p.ep("B1")).algorithm == "im2col"


def test_one_by_one_without_image_matrix_skips_the_copy():
    w = conv_net(1, 1, size=16, c=32, m=32)
    with_copy = Gemm2CostModel(platform({"im2col_cycles_per_byte": 1.0}), [w])
    without = Gemm2CostModel(platform({"im2col_cycles_per_byte": 1.0, "im2col_1x1": False}), [w])
    op = w.op("cv")
    ep = with_copy.platform.ep("B1")
    assert [s.name for s in with_copy.breakdown(op, ep).steps] == ["im2col", "gemm"]
    assert [s.name for s in without.breakdown(op, ep).steps] == ["gemm"]
    assert without.op_time(op, ep) < with_copy.op_time(op, ep)


# -- clocks --------------------------------------------------------------------------------------------
def test_time_does_not_scale_as_one_over_f_unless_the_clocks_mechanism_is_off():
    """The board's observation (issue 14 §2): 4x slower clock, less than 4x slower layer."""
    w = chain_workload([64, 64], size=32)
    g = {"overlap": 0.0, "op_overhead_us": 20.0, "kind_cycles_per_byte": {"relu": 0.5}}
    on = Gemm2CostModel(platform(g), [w])
    off = Gemm2CostModel(platform({**g, "clocks": False}), [w])
    ep = on.platform.ep("B2")
    hi, lo = {"big": "hi"}, {"big": "lo"}
    for name in ("conv2", "relu2"):
        op = w.op(name)
        r_on = on.op_time(op, ep, lo) / on.op_time(op, ep, hi)
        assert 1.0 < r_on < 4.0
        assert off.op_time(op, ep, lo) / off.op_time(op, ep, hi) == pytest.approx(4.0)
        assert off.op_time(op, ep, hi) == pytest.approx(on.op_time(op, ep, hi))
    # each part follows its clock: cycles x4, DRAM traffic and fixed costs unchanged
    b_hi, b_lo = on.breakdown(w.op("conv2"), ep, hi), on.breakdown(w.op("conv2"), ep, lo)
    assert b_lo.fixed_s == pytest.approx(b_hi.fixed_s)
    assert b_lo.core_s == pytest.approx(4 * b_hi.core_s)
    assert b_lo.steps[-1].levels.get("DRAM", 0.0) == pytest.approx(b_hi.steps[-1].levels.get("DRAM", 0.0))


# -- frame ingest ---------------------------------------------------------------------------------------
def test_frame_ingest_is_charged_to_the_op_that_reads_the_input():
    w = chain_workload([8, 8], size=16)
    g = {"frame_ingest_us": 30000.0, "frame_ingest_ns_per_byte": 10.0}
    cost = Gemm2CostModel(platform(g), [w])
    ep = cost.platform.ep("B1")
    b = cost.breakdown(w.op("conv1"), ep)
    assert b.steps[0].name == "ingest"
    frame = w.inputs[w.input_name].bytes_
    assert b.steps[0].fixed_s == pytest.approx(0.03)
    assert b.steps[0].core_s == pytest.approx(10e-9 * frame)
    assert all(s.name != "ingest" for s in cost.breakdown(w.op("conv2"), ep).steps)
    lo = cost.breakdown(w.op("conv1"), ep, {"big": "lo"}).steps[0]
    assert lo.core_s == pytest.approx(4 * 10e-9 * frame) and lo.fixed_s == pytest.approx(0.03)
    off = Gemm2CostModel(platform({**g, "ingest": False}), [w])
    assert off.op_time(w.op("conv1"), ep) == pytest.approx(b.time_s - b.steps[0].fixed_s - b.steps[0].busy_s)


# -- the per-layer big/LITTLE ratio ------------------------------------------------------------------------
def test_big_little_ratio_varies_by_layer_with_gemm2_and_not_with_the_roofline():
    """Issue 14 §2: one efficiency per core type gives every compute-bound layer the same ratio;
    cache sizes, bandwidths and overlap make it a function of the layer's shape."""
    w = workload_from_dict({"schema": 1, "name": "mix", "input": {"h": 56, "w": 56, "c": 64}, "layer_kinds": ["conv"],
                            "ops": [{"name": "a", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 64},
                                    {"name": "b", "kind": "conv", "kernel": 1, "out_c": 256},
                                    {"name": "c", "kind": "conv", "kernel": 3, "stride": 2, "pad": 1, "out_c": 512},
                                    {"name": "d", "kind": "conv", "kernel": 1, "out_c": 2048}]})
    g_big = {"l2_bytes_per_cycle": 16, "overlap": 0.8, "kernel_efficiency": 0.5}
    g_little = {"l2_bytes_per_cycle": 8, "overlap": 0.1, "kernel_efficiency": 0.8}
    p = platform(g_big, little=g_little, cores=4)
    for name, roof in (("roofline", RooflineCostModel(p)), ("gemm2", Gemm2CostModel(p))):
        ratios = roof.layer_times(w, p.ep("s4")) / roof.layer_times(w, p.ep("B4"))
        spread = np.ptp(ratios) / ratios.mean()
        assert spread < 0.01 if name == "roofline" else spread > 0.1


# -- engines -------------------------------------------------------------------------------------------
def test_gemm2_runs_in_both_engines_and_the_des_contends_on_dram_bytes():
    w = chain_workload([16, 16, 16, 16], size=32)
    p = platform({"overlap": 0.5, "l2_bytes_per_cycle": 16}, little={"overlap": 0.5}, cores=4)
    cost = Gemm2CostModel(p)
    pipe = load_mapping("B4:1-2|s4:3-4", p, w, cost)
    a = evaluate(p, w, pipe, cost=cost, engine="analytic")
    d = evaluate(p, w, pipe, cost=cost, engine="des", frames=20, contention=False)
    assert d.throughput_fps == pytest.approx(a.throughput_fps, rel=1e-9)
    demands = cost.layer_demands(w, p.ep("B4"))
    table = op_table(cost, w, p.ep("B4"))
    assert sum(x.bytes_ for x in demands) == pytest.approx(table["dram_B"].sum())
    assert make_cost_model(p, model="gemm2").name == "gemm2"
    with pytest.raises(HetsimError, match="cost model 'nope'; allowed: roofline, gemm2"):   # then the plugins'
        make_cost_model(p, model="nope")


def test_gemm2_is_one_name_of_the_one_registry(tmp_path, hetsim):
    """gemm2 is selectable wherever a cost model is named: the schema's runtime.cost_model (checked
    against cost_model_names()), make_cost_model's default, --fallback behind a measured table, the CLI."""
    from hetsim.cost import CompositeCostModel, cost_model_names, fallback_names
    from hetsim.platform import load_platform

    assert "gemm2" in cost_model_names() and "gemm2" in fallback_names()
    with pytest.raises(HetsimError, match=r"runtime.*unknown cost model 'nope'; allowed: roofline, gemm2"):
        load_platform("hikey970", ["runtime.cost_model=nope"])
    p = load_platform("hikey970", ["runtime.cost_model=gemm2"])
    assert isinstance(make_cost_model(p), Gemm2CostModel)
    assert isinstance(make_cost_model(p, model="roofline"), RooflineCostModel)
    w = chain_workload([8, 8], size=16)
    table = tmp_path / "t.csv"
    table.write_text("layer,ep,time_s\n1,B4,0.001\n")
    mixed = make_cost_model(p, str(table), fallback="gemm2")
    assert isinstance(mixed, CompositeCostModel) and isinstance(mixed.fallback, Gemm2CostModel)
    assert mixed.layer_times(w, p.ep("B4"))[0] == pytest.approx(0.001)
    args = ("simulate", "-p", "hikey970", "-w", "squeezenet", "-m", "B4:1-26", "--engine", "analytic", "--json")
    r, r2 = hetsim(*args, "--cost-model", "gemm2"), hetsim(*args)
    assert r.returncode == 0 and r2.returncode == 0, r.stderr + r2.stderr
    assert r.stdout != r2.stdout                   # a different model, a different answer


# -- accelerators: DVFS ----------------------------------------------------------------------------------
GPU = {"name": "gpu", "kind": "gpu", "peak_GMACps": 100, "memory": "dram", "active_W": 2.0, "idle_W": 0.2,
       "dvfs": [{"name": "low", "freq_MHz": 200, "active_W": 0.6}, {"name": "high", "freq_MHz": 800}],
       "roofline": {"efficiency": 0.5, "op_overhead_us": 10},
       "gemm2": {"efficiency": 0.5, "kernel_cycles": 40000, "op_overhead_us": 10}}


def test_accelerator_dvfs_scales_the_peak_and_the_per_kernel_cycles():
    p = platform(accel=GPU)
    gpu = p.ep("gpu")
    op = matmul(256, 256, 256)
    g2 = Gemm2CostModel(p)
    hi, lo = g2.breakdown(op, gpu, {"gpu": "high"}), g2.breakdown(op, gpu, {"gpu": "low"})
    macs = 256 ** 3
    assert hi.core_s == pytest.approx(macs / 50e9 + 40000 / 800e6)
    assert lo.core_s == pytest.approx(macs / 12.5e9 + 40000 / 200e6)
    assert lo.fixed_s == hi.fixed_s == pytest.approx(10e-6)
    # the fixed per-kernel cost of an empty kernel changes with the clock (GPU: ~5x, 200 -> 800 MHz)
    per_kernel = (40000 / 200e6 + 10e-6) / (40000 / 800e6 + 10e-6)
    assert 3.0 < per_kernel < 4.0
    roof = RooflineCostModel(p)
    assert roof.ep_rates(gpu, {"gpu": "low"}).gemm_MACps == pytest.approx(100e9 * 0.5 / 4)
    assert roof.ep_rates(gpu).gemm_MACps == pytest.approx(100e9 * 0.5)            # default: the highest
    # power follows the level (a level without numbers takes the accelerator's)
    a = p.accelerator("gpu")
    assert a.power_W("low") == (0.6, 0.2) and a.power_W() == (2.0, 0.2)
    no_cpu_power = energy_J(p, [(gpu, 1.0)], 1.0, state={"gpu": "low"})
    assert no_cpu_power is None                       # the cluster has no power numbers: no model


def test_accelerator_dvfs_errors_are_one_line():
    with pytest.raises(HetsimError, match="default_dvfs 'mid' is not one of its dvfs levels"):
        platform(accel={**GPU, "default_dvfs": "mid"})
    p = platform(accel=GPU)
    with pytest.raises(HetsimError, match="DVFS level 'mid' is not a level of accelerator gpu"):
        Gemm2CostModel(p).op_time(matmul(8, 8, 8), p.ep("gpu"), {"gpu": "mid"})
    with pytest.raises(HetsimError, match="not a level of accelerator gpu"):
        RooflineCostModel(p).op_time(matmul(8, 8, 8), p.ep("gpu"), {"gpu": "mid"})
    d = {"clusters": [{"name": "big"}], "accelerators": [{"name": "gpu", "dvfs": [{"name": "low"}]}]}
    apply_dvfs(d, "gpu=low")
    assert d["accelerators"][0]["default_dvfs"] == "low"
    with pytest.raises(HetsimError, match="accelerators with DVFS levels: gpu"):
        apply_dvfs(d, "npu=low")


def test_presets_may_set_accelerators():
    d = {"schema": 2, "name": "x", "memories": [{"name": "dram", "bandwidth_GBps": 10}],
         "accelerators": [GPU], "dvfs_presets": {"eco": {"gpu": "low"}}}
    assert platform_from_dict(d).dvfs_presets["eco"] == {"gpu": "low"}
    d["dvfs_presets"] = {"eco": {"gpu": "mid"}}
    with pytest.raises(HetsimError, match="level 'mid' is not one of"):
        platform_from_dict(d)


# -- measured tables with a clock column ------------------------------------------------------------------
def test_measured_table_looks_up_the_clock_of_the_state():
    p = platform(accel=GPU)
    op = matmul(8, 8, 8, name="k1")
    table = pd.DataFrame({"op": ["k1", "k1", "k2"], "ep": ["gpu", "gpu", "gpu"],
                          "freq_MHz": [200, 800, 800], "time_s": [0.010, 0.004, 0.001]})
    cost = MeasuredCostModel(p, table)
    gpu = p.ep("gpu")
    assert cost.op_time(op, gpu, {"gpu": "low"}) == pytest.approx(0.010)
    assert cost.op_time(op, gpu) == pytest.approx(0.004)                  # default level: 800 MHz
    # t(f) = a + b / f through the two clocks: b = 0.006 / (1/200 - 1/800) = 1.6, a = 0.002
    p2 = platform(accel={**GPU, "dvfs": [*GPU["dvfs"], {"name": "mid", "freq_MHz": 400}]})
    cost2 = MeasuredCostModel(p2, table)
    assert cost2.op_time(op, p2.ep("gpu"), {"gpu": "mid"}) == pytest.approx(0.002 + 1.6 / 400)
    with pytest.raises(HetsimError, match="measured at 800 MHz only; the DVFS state asks for 200 MHz"):
        cost.op_time(matmul(8, 8, 8, name="k2"), gpu, {"gpu": "low"})
    assert cost.supports(matmul(8, 8, 8, name="k2"), gpu)


def test_measured_table_clock_errors_and_clockless_rows():
    p = platform()
    with pytest.raises(HetsimError, match="row 3: freq_MHz 'fast' is not a clock in \\[0.001, 100000\\] MHz"):
        MeasuredCostModel(p, pd.DataFrame({"op": ["a", "b"], "ep": ["B1", "B1"], "freq_MHz": [2000, "fast"],
                                           "time_s": [1.0, 1.0]}))
    cost = MeasuredCostModel(p, pd.DataFrame({"op": ["a"], "ep": ["B1"], "time_s": [0.5]}))
    assert cost.op_time(matmul(8, 8, 8, name="a"), p.ep("B1"), {"big": "lo"}) == 0.5


# -- the schema ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("block, fragment", [
    ({"conv_policy": "fast"}, "conv_policy"),
    ({"overlap": 1.5}, "overlap"),
    ({"kind_cycles_per_byte": {"lrm": 1.0}}, "unknown op kind 'lrm'"),
    ({"winograd_tile": 3}, "winograd_tile"),
    ({"gemm_efficiency": 0.5}, "gemm_efficiency"),
])
def test_gemm2_block_errors_name_the_field(block, fragment):
    with pytest.raises(HetsimError, match=fragment):
        platform(block)
