"""`hetsim calibrate platform`: the tidy table (columns, one-line errors), the ARM Compute Library
and ONNX Runtime readers, the fit recovering known parameters from measurements hetsim generated
itself (seeded noise), cross-validation and the written platform. Small problems: one or two
networks on one cluster, so that each fit takes seconds."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from hetsim.calibrate.board import calibrate_platform, identifiable, resolve_rows
from hetsim.calibrate.crossval import crossvalidate, folds_of
from hetsim.calibrate.synthetic import synthetic_measurements
from hetsim.calibrate.table import from_acl, normalise, read_acl_log, read_measurements
from hetsim.cli import main
from hetsim.cost import make_cost_model
from hetsim.errors import HetsimError
from hetsim.platform import load_platform

A73 = "core_types.cortex-a73"
TRUTH = (f"{A73}.roofline.gemm_efficiency=0.3", f"{A73}.roofline.op_overhead_us=15.0",
         f"{A73}.roofline.parallel_efficiency=[1.0, 0.85, 0.8, 0.75]",
         f"{A73}.roofline.clock_independent_share=0.3",
         f"{A73}.input_stage.fixed_us=10000.0", f"{A73}.input_stage.Mcycles=24.0")


def _csv(tmp_path, df: pd.DataFrame, name: str = "m.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return path


# -- the model's new fields ---------------------------------------------------------------------
def test_clock_independent_share_is_t_equals_a_plus_b_over_f():
    """A compute-bound op's time at f: t(f_max) x (s + (1 - s) f_max / f); none: 1/f; the top level
    is untouched."""
    from hetsim.workload import load_workload

    w = load_workload("vgg16")
    op = next(o for o in w.ops if o.kind == "conv" and o.macs > 1e9)
    ep_name, state_lo = "B1", {"big": "low"}
    plain = load_platform("hikey970")
    shared = load_platform("hikey970", [f"{A73}.roofline.clock_independent_share=0.4"])
    cp, cs = make_cost_model(plain, model="roofline"), make_cost_model(shared, model="roofline")
    ep = plain.ep(ep_name)
    hi_p, lo_p = cp.op_demand(op, ep).busy_s, cp.op_demand(op, ep, state_lo).busy_s
    hi_s, lo_s = cs.op_demand(op, ep).busy_s, cs.op_demand(op, ep, state_lo).busy_s
    assert hi_s == hi_p
    assert lo_p / hi_p == pytest.approx(2400 / 1200)
    assert lo_s / hi_s == pytest.approx(0.4 + 0.6 * 2400 / 1200)


def test_kind_efficiency_prices_a_conv_by_its_shape_then_its_kind():
    from hetsim.workload import load_workload

    w = load_workload("googlenet")
    c3 = max((o for o in w.ops if o.kind == "conv" and o.kernel == (3, 3)), key=lambda o: o.macs)
    c1 = max((o for o in w.ops if o.kind == "conv" and o.kernel == (1, 1)), key=lambda o: o.macs)
    base = load_platform("hikey970", [f"{A73}.roofline.gemm_efficiency=0.2"])
    per = load_platform("hikey970", [f"{A73}.roofline.gemm_efficiency=0.2",
                                     f"{A73}.roofline.kind_efficiency.conv3x3=0.4",
                                     f"{A73}.roofline.kind_efficiency.conv=0.1"])
    cb, cp = make_cost_model(base, model="roofline"), make_cost_model(per, model="roofline")
    ep = base.ep("B1")
    assert cp.op_demand(c3, ep).busy_s == pytest.approx(cb.op_demand(c3, ep).busy_s / 2)
    assert cp.op_demand(c1, ep).busy_s == pytest.approx(cb.op_demand(c1, ep).busy_s * 2)
    with pytest.raises(HetsimError, match="kind_efficiency key 'relu'"):
        load_platform("hikey970", [f"{A73}.roofline.kind_efficiency.relu=0.5"])


# -- the table -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("rows", "message"), [
    ([{"layer": 1, "ep": "B1", "time_s": 1e-3}], "no column 'network'"),
    ([{"network": "squeezenet", "layer": 1, "ep": "B1"}], "no column 'time_s' or 'throughput_fps'"),
    ([{"network": "squeezenet", "layer": 1, "op": "conv1", "ep": "B1", "time_s": 1e-3}], "both layer"),
    ([{"network": "squeezenet", "layer": 1, "ep": "B1", "time_s": -1}], "column time_s -1"),
    ([{"network": "squeezenet", "layer": 1, "ep": "B1", "throughput_fps": 3.0}], "gives time_s, not throughput"),
    ([{"network": "squeezenet", "layer": 1, "time_s": 1e-3}], "no ep"),
    ([{"network": "squeezenet", "mapping": "B4:1-26", "ep": "B4", "time_s": 0.1}], "pipeline row"),
    ([{"network": "squeezenet", "ep": "B4", "time_s": 0.1, "freq_MHz": 1800, "dvfs": "max"}], "both freq_MHz and dvfs"),
])
def test_table_errors_are_one_line(rows, message):
    with pytest.raises(HetsimError, match=message) as e:
        normalise(pd.DataFrame(rows), "m.csv")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(("row", "message"), [
    ({"network": "squeezenet", "layer": 27, "ep": "B1", "time_s": 1e-3}, "has layers 1-26"),
    ({"network": "squeezenet", "layer": "nope", "ep": "B1", "time_s": 1e-3}, "not a layer of squeezenet"),
    ({"network": "squeezenet", "op": "nope", "ep": "B1", "time_s": 1e-3}, "not an op or a layer"),
    ({"network": "squeezenet", "layer": 1, "ep": "X9", "time_s": 1e-3}, "column ep 'X9'"),
    ({"network": "squeezenet", "layer": 1, "ep": "B1", "freq_MHz": 1000, "time_s": 1e-3}, "freq_MHz 1000 is not a clock"),
    ({"network": "squeezenet", "layer": 1, "ep": "B1", "dvfs": "turbo", "time_s": 1e-3}, "'turbo' is not a level"),
    ({"network": "nonet", "layer": 1, "ep": "B1", "time_s": 1e-3}, "column network 'nonet'"),
    ({"network": "squeezenet", "mapping": "B9:1-26", "time_s": 0.1}, "row 2"),
])
def test_rows_are_checked_against_platform_and_network(row, message):
    with pytest.raises(HetsimError, match=message):
        resolve_rows(load_platform("hikey970"), normalise(pd.DataFrame([row]), "m.csv"))


def test_table_reads_csv_with_cluster_cores_layer_names_and_fps(tmp_path):
    path = _csv(tmp_path, pd.DataFrame([
        {"network": "squeezenet", "layer": "conv1", "cluster": "big", "cores": 2, "freq_MHz": 1800, "time_s": 2e-3},
        {"network": "squeezenet", "cluster": "little", "cores": 4, "throughput_fps": 5.0},
        {"network": "squeezenet", "mapping": "B4:1-10|s4:11-26", "dvfs": "", "throughput_fps": 9.0, "notes": "x"}]))
    t = read_measurements(path)
    assert list(t.kind) == ["layer", "network", "pipeline"]
    rows = resolve_rows(load_platform("hikey970"), t)
    assert rows[0].layer == 0 and str(rows[0].ep) == "big:2" and rows[0].state == {"big": "mid"}
    assert rows[1].unit == "fps" and rows[1].measured == 5.0 and rows[1].mapping == "little:4:1-26"
    assert rows[2].core_types == ("cortex-a73", "cortex-a53")
    with pytest.raises(HetsimError, match="no such file"):
        read_measurements(tmp_path / "none.csv")


# -- other tools' logs ---------------------------------------------------------------------------
def _acl_log(path, iterations=(1.0, 1.2, 0.9)):
    """A log in ARM Compute Library's benchmark JSON (SchedulerTimer, ms per iteration)."""
    m = {}
    for node, kernels in (("conv1", (("NEIm2ColKernel", 0.5), ("NEGEMMMatrixMultiplyKernel", 2.0))),
                          ("fire2/squeeze1x1", (("NEGEMMMatrixMultiplyKernel", 0.25),))):
        for i, (k, ms) in enumerate(kernels):
            m[f"SchedulerTimer/{node}/{k} #{i}"] = {"raw": [str(ms * s) for s in iterations], "unit": "ms"}
    m["SchedulerTimer/NEFillBorderKernel #9"] = {"raw": ["0.1"] * len(iterations), "unit": "ms"}   # no node
    m["WallClock/Wall clock"] = {"raw": ["10"], "unit": "ms"}
    path.write_text(json.dumps({"tests": {"graph_squeezenet": {"measurements": m}}}))
    return path


def test_acl_scheduler_timer_log_gives_per_node_medians(tmp_path):
    log = _acl_log(tmp_path / "acl.json")
    kernels = read_acl_log(log)
    assert {k.node for k in kernels} == {"conv1", "fire2/squeeze1x1", ""}
    t = from_acl({"B4": [log]}, "squeezenet")
    got = dict(zip(t.op, t.time_s, strict=True))
    assert got == pytest.approx({"conv1": 2.5e-3, "fire2/squeeze1x1": 0.25e-3})
    rows = resolve_rows(load_platform("hikey970"), t)
    assert [r.kind for r in rows] == ["op", "op"]   # both are op names of squeezenet
    (tmp_path / "bad.json").write_text(json.dumps({"tests": {"t": {"measurements": {}}}}))
    with pytest.raises(HetsimError, match="no SchedulerTimer measurements"):
        read_acl_log(tmp_path / "bad.json")


def test_ort_profiles_give_op_and_network_rows(tmp_path):
    from test_ort_profile import cpu_run, profile

    f = tmp_path / "cpu.json"
    f.write_text(json.dumps(profile([cpu_run(5), cpu_run(1.0), cpu_run(1.2), cpu_run(0.9)])))
    from hetsim.calibrate.table import from_ort

    t = from_ort({"C1": [f]}, "profiled")
    assert list(t.kind) == ["op", "op", "op", "network"]
    assert dict(zip(t.op[:3], t.time_s[:3], strict=True)) == pytest.approx({"a": 100e-6, "b": 40e-6, "c": 30e-6})


# -- the fit ---------------------------------------------------------------------------------------
def test_fit_recovers_known_parameters_from_noisy_synthetic_measurements():
    """hetsim prices squeezenet on B1 and B2 at two clocks with known parameters (1 % noise, seeded);
    the fit from hikey970's own values finds them again."""
    raw = synthetic_measurements("hikey970", TRUTH, ["squeezenet"], ["B1", "B2"], ["max", "low"],
                                 noise_sigma=0.01, seed=3)
    fit = calibrate_platform("hikey970", normalise(raw, "synthetic"), mechanisms="clock,input")
    assert fit.mechanisms == ["clock", "input"]
    v = fit.values
    assert v[f"{A73}.roofline.gemm_efficiency"] == pytest.approx(0.3, rel=0.03)
    assert v[f"{A73}.roofline.parallel_efficiency.1"] == pytest.approx(0.85, rel=0.03)
    assert v[f"{A73}.roofline.clock_independent_share"] == pytest.approx(0.3, abs=0.03)
    assert v[f"{A73}.roofline.op_overhead_us"] == pytest.approx(15.0, rel=0.25)
    # the input stage: its time at both clocks (10 ms + 24 Mcycles / f), from 4 frame rows
    for f_MHz in (2400, 1200):
        got = v[f"{A73}.input_stage.fixed_us"] * 1e-6 + v[f"{A73}.input_stage.Mcycles"] / f_MHz
        assert got == pytest.approx(10e-3 + 24 / f_MHz, rel=0.15)
    assert np.median(fit.table.error.abs()) < 0.03
    # the same rows without the two mechanisms: worse, and the DVFS slowdown is what misses
    plain = calibrate_platform("hikey970", normalise(raw, "synthetic"), mechanisms="none")
    assert np.median(plain.table.error.abs()) > 2 * np.median(fit.table.error.abs())


def test_kinds_mechanism_fits_per_shape_efficiencies():
    truth = (f"{A73}.roofline.gemm_efficiency=0.3", f"{A73}.roofline.kind_efficiency.conv1x1=0.15",
             f"{A73}.roofline.kind_efficiency.conv3x3=0.45")
    raw = synthetic_measurements("hikey970", truth, ["squeezenet"], ["B1"], noise_sigma=0.01, seed=1)
    raw = raw[raw.layer.notna()]
    fit = calibrate_platform("hikey970", normalise(raw, "synthetic"), mechanisms="kinds")
    v = fit.values
    assert v[f"{A73}.roofline.kind_efficiency.conv1x1"] == pytest.approx(0.15, rel=0.05)
    assert v[f"{A73}.roofline.kind_efficiency.conv3x3"] == pytest.approx(0.45, rel=0.05)
    with pytest.raises(HetsimError, match="mechanism 'clock': the measurements cannot identify it"):
        calibrate_platform("hikey970", normalise(raw, "synthetic"), mechanisms="clock")


def test_identifiable_mechanisms_follow_the_rows():
    p = load_platform("hikey970")
    one = normalise(synthetic_measurements("hikey970", (), ["squeezenet"], ["B1"]), "s")
    ids = identifiable(p, resolve_rows(p, one))
    assert ids["kinds"] == ["cortex-a73"] and ids["input"] == ["cortex-a73"]
    assert ids["clock"] == [] and ids["feeder"] == []
    two = normalise(synthetic_measurements("hikey970", (), ["squeezenet"], ["B1"], ["max", "low"],
                                           later_stage=["B1"]), "s")
    ids = identifiable(p, resolve_rows(p, two))
    assert ids["clock"] == ["cortex-a73"] and ids["feeder"] == ["cortex-a73"]


def test_holdout_scores_the_network_left_out():
    raw = synthetic_measurements("hikey970", TRUTH[:3], ["squeezenet", "alexnet"], ["B1", "B2"],
                                 pipelines=[("alexnet", "B1:1-3|B2:4-11", None), ("alexnet", "B2:1-5|B1:6-11", None)],
                                 noise_sigma=0.01, seed=2)
    table = normalise(raw, "synthetic")
    (h,) = crossvalidate("hikey970", table, [["alexnet"]], mechanisms="none")
    assert h.fit.excluded == ["alexnet"] and set(h.fit.table.network) == {"squeezenet"}
    s = h.scores()
    assert s["pipeline_rows"] == 4 and s["layer_rows"] == 22
    assert not math.isnan(s["pipeline_spearman"]) and 0 <= s["regret"] <= 1
    assert folds_of(["c", "a", "b", "d"], 2) == [["a", "c"], ["b", "d"]]
    assert folds_of(["b", "a"], None) == [["a"], ["b"]]
    with pytest.raises(HetsimError, match="leaves nothing to fit"):
        crossvalidate("hikey970", table[table.network == "alexnet"], [["alexnet"]])


# -- the command -----------------------------------------------------------------------------------
def test_cli_writes_a_loadable_calibrated_platform(tmp_path, capsys):
    raw = synthetic_measurements("hikey970", TRUTH[:2], ["squeezenet"], ["B1", "B2"], noise_sigma=0.01, seed=4)
    csv = _csv(tmp_path, raw)
    out = tmp_path / "fit" / "hk.yaml"
    main(["calibrate", "platform", "hikey970", "-m", str(csv), "--out", str(out), "--plot",
          str(tmp_path / "fit.svg"), "--mechanisms", "none", "--name", "hikey970-fitted", "--json"])
    got = json.loads(capsys.readouterr().out)
    assert got["mechanisms"] == []
    fitted = load_platform(out)
    assert fitted.name == "hikey970-fitted" and fitted.provenance.cost_parameters == "fitted"
    assert "networks: squeezenet" in fitted.provenance.fitted_on
    eff = fitted.core_type("cortex-a73").roofline.gemm_efficiency
    assert eff == pytest.approx(got["values"][f"{A73}.roofline.gemm_efficiency"]) == pytest.approx(0.3, rel=0.03)
    res = pd.read_csv(tmp_path / "fit" / "hk.residuals.csv")
    assert len(res) == len(raw) and {"measured_s", "predicted_s", "error"} <= set(res.columns)
    assert (tmp_path / "fit.svg").read_text().lstrip().startswith("<?xml")
    assert "per cluster" in (tmp_path / "fit" / "hk.report.md").read_text()
    assert yaml.safe_load(out.read_text())["provenance"]["mechanisms"] == ["base"]


@pytest.mark.parametrize(("args", "message"), [
    (["--plot", "x.gif"], "allowed: .png, .svg, .pdf"),
    (["--out", "x.txt"], "must end in .yaml"),
    (["--mechanisms", "magic"], "mechanism 'magic'"),
    (["--fit", "a.b=2:1"], "expected KEY=LOW:HIGH"),
    (["--ort", "C1=x.json"], "need --network"),
    (["--holdout", "vgg16"], "no rows of that network"),
])
def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    csv = _csv(tmp_path, pd.DataFrame([{"network": "squeezenet", "layer": 1, "ep": "B1", "time_s": 1e-3}]))
    with pytest.raises(SystemExit) as e:
        main(["calibrate", "platform", "hikey970", "-m", str(csv), "--mechanisms", "none", *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1
    assert not list(tmp_path.glob("results/**/*.yaml"))



def test_a_transplanted_platform_says_so_when_loaded(capsys):
    p = load_platform("rk3399", ["name=rk3399-note-test"])
    assert p.provenance.cost_parameters == "transplanted"
    assert "datasheet" in p.description.lower()
    err = capsys.readouterr().err
    assert "hetsim: note: platform rk3399-note-test: its cost-model parameters are transplanted" in err
    load_platform("hikey970", ["name=hikey970-note-test"])
    assert "note" not in capsys.readouterr().err


def test_feeder_share_is_recovered_from_first_and_later_stage_layers():
    a53 = "core_types.cortex-a53"
    truth = (f"{a53}.roofline.gemm_efficiency=0.4", f"{a53}.feeder_share=0.35")
    raw = synthetic_measurements("hikey970", truth, ["squeezenet"], ["s2"], later_stage=["s2"],
                                 noise_sigma=0.01, seed=5)
    raw = raw[raw.layer.notna()]
    fit = calibrate_platform("hikey970", normalise(raw, "synthetic"), mechanisms="feeder")
    assert fit.values[f"{a53}.feeder_share"] == pytest.approx(0.35, abs=0.02)
    assert fit.values[f"{a53}.roofline.gemm_efficiency"] == pytest.approx(0.4, rel=0.03)
