"""hetsim_host: the real executor, the micro-benchmarks and their fit, and the two commands, on a
tiny network. These check the plumbing and the report format, never a timing: the accuracy goal
is measured by `hetsim validate host` (docs/validation.md)."""

from __future__ import annotations

import json
import random
import signal
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml
from helpers import assert_one_line_error, check_folder, run_and_kill

from hetsim.cost import RooflineCostModel
from hetsim.errors import HetsimError
from hetsim.platform import load_platform, platform_from_dict, validate_file
from hetsim.workload import load_workload, workload_from_dict
from hetsim_host.executor import WorkloadRef, run_on_host, scaled_workload_dict
from hetsim_host.kernels import Workers, compile_op, im2col
from hetsim_host.microbench import cpus

DATA = Path(__file__).parent / "data"
#: The raw measurements of the reference calibration of 2026-11-23 (an Intel Xeon guest; its fitted
#: platform is tests/data/host.yaml), from before the GEMV phase existed.
REFERENCE = DATA / "reference.measurements.json"
#: A `calibrate host --quick` on a loaded machine (an AMD EPYC guest).
QUICK = DATA / "quick.measurements.json"

TINY = {
    "schema": 1, "name": "tiny", "description": "test net", "source": "tests",
    "input": {"h": 20, "w": 20, "c": 3}, "layer_kinds": ["conv", "fc"],
    "ops": [
        {"name": "c1", "kind": "conv", "kernel": 3, "stride": 1, "pad": 1, "out_c": 8},
        {"name": "r1", "kind": "relu"},
        {"name": "n1", "kind": "lrn"},
        {"name": "p1", "kind": "maxpool", "kernel": 3, "stride": 2, "ceil_mode": True},
        {"name": "c2a", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8, "group": [1, 2]},
        {"name": "c2b", "kind": "conv", "inputs": ["p1"], "kernel": 3, "pad": 1, "out_c": 8, "group": [2, 2]},
        {"name": "cat", "kind": "concat", "inputs": ["c2a", "c2b"]},
        {"name": "add", "kind": "add", "inputs": ["cat", "p1"], "layer_start": False},
        {"name": "fc", "kind": "fc", "out_c": 10},
        {"name": "prob", "kind": "softmax"},
    ],
}


@pytest.fixture(scope="module")
def tiny_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("wl")
    data = {**TINY, "ops": [dict(o) for o in TINY["ops"]]}
    # p1 is 10x10x8 (ceil mode) and cat 10x10x16: make the add well-formed with a 16-channel conv.
    data["ops"][0]["out_c"] = 16
    path = d / "tiny.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def host_yaml(tmp_path_factory, hetsim):
    out = tmp_path_factory.mktemp("cal") / "host.yaml"
    result = hetsim("calibrate", "host", "--quick", "--out", out)
    assert result.returncode == 0, result.stderr
    return out


# -- kernels ----------------------------------------------------------------------------------
def test_im2col_conv_matches_a_direct_convolution():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((7, 6, 3), dtype=np.float32)
    wl = workload_from_dict({"schema": 1, "name": "c", "input": {"h": 7, "w": 6, "c": 3},
                             "layer_kinds": ["conv"],
                             "ops": [{"name": "c", "kind": "conv", "kernel": 3, "stride": 2, "pad": 1, "out_c": 4}]})
    op = wl.op("c")
    kernel = compile_op(op, np.random.default_rng(1), Workers(1))
    y = kernel([x])
    w = np.random.default_rng(1).standard_normal((27, 4), dtype=np.float32) * np.float32(np.sqrt(2 / 27))
    xp = np.pad(x, ((1, 1), (1, 1), (0, 0)))
    direct = np.zeros(tuple(op.out_shape), dtype=np.float64)
    for i in range(op.out_shape.h):
        for j in range(op.out_shape.w):
            patch = xp[2 * i:2 * i + 3, 2 * j:2 * j + 3, :].reshape(-1)
            direct[i, j] = patch @ w
    assert y.shape == tuple(op.out_shape)
    np.testing.assert_allclose(y, direct, rtol=1e-4, atol=1e-4)


def test_kernels_give_the_workload_shapes_and_threads_change_nothing(tiny_file):
    wl = load_workload(tiny_file)
    x = np.random.default_rng(0).standard_normal((20, 20, 3), dtype=np.float32)
    outs = []
    for n in (1, 2):
        tensors = {}
        for i, op in enumerate(wl.ops):
            k = compile_op(op, np.random.default_rng([0, i]), Workers(n))
            tensors[op.name] = k([tensors[s] for s in op.inputs] if op.inputs else [x])
            assert tensors[op.name].shape == tuple(op.out_shape), op.name
        outs.append(tensors["prob"])
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-5)
    assert abs(float(outs[0].sum()) - 1.0) < 1e-5


def test_im2col_in_threads_equals_one_thread():
    x = np.random.default_rng(0).standard_normal((80, 80, 24), dtype=np.float32)
    a = im2col(x, (3, 3), 1, (1, 1), (80, 80), Workers(1)).copy()
    b = im2col(x, (3, 3), 1, (1, 1), (80, 80), Workers(2))
    np.testing.assert_array_equal(a, b)


def test_scaled_workload_keeps_layers_and_shrinks_shapes():
    base = load_workload("alexnet")
    half = WorkloadRef("alexnet", 0.5).load()
    assert half.name == "alexnet@0.5" and half.num_layers == base.num_layers
    assert half.input_shape.h == 114 and half.total_macs < base.total_macs / 3
    with pytest.raises(HetsimError, match="scale"):
        scaled_workload_dict(dict(TINY), 0)


# -- the pipeline of processes ----------------------------------------------------------------
@pytest.mark.slow
def test_two_stage_pipeline_runs_and_records_every_frame(tiny_file):
    cs = cpus()
    second = cs[1] if len(cs) > 1 else cs[0]
    run = run_on_host(WorkloadRef(str(tiny_file)), [(1, 2, [cs[0]]), (3, 4, [second])], frames=5, warmup=1)
    assert run.start.shape == run.end.shape == (2, 5)
    assert run.layer_times_s.shape == (5, 4) and np.all(run.layer_times_s > 0)
    assert np.all(run.end[1] >= run.start[1]) and np.all(np.diff(run.end[-1]) > 0)
    assert run.throughput_fps > 0


# -- the commands -----------------------------------------------------------------------------
@pytest.mark.slow
def test_calibrate_writes_a_valid_platform_with_its_measurements(host_yaml):
    assert validate_file(host_yaml) == []
    platform = load_platform(str(host_yaml))
    assert platform.ep("C1").cores == 1
    assert platform.ep(f"C{len(cpus())}").cores == len(cpus())
    raw = json.loads(host_yaml.with_name("host.measurements.json").read_text())
    m = raw["measurements"]
    assert m["gemm"] and m["stream"] and m["im2col"] and m["kinds"] and m["gemv"]
    assert {"loadavg_before", "loadavg_after"} <= set(m["load"])
    text = host_yaml.read_text()
    assert "[measured]" in text and "[fitted]" in text


def test_calibrate_rejects_a_non_yaml_out(hetsim, tmp_path):
    result = hetsim("calibrate", "host", "--quick", "--out", tmp_path / "x.txt")
    assert_one_line_error(result, "must end in .yaml or .yml")
    assert not list(tmp_path.iterdir())


#: Command lines refused before anything is measured: one line, exit 2 (found by the fuzzing harness).
REFUSED = [
    (["calibrate", "host", "--out", ""], "--out: an empty file name"),
    (["validate", "host", "-p", "hikey970", "-w", "alexnet", "--scale", "nan"],
     "--scale must be a finite number in [0.001, 100] x the input resolution (got nan)"),
    (["validate", "host", "-p", "hikey970", "-w", "alexnet", "--scale", "0"],
     "--scale must be a number in [0.001, 100] x the input resolution (got 0.0)"),
    (["validate", "host", "-p", "hikey970", "-w", "alexnet", "--frames", "0"],
     "--frames must be an integer in [3, 1000000] frames (got 0)"),
    (["validate", "host", "-p", "hikey970", "-w", "alexnet", "--repeats", "-1"],
     "--repeats must be an integer in [1, 1000] runs (got -1)"),
]


@pytest.mark.parametrize("args, expect", REFUSED, ids=[" ".join(a[:2] + a[-2:]) for a, _ in REFUSED])
def test_out_of_range_command_lines_are_one_line_errors(hetsim, args, expect):
    assert_one_line_error(hetsim(*args), expect)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "SIGINT"])
def test_killed_calibrate_host_leaves_only_complete_files(tmp_path, sig):
    for i, moment in enumerate([round(random.Random(5).uniform(1.0, 8.0), 2), "write"]):
        out = tmp_path / f"run{i}"
        run = run_and_kill(["calibrate", "host", "--quick", "--out", str(out / "host.yaml")], out, sig, moment)
        if sig == signal.SIGINT and run.returncode != 0:
            assert run.returncode == 2 and "hetsim: error: interrupted" in run.stderr, run.stderr
        if out.exists():
            check_folder(out, killed=sig == signal.SIGKILL)


@pytest.mark.slow
def test_validate_json_and_report(hetsim, host_yaml, tiny_file, tmp_path):
    out = tmp_path / "rep"
    result = hetsim("validate", "host", "-p", host_yaml, "-w", tiny_file, "--frames", "4",
                    "--repeats", "1", "--out", out, "--json", "--cost", "roofline", "--cost", "gemm2")
    assert result.returncode == 0, result.stderr
    d = json.loads(result.stdout)
    assert isinstance(d["layer_mape"], float) and d["layer_mape"] >= 0
    assert set(d["layer_mape_by_cost"]) == {"roofline", "gemm2"}
    assert d["layer_mape_by_cost"]["roofline"] == d["layer_mape"]     # the first model heads the report
    n_maps = 3 if len(cpus()) > 1 else 1
    assert len(d["mappings"]) == n_maps
    assert d["mappings"][0]["mapping"] == "C1:1-4"
    for m in d["mappings"]:
        assert set(m) == {"mapping", "measured_fps", "simulated_fps", "error", "by_cost"}
        assert m["error"] == pytest.approx(m["simulated_fps"] / m["measured_fps"] - 1)
        assert m["by_cost"]["roofline"]["simulated_fps"] == m["simulated_fps"]
        g = m["by_cost"]["gemm2"]
        assert g["error"] == pytest.approx(g["simulated_fps"] / m["measured_fps"] - 1)
    if n_maps == 3:
        assert d["mappings"][1]["mapping"] == f"C{len(cpus())}:1-4"
        assert d["mappings"][2]["mapping"].count("|") == 1
    md = (out / "report.md").read_text()
    assert "| mapping | CPUs | measured (frames/s) |" in md and "Layer MAPE" in md
    assert (out / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((out / "report.json").read_text())["layers"][0]["name"] == "c1"


@pytest.mark.slow
def test_validate_user_errors_are_one_line(hetsim, host_yaml, tiny_file):
    assert_one_line_error(hetsim("validate", "host", "-p", host_yaml, "-w", tiny_file, "--scale", "-1"),
                          "--scale must be a number in [0.001, 100] x the input resolution (got -1.0)")
    # Errors found once the progress bar has started: exit 2, no traceback, the error is the
    # last line (the bar's line precedes it: see the xfail below).
    for platform, extra, fragment in (("hikey970", [], "exactly one cluster"),
                                      (host_yaml, ["-m", "C1:1-2|C1:3-4|C1:4-4"], "(overlap)")):
        r = hetsim("validate", "host", "-p", platform, "-w", tiny_file, *extra)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        last = r.stderr.strip().splitlines()[-1]
        assert last.startswith("hetsim: error: ") and fragment in last, r.stderr


@pytest.mark.slow
def test_validate_errors_after_the_progress_bar_starts_are_one_line(hetsim, host_yaml, tiny_file):
    assert_one_line_error(hetsim("validate", "host", "-p", "hikey970", "-w", tiny_file),
                          "exactly one cluster")


# -- the cost-model fields the calibration fills ------------------------------------------------
def _one_core(**roofline):
    return platform_from_dict({
        "schema": 2, "name": "one", "memories": [{"name": "m", "bandwidth_GBps": 10}],
        "core_types": [{"name": "c", "macs_per_cycle": 8, "dvfs": [{"name": "f", "freq_MHz": 1000}],
                        "roofline": roofline}],
        "clusters": [{"name": "k", "symbol": "K", "core_type": "c", "cores": 2, "memory": "m"}]})


def test_im2col_pack_kind_rates_and_gemm_overhead_add_the_documented_terms(tiny_file):
    wl = load_workload(tiny_file)
    conv, lrn, relu, fc = wl.op("c1"), wl.op("n1"), wl.op("r1"), wl.op("fc")
    base = RooflineCostModel(_one_core())
    rich = RooflineCostModel(_one_core(im2col_GBps=2.0, gemm_pack_GBps=4.0, gemm_overhead_us=[10.0, 30.0],
                                       kind_GBps={"lrn": 1.0, "relu": [3.0, 3.0]}))
    for cores in (1, 2):
        ep = base.platform.ep(f"K{cores}")
        ep2 = rich.platform.ep(f"K{cores}")
        fixed = (10e-6, 30e-6)[cores - 1]
        extra = (conv.im2col_bytes / min(cores * 2e9, 10e9)
                 + (conv.im2col_bytes + conv.weight_bytes + conv.output_bytes) / min(cores * 4e9, 10e9))
        assert rich.op_time(conv, ep2) == pytest.approx(base.op_time(conv, ep) + extra + fixed)
        assert rich.op_time(fc, ep2) == pytest.approx(base.op_time(fc, ep) + fixed)
        assert rich.op_time(lrn, ep2) == pytest.approx((lrn.input_bytes + lrn.output_bytes) / (cores * 1e9))
        assert rich.op_time(relu, ep2) == pytest.approx((relu.input_bytes + relu.output_bytes) / 3e9)
        assert base.op_time(lrn, ep) == pytest.approx((lrn.input_bytes + lrn.output_bytes) / 10e9)
    with pytest.raises(HetsimError, match="unknown op kind"):
        from hetsim.platform.loader import platform_from_dict as pfd

        pfd({"schema": 2, "name": "x", "memories": [{"name": "m", "bandwidth_GBps": 1}],
             "core_types": [{"name": "c", "macs_per_cycle": 1, "roofline": {"kind_GBps": {"lrm": 1.0}},
                             "dvfs": [{"name": "f", "freq_MHz": 1}]}],
             "clusters": [{"name": "k", "core_type": "c", "cores": 1, "memory": "m"}]})


def test_fitted_numbers_read_back_as_numbers_from_the_platform_yaml():
    """A fitted 8e-06 was written as ``8e-06``, which YAML 1.1 (PyYAML) reads as a string: the
    calibrated platform then failed to load ("overlap: Input should be a valid number")."""
    import yaml

    from hetsim_host.fit import yaml_scalar

    for value in (8e-06, 1e-300, 2.5e+20, 1e16, 0.1, 3.0, -4e-07, 7, None, True, [1.0, 8e-06], "proportional"):
        assert yaml.safe_load(f"x: {yaml_scalar(value)}")["x"] == value, value


def test_a_gemm2_kernel_rate_past_any_turbo_is_refitted_within_the_bound(monkeypatch):
    # A noisy quick grid once fitted a kernel rate that put the clock at 169,300 MHz (no platform):
    # such a fit is redone with the rate bounded at MAX_TURBO x the roofline fit's peak.
    from hetsim_host import fit as hf

    machine = SimpleNamespace(fit=SimpleNamespace(macs_per_cycle=16.0), f0=2.5e9)
    peak = 16.0 * 2.5e9 * hf.MAX_TURBO
    calls = []

    def within(machine, g1, level_params, max_rate):
        calls.append(max_rate)
        rate = 1e12 if max_rate > peak else max_rate * 0.9
        return (0.1, 8, 4, 256, "lru", [rate, 0.0, 0.0, 0.0, 0.5])

    monkeypatch.setattr(hf, "_gemm2_search_within", within)
    best = hf._gemm2_search(machine, [], {})
    assert calls == [1e13, peak] and best[-1][0] <= peak
    calls.clear()
    monkeypatch.setattr(hf, "_gemm2_search_within",
                        lambda m, g, lp, mr: calls.append(mr) or (0.1, 8, 4, 256, "lru", [peak / 2, 0, 0, 0, 0]))
    assert hf._gemm2_search(machine, [], {})[-1][0] == peak / 2 and calls == [1e13]   # inside: left alone


def test_a_depthwise_multicore_curve_of_its_own_is_used_and_fitted():
    # The executor runs depthwise kernels on one thread: on 2 cores they take what they take on 1.
    # ``dw_parallel_efficiency`` says so to the roofline, and calibrate host fits it from the
    # 2-thread rows it measures (before, only the 1-thread rows, scaled by the cores).
    from hetsim_host.fit import _fit_dw
    from hetsim_host.microbench import _single_op

    dw = _single_op("dw", 28, 28, 64)
    base = RooflineCostModel(_one_core(dw_efficiency=0.1, parallel_efficiency=[1.0, 0.9]))
    own = RooflineCostModel(_one_core(dw_efficiency=0.1, parallel_efficiency=[1.0, 0.9],
                                      dw_parallel_efficiency=[1.0, 0.5]))
    one, two = own.platform.ep("K1"), own.platform.ep("K2")
    assert own.op_time(dw, two) == pytest.approx(own.op_time(dw, one))
    assert base.op_time(dw, base.platform.ep("K2")) == pytest.approx(base.op_time(dw, one) / 1.8)
    assert own.op_time(dw, one) == base.op_time(dw, one)

    fit = SimpleNamespace(op_overhead_s=2e-6, peak_MACps=8e9, residuals={}, parallel_efficiency=[1.0, 0.95],
                          dw_efficiency=None, dw_parallel_efficiency=[], dw_strided_efficiency=None)
    fit.par_eff = lambda n: fit.parallel_efficiency[n - 1]
    rows = [{"threads": t, "macs": macs, "time_s": 2e-6 + macs / (8e9 * 0.2)}   # 2 threads: no faster
            for t in (1, 2) for macs in (1e6, 3e6, 9e6)]
    _fit_dw(fit, rows, 2)
    assert fit.dw_efficiency == pytest.approx(0.2, rel=1e-3)
    assert fit.dw_parallel_efficiency == pytest.approx([1.0, 0.5], rel=1e-3)
    assert fit.residuals["kind dw"] < 1e-3 and fit.dw_strided_efficiency is None
    # stride-2 rows, 1.5x slower per MAC, give the strided efficiency; the curve is unchanged
    rows += [{"threads": t, "stride": 2, "macs": macs, "time_s": 2e-6 + macs / (8e9 * 0.2 / 1.5)}
             for t in (1, 2) for macs in (1e6, 4e6)]
    _fit_dw(fit, rows, 2)
    assert fit.dw_efficiency == pytest.approx(0.2, rel=1e-3)
    assert fit.dw_strided_efficiency == pytest.approx(0.2 / 1.5, rel=1e-3)
    assert fit.dw_parallel_efficiency == pytest.approx([1.0, 0.5], rel=1e-3)


def test_a_depthwise_cost_per_output_pixel_and_tap_enters_every_model_and_is_fitted():
    # A kernel vectorised over the channels pays a fixed cost per output pixel and kernel tap (one
    # inner loop each): few channels cost more per MAC than many. dw_tap_cycles adds that many
    # cycles per O_h·O_w·R·S, divided by the cores like the MACs.
    from hetsim.cost import Gemm2CostModel
    from hetsim_host.fit import _fit_dw
    from hetsim_host.microbench import _single_op
    from hetsim_papers.pipeit.cost import PipeitGroundTruth

    few, many = _single_op("dw", 40, 40, 16), _single_op("dw", 10, 10, 256)
    assert few.macs == many.macs and few.window_taps == 40 * 40 * 9 and many.window_taps == 10 * 10 * 9
    assert _single_op("relu", 8, 8, 4).window_taps == 0
    base = RooflineCostModel(_one_core(dw_efficiency=0.1, dw_parallel_efficiency=[1.0, 0.5]))
    taps = RooflineCostModel(_one_core(dw_efficiency=0.1, dw_parallel_efficiency=[1.0, 0.5], dw_tap_cycles=4.0))
    for ep in ("K1", "K2"):
        e = base.platform.ep(ep)
        per_core = (1.0, 0.5)[e.cores - 1] * e.cores   # the depthwise curve: 2 cores = 1 core here
        for op in (few, many):
            extra = op.window_taps * 4.0 / 1e9 / per_core
            assert taps.op_demand(op, e).busy_s == pytest.approx(base.op_demand(op, e).busy_s + extra)
    assert taps.op_time(few, taps.platform.ep("K1")) > taps.op_time(many, taps.platform.ep("K1"))
    # the Pipe-it ground truth reads the same field (1 core: the whole op)
    def with_bandwidth(model):   # the ground truth streams a GEMV at the per-core bandwidth
        d = model.platform.model_dump(exclude_none=True)
        d["core_types"][0]["bandwidth_GBps_per_core"] = 5.0
        return PipeitGroundTruth(platform_from_dict(d))

    gt, gt_base = with_bandwidth(taps), with_bandwidth(base)
    p, p0 = gt.params("k"), gt_base.params("k")
    assert gt.side_time(few, p, 1)[0] == pytest.approx(gt_base.side_time(few, p0, 1)[0] + few.window_taps * 4e-9)
    # gemm2: cycles per pixel and tap on the depthwise step
    hikey = load_platform("hikey970")
    over = [f"core_types.{t}.gemm2.dw_tap_cycles=5" for t in ("cortex-a73", "cortex-a53")]
    b1 = hikey.ep("B1")
    plain = next(s for s in Gemm2CostModel(hikey).breakdown(few, b1).steps if s.name == "depthwise")
    tapped = next(s for s in Gemm2CostModel(load_platform("hikey970", over)).breakdown(few, b1).steps
                  if s.name == "depthwise")
    assert tapped.cycles == pytest.approx(plain.cycles + 5 * few.window_taps / plain.threads)

    # the fit tells the two terms apart when the rows have two channel counts or more
    fit = SimpleNamespace(op_overhead_s=2e-6, peak_MACps=8e9, freq_MHz=1000.0, residuals={},
                          parallel_efficiency=[1.0, 0.95], dw_efficiency=None, dw_parallel_efficiency=[],
                          dw_strided_efficiency=None, dw_tap_cycles=None)
    fit.par_eff = lambda n: fit.parallel_efficiency[n - 1]

    def row(t, h, c, stride=1, eff=0.2):
        macs = h * h * 9 * c
        return {"threads": t, "h": h, "w": h, "c": c, "macs": macs, **({"stride": stride} if stride > 1 else {}),
                "time_s": 2e-6 + macs / (8e9 * eff) + h * h * 9 * 6.0 / 1e9}   # 2 threads: no faster
    rows = [row(t, h, c) for t in (1, 2) for h, c in ((40, 16), (28, 64), (10, 256), (20, 512))]
    rows += [row(t, h, c, 2, 0.1) for t in (1, 2) for h, c in ((40, 16), (20, 512))]
    _fit_dw(fit, rows, 2)
    assert fit.dw_tap_cycles == pytest.approx(6.0, rel=1e-3)
    assert fit.dw_efficiency == pytest.approx(0.2, rel=1e-3)
    assert fit.dw_strided_efficiency == pytest.approx(0.1, rel=1e-3)
    assert fit.dw_parallel_efficiency == pytest.approx([1.0, 0.5], rel=1e-3)
    assert fit.residuals["kind dw"] < 1e-3
    _fit_dw(fit, rows, 2, taps=False)            # the ablation: one rate per MAC absorbs it, worse
    assert fit.dw_tap_cycles is None and fit.residuals["kind dw"] > 0.05
    _fit_dw(fit, [r for r in rows if r["c"] == 64], 2)   # one channel count: nothing to tell apart
    assert fit.dw_tap_cycles is None


def test_a_strided_depthwise_conv_takes_the_strided_rate_in_every_model():
    from hetsim.cost import Gemm2CostModel
    from hetsim_host.microbench import _single_op

    s1, s2 = _single_op("dw", 28, 28, 64), _single_op("dw", 28, 28, 64, stride=2)
    assert s2.stride == 2 and s2.in_shape.h == 56 and s2.out_shape == s1.out_shape and s2.macs == s1.macs
    base = RooflineCostModel(_one_core(dw_efficiency=0.1))
    strided = RooflineCostModel(_one_core(dw_efficiency=0.1, dw_strided_efficiency=0.05))
    ep = base.platform.ep("K1")
    assert strided.op_time(s1, ep) == base.op_time(s1, ep)
    assert strided.op_demand(s2, ep).busy_s == pytest.approx(2 * base.op_demand(s2, ep).busy_s)
    hikey = load_platform("hikey970")
    plain = Gemm2CostModel(hikey)
    over = [f"core_types.{t}.gemm2.dw_strided_macs_per_cycle=0.25" for t in ("cortex-a73", "cortex-a53")]
    g2 = Gemm2CostModel(load_platform("hikey970", over))
    b1 = hikey.ep("B1")
    assert g2.op_time(s1, b1) == plain.op_time(s1, b1)
    dw_step = next(s for s in g2.breakdown(s2, b1).steps if s.name == "depthwise")
    assert dw_step.cycles == pytest.approx(s2.macs / 0.25)


# -- the classifier: cold GEMVs and the softmax (docs/fidelity.md#the-classifier-gemv-and-softmax) -------------------------
def test_gemv_terms_and_kind_overheads_price_fc_and_softmax_and_default_to_the_old_model(tiny_file):
    wl = load_workload(tiny_file)
    fc, prob, conv = wl.op("fc"), wl.op("prob"), wl.op("c1")
    _, k, _ = fc.gemm
    base = RooflineCostModel(_one_core())
    unset = RooflineCostModel(_one_core(gemv_row_ns=50.0, gemv_overhead_us=20.0))   # no gemv_GBps: inert
    rich = RooflineCostModel(_one_core(gemv_GBps=[25.0, 40.0], gemv_row_ns=[40.0, 20.0],
                                       gemv_overhead_us=[20.0, 10.0], kind_overhead_us={"softmax": [40.0, 45.0]}))
    nbytes = fc.input_bytes + fc.output_bytes + fc.weight_bytes
    for cores in (1, 2):
        ep = base.platform.ep(f"K{cores}")
        assert unset.op_time(fc, ep) == base.op_time(fc, ep)
        assert base.op_time(fc, ep) == pytest.approx(nbytes / 10e9)   # the bandwidth, as before
        rate, row, fixed = ((25e9, 40e-9, 20e-6), (40e9, 20e-9, 10e-6))[cores - 1]
        assert rich.op_time(fc, ep) == pytest.approx(fixed + nbytes / rate + k * row)   # not capped at 10 GB/s
        assert rich.op_time(prob, ep) == pytest.approx(base.op_time(prob, ep) + (40e-6, 45e-6)[cores - 1])
        assert rich.op_time(conv, ep) == base.op_time(conv, ep)
    with pytest.raises(HetsimError, match="unknown op kind"):
        _one_core(kind_overhead_us={"softmaks": 1.0})


def _gemv_fit(rows, cores=2):
    from hetsim_host.fit import _fit_gemv

    fit = SimpleNamespace(op_overhead_s=2e-6, residuals={}, gemv_Bps=[], gemv_row_s=[], gemv_overhead_s=[])
    fit.gemv_time = lambda k, b, t: 2e-6 + fit.gemv_overhead_s[t - 1] + b / fit.gemv_Bps[t - 1] + k * fit.gemv_row_s[t - 1]
    _fit_gemv(fit, SimpleNamespace(gemv=rows), cores)
    return fit


def test_the_gemv_fit_recovers_rate_row_cost_and_fixed_cost_and_old_files_fit_as_before():
    from hetsim_host.microbench import BenchPlan

    truth = {1: (26e9, 40e-9, 25e-6), 2: (35e9, 20e-9, 15e-6)}
    rows = [{"k": k, "m": m, "threads": t, "bytes": 4 * (k + m + k * m),
             "time_s": 2e-6 + truth[t][2] + 4 * (k + m + k * m) / truth[t][0] + k * truth[t][1]}
            for t in (1, 2) for k, m in BenchPlan().gemv_shapes]
    fit = _gemv_fit(rows)
    for t in (1, 2):
        assert fit.gemv_Bps[t - 1] == pytest.approx(truth[t][0], rel=1e-3)
        assert fit.gemv_row_s[t - 1] == pytest.approx(truth[t][1], rel=1e-3)
        assert fit.gemv_overhead_s[t - 1] == pytest.approx(truth[t][2], rel=1e-2)
    assert fit.residuals["gemv"] < 1e-3
    # measurements without GEMV rows (files from before them): nothing fitted, fc keeps the bandwidth
    old = _gemv_fit([])
    assert old.gemv_Bps == [] and "gemv" not in old.residuals


def test_old_measurement_files_load_and_fit_without_gemv_rows_and_the_yaml_states_the_new_terms():
    from hetsim_host.fit import fit_host, platform_dict, platform_yaml
    from hetsim_host.microbench import BenchPlan, Measurements

    plan = BenchPlan.quick()
    assert plan.units(2)["gemv"] == len(plan.gemv_shapes) * 2 * (plan.gemv_reps + 1)
    d = json.loads(REFERENCE.read_text())
    raw = d.get("measurements", d)
    assert "gemv" not in raw
    m = Measurements.from_dict(raw)
    fit = fit_host(m)
    r = platform_dict(fit)["core_types"][0]["roofline"]
    assert "gemv_GBps" not in r and "gemv_row_ns" not in r
    rows = [{"k": k, "m": mm, "threads": t, "bytes": 4 * (k + mm + k * mm),
             "time_s": 3e-5 + 4 * (k + mm + k * mm) / (t * 20e9) + k * 4e-8, "p20_s": 0.0}
            for t in (1, 2) for k, mm in BenchPlan().gemv_shapes]
    m.gemv = rows
    fit = fit_host(m)
    assert fit.gemv_Bps[0] == pytest.approx(20e9, rel=0.02)
    text = platform_yaml(fit, m)
    assert "gemv_GBps:" in text and "gemv_row_ns:" in text and "gemv_overhead_us:" in text
    p = platform_from_dict(yaml.safe_load(text), "host")
    assert p.core_type("cpu").roofline.gemv_GBps == pytest.approx([x / 1e9 for x in fit.gemv_Bps], rel=1e-3)
    # the softmax's in-network cost comes from the synthetic network's softmax, switchable
    assert any(row["op"] == "sm" for row in m.network)
    assert "softmax" in fit.kind_overhead_s and "softmax" not in fit_host(m, softmax=False).kind_overhead_s


# -- gemm2's GEMV terms and softmax cost (docs/fidelity.md#the-classifier-gemv-and-softmax) ---------------------------------
def _host_gemm2(**terms):
    """A host-like fit (2 cores) and gemm2 block; ``terms`` added to the block."""
    from hetsim_host.fit import Gemm2Fit, HostFit

    fit = HostFit(macs_per_cycle=16, freq_MHz=3000.0, gemm_efficiency=0.9, parallel_efficiency=[1.0, 0.9],
                  op_overhead_s=2e-6, gemm_overhead_s=[], gemm_pack_Bps=10e9, im2col_Bps=[5e9],
                  core_bandwidth_Bps=20e9, memory_bandwidth_Bps=28e9, kind_Bps={}, dw_efficiency=None, cores=2)
    block = {"kernel_efficiency": 0.9, "parallel_efficiency": [1.0, 0.9], "gemm_call_us": [2.0, 4.0],
             "overlap": 0.2, "op_overhead_us": 1.0, "gemm_macs_per_thread": 262144, "l2_bytes_per_cycle": 20.0,
             "l3_GBps": 60.0, "residency": "proportional", "kernel_threads": 1, **terms}
    return fit, Gemm2Fit(block, 32.0, 1024.0, True, 32768.0, 3000.0)


def _gemv_rows(fit, g2, m, shapes=((16384, 256), (4096, 1000), (1024, 4096), (256, 16384), (1024, 1000),
                                     (512, 1024), (8192, 4096))):
    """Cold GEMV rows timed by the gemm2 model itself (the real Gemm2CostModel, operands a round away)."""
    from hetsim.cost import Gemm2CostModel
    from hetsim.cost.gemm2 import OpContext
    from hetsim_host.fit import _gemm2_platform, gemv_round_distance
    from hetsim_host.microbench import _single_fc

    ops = {s: _single_fc(*s) for s in shapes}    # as bench_gemv: the op's bytes, W's bias included
    m.gemv = [{"k": k, "m": mm, "threads": t, "bytes": int(op.input_bytes + op.output_bytes + op.weight_bytes)}
              for t in (1, 2) for (k, mm), op in ops.items()]
    dist = gemv_round_distance(m)
    platform = _gemm2_platform(g2, fit)
    cost = Gemm2CostModel(platform)
    for r in m.gemv:
        op = ops[(r["k"], r["m"])]
        cost._context[id(op)] = OpContext((dist,), dist, False)
        r["time_s"] = cost.op_time(op, platform.ep(f"C{r['threads']}"))
    return m.gemv


def test_gemm2_gemv_terms_and_kind_overheads_price_fc_and_softmax_and_default_to_the_old_model(tiny_file):
    from hetsim.cost import Gemm2CostModel

    wl = load_workload(tiny_file)
    fc, prob, relu = wl.op("fc"), wl.op("prob"), wl.op("r1")
    _, k, _ = fc.gemm
    hikey = load_platform("hikey970")

    def model(**fields):
        over = [f"core_types.{t}.gemm2.{f}={v}" for t in ("cortex-a73", "cortex-a53") for f, v in fields.items()]
        return Gemm2CostModel(load_platform("hikey970", over), [wl])

    base = Gemm2CostModel(hikey, [wl])
    rich = model(gemv_row_cycles="[100.0, 60.0]", gemv_call_us="[12.0, 20.0]", kind_overhead_us="{softmax: [40.0, 45.0]}")
    for ep_name in ("B1", "B2", "B4"):
        ep = hikey.ep(ep_name)
        b, r = base.breakdown(fc, ep).steps[0], rich.breakdown(fc, ep).steps[0]
        t = b.threads
        assert r.cycles == pytest.approx(b.cycles + k * (100.0, 60.0)[min(t, 2) - 1])
        assert r.fixed_s - b.fixed_s == pytest.approx((12e-6, 20e-6)[min(t, 2) - 1] - 0.0)   # hikey: no gemm_call_us
        assert rich.op_time(prob, ep) == pytest.approx(base.op_time(prob, ep) + (40e-6, 45e-6)[min(ep.cores, 2) - 1])
        assert rich.op_time(relu, ep) == base.op_time(relu, ep)
        # any op kind, a GEMM's too (its step is named by the algorithm, the cost by the op's kind)
        fc_fixed = model(kind_overhead_us="{fc: 7.0}")
        assert fc_fixed.op_time(fc, ep) == pytest.approx(base.op_time(fc, ep) + 7e-6)
    # the DRAM rate: one value per core, capped by the memory as before; a list per thread count, not capped
    b4 = hikey.ep("B4")
    t = base.breakdown(fc, b4).steps[0].threads
    capped = model(gemv_GBps_per_core="100.0").breakdown(fc, b4).steps[0]
    measured = model(gemv_GBps_per_core="[100.0, 80.0, 70.0, 60.0]").breakdown(fc, b4).steps[0]
    view = base.ep_view(b4)
    assert capped.dram_Bps == pytest.approx(min(t * 100e9, view.dram_Bps_max))
    assert measured.dram_Bps == pytest.approx(t * (100e9, 80e9, 70e9, 60e9)[t - 1])
    # absent: every op of the tiny network priced exactly as before the fields existed
    zero = model(gemv_row_cycles="0.0", kind_overhead_us="{}")
    assert [zero.op_time(op, b4) for op in wl.ops] == [base.op_time(op, b4) for op in wl.ops]
    with pytest.raises(HetsimError, match="unknown op kind"):
        load_platform("hikey970", ["core_types.cortex-a73.gemm2.kind_overhead_us={softmaks: 1.0}"])


def test_the_gemm2_gemv_fit_recovers_its_terms_through_the_models_arithmetic():
    """Rows timed by the real model with known terms: fit_gemm2's GEMV step recovers them (so the
    fit prices a row as the model does), the ablation fits nothing, files without rows fit nothing."""
    from hetsim_host.fit import NO_GEMV_TERMS, _gemm2_gemv, _Gemm2Machine

    truth = {"gemv_GBps_per_core": [26.0, 18.0], "gemv_row_cycles": [150.0, 90.0], "gemv_call_us": [15.0, 22.0]}
    fit, g2 = _host_gemm2(**truth)
    m = SimpleNamespace(machine={"caches": [{"level": 3, "size_KiB": 32768}]}, gemv=[])
    rows = _gemv_rows(fit, g2, m)
    block = {k: v for k, v in g2.block.items() if k not in truth}
    machine = _Gemm2Machine(fit, {}, 3000e6, 32 * 1024.0, 1024 * 1024.0, True, 32768 * 1024.0)
    _gemm2_gemv(machine, m, block, 3000e6, 0.2)
    for key, want in truth.items():
        assert block[key] == pytest.approx(want, rel=1e-3), key
    # the ablation: every term held at its old value, nothing fitted
    held = {k: v for k, v in g2.block.items() if k not in truth}
    _gemm2_gemv(_Gemm2Machine(fit, dict(NO_GEMV_TERMS), 3000e6, 32 * 1024.0, 1024 * 1024.0, True, 32768 * 1024.0),
                m, held, 3000e6, 0.2)
    assert not set(truth) & set(held)
    # no rows (measurements from before the gemv phase): nothing fitted
    m.gemv = []
    old = {k: v for k, v in g2.block.items() if k not in truth}
    _gemm2_gemv(machine, m, old, 3000e6, 0.2)
    assert not set(truth) & set(old)
    assert len(rows) == 14 and min(r["time_s"] for r in rows) > 0


def test_the_gemm2_softmax_and_gemm_costs_are_their_median_gaps_in_the_synthetic_network_and_the_yaml_states_them():
    from hetsim.cost import Gemm2CostModel
    from hetsim_host.fit import _gemm2_network_kinds, _gemm2_platform, _gemm2_yaml, platform_yaml
    from hetsim_host.microbench import Measurements, synthetic_network

    fit, g2 = _host_gemm2(gemv_GBps_per_core=[26.0, 18.0], gemv_row_cycles=[150.0, 90.0], gemv_call_us=[15.0, 22.0])
    wl = synthetic_network(32)
    platform = _gemm2_platform(g2, fit)
    cost = Gemm2CostModel(platform, [wl])
    gap = {"softmax": {1: 40e-6, 2: 45e-6}, "conv": {1: 20e-6, 2: 30e-6}, "fc": {1: 20e-6, 2: 30e-6}}
    rows = [{"op": op.name, "threads": n,
             "time_s": cost.op_time(op, platform.ep(f"C{n}")) + gap.get(str(op.kind), {}).get(n, 0.0)}
            for n in (1, 2) for op in wl.ops]
    # one conv 1 ms slower: the median over the convs and fcs does not follow it
    first = next(r for r in rows if str(wl.op(r["op"]).kind) == "conv")
    first["time_s"] += 1e-3
    assert {str(wl.op(r["op"]).kind) for r in rows} >= {"softmax", "conv", "fc"}
    m = SimpleNamespace(network=rows, network_input=32)
    _gemm2_network_kinds(g2, m, fit)
    want = {"softmax": [40.0, 45.0], "conv": [20.0, 30.0], "fc": [20.0, 30.0]}
    assert set(g2.block["kind_overhead_us"]) == set(want)
    for k, v in want.items():
        assert g2.block["kind_overhead_us"][k] == pytest.approx(v, rel=1e-6), k
    _gemm2_network_kinds(g2, m, fit)              # refitting does not stack on the fitted value
    assert g2.block["kind_overhead_us"]["softmax"] == pytest.approx([40.0, 45.0], rel=1e-6)
    assert g2.block["kind_overhead_us"]["conv"] == pytest.approx([20.0, 30.0], rel=1e-6)
    fitted = _gemm2_platform(g2, fit)
    priced = Gemm2CostModel(fitted, [wl])
    for op in (next(op for op in wl.ops if str(op.kind) == k) for k in ("softmax", "fc")):
        assert priced.op_time(op, fitted.ep("C2")) == pytest.approx(
            next(r["time_s"] for r in rows if r["op"] == op.name and r["threads"] == 2))
    # each term switched off alone (the ablations of docs/fidelity.md)
    _gemm2_network_kinds(g2, m, fit, gemm=False)
    assert set(g2.block["kind_overhead_us"]) == {"softmax"}
    _gemm2_network_kinds(g2, m, fit, softmax=False)
    assert set(g2.block["kind_overhead_us"]) == {"conv", "fc"}
    _gemm2_network_kinds(g2, m, fit)
    # a network slower than the model never makes a term negative
    fast = [dict(r, time_s=r["time_s"] * 0.01) for r in rows]
    _gemm2_network_kinds(g2, SimpleNamespace(network=fast, network_input=32), fit)
    assert all(x == 0.0 for v in g2.block["kind_overhead_us"].values() for x in v)
    _gemm2_network_kinds(g2, m, fit)
    # the YAML: a [fitted] comment per new field, and the values read back
    g2.residuals["gemm2 gemv"] = 0.02
    lines = {ln.split(":")[0].strip(): ln for ln in _gemm2_yaml(g2)}
    for key in ("gemv_GBps_per_core", "gemv_row_cycles", "gemv_call_us", "kind_overhead_us"):
        assert "# [fitted]" in lines[key], key
    d = json.loads(REFERENCE.read_text())
    text = platform_yaml(fit, Measurements.from_dict(d.get("measurements", d)), gemm2=g2)
    back = platform_from_dict(yaml.safe_load(text), "host").core_type("cpu").gemm2
    assert back.gemv_row_cycles == [150.0, 90.0] and back.gemv_GBps_per_core == [26.0, 18.0]
    assert back.gemv_call_us == [15.0, 22.0]
    assert back.kind_overhead_us == {"softmax": [40.0, 45.0], "conv": [20.0, 30.0], "fc": [20.0, 30.0]}


def test_a_wild_gemm_fit_raises_macs_per_cycle_not_the_clock(tmp_path):
    """On a loaded machine the 1-thread GEMM fit can come out tens of times the ISA peak; the
    clock was raised to match (172 GHz: refused by the platform ranges, so `calibrate host`
    failed). Past twice the nominal clock the MACs per cycle are raised instead: the same peak,
    a physical clock, a platform that loads."""
    from hetsim_host.fit import MAX_TURBO, fit_host, platform_yaml
    from hetsim_host.microbench import Measurements

    m = Measurements.from_dict(json.loads(QUICK.read_text())["measurements"])
    for g in m.gemm:
        g["time_s"] /= 50.0          # a rate fifty times what was measured
    fit = fit_host(m)
    nominal = m.machine["nominal_MHz"]
    assert fit.freq_MHz <= MAX_TURBO * nominal
    assert fit.macs_per_cycle > m.machine["macs_per_cycle"]
    path = tmp_path / "host.yaml"
    path.write_text(platform_yaml(fit, m))
    p = load_platform(str(path))
    assert p.core_types[0].dvfs[0].freq_MHz <= MAX_TURBO * nominal
    assert "[fitted]" in path.read_text().split("macs_per_cycle:")[1].splitlines()[0]
