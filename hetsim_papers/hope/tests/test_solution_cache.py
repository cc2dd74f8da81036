"""HOPE's ILP solutions reused within a process (hetsim_papers/hope/milp.py, ``_SOLVED``): an ILP met
again is answered with the solution CP-SAT gives it, any change of its inputs is solved anew, and
the schedules that share ILPs (HOPE:LP's variants, a plan measured with memory contention) give the
plans they give without the reuse."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import random_placement_problem as problem

from hetsim.exploration.dag import SchedView
from hetsim_papers.hope import milp
from hetsim_papers.hope.lp import hope_lp
from hetsim_papers.hope.milp import Instance, solve_paper_cpsat


def instance(seed: int = 5, n: int = 10, D: int = 3) -> Instance:
    rng = np.random.default_rng(seed)
    cl = [[float(rng.uniform(0.5, 5.0)) for _ in range(D)] for _ in range(n)]
    edges = [(int(k), i, [[0.0 if a == b else float(rng.uniform(0.1, 2.0)) for b in range(D)] for a in range(D)])
             for i in range(1, n) for k in rng.choice(i, size=min(i, 2), replace=False)]
    return Instance(cl, edges, avail=[float(a) for a in rng.uniform(0, 3, D)])


def fields(sol) -> tuple:
    return sol.dev, sol.start, sol.end, sol.makespan_s, sol.optimal, sol.bound_s, sol.status, sol.deterministic_s


@pytest.fixture(autouse=True)
def empty():
    milp.clear_solutions()
    yield
    milp.clear_solutions()


def test_a_repeated_ilp_is_answered_with_cpsats_solution_and_charged_its_time():
    inst = instance()
    first = solve_paper_cpsat(inst, deterministic=True, unit_s=1e-4)
    assert milp.solved_count() == 1
    reused = dict(milp.REUSED)
    again = solve_paper_cpsat(inst, deterministic=True, unit_s=1e-4)
    assert milp.solved_count() == 1 and fields(again) == fields(first)
    (_, process_s, wall_s), = (entry for _, entry in milp.solutions())
    assert process_s > 0 and milp.REUSED["process_s"] == pytest.approx(reused["process_s"] + process_s)
    assert milp.REUSED["wall_s"] == pytest.approx(reused["wall_s"] + wall_s)
    again.dev[0] = 99      # a caller's change (HOPE:LP sets a solution's status) stays its own
    again.status = "kept"
    assert fields(solve_paper_cpsat(inst, deterministic=True, unit_s=1e-4)) == fields(first)
    milp.clear_solutions()
    assert fields(solve_paper_cpsat(inst, deterministic=True, unit_s=1e-4)) == fields(first)


def test_any_change_of_the_inputs_is_solved_anew():
    inst = instance()
    solve_paper_cpsat(inst, deterministic=True, unit_s=1e-4)
    changed = [Instance([row[:] for row in inst.cl], inst.edges, avail=inst.avail),
               Instance(inst.cl, inst.edges, avail=[a + 1e-9 for a in inst.avail]),
               Instance(inst.cl, inst.edges[::-1], avail=inst.avail),      # the constraints' order
               Instance(inst.cl, inst.edges, avail=inst.avail, forced={0: 1, 1: 0}),
               Instance(inst.cl, inst.edges, avail=inst.avail, forced={1: 0, 0: 1}),
               Instance(inst.cl, inst.edges, avail=inst.avail, follow=[(0, 1, 0)])]
    changed[0].cl[3][1] = np.nextafter(changed[0].cl[3][1], 10.0)
    for k, other in enumerate(changed, start=2):
        solve_paper_cpsat(other, deterministic=True, unit_s=1e-4)
        assert milp.solved_count() == k
    for k, kwargs in enumerate(({"seed": 1}, {"time_limit_s": 19.0}, {"unit_s": 2e-4}, {"tie_break": True},
                                {"hint": ([0] * inst.n, [list(range(inst.n)), [], []])}), start=len(changed) + 2):
        solve_paper_cpsat(inst, deterministic=True, **{"unit_s": 1e-4, **kwargs})
        assert milp.solved_count() == k
    solve_paper_cpsat(inst, unit_s=1e-4)          # a wall-clock limit depends on the load: never kept
    assert milp.solved_count() == k


def test_hope_lps_variants_share_their_module_ilps_and_keep_their_plans():
    """Without the whole-graph pass, HOPE:LP solves the very module ILPs it solves with it: none is
    solved again, and each plan is the one it is with nothing to reuse."""
    view = SchedView(problem(3, 16))
    alone = {}
    for name, kwargs in (("lp", {}), ("no whole graph", {"whole_graph_s": None})):
        milp.clear_solutions()
        alone[name] = hope_lp(view, nt=5, **kwargs)
    milp.clear_solutions()
    lp = hope_lp(view, nt=5)
    solved = milp.solved_count()
    assert lp.info["modules"] > 1 and "whole_graph_improved" in lp.info
    no_whole = hope_lp(view, nt=5, whole_graph_s=None)
    assert milp.solved_count() == solved
    for name, plan in (("lp", lp), ("no whole graph", no_whole)):
        assert (plan.dev, plan.order) == (alone[name].dev, alone[name].order)
        assert plan.info["solver_deterministic_s"] == alone[name].info["solver_deterministic_s"]


def test_a_plan_measured_with_memory_contention_is_scheduled_once():
    """Setting(contention=True) changes how a plan is measured, not the tables HOPE:LP schedules
    from: its ILPs are Fig. 4's, answered without solving, and its plan is Fig. 4's."""
    from hetsim_papers.hope.experiments import runs

    plain, shared = runs.Setting("hope-he"), runs.Setting("hope-he", contention=True)
    views = [SchedView(runs.problem(s, "LSTM")) for s in (plain, shared)]
    assert np.array_equal(views[0].cl, views[1].cl)
    assert all(views[0].comm_table(i) == views[1].comm_table(i) for i in range(views[0].n))
    first = runs._schedule(runs.key(plain, "LSTM", "HOPE:LP"))
    solved = milp.solved_count()
    assert solved > 1
    second = runs._schedule(runs.key(shared, "LSTM", "HOPE:LP"))
    assert milp.solved_count() == solved
    assert second.placement == first.placement
    # the second run's time is charged what its ILPs took when solved
    assert second.process_s >= sum(entry[1] for _, entry in milp.solutions())


def test_the_runs_that_may_share_ilps_go_to_one_worker():
    """HOPE:LP's runs with HOPE's ILP on one phone, preset and model go to one worker (its
    variants, a plan measured with contention); a run that solves no HOPE ILP is a task of its own."""
    from hetsim_papers.hope.experiments.ablations import VARIANTS
    from hetsim_papers.hope.experiments.runs import Setting, _sharing, key

    keys = {label: key(Setting("hope-he", **change), "IN-V3", version, **params)
            for label, (version, params, change) in VARIANTS.items()}
    lp = {label for label, k in keys.items() if k[2] == "HOPE:LP" and dict(k[3]).get("ilp") != "engine"}
    assert {"LP", "LP, memory contention", "LP, copy lane", "LP, NT = 16"} <= lp
    assert {_sharing(keys[label]) for label in lp} == {("hope-he", None, "IN-V3")}
    for label in keys.keys() - lp:
        assert _sharing(keys[label]) == keys[label]
    assert _sharing(key(Setting("hope-le", dvfs="max"), "IN-V3", "HOPE:LP")) == ("hope-le", "max", "IN-V3")
