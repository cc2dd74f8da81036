"""platforms/rk3399.yaml, issue 14's outside-check board: the file, its OPPs, the parameters it
transplants from the HiKey 970 fit, and the DVFS invariant of gemm2's clocks switch on it.

Fast (a few seconds): the Pipe-it fit it checks against takes ~2.5 s for both ground truths.
"""

from __future__ import annotations

import pytest

from hetsim.platform import load_platform, plausibility_warnings
from hetsim.workload import load_workload
from hetsim_papers.pipeit.experiments.calibration import fit_ground_truth, make_truth

#: [ext] rk3399-opp.dtsi: cluster1 (A72) and cluster0 (A53) operating points, MHz.
A72_OPPS_MHZ = [408, 600, 816, 1008, 1200, 1416, 1608, 1800]
A53_OPPS_MHZ = [408, 600, 816, 1008, 1200, 1416]
CNNS = ("alexnet", "googlenet", "mobilenet", "resnet50", "squeezenet")
#: core type on rk3399 -> the hikey970 core type its fitted parameters are transplanted from.
TRANSPLANT = {"cortex-a72": "cortex-a73", "cortex-a53": "cortex-a53"}


def _freqs(p, core_type):
    return sorted(lv.freq_MHz for lv in p.core_type(core_type).dvfs)


def test_rk3399_loads_with_its_eps_caches_and_no_warnings():
    p = load_platform("rk3399")
    assert [e.name for e in p.eps()] == ["B1", "B2", "s1", "s2", "s3", "s4"]
    assert (p.cluster("big").l2_KiB, p.cluster("little").l2_KiB) == (1024, 512)
    assert p.core_type("cortex-a72").l1d_KiB == p.core_type("cortex-a53").l1d_KiB == 32
    assert (p.core_type("cortex-a72").macs_per_cycle, p.core_type("cortex-a53").macs_per_cycle) == (8, 2)
    assert plausibility_warnings(p) == []
    # out-of-order A72 hides memory under compute, the in-order A53 adds it (docs/fidelity.md#the-gemm2-mechanisms)
    assert (p.core_type("cortex-a72").gemm2.overlap, p.core_type("cortex-a53").gemm2.overlap) == (1.0, 0.0)


def test_every_opp_of_the_device_tree_is_a_dvfs_level_and_the_defaults_are_the_highest():
    p = load_platform("rk3399")
    assert _freqs(p, "cortex-a72") == A72_OPPS_MHZ
    assert _freqs(p, "cortex-a53") == A53_OPPS_MHZ
    assert p.core_type("cortex-a72").level(p.cluster("big").dvfs).freq_MHz == 1800
    assert p.core_type("cortex-a53").level(p.cluster("little").dvfs).freq_MHz == 1416
    slow = load_platform("rk3399", dvfs="powersave")
    assert slow.core_type("cortex-a72").level(slow.cluster("big").dvfs).freq_MHz == 408
    # power falls with every lower OPP (P ~ f V^2)
    for t in ("cortex-a72", "cortex-a53"):
        watts = [lv.active_W_per_core for lv in sorted(p.core_type(t).dvfs, key=lambda lv: lv.freq_MHz)]
        assert watts == sorted(watts) and len(set(watts)) == len(watts)


@pytest.mark.parametrize("model", ["roofline", "gemm2"])
def test_transplanted_parameters_equal_the_pipeit_fit_of_the_kirin_970(model):
    """The file's [assumption] values are the hikey970 fit, copied to 4 significant digits: if the
    fit moves (a cost-model change), this says to copy them again."""
    fit = fit_ground_truth(model=model)
    p = load_platform("rk3399")
    for path, value in fit.values.items():
        _, src_type, block, field = path.split(".")
        if block == "pipeit":   # the Pipe-it ground truth's own block is the plugin's, not the board's
            continue
        for rk_type, hikey_type in TRANSPLANT.items():
            if hikey_type == src_type:
                assert getattr(getattr(p.core_type(rk_type), block), field) == pytest.approx(value, rel=1e-3), path
    for rk_type in TRANSPLANT:  # the contention fixed during that fit
        blk = "gemm2" if model == "gemm2" else "roofline"
        fixed = next(o for o in fit.fixed if f".{blk}.parallel_efficiency=" in o).split("=", 1)[1]
        assert str(getattr(p.core_type(rk_type), blk).parallel_efficiency) == fixed


def _slowdown(platform, truth, workload, ep, cluster, low, top):
    return (truth.layer_times(workload, platform.ep(ep), {cluster: low}).sum()
            / truth.layer_times(workload, platform.ep(ep), {cluster: top}).sum())


@pytest.mark.parametrize("clocks", [False, True])
def test_gemm2_network_slowdown_is_the_clock_ratio_with_clocks_off_and_at_most_it_with_them_on(clocks):
    overrides = [] if clocks else [f"core_types.{t}.gemm2.clocks=false" for t in TRANSPLANT]
    p = load_platform("rk3399", overrides)
    truth = make_truth(p, "gemm2")
    for cnn in CNNS:
        w = load_workload(cnn)
        for ep, cluster, top, low, ratio in (("B2", "big", "f1800", "f408", 1800 / 408),
                                             ("s4", "little", "f1416", "f408", 1416 / 408)):
            s = _slowdown(p, truth, w, ep, cluster, low, top)
            if clocks:
                assert 1.0 < s <= ratio * (1 + 1e-12), (cnn, ep, s)
            else:
                assert s == pytest.approx(ratio, rel=1e-9), (cnn, ep, s)
