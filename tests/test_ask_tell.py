"""Explorers driven step by step (ExplorationRun: ask, tell, result): told the problem's own
measurements they give explore()'s exploration exactly; a loop may stop early, feed results of its
own, and leaves no thread behind."""

from __future__ import annotations

import dataclasses
import gc
import threading

import numpy as np
import pytest

from hetsim.errors import HetsimError
from hetsim.exploration import (
    ExplorationRun,
    Explorer,
    MaxClock,
    MaxTrials,
    Measurement,
    PipelineProblem,
    explore,
    make_explorer,
)


@pytest.fixture(scope="module")
def noisy():
    """rk3588 (NPU, GPU, big and LITTLE clusters), 2-3 stages, 2 % noise: every trial draws noise."""
    return PipelineProblem("rk3588", "alexnet", depths=[2, 3], measurement=Measurement(noise_sigma=0.02))


def by_hand(problem, explorer, termination=None, seed=0, stop_after=None, answer=None):
    """Drive an exploration with ask/tell; ``answer(run, candidate)`` measures (default: the
    problem's own measurement); the loop stops asking after ``stop_after`` tells."""
    told = 0
    with ExplorationRun(problem, explorer, termination, seed) as run:
        while (stop_after is None or told < stop_after) and (candidate := run.ask()) is not None:
            run.tell(candidate, (answer or (lambda r, c: r.measure(c)))(run, candidate))
            told += 1
        return run.result(), told


def assert_same(a, b) -> None:
    assert a.trials.equals(b.trials)
    assert (a.best, a.best_value, a.clock_s, a.database_s, a.stop_reason) == \
        (b.best, b.best_value, b.clock_s, b.database_s, b.stop_reason)
    assert (a.n_measured, a.n_distinct, a.info) == (b.n_measured, b.n_distinct, b.info)


def live_explorer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("hetsim explorer")]


@pytest.mark.parametrize("name, termination", [
    ("RW", MaxTrials(120)), ("HC", None), ("SA", None), ("NSGA-II-pipe", MaxTrials(80)),
    ("ES", [MaxTrials(200), MaxClock(5.0)]),
])
@pytest.mark.parametrize("seed", [0, 7])
def test_ask_tell_with_the_problems_measurements_is_explore(noisy, name, termination, seed):
    a = explore(noisy, make_explorer(name), termination, seed)
    b, told = by_hand(noisy, make_explorer(name), termination, seed)
    assert_same(a, b)
    # the loop measured exactly the trials that were not cache hits
    assert told == a.n_measured == int((~a.trials["cached"]).sum())
    assert not live_explorer_threads()


def test_a_closed_form_exhaustive_search_never_asks():
    """ES on a noise-free stage measurement scores the whole space at once (Session.record), and
    the database charge is on the clock: nothing reaches the loop, the exploration is explore()'s."""
    problem = PipelineProblem("hikey970", "alexnet", depths=[2])
    b, told = by_hand(problem, make_explorer("ES"))
    assert told == 0
    assert_same(explore(problem, make_explorer("ES")), b)
    assert b.database_s > 0 and b.n_trials == 20


def test_a_loop_that_stops_early_gets_the_first_trials(noisy):
    full = explore(noisy, make_explorer("SA"), seed=0)
    part, told = by_hand(noisy, make_explorer("SA"), seed=0, stop_after=10)
    assert told == 10 and part.stop_reason == "stopped"
    assert part.n_measured == 10
    assert part.trials.equals(full.trials.iloc[:part.n_trials])     # the same trials, cut short
    assert part.best_value == part.trials[noisy.trial_columns[-2]].iloc[-1]
    assert not live_explorer_threads()


def test_termination_is_the_loops_choice(noisy):
    # RW never stops by itself: explore() needs a rule, a loop may just stop asking
    with pytest.raises(HetsimError, match="never stops by itself"):
        explore(noisy, make_explorer("RW"))
    part, told = by_hand(noisy, make_explorer("RW"), stop_after=25)
    assert told == 25 and part.stop_reason == "stopped"
    # a stopping rule given to the run is checked after every trial, cache hits included
    ruled, _ = by_hand(noisy, make_explorer("RW"), MaxTrials(40))
    assert ruled.n_trials == 40 and ruled.stop_reason == "max_trials"
    # a rule that fires on the database charge, before any trial: nothing is asked
    es, told = by_hand(noisy, make_explorer("ES"), MaxClock(1e-9))
    assert told == 0 and es.n_trials == 0 and es.stop_reason == "max_clock"


def test_a_loop_may_feed_its_own_results(noisy):
    """A constant board: every configuration runs at 10 frames/s, each trial costs 2 s. Hill
    climbing then never accepts a neighbour and keeps its start; the table holds what was told."""
    def constant(run, candidate):
        r = run.measure(candidate)
        return dataclasses.replace(r, throughput_fps=10.0, cost_s=2.0)

    result, told = by_hand(noisy, make_explorer("HC", patience=15), seed=1, answer=constant)
    measured = result.trials[~result.trials["cached"]]
    assert (measured["throughput_fps"] == 10.0).all() and (measured["cost_s"] == 2.0).all()
    assert result.clock_s == pytest.approx(2.0 * told)
    assert str(result.best) == result.trials["mapping"].iloc[0]
    assert result.info["accepted_trials"] == [1]

    rng = np.random.default_rng(5)

    def noisy_board(run, candidate):
        r = run.measure(candidate)
        return dataclasses.replace(r, throughput_fps=r.throughput_fps * float(rng.uniform(0.5, 1.5)))

    a, _ = by_hand(noisy, make_explorer("SA"), seed=4, answer=noisy_board)
    b = explore(noisy, make_explorer("SA"), seed=4)
    assert not a.trials.equals(b.trials)      # the board's answers steered the search
    assert a.best_value == a.trials["throughput_fps"].max()


def test_misuse_is_one_line(noisy):
    with ExplorationRun(noisy, make_explorer("HC"), seed=0) as run:
        with pytest.raises(HetsimError, match="tell\\(\\) without a candidate asked"):
            run.tell(None, None)
        first = run.ask()
        with pytest.raises(HetsimError, match="ask\\(\\) again before tell\\(\\)"):
            run.ask()
        other = noisy.random_configuration(run.session.rng)
        if other != first:
            with pytest.raises(HetsimError, match="told the result of .* but HC asked for"):
                run.tell(other, run.measure(other))
        with pytest.raises(AttributeError):        # not a result of this problem
            run.tell(first, object())
        assert run.finished
        with pytest.raises(AttributeError):
            run.result()
    assert not live_explorer_threads()


class _Failing(Explorer):
    def run(self, session):
        session.measure(session.problem.random_configuration(session.rng))
        raise ValueError("the explorer's own bug")


def test_an_explorers_error_reaches_the_loop(noisy):
    with ExplorationRun(noisy, _Failing(), seed=0) as run:
        c = run.ask()
        with pytest.raises(ValueError, match="the explorer's own bug"):
            run.tell(c, run.measure(c))
        with pytest.raises(ValueError):
            run.ask()
    with pytest.raises(ValueError, match="the explorer's own bug"):
        explore(noisy, _Failing())
    assert not live_explorer_threads()


class _Stubborn(Explorer):
    """Swallows every exception around its trials (the stop included) and measures on."""

    def run(self, session):
        for _ in range(50):
            try:
                session.measure(session.problem.random_configuration(session.rng))
            except Exception:
                pass


def test_an_explorer_that_swallows_the_stop_still_ends(noisy):
    part, told = by_hand(noisy, _Stubborn(), stop_after=2)
    assert told == 2 and part.n_measured == 2 and part.stop_reason == "stopped"
    assert not live_explorer_threads()


def test_no_thread_is_left_behind(noisy):
    before = set(threading.enumerate())
    # closed by with, by result(), by close() twice, never started
    by_hand(noisy, make_explorer("RW"), stop_after=3)
    run = ExplorationRun(noisy, make_explorer("SA"), seed=0)
    c = run.ask()
    run.tell(c, run.measure(c))
    assert len(live_explorer_threads()) == 1
    assert run.result().stop_reason == "stopped"
    run.close()
    ExplorationRun(noisy, make_explorer("HC")).close()
    # dropped without closing: collected, its thread unblocked and ended
    dropped = ExplorationRun(noisy, make_explorer("RW"), seed=0)
    dropped.ask()
    thread = live_explorer_threads()[0]
    del dropped
    gc.collect()
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert set(threading.enumerate()) == before
