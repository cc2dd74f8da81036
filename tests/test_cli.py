"""The command line: outputs, and one line + exit 2 for every user error (no traceback, no file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import add_plugins, assert_one_line_error

HERE = Path(__file__).parent
MALFORMED = HERE / "malformed"


def test_simulate_json_fields(hetsim):
    p = hetsim("simulate", "--platform", "hikey970", "--workload", "resnet50",
               "--mapping", "B4:1-35|s2:36-44|s2:45-54", "--frames", "20", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["throughput_fps"] > 0
    assert set(out["latency_s"]) >= {"mean", "p50", "p99"}
    assert [s["layers"] for s in out["stages"]] == [[1, 35], [36, 44], [45, 54]]
    assert [s["ep"] for s in out["stages"]] == ["B4", "s2", "s2"]
    for s in out["stages"]:
        assert {"ep", "layers", "time_s", "utilization"} <= set(s)
    assert out["energy_J"] is not None and out["energy_J"] > 0


def test_simulate_engines_agree_without_contention(hetsim):
    args = ["simulate", "-p", "rk3588", "-w", "resnet50-shisha",
            "-m", "npu:1-20|gpu:21-35|big:36-44|little:45-50", "--json", "--frames", "30"]
    des = json.loads(hetsim(*args, "--no-contention").stdout)
    ana = json.loads(hetsim(*args, "--engine", "analytic").stdout)
    assert des["throughput_fps"] == pytest.approx(ana["throughput_fps"], rel=1e-9)


def test_simulate_same_seed_same_bytes(hetsim):
    args = ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-9|s4:10-11", "--json",
            "--noise", "0.05", "--source", "poisson", "--interval", "0.05", "--frames", "40"]
    a, b, c = hetsim(*args, "--seed", "3"), hetsim(*args, "--seed", "3"), hetsim(*args, "--seed", "4")
    assert a.stdout == b.stdout
    assert a.stdout != c.stdout


def test_simulate_writes_trace_and_gantt(hetsim, tmp_path):
    trace, gantt = tmp_path / "t.json", tmp_path / "g.png"
    p = hetsim("simulate", "-p", "hikey970", "-w", "squeezenet", "-m", "B4:1-16|s4:17-26",
               "--frames", "10", "--trace", str(trace), "--gantt", str(gantt))
    assert p.returncode == 0, p.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    assert sum(1 for e in events if e.get("ph") == "X" and e.get("cat") == "compute") == 20
    assert gantt.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "throughput" in p.stdout


def test_dvfs_preset_and_set_override_change_results(hetsim):
    base = ["simulate", "-p", "jetson-tx2", "-w", "vgg16", "-m", "D2:1-9|A2:10-21", "--json",
            "--engine", "analytic"]
    g1 = json.loads(hetsim(*base, "--dvfs", "governor1").stdout)["throughput_fps"]
    g4 = json.loads(hetsim(*base, "--dvfs", "governor4").stdout)["throughput_fps"]
    assert g4 < g1
    rk = ["simulate", "-p", "rk3588", "-w", "synthnet", "--engine", "analytic", "--json", "-m", "big:1-9|gpu:10-18"]
    fast = json.loads(hetsim(*rk).stdout)["throughput_fps"]
    slow = json.loads(hetsim(*rk, "--set", "links.soc-bus.latency_ns=1e9").stdout)["throughput_fps"]
    assert slow < fast


def test_platforms_and_workloads_commands(hetsim, tmp_path):
    p = hetsim("platforms", "list")
    assert p.returncode == 0 and "hikey970" in p.stdout and "rk3588" in p.stdout
    p = hetsim("platforms", "show", "hikey970")
    assert p.returncode == 0 and "B4" in p.stdout and "s1" in p.stdout
    p = hetsim("platforms", "validate", str(HERE.parent / "platforms" / "hikey970.yaml"))
    assert p.returncode == 0 and "ok" in p.stdout
    out = tmp_path / "schema.json"
    assert hetsim("platforms", "schema", "--out", str(out)).returncode == 0
    assert "$schema" in json.loads(out.read_text())
    p = hetsim("workloads", "list")
    assert p.returncode == 0 and "yolov3" in p.stdout
    p = hetsim("workloads", "show", "vgg16", "--json")
    assert p.returncode == 0 and len(json.loads(p.stdout)) == 21


def test_validate_reports_every_error_with_field_path(hetsim, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: 2\nname: x\nmemories: [{name: m, bandwidth_GBps: -1}]\n"
                   "core_types: [{name: c, macs_per_cycle: 0, dvfs: [{name: a, freq_MHz: 1}]}]\n"
                   "clusters: [{name: k, core_type: c, cores: 1, memory: m}]\n")
    p = hetsim("platforms", "validate", str(bad))
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 2
    assert any("memories.0.bandwidth_GBps" in ln for ln in lines)
    assert any("core_types.0.macs_per_cycle" in ln for ln in lines)


# -- the corpus of malformed inputs: each gets one line and exit 2 -----------------------------

def _expect(path: Path) -> str:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# expect: "), path
    return first[len("# expect: "):].strip()


@pytest.mark.parametrize("path", sorted((MALFORMED / "platforms").glob("*.yaml")), ids=lambda p: p.name)
def test_malformed_platform_via_cli(hetsim, path):
    p = hetsim("simulate", "-p", str(path), "-w", "alexnet", "-m", "B4:1-11")
    assert_one_line_error(p, _expect(path))


@pytest.mark.parametrize("path", sorted((MALFORMED / "workloads").glob("*.yaml")), ids=lambda p: p.name)
def test_malformed_workload_via_cli(hetsim, path):
    p = hetsim("simulate", "-p", "hikey970", "-w", str(path), "-m", "B4:1-1")
    assert_one_line_error(p, _expect(path))


@pytest.mark.parametrize("path", sorted((MALFORMED / "mappings").glob("*.yaml")), ids=lambda p: p.name)
def test_malformed_mapping_file_via_cli(hetsim, path):
    p = hetsim("simulate", "-p", "hikey970", "-w", "resnet50", "-m", str(path))
    assert_one_line_error(p, _expect(path))


BAD_ARGS = [
    (["-m", "B4:1-30|s4:32-54"], "gap"),
    (["-m", "B4:1-30|s4:30-54"], "overlap"),
    (["-m", "B4:1-30|s4:31-50"], "has 54 layers"),
    (["-m", "B4:1-30|s4:31-60"], "runs past layer 60"),
    (["-m", "X4:1-54"], "unknown execution place 'X4'"),
    (["-m", "B5:1-54"], "cluster big has 4 cores"),
    (["-m", "B4:1-30|B2:31-54"], "stages use 6 cores of cluster big"),
    (["-m", "B4:30-1"], "ends before it starts"),
    (["-m", "B4 1-54"], "is not EP:first-last"),
    (["-m", "B4:1-54", "--frames", "0"], "--frames (frames) must be an integer in [1, 1000000000] frames (got 0)"),
    (["-m", "B4:1-54", "--buffer", "0"], "--buffer (buffer_frames) must be an integer in [1, 1000000] frames (got 0)"),
    (["-m", "B4:1-54", "--source", "periodic"], "needs a positive interval"),
    (["-m", "B4:1-54", "--dvfs", "turbo"], "no such preset"),
    (["-m", "B4:1-54", "--set", "clusters.huge.cores=2"], "no entry named 'huge'"),
    (["-m", "B4:1-54", "--set", "clusters.big.cores=0"], "clusters.0.cores"),
    (["-m", "B4:1-54", "--set", "nonsense"], "expected key.path=value"),
    (["-m", "B4:1-54", "--engine", "magic"], "magic"),
    (["-m", "B4:1-54", "--engine", "analytic", "--gantt", "x.png"], "need the des engine"),
    (["-m", "B4:1-54", "--cost-table", "/nonexistent.csv"], "no such file"),
]


@pytest.mark.parametrize("extra,fragment", BAD_ARGS, ids=[f for _, f in BAD_ARGS])
def test_bad_arguments_one_line(hetsim, extra, fragment, tmp_path):
    p = hetsim("simulate", "-p", "hikey970", "-w", "resnet50", *extra, cwd=tmp_path)
    assert_one_line_error(p, fragment)
    assert not list(tmp_path.iterdir())        # nothing half-written


def test_unknown_platform_and_workload_names(hetsim):
    assert_one_line_error(hetsim("simulate", "-p", "nope", "-w", "alexnet", "-m", "B4:1-11"),
                          "unknown platform 'nope'")
    assert_one_line_error(hetsim("simulate", "-p", "hikey970", "-w", "nope", "-m", "B4:1-11"), "nope")
    assert_one_line_error(hetsim("workloads", "show", "nope"), "nope")
    assert_one_line_error(hetsim("platforms", "show", "nope"), "unknown platform")
    assert_one_line_error(hetsim("simulate", "-p", "hikey970"), "Missing option")


def test_reproduce_argument_errors(hetsim, tmp_path, monkeypatch):
    import hetsim.experiment as ex
    from hetsim.plugins import Plugin

    add_plugins(monkeypatch, Plugin("fakepaper", experiments="hetsim.experiment"))
    monkeypatch.setitem(ex._REGISTRY, "fakepaper", {"fig1": ex.Experiment("fakepaper", "fig1", "a figure", print)})
    assert_one_line_error(hetsim("reproduce", "--out", str(tmp_path)), "say what to reproduce")
    assert_one_line_error(hetsim("reproduce", "nopaper", "--out", str(tmp_path)), "unknown paper 'nopaper'")
    assert_one_line_error(hetsim("reproduce", "fakepaper:nofig", "--out", str(tmp_path)),
                          "fakepaper has no experiment 'nofig'; it has fig1")
    assert not list(tmp_path.iterdir())


def test_readme_real_output_is_current(hetsim):
    """The README shows real output: re-run its command and compare the figures it quotes."""
    readme = (HERE.parent / "README.md").read_text()
    p = hetsim("simulate", "-p", "hikey970", "-w", "resnet50", "-m", "B4:1-35|s2:36-44|s2:45-54",
               "--frames", "50")
    assert p.returncode == 0, p.stderr
    for key in ("throughput", "latency", "makespan", "energy"):
        line = next(ln for ln in p.stdout.splitlines() if ln.startswith(key))
        assert line.strip() in readme, f"README's {key} line is stale; now: {line.strip()}"


def test_explore_command(hetsim, tmp_path):
    trials = tmp_path / "trials.csv"
    p = hetsim("explore", "-p", "rk3588", "-w", "resnet50-shisha", "-a", "HC", "--depth", "4",
               "--param", "patience=3", "--json", "--trials", str(trials))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["algorithm"] == "HC" and out["best_fps"] > 0 and out["trials"] >= 1
    assert trials.read_text().splitlines()[0].startswith("trial,")
    p = hetsim("explore", "-p", "jetson-tx2", "-w", "vgg16", "-a", "SA", "--cores", "4",
               "--dvfs", "governor1", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["best_fps"] > 0


def test_explore_errors(hetsim, tmp_path):
    assert_one_line_error(hetsim("explore", "-p", "rk3588", "-w", "resnet50-shisha", "-a", "GA"),
                          "unknown algorithm 'GA'")
    assert_one_line_error(hetsim("explore", "-p", "rk3588", "-w", "resnet50-shisha", "--param", "alpha"),
                          "expected key=value")
    assert_one_line_error(hetsim("explore", "-p", "hikey970", "-w", "resnet50", "-a", "ES", "--assignment", "cores",
                                 "--depth", "6"), "exceeds")
