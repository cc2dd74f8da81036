"""One exploration spec (hetsim.exploration.spec): ``hetsim explore``'s flags and a sweep's explorer
cell describe the same ExplorationSpec and build the same exploration (the same trial table for the
same seed); its errors name the flag or the key; a sweep's shared base leaves out what a cell's
algorithm ignores, where the command line refuses it; and hetsim.options sits below the simulator."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest
from helpers import assert_one_line_error

from hetsim.cli.explore import FLAGS, flags_spec
from hetsim.errors import HetsimError
from hetsim.exploration.spec import ExplorationSpec, build
from hetsim.sweep import expand, spec_from_dict
from hetsim.sweep.cells import exploration_spec, make_problem, run_cell

# (hetsim explore's flags, flags_spec's keywords for them, the same exploration as a sweep's base)
CASES = {
    "noisy SA on an SoC": (
        ["-p", "rk3588", "-w", "synthnet", "-a", "SA", "--depth", "2", "--depth", "3", "--noise", "0.05",
         "--max-trials", "40", "--seed", "3"],
        dict(algorithm="SA", depths=(2, 3), noise_sigma=0.05, max_trials=40, seed=3),
        {"algorithm": "SA", "problem": {"depths": [2, 3]}, "measurement": {"noise_sigma": 0.05},
         "termination": {"max_trials": 40}, "seed": 3}),
    "derived EPs, DES trials, latency": (
        ["-p", "hikey970", "-w", "alexnet", "-a", "HC", "--engine", "des", "--frames", "4", "--objective",
         "latency", "--set", "memories.dram.bandwidth_GBps=20", "--seed", "1"],
        dict(algorithm="HC", engine="des", frames=4, objective="latency",
             overrides=("memories.dram.bandwidth_GBps=20",), seed=1),
        {"algorithm": "HC", "set": {"memories.dram.bandwidth_GBps": 20},
         "problem": {"objective": "latency"}, "measurement": {"engine": "des", "frames_per_trial": 4},
         "seed": 1}),
    "core groups, a Pareto front": (
        ["-p", "hikey970", "-w", "alexnet", "-a", "RW", "--assignment", "cores", "--depth", "3",
         "--pareto", "throughput,memory", "--max-trials", "25"],
        dict(algorithm="RW", assignment_kind="cores", depths=(3,), pareto="throughput,memory", max_trials=25),
        {"algorithm": "RW", "problem": {"assignment": "cores", "depths": [3], "objective": "throughput",
                                        "track": ["memory"]}, "termination": {"max_trials": 25}}),
}


def _cell(base: dict, platform: str, workload: str):
    spec = spec_from_dict({"schema": 1, "name": "one", "base": {"platform": platform, "workload": workload,
                                                               **base}})
    cells = expand(spec)
    assert len(cells) == 1
    return cells[0]


@pytest.mark.parametrize("case", list(CASES))
def test_flags_and_a_sweep_cell_build_the_same_exploration(hetsim, tmp_path, case):
    argv, keywords, base = CASES[case]
    platform, workload = argv[1], argv[3]
    cell = _cell(base, platform, workload)
    spec = exploration_spec(cell.config)
    assert spec == flags_spec(platform, workload, **keywords)    # one description...
    csv = tmp_path / "trials.csv"
    p = hetsim("explore", *argv, "--trials", str(csv), "--json")
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    # ... one exploration: the cell's trial table is the command's, byte for byte.
    trials = io.StringIO()
    build(spec, strict=False, cache=True).run().trials.to_csv(trials, index=False)
    assert trials.getvalue() == csv.read_text()
    status, error, metrics = run_cell(cell.config)
    assert status == "ok", error
    assert (metrics["best_mapping"], metrics["trials"]) == (summary["best_mapping"], summary["trials"])


def test_a_cell_s_noise_free_twin_is_the_same_space_without_noise():
    cell = _cell(CASES["noisy SA on an SoC"][2], "rk3588", "synthnet")
    noisy, twin = make_problem(cell.config), make_problem(cell.config, noise_free=True)
    assert noisy.measurement.noise_sigma == 0.05 and twin.measurement.noise_sigma == 0.0
    assert (noisy.eps, noisy.depths, noisy.design_space_size) == (twin.eps, twin.depths, twin.design_space_size)


def test_errors_name_the_flag_on_the_command_line_and_the_key_elsewhere():
    with pytest.raises(HetsimError, match=r"^--max-trials must be an integer in \[1, 1000000000\] \(got 0\)$"):
        flags_spec("hikey970", "alexnet", max_trials=0)
    with pytest.raises(HetsimError, match=r"^termination.max_trials must be an integer in \[1, 1000000000\]"):
        ExplorationSpec.make(platform="hikey970", workload="alexnet", termination={"max_trials": 0})
    with pytest.raises(HetsimError, match=r"^measurement.noise_sigma must be a number in \[0, 5\] \(got 1000000.0\)"):
        ExplorationSpec.make(platform="hikey970", workload="alexnet", measurement={"noise_sigma": 1e6})
    with pytest.raises(HetsimError, match=re.escape("problem.epss: unknown key (did you mean 'eps'?); allowed: assignment, eps")):
        ExplorationSpec.make(platform="hikey970", workload="alexnet", problem={"epss": ["big"]})
    bad_ep = ExplorationSpec.make(platform="hikey970", workload="alexnet", algorithm="ES", problem={"eps": ["X9"]})
    with pytest.raises(HetsimError, match=r"^problem.eps 'X9': no such EP on hikey970"):
        build(bad_ep)
    with pytest.raises(HetsimError, match=r"^--eps 'X9': no such EP on hikey970"):
        build(bad_ep, names=FLAGS)


def test_a_shared_base_leaves_out_what_an_algorithm_ignores_the_command_line_refuses_it():
    """A sweep's base serves every algorithm of its axis (pipelines and DAG schedulers): a pipeline
    algorithm's cell leaves out the placements' comm; one exploration (strict) refuses it."""
    spec = ExplorationSpec.make(platform="hikey970", workload="alexnet", algorithm="ES",
                                problem={"depths": [2], "comm": "consumer"},
                                measurement={"mode": "stages", "noise_sigma": 0.02})
    pipeline = build(spec, strict=False)
    assert pipeline.problem.depths == (2,) and pipeline.problem.measurement.mode == "stages"
    with pytest.raises(HetsimError, match="^problem.comm does not apply to ES, a pipeline algorithm"):
        build(spec)


def test_a_noisy_placement_trial_runs_in_the_des_without_contention():
    from hetsim.exploration.spec import _Inputs, _Names, _placement_measurement

    spec = ExplorationSpec.make(platform="hikey970", workload="alexnet", measurement={"noise_sigma": 0.02})
    assert _placement_measurement(spec, "X", _Names(None), True, False) == {
        "mode": "stream", "frames_per_trial": 1, "engine": "des", "contention": False, "noise_sigma": 0.02}
    assert _placement_measurement(spec, "X", _Names(None), True, True)["noise_sigma"] == 0.0
    assert "engine" not in _placement_measurement(spec, "X", _Names(None), True, True)   # closed form
    given = ExplorationSpec.make(platform="hikey970", workload="alexnet",
                                 measurement={"noise_sigma": 0.02, "engine": "des"})
    assert "contention" not in _placement_measurement(given, "X", _Names(None), True, False)
    assert _Inputs.of(spec, cache=True) is _Inputs.of(spec, cache=True)


def test_the_algorithm_axis_takes_every_algorithm_of_some_problem_kinds():
    from hetsim.exploration.registry import algorithms

    spec = spec_from_dict({"schema": 1, "base": {"platform": "hikey970", "workload": "alexnet"},
                           "axes": {"algorithm": {"all": ["pipeline"]}}})
    assert [c.axes["algorithm"] for c in expand(spec)] == [a.name for a in algorithms("pipeline")]
    with pytest.raises(HetsimError, match="axes.algorithm"):
        spec_from_dict({"schema": 1, "base": {"platform": "hikey970", "workload": "alexnet"},
                        "axes": {"algorithm": {"all": ["pipelines"]}}})


def test_a_bad_value_on_a_measurement_axis_is_a_cell_error_naming_the_key(tmp_path):
    spec = spec_from_dict({"schema": 1, "base": {"platform": "rk3588", "workload": "synthnet",
                                                 "algorithm": "ES", "problem": {"depths": [2]}},
                           "axes": {"measurement": {"noise_sigma": [0.0, 1e6]}}})
    results = [run_cell(c.config) for c in expand(spec)]
    assert results[0][0] == "ok"
    assert results[1][:2] == ("error", "measurement.noise_sigma must be a number in [0, 5] (got 1000000.0)")


def test_explore_refuses_huge_noise_in_one_line(hetsim):
    assert_one_line_error(hetsim("explore", "-p", "rk3588", "-w", "synthnet", "--noise", "1e6"),
                          "--noise must be a number in [0, 5] (got 1000000.0)")


def test_options_sit_below_the_simulator():
    """hetsim.options imports nothing of hetsim.sim (the simulator reads RunOptions, not back)."""
    code = ("import sys, hetsim.options; "
            "print(sorted(m for m in sys.modules if m.startswith('hetsim.sim')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
