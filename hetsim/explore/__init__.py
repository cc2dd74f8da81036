"""Explorers: search algorithms for pipeline mappings behind one interface (pymoo's problem /
algorithm / termination triad, scikit-learn's parameter conventions).

    >>> from hetsim.explore import PipelineProblem, Shisha, explore
    >>> problem = PipelineProblem("chiplet-c2", "resnet50-shisha", depths=[4])
    >>> result = explore(problem, Shisha(heuristic="H3"), seed=0)
    >>> result.best_mapping, result.best_fps, result.n_trials, result.clock_s
    >>> result.trials                      # tidy: one row per trial, best-so-far columns

Algorithms (``make_explorer(name)`` builds them by the papers' names):

* ``PS`` / ``PS-nohints``: Pipe-search (Paper I), :mod:`hetsim.explore.pipesearch`
* ``Shisha``: Shisha with heuristics H1-H6 (Paper II), :mod:`hetsim.explore.shisha`
* ``ES``, ``RW``, ``HC``, ``SA``, ``HC_s``, ``SA_s``: baselines, :mod:`hetsim.explore.baselines`

See docs/papers/pipesearch.md and docs/papers/shisha.md for every choice the papers leave open.
"""

from hetsim.errors import HetsimError
from hetsim.explore.base import (
    TRIAL_COLUMNS,
    Exploration,
    Explorer,
    Session,
    all_trials,
    explore,
    explore_seeds,
    summarize,
)
from hetsim.explore.baselines import (
    ExhaustiveSearch,
    HC_s,
    HillClimbing,
    RandomWalk,
    SA_s,
    SimulatedAnnealing,
    random_neighbour,
)
from hetsim.explore.pipesearch import ConfigurationDatabase, PipeSearch, generate_database
from hetsim.explore.problem import (
    DEFAULT_SPACE_LIMIT,
    Configuration,
    CoreGroups,
    Measurement,
    PipelineProblem,
    TrialResult,
    core_groups,
)
from hetsim.explore.shisha import HEURISTICS, Shisha, assign_eps, ep_order, seed_split, shisha_seed
from hetsim.explore.termination import MaxClock, MaxTrials, TargetThroughput, Termination

#: The papers' algorithm names -> a factory taking the explorer's keyword parameters.
ALGORITHMS = {
    "PS": PipeSearch,
    "PS-nohints": lambda **kw: PipeSearch(hints=False, **kw),
    "Shisha": Shisha,
    "ES": ExhaustiveSearch,
    "RW": RandomWalk,
    "HC": HillClimbing,
    "SA": SimulatedAnnealing,
    "HC_s": HC_s,
    "SA_s": SA_s,
}


def make_explorer(name: str, **params) -> Explorer:
    """An explorer by its name in the papers (``"PS"``, ``"Shisha"``, ``"SA_s"``, ...)."""
    try:
        factory = ALGORITHMS[name]
    except KeyError:
        raise HetsimError(f"unknown algorithm {name!r}; allowed: {', '.join(ALGORITHMS)}") from None
    try:
        return factory(**params)
    except TypeError as e:
        raise HetsimError(f"algorithm {name}: {e}") from None


__all__ = [
    "ALGORITHMS", "DEFAULT_SPACE_LIMIT", "HEURISTICS", "TRIAL_COLUMNS", "Configuration",
    "ConfigurationDatabase", "CoreGroups", "ExhaustiveSearch", "Exploration", "Explorer", "HC_s",
    "HillClimbing", "MaxClock", "MaxTrials", "Measurement", "PipeSearch", "PipelineProblem",
    "RandomWalk", "SA_s", "Session", "Shisha", "SimulatedAnnealing", "TargetThroughput", "Termination",
    "TrialResult", "all_trials", "assign_eps", "core_groups", "ep_order", "explore", "explore_seeds",
    "generate_database", "make_explorer", "random_neighbour", "seed_split", "shisha_seed", "summarize",
]
