"""Shisha (Paper II) as an explorer: its seeds (the 000 digest §9 vectors), its runs on the chiplets,
its invariants and parameters, and the local searches started from its seed (HC_s, SA_s). Moved
from tests/test_explore.py, which tests hetsim's own explorers."""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.errors import HetsimError
from hetsim.exploration import MaxTrials, PipelineProblem, explore, make_explorer
from hetsim.exploration.baselines import ExhaustiveSearch
from hetsim_papers.shisha.shisha import Shisha, balancing_target, move_layer, seed_split

SYNTH1 = [1, 4, 8, 4, 8, 8, 4]
SYNTH2 = [1, 9, 4, 8, 5, 4, 8, 5, 7, 1, 1, 1, 4, 8, 22]
SYNTH3 = [1, 9, 4, 8, 20, 2, 22, 3, 4, 8, 7, 11, 11]


@pytest.fixture(scope="module")
def c2_synthnet():
    # 18 layers, 3 stages on 4 chiplets: 136 splits x 24 orders = 3264 configurations.
    return PipelineProblem("chiplet-c2", "synthnet", depths=[3])


@pytest.fixture(scope="module")
def c2_synthnet4():
    return PipelineProblem("chiplet-c2", "synthnet", depths=[4])


def test_shisha_seeds():
    assert seed_split(SYNTH1, 3) == (4, 1, 2)
    assert seed_split(SYNTH1, 2) == (4, 3)
    assert seed_split(SYNTH2, 4) == (4, 3, 7, 1)
    assert seed_split(SYNTH1, 3, neighbour_tie="right") == (3, 2, 2)  # §5.3: tie rules matter
    assert seed_split(SYNTH2, 2) == (7, 8)
    assert seed_split(SYNTH3, 5) == (4, 2, 1, 3, 3)


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


def test_hill_climbing_from_shisha_seed_never_accepts_worse(c2_synthnet4):
    for seed in range(5):
        res = explore(c2_synthnet4, make_explorer("HC_s"), seed=seed)
        path = res.trials.set_index("trial").loc[res.info["accepted_trials"], "throughput_fps"]
        assert (np.diff(path.to_numpy()) > 0).all()
        assert res.best_fps == res.trials["throughput_fps"].max()


def test_shisha_trials_are_charged_on_the_tuning_clock(c2_synthnet):
    res = explore(c2_synthnet, Shisha(), termination=MaxTrials(60), seed=3)
    clock = res.trials["clock_s"].to_numpy()
    assert (np.diff(clock) >= 0).all()
    assert clock[-1] == pytest.approx(res.trials["cost_s"].sum() + res.database_s)
    assert (res.trials.loc[res.trials["cached"], "cost_s"] == 0).all()


def test_sa_from_shisha_seed_same_seed_same_trials(c2_synthnet4):
    explorer = make_explorer("SA_s")
    a = explore(c2_synthnet4, explorer, termination=MaxTrials(40), seed=7)
    b = explore(c2_synthnet4, explorer, termination=MaxTrials(40), seed=7)
    c = explore(c2_synthnet4, explorer, termination=MaxTrials(40), seed=8)
    assert a.trials.equals(b.trials)
    assert not a.trials["mapping"].equals(c.trials["mapping"])
    assert explorer.name == "SA_s"


@pytest.mark.parametrize("explorer, param", [
    (Shisha(heuristic="H7"), "heuristic"),
    (Shisha(balancing="nearest"), "balancing"),
    (Shisha(n_stages=3), "n_stages"),
])
def test_parameter_validation_names_the_parameter(c2_synthnet4, explorer, param):
    with pytest.raises(HetsimError, match=param) as err:
        explore(c2_synthnet4, explorer)
    assert "\n" not in str(err.value)


def test_open_choices_are_parameters(c2_synthnet4):
    p = c2_synthnet4
    last = explore(p, Shisha(returns="last"))
    assert last.best_mapping == last.trials["mapping"].iloc[-1]
    order = ["SEP1", "SEP0", "FEP1", "FEP0"]
    seeded = explore(p, Shisha(ep_order=order, alpha=1))
    assert set(seeded.info["seed_configuration"].eps) == set(order)
    fixed = PipelineProblem("chiplet-c2", "synthnet", assignment={3: ["FEP0", "SEP0", "FEP1"]})
    with pytest.raises(HetsimError, match="permutations"):
        explore(fixed, Shisha())
    with pytest.raises(HetsimError, match="seed"):
        explore(p, Shisha(), seed=-1)


# -- objectives and the command line (moved from tests/test_explore_objectives.py) -----------------------
def test_shisha_optimises_throughput_only():
    from helpers import chain_workload, two_cluster_platform

    problem = PipelineProblem(two_cluster_platform(), chain_workload([8, 16, 16, 32, 32, 16, 16, 8]), depths=[2],
                              objective="latency")
    with pytest.raises(HetsimError, match="optimises throughput only, not latency; for --objective "
                                          "latency use .*NSGA-II-pipe"):
        explore(problem, make_explorer("Shisha"))


def test_the_command_line_names_shishas_parameters_and_its_space(hetsim):
    from helpers import assert_one_line_error

    base = ("explore", "-p", "hikey970", "-w", "alexnet")
    assert_one_line_error(hetsim(*base, "-a", "Shisha", "--param", "nope=1"),
                          "--param nope: Shisha has no parameter 'nope'; its parameters (with defaults): heuristic='H3'")
    assert_one_line_error(hetsim(*base, "-a", "Shisha", "--param", "alpha=0"),
                          "--algorithm Shisha / --param: Shisha: alpha=0 is out of range")
    assert_one_line_error(hetsim("explore", "-p", "jetson-tx2", "-w", "vgg16", "--cores", "4", "-a", "Shisha"),
                          "--algorithm Shisha gives each stage a whole EP")
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "resnet50", "-a", "Shisha", "--param", "depth=2"),
                          "--param depth: Shisha has no parameter 'depth'")


def test_shisha_in_the_command_line(hetsim, tmp_path):
    """(moved from tests/test_cli.py) Shisha on chiplet-c2, its trials written; its platforms listed;
    the inter-chiplet latency felt through --set."""
    import json

    trials = tmp_path / "trials.csv"
    p = hetsim("explore", "-p", "chiplet-c2", "-w", "resnet50-shisha", "-a", "Shisha", "--depth", "4",
               "--param", "heuristic=H1", "--json", "--trials", str(trials))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["algorithm"] == "Shisha" and out["best_fps"] > 0 and out["trials"] >= 1
    assert trials.read_text().splitlines()[0].startswith("trial,")
    assert "chiplet-c3" in hetsim("platforms", "list").stdout
    c5 = ["simulate", "-p", "chiplet-c5", "-w", "synthnet", "--engine", "analytic", "--json",
          "-m", "FEP0:1-3|FEP1:4-6|FEP2:7-9|FEP3:10-12|SEP0:13-14|SEP1:15-16|SEP2:17|SEP3:18"]
    fast = json.loads(hetsim(*c5).stdout)["throughput_fps"]
    slow = json.loads(hetsim(*c5, "--set", "links.nop.latency_ns=1e9").stdout)["throughput_fps"]
    assert slow < fast
