"""Explorers: the 000 digest §9 verification vectors, the tuning clock, determinism, the
design-space limit, parameter validation and the algorithms' invariants."""

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
from hetsim_papers.pipesearch.pipesearch import PipeSearch
from hetsim_papers.shisha.shisha import Shisha, balancing_target, move_layer, seed_split

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
def c2_synthnet():
    # 18 layers, 3 stages on 4 chiplets: 136 splits x 24 orders = 3264 configurations.
    return PipelineProblem("chiplet-c2", "synthnet", depths=[3])


@pytest.fixture(scope="module")
def c2_synthnet4():
    return PipelineProblem("chiplet-c2", "synthnet", depths=[4])


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


def test_shisha_seeds():
    assert seed_split(SYNTH1, 3) == (4, 1, 2)
    assert seed_split(SYNTH1, 2) == (4, 3)
    assert seed_split(SYNTH2, 4) == (4, 3, 7, 1)
    assert seed_split(SYNTH1, 3, neighbour_tie="right") == (3, 2, 2)  # §5.3: tie rules matter
    assert seed_split(SYNTH2, 2) == (7, 8)
    assert seed_split(SYNTH3, 5) == (4, 2, 1, 3, 3)


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
def test_exhaustive_search_equals_split_scorer(c2_synthnet):
    p = c2_synthnet
    res = explore(p, ExhaustiveSearch())
    assert res.n_trials == res.n_distinct == p.distinct_space_size == 3264
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


@pytest.mark.parametrize("governor", ["governor1", "governor3"])
def test_pipesearch_finds_exhaustive_optimum_on_vgg16(vgg16, governor):
    tx2 = load_platform("jetson-tx2", dvfs=governor)
    p = PipelineProblem(tx2, vgg16, assignment=core_groups(tx2, cores=4), count_duplicates=True)
    es = explore(p, ExhaustiveSearch())
    ps = explore(p, PipeSearch(alpha=10))
    assert ps.best_fps == pytest.approx(es.best_fps)
    assert ps.n_trials < 0.05 * p.design_space_size      # "2% of the space"
    assert ps.clock_s < es.clock_s / 10
    assert set(ps.trials["phase"]) <= {"init", "phase1", "phase2"}
    assert list(ps.trials["phase"][:3]) == ["init"] * 3   # every depth's seed first


def test_pipesearch_walk_and_no_hints(tx2_problem):
    ps = explore(tx2_problem, PipeSearch(alpha=3))
    seeds = ps.trials[ps.trials["phase"] == "init"]["split"].tolist()
    assert seeds == ["[8,13]", "[6,5,10]", "[4,4,4,9]"]
    nohints = explore(tx2_problem, PipeSearch(alpha=3, hints=False))
    assert nohints.algorithm == "Pipe-search (no hints)"
    assert nohints.trials["split"].iloc[0] == "[10,11]"     # balances layer counts only
    walked = explore(tx2_problem, PipeSearch(alpha=3, duplicates="walk"))
    assert walked.n_trials >= walked.n_measured


def test_shisha_on_chiplets(c2_synthnet4):
    res = explore(c2_synthnet4, Shisha())
    assert res.trials["phase"].iloc[0] == "seed"
    assert res.best_fps == res.trials["throughput_fps"].max()   # returns the best seen
    seed = res.info["seed_configuration"]
    assert seed.split == seed_split(c2_synthnet4.layer_weights(), 4)
    # H3 (Rank_w): the heaviest stage on the first FEP.
    sums = np.add.reduceat(c2_synthnet4.layer_weights(), np.cumsum((0,) + seed.split[:-1]))
    assert seed.eps[int(np.argmax(sums))] == "FEP0"
    es = explore(c2_synthnet4, ExhaustiveSearch(charge_database=False))
    assert res.best_fps <= es.best_fps + 1e-12
    assert res.clock_s < es.clock_s / 100


def test_shisha_never_empties_a_stage():
    assert move_layer((1, 3, 2), 0, 1) is None
    assert move_layer((2, 3, 2), 0, 2) == (1, 3, 3)
    # Slowest stage is the only FEP: fall back to the adjacent lighter stage.
    assert balancing_target(["S0", "F0", "S1"], [1.0, 3.0, 2.0], 1, "nlFEP", {"F0"}) == 0
    p = PipelineProblem("chiplet-c5", "synthnet", depths=[8])  # 18 layers on 8 EPs
    for seed in range(4):
        for start in ("seed", "random"):
            res = explore(p, Shisha(start=start, heuristic="H1"), seed=seed)
            splits = [tuple(map(int, s.strip("[]").split(","))) for s in res.trials["split"]]
            assert all(len(s) == 8 and min(s) >= 1 and sum(s) == 18 for s in splits)


def test_hill_climbing_never_accepts_worse(c2_synthnet4):
    for seed in range(5):
        for explorer in (HillClimbing(), make_explorer("HC_s"), HillClimbing(vary_depth=True)):
            p = c2_synthnet4 if not explorer.vary_depth else PipelineProblem(
                "chiplet-c2", "synthnet", depths=[2, 3, 4])
            res = explore(p, explorer, seed=seed)
            path = res.trials.set_index("trial").loc[res.info["accepted_trials"], "throughput_fps"]
            assert (np.diff(path.to_numpy()) > 0).all()
            assert res.best_fps == res.trials["throughput_fps"].max()


# -- measurement and tuning clock ------------------------------------------------------------
def test_tuning_clock_is_monotone_and_slow_configurations_cost_more(c2_synthnet):
    p = c2_synthnet
    fast = p.measure(Configuration((6, 6, 6), ("FEP0", "FEP1", "SEP0")))
    slow = p.measure(Configuration((1, 1, 16), ("FEP0", "FEP1", "SEP0")))
    assert slow.throughput_fps < fast.throughput_fps and slow.cost_s > fast.cost_s
    assert fast.cost_s == pytest.approx(sum(fast.stage_times_s))    # Paper I: sum of stage times
    for explorer in (RandomWalk(), SimulatedAnnealing(), Shisha()):
        res = explore(p, explorer, termination=MaxTrials(60), seed=3)
        clock = res.trials["clock_s"].to_numpy()
        assert (np.diff(clock) >= 0).all()
        assert clock[-1] == pytest.approx(res.trials["cost_s"].sum() + res.database_s)
        assert (res.trials.loc[res.trials["cached"], "cost_s"] == 0).all()
    repeats = PipelineProblem("chiplet-c2", "synthnet", depths=[3],
                              measurement=Measurement(frames_per_trial=3))
    assert repeats.measure(Configuration((6, 6, 6), ("FEP0", "FEP1", "SEP0"))).cost_s == \
        pytest.approx(3 * fast.cost_s)


def test_stream_measurement_costs_the_makespan():
    p = PipelineProblem("chiplet-c2", "synthnet", depths=[3],
                        measurement=Measurement(mode="stream", frames_per_trial=5))
    r = p.measure(Configuration((6, 6, 6), ("FEP0", "FEP1", "SEP0")))
    assert r.cost_s == pytest.approx(sum(r.stage_times_s) + 4 * max(r.stage_times_s))
    des = PipelineProblem("chiplet-c2", "synthnet", depths=[3],
                          measurement=Measurement(mode="stream", engine="des", frames_per_trial=5,
                                                  noise_sigma=0.02))
    a = explore(des, Shisha(n_stages=3), seed=1)
    b = explore(des, Shisha(n_stages=3), seed=1)
    assert a.trials.equals(b.trials) and a.best_fps > 0


def test_noise_cache_and_remeasure():
    cfg = Configuration((6, 6, 6), ("FEP0", "FEP1", "SEP0"))
    noisy = PipelineProblem("chiplet-c2", "synthnet", depths=[3], measurement=Measurement(noise_sigma=0.05))
    rng = np.random.default_rng(0)
    assert noisy.measure(cfg, rng).throughput_fps != noisy.measure(cfg, rng).throughput_fps

    class Twice(HillClimbing):
        def run(self, session):
            session.measure(cfg)
            session.measure(cfg)
            return cfg

    cached = explore(noisy, Twice())
    assert list(cached.trials["cached"]) == [False, True] and cached.trials["cost_s"].iloc[1] == 0
    again = PipelineProblem("chiplet-c2", "synthnet", depths=[3],
                            measurement=Measurement(noise_sigma=0.05, remeasure=True))
    res = explore(again, Twice())
    assert not res.trials["cached"].any() and res.trials["cost_s"].iloc[1] > 0
    assert res.n_distinct == 1 and res.n_measured == 2


# -- determinism, terminations, the trial table ------------------------------------------------
@pytest.mark.parametrize("explorer", [RandomWalk(), SimulatedAnnealing(), make_explorer("SA_s")])
def test_same_seed_same_trials_different_seed_differs(c2_synthnet4, explorer):
    a = explore(c2_synthnet4, explorer, termination=MaxTrials(40), seed=7)
    b = explore(c2_synthnet4, explorer, termination=MaxTrials(40), seed=7)
    c = explore(c2_synthnet4, explorer, termination=MaxTrials(40), seed=8)
    assert a.trials.equals(b.trials)
    assert not a.trials["mapping"].equals(c.trials["mapping"])


def test_terminations_and_trial_table(c2_synthnet4):
    p = c2_synthnet4
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
    budget = explore(p, SimulatedAnnealing(), termination=[MaxTrials(10_000), MaxClock(30.0)])
    assert budget.stop_reason == "max_clock" and budget.trials["clock_s"].iloc[-2] < 30.0
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
    p = PipelineProblem("chiplet-c2", "synthnet", depths=[3], limit=1000)
    with pytest.raises(HetsimError, match="3,264") as err:
        explore(p, ExhaustiveSearch())
    assert "\n" not in str(err.value) and "force" in str(err.value)
    big = PipelineProblem("chiplet-c2", "resnet50-shisha", depths=[2, 3, 4], limit=10_000)
    with pytest.raises(HetsimError, match="19,649"):
        explore(big, PipeSearch())
    forced = PipelineProblem("chiplet-c2", "synthnet", depths=[3], limit=1000, force=True)
    assert explore(forced, ExhaustiveSearch(charge_database=False)).n_trials == 3264


@pytest.mark.parametrize("explorer, param", [
    (PipeSearch(alpha=0), "alpha"),
    (PipeSearch(tie_order="random"), "tie_order"),
    (Shisha(heuristic="H7"), "heuristic"),
    (Shisha(balancing="nearest"), "balancing"),
    (Shisha(n_stages=3), "n_stages"),
    (HillClimbing(patience=-1), "patience"),
    (HillClimbing(start="somewhere"), "start"),
    (SimulatedAnnealing(cooling=1.5), "cooling"),
    (SimulatedAnnealing(t0_fraction=0), "t0_fraction"),
    (ExhaustiveSearch(order="backwards"), "order"),
])
def test_parameter_validation_names_the_parameter(c2_synthnet4, explorer, param):
    with pytest.raises(HetsimError, match=param) as err:
        explore(c2_synthnet4, explorer)
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
        PipelineProblem("chiplet-c2", "synthnet", depths=[5])
    with pytest.raises(HetsimError, match="unknown algorithm"):
        make_explorer("GA")
    with pytest.raises(HetsimError, match="outside the design space"):
        p = PipelineProblem("chiplet-c2", "synthnet", depths=[3])
        explore(p, HillClimbing(start=Configuration((9, 9), ("FEP0", "SEP0"))))
    with pytest.raises(HetsimError, match="seed"):
        explore(PipelineProblem("chiplet-c2", "synthnet", depths=[4]), Shisha(), seed=-1)
    assert repr(make_explorer("PS", alpha=15)) == "PipeSearch(alpha=15)"
    assert make_explorer("SA_s").name == "SA_s" and math.isclose(make_explorer("SA").cooling, 0.95)


def test_open_choices_are_parameters(c2_synthnet4, tx2_problem):
    p = c2_synthnet4
    last = explore(p, Shisha(returns="last"))
    assert last.best_mapping == last.trials["mapping"].iloc[-1]
    order = ["SEP1", "SEP0", "FEP1", "FEP0"]
    seeded = explore(p, Shisha(ep_order=order, alpha=1))
    assert set(seeded.info["seed_configuration"].eps) == set(order)
    strict = explore(tx2_problem, PipeSearch(ties="fail"))
    assert strict.n_trials <= explore(tx2_problem, PipeSearch()).n_trials
    fixed = PipelineProblem("chiplet-c2", "synthnet", assignment={3: ["FEP0", "SEP0", "FEP1"]})
    assert fixed.design_space_size == 136
    assert explore(fixed, ExhaustiveSearch()).n_trials == 136
    with pytest.raises(HetsimError, match="permutations"):
        explore(fixed, Shisha())
