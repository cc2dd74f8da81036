"""Explorers: search algorithms behind one interface (pymoo's problem / algorithm / termination
triad, scikit-learn's parameter conventions).

    >>> from hetsim.exploration import PipelineProblem, explore, make_explorer
    >>> problem = PipelineProblem("hikey970", "alexnet", depths=[2])
    >>> result = explore(problem, make_explorer("ES"), seed=0)
    >>> result.best_mapping, result.n_trials
    ('big:1-5|little:6-11', 20)
    >>> round(result.best_fps, 4)          # and result.clock_s: the tuning clock
    20.9486
    >>> list(result.trials.columns[:3])    # tidy: one row per trial, best-so-far columns
    ['trial', ...]

Every algorithm is registered by its name in the papers (:mod:`hetsim.exploration.registry`):
``algorithms()`` lists them, ``make_explorer(name, **params)`` builds one. hetsim's own baselines
live in :mod:`hetsim.exploration.baselines` and :mod:`hetsim.exploration.moo`, its DAG schedulers
(functions of a placement problem's tables, one module per algorithm) in
:mod:`hetsim.exploration.dag`; the papers' algorithms in their plugins (:mod:`hetsim.plugins`);
docs/explorers.md describes every one. :class:`ExplorationRun` drives any explorer step by step
(ask and tell) from an outside loop.
"""

from hetsim.exploration.base import Exploration, Explorer, Session, all_trials, summarize
from hetsim.exploration.placement import PlacementProblem, PlacementResult
from hetsim.exploration.problem import (
    DEFAULT_SPACE_LIMIT,
    Configuration,
    Measurement,
    PipelineProblem,
    Problem,
    TrialResult,
    core_groups,
)
from hetsim.exploration.registry import (
    ALGORITHMS,
    Algorithm,
    algorithms,
    get_algorithm,
    make_explorer,
    register,
)
from hetsim.exploration.run import ExplorationRun, explore
from hetsim.exploration.termination import MaxClock, MaxTrials, TargetThroughput, Termination

__all__ = [
    "ALGORITHMS", "DEFAULT_SPACE_LIMIT", "Algorithm", "Configuration", "Exploration", "ExplorationRun", "Explorer",
    "MaxClock", "MaxTrials", "Measurement", "PipelineProblem", "PlacementProblem", "PlacementResult",
    "Problem", "Session",
    "TargetThroughput", "Termination", "TrialResult", "algorithms", "all_trials", "core_groups",
    "explore", "get_algorithm", "make_explorer", "register", "summarize",
]
