"""Pipe-it (Wang et al., TCAD 2019): design-space counts, Algorithms 1-3, the ground truth and the predictor, the
kernel-level baseline, the power helpers, and the quick reproduction (every claim must pass)."""

from __future__ import annotations

import math
from math import comb

import numpy as np
import pytest

from hetsim.errors import HetsimError
from hetsim.platform import load_platform
from hetsim.power import active_power_W, energy_J, overlap_s
from hetsim.workload import load_workload
from hetsim_papers.pipeit.cost import (
    CoreParams,
    PipeitGroundTruth,
    PipeitPredictor,
    conv_op,
    eq5_features,
    eq7_time,
    fc_op,
)
from hetsim_papers.pipeit.kernel_level import KernelLevel
from hetsim_papers.pipeit.pipeit import (
    all_configurations,
    best_configuration,
    eq12,
    find_split,
    merge_stage,
    n_design_points,
    n_pipelines,
    pipeit_design,
    throughput,
    work_flow,
)

NETS = ("alexnet", "googlenet", "mobilenet", "resnet50", "squeezenet")


# -- eqs. 1-2 (§IV-B) ----------------------------------------------------------------------------------
def test_design_space_counts_match_eqs_1_2():
    assert [n_pipelines(p, 4, 4) for p in range(2, 9)] == [1, 6, 15, 20, 15, 6, 1]
    assert sum(n_pipelines(p, 4, 4) for p in range(2, 9)) == 64
    assert [n_pipelines(p, 3, 2) for p in range(2, 6)] == [1, 3, 3, 1]
    expected = {11: 11_440, 26: 2_629_575, 28: 4_272_048, 54: 341_149_446, 58: 553_270_671}
    for w, count in expected.items():
        assert n_design_points(w, 4, 4) == count == comb(w + 8 - 3, 8 - 1)   # closed form C(W+H-3, H-1)
    assert n_design_points(29, 4, 4) == 5_379_616          # the paper's printed MobileNet value
    assert len(all_configurations(4, 4)) == 64 and len(all_configurations(3, 2)) == 8


def test_table_i_layer_counts():
    assert [load_workload(n).num_layers for n in NETS] == [11, 58, 28, 54, 26]


# -- Algorithms 1-3 against an independent reference implementation -------------------------------------------
def _ref_find_split(Lwl, Ti, Tn):
    Li, Ln = list(Lwl), []
    ti, tn = sum(Ti[j] for j in Li), 0.0
    for lj in reversed(Lwl):
        if ti - Ti[lj] > tn + Tn[lj]:
            ti -= Ti[lj]
            tn += Tn[lj]
            Li.pop()
            Ln.insert(0, lj)
        else:
            break
    return Li, Ln


def _ref_work_flow(P, W, T):
    L = [[] for _ in P]
    L[0] = list(range(W))
    old = None
    while L != old:
        old = [list(x) for x in L]
        for i in range(len(P) - 1):
            L[i], L[i + 1] = _ref_find_split(L[i] + L[i + 1], T[P[i]], T[P[i + 1]])
    return L


def _ref_t_stage(T, cfg, layers):
    return sum(T[cfg][j] for j in layers)


def _ref_eq12(T, P, L, i):
    new = (P[i][0], P[i][1] + P[i + 1][1])
    lhs = _ref_t_stage(T, new, L[i]) + _ref_t_stage(T, new, L[i + 1])
    rhs = max(_ref_t_stage(T, P[i], L[i]), _ref_t_stage(T, P[i + 1], L[i + 1]))
    return lhs < rhs, new


def _ref_merge_stage(W, HB, Hs, T, policy="grow"):
    P = [("B", 1)] * HB + [("s", 1)] * Hs
    L = _ref_work_flow(P, W, T)
    for ct in ("B", "s"):
        if policy in ("grow", "literal_break"):
            i = next(k for k, p in enumerate(P) if p[0] == ct)
            while i + 1 < len(P) and P[i][0] == ct and P[i + 1][0] == ct:
                ok, new = _ref_eq12(T, P, L, i)
                if ok:
                    P = P[:i] + [new] + P[i + 2:]
                    L = _ref_work_flow(P, W, T)
                elif policy == "literal_break":
                    break
                else:
                    i += 1
        else:
            changed = True
            while changed:
                changed = False
                i = next(k for k, p in enumerate(P) if p[0] == ct)
                while i + 1 < len(P) and P[i][0] == ct and P[i + 1][0] == ct:
                    ok, new = _ref_eq12(T, P, L, i)
                    if ok:
                        P = P[:i] + [new] + P[i + 2:]
                        L = _ref_work_flow(P, W, T)
                        changed = True
                    i += 1
    return P, L


def _random_T(rng, W, HB, Hs):
    """A plausible time matrix: per-layer work, a Small/Big ratio per layer, concave speedups."""
    work = rng.lognormal(0.0, 1.0, W)
    ratio = rng.uniform(1.5, 3.5, W)
    T = {}
    for ct, h, scale in (("B", HB, np.ones(W)), ("s", Hs, ratio)):
        c = rng.uniform(0.0, 0.15)
        for n in range(1, h + 1):
            T[(ct, n)] = (work * scale / (n / (1 + c * (n - 1)))).tolist()
    return T


@pytest.mark.parametrize("policy", ["grow", "pairwise", "literal_break"])
def test_merge_stage_equals_the_reference(policy):
    rng = np.random.default_rng(1)
    policies_differ = set()
    for trial in range(60):
        W = int(rng.integers(4, 40))
        HB, Hs = (4, 4) if trial % 3 else (3, 2)
        T = _random_T(rng, W, HB, Hs)
        P, L = _ref_merge_stage(W, HB, Hs, T, policy)
        res = merge_stage({k: np.array(v) for k, v in T.items()}, HB, Hs, policy)
        assert res.configs == P
        assert [list(range(a, e)) for a, e in res.alloc] == L
        policies_differ.add(tuple(res.configs))
    assert len(policies_differ) > 5            # the random matrices exercise many outcomes


def test_work_flow_equals_the_reference_and_is_stable():
    rng = np.random.default_rng(2)
    for _ in range(50):
        W = int(rng.integers(2, 30))
        T = _random_T(rng, W, 4, 4)
        configs = [("B", 2), ("B", 1), ("B", 1), ("s", 3), ("s", 1)]
        alloc = work_flow(configs, {k: np.array(v) for k, v in T.items()})
        assert [list(range(a, e)) for a, e in alloc] == _ref_work_flow(configs, W, T)
        assert alloc[0][0] == 0 and alloc[-1][1] == W and alloc[0][1] > 0   # stage 1 never empties
        for i in range(len(configs) - 1):                                    # a fixed point of Algorithm 1
            k = find_split(np.array(T[configs[i]]), np.array(T[configs[i + 1]]), alloc[i][0], alloc[i + 1][1])
            assert k == alloc[i][1]


def test_find_split_moves_layers_while_the_first_stage_stays_slower():
    t_i = np.array([4.0, 3.0, 2.0, 1.0])
    t_n = np.array([8.0, 6.0, 4.0, 2.0])
    # Move l4 (10-1=9 > 2), l3 (9-2=7 > 2+4=6), stop at l2 (7-3=4 < 6+6).
    assert find_split(t_i, t_n, 0, 4) == 2
    # Strict: equal stage times do not move the layer.
    assert find_split(np.array([1.0, 1.0]), np.array([1.0, 1.0]), 0, 2) == 2
    assert find_split(np.array([2.0, 2.0]), np.array([1.0, 1.0]), 0, 2) == 1
    assert find_split(np.array([5.0]), np.array([0.1]), 0, 1) == 1            # never empties stage i


def test_eq12_merges_only_when_the_merged_stage_beats_the_slower_one():
    T = {("B", 1): np.array([4.0, 3.0]), ("B", 2): np.array([2.2, 1.6])}
    ok, merged, lhs, rhs = eq12(T, [("B", 1), ("B", 1)], [(0, 1), (1, 2)], 0)
    assert ok and merged == ("B", 2) and lhs == pytest.approx(3.8) and rhs == 4.0
    T[("B", 2)] = np.array([2.5, 1.6])
    assert not eq12(T, [("B", 1), ("B", 1)], [(0, 1), (1, 2)], 0)[0]        # 4.1 > 4.0
    with pytest.raises(HetsimError, match="one core type"):
        eq12(T, [("B", 1), ("s", 1)], [(0, 1), (1, 2)], 0)
    with pytest.raises(HetsimError, match="merge policy"):
        merge_stage(T, 2, 0, policy="greedy")


def test_the_configuration_oracle_is_at_least_as_good_as_algorithm_3():
    rng = np.random.default_rng(3)
    for _ in range(10):
        T = {k: np.array(v) for k, v in _random_T(rng, 20, 4, 4).items()}
        res, best = merge_stage(T, 4, 4), best_configuration(T, 4, 4)
        assert throughput(T, best.configs, best.alloc) >= throughput(T, res.configs, res.alloc) - 1e-12


# -- the ground truth --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def roofline_truth():
    """The ground truth before issue 14 (the roofline variant), fitted to Table IV."""
    from hetsim_papers.pipeit.experiments.calibration import fit_ground_truth

    fit = fit_ground_truth(model="roofline")
    return fit.platform(), fit.truth()


@pytest.fixture(scope="module", params=["gemm2", "roofline"])
def calibrated(request):
    """Each ground truth, fitted to Table IV (the interface tests hold for both)."""
    from hetsim_papers.pipeit.experiments.calibration import fit_ground_truth

    fit = fit_ground_truth(model=request.param)
    return fit.platform(), fit.truth()


def test_ground_truth_speedups_are_concave_and_fc_is_memory_bound(roofline_truth):
    platform, truth = roofline_truth
    for n in NETS:
        w = load_workload(n)
        for t in ("B", "s"):
            T = np.column_stack([truth.layer_times(w, platform.ep(f"{t}{c}")) for c in range(1, 5)])
            speedup = T[:, :1] / T
            assert np.all(np.diff(speedup, axis=1) > 0)
            assert np.all(np.diff(speedup, 2, axis=1) <= 1e-9), (n, t)
    # A fully connected layer streams its weights: time = weights / (n x per-core GEMV rate x contention).
    fc = fc_op(9216, 4096)
    for ep in ("B1", "B4", "s2"):
        e = platform.ep(ep)
        p = truth.params(e.cluster)
        expected = 4096 * 9216 * 4 / (e.cores * p.gemv_Bps_per_core * p.parallel_efficiency(e.cores))
        assert truth.op_time(fc, e) == pytest.approx(p.overhead_s + expected, rel=1e-3)


def test_tiles_split_reproduces_eq7_rounding(roofline_truth):
    platform, _ = roofline_truth
    truth = PipeitGroundTruth(platform, split="tiles")
    op = conv_op(13, 256, 3, 384)          # AlexNet conv3: N = 169 -> 22 iterations of 8 rows
    t = [truth.side_time(op, truth.params("big"), n)[0] for n in range(1, 5)]
    p = truth.params("big")
    busiest = [22, 11, 8, 6]
    for n in range(1, 5):
        assert t[n - 1] == pytest.approx(t[0] * busiest[n - 1] / 22 / p.parallel_efficiency(n), rel=1e-9)
    with pytest.raises(HetsimError, match="split"):
        PipeitGroundTruth(platform, split="dynamic")


def test_calibration_is_deterministic():
    from hetsim_papers.pipeit.experiments.calibration import fit_ground_truth

    a = fit_ground_truth().values
    fit_ground_truth.cache_clear()
    assert fit_ground_truth().values == a


def test_gemm2_ground_truth_fits_table_iv_and_deals_whole_tiles():
    """The gemm2 ground truth (issue 14): fitted on the same four quantities per cluster, arm_gemm's
    8-row tiles dealt whole to the threads, GEMVs memory-bound at the fitted streaming rate, and
    per-layer s4/B4 ratios that spread more than the roofline's."""
    from hetsim_papers.pipeit.experiments.calibration import fit_ground_truth, make_truth

    fit = fit_ground_truth(model="gemm2")
    assert set(fit.values) == {f"core_types.{t}.gemm2.{k}" for t in ("cortex-a73", "cortex-a53") for k in
                               ("kernel_efficiency", "dw_macs_per_cycle", "gemv_GBps_per_core", "op_overhead_us")}
    assert fit.table["error"].abs().max() < 0.1
    platform, truth = fit.platform(), fit.truth()
    op = conv_op(13, 256, 3, 384)            # AlexNet conv3: N = 169 -> 22 tiles of 8 rows
    p = truth.params("big")
    t = [truth.side_time(op, p, n)[0] for n in range(1, 5)]
    eff = platform.core_type("cortex-a73").gemm2.parallel_efficiency
    kernel = [t[n - 1] * eff[n - 1] for n in range(1, 5)]      # busiest thread's work, contention removed
    # 22 row tiles dealt whole: the busiest thread has 22, 11, 8, 6 of them (the K and packing terms
    # are per thread too, so the ratios hold to the other steps' share)
    assert kernel[1] / kernel[0] == pytest.approx(11 / 22, rel=0.05)
    assert kernel[3] / kernel[0] == pytest.approx(6 / 22, rel=0.05)
    fc = fc_op(9216, 4096)
    for ep in ("B1", "B4", "s2"):
        e = platform.ep(ep)
        g = platform.core_type(platform.cluster(e.cluster).core_type).gemm2
        stream = 4096 * 9216 * 4 / (e.cores * g.gemv_GBps_per_core * 1e9)
        assert truth.op_time(fc, e) == pytest.approx(stream, rel=0.05)        # memory-bound
    # interface: params/side_time add up to the op's time
    w = load_workload("squeezenet")
    for op in w.ops[:6]:
        q = truth.params("little")
        assert q.overhead_s + truth.side_time(op, q, 4)[0] == pytest.approx(truth.op_time(op, platform.ep("s4")),
                                                                            rel=1e-9)
    assert isinstance(make_truth(platform, "roofline"), PipeitGroundTruth)
    with pytest.raises(HetsimError, match="ground truth 'nope': allowed: roofline, gemm2"):
        make_truth(platform, "nope")


# -- the predictor (eqs. 5-8) ------------------------------------------------------------------------------
class _LinearTruth:
    """A ground truth that *is* eqs. 5 and 7: the predictor must reproduce it exactly."""

    betas = np.array([2e-7, 3e-7, 5e-7, 1e-9, 2e-9, 3e-9, 4e-11, 1e-4])
    alphas = (3e-5, 2e-6, 5e-5)

    def __init__(self, platform):
        self.platform = platform

    def params(self, cluster, state=None):
        c = self.platform.cluster(cluster)
        return CoreParams(cluster, c.cores, 1.0, 1.0, 1.0, 1.0, math.inf, math.inf, 0.0, 8, None)

    def side_time(self, op, p, threads, share=1.0):
        n, k, m = op.gemm
        single = float(eq5_features([n], [k], [m])[0] @ self.betas)
        if op.kind == "fc":
            return 1e-9 * k * m + 2e-5 * threads, 0.0
        if threads == 1:
            return single, 0.0
        return float(eq7_time(single, n, threads, 8, self.alphas)), 0.0


def test_predictor_reproduces_a_linear_ground_truth_exactly():
    platform = load_platform("hikey970")
    truth = _LinearTruth(platform)
    pred = PipeitPredictor.fit(platform, truth)
    for ctype in ("cortex-a73", "cortex-a53"):
        np.testing.assert_allclose(pred.conv[ctype].betas, truth.betas, rtol=1e-6, atol=1e-15)
        np.testing.assert_allclose(pred.conv[ctype].alphas, truth.alphas, rtol=1e-6)
    w = load_workload("resnet50")
    for ep_name in ("B1", "B3", "s4"):
        ep = platform.ep(ep_name)
        for layer in w.layers[:53]:
            expected = truth.side_time(layer.major, None, ep.cores)[0]
            assert pred.predict_op(layer.major, ep) == pytest.approx(expected, rel=1e-6)


def test_predictor_on_the_ground_truth_and_its_cost_model_interface(calibrated):
    platform, truth = calibrated
    pred = PipeitPredictor.fit(platform, truth)
    w = load_workload("squeezenet")
    t = pred.layer_times(w, platform.ep("B4"))
    major = np.array([pred.predict_op(layer.major, platform.ep("B4")) for layer in w.layers])
    np.testing.assert_allclose(t, major)             # folded ops are not predicted by default
    folded = PipeitPredictor.fit(platform, truth, include_folded=True).layer_times(w, platform.ep("B4"))
    assert np.all(folded >= t) and folded.sum() > t.sum()
    truth_t = truth.layer_times(w, platform.ep("B4"))
    assert np.mean(np.abs(t - truth_t) / truth_t) < 0.25
    with pytest.raises(HetsimError, match="include_folded"):
        PipeitPredictor(platform, include_folded=True)


def test_the_t_matrix_replays_through_the_measured_cost_model(calibrated):
    from hetsim.cost import MeasuredCostModel

    platform, truth = calibrated
    w = load_workload("mobilenet")
    eps = [platform.ep(e) for e in ("B2", "s3")]
    replay = MeasuredCostModel(platform, truth.layer_table(w, eps))
    for ep in eps:
        np.testing.assert_allclose(replay.layer_times(w, ep), truth.layer_times(w, ep), rtol=1e-12)


def test_pipeit_design_runs_on_a_platform(calibrated):
    platform, truth = calibrated
    w = load_workload("resnet50")
    d = pipeit_design(platform, w, truth)
    assert d.pipeline.stages[0].ep.name.startswith("B") and d.pipeline.stages[-1].ep.name.startswith("s")
    assert sum(s.ep.cores for s in d.pipeline.stages) <= 8
    assert d.allocation[0][0] == 1 and d.allocation[-1][1] == 54
    small = load_platform("hikey970", ["clusters.big.cores=3", "clusters.little.cores=2"])
    d3 = pipeit_design(small, w, PipeitGroundTruth(small))
    assert sum(s.ep.cores for s in d3.pipeline.stages if s.ep.cluster == "big") <= 3


# -- kernel-level co-execution ------------------------------------------------------------------------------
def test_kernel_level_reduces_to_one_cluster_and_penalises_both(calibrated):
    platform, truth = calibrated
    w = load_workload("googlenet")
    kl = KernelLevel(truth, hmp_slowdown=0.3)
    np.testing.assert_allclose(kl.layer_times(w, 4, 0), truth.layer_times(w, platform.ep("B4")))
    np.testing.assert_allclose(kl.layer_times(w, 0, 4, small_share=1.0), truth.layer_times(w, platform.ep("s4")))
    np.testing.assert_allclose(kl.layer_times(w, 4, 4, small_share=0.0), truth.layer_times(w, platform.ep("B4")))
    # ARM-CL's default gives every thread the same work: 4B+4s puts half of it on the Small cluster.
    assert kl.throughput(w, 4, 4) == pytest.approx(kl.throughput(w, 4, 4, small_share=0.5))
    assert KernelLevel(truth, 0.0).throughput(w, 4, 4, 0.3) > kl.throughput(w, 4, 4, 0.3)
    with pytest.raises(HetsimError, match="clusters have"):
        kl.throughput(w, 5, 0)
    with pytest.raises(HetsimError, match="hmp_slowdown"):
        KernelLevel(truth, -0.1)


# -- power ---------------------------------------------------------------------------------------------------
def test_overlap_and_active_power():
    assert overlap_s([(0, 2), (1, 3), (5, 6)], [(2.5, 5.5)]) == pytest.approx(1.0)
    assert overlap_s([(0, 1)], [(1, 2)]) == 0.0
    p = load_platform("hikey970", ["power.coherence_W=1.5"])
    b4, s2 = p.ep("B4"), p.ep("s2")
    a73 = p.core_type("cortex-a73").level("max")
    a53 = p.core_type("cortex-a53").level("max")
    busy = [(b4, 10.0), (s2, 5.0)]
    expected = (10 * 4 * (a73.active_W_per_core - a73.idle_W_per_core)
                + 5 * 2 * (a53.active_W_per_core - a53.idle_W_per_core) + 1.5 * 4.0) / 10.0
    assert active_power_W(p, busy, 10.0, coherent_s=4.0) == pytest.approx(expected)
    assert energy_J(p, busy, 10.0, coherent_s=4.0) - energy_J(p, busy, 10.0) == pytest.approx(6.0)


# -- the reproduction ----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_quick_reproduction_claims_pass_or_are_known_disagreements(tmp_path):
    """Fails on a claim that fails without a reason in hetsim/experiments/known_disagreements.yaml, and on
    a listed disagreement that starts to agree."""
    from hetsim.experiment import (
        ClaimClass,
        claim_problems,
        run_experiment,
        select,
        write_outcome,
        write_scorecard,
    )

    outcomes = [run_experiment(e, quick=True) for e in select(["pipeit"], False)]
    assert [o.experiment.id for o in outcomes] == ["table1", "calibration", "table3", "table4", "table5", "table6",
                                                   "table7", "table8", "fig3", "fig5", "fig6", "fig8", "fig9", "fig12"]
    problems = [f"{o.experiment.id}: {p}" for o in outcomes for p in claim_problems(o)]
    assert all(isinstance(c.kind, ClaimClass) for o in outcomes for c in o.artifact.claims)
    assert not problems, "\n".join(problems)
    for o in outcomes:
        assert not o.artifact.table.empty
        write_outcome(o, tmp_path)
    md, _ = write_scorecard(outcomes, tmp_path, quick=True)
    assert "FAIL** (known, model gap:" in md.read_text()
    assert (tmp_path / "pipeit" / "table4.csv").stat().st_size > 0
    assert (tmp_path / "pipeit" / "fig9.png").read_bytes()[:4] == b"\x89PNG"
