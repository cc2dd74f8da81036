"""The explorer interface (:class:`Explorer`, the :class:`Session` it measures through, the
:class:`Exploration` it yields), driven by ``explore(problem, explorer, termination, seed)`` and
:class:`ExplorationRun` (:mod:`hetsim.exploration.run`).

pymoo's triad (problem, algorithm, termination) with scikit-learn's conventions for the algorithm
objects: constructors only store their parameters, which are validated when the exploration
starts, with messages that name the parameter and the allowed values::

    problem = PipelineProblem("chiplet-c2", "resnet50-shisha", depths=[4])
    result = explore(problem, Shisha(heuristic="H3"), seed=0)
    result.best_mapping, result.best_fps, result.n_trials
    result.trials.plot(x="clock_s", y="best_fps_so_far", logx=True)   # a convergence plot

An explorer's :meth:`Explorer.run` reads like its paper's listing: it calls
``session.measure(config)`` for every trial and returns the configuration it settles on. The
:class:`Session` answers from the problem's measurement (or from the cache of configurations
already measured), advances the tuning clock, logs the trial and stops the run when a
termination fires.

An outside loop (a real board, a parallel evaluator, a notebook) drives an explorer step by step
with :class:`ExplorationRun`: ``ask()`` a candidate, measure it, ``tell()`` its result, stop
whenever it likes; :func:`explore` is that loop with the problem's own measurement::

    with ExplorationRun(problem, make_explorer("SA"), seed=0) as run:
        while (candidate := run.ask()) is not None and run.n_trials < 100:
            run.tell(candidate, board.measure(candidate))
        result = run.result()
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.exploration.problem import Problem
from hetsim.exploration.termination import Termination

#: The problem an explorer solves (PipelineProblem, PlacementProblem, ...).
P = TypeVar("P", bound=Problem)


class Explorer(Generic[P]):
    """Base class of every search algorithm.

    Subclasses take their hyper-parameters as keyword arguments with defaults and store them
    unchanged (``get_params``/``set_params``/``repr`` then work as in scikit-learn), check them in
    :meth:`validate` and implement :meth:`run`.
    """

    #: True when the algorithm never stops by itself (random walk): explore() then needs a termination.
    requires_termination = False
    #: The objectives the algorithm can optimise (None: any the problem measures). Shisha and
    #: Pipe-search balance stage times, i.e. optimise throughput only.
    supported_objectives: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        """The algorithm's name in the papers' vocabulary (a trial table's ``algorithm`` label)."""
        return type(self).__name__

    # -- scikit-learn conventions -----------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [name for name, p in sig.parameters.items() if name != "self"
                and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self) -> dict[str, Any]:
        return {p: getattr(self, p) for p in self._param_names()}

    def set_params(self, **params) -> Explorer:
        allowed = self._param_names()
        for key, value in params.items():
            if key not in allowed:
                raise HetsimError(f"{type(self).__name__}: unknown parameter {key!r}; allowed: "
                                  f"{', '.join(allowed)}")
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        sig = inspect.signature(type(self).__init__)
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if sig.parameters[k].default is inspect.Parameter.empty
                   or not _same(v, sig.parameters[k].default)]
        return f"{type(self).__name__}({', '.join(changed)})"

    # -- the algorithm --------------------------------------------------------------------
    def validate(self, problem: P) -> None:
        """Check the parameters against each other and the problem; raise HetsimError."""

    def run(self, session: Session[P]) -> Any:
        """Search; return the candidate the algorithm settles on (None: the best seen)."""
        raise NotImplementedError


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:
        return a is b


class _Stop(Exception):  # noqa: N818 - control flow, not an error
    def __init__(self, reason: str):
        self.reason = reason


#: The stop reason of a run whose loop stopped asking (:meth:`ExplorationRun.close`).
STOPPED = "stopped"


class Session(Generic[P]):
    """One exploration in progress: random generators, tuning clock, cache, trial log, best.

    Explorers use :meth:`measure`, :meth:`charge_database`, :attr:`rng`, :meth:`is_cached` and
    :attr:`info` (algorithm-specific results, copied to :attr:`Exploration.info`). What a
    candidate is, how it is measured and which objective is best come from the problem.
    """

    def __init__(self, problem: P, terminations: tuple[Termination, ...], seed: int,
                 progress=None, answer: Callable[[Any], Any] | None = None):
        self.problem = problem
        self.terminations = terminations
        self.seed = seed
        #: The algorithm's random choices.
        self.rng = np.random.default_rng(seed)
        noise_seed = problem.measurement.noise_seed
        # A separate stream for measurement noise, so the algorithm's choices do not shift it.
        self.noise_rng = np.random.default_rng([seed if noise_seed is None else noise_seed, 1])
        self.clock_s = 0.0
        self.database_s = 0.0
        self.best: Any = None
        self.best_value = -math.inf if problem.maximize else math.inf
        self.max_fps = 0.0    # the highest throughput seen (TargetThroughput, any objective)
        self._best_text: str | None = None
        self.info: dict[str, Any] = {}
        self.results: dict[Any, Any] = {}   # problem.key(candidate) -> its result
        self._rows: list[tuple] = []  # one tuple per trial, in problem.trial_columns order
        self._n_measured = 0
        self._splits: set[tuple[int, ...]] = set()
        self._progress = progress
        # Who measures a candidate not in the cache: None, the problem (in this thread); else the
        # loop that drives an ExplorationRun (a hand-off that returns the result it was told).
        self._answer = answer
        self._stop_requested: str | None = None

    @property
    def n_trials(self) -> int:
        return len(self._rows)

    @property
    def n_measured(self) -> int:
        return self._n_measured

    @property
    def n_distinct(self) -> int:
        return len(self.results)

    @property
    def n_distinct_splits(self) -> int:
        return len(self._splits)

    @property
    def best_fps(self) -> float:
        """The best throughput so far: the objective's best when it is throughput, else the highest
        throughput of any trial."""
        return self.best_value if self.problem.objective == "throughput" else self.max_fps

    def better(self, a: float, b: float) -> bool:
        """Whether objective value ``a`` beats ``b`` (more is better for throughput, less for the
        others)."""
        return a > b if self.problem.maximize else a < b

    def result(self, candidate) -> Any:
        """The result of a candidate measured before."""
        return self.results[self.problem.key(candidate)]

    def is_cached(self, candidate) -> bool:
        """Whether measuring ``candidate`` now would be answered from the cache (no clock cost)."""
        return self.problem.key(candidate) in self.results and not self.problem.measurement.remeasure

    def measure(self, candidate, phase: str = "", again: bool = False):
        """Run one trial of ``candidate`` (or answer it from the cache) and log it. ``again``
        executes it even if it was measured before (an algorithm that re-runs the configuration it
        is at: the trial costs its time and counts as a measurement, not as a new distinct one)."""
        problem = self.problem
        if not problem.contains(candidate):
            raise HetsimError(f"explorer proposed {candidate}, which is outside the design space of "
                              f"{problem.name}")
        key = problem.key(candidate)   # once: a placement's key walks every op
        if key in self.results and not problem.measurement.remeasure and not again:
            return self.record(candidate, self.results[key], cached=True, phase=phase, key=key)
        if self._answer is None:
            return self.record(candidate, problem.measure(candidate, self.noise_rng), phase=phase, key=key)
        return self.record(candidate, self._answer(candidate), phase=phase, key=key)

    def record(self, candidate, result, cached: bool = False, phase: str = "", key=None):
        """Log a trial whose result is already known (exhaustive search computes a whole design
        space at once and logs it here, charging the clock as if each were measured); ``key``:
        the problem's key of ``candidate`` when the caller has it."""
        problem = self.problem
        cost = 0.0 if cached else result.cost_s
        self.clock_s += cost
        if not cached:
            self._n_measured += 1
            self.results[problem.key(candidate) if key is None else key] = result
            split = getattr(candidate, "split", None)
            if split is not None:
                self._splits.add(split)
        value = problem.value(result)
        fps = getattr(result, "throughput_fps", None)
        if fps is not None and fps > self.max_fps:
            self.max_fps = float(fps)
        text = str(candidate)
        new_best = value > self.best_value if problem.maximize else value < self.best_value
        if new_best:
            self.best, self.best_value, self._best_text = candidate, value, text
        self._rows.append((len(self._rows) + 1, self.clock_s, cost, phase, text,
                           *problem.trial_row(candidate, result), cached, new_best, self.best_value,
                           self._best_text))
        if self._progress is not None:
            self._progress(self)
        self._check_termination()
        return result

    def charge_database(self, n_configs: int, what: str = "database") -> float:
        """Advance the clock by the database-generation cost of ``n_configs`` configurations
        (Pipe-search Alg. 1 and exhaustive search wait for it, Shisha §7.2, Fig. 4)."""
        return self.charge(self.problem.measurement.database_cost(n_configs), what, configs=n_configs)

    def charge(self, seconds: float, what: str, **details) -> float:
        """Advance the clock by ``seconds`` of work that is not a trial (a database, profiling the
        layers for a design-time algorithm), logged in ``info["database_charges"]``."""
        cost = float(seconds)
        self.database_s += cost
        self.clock_s += cost
        charges = self.info.setdefault("database_charges", [])
        charges.append({"what": what, **details, "cost_s": cost})
        self._check_termination()
        return cost

    def _check_termination(self) -> None:
        if self._stop_requested is not None:
            raise _Stop(self._stop_requested)
        for t in self.terminations:
            reason = t.reason(self)
            if reason:
                raise _Stop(reason)

    def trials_frame(self) -> pd.DataFrame:
        return pd.DataFrame.from_records(self._rows, columns=list(self.problem.trial_columns))


@dataclass
class Exploration:
    """The outcome of one exploration: the trial table and the best candidate.

    ``trials`` is tidy, one row per trial (columns ``problem.trial_columns``): ``clock_s`` is the
    tuning clock after the trial, ``cost_s`` what the trial added (0 for cache hits),
    ``phase`` the algorithm's label for the step (``init``/``phase1``/``phase2`` for Pipe-search,
    ``seed``/``tune`` for Shisha), ``best_*_so_far`` the convergence trace. ``best_value`` is the
    problem's objective of the best candidate (``best_fps`` for a throughput objective).
    """

    algorithm: str
    params: dict[str, Any]
    seed: int
    problem: Problem = field(repr=False)
    trials: pd.DataFrame = field(repr=False)
    best: Any
    best_value: float
    stop_reason: str
    clock_s: float
    database_s: float
    n_measured: int
    n_distinct: int
    n_distinct_splits: int
    info: dict[str, Any] = field(default_factory=dict, repr=False)
    results: dict[Any, Any] = field(default_factory=dict, repr=False)   # problem.key -> result
    #: the best candidates re-simulated in the DES (hetsim.exploration.confirm), if asked
    confirmation: Any = field(default=None, repr=False)

    @property
    def n_trials(self) -> int:
        return len(self.trials)

    @property
    def best_fps(self) -> float:
        """Throughput of the best candidate (its objective when that is throughput)."""
        if self.problem.objective == "throughput" or self.best is None:
            return self.best_value
        return self.problem.throughput_of(self.best_result)

    @property
    def best_result(self):
        return self.results.get(self.problem.key(self.best)) if self.best is not None else None

    @property
    def best_mapping(self) -> str | None:
        return str(self.best) if self.best is not None else None

    @property
    def answer(self):
        """The exploration's answer: the best of the DES-confirmed candidates when the search was
        confirmed (:mod:`hetsim.exploration.confirm`), else the search's own best."""
        return self.confirmation.best if self.confirmation is not None else self.best

    @property
    def answer_value(self) -> float:
        """The answer's objective, in the engine that confirmed it (else the search's)."""
        return self.confirmation.value if self.confirmation is not None else self.best_value

    @property
    def answer_engine(self) -> str:
        """The engine of :attr:`answer_value`."""
        if self.confirmation is not None:
            return self.confirmation.engine
        m = getattr(self.problem, "measurement", None)
        return m.describe() if m is not None and hasattr(m, "describe") else "the problem's measurement"

    @property
    def best_pipeline(self):
        """The best configuration as a :class:`~hetsim.mapping.Pipeline` (for ``evaluate``)."""
        return self.problem.mapping(self.best) if self.best is not None else None

    @property
    def space_size(self) -> int:
        return self.problem.design_space_size

    @property
    def fraction_explored(self) -> float:
        """Distinct configurations measured / design-space size (Paper I's "2% of the space")."""
        return self.n_distinct / self.space_size

    @property
    def fraction_splits_explored(self) -> float:
        """Distinct splits measured / distinct splits of the space, EPs not counted (Paper II's
        0.12% and 2.03%, Shisha §7.2; the denominator is a choice, docs/papers/shisha.md)."""
        return self.n_distinct_splits / self.problem.split_space_size  # type: ignore[attr-defined]

    def convergence(self) -> pd.DataFrame:
        """The best-so-far trace: the rows where the best improved, plus the last row."""
        t = self.trials
        if t.empty:
            return t
        keep = t["new_best"].to_numpy().copy()
        keep[-1] = True
        return t.loc[keep, ["trial", "clock_s", self.problem.trial_columns[-2], "best_mapping_so_far"]]

    def summary(self) -> dict[str, Any]:
        """One row of scalars (see :func:`summarize`)."""
        splits = hasattr(self.problem, "split_space_size")   # pipelines: Paper II's split counts
        fraction_splits = self.fraction_splits_explored if splits else None
        column = self.problem.objective_column
        answer = self.answer
        confirmed = {}
        if self.confirmation is not None:
            n = len(self.confirmation.table)
            confirmed = {"engine": f"{self.answer_engine}: the search's {n} best re-simulated",
                         "search_best_mapping": self.best_mapping, f"search_best_{column}": self.best_value,
                         "search_engine": self.problem.measurement.describe()}
        else:
            confirmed = {"engine": self.answer_engine}
        return {
            "algorithm": self.algorithm, "seed": self.seed, "problem": self.problem.name,
            "best_mapping": str(answer) if answer is not None else None, **self.problem.summary_fields(answer),
            f"best_{column}": self.answer_value, **confirmed,
            "trials": self.n_trials, "measured": self.n_measured, "distinct": self.n_distinct,
            **({"distinct_splits": self.n_distinct_splits} if splits else {}),
            "space_size": self.space_size, "fraction_explored": self.fraction_explored,
            **({"fraction_splits_explored": fraction_splits} if splits else {}),
            "clock_s": self.clock_s, "database_s": self.database_s, "stop_reason": self.stop_reason,
        }


# -- step by step --------------------------------------------------------------------------
def summarize(explorations: Iterable[Exploration]) -> pd.DataFrame:
    """One row per exploration (:meth:`Exploration.summary`)."""
    return pd.DataFrame([e.summary() for e in explorations])


def all_trials(explorations: Iterable[Exploration]) -> pd.DataFrame:
    """The trial tables of several explorations, stacked, with ``algorithm`` and ``seed`` columns."""
    frames = [e.trials.assign(algorithm=e.algorithm, seed=e.seed) for e in explorations]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
