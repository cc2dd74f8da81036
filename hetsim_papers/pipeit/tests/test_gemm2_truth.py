"""The gemm2 ground truth of Pipe-it's board and the geometry cache it shares with hetsim's gemm2
model (moved from tests/test_gemm2_geometry.py)."""

from __future__ import annotations

from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim_papers.pipeit.cost import Gemm2GroundTruth


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
