"""An explore you can trust on a phone SoC (issue 31): the analytic engine's fluid contention
estimate, the answer re-simulated in the DES, depth 1 in the space, and the acceptance invariant on
the issue's hypothetical SoC: the explored answer's DES throughput is within 5 % of the best DES
throughput of the whole space (exhaustive, in the DES).

tests/data/phone-soc.yaml is the issue's platform written from its description (2 performance +
6 efficiency cores, a GPU, an INT8 NPU, one LPDDR5 at 50 GB/s), by hand, without a cost block;
resnet18-onnx is ResNet-18 as a torch export writes it (hetsim/workload/generated.py).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest
from helpers import needs_plugin

from hetsim.analytic import SplitScorer, split_boundaries
from hetsim.contention import fluid_bound
from hetsim.cost import make_cost_model
from hetsim.evaluation import evaluate
from hetsim.exploration import PipelineProblem
from hetsim.exploration.confirm import des_optimum, simulate_config
from hetsim.exploration.problem import Configuration, Measurement
from hetsim.exploration.spec import ExplorationSpec, build
from hetsim.mapping import parse_pipeline
from hetsim.platform import load_platform
from hetsim.workload import load_workload

PHONE = str(Path(__file__).resolve().parent / "data" / "phone-soc.yaml")
#: The issue's ES answer: 539 f/s in closed form, 212 f/s in the DES (its numbers; ours below).
CONTENDED = "perf:1-2|npu:3-40|gpu:41-52|eff:53-54"


@pytest.fixture(scope="module")
def phone():
    platform = load_platform(PHONE)
    return platform, load_workload("resnet50"), make_cost_model(platform)


def test_fluid_estimate_is_the_closed_form_where_nothing_is_shared(phone):
    platform, workload, cost = phone
    one = parse_pipeline("npu:1-54", platform, workload)
    assert fluid_bound(platform, workload, one, cost).resource is None     # one stage: nothing shared
    a = evaluate(platform, workload, one, engine="analytic")
    b = evaluate(platform, workload, one, engine="analytic", contention=False)
    d = evaluate(platform, workload, one)
    assert a.throughput_fps == b.throughput_fps and a.bound_by is None
    assert d.throughput_fps == pytest.approx(a.throughput_fps, rel=1e-9)


@needs_plugin("shisha")
def test_fluid_estimate_is_the_closed_form_between_chiplets():
    # chiplet-c2's EPs each have their own memory, and one hand-off crosses the NoP: no bound
    c2 = load_platform("chiplet-c2")
    w = load_workload("synthnet")
    pipe = parse_pipeline("FEP0:1-9|SEP0:10-18", c2, w)
    assert fluid_bound(c2, w, pipe, make_cost_model(c2)).resource is None
    assert evaluate(c2, w, pipe, engine="analytic").throughput_fps == \
        evaluate(c2, w, pipe, engine="analytic", contention=False).throughput_fps


def test_fluid_estimate_follows_the_des_where_the_memory_saturates(phone):
    platform, workload, cost = phone
    pipe = parse_pipeline(CONTENDED, platform, workload)
    alone = evaluate(platform, workload, pipe, engine="analytic", contention=False).throughput_fps
    fluid = evaluate(platform, workload, pipe, engine="analytic")
    des = evaluate(platform, workload, pipe).throughput_fps
    assert fluid.bound_by == "memory lpddr5"
    bound = fluid_bound(platform, workload, pipe, cost)
    capacity, nbytes = bound.loads["memory lpddr5"]
    assert capacity == 50e9 and fluid.throughput_fps == pytest.approx(capacity / nbytes, rel=1e-12)
    assert alone > 1.4 * des                           # each stage timed alone: far too optimistic
    assert fluid.throughput_fps == pytest.approx(des, rel=0.05)


def test_split_scorer_with_contention_is_the_analytic_engine(phone):
    platform, workload, cost = phone
    eps = [platform.ep(n) for n in ("npu", "gpu", "perf", "eff")]
    scorer = SplitScorer(platform, workload, cost, eps, contention=True)
    rng = np.random.default_rng(0)
    for k in (1, 2, 3, 4):
        bounds = split_boundaries(workload.num_layers, k)
        rows = rng.choice(len(bounds), size=min(5, len(bounds)), replace=False)
        for order in itertools.permutations(range(4), k):
            fps = scorer.throughput(bounds[rows], order)
            for b, f in zip(bounds[rows], fps, strict=True):
                pipe = parse_pipeline("|".join(f"{eps[o].name}:{b[i] + 1}-{b[i + 1]}" for i, o in enumerate(order)),
                                      platform, workload)
                assert f == pytest.approx(evaluate(platform, workload, pipe, engine="analytic").throughput_fps,
                                          rel=1e-12)


def test_des_optimum_is_the_best_of_every_des_run():
    """The pruned search (contention only slows down) equals simulating every configuration."""
    problem = PipelineProblem(PHONE, "resnet18-onnx", eps=["npu", "gpu", "perf"], depths=[1, 2])
    best, fps, runs = des_optimum(problem)
    every = {}
    for k in problem.depths:
        for b in split_boundaries(problem.num_layers, k):
            split = tuple(int(x) for x in np.diff(b))
            for order in problem.orders(k):
                cfg = Configuration(split, order)
                if problem.capable(cfg):
                    every[cfg] = simulate_config(problem, cfg).throughput_fps
    assert fps == max(every.values()) and every[best] == fps
    assert runs < len(every)


def test_the_default_space_holds_one_ep_alone():
    setup = build(ExplorationSpec.make(platform=PHONE, workload="resnet18-onnx", algorithm="ES"))
    assert setup.problem.depths == (1, 2, 3, 4)
    assert PipelineProblem("rk3588", "resnet50").depths[0] == 1
    assert build(ExplorationSpec.make(platform="rk3588", workload="resnet50", algorithm="ES",
                                      problem={"depths": [2]})).problem.depths == (2,)


@pytest.mark.slow   # ES over a phone SoC's whole space, twice (~40 s)
def test_the_answer_is_the_number_simulate_prints(hetsim):
    """explore's best is re-simulated as `hetsim simulate` runs it, flags included."""
    args = ["-p", PHONE, "-w", "resnet50", "--set", "memories.lpddr5.bandwidth_GBps=40"]
    p = hetsim("explore", *args, "-a", "ES", "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["engine"].startswith("des (100 frames, contention)")
    assert s["search_engine"] == "analytic (fluid contention)"
    sim = hetsim("simulate", *args, "-m", s["best_mapping"], "--json")
    assert json.loads(sim.stdout)["throughput_fps"] == s["best_fps"]
    assert [r["des_fps"] for r in s["confirmed"]][0] <= s["best_fps"] == max(r["des_fps"] for r in s["confirmed"])
    text = hetsim("explore", *args, "-a", "ES").stdout
    assert "simulate it: hetsim simulate -p " in text and "--set memories.lpddr5.bandwidth_GBps=40" in text


def test_confirm_top_zero_answers_with_the_search_and_names_its_engine(hetsim):
    p = hetsim("explore", "-p", PHONE, "-w", "resnet18-onnx", "-a", "ES", "--confirm-top", "0", "--json")
    s = json.loads(p.stdout)
    assert s["engine"] == "analytic (fluid contention)" and "search_best_mapping" not in s
    bad = hetsim("explore", "-p", "rk3588", "-w", "alexnet", "-a", "HEFT", "--confirm-top", "3")
    assert bad.returncode == 2 and "--confirm-top applies to pipeline algorithms" in bad.stderr


def _invariant(platform: str, workload: str) -> tuple[float, float]:
    """(DES throughput of the default explore's answer, best DES throughput of its whole space)."""
    setup = build(ExplorationSpec.make(platform=platform, workload=workload))
    answer = setup.run()
    reference = build(ExplorationSpec.make(platform=platform, workload=workload, algorithm="ES",
                                           problem={"assignment": setup.problem.assignment}))
    _, best, _ = des_optimum(reference.problem)
    des = simulate_config(setup.problem, answer.answer).throughput_fps
    assert des == answer.answer_value
    return des, best


def test_the_phone_soc_invariant_on_a_resnet18_import():
    des, best = _invariant(PHONE, "resnet18-onnx")
    assert des >= 0.95 * best


@pytest.mark.slow
def test_the_phone_soc_invariant_on_resnet50():
    des, best = _invariant(PHONE, "resnet50")
    assert des >= 0.95 * best


def test_rk3588_resnet18_default_is_not_left_on_the_cpus():
    """The issue's second case: Shisha's 4-stage answer (74 f/s) against npu:1-19|gpu:20-21 (287
    f/s) that Pipe-search, NSGA-II-pipe and ES find: the default answers within 5 % of the best."""
    des, best = _invariant("rk3588", "resnet18-onnx")
    assert des >= 0.95 * best
    shisha = build(ExplorationSpec.make(platform="rk3588", workload="resnet18-onnx", algorithm="Shisha")) \
        if "Shisha" in _installed() else None
    if shisha is not None:
        assert shisha.run().answer_value < 0.5 * best      # why Shisha is not rk3588's default


def _installed() -> set[str]:
    from hetsim.exploration.registry import algorithms

    return {a.name for a in algorithms("pipeline")}


def test_a_des_trial_is_confirmed_too():
    setup = build(ExplorationSpec.make(platform=PHONE, workload="resnet18-onnx", algorithm="ES",
                                       problem={"eps": ["npu", "gpu"]}, measurement={"engine": "des"}))
    assert setup.problem.measurement == Measurement(mode="stream", engine="des")
    r = setup.run()
    assert r.confirmation is not None and r.answer_engine == "des (100 frames, contention)"
