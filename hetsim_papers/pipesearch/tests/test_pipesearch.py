"""Pipe-search (Paper I) as an explorer: the exhaustive optimum on VGG16 in a few % of the space,
its walk, hints, ties and parameters. Moved from tests/test_explore.py, which tests hetsim's own
explorers."""

from __future__ import annotations

import pytest

from hetsim.errors import HetsimError
from hetsim.exploration import PipelineProblem, core_groups, explore, make_explorer
from hetsim.exploration.baselines import ExhaustiveSearch
from hetsim.platform import load_platform
from hetsim.workload import load_workload
from hetsim_papers.pipesearch.pipesearch import PipeSearch


@pytest.fixture(scope="module")
def vgg16():
    return load_workload("vgg16")


@pytest.fixture(scope="module")
def tx2_problem(vgg16):
    tx2 = load_platform("jetson-tx2", dvfs="governor1")
    return PipelineProblem(tx2, vgg16, assignment=core_groups(tx2, cores=4), count_duplicates=True)


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


def test_the_database_limit_refuses_with_the_count():
    # Pipe-search's database holds the splits only: 49 + 1176 + 18424 of ResNet50's 50 layers.
    big = PipelineProblem("rk3588", "resnet50-shisha", depths=[2, 3, 4], limit=10_000)
    with pytest.raises(HetsimError, match="19,649"):
        explore(big, PipeSearch())


@pytest.mark.parametrize("explorer, param", [
    (PipeSearch(alpha=0), "alpha"),
    (PipeSearch(tie_order="random"), "tie_order"),
])
def test_parameter_validation_names_the_parameter(explorer, param):
    with pytest.raises(HetsimError, match=param) as err:
        explore(PipelineProblem("rk3588", "vgg16", depths=[4]), explorer)
    assert "\n" not in str(err.value)


def test_open_choices_are_parameters(tx2_problem):
    strict = explore(tx2_problem, PipeSearch(ties="fail"))
    assert strict.n_trials <= explore(tx2_problem, PipeSearch()).n_trials
    assert repr(make_explorer("PS", alpha=15)) == "PipeSearch(alpha=15)"


# -- objectives and the command line (moved from tests/test_explore_objectives.py) -----------------------
def test_pipesearch_optimises_throughput_only():
    from helpers import chain_workload, two_cluster_platform

    problem = PipelineProblem(two_cluster_platform(), chain_workload([8, 16, 16, 32, 32, 16, 16, 8]), depths=[2],
                              objective="latency")
    with pytest.raises(HetsimError, match="optimises throughput only, not latency; for --objective "
                                          "latency use .*NSGA-II-pipe"):
        explore(problem, make_explorer("PS"))


def test_the_command_line_defaults_to_pipesearch_over_cores(hetsim):
    import json

    from helpers import assert_one_line_error

    p = hetsim("explore", "-p", "jetson-tx2", "-w", "vgg16", "--cores", "4", "--json")
    assert json.loads(p.stdout)["algorithm"] == "Pipe-search" and "--cores: searching with PS" in p.stderr
    p = hetsim("explore", "-p", "jetson-tx2", "-w", "vgg16", "-a", "PS", "--cores", "4", "--dvfs", "governor1",
               "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["best_fps"] > 0
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "PS", "--objective", "latency"),
                          "for --objective latency use")
