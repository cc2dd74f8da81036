"""Cost models: the roofline's terms, and replaying a measured table."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from helpers import chain_workload, two_cluster_platform

from hetsim.cost import MeasuredCostModel, RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.evaluation import evaluate
from hetsim.mapping import load_mapping
from hetsim.platform import load_platform
from hetsim.workload import load_workload


def test_roofline_compute_bound_conv_matches_formula():
    platform = two_cluster_platform()
    wl = chain_workload([64], [3], size=56)
    conv = wl.op("conv1")
    cost = RooflineCostModel(platform)
    ep = platform.ep("B1")
    # fast core: 8 MAC/cycle x 2 GHz x 0.5 efficiency = 8 GMAC/s; overhead 20 us.
    expected = 20e-6 + max(conv.macs / 8e9, (conv.input_bytes + conv.output_bytes + conv.weight_bytes
                                             + 2 * conv.im2col_bytes) / 20e9)
    assert cost.op_time(conv, ep) == pytest.approx(expected, rel=1e-12)


def test_roofline_memory_bound_ops_have_no_compute_term():
    platform = two_cluster_platform()
    wl = chain_workload([16], [3], size=28)
    relu = wl.op("relu1")
    d = RooflineCostModel(platform).op_demand(relu, platform.ep("B4"))
    assert d.busy_s == pytest.approx((relu.input_bytes + relu.output_bytes) / 20e9)


def test_dvfs_level_scales_compute_time():
    platform = two_cluster_platform()
    wl = chain_workload([256], [3], size=56)
    conv = wl.op("conv1")
    cost = RooflineCostModel(platform)
    hi = cost.op_demand(conv, platform.ep("B1"), {"big": "hi"})
    lo = cost.op_demand(conv, platform.ep("B1"), {"big": "lo"})
    assert lo.busy_s == pytest.approx(4 * hi.busy_s)       # 2000 MHz vs 500 MHz, compute-bound
    with pytest.raises(HetsimError, match="not a level"):
        cost.op_demand(conv, platform.ep("B1"), {"big": "turbo"})


def test_tiles_limit_the_speedup_of_small_layers():
    # Pipe-it eq. 7 with integer iterations: a 49-row GEMM (7x7 output) is 7 tiles of 8 rows, so 4
    # cores do 2 tiles each (3.06x at best), while conv1's 12544 rows scale almost linearly.
    platform = load_platform("hikey970")
    wl = load_workload("resnet50")
    cost = RooflineCostModel(platform)
    assert wl.layer(49).gemm[0] == 49 and wl.layer(1).gemm[0] == 12544
    conv = lambda layer, n: cost.op_time(wl.layer(layer).major, platform.ep(f"B{n}"))  # noqa: E731
    small = [conv(49, 1) / conv(49, n) for n in (1, 2, 3, 4)]
    large = conv(1, 1) / conv(1, 4)
    assert small == pytest.approx([1, 49 / 32, 49 / 24, 49 / 16], rel=1e-9)
    assert large > 3.9 and small[3] < large


def test_measured_table_by_layer_replays_times(tmp_path):
    platform = two_cluster_platform()
    wl = chain_workload([8, 8, 8])
    rows = [{"layer": layer, "ep": ep, "time_s": 0.001 * layer * (1 if ep == "big" else 3)}
            for layer in (1, 2, 3) for ep in ("big", "little")]
    path = tmp_path / "db.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    cost = MeasuredCostModel(platform, path)
    pipe = load_mapping("B4:1-2|s2:3", platform, wl, cost)
    m = evaluate(platform, wl, pipe, cost=cost, engine="analytic")
    transfer = platform.route(platform.ep("B4"), platform.ep("s2")).time_s(wl.cut_bytes(2))
    assert m.stages[0].time_s == pytest.approx(0.003 + transfer)
    assert m.stages[1].time_s == pytest.approx(0.009)
    des = evaluate(platform, wl, pipe, cost=cost, engine="des", frames=20, contention=True)
    assert des.throughput_fps == pytest.approx(1 / 0.009, rel=1e-9)


def test_measured_table_errors(tmp_path):
    platform = two_cluster_platform()
    wl = chain_workload([8, 8])
    path = tmp_path / "db.csv"
    pd.DataFrame([{"layer": 1, "ep": "big", "time_s": 0.1}]).to_csv(path, index=False)
    cost = MeasuredCostModel(platform, path)
    with pytest.raises(HetsimError, match="no time for chain layer 2 on B4"):
        cost.layer_times(wl, platform.ep("B4"))
    bad = tmp_path / "bad.csv"
    bad.write_text("layer,ep,time_s\n1,big,fast\n")
    with pytest.raises(HetsimError, match="row 2: time_s 'fast'"):
        MeasuredCostModel(platform, bad)
    cols = tmp_path / "cols.csv"
    cols.write_text("l,e,t\n1,big,1\n")
    with pytest.raises(HetsimError, match="needs columns"):
        MeasuredCostModel(platform, cols)


def test_time_matrix_shape_and_positivity():
    platform = load_platform("hikey970")
    wl = load_workload("googlenet")
    T = RooflineCostModel(platform).time_matrix(wl, platform.eps())
    assert T.shape == (58, 8)
    assert (T > 0).all() and all(math.isfinite(x) for x in T.ravel())
    # More cores of one cluster never make a layer slower.
    assert (T[:, 1] <= T[:, 0] + 1e-15).all() and (T[:, 3] <= T[:, 2] + 1e-15).all()
