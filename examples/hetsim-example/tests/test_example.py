"""The example plugin, installed from its own pyproject.toml (``make test`` runs ``pip install -e
examples/hetsim-example``), seen by hetsim through its entry point only: its explorer in the
registry, ``hetsim explore``, a sweep and the tournament; its cost model and parameter block in
the platform schema; its experiment in ``hetsim reproduce`` and the scorecard. No core file names it.
"""

from __future__ import annotations

import json
import math
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
import yaml
from helpers import assert_one_line_error
from hetsim_example.restarts import RandomRestartHillClimbing

from hetsim.cost import RooflineCostModel, cost_model_names, make_cost_model
from hetsim.errors import HetsimError
from hetsim.exploration import PipelineProblem, algorithms, explore, get_algorithm, make_explorer
from hetsim.platform import load_platform
from hetsim.plugins import plugin
from hetsim.workload import load_workload

REPO = Path(__file__).resolve().parents[3]
try:
    distribution("hetsim-example")
except PackageNotFoundError:   # a clear failure, not a skip: the suite is meant to exercise it
    pytest.fail("the example plugin is not installed: make test, or pip install -e examples/hetsim-example",
                pytrace=False)


def test_it_is_found_through_its_entry_point_and_no_core_file_names_it():
    p = plugin("example")
    assert (p.package, p.distribution) == ("hetsim_example", "hetsim-example")
    assert "RRHC" in [a.name for a in algorithms("pipeline")] and get_algorithm("RRHC").plugin == "example"
    assert "sustained" in cost_model_names()
    core = list((REPO / "hetsim").rglob("*.py"))
    assert not [f for f in core if "hetsim_example" in f.read_text() or "RRHC" in f.read_text()]
    with open(REPO / "pyproject.toml", "rb") as f:                # hetsim's own entry points: not it
        declared = tomllib.load(f)["project"]["entry-points"]["hetsim.plugins"]
    assert "example" not in declared and not [v for v in declared.values() if "hetsim_example" in v]


def test_the_cli_lists_what_it_adds(hetsim):
    assert "RRHC" in hetsim("explore", "--help").stdout.replace("\n", " ")
    assert "sustained" in hetsim("simulate", "--help").stdout
    assert "rk3588-fanless" in hetsim("platforms", "list").stdout
    from hetsim.experiment import papers, select

    assert "example" in papers() and [e.id for e in select(["example"], False)] == ["restarts"]


# -- the explorer ------------------------------------------------------------------------------------
def test_rrhc_in_hetsim_explore(hetsim, tmp_path):
    trials = tmp_path / "trials.csv"
    p = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "RRHC", "--param", "restarts=3", "--json",
               "--trials", str(trials))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["algorithm"] == "RRHC" and out["best_fps"] > 0 and out["stop_reason"] == "converged"
    assert trials.read_text().count("restart ") == 3          # one phase label per climb's start
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "RRHC", "--param",
                                 "restarts=0"), "RRHC: restarts=0 is out of range")
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "RRHC", "--param",
                                 "restart=3"), "RRHC has no parameter 'restart'")


def test_rrhc_returns_the_best_climb_and_is_seeded():
    problem = PipelineProblem("rk3588", "synthnet", depths=[2, 3])
    for seed in range(3):
        r = explore(problem, make_explorer("RRHC", restarts=4), seed=seed)
        ends = r.info["climb_ends"]
        assert len(ends) == 4 and [t for t, _ in ends] == sorted(t for t, _ in ends)
        # Every trial is a start, an accepted move or a rejected neighbour: none beats the best end.
        assert r.best_fps == max(v for _, v in ends) == r.trials["throughput_fps"].max()
        again = explore(problem, make_explorer("RRHC", restarts=4), seed=seed)
        assert again.trials.equals(r.trials)
    deeper = explore(PipelineProblem("rk3588", "synthnet", depths=[2, 3, 4]),
                     make_explorer("RRHC", restarts=3, vary_depth=True), seed=0)
    assert set(deeper.trials["depth"]) > {int(deeper.trials["depth"].iloc[0])}   # split and merge moves
    with pytest.raises(HetsimError, match="RRHC: vary_depth=1 is not allowed"):
        explore(problem, RandomRestartHillClimbing(vary_depth=1))   # the class itself validates


def test_rrhc_in_a_sweep(hetsim, tmp_path):
    spec = tmp_path / "rrhc.yaml"
    spec.write_text(yaml.safe_dump({
        "schema": 1, "name": "rrhc-vs-hc", "description": "RRHC against HC on alexnet",
        "base": {"platform": "hikey970", "workload": "alexnet", "problem": {"depths": [2]}},
        "axes": {"algorithm": ["RRHC", "HC"], "params": {"RRHC": {"restarts": [1, 3]}}, "seed": [0, 1]},
    }))
    p = hetsim("sweep", str(spec), "--out", str(tmp_path / "out"), "-j", "1", "--no-plots")
    assert p.returncode == 0, p.stderr
    import pandas as pd

    table = pd.read_csv(tmp_path / "out" / "results.csv")
    labels = set(table["algorithm"])
    assert {"RRHC(restarts=1)", "RRHC(restarts=3)", "HC"} <= labels and len(table) == 6
    assert (table["best_fps"] > 0).all()


def test_the_tournament_picks_it_up(hetsim, tmp_path):
    pytest.importorskip("hetsim_papers.tournament")   # the tournament is a plugin of hetsim's papers
    from hetsim.sweep.spec import algorithm_entries
    from hetsim_papers.tournament.tournament import SPEC, tournament_spec

    assert "RRHC" in [e.name for e in algorithm_entries(tournament_spec(quick=True))]   # algorithm: all
    data = yaml.safe_load(SPEC.read_text())            # the shipped SPEC, narrowed to RRHC
    data["axes"].update(platform=["hikey970"], workload=["synthnet"], algorithm=["RRHC", "ES"], seed=[0])
    data["axes"]["params"] = {}
    data["base"]["termination"]["max_trials"] = 200
    spec = tmp_path / "tournament-rrhc.yaml"
    spec.write_text(yaml.safe_dump(data))
    p = hetsim("sweep", str(spec), "--out", str(tmp_path / "out"), "-j", "1", "--no-plots")
    assert p.returncode == 0, p.stderr
    report = (tmp_path / "out" / "tournament-pipeline.md").read_text()
    assert "RRHC" in report


# -- the cost model and its parameter block --------------------------------------------------------
def test_the_sustained_model_scales_compute_and_keeps_bytes():
    wl = load_workload("alexnet")
    base = load_platform("hikey970")
    same = make_cost_model(base, model="sustained")            # no sustained block: the defaults, f = 1
    roof = RooflineCostModel(base)
    assert (same.layer_times(wl, base.ep("B4")) == roof.layer_times(wl, base.ep("B4"))).all()
    half = load_platform("hikey970", ["core_types.cortex-a73.sustained.clock_fraction=0.5"])
    cost = make_cost_model(half, model="sustained")
    assert half.core_type("cortex-a73").sustained.clock_fraction == 0.5
    for ep in ("B4", "B1"):
        r, s = roof.ep_rates(base.ep(ep)), cost.ep_rates(half.ep(ep))
        assert s.gemm_MACps == r.gemm_MACps / 2 and s.dw_MACps == r.dw_MACps / 2
        assert s.bandwidth_Bps == r.bandwidth_Bps and s.overhead_s == r.overhead_s
    assert cost.ep_rates(half.ep("s4")) == roof.ep_rates(base.ep("s4"))          # the A53s hold their clock
    for op in wl.ops:
        t0, t1 = roof.op_time(op, base.ep("B4")), cost.op_time(op, half.ep("B4"))
        assert t0 <= t1 <= 2 * t0 * (1 + 1e-12)
        if op.macs == 0:                                                          # memory-bound: unchanged
            assert t1 == t0
    assert any(cost.op_time(op, half.ep("B4")) == pytest.approx(2 * roof.op_time(op, base.ep("B4")), rel=0.05)
               for op in wl.ops if op.kind.value == "conv")


def test_its_block_is_validated_under_its_own_key(hetsim, tmp_path):
    base = ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-11", "--cost-model", "sustained", "--json"]
    slow = hetsim(*base, "--set", "core_types.cortex-a73.sustained.clock_fraction=0.5")
    fast = hetsim(*base)
    assert slow.returncode == fast.returncode == 0, slow.stderr + fast.stderr
    assert json.loads(slow.stdout)["throughput_fps"] < json.loads(fast.stdout)["throughput_fps"]
    assert_one_line_error(hetsim(*base, "--set", "core_types.cortex-a73.sustained.clock_fraction=1.5"),
                          "core_types.0.sustained.clock_fraction: must be a number in [1e-06, 1] (got 1.5)")
    text = (plugin("example").path("platforms") / "rk3588-fanless.yaml").read_text()
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("clock_fraction: 0.6", "clock_fractoin: 0.6"))
    p = hetsim("simulate", "-p", str(bad), "-w", "alexnet", "-m", "B4:1-11")
    assert_one_line_error(p, "core_types.0.sustained.clock_fractoin: Extra inputs are not permitted")
    schema = tmp_path / "schema.json"
    assert hetsim("platforms", "schema", "--out", str(schema)).returncode == 0
    assert "clock_fraction" in schema.read_text()


def test_its_platform_selects_its_cost_model():
    p = load_platform("rk3588-fanless")
    assert p.runtime.cost_model == "sustained" and type(make_cost_model(p)).__name__ == "SustainedClockCostModel"
    assert math.isclose(p.core_type("cortex-a76").sustained.clock_fraction, 0.6)


# -- the experiment ----------------------------------------------------------------------------------
def test_its_experiment_runs_in_reproduce_and_lands_in_the_scorecard(hetsim, tmp_path):
    p = hetsim("reproduce", "example", "--quick", "--out", str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "example" / "restarts.csv").is_file()
    assert (tmp_path / "example" / "restarts.png").read_bytes()[:4] == b"\x89PNG"
    card = json.loads((tmp_path / "scorecard.json").read_text())
    claims = [c for c in card["claims"] if c["paper"] == "example"]
    assert len(claims) == 6 and "example" in (tmp_path / "scorecard.md").read_text()
    # Every claim passes or fails with the reason its known_disagreements.yaml gives, and no listed
    # claim passes (the rule every paper's quick experiments follow).
    for c in claims:
        assert c["pass"] != (c["known_disagreement"] is not None), c["claim"]
    assert sum(c["known_disagreement"] is not None for c in claims) == 4
