"""The gemm2 ground truth of Pipe-it's board and the geometry cache it shares with hetsim's gemm2
model (moved from tests/test_gemm2_geometry.py)."""

from __future__ import annotations

import pytest

from hetsim.platform import load_platform, platform_from_dict
from hetsim.workload import load_workload, workload_from_dict
from hetsim_papers.pipeit.cost import Gemm2GroundTruth, PipeitGroundTruth


def test_side_times_follow_the_reuse_distances_once_the_network_is_bound():
    """Pipe-it's side times are kept per op and context: pricing an op unbound, then binding its
    network, gives the bound time (a fresh bound model's), not the kept unbound one."""
    w = load_workload("alexnet")
    truth = Gemm2GroundTruth(load_platform("hikey970"))
    p = truth.params("big")
    op = w.op("conv1")
    unbound = truth.side_time(op, p, 4)
    truth.bind(w)
    bound = truth.side_time(op, p, 4, 0.5)
    fresh = Gemm2GroundTruth(load_platform("hikey970"), [w])
    assert bound == fresh.side_time(op, fresh.params("big"), 4, 0.5)
    assert bound != (unbound[0] * 0.5, unbound[1] * 0.5)
    assert truth.side_time(op, p, 4) == fresh.side_time(op, fresh.params("big"), 4)


def _one_core(**roofline):
    return platform_from_dict({
        "schema": 2, "name": "one", "memories": [{"name": "m", "bandwidth_GBps": 10}],
        "core_types": [{"name": "c", "macs_per_cycle": 8, "dvfs": [{"name": "f", "freq_MHz": 1000}],
                        "bandwidth_GBps_per_core": 5.0, "roofline": roofline}],
        "clusters": [{"name": "k", "symbol": "K", "core_type": "c", "cores": 2, "memory": "m"}]})


def test_the_ground_truth_pays_the_depthwise_cost_per_output_pixel_and_tap():
    """roofline.dw_tap_cycles (fitted by the host tool) enters Pipe-it's ground truth too: that
    many cycles per O_h*O_w*R*S on one core, the whole op."""
    dw = workload_from_dict({"schema": 1, "name": "dw", "input": {"h": 40, "w": 40, "c": 16}, "layer_kinds": ["dw"],
                             "ops": [{"name": "x", "kind": "dw", "kernel": 3, "pad": 1, "out_c": 16}]}).op("x")
    assert dw.window_taps == 40 * 40 * 9
    gt = PipeitGroundTruth(_one_core(dw_efficiency=0.1, dw_tap_cycles=4.0))
    gt_base = PipeitGroundTruth(_one_core(dw_efficiency=0.1))
    p, p0 = gt.params("k"), gt_base.params("k")
    assert gt.side_time(dw, p, 1)[0] == pytest.approx(gt_base.side_time(dw, p0, 1)[0] + dw.window_taps * 4e-9)

