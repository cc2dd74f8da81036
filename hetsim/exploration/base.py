"""The explorer interface: ``explore(problem, explorer, termination, seed) -> Exploration``.

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
import queue
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
import pandas as pd

from hetsim.errors import HetsimError
from hetsim.exploration.problem import Problem
from hetsim.exploration.termination import MaxTrials, Termination, as_terminations

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
        if not self.problem.contains(candidate):
            raise HetsimError(f"explorer proposed {candidate}, which is outside the design space of "
                              f"{self.problem.name}")
        if self.is_cached(candidate) and not again:
            return self.record(candidate, self.result(candidate), cached=True, phase=phase)
        if self._answer is None:
            return self.record(candidate, self.problem.measure(candidate, self.noise_rng), phase=phase)
        return self.record(candidate, self._answer(candidate), phase=phase)

    def record(self, candidate, result, cached: bool = False, phase: str = ""):
        """Log a trial whose result is already known (exhaustive search computes a whole design
        space at once and logs it here, charging the clock as if each were measured)."""
        problem = self.problem
        cost = 0.0 if cached else result.cost_s
        self.clock_s += cost
        if not cached:
            self._n_measured += 1
            self.results[problem.key(candidate)] = result
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
        (Pipe-search Alg. 1 and exhaustive search wait for it, 000 digest §7.1 item 6)."""
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
        0.12% and 2.03%, 000 digest §8 item 13)."""
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
        return {
            "algorithm": self.algorithm, "seed": self.seed, "problem": self.problem.name,
            "best_mapping": self.best_mapping, **self.problem.summary_fields(self.best),
            f"best_{self.problem.objective_column}": self.best_value,
            "trials": self.n_trials, "measured": self.n_measured, "distinct": self.n_distinct,
            **({"distinct_splits": self.n_distinct_splits} if splits else {}),
            "space_size": self.space_size, "fraction_explored": self.fraction_explored,
            **({"fraction_splits_explored": fraction_splits} if splits else {}),
            "clock_s": self.clock_s, "database_s": self.database_s, "stop_reason": self.stop_reason,
        }


# -- step by step --------------------------------------------------------------------------
def _checked(problem: Problem, explorer: Explorer, seed, termination) -> tuple[Termination, ...]:
    """Check the arguments of an exploration (in this order); return the terminations."""
    if not isinstance(problem, Problem):
        raise HetsimError(f"explore: problem must be a Problem (PipelineProblem, PlacementProblem), "
                          f"got {type(problem).__name__}")
    if not isinstance(explorer, Explorer):
        raise HetsimError(f"explore: explorer must be an Explorer, got {type(explorer).__name__}")
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise HetsimError(f"explore: seed={seed!r} must be an integer >= 0")
    terms = as_terminations(termination)
    if explorer.supported_objectives is not None and problem.objective not in explorer.supported_objectives:
        from hetsim.exploration.registry import algorithms

        others = [a.name for a in algorithms(problem.kind)
                  if (allowed := getattr(a.cls, "supported_objectives", None)) is None
                  or problem.objective in allowed]
        raise HetsimError(f"{explorer.name} optimises {' or '.join(explorer.supported_objectives)} only, not "
                          f"{problem.objective}; for --objective {problem.objective} use "
                          f"{', '.join(others) or 'another algorithm'}")
    explorer.validate(problem)
    return terms


class _Worker:
    """The explorer's side of an :class:`ExplorationRun`: runs ``explorer.run`` and hands every
    candidate to measure over to the loop. It holds no reference to the run, so that a run
    dropped without :meth:`ExplorationRun.close` is collected, and its finalizer stops the thread."""

    def __init__(self, explorer: Explorer, session: Session) -> None:
        self.explorer, self.session = explorer, session
        self.to_loop: queue.SimpleQueue = queue.SimpleQueue()
        self.to_explorer: queue.SimpleQueue = queue.SimpleQueue()
        self.thread: threading.Thread | None = None
        self.abandoned = False

    def work(self) -> tuple:
        """Run the explorer to its end: ("done", returned, stop reason) or ("error", exception)."""
        try:
            return ("done", self.explorer.run(self.session), "converged")
        except _Stop as stop:
            return ("done", None, stop.reason)
        except BaseException as e:   # re-raised in the loop's thread
            return ("error", e)

    def _thread_main(self) -> None:
        self.to_loop.put(self.work())

    def start(self) -> None:
        self.thread = threading.Thread(target=self._thread_main, daemon=True,
                                       name=f"hetsim explorer {self.explorer.name}")
        self.thread.start()

    def hand_off(self, candidate):
        """In the explorer's thread: ask the loop to measure ``candidate``; wait for its result."""
        if self.abandoned:     # an explorer that swallowed the stop and measures on
            raise _Stop(STOPPED)
        self.to_loop.put(("ask", candidate))
        answer = self.to_explorer.get()
        if answer is _ABANDON:
            raise _Stop(STOPPED)
        return answer

    def abandon(self, waiting: bool) -> tuple | None:
        """Stop the explorer: unblock it if it is ``waiting`` for a result (then wait for its end
        and return its last message), else make it stop at its next trial."""
        self.abandoned = True
        self.session._stop_requested = STOPPED
        if waiting:
            self.to_explorer.put(_ABANDON)
            last = self.to_loop.get()
            assert self.thread is not None
            self.thread.join()
            return last
        return None


_ABANDON = object()


class ExplorationRun(Generic[P]):
    """One exploration driven step by step by an outside loop (pymoo's ask and tell).

    ``ask()`` returns the next candidate the explorer wants measured (None once it has finished:
    converged, or a ``termination`` fired), ``tell(candidate, result)`` gives it the result (the
    problem's result type: what ``problem.measure`` returns; :meth:`measure` is that), ``result()``
    is the :class:`Exploration` so far. Cache hits and database charges never reach the loop: the
    session answers them as :func:`explore` does, and ``termination`` (the loop's stopping rules:
    ``MaxTrials``, ``MaxClock``, ...) is checked after every trial and charge, so a run told the
    problem's own measurements gives exactly :func:`explore`'s trial table, clock and best. The
    loop may also just stop asking: ``close()`` (or leaving the ``with`` block, or ``result()``)
    stops the explorer, with stop reason ``"stopped"``.

    How: explorers are written as plain code that calls ``session.measure`` (a paper's listing,
    pymoo's NSGA-II calling back), so the run executes ``explorer.run`` in a worker thread that
    blocks in ``measure`` until ``tell`` answers; ``ask`` and ``tell`` block until the explorer
    has asked again or finished, so exactly one of the two threads runs at a time and a run is as
    deterministic as a plain call (generators would have meant rewriting every explorer, and
    pymoo's loop cannot yield). With ``measure_inline=True`` the problem measures its candidates
    itself: nothing is handed off, so the explorer runs in the caller's thread, within ``ask()``,
    as :func:`explore` does (no thread, no hand-off cost; Ctrl-C interrupts it as any call). A
    hand-off costs some 50 us of CPU (two thread wake-ups): nothing against a board's trial, a
    third of a closed-form stage measurement's, hence the inline path.

    A run must be closed (``with``, :meth:`close` or :meth:`result`) when the loop stops early; a
    run dropped without it stops its thread when it is garbage-collected.
    """

    def __init__(self, problem: P, explorer: Explorer[P], termination=None, seed: int = 0, *,
                 measure_inline: bool = False):
        terms = _checked(problem, explorer, seed, termination)
        self.problem, self.explorer, self.seed = problem, explorer, int(seed)
        self.measure_inline = bool(measure_inline)
        self.session: Session[P] = Session(problem, terms, int(seed))
        self._worker = _Worker(explorer, self.session)
        if not self.measure_inline:
            self.session._answer = self._worker.hand_off
        self._message: tuple | None = None    # the worker's last message not yet acted on
        self._asked = False                   # the pending candidate was returned by ask()
        self._outcome: tuple[Any, str] | None = None   # (returned, stop reason) once finished
        self._error: BaseException | None = None
        self._finalizer = weakref.finalize(self, _abandon_dropped, self._worker)

    # -- the loop's side -------------------------------------------------------------------
    def ask(self):
        """The next candidate to measure, or None once the explorer has finished."""
        if self._error is not None:
            raise self._error
        if self._outcome is not None:
            return None
        if self._message is None:
            if self.measure_inline:
                self._message = self._worker.work()
            else:
                self._worker.start()
                self._message = self._worker.to_loop.get()
        kind = self._message[0]
        if kind == "ask":
            if self._asked:
                raise HetsimError(f"ExplorationRun: ask() again before tell(); {self.explorer.name} is "
                                  f"waiting for the result of {self._message[1]}")
            self._asked = True
            return self._message[1]
        self._absorb(self._message)
        return self.ask()

    def tell(self, candidate, result) -> None:
        """Give the explorer the result of the candidate it asked for (last :meth:`ask`)."""
        if not self._asked or self._message is None:
            raise HetsimError("ExplorationRun: tell() without a candidate asked (call ask() first)")
        waiting = self._message[1]
        if self.problem.key(candidate) != self.problem.key(waiting):
            raise HetsimError(f"ExplorationRun: told the result of {candidate}, but {self.explorer.name} "
                              f"asked for {waiting}")
        self._asked = False
        self._worker.to_explorer.put(result)
        self._message = self._worker.to_loop.get()
        if self._message[0] != "ask":
            self._absorb(self._message)
            if self._error is not None:
                raise self._error

    def measure(self, candidate):
        """The problem's own measurement of ``candidate``, noise from the run's noise stream (a
        loop that tells these gets :func:`explore`'s exploration)."""
        return self.problem.measure(candidate, self.session.noise_rng)

    def close(self) -> None:
        """Stop the explorer (stop reason ``"stopped"``) unless it has finished; idempotent."""
        if self._outcome is not None or self._error is not None:
            return
        self._finalizer.detach()
        started = self._message is not None or self._worker.thread is not None
        if not started:
            self._outcome = (None, STOPPED)
            return
        last = self._worker.abandon(waiting=self._message is not None and self._message[0] == "ask")
        self._message = None
        self._asked = False
        if last is None:      # the explorer was running (the loop interrupted): it stops by itself
            self._outcome = (None, STOPPED)
            return
        # Stopped while it waited for a result, whatever it returns after (an explorer may catch
        # the stop): the best so far, stop reason "stopped".
        self._absorb(("done", None, STOPPED) if last[0] == "done" else last)

    def result(self) -> Exploration:
        """The exploration so far (closing the run first if the loop stopped before its end)."""
        self.close()
        if self._error is not None:
            raise self._error
        assert self._outcome is not None
        return _exploration(self.session, self.explorer, self.seed, *self._outcome)

    def __enter__(self) -> ExplorationRun[P]:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- what the loop may read ------------------------------------------------------------
    @property
    def finished(self) -> bool:
        """Whether the explorer has finished (or was stopped)."""
        return self._outcome is not None or self._error is not None

    @property
    def stop_reason(self) -> str | None:
        return self._outcome[1] if self._outcome is not None else None

    @property
    def n_trials(self) -> int:
        return self.session.n_trials

    @property
    def clock_s(self) -> float:
        return self.session.clock_s

    @property
    def best(self):
        return self.session.best

    @property
    def best_value(self) -> float:
        return self.session.best_value

    def _absorb(self, message: tuple) -> None:
        """The worker's final message: its outcome, or the error it raised."""
        self._finalizer.detach()
        if self._worker.thread is not None:
            self._worker.thread.join()
        if message[0] == "error":
            self._error = message[1]
        else:
            self._outcome = (message[1], message[2])
        self._message = None


def _abandon_dropped(worker: _Worker) -> None:
    """A run collected without close(): unblock its explorer thread, if it waits for a result."""
    if worker.thread is not None and worker.thread.is_alive():
        worker.abandoned = True
        worker.session._stop_requested = STOPPED
        worker.to_explorer.put(_ABANDON)


def _exploration(session: Session, explorer: Explorer, seed: int, returned, reason: str) -> Exploration:
    problem = session.problem
    best, best_value = session.best, session.best_value
    if returned is not None:
        if problem.key(returned) not in session.results:
            raise RuntimeError(f"{explorer.name} returned {returned}, which it never measured")
        best, best_value = returned, problem.value(session.result(returned))
    return Exploration(
        algorithm=explorer.name, params=explorer.get_params(), seed=int(seed), problem=problem,
        trials=session.trials_frame(), best=best, best_value=best_value if best is not None else math.nan,
        stop_reason=reason, clock_s=session.clock_s, database_s=session.database_s,
        n_measured=session.n_measured, n_distinct=session.n_distinct,
        n_distinct_splits=session.n_distinct_splits, info=session.info, results=session.results,
    )


# -- entry points --------------------------------------------------------------------------
def explore(problem: Problem, explorer: Explorer, termination=None, seed: int = 0,
            progress: bool = False) -> Exploration:
    """Run ``explorer`` on ``problem`` until it converges or a ``termination`` fires.

    ``termination``: None, a :class:`~hetsim.exploration.termination.Termination`
    (``MaxTrials``, ``MaxClock``, ``TargetThroughput``) or a list of them (any one stops).
    ``seed`` drives every random choice of the algorithm (and the measurement noise unless the
    measurement fixes ``noise_seed``). ``progress=True`` shows a rich progress bar.

    An :class:`ExplorationRun` whose candidates the problem measures itself (``measure_inline``).
    """
    run = ExplorationRun(problem, explorer, termination, seed, measure_inline=True)
    terms = run.session.terminations
    if explorer.requires_termination and not terms:
        raise HetsimError(f"{explorer.name} never stops by itself: give a stopping rule (command line: "
                          f"--max-trials N, --max-clock SECONDS or --target-fps FPS; Python: "
                          f"termination=MaxTrials(n), MaxClock(seconds) or TargetThroughput(fps))")
    with _progress_bar(progress, explorer.name, terms) as bar, run:
        run.session._progress = bar
        while (candidate := run.ask()) is not None:     # measured inline: only None comes out
            run.tell(candidate, run.measure(candidate))
        return run.result()


def explore_seeds(problem: Problem, explorer: Explorer, seeds: int | Iterable[int] = 10,
                  termination=None, progress: bool = False, n_jobs: int = 1,
                  scheduler: Any = None) -> list[Exploration]:
    """Run ``explorer`` once per seed (``seeds=10`` means 0..9): the digest's "average over >= 10
    RNG seeds" (§8 item 16) and Shisha's 100 random starts (Fig. 6). The seeds run where a sweep's
    cells do (:func:`hetsim.sweep.map_tasks`): ``n_jobs > 1`` a local process pool, ``scheduler`` a
    Dask cluster (its address, a ``distributed.Client`` or a ``LocalCluster``); the explorations
    are the same, in seed order, wherever they ran."""
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs < 1:
        raise HetsimError(f"explore_seeds: n_jobs={n_jobs!r} must be an integer >= 1")
    if scheduler is None and (n_jobs == 1 or len(seed_list) < 2):
        return [explore(problem, explorer, termination, s, progress) for s in seed_list]
    from functools import partial

    from hetsim.sweep.tasks import map_tasks

    return map_tasks(partial(explore, problem, explorer, termination), seed_list, workers=n_jobs,
                     scheduler=scheduler)


def summarize(explorations: Iterable[Exploration]) -> pd.DataFrame:
    """One row per exploration (:meth:`Exploration.summary`)."""
    return pd.DataFrame([e.summary() for e in explorations])


def all_trials(explorations: Iterable[Exploration]) -> pd.DataFrame:
    """The trial tables of several explorations, stacked, with ``algorithm`` and ``seed`` columns."""
    frames = [e.trials.assign(algorithm=e.algorithm, seed=e.seed) for e in explorations]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


class _progress_bar:  # noqa: N801 - used as a context manager, reads like a function
    """A rich progress bar over trials (the bar's total is a MaxTrials limit when given)."""

    def __init__(self, enabled: bool, label: str, terms: tuple[Termination, ...]):
        self.enabled, self.label = enabled, label
        limits = [t.n for t in terms if isinstance(t, MaxTrials)]
        self.total = min(limits) if limits else None

    def __enter__(self):
        if not self.enabled:
            return None
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        self._bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TextColumn("{task.fields[best]}"), TimeElapsedColumn(), transient=True)
        self._bar.start()
        self._task = self._bar.add_task(self.label, total=self.total, best="")

        def update(session: Session) -> None:
            p = session.problem
            self._bar.update(self._task, completed=session.n_trials,
                             best=f"best {p.objective} {session.best_value:.4g} {p.objective_unit}, "
                                  f"clock {session.clock_s:.4g} s")
        return update

    def __exit__(self, *exc) -> None:
        if self.enabled:
            self._bar.stop()
