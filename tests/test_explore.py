"""Explorers: the 000 digest §9 verification vectors, the tuning clock, determinism, the
design-space limit, parameter validation and the algorithms' invariants, on hetsim's own explorers
and platforms (Pipe-search's and Shisha's are tested with their papers, hetsim_papers/*/tests)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from hetsim.analytic import SplitScorer
from hetsim.errors import HetsimError
from hetsim.exploration import (
    Configuration,
    MaxClock,
    MaxTrials,
    Measurement,
    PipelineProblem,
    TargetThroughput,
    core_groups,
    explore,
    explore_seeds,
    make_explorer,
    summarize,
)
from hetsim.exploration.baselines import (
    ExhaustiveSearch,
    HillClimbing,
    RandomWalk,
    SimulatedAnnealing,
)
from hetsim.exploration.database import generate_database
from hetsim.exploration.problem import CoreGroups
from hetsim.options import RunOptions
from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim.workload.splits import count_compositions, count_eq4_with_dups, cv_rank

SYNTH1 = [1, 4, 8, 4, 8, 8, 4]
SYNTH2 = [1, 9, 4, 8, 5, 4, 8, 5, 7, 1, 1, 1, 4, 8, 22]
SYNTH3 = [1, 9, 4, 8, 20, 2, 22, 3, 4, 8, 7, 11, 11]


@pytest.fixture(scope="module")
def vgg16():
    return load_workload("vgg16")


@pytest.fixture(scope="module")
def tx2_problem(vgg16):
    tx2 = load_platform("jetson-tx2", dvfs="governor1")
    return PipelineProblem(tx2, vgg16, assignment=core_groups(tx2, cores=4), count_duplicates=True)


@pytest.fixture(scope="module")
def rk_vgg16():
    # 21 layers, 3 stages on rk3588's 4 places (npu, gpu, big, little, each whole; the NPU runs every
    # op of VGG16): 190 splits x 24 orders = 4560 configurations.
    return PipelineProblem("rk3588", "vgg16", depths=[3])


@pytest.fixture(scope="module")
def rk_vgg16_4():
    return PipelineProblem("rk3588", "vgg16", depths=[4])


# -- §9 verification vectors ------------------------------------------------------------------
def test_design_space_counts_1970_and_1350(tx2_problem):
    assert [count_eq4_with_dups(21, k) for k in (2, 3, 4)] == [20, 222, 1728]
    assert sum(count_compositions(21, k) for k in (2, 3, 4)) == 1350
    assert tx2_problem.design_space_size == 1970
    assert tx2_problem.distinct_space_size == 1350
    db = generate_database(tx2_problem.layer_weights(), (2, 3, 4), duplicates=True)
    assert {p: len(lst) for p, lst in db.lists.items()} == {2: 20, 3: 222, 4: 1728}
    assert db.size == 1350


def test_vgg16_seeds_and_ranks(tx2_problem):
    w = tx2_problem.layer_weights()
    for tie_order in ("eq4", "eq4-reversed", "lexicographic"):
        db = generate_database(w, (2, 3, 4), tie_order)
        assert [db.seed(p) for p in (2, 3, 4)] == [(8, 13), (6, 5, 10), (4, 4, 4, 9)]
        ranks = [db.rank(s) for s in [(6, 5, 10), (7, 4, 10), (9, 12), (5, 16)]]
        assert ranks == [1, 3, 2, 7]
    assert [cv_rank(w, s) for s in [(6, 5, 10), (7, 4, 10), (9, 12), (5, 16)]] == [1, 3, 2, 7]
    assert round(db.cv((8, 13)) * 100, 1) == 3.2
    assert round(db.cv((4, 4, 4, 9)) * 100, 1) == 20.1


def test_synth_cvs_and_ranks_within_tolerance():
    cases = [(SYNTH1, (3, 2, 2), 3.82, None), (SYNTH1, (4, 1, 1, 1), 51.49, 6), (SYNTH1, (5, 1, 1), 73.82, 10),
             (SYNTH2, (4, 7, 4), 18.53, 8), (SYNTH2, (8, 6, 1), 35.36, 22),
             (SYNTH3, (3, 1, 2, 1, 4, 2), 29.82, 9), (SYNTH3, (7, 4, 2), 56.57, 22)]
    for w, split, cv_pct, paper_rank in cases:
        db = generate_database(w, range(2, 7))
        assert round(db.cv(split) * 100, 2) == cv_pct
        if paper_rank is not None:  # digest §9: accept +-2 (tie ordering)
            assert abs(db.rank(split) - paper_rank) <= 2
            assert abs(db.position(split) - paper_rank) <= 2


def test_core_groups_on_tx2():
    tx2 = load_platform("jetson-tx2")
    four, six = core_groups(tx2, cores=4), core_groups(tx2)
    assert [four(k) for k in four.depths] == [("D2", "A2"), ("D2", "A1", "A1"), ("D1", "D1", "A1", "A1")]
    # A stage that would span both clusters keeps its majority cluster (digest §8 item 6).
    assert six(2) == ("D2", "A4")
    assert six(6) == ("D1", "D1", "A1", "A1", "A1", "A1")
    # Cores of a minority cluster with no neighbouring stage on it stay idle.
    three = CoreGroups(("a", "a", "a", "b", "c", "c"), (("a", "X"), ("b", "Y"), ("c", "Z")))
    assert three(2) == ("X3", "Z2") and three(3) == ("X2", "X1", "Z2")


# -- algorithms against exhaustive search --------------------------------------------------
def test_exhaustive_search_equals_split_scorer(rk_vgg16):
    p = rk_vgg16
    res = explore(p, ExhaustiveSearch())
    assert res.n_trials == res.n_distinct == p.distinct_space_size == 4560
    scorer = SplitScorer(p.platform, p.workload, p.cost, [p.platform.ep(e) for e in p.eps])
    pipe, fps = scorer.score(3).best()
    assert res.best_fps == pytest.approx(fps, rel=1e-12)
    assert str(pipe) == res.best_mapping
    # The fast path logs what measuring would have: same numbers as measuring one by one.
    one = p.measure(res.best)
    row = res.trials.loc[res.trials["mapping"] == res.best_mapping].iloc[0]
    assert row["throughput_fps"] == pytest.approx(one.throughput_fps)
    assert row["cost_s"] == pytest.approx(one.cost_s)
    assert res.database_s > 0 and res.trials["clock_s"].iloc[0] > res.database_s


def test_hill_climbing_never_accepts_worse(rk_vgg16_4):
    for seed in range(5):
        for explorer in (HillClimbing(), HillClimbing(vary_depth=True)):
            p = rk_vgg16_4 if not explorer.vary_depth else PipelineProblem(
                "rk3588", "vgg16", depths=[2, 3, 4])
            res = explore(p, explorer, seed=seed)
            path = res.trials.set_index("trial").loc[res.info["accepted_trials"], "throughput_fps"]
            assert (np.diff(path.to_numpy()) > 0).all()
            assert res.best_fps == res.trials["throughput_fps"].max()


# -- measurement and tuning clock ------------------------------------------------------------
def test_tuning_clock_is_monotone_and_slow_configurations_cost_more(rk_vgg16):
    p = rk_vgg16
    fast = p.measure(Configuration((7, 7, 7), ("npu", "gpu", "big")))
    slow = p.measure(Configuration((1, 1, 19), ("npu", "gpu", "big")))
    assert slow.throughput_fps < fast.throughput_fps and slow.cost_s > fast.cost_s
    assert fast.cost_s == pytest.approx(sum(fast.stage_times_s))    # Paper I: sum of stage times
    for explorer in (RandomWalk(), SimulatedAnnealing(), HillClimbing()):
        res = explore(p, explorer, termination=MaxTrials(60), seed=3)
        clock = res.trials["clock_s"].to_numpy()
        assert (np.diff(clock) >= 0).all()
        assert clock[-1] == pytest.approx(res.trials["cost_s"].sum() + res.database_s)
        assert (res.trials.loc[res.trials["cached"], "cost_s"] == 0).all()
    repeats = PipelineProblem("rk3588", "vgg16", depths=[3],
                              measurement=Measurement(frames_per_trial=3))
    assert repeats.measure(Configuration((7, 7, 7), ("npu", "gpu", "big"))).cost_s == \
        pytest.approx(3 * fast.cost_s)


def test_stream_measurement_costs_the_makespan():
    p = PipelineProblem("rk3588", "vgg16", depths=[3],
                        measurement=Measurement(mode="stream", frames_per_trial=5))
    r = p.measure(Configuration((7, 7, 7), ("npu", "gpu", "big")))
    assert r.cost_s == pytest.approx(sum(r.stage_times_s) + 4 * max(r.stage_times_s))
    des = PipelineProblem("rk3588", "vgg16", depths=[3],
                          measurement=Measurement(mode="stream", engine="des", frames_per_trial=5,
                                                  noise_sigma=0.02))
    a = explore(des, HillClimbing(n_stages=3), seed=1)
    b = explore(des, HillClimbing(n_stages=3), seed=1)
    assert a.trials.equals(b.trials) and a.best_fps > 0


def test_noise_cache_and_remeasure():
    cfg = Configuration((7, 7, 7), ("npu", "gpu", "big"))
    noisy = PipelineProblem("rk3588", "vgg16", depths=[3], measurement=Measurement(noise_sigma=0.05))
    rng = np.random.default_rng(0)
    assert noisy.measure(cfg, rng).throughput_fps != noisy.measure(cfg, rng).throughput_fps

    class Twice(HillClimbing):
        def run(self, session):
            session.measure(cfg)
            session.measure(cfg)
            return cfg

    cached = explore(noisy, Twice())
    assert list(cached.trials["cached"]) == [False, True] and cached.trials["cost_s"].iloc[1] == 0
    again = PipelineProblem("rk3588", "vgg16", depths=[3],
                            measurement=Measurement(noise_sigma=0.05, remeasure=True))
    res = explore(again, Twice())
    assert not res.trials["cached"].any() and res.trials["cost_s"].iloc[1] > 0
    assert res.n_distinct == 1 and res.n_measured == 2


# -- determinism, terminations, the trial table ------------------------------------------------
@pytest.mark.parametrize("explorer", [RandomWalk(), SimulatedAnnealing()])
def test_same_seed_same_trials_different_seed_differs(rk_vgg16_4, explorer):
    a = explore(rk_vgg16_4, explorer, termination=MaxTrials(40), seed=7)
    b = explore(rk_vgg16_4, explorer, termination=MaxTrials(40), seed=7)
    c = explore(rk_vgg16_4, explorer, termination=MaxTrials(40), seed=8)
    assert a.trials.equals(b.trials)
    assert not a.trials["mapping"].equals(c.trials["mapping"])


def test_terminations_and_trial_table(rk_vgg16_4):
    p = rk_vgg16_4
    res = explore(p, RandomWalk(), termination=MaxTrials(25))
    assert res.n_trials == 25 and res.stop_reason == "max_trials"
    assert list(res.trials.columns) == list(PipelineProblem.trial_columns)
    t = res.trials
    assert (t["best_fps_so_far"] == t["throughput_fps"].cummax()).all()
    assert t["trial"].tolist() == list(range(1, 26))
    assert (t["depth"] == 4).all() and res.best_fps == t["throughput_fps"].max()
    target = 0.9 * t["throughput_fps"].max()
    hit = explore(p, RandomWalk(), termination=TargetThroughput(target))
    assert hit.stop_reason == "target_throughput" and hit.trials["throughput_fps"].iloc[-1] >= target
    budget = explore(p, SimulatedAnnealing(), termination=[MaxTrials(10_000), MaxClock(10.0)])
    assert budget.stop_reason == "max_clock" and budget.trials["clock_s"].iloc[-2] < 10.0
    assert 0 < res.fraction_explored <= 1 and 0 < res.fraction_splits_explored <= 1
    conv = res.convergence()
    assert conv["best_fps_so_far"].is_monotonic_increasing
    with pytest.raises(HetsimError, match="termination"):
        explore(p, RandomWalk())
    runs = explore_seeds(p, SimulatedAnnealing(max_trials=20), seeds=3)
    table = summarize(runs)
    assert table["seed"].tolist() == [0, 1, 2] and (table["trials"] <= 20).all()


# -- refusals -------------------------------------------------------------------------------
def test_design_space_limit_refuses_with_the_count():
    p = PipelineProblem("rk3588", "vgg16", depths=[3], limit=1000)
    with pytest.raises(HetsimError, match="4,560") as err:
        explore(p, ExhaustiveSearch())
    assert "\n" not in str(err.value) and "force" in str(err.value)
    big = PipelineProblem("rk3588", "resnet50-shisha", depths=[2, 3, 4], limit=10_000)
    with pytest.raises(HetsimError, match="470,988"):
        explore(big, ExhaustiveSearch())
    forced = PipelineProblem("rk3588", "vgg16", depths=[3], limit=1000, force=True)
    assert explore(forced, ExhaustiveSearch(charge_database=False)).n_trials == 4560


@pytest.mark.parametrize("explorer, param", [
    (HillClimbing(n_stages=3), "n_stages"),
    (HillClimbing(patience=-1), "patience"),
    (HillClimbing(start="somewhere"), "start"),
    (SimulatedAnnealing(cooling=1.5), "cooling"),
    (SimulatedAnnealing(t0_fraction=0), "t0_fraction"),
    (ExhaustiveSearch(order="backwards"), "order"),
])
def test_parameter_validation_names_the_parameter(rk_vgg16_4, explorer, param):
    with pytest.raises(HetsimError, match=param) as err:
        explore(rk_vgg16_4, explorer)
    assert "\n" not in str(err.value)


def test_problem_and_measurement_validation():
    with pytest.raises(HetsimError, match="mode"):
        Measurement(mode="pipelined")
    with pytest.raises(HetsimError, match="noise_sigma"):
        Measurement(noise_sigma=-1)
    # The one noise range (hetsim.bounds.NOISE_SIGMA), as RunOptions: sigma 1e6 made Shisha answer inf.
    for sigma in (1e6, 5.0 + 1e-9, math.inf, math.nan):
        with pytest.raises(HetsimError) as err:
            Measurement(noise_sigma=sigma)
        assert str(err.value).count("\n") == 0
        assert str(err.value).startswith("Measurement: noise_sigma=") and "<= 5.0" in str(err.value)
    assert Measurement(noise_sigma=5.0).noise_sigma == 5.0
    with pytest.raises(HetsimError, match="--noise"):
        RunOptions.make(noise_sigma=1e6)
    with pytest.raises(HetsimError, match="engine"):
        Measurement(engine="des")
    with pytest.raises(HetsimError, match="share clusters"):
        PipelineProblem("jetson-tx2", "vgg16", eps=["D1", "D2"])
    # Without eps, EPs that share clusters give way to each cluster whole (issue 13).
    assert sorted(PipelineProblem("jetson-tx2", "vgg16").eps) == ["a57", "denver"]
    with pytest.raises(HetsimError, match="depth"):
        PipelineProblem("rk3588", "vgg16", depths=[5])
    with pytest.raises(HetsimError, match="unknown algorithm"):
        make_explorer("GA")
    with pytest.raises(HetsimError, match="outside the design space"):
        p = PipelineProblem("rk3588", "vgg16", depths=[3])
        explore(p, HillClimbing(start=Configuration((10, 11), ("gpu", "big"))))
    with pytest.raises(HetsimError, match="seed"):
        explore(PipelineProblem("rk3588", "vgg16", depths=[4]), HillClimbing(), seed=-1)
    assert repr(make_explorer("HC", patience=15)) == "HillClimbing(patience=15)"
    assert make_explorer("SA").name == "SA" and math.isclose(make_explorer("SA").cooling, 0.95)


def test_a_fixed_assignment_is_a_space_of_splits():
    fixed = PipelineProblem("rk3588", "vgg16", assignment={3: ["npu", "big", "gpu"]})
    assert fixed.design_space_size == 190
    assert explore(fixed, ExhaustiveSearch()).n_trials == 190
