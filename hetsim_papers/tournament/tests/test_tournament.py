"""The tournament and what it rests on: the core-group design space, the exact optimum by dynamic
programming, and the quick tournament itself, pipeline and placement tables, with a new explorer joining by registration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from hetsim.analytic import SplitScorer
from hetsim.errors import HetsimError
from hetsim.experiment import Context, claim_problems, run_experiment, select
from hetsim.exploration import (
    ALGORITHMS,
    Explorer,
    MaxTrials,
    Measurement,
    PipelineProblem,
    algorithms,
    explore,
    make_explorer,
    register,
)
from hetsim.exploration.baselines import random_neighbour


@pytest.fixture(scope="module")
def hikey_cores():
    return PipelineProblem("hikey970", "synthnet", assignment="cores", depths=[2, 3, 4])


# -- the space of core groups -----------------------------------------------------------------------
def test_core_group_space(hikey_cores):
    p = hikey_cores
    # Sequences of EPs B1..B4, s1..s4 whose cores fit in 4 + 4: C(4,i) ways to split <= 4 cores of a
    # cluster into i stages, interleaved C(k, i) ways.
    def count(k):
        ways = lambda i: 1 if i == 0 else math.comb(4, i)  # noqa: E731
        return sum(ways(i) * ways(k - i) * math.comb(k, i) for i in range(k + 1)
                   if i <= 4 and k - i <= 4)
    assert [p.count_orders(k) for k in (2, 3, 4)] == [count(2), count(3), count(4)] == [44, 152, 346]
    assert all(p.fits(o) for k in p.depths for o in p.orders(k))
    assert not p.fits(("B4", "B1")) and not p.fits(("B2", "x9"))
    assert p.design_space_size == sum(p.count_splits(k) * p.count_orders(k) for k in p.depths)
    # Pipe-search's default stages on it are Paper I's core groups over all 8 cores.
    assert p.stage_eps(4) == ("B2", "B2", "s2", "s2")
    with pytest.raises(HetsimError, match="allow at most 8"):
        PipelineProblem("hikey970", "synthnet", assignment="cores", depths=[9])


def test_neighbours_and_random_draws_stay_in_the_core_group_space(hikey_cores):
    rng = np.random.default_rng(0)
    for _ in range(300):
        c = hikey_cores.random_configuration(rng)
        assert hikey_cores.contains(c)
        for vary in (False, True):
            nb = random_neighbour(hikey_cores, c, rng, vary_depth=vary)
            assert nb is None or hikey_cores.contains(nb), (c, nb)


def test_explorers_on_core_groups_and_their_refusals(hikey_cores):
    small = PipelineProblem("hikey970", "alexnet", assignment="cores", depths=[2, 3, 4])
    for name in ("PS", "ES", "HC", "SA", "RW", "Pipe-it", "Pipe-it-A2"):
        r = explore(small, make_explorer(name), MaxTrials(500), seed=1)
        assert small.contains(r.best) and r.n_trials >= 1
    for name, fragment in (("Shisha", "gives each stage a whole EP"),
                           ("HC_s", "start='shisha' needs a problem with assignment='permutations'")):
        with pytest.raises(HetsimError, match=fragment):
            explore(hikey_cores, make_explorer(name), seed=0)
    with pytest.raises(HetsimError, match="Algorithm 3 divides the cores of a big.LITTLE"):
        explore(PipelineProblem("chiplet-c2", "synthnet", depths=[2, 3]), make_explorer("Pipe-it"))
    with pytest.raises(HetsimError, match="max_assignments=10"):
        explore(hikey_cores, make_explorer("Pipe-it-A2", max_assignments=10))
    with pytest.raises(HetsimError, match="prediction='predictor' fits eqs. 5-8"):
        explore(hikey_cores, make_explorer("Pipe-it", prediction="predictor"))


# -- the exact optimum -------------------------------------------------------------------------------
@pytest.mark.parametrize("platform,workload,assignment", [
    ("chiplet-c2", "synthnet", "permutations"), ("hikey970", "alexnet", "cores"),
    ("jetson-tx2", "synthnet", "cores"), ("chiplet-c5", "alexnet", "permutations"),
])
def test_best_split_equals_the_largest_enumerated_throughput(platform, workload, assignment):
    p = PipelineProblem(platform, workload, assignment=assignment, depths=[2, 3])
    eps = [p.platform.ep(e) for e in p.eps]
    scorer = SplitScorer(p.platform, p.workload, p.cost, eps)
    index = {e: i for i, e in enumerate(p.eps)}
    rng = np.random.default_rng(3)
    for k in p.depths:
        orders = p.orders(k)
        for j in rng.choice(len(orders), size=min(12, len(orders)), replace=False):
            order = [index[e] for e in orders[j]]
            split, fps = scorer.best_split(order)
            assert fps == scorer.score(k, [tuple(order)]).throughput.max()       # exactly
            bounds = np.cumsum([0, *split])[None, :]
            assert fps == 1.0 / scorer.stage_times(bounds, order).max()          # and it is its split
    best, fps = p.optimum()
    es = explore(p, make_explorer("ES", charge_database=False), seed=0)   # every configuration
    assert fps == pytest.approx(es.best_fps, rel=1e-12) and p.contains(best)


def test_optimum_refuses_a_des_stream():
    p = PipelineProblem("chiplet-c2", "synthnet", depths=[2],
                        measurement=Measurement(mode="stream", engine="des"))
    with pytest.raises(HetsimError, match="no closed form"):
        p.optimum()


# -- the tournament ------------------------------------------------------------------------------------
class _EveryOpOnOneEP(Explorer):
    """A stand-in DAG scheduler: every op on one EP, each candidate EP in turn."""

    def run(self, session):
        p = session.problem
        for e in p.eps:
            session.measure(p.placement([e] * len(p.ops)), "one EP")


@pytest.fixture
def placement_explorer():
    register("OneEP-test", _EveryOpOnOneEP, "placement", "test", "every op on one EP")
    yield "OneEP-test"
    del ALGORITHMS["OneEP-test"]


def test_placement_reference_is_the_proven_optimum_of_plans_without_splits():
    """ILP-exact's lower bound makes the best plan without splits the optimum; muLayer's channel
    splits are scored against it (above 1: what splitting gains); nothing unsplit beats the bound."""
    from hetsim.sweep import run_sweep, spec_from_dict
    from hetsim_papers.tournament.tournament import artifact

    spec = spec_from_dict({
        "schema": 1, "name": "placements", "base": {},
        "axes": {"platform": ["hope-he"], "workload": ["synthnet"], "algorithm": ["CPU-only", "HEFT", "muLayer", "ILP-exact"], "seed": [0]}}, "test")
    result = run_sweep(spec, workers=1)
    row = result.table.set_index("algorithm").loc["ILP-exact"]
    assert row["proven_optimal"] and row["lower_bound_latency_s"] <= row["true_latency_s"]
    assert row["bound_rounding_s"] > 0
    place = artifact(result, "placement", Context("tournament", "placement", quick=True))
    t = place.table.set_index("algorithm")
    assert (t["reference"] == "optimum").all()
    assert t.loc["ILP-exact", "quality_mean"] == pytest.approx(1.0, abs=1e-9)
    assert t.loc["muLayer", "splits"] and t.loc["muLayer", "quality_mean"] > 1
    assert not t.loc["HEFT", "splits"] and t.loc["CPU-only", "quality_mean"] < 1
    assert [c.passed for c in place.claims] == [False, True]   # not every registered one ran
    assert "optimum on 1 of 1 problems" in place.notes[0] and "| muLayer (splits ops) |" in place.notes[1]


@pytest.mark.slow
def test_quick_tournament(tmp_path, placement_explorer):
    """Every registered explorer, a new one included by registering it, on equal terms; claims pass;
    the sweep with ``report: tournament`` writes the same tables."""
    from hetsim.sweep import run_sweep
    from hetsim_papers.tournament.tournament import artifact, tournament_spec

    spec = tournament_spec(quick=True)
    result = run_sweep(spec, tmp_path, workers=2, plots=False)
    # Explorer cells too give the same table whichever runs them (wall time aside).
    alone = run_sweep(spec, workers=1).table
    assert alone.drop(columns="wall_s").equals(result.table.drop(columns="wall_s"))
    ctx = Context("tournament", "pipeline", quick=True)
    pipe = artifact(result, "pipeline", ctx)
    assert all(c.passed for c in pipe.claims) and len(pipe.claims) == 2
    names = {a.name for a in algorithms("pipeline")}
    assert {"Pipe-it", "Pipe-it-A2", "PS", "Shisha", "ES", "RW", "HC", "SA", "HC_s", "SA_s"} <= names
    t = pipe.table
    assert set(t["algorithm"]) >= (names - {"Shisha"}) | {f"Shisha(heuristic=H{i})" for i in range(1, 7)}
    assert set(zip(t["platform"], t["workload"], strict=True)) == set(itertools.product(
        ["chiplet-c2", "hikey970", "hope-he"], ["synthnet", "alexnet"]))
    assert (t["reference"] == "optimum").all()             # every quick space has a DP optimum
    assert (t["quality_max"].dropna() <= 1 + 1e-9).all() and (t["quality_min"].dropna() > 0).all()
    shisha_on_hikey = t[(t["algorithm"] == "Shisha(heuristic=H3)") & (t["platform"] == "hikey970")]
    assert (shisha_on_hikey["failed"] == shisha_on_hikey["seeds"]).all()
    assert shisha_on_hikey["error"].str.contains("core groups").all()
    assert (t.loc[t["algorithm"].isin(["Pipe-it", "Pipe-it-A2"]), "trials_mean"].dropna() == 1).all()

    place = artifact(result, "placement", Context("tournament", "placement", quick=True))
    assert set(place.table["algorithm"].unique()) == {a.name for a in algorithms("placement") if not a.extra}
    assert placement_explorer in set(place.table["algorithm"])
    assert {"OPT", "MILP", "DUET", "Priority"} <= set(place.table["algorithm"])   # the PIM paper's
    assert all(c.passed for c in place.claims) and len(place.claims) == 2
    pt = place.table
    assert (pt["reference"] == "optimum").all()          # CP-SAT's bound proves every quick problem
    assert (pt.loc[~pt["splits"], "quality_max"].dropna() <= 1 + 1e-12).all()
    assert "muLayer" in set(pt.loc[pt["splits"], "algorithm"]) <= {"muLayer", "NSGA-II-split"}
    for kind in ("pipeline", "placement"):
        for ext in ("csv", "md", "png"):
            assert (tmp_path / f"tournament-{kind}.{ext}").stat().st_size > 100


@pytest.mark.slow
def test_reproduce_tournament_quick_without_extra_explorers():
    (exp,) = select(["tournament:pipeline"], False)
    outcome = run_experiment(exp, quick=True)
    assert not claim_problems(outcome)
    assert outcome.artifact.figure is not None and "| Pipe-it |" in outcome.artifact.notes[1]
