"""pymoo's NSGA-II over DAG placements (NSGA-II-place, NSGA-II-split): every candidate lies in the
problem, a seed fixes the run, on a small DAG it reaches the optimum over assignments and never
beats CP-SAT's bound, channel splits validate, bad parameters are one-line errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers import random_placement_problem

from hetsim.errors import HetsimError
from hetsim.exploration import MaxTrials, PlacementProblem, explore, make_explorer
from hetsim.exploration.dag.mulayer import can_split
from hetsim.exploration.moo import NSGA2Placement, NSGA2Split, PlacementGenes
from hetsim.mapping import validate_placement


@pytest.fixture(scope="module")
def two_eps():
    return PlacementProblem("hikey970", "synth1")      # big and LITTLE, 14 ops


def test_genes_decode_to_placements_of_the_problem(two_eps):
    genes = PlacementGenes(two_eps, (0.25, 0.5, 0.75))
    assert genes.split_ops == [i for i, op in enumerate(two_eps.workload.ops) if can_split(op)]
    rng = np.random.default_rng(0)
    variables = genes.variables()
    assert genes.names == list(variables)
    samples = [{k: v.sample(1, random_state=rng)[0] for k, v in variables.items()} for _ in range(30)]
    split = 0
    for x in genes.homogeneous() + samples:
        p = genes.decode(x)
        assert two_eps.contains(p) and p.order is None
        for op, shares in p.splits.items():
            assert len(shares) == 2 and shares[0].ep == p.ep_of[op]        # the op's own EP gathers
            c = two_eps.workload.op(op).out_shape.c
            assert round(shares[1].fraction * c, 9).is_integer()             # whole channels
        split += bool(p.splits)
    assert split > 0 and not any(genes.decode(x).splits for x in genes.homogeneous())
    # per op 2 EPs; per splittable op no split or one of 3 shares on the other EP
    assert genes.size == 2 ** len(two_eps.ops) * 4 ** len(genes.split_ops)


def test_a_seed_fixes_the_run_and_the_default_budget_is_the_tournaments(two_eps):
    runs = [explore(two_eps, NSGA2Split(pop_size=8, n_gen=3), seed=s) for s in (0, 0, 1)]
    assert runs[0].trials["mapping"].tolist() == runs[1].trials["mapping"].tolist()
    assert runs[0].trials["mapping"].tolist() != runs[2].trials["mapping"].tolist()
    assert runs[0].n_trials == 24 and runs[0].trials["phase"].eq("nsga2").all()
    big = explore(two_eps, make_explorer("NSGA-II-place"), MaxTrials(5), seed=0)
    assert (big.info.get("pop_size"), big.stop_reason) == (None, "max_trials")   # stopped mid-run
    genes = PlacementGenes(two_eps)
    assert NSGA2Placement().budget(genes) == (40, 25)     # 2^15 assignments: 1,000 trials


@pytest.mark.parametrize("seed", range(3))
def test_on_a_small_dag_it_reaches_the_optimum_and_respects_the_bound(seed):
    prob = random_placement_problem(seed, 8)
    capable = [np.flatnonzero(np.isfinite(row)) for row in prob.op_times()]
    best = min(prob.measure(prob.placement([int(e) for e in a])).latency_s
               for a in itertools.product(*capable))
    result = explore(prob, make_explorer("NSGA-II-place"), seed=seed)
    pop, n_gen = result.info["pop_size"], result.info["n_gen"]
    assert pop * n_gen >= prob.design_space_size > result.n_trials / n_gen  # the small space's budget
    assert result.best_value == pytest.approx(best, rel=1e-12)
    exact = explore(prob, make_explorer("ILP-exact", time_limit_s=10.0), seed=0)
    assert result.best_value >= exact.info["lower_bound_s"] - exact.info["rounding_s"]


@pytest.mark.parametrize("explorer", [NSGA2Placement(pop_size=12, n_gen=6, mutation_prob=0.2),
                                      NSGA2Split(pop_size=10, n_gen=6, shares=(0.5, 0.25))])
@pytest.mark.parametrize("platform", ["hikey970", "rk3588"])
def test_the_array_mating_gives_pymoos_offspring(explorer, platform):
    # the categorical genes recombined on arrays draw what pymoo's MixedVariableMating draws: the
    # same trials in the same order (a pymoo change to its operators' draws fails here)
    problem = PlacementProblem(platform, "synth1")
    runs = {}
    for pymoo_mating in (True, False):
        explorer._pymoo_mating = pymoo_mating
        r = explore(problem, explorer, seed=7)
        trials = list(zip(r.trials["mapping"], r.trials["latency_s"], strict=True))
        runs[pymoo_mating] = (trials, [problem.key(p) for p in r.info["front"]])
    explorer._pymoo_mating = False
    assert len(runs[True][0]) == explorer.pop_size * explorer.n_gen and len(set(runs[True][0])) > 30
    assert runs[True] == runs[False]


def test_split_placements_validate_and_can_beat_the_unsplit_plans(two_eps):
    r = explore(two_eps, make_explorer("NSGA-II-split"), MaxTrials(150), seed=0)
    assert r.best.splits and r.best.order is None
    validate_placement(r.best, two_eps.platform, two_eps.workload, cost=two_eps.cost)
    assert set(r.best.splits) <= {op.name for op in two_eps.workload.ops if can_split(op)}
    place = explore(two_eps, make_explorer("NSGA-II-place"), MaxTrials(150), seed=0)
    assert not place.trials["mapping"].str.contains("split").any()
    assert r.best_value < place.best_value      # big and LITTLE sharing each conv's channels


def test_several_objectives_give_a_front(two_eps):
    r = explore(two_eps, NSGA2Placement(objectives=["latency", "energy"], pop_size=8, n_gen=3), seed=0)
    front = r.info["front"]
    assert front and all(two_eps.contains(p) for p in front) and r.trials["energy_J"].notna().all()


@pytest.mark.parametrize("params, message", [
    ({"pop_size": 1}, "NSGA-II-place: pop_size=1 is out of range; allowed: >= 2"),
    ({"n_gen": 0}, "NSGA-II-place: n_gen=0 is out of range; allowed: >= 1"),
    ({"mutation_prob": 0.0}, "NSGA-II-place: mutation_prob=0.0 is out of range; allowed: > 0 and <= 1"),
    ({"objectives": ["memory"]}, "NSGA-II-place: objective 'memory' is not measured by a placement problem"),
    ({"objectives": "latency"}, "NSGA-II-place: objectives='latency' must be a non-empty list"),
])
def test_bad_parameters_are_one_line_errors(two_eps, params, message):
    with pytest.raises(HetsimError, match="^" + message.replace("(", r"\(")) as e:
        explore(two_eps, make_explorer("NSGA-II-place", **params), seed=0)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("shares, message", [
    ([1.0], "a share of 1 moves the whole op"), ([], "must be a non-empty list"), ("0.5", "must be a non-empty list"),
    ([0.5, 0.5], "lists a fraction twice"), ([0.0], "shares=0.0 is out of range"),
])
def test_bad_shares_are_one_line_errors(two_eps, shares, message):
    with pytest.raises(HetsimError, match=message) as e:
        explore(two_eps, make_explorer("NSGA-II-split", shares=shares), seed=0)
    assert "\n" not in str(e.value) and str(e.value).startswith("NSGA-II-split: shares=")
