"""The per-frame input stage and the feeder share in the simulator: both engines agree exactly
without contention, the input shows in the metrics, the trace and the Gantt chart, the closed-form
scorer (SplitScorer) and the calibration's frame time see the same stage times."""

from __future__ import annotations

import numpy as np
import pytest

from hetsim.analytic import SplitScorer, evaluate_pipeline
from hetsim.calibrate.board import frame_period_s
from hetsim.cost import make_cost_model
from hetsim.evaluation import evaluate, simulate
from hetsim.mapping import load_mapping
from hetsim.platform import load_platform
from hetsim.sim.trace import intervals_of, plot_gantt
from hetsim.tasks import input_stage, stage_costs
from hetsim.workload import load_workload

A73, A53 = "core_types.cortex-a73", "core_types.cortex-a53"
SHARED = (f"{A73}.input_stage.fixed_us=20000.0", f"{A53}.input_stage.fixed_us=5000.0",
          f"{A53}.input_stage.Mcycles=30.0", f"{A53}.feeder_share=0.3")
OWN = (f"{A73}.input_stage.fixed_us=150000.0", "runtime.input_ep=B1", f"{A53}.feeder_share=0.3")


def _setup(extra, mapping="s4:1-10|B3:11-26", workload="squeezenet"):
    p = load_platform("hikey970", list(extra))
    w = load_workload(workload)
    c = make_cost_model(p, model="roofline")
    return p, w, c, load_mapping(mapping, p, w, c)


def test_without_the_fields_the_stages_are_the_layers():
    p, w, c, pipe = _setup(())
    compute, _ = stage_costs(pipe, w, c)
    assert compute[0] == float(c.layer_times(w, pipe.stages[0].ep)[0:10].sum())
    assert input_stage(pipe, c) is None
    m = evaluate(p, w, pipe, cost=c, engine="analytic")
    assert m.input_stage is None and "input_stage" not in m.to_dict()


def test_shared_input_and_feeder_are_the_first_stage_s_time():
    p, w, c, pipe = _setup(SHARED)
    layers = float(c.layer_times(w, pipe.stages[0].ep)[0:10].sum())
    inp = input_stage(pipe, c, {"little": "low"})
    assert inp.shared and inp.time_s == pytest.approx(5e-3 + 30 / 900)   # a + b / f at 900 MHz
    compute, _ = stage_costs(pipe, w, c)
    assert compute[0] == pytest.approx(layers / 0.7 + 5e-3 + 30 / 1800)


@pytest.mark.parametrize("extra", [SHARED, OWN])
@pytest.mark.parametrize("mapping", ["s4:1-10|B3:11-26", "B3:1-5|s4:6-26", "s2:1-26"])
def test_engines_agree_exactly_without_contention(extra, mapping):
    p, w, c, pipe = _setup(extra, mapping)
    a = evaluate(p, w, pipe, cost=c, engine="analytic", frames=40)
    d = evaluate(p, w, pipe, cost=c, engine="des", frames=40, contention=False)
    assert d.throughput_fps == pytest.approx(a.throughput_fps, rel=1e-12)
    assert d.input_stage.ep == a.input_stage.ep and d.input_stage.time_s == pytest.approx(a.input_stage.time_s)
    slow = evaluate(p, w, pipe, cost=c, engine="des", frames=40, contention=False, fast=False)   # SimPy itself
    assert slow.throughput_fps == pytest.approx(a.throughput_fps, rel=1e-12)
    # the contended DES runs too and cannot be faster
    dc = evaluate(p, w, pipe, cost=c, engine="des", frames=40, contention=True)
    assert dc.throughput_fps <= a.throughput_fps * (1 + 1e-9)


def test_an_input_stage_of_its_own_bounds_the_period_and_is_busy_on_its_ep():
    p, w, c, pipe = _setup(OWN, "s4:1-26")
    inp = input_stage(pipe, c)
    assert not inp.shared and str(inp.ep) == "B1" and inp.time_s == pytest.approx(0.15)
    layers = float(c.layer_times(w, pipe.stages[0].ep).sum()) / 0.7
    m = evaluate(p, w, pipe, cost=c, engine="analytic", frames=10)
    assert m.throughput_fps == pytest.approx(1 / max(layers, 0.15))
    assert m.latency_s["mean"] == pytest.approx(layers + 0.15)
    assert m.ep_busy_s["B1"] == pytest.approx(1.5)
    d = evaluate(p, w, pipe, cost=c, engine="des", frames=10, contention=False)
    assert d.ep_busy_s["B1"] == pytest.approx(1.5) and len(d.stages) == 1


@pytest.mark.parametrize("extra", [SHARED, OWN])
def test_the_input_shows_in_the_trace_and_the_gantt_chart(tmp_path, extra):
    p, w, c, pipe = _setup(extra)
    run = simulate(p, w, pipe, cost=c, engine="des", frames=6, contention=False).run
    ivs = intervals_of(run)
    inputs = [iv for iv in ivs if iv.category == "input"]
    assert len(inputs) == 6
    want = input_stage(pipe, c).time_s
    assert all(iv.end_s - iv.start_s == pytest.approx(want) for iv in inputs)
    lanes = {iv.lane for iv in inputs}
    assert lanes == ({"input (B1)"} if extra is OWN else {"stage 1 (s4)"})
    plot_gantt(ivs, tmp_path / "g.png", title="input")
    assert (tmp_path / "g.png").stat().st_size > 1000


@pytest.mark.parametrize("extra", [(), SHARED, OWN])
def test_scorer_and_calibration_see_the_same_stage_times(extra):
    p, w, c, _ = _setup(extra)
    eps = [p.ep("B3"), p.ep("s4")]
    sc = SplitScorer(p, w, c, eps)
    scored = sc.score(2)
    for i in (0, 7, 17):
        for j, o in enumerate(scored.orders):
            b = scored.boundaries[i]
            m = f"{eps[o[0]].name}:1-{b[1]}|{eps[o[1]].name}:{b[1] + 1}-{w.num_layers}"
            fps = evaluate_pipeline(p, w, load_mapping(m, p, w, c), c).throughput_fps
            assert scored.throughput[i, j] == pytest.approx(fps, rel=1e-12)
    split, best = sc.best_split(scored.orders[0])
    assert best == pytest.approx(float(np.max(scored.throughput[:, 0])), rel=1e-12)
    for ep in eps:   # the calibration's whole-network frame: the one-stage pipeline's period
        one = load_mapping(f"{ep.name}:1-{w.num_layers}", p, w, c)
        assert frame_period_s(c, w, ep) == pytest.approx(1 / evaluate_pipeline(p, w, one, c).throughput_fps,
                                                         rel=1e-12)
