"""The simulations and explorations Paper I's figures and tables read, cached: each runs once per
process (they are deterministic), whichever figure asks first."""

from __future__ import annotations

import collections
from functools import lru_cache

from hetsim.exploration import (
    Configuration,
    Exploration,
    Measurement,
    PipelineProblem,
    TargetThroughput,
    TrialResult,
    core_groups,
    explore,
)
from hetsim.exploration.baselines import ExhaustiveSearch, RandomWalk
from hetsim.exploration.database import ConfigurationDatabase, generate_database
from hetsim.sweep import explore_seeds
from hetsim.workload import load_workload
from hetsim.workload.splits import eq4_with_dups
from hetsim_papers.pipesearch.experiments.calibration import calibrated_tx2, cost_model, split_text
from hetsim_papers.pipesearch.experiments.paper import RW_TARGET_FPS
from hetsim_papers.pipesearch.pipesearch import PipeSearch

#: Pipe-search as run here: the listing's patience, and equal T_s counted as non-improving (on a
#: noise-free simulator, stages that keep the same bottleneck give exactly equal T_s; on the TX2
#: noise decides such ties, the listing's reset would walk the plateau). docs/papers/pipesearch.md.
PS_TIES = "fail"
#: Paper I's database is Eq. 3 CVs of Eq. 4 splits, computed in microseconds: no clock charge.
MEASUREMENT = Measurement(database_cost_s=0.0)


def parse_split(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.strip("[]").split(","))


@lru_cache(maxsize=32)
def problem(governor: str, workload: str = "vgg16", cores: int = 4) -> PipelineProblem:
    """Paper I's design space: depths 2..cores, Eq. 4 counted with duplicates, core rule EPs."""
    tx2 = calibrated_tx2(governor)
    return PipelineProblem(tx2, workload, cost=cost_model(tx2), assignment=core_groups(tx2, cores=cores),
                           count_duplicates=True, measurement=MEASUREMENT)


@lru_cache(maxsize=64)
def pipe_search(governor: str, workload: str = "vgg16", cores: int = 4, alpha: int = 10,
                hints: bool = True) -> Exploration:
    return explore(problem(governor, workload, cores), PipeSearch(alpha=alpha, hints=hints, ties=PS_TIES))


@lru_cache(maxsize=32)
def exhaustive(governor: str, workload: str = "vgg16", cores: int = 4) -> Exploration:
    return explore(problem(governor, workload, cores), ExhaustiveSearch())


def database(workload: str, depths) -> ConfigurationDatabase:
    """Algorithm 1's CV-sorted database of ``workload`` for ``depths``."""
    return generate_database(load_workload(workload).layer_weights().tolist(), tuple(depths))


def measure(governor: str, split, workload: str = "vgg16", cores: int = 4) -> TrialResult:
    """One trial of ``split`` with the core rule's EPs."""
    p = problem(governor, workload, cores)
    return p.measure(Configuration(tuple(split), p.orders(len(split))[0]))


@lru_cache(maxsize=4)
def eq4_multiplicity(M: int, depths: tuple[int, ...]) -> dict[str, int]:
    """How often each distinct split occurs among Eq. 4's entries (duplicates counted)."""
    return dict(collections.Counter(split_text(s) for k in depths for s in eq4_with_dups(M, k)))


def es_clock_with_duplicates(es: Exploration) -> float:
    """Tuning time of an ES that measures all 1970 Eq. 4 entries (duplicates included), as the
    paper's ES did (Table 3: 1970 trials): each distinct split's trial cost x its multiplicity."""
    cost = dict(zip(es.trials["split"], es.trials["cost_s"], strict=True))
    prob = es.problem
    assert isinstance(prob, PipelineProblem)
    mult = eq4_multiplicity(prob.num_layers, prob.depths)
    return es.database_s + sum(cost[s] * n for s, n in mult.items())


@lru_cache(maxsize=4)
def pipe_search_listing_ties(governor: str = "governor1") -> Exploration:
    """Pipe-search with the listing's tie rule (an equal T_s resets gamma), alpha 10."""
    return explore(problem(governor), PipeSearch(alpha=10, ties="reset"))


@lru_cache(maxsize=4)
def noisy_pipe_searches(seeds: tuple[int, ...], noise_sigma: float = 0.02,
                        governor: str = "governor1") -> list[Exploration]:
    """Pipe-search (alpha 10) with seeded lognormal measurement noise, one run per seed: how robust
    the optimum is when ties are decided by noise, as on the TX2."""
    tx2 = calibrated_tx2(governor)
    noisy = PipelineProblem(tx2, "vgg16", cost=cost_model(tx2), assignment=core_groups(tx2, cores=4),
                            count_duplicates=True,
                            measurement=Measurement(database_cost_s=0.0, noise_sigma=noise_sigma))
    return explore_seeds(noisy, PipeSearch(alpha=10, ties=PS_TIES), seeds)


@lru_cache(maxsize=4)
def random_walks(seeds: tuple[int, ...], governor: str = "governor1") -> list[Exploration]:
    """Table 5's random walk, stopped at RW_TARGET_FPS, one run per seed."""
    return explore_seeds(problem(governor), RandomWalk(), seeds,
                         termination=TargetThroughput(RW_TARGET_FPS))
