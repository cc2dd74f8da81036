"""The PIM paper's reproduction (seed 003): every quick experiment and its claims, the calibration
against hetsim_papers/pim/platforms/pim-zynq.yaml, the DA classes across p, the command line (explore, reproduce, the
bad inputs), and a placement explorer on real ONNX Runtime profiles of this machine."""

from __future__ import annotations

import json
import os

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from helpers import assert_one_line_error, assert_quick_claims  # noqa: E402

from hetsim.experiment import load_papers, run_experiment  # noqa: E402
from hetsim_papers.pim.experiments import runs  # noqa: E402

EXPERIMENTS = load_papers(["pim"])["pim"]
EXPECTED = {"calibration", "fig8", "table1", "table3", "fig5", "fig9", "fig10", "fig11", "fig12",
            "fig13", "optimality", "sensitivity"}


def test_every_figure_and_table_is_registered():
    assert set(EXPERIMENTS) == EXPECTED


@pytest.mark.parametrize("eid", sorted(EXPECTED))
def test_quick_experiment_claims_pass(eid):
    assert_quick_claims(run_experiment(EXPERIMENTS[eid], quick=True))


@pytest.mark.slow
def test_the_calibration_fits_the_shipped_values():
    """The fit, rerun from the stated ratios, gives what hetsim_papers/pim/platforms/pim-zynq.yaml holds."""
    from hetsim_papers.pim.experiments import calibration as cal

    c = cal.calibrate()
    shipped = cal.shipped_values()
    assert set(c.values) == set(shipped) == set(cal.SOURCES)
    for key, value in c.values.items():
        assert shipped[key] == pytest.approx(value, rel=1e-5), key
    assert c.rms_fig11 < 0.02
    assert cal.copy_factor_of(runs.platform()) == pytest.approx(c.copy_factor, rel=1e-4)


# -- the counts -------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", list(runs.MODELS))
def test_the_dcg_of_the_imported_workload_has_the_zoo_models_counts(model):
    """The DCG built on the placement problem (the ONNX model imported as a workload, capability
    from the PIM cost model) counts what the zoo counts on the ONNX graph itself: Tables 1 and 3."""
    from hetsim_papers.pim.dcg import Dcg
    from hetsim_papers.pim.networks import dcg_counts

    for devices in (("CPU_S", "CPU_P", "PIM"), ("CPU_S", "PIM")):
        ours = Dcg.from_problem(runs.problem(model, 8), list(devices)).counts()
        theirs = dcg_counts(runs.onnx_model(model, 8), devices)
        assert (ours.V_c, ours.E_c, ours.V_d, ours.E_d, ours.DA) == (theirs.V_c, theirs.E_c, theirs.V_d,
                                                                    theirs.E_d, theirs.DA)
        assert ours.log3_paths == pytest.approx(theirs.log3_paths)


def test_da_structure_does_not_depend_on_p():
    """DA classes are keyed by bytes (Tables 1 and 3), and at some p two shapes have equal bytes and
    merge (BERT 20 / 22 / 22 / 20 at p = 8 / 16 / 32 / 64). Keyed by the tensor's shape as a function
    of p, the classes are the same 27 at every p, and every other count is the same too."""
    ps = runs.SEQUENCE_LENGTHS
    shape_of = {}      # op -> its output dims at every p: the shape as a function of p
    for p in ps:
        for op in runs.workload("bert-small", p).ops:
            shape_of.setdefault(op.name, []).append(op.dims)
    keys, counts, da = [], [], []
    for p in ps:
        g = runs.dcg("bert-small", p)
        _, of_copy = g.da_classes()
        keys.append({(g.dtype[j], tuple(shape_of[g.ops[j]]), g.devices[a], g.devices[b])
                     for (j, a, b) in of_copy})
        c = g.counts()
        counts.append((c.V_c, c.E_c, c.V_d, c.E_d))
        da.append(c.DA)
    assert all(k == keys[0] for k in keys) and all(c == counts[0] for c in counts)
    assert len(keys[0]) == 27 and da == [20, 22, 22, 20]
    # each p's DA classes are the shape classes with equal bytes merged
    for i, p in enumerate(ps):
        merged = {(dt, int(np.prod(shape[i])), a, b) for dt, shape, a, b in keys[0]}
        assert len(merged) == da[i], p


def test_opt_is_the_exact_optimum_of_a_15_node_window():
    """Fig. 13's check at full size on one model: every one of the window's paths scored."""
    from hetsim_papers.pim.experiments.optimality import window_check

    r = window_check("bert-small", 15)
    assert r["paths"] >= 3**12
    assert r["opt_ms"] == pytest.approx(r["min_ms"], rel=1e-9)
    assert r["milp_ms"] == pytest.approx(r["min_ms"], rel=1e-9)


# -- the command line --------------------------------------------------------------------------------------
def test_explore_runs_the_papers_schemes(hetsim):
    out = {}
    for label, algorithm, params in (("OPT", "OPT", ()), ("PIM first", "Priority", ("--param", "order=[PIM,CPU_P,CPU_S]")),
                                     ("CPU_S", "Priority", ("--param", "order=[CPU_S]"))):
        r = hetsim("explore", "-p", "pim-zynq", "-w", "bert-small-p8", "-a", algorithm, *params, "--json")
        assert r.returncode == 0, r.stderr
        out[label] = json.loads(r.stdout)
    assert out["OPT"]["trials"] == 5 and out["CPU_S"]["algorithm"] == "CPU_S only"
    assert out["OPT"]["best_latency_s"] < out["PIM first"]["best_latency_s"] < out["CPU_S"]["best_latency_s"]
    r = hetsim("explore", "-p", "pim-zynq", "-w", "bert-small-p8", "-a", "DUET", "--param", "x=0.25", "--json")
    assert json.loads(r.stdout)["algorithm"] == "DUET(x=25%)"


def test_reproduce_writes_the_figure(hetsim, tmp_path):
    r = hetsim("reproduce", "pim:fig5", "--quick", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "pim" / "fig5.csv").is_file()
    assert json.loads((tmp_path / "scorecard.json").read_text())["failed"] == 0


def test_an_op_no_device_can_run_is_one_line(hetsim):
    r = hetsim("explore", "-p", "pim-zynq", "-w", "bert-small-p8", "-a", "OPT", "--eps", "PIM")
    assert_one_line_error(r, "op 'extended_attention_mask.Unsqueeze' can run on none of the devices ['PIM']")


def test_a_graph_with_a_cycle_is_one_line(hetsim, tmp_path):
    cyclic = tmp_path / "cyc.yaml"
    cyclic.write_text("schema: 1\nname: cyc\nlayer_kinds: [binary]\n"
                      "input: {name: x, dims: [1, 4], dtype: float32}\nops:\n"
                      "  - {name: a, kind: binary, op_type: Add, inputs: [x, b], dims: [1, 4]}\n"
                      "  - {name: b, kind: binary, op_type: Mul, inputs: [a], dims: [1, 4]}\n")
    assert_one_line_error(hetsim("explore", "-p", "pim-zynq", "-w", str(cyclic), "-a", "OPT"),
                          "inputs form a cycle a -> b -> a")
    from onnx import TensorProto, helper

    nodes = [helper.make_node("Add", ["x", "b_out"], ["a_out"], name="a"),
             helper.make_node("Mul", ["a_out", "a_out"], ["b_out"], name="b")]
    graph = helper.make_graph(nodes, "cyc", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("b_out", TensorProto.FLOAT, [1, 4])])
    onnx.save(helper.make_model(graph), tmp_path / "cyc.onnx")
    assert_one_line_error(hetsim("workloads", "import", str(tmp_path / "cyc.onnx"), "--out",
                                 str(tmp_path / "w.yaml")), "the graph has a cycle")


def _synthetic_profile(tmp_path, drop: str | None = None):
    """costs.csv of BERT-small p = 8 on two thread settings C1, C2 (times from the PIM model's CPU_S and
    CPU_P, so that C2 wins the MatMuls and loses the small ops), and its workload and platform."""
    from hetsim.cli.profile import platform_yaml
    from hetsim.workload.build import workload_yaml
    from hetsim.workload.onnx_import import import_onnx

    problem = runs.problem("bert-small", 8)
    times = problem.op_times()
    rows = []
    for i, op in enumerate(problem.ops):
        if op == drop:
            continue
        rows.append({"op": op, "ep": "C1", "time_s": times[i, 0]})
        if np.isfinite(times[i, 1]):
            rows.append({"op": op, "ep": "C2", "time_s": times[i, 1]})
    out = tmp_path / "prof"
    out.mkdir()
    pd.DataFrame(rows).to_csv(out / "costs.csv", index=False)
    (out / "platform.yaml").write_text(platform_yaml("bert8-ort", 2, [1, 2]))
    spec = import_onnx(runs.onnx_model("bert-small", 8), "bert8").spec
    (out / "bert8.yaml").write_text(workload_yaml(spec))
    return out


def test_opt_on_measured_costs_chooses_per_op_between_thread_settings(hetsim, tmp_path):
    """import.md's demo: one device per op between the 1-thread and 2-thread sessions of ONNX
    Runtime (one memory: no copies), from a cost table in the format `hetsim profile` writes."""
    out = _synthetic_profile(tmp_path)
    args = ["-p", str(out / "platform.yaml"), "-w", str(out / "bert8.yaml"), "--cost-table", str(out),
            "--eps", "C1,C2", "--json"]
    got = {label: json.loads(hetsim("explore", *args, "-a", a, *p).stdout)
           for label, a, p in (("OPT", "OPT", ()), ("MILP", "MILP", ()),
                               ("C1", "Priority", ("--param", "order=[C1]")),
                               ("C2 first", "Priority", ("--param", "order=[C2,C1]")))}
    costs = pd.read_csv(out / "costs.csv")
    per_op_min = costs.groupby("op").time_s.min().sum()
    assert got["OPT"]["best_latency_s"] == pytest.approx(per_op_min, rel=1e-12)
    assert got["MILP"]["best_latency_s"] == pytest.approx(per_op_min, rel=1e-12)
    assert got["OPT"]["best_latency_s"] < min(got["C1"]["best_latency_s"], got["C2 first"]["best_latency_s"])


def test_a_profile_that_misses_an_op_is_one_line(hetsim, tmp_path):
    out = _synthetic_profile(tmp_path, drop="encoder.layer.0.attention.Softmax")
    r = hetsim("explore", "-p", str(out / "platform.yaml"), "-w", str(out / "bert8.yaml"), "-a", "OPT",
               "--cost-table", str(out), "--eps", "C1,C2")
    assert_one_line_error(r, "op 'encoder.layer.0.attention.Softmax' can run on none of the devices ['C1', 'C2']")


@pytest.mark.slow
def test_opt_on_real_onnx_runtime_profiles_of_this_machine(hetsim, tmp_path):
    """The real thing: BERT-small p = 8 profiled here with 1 and 2 threads, then OPT per op."""
    from hetsim_papers.pim.networks import bert_small

    model = tmp_path / "bert8.onnx"
    onnx.save(bert_small(8, weights="random", seed=0), model)
    threads = sorted({1, min(2, len(os.sched_getaffinity(0)))})
    out = tmp_path / "prof"
    r = hetsim("profile", str(model), "--threads", ",".join(map(str, threads)), "--runs", "4",
               "--warmup", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    eps = ",".join(f"C{t}" for t in threads)
    args = ["-p", str(out / "platform.yaml"), "-w", str(out / "bert8.yaml"), "--cost-table", str(out),
            "--eps", eps, "--json"]
    opt = json.loads(hetsim("explore", *args, "-a", "OPT").stdout)
    costs = pd.read_csv(out / "costs.csv")
    assert opt["best_latency_s"] == pytest.approx(costs.groupby("op").time_s.min().sum(), rel=1e-9)
    for ep in eps.split(","):
        assert opt["best_latency_s"] <= costs[costs.ep == ep].time_s.sum() + 1e-12


@pytest.mark.parametrize(("args", "fragment"), [
    (("--depth", "2"), "--depth does not apply to OPT, a placement algorithm"),
    (("--objective", "energy"), "--objective energy: pim-zynq has no power model"),
    (("--param", "foo=1"), "--param foo: OPT has no parameter 'foo'"),
    (("--eps", "GPU"), "--eps 'GPU': no such EP on pim-zynq"),
])
def test_placement_explore_errors_name_the_flag(hetsim, args, fragment):
    assert_one_line_error(hetsim("explore", "-p", "pim-zynq", "-w", "bert-small-p8", "-a", "OPT", *args), fragment)
