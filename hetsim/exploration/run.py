"""Driving an explorer: :func:`explore` runs one to its end on the problem's own measurement;
:class:`ExplorationRun` lets an outside loop (a real board, a parallel evaluator, a notebook) ask
for candidates and tell their results (hetsim.exploration.base has the interface both drive)."""

from __future__ import annotations

import math
import queue
import threading
import weakref
from typing import Any, Generic

import numpy as np

from hetsim.errors import HetsimError
from hetsim.exploration.base import STOPPED, Exploration, Explorer, P, Session, _Stop
from hetsim.exploration.problem import Problem
from hetsim.exploration.termination import MaxTrials, Termination, as_terminations


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
