"""ONNX Runtime profiles as measured costs: synthetic profiles in ONNX Runtime's format (medians,
fallbacks, Memcpy copies, the rebuilt graph), the measured cost model in both evaluators, and one
real profiling run on this machine compared end to end with ONNX Runtime's own time."""

from __future__ import annotations

import json
import math
import os

import onnx
import pandas as pd
import pytest

from hetsim.cli import main
from hetsim.cost import MeasuredCostModel
from hetsim.cost.ort_profile import import_ort_profiles, read_ort_profile
from hetsim.errors import HetsimError
from hetsim.evaluation import evaluate, simulate
from hetsim.mapping import load_mapping, placement_from_dict
from hetsim.platform import load_platform, platform_from_dict
from hetsim.workload import load_workload, workload_from_dict
from hetsim.workload.onnx_graph import OnnxGraph

PIM = "PIMExecutionProvider"
CPU = "CPUExecutionProvider"


def node(name, op, dur_us, ts, provider=CPU, out_bytes=4096, inputs=None, in_shape=(1, 1024),
         out_shape=None, params=0, dtype="float"):
    # as ONNX Runtime writes them: output_size is the output shape's elements at the element size
    size = {"float": 4, "bfloat16": 2}[dtype]
    out_shape = out_shape or (1, out_bytes // size)
    args = {"op_name": op, "provider": provider, "node_index": "0",
            "activation_size": str(4 * math.prod(in_shape)), "parameter_size": str(params),
            "output_size": str(out_bytes), "input_type_shape": [{"float": list(in_shape)}],
            "output_type_shape": [{dtype: list(out_shape)}]}
    if inputs is not None:
        args["input_nodes"] = inputs
    return {"cat": "Node", "pid": 1, "tid": 1, "dur": dur_us, "ts": ts, "ph": "X",
            "name": f"{name}_kernel_time", "args": args}


def profile(runs) -> list[dict]:
    """Events of several runs; ``runs`` = list of lists of (name, op, dur_us, provider, extra)."""
    events, ts = [{"cat": "Session", "name": "session_initialization", "ts": 0, "dur": 5}], 10
    for run in runs:
        start = ts
        for name, op, dur, provider, extra in run:
            events.append(node(name, op, dur, ts, provider, **extra))
            ts += dur + 1
        events.append({"cat": "Session", "name": "model_run", "ts": start, "dur": ts - start + 2,
                       "ph": "X"})
        ts += 10
    return events


def cpu_run(scale=1.0):
    return [("a", "MatMul", 100 * scale, CPU, {"out_bytes": 2048, "inputs": ""}),
            ("b", "Erf", 40 * scale, CPU, {"out_bytes": 1024, "inputs": "a"}),
            ("c", "Add", 30 * scale, CPU, {"inputs": "a,b", "in_shape": (1, 512)})]


def pim_run(scale=1.0):
    return [("Memcpy", "MemcpyFromHost", 9, PIM, {"out_bytes": 4096, "inputs": ""}),
            ("a", "MatMul", 20 * scale, PIM, {"out_bytes": 2048, "inputs": "Memcpy"}),
            ("Memcpy_1", "MemcpyToHost", 12 * scale, PIM, {"out_bytes": 2048, "inputs": "a"}),
            ("b", "Erf", 45, CPU, {"out_bytes": 1024, "inputs": "Memcpy_1"}),  # fell back
            ("Memcpy_2", "MemcpyFromHost", 5 * scale, PIM, {"out_bytes": 1024, "inputs": "b"}),
            ("c", "Add", 10 * scale, PIM, {"inputs": "a,Memcpy_2", "in_shape": (1, 512)})]


@pytest.fixture()
def profiles(tmp_path):
    cpu = tmp_path / "cpu.json"
    pim = tmp_path / "pim.json"
    # run 0 is a (slow) warm-up; the medians of runs 1-3 are the 1.0 scale
    cpu.write_text(json.dumps(profile([cpu_run(5), cpu_run(1.0), cpu_run(1.2), cpu_run(0.9)])))
    pim.write_text(json.dumps(profile([pim_run(5), pim_run(1.0), pim_run(0.8), pim_run(1.1)])))
    return cpu, pim


PLATFORM = {
    "schema": 1, "name": "cpu-pim",
    "memories": [{"name": "dram", "bandwidth_GBps": 10}],
    "core_types": [{"name": "arm", "macs_per_cycle": 1, "dvfs": [{"name": "f", "freq_MHz": 1000}]}],
    "clusters": [{"name": "cpu", "symbol": "C", "core_type": "arm", "cores": 1, "memory": "dram"}],
    "accelerators": [{"name": "pim", "kind": "pim", "peak_GMACps": 1, "memory": "dram"}],
}


def test_read_profile_splits_runs(profiles):
    p = read_ort_profile(profiles[0])
    assert len(p.runs) == 4 and [n.node for n in p.runs[1]] == ["a", "b", "c"]
    assert p.runs[1][0].time_s == pytest.approx(100e-6) and p.runs[1][2].input_nodes == ["a", "b"]
    assert p.run_s[1] == pytest.approx((100 + 40 + 30 + 3 + 2) * 1e-6)


def test_costs_medians_capability_and_copies(profiles):
    m = import_ort_profiles({"C1": [profiles[0]], "pim": [profiles[1]]})
    t = m.ops.set_index(["op", "ep"])["time_s"]
    assert t["a", "C1"] == pytest.approx(100e-6) and t["b", "C1"] == pytest.approx(40e-6)
    assert t["a", "pim"] == pytest.approx(20e-6) and t["c", "pim"] == pytest.approx(10e-6)
    assert ("b", "pim") not in t.index  # ran on the CPU in pim's profile: not capable there
    assert (m.ops.runs == 3).all()  # the warm-up run is dropped
    x = m.transfers.set_index(["src", "dst", "bytes"])["time_s"]
    assert x["C1", "pim", 4096] == pytest.approx(9e-6) and x["C1", "pim", 1024] == pytest.approx(5e-6)
    assert x["pim", "C1", 2048] == pytest.approx(12e-6)
    assert any("not capable" in n for n in m.notes)
    # the graph rebuilt from input_nodes, looking through the Memcpy nodes
    w = workload_from_dict(m.spec, "<rebuilt>")
    assert [op.name for op in w.ops] == ["a", "b", "c"]
    assert w.op("c").inputs == ("a", "b") and str(w.op("a").kind) == "matmul"
    assert w.op("b").output_bytes == 1024 and w.op("c").input_bytes == 4 * 512


def test_measured_costs_replay_in_both_evaluators(profiles):
    m = import_ort_profiles({"C1": [profiles[0]], "pim": [profiles[1]]})
    platform = platform_from_dict(PLATFORM, "cpu-pim")
    workload = workload_from_dict(m.spec, "<rebuilt>")
    cost = MeasuredCostModel(platform, m.ops, m.transfers)
    c1, pim = platform.ep("C1"), platform.ep("pim")
    assert cost.supports(workload.op("a"), pim) and not cost.supports(workload.op("b"), pim)
    with pytest.raises(HetsimError, match="pim cannot run op b"):
        placement_from_dict({"a": "pim", "b": "pim", "c": "pim"}, platform, workload, cost=cost)
    place = placement_from_dict({"a": "pim", "b": "C1", "c": "pim"}, platform, workload, cost=cost)
    # a on pim, its 2048-byte output copied to the host (measured 12 us), b on the CPU, its
    # 1024 bytes copied back (5 us), c on pim: the copies run in parallel with nothing else
    expected = 20e-6 + 12e-6 + 40e-6 + 5e-6 + 10e-6
    for engine in ("analytic", "des"):
        assert evaluate(platform, workload, place, cost=cost, engine=engine).latency_s["mean"] == \
            pytest.approx(expected)
    # an unmeasured size is interpolated along its direction (one size: proportional)
    assert cost.transfer_time(4096, pim, c1) == pytest.approx(24e-6)
    assert cost.transfer_time(2560, c1, pim) == pytest.approx(5e-6 + (9e-6 - 5e-6) * 1536 / 3072)
    # the all-CPU sequential run is the sum of the CPU medians
    seq = load_mapping(f"C1:1-{workload.num_layers}", platform, workload, cost)
    assert simulate(platform, workload, seq, cost=cost, engine="des", frames=1).metrics.latency_s[
        "mean"] == pytest.approx(170e-6)


def test_without_input_nodes_the_graph_is_a_chain(tmp_path):
    events = profile([[(n, op, d, CPU, {}) for n, op, d, _, _ in cpu_run()]])
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"traceEvents": events}))
    m = import_ort_profiles({"C1": [path]})
    w = workload_from_dict(m.spec, "<chain>")
    assert [op.inputs for op in w.ops] == [(), ("a",), ("b",)]
    assert any("chained in execution order" in n for n in m.notes)
    assert len(m.runs) == 1  # a single run is not dropped as warm-up


def test_measured_table_from_a_directory_and_the_old_csv(tmp_path):
    platform = platform_from_dict(PLATFORM, "cpu-pim")
    (tmp_path / "costs.csv").write_text("op,ep,time_s\nx,C1,0.5\n")
    (tmp_path / "transfers.csv").write_text("src,dst,bytes,time_s\nC1,pim,100,0.25\n")
    cost = MeasuredCostModel(platform, tmp_path)
    assert cost.transfer_time(200, platform.ep("C1"), platform.ep("pim")) == pytest.approx(0.5)
    assert cost.transfer_time(200, platform.ep("pim"), platform.ep("C1")) == 0.0  # unmeasured: links
    wl = load_workload("synth1")
    layer_csv = tmp_path / "layers.csv"
    layer_csv.write_text("layer,ep,time_s\n" + "".join(f"{i},C1,0.001\n" for i in range(1, 8)))
    layered = MeasuredCostModel(platform, layer_csv)
    assert layered.layer_times(wl, platform.ep("C1")).sum() == pytest.approx(0.007)
    bad = tmp_path / "bad.csv"
    bad.write_text("src,dst,bytes,time_s\nC1,pim,lots,1\n")
    with pytest.raises(HetsimError, match="row 2: bytes 'lots'"):
        MeasuredCostModel(platform, tmp_path / "costs.csv", bad)


# -- the real thing: profile on this machine, import, simulate, compare --------------------
def small_cnn(path):
    g = OnnxGraph("smallcnn", weights="random", seed=1)
    x = g.input("x", (1, 8, 48, 48))
    y = g.relu(g.conv(x, 32, 3, pad=1))
    y = g.relu(g.conv(y, 32, 3, pad=1))
    y = g.pool(y, "max", 2)
    y = g.relu(g.conv(y, 64, 3, pad=1))
    y = g.gemm(g.flatten(g.global_avg_pool(y)), 10)
    onnx.save(g.model(y), path)


def test_profile_import_simulate_end_to_end(tmp_path, capsys):
    model = tmp_path / "smallcnn.onnx"
    small_cnn(model)
    out = tmp_path / "prof"
    threads = sorted({1, min(2, len(os.sched_getaffinity(0)))})
    eps = [f"C{t}" for t in threads]
    main(["profile", str(model), "--threads", ",".join(map(str, threads)), "--runs", "6",
          "--warmup", "2", "--out", str(out)])
    printed = capsys.readouterr().out
    assert "end to end" in printed and "Conv" in printed
    costs = pd.read_csv(out / "costs.csv")
    runs = pd.read_csv(out / "runs.csv")
    assert set(costs.ep) == set(eps) and len(costs) == len(eps) * 10
    assert (costs.runs == 6).all() and len(runs) == 6 * len(eps)
    platform = load_platform(out / "platform.yaml")
    workload = load_workload(out / "smallcnn.yaml")
    cost = MeasuredCostModel(platform, out)
    for ep in eps:
        seq = load_mapping(f"{ep}:1-{workload.num_layers}", platform, workload, cost)
        sim = evaluate(platform, workload, seq, cost=cost, engine="analytic", frames=1).latency_s["mean"]
        assert sim == pytest.approx(costs[costs.ep == ep].time_s.sum())  # the replay is exact
        # How close the replay comes to ONNX Runtime's whole runs depends on the machine's load:
        # docs/import.md reports it measured on a quiet one (no timed assertion here).
        assert (runs[runs.ep == ep].time_s > 0).all()
    # importing the same profiles with the model gives the same table
    again = tmp_path / "again"
    main(["costs", "import-ort", *[a for t in threads for a in ("--profile",
                                                                f"C{t}={out / f'ort_t{t}.json'}")],
          "--model", str(model), "--skip-runs", "2", "--out", str(again)])
    pd.testing.assert_frame_equal(pd.read_csv(again / "costs.csv"), costs)
    assert (again / "smallcnn.yaml").read_text().split("\n", 1)[1] == \
        (out / "smallcnn.yaml").read_text().split("\n", 1)[1]
    capsys.readouterr()
    main(["simulate", "-p", str(out / "platform.yaml"), "-w", str(out / "smallcnn.yaml"),
          "-m", f"C1:1-{workload.num_layers}", "--cost-table", str(out), "--frames", "3"])
    assert "latency" in capsys.readouterr().out


def _unshaped(events):
    """The events as an older profiler or a custom execution provider writes them: sizes and node
    lists, no input_type_shape/output_type_shape."""
    for ev in events:
        if ev.get("cat") == "Node":
            ev["args"].pop("input_type_shape")
            ev["args"].pop("output_type_shape")
    return events


def test_profiles_without_shapes_rebuild_the_graph_from_sizes_and_replay(tmp_path):
    cpu, pim = tmp_path / "cpu.json", tmp_path / "pim.json"
    cpu.write_text(json.dumps(_unshaped(profile([cpu_run(5), cpu_run(1.0)]))))
    # the accelerator's own sizes are half (bf16): listed first, they must not size the ops
    half = [(n, op, d, p, {**x, "out_bytes": x.get("out_bytes", 4096) // 2}) for n, op, d, p, x
            in pim_run(1.0)]
    pim.write_text(json.dumps(_unshaped(profile([half, half]))))
    m = import_ort_profiles({"pim": [pim], "C1": [cpu]})
    assert any("no output_type_shape" in n for n in m.notes)
    assert any("op sizes and shapes from the profile of C1" in n for n in m.notes)
    w = workload_from_dict(m.spec, "<rebuilt>")
    assert [op.name for op in w.ops] == ["a", "b", "c"] and w.op("c").inputs == ("a", "b")
    assert w.op("a").output_bytes == 2048 and w.op("b").output_bytes == 1024   # the host's sizes
    assert str(w.op("a").kind) == "other"   # a MatMul without dims: memory-bound, measured time
    ref = import_ort_profiles({"pim": [pim], "C1": [cpu]}, reference="pim")
    assert workload_from_dict(ref.spec, "<rebuilt>").op("a").output_bytes == 1024
    with pytest.raises(HetsimError, match="--reference gpu: no --profile"):
        import_ort_profiles({"pim": [pim], "C1": [cpu]}, reference="gpu")
    # replayed: the all-CPU run is the profile's own sum of kernel times
    platform = platform_from_dict(PLATFORM, "cpu-pim")
    cost = MeasuredCostModel(platform, m.ops, m.transfers)
    seq = load_mapping(f"C1:1-{w.num_layers}", platform, w, cost)
    measured = m.runs[m.runs.ep == "C1"].kernels_s.iloc[0]
    for engine in ("analytic", "des"):
        assert simulate(platform, w, seq, cost=cost, engine=engine, frames=1).metrics.latency_s[
            "mean"] == pytest.approx(measured)


# -- profiles from other devices, in the shapes issue 27 found them -------------------------------
NPU = "NPUExecutionProvider"
BOARD = {**PLATFORM, "name": "cpu4-npu-pim",
         "clusters": [{"name": "cpu", "symbol": "C", "core_type": "arm", "cores": 8, "memory": "dram"}],
         "accelerators": [{"name": "npu", "kind": "npu", "peak_GMACps": 1, "memory": "dram"},
                          {"name": "pim", "kind": "pim", "peak_GMACps": 1, "memory": "dram"}]}


def host_run(us):
    """A CPU's run of the graph x -> a (MatMul) -> b (Erf) -> c (Add of a and b); ``us`` its times."""
    return [("a", "MatMul", us[0], CPU, {"out_bytes": 2048, "inputs": ""}),
            ("b", "Erf", us[1], CPU, {"out_bytes": 2048, "inputs": "a"}),
            ("c", "Add", us[2], CPU, {"out_bytes": 2048, "inputs": "a,b"})]


def accel_run(provider, element_bytes, b_us):
    """An accelerator's run, its host's CPU running b (a fallback, ``b_us``): copies of the input
    to it, of a's output back, of b's output to it; every size at the device's precision."""
    size = 2048 * element_bytes // 4
    return [("Memcpy", "MemcpyFromHost", 7, provider, {"out_bytes": 4096 * element_bytes // 4, "inputs": ""}),
            ("a", "MatMul", 11, provider, {"out_bytes": size, "inputs": "Memcpy"}),
            ("Memcpy_1", "MemcpyToHost", 6, provider, {"out_bytes": size, "inputs": "a"}),
            ("b", "Erf", b_us, CPU, {"out_bytes": 2048, "inputs": "Memcpy_1"}),
            ("Memcpy_2", "MemcpyFromHost", 5, provider, {"out_bytes": size, "inputs": "b"}),
            ("c", "Add", 3, provider, {"out_bytes": size, "inputs": "a,Memcpy_2"})]


@pytest.fixture()
def board_profiles(tmp_path):
    """Profiles exactly as recorded on a board: no output_type_shape, a bf16 NPU whose copies are
    recorded at 2 bytes per element, its fallbacks run by the CPU at 4 threads (host C4), an fp32
    PIM device whose host is the CPU at 1 thread (C1)."""
    files = {"C1": profile([host_run((90, 40, 30))] * 3), "C4": profile([host_run((30, 15, 12))] * 3),
             "npu": profile([accel_run(NPU, 2, 15)] * 3), "pim": profile([accel_run(PIM, 4, 40)] * 3)}
    paths = {}
    for dev, events in files.items():
        paths[dev] = tmp_path / f"{dev}.json"
        paths[dev].write_text(json.dumps(_unshaped(events)))
    return paths


def test_board_profiles_replay_to_their_own_sums(board_profiles):
    m = import_ort_profiles({"npu": [board_profiles["npu"]], "C1": [board_profiles["C1"]],
                             "C4": [board_profiles["C4"]], "pim": [board_profiles["pim"]]},
                            host={"npu": "C4", "pim": "C1"})
    # copies keyed by the tensor's elements: the NPU's 1024-byte bf16 copy of a is a's 512 elements
    x = m.transfers.set_index(["src", "dst", "elements"])
    assert x.loc[("npu", "C4", 512), "bytes"] == 1024 and x.loc[("pim", "C1", 512), "bytes"] == 2048
    assert x.loc[("C4", "npu", 1024), "bytes"] == 2048   # the input: 4096 fp32 bytes, 1024 elements
    assert set(zip(m.transfers.src, m.transfers.dst, strict=True)) == {("C4", "npu"), ("npu", "C4"),
                                                          ("C1", "pim"), ("pim", "C1")}
    assert any("npu 2 bytes/element" in n for n in m.notes)
    w = workload_from_dict(m.spec, "<board>")
    assert [op.output_bytes for op in w.ops] == [2048] * 3   # sized by the host (C1), not the NPU
    platform = platform_from_dict(BOARD, "board")
    cost = MeasuredCostModel(platform, m.ops, m.transfers, m.capability)
    runs = m.runs.groupby("ep").kernels_s.median()
    for dev, host in (("npu", "C4"), ("pim", "C1")):
        mine = m.transfers[(m.transfers.src == dev) | (m.transfers.dst == dev)]
        # its copies, asked at the workload's (fp32) sizes: the profile's copy sum per run
        moved = [cost.transfer_time(b, platform.ep(s), platform.ep(d))
                 for s, d, b in ((host, dev, 4096), (dev, host, 2048), (host, dev, 2048))]
        assert sum(moved) == pytest.approx(mine.time_s.sum()) == pytest.approx(18e-6)
        # each accelerator's run replayed as recorded (a and c on it, b on its host): the profile's
        # own kernel sum, copies included, but for the graph input's copy (in hetsim a frame
        # arrives in its first EP's memory)
        input_copy = mine[mine.elements == 1024].time_s.iloc[0]
        place = placement_from_dict({"a": dev, "b": host, "c": dev}, platform, w, cost=cost)
        for engine in ("analytic", "des"):
            lat = evaluate(platform, w, place, cost=cost, engine=engine).latency_s["mean"]
            assert lat == pytest.approx(runs[dev] - input_copy)
    for host in ("C1", "C4"):   # each thread setting's sequential run: its kernel sum
        seq = load_mapping(f"{host}:1-{w.num_layers}", platform, w, cost)
        for engine in ("analytic", "des"):
            assert simulate(platform, w, seq, cost=cost, engine=engine, frames=1).metrics.latency_s[
                "mean"] == pytest.approx(runs[host])
    assert cost.fallback_note() is None   # every transfer asked so far was measured
    # two thread settings of one CPU: no copy between them measured, the links priced it (a note)
    place = placement_from_dict({"a": "C1", "b": "C4", "c": "C1"}, platform, w, cost=cost)
    evaluate(platform, w, place, cost=cost, engine="des")
    assert "no copy measured for C1->C4, C4->C1" in cost.fallback_note()


def test_import_ort_capability_table_hosts_and_the_link_note(board_profiles, tmp_path, hetsim):
    out = tmp_path / "costs"
    args = ["costs", "import-ort", *[a for d in ("C1", "C4", "npu", "pim")
                                     for a in ("--profile", f"{d}={board_profiles[d]}")],
            "--host", "npu=C4", "--host", "pim=C1", "--name", "board", "--out", str(out)]
    r = hetsim(*args)
    assert r.returncode == 0, r.stderr
    cap = pd.read_csv(out / "capability.csv")
    assert list(cap.columns) == ["op", "op_type", "ep", "capable", "evidence"]
    row = cap.set_index(["op", "ep"])
    assert row.loc[("b", "npu"), "capable"] == 0 and "fell back to " + CPU in row.loc[("b", "npu"), "evidence"]
    assert row.loc[("a", "npu"), "capable"] == 1 and row.loc[("b", "C4"), "capable"] == 1
    platform = platform_from_dict(BOARD, "board")
    w = load_workload(out / "board.yaml")
    cost = MeasuredCostModel(platform, out)
    assert not cost.supports(w.op("b"), platform.ep("npu"))
    # the user's word overrides the evidence: no Add on the PIM device (by op type), b on the NPU
    override = tmp_path / "cap.csv"
    override.write_text("op_type,op,ep,capable\nAdd,,pim,0\n,b,npu,yes\n")
    r = hetsim(*args, "--capability", str(override))
    assert r.returncode == 0, r.stderr
    cost = MeasuredCostModel(platform, out)
    assert not cost.supports(w.op("c"), platform.ep("pim")) and cost.supports(w.op("b"), platform.ep("npu"))
    assert "capability table" in cost.why_not(w.op("c"), platform.ep("pim"))
    with pytest.raises(HetsimError, match="capable on npu .* no measured time"):
        cost.op_demand(w.op("b"), platform.ep("npu"))
    # edited by hand: the measured model reads capability.csv back
    (out / "capability.csv").write_text("op,ep,capable\na,C1,0\n")
    assert not MeasuredCostModel(platform, out).supports(w.op("a"), platform.ep("C1"))
    # a simulation between the two thread settings of one CPU says its copies used the links
    (tmp_path / "board.yaml").write_text(json.dumps(BOARD))
    (tmp_path / "m.yaml").write_text(json.dumps({"placement": {"a": "C4", "b": "C1", "c": "C1"}}))
    r = hetsim("simulate", "-p", str(tmp_path / "board.yaml"), "-w", str(out / "board.yaml"),
               "-m", str(tmp_path / "m.yaml"), "--cost-table", str(out))
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if "no copy measured" in line]
    assert len(notes) == 1 and "C4->C1" in notes[0] and "platform's links" in notes[0]


@pytest.mark.parametrize(("extra", "message"), [
    (["--host", "gpu=C1"], "--host gpu=C1: no --profile of device 'gpu'"),
    (["--host", "C1", "--host", "npu=C4"], "--host npu=C4: give either one HOST"),
    (["--capability", "CAP"], "row 2: capable 'maybe'; allowed"),
    (["--capability", "CAP2"], "row 2: ep 'tpu' is not a profiled device"),
    (["--capability", "CAP3"], "row 2: op 'zz' is not an op of the workload"),
])
def test_import_ort_bad_hosts_and_capability_are_one_line(board_profiles, tmp_path, hetsim, extra, message):
    (tmp_path / "CAP").write_text("op,ep,capable\na,npu,maybe\n")
    (tmp_path / "CAP2").write_text("op,ep,capable\na,tpu,1\n")
    (tmp_path / "CAP3").write_text("op,ep,capable\nzz,npu,1\n")
    extra = [str(tmp_path / e) if e.startswith("CAP") else e for e in extra]
    out = tmp_path / "out"
    r = hetsim("costs", "import-ort", *[a for d in ("C1", "C4", "npu")
                                        for a in ("--profile", f"{d}={board_profiles[d]}")],
               *extra, "--out", str(out))
    assert r.returncode == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not out.exists() or not any(out.iterdir())   # nothing half-written


def test_explore_an_infeasible_imported_model_is_one_line(board_profiles, tmp_path, hetsim):
    out = tmp_path / "costs"
    r = hetsim("costs", "import-ort", *[a for d in ("C1", "npu", "pim")
                                        for a in ("--profile", f"{d}={board_profiles[d]}")],
               "--host", "C1", "--name", "board", "--out", str(out))
    assert r.returncode == 0, r.stderr
    board = tmp_path / "board.yaml"
    board.write_text(json.dumps(BOARD))
    # b fell back to the CPU in both accelerators' profiles: no EP of the space runs its layer
    r = hetsim("explore", "-p", str(board), "-w", str(out / "board.yaml"), "--cost-table", str(out),
               "--eps", "npu,pim", "-a", "ES", "--json")
    assert r.returncode == 2 and r.stdout == "" and len(r.stderr.strip().splitlines()) == 1
    assert "no EP of the space (npu, pim) can run layer 1 (npu: op b (unary); pim: op b (unary))" in r.stderr
    # every layer has an EP that runs it, but no mapping of the space does (one stage only)
    rows = [f"{op.name},{ep},0.001" for i, layer in enumerate(load_workload("synth1").layers)
            for op in layer.ops for ep in (("npu",) if i < 3 else ("pim",))]
    (tmp_path / "t.csv").write_text("op,ep,time_s\n" + "\n".join(rows) + "\n")
    r = hetsim("explore", "-p", str(board), "-w", "synth1", "--cost-table", str(tmp_path / "t.csv"),
               "--eps", "npu,pim", "--depth", "1", "-a", "ES", "--json")
    assert r.returncode == 2 and r.stdout == "" and "no feasible mapping found in" in r.stderr
    r = hetsim("explore", "-p", str(board), "-w", "synth1", "--cost-table", str(tmp_path / "t.csv"),
               "--eps", "npu,pim", "-a", "ES", "--json")   # depth 2 runs: a real answer
    assert r.returncode == 0 and json.loads(r.stdout)["best_mapping"] == "npu:1-3|pim:4-7"


# -- function ops: ONNX Runtime runs HardSwish (opset >= 14) as its function body ----------------
def hardswish_model(path, opset=14):
    from onnx import TensorProto, helper, numpy_helper

    rng = __import__("numpy").random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((8, 4, 3, 3)).astype("float32"), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("HardSwish", ["c"], ["h"], name="hswish"),
             helper.make_node("HardSwish", ["h"], ["h2"]),   # unnamed: ONNX Runtime's name
             helper.make_node("Relu", ["h2"], ["y"], name="relu")]
    graph = helper.make_graph(nodes, "hs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def test_profile_of_function_ops_maps_their_bodies_back(tmp_path, hetsim):
    import numpy as np
    import onnxruntime as ort

    from hetsim.cost.ort_profile import function_op_nodes, inline_function_ops
    from hetsim.workload.onnx_import import load_onnx

    model = tmp_path / "hs.onnx"
    hardswish_model(model)
    proto = load_onnx(model)
    assert function_op_nodes(proto) == [1, 2]   # no CPU kernel for HardSwish-14
    inlined, aliases = inline_function_ops(proto)
    assert aliases == {"hswish/fn0_HardSigmoid": "hswish", "hswish/fn1_Mul": "hswish",
                       "HardSwish_2/fn0_HardSigmoid": "HardSwish_2", "HardSwish_2/fn1_Mul": "HardSwish_2"}
    x = {"x": np.random.default_rng(1).standard_normal((1, 4, 8, 8)).astype("float32")}
    same = [ort.InferenceSession(m.SerializeToString(), providers=[CPU]).run(None, x)[0]
            for m in (proto, inlined)]
    np.testing.assert_array_equal(*same)   # the inlined model computes what the model does
    out = tmp_path / "prof"
    r = hetsim("profile", str(model), "--threads", "1", "--runs", "3", "--warmup", "1", "--out", str(out))
    assert r.returncode == 0, r.stderr
    costs = pd.read_csv(out / "costs.csv").set_index("op")
    assert list(costs.index) == ["conv", "hswish", "HardSwish_2", "relu"]
    assert (costs.op_type == ["Conv", "HardSwish", "HardSwish", "Relu"]).all()
    # each function op's time: the median over runs of its body's nodes' times summed
    prof = read_ort_profile(out / "ort_t1.json")
    per_run = [sum(n.time_s for n in run if n.node.startswith("hswish/")) for run in prof.runs[1:]]
    assert costs.loc["hswish", "time_s"] == pytest.approx(float(np.median(per_run)))
    # a profile ONNX Runtime wrote of the model itself names the body's nodes its own way: one line
    so = ort.SessionOptions()
    so.enable_profiling, so.profile_file_prefix = True, str(tmp_path / "raw")
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    session = ort.InferenceSession(str(model), so, providers=[CPU])
    session.run(None, x)
    raw = session.end_profiling()
    r = hetsim("costs", "import-ort", "--profile", f"C1={raw}", "--model", str(model),
               "--out", str(tmp_path / "raw_out"))
    assert r.returncode == 2 and "ran the function op(s) hswish (HardSwish)" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and not (tmp_path / "raw_out" / "costs.csv").exists()
