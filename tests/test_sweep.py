"""Sweeps: SPEC validation (one line for a typo), counting and expansion, the local pool and a real
Dask LocalCluster giving byte-identical tables, a SIGKILLed sweep resumed to every cell exactly once,
bad cells recorded without stopping the sweep, and the plots."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from hetsim.errors import HetsimError
from hetsim.sweep import (
    build_table,
    count_cells,
    expand,
    load_spec,
    read_journal,
    read_results,
    run_sweep,
    spec_from_dict,
)
from hetsim.sweep.spec import Range

ROOT = Path(__file__).resolve().parent.parent

SMALL = {
    "schema": 1, "name": "small",
    "base": {"platform": "hikey970", "workload": "alexnet", "engine": "des", "frames": 40,
             "noise_sigma": 0.05},
    "axes": {"mapping": ["B4:1-11", "B2:1-5|s4:6-11", "B4:1-3|s4:4-12"],   # the last one is bad
             "set": {"memories.dram.bandwidth_GBps": [10, 30]},
             "seed": [0, 1]},
}


def write_spec(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


# -- the SPEC ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("patch,fragment", [
    (lambda d: d["base"].update(platfrom=d["base"].pop("platform")),
     "base.platfrom: unknown key 'platfrom' (did you mean 'platform'?)"),
    (lambda d: d["axes"].update(seeds=d["axes"].pop("seed")), "axes.seeds: unknown key 'seeds'"),
    (lambda d: d["axes"].update(run={"bufer_frames": [1, 2]}), "unknown 'bufer_frames'"),
    (lambda d: d.update(schema=2), "schema"),
    (lambda d: d["axes"].update(platform=["hikey971"]), "unknown platform 'hikey971'"),
    (lambda d: d["base"].update(source="periodic"), "base: --source (source): a periodic source needs"),
    (lambda d: d["axes"].update(seed={"range": [9, 0, 1]}), "axes.seed: range [9.0, 0.0, 1.0]: the step"),
])
def test_a_spec_with_a_typo_is_one_line_and_exit_2(tmp_path, hetsim, patch, fragment):
    data = json.loads(json.dumps(SMALL))
    patch(data)
    spec = write_spec(tmp_path / "spec.yaml", data)
    p = hetsim("sweep", str(spec), "--out", str(tmp_path / "out"))
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hetsim: error: "), p.stderr
    assert fragment in lines[0], lines[0]
    assert not (tmp_path / "out").exists()          # nothing written


def test_counting_zip_ranges_and_cells():
    spec = spec_from_dict(SMALL)
    assert count_cells(spec) == 3 * 2 * 2
    cells = expand(spec)
    assert [c.index for c in cells] == list(range(12))
    assert len({c.id for c in cells}) == 12                      # ids tell cells apart
    assert [c.id for c in expand(spec)] == [c.id for c in cells]  # and are stable
    assert [c.config["seed"] for c in cells[:4]] == [0, 1, 0, 1]  # seeds vary fastest, travel along
    assert cells[0].axes == {"memories.dram.bandwidth_GBps": 10, "mapping": "B4:1-11", "seed": 0}
    assert cells[0].config["set"] == [["memories.dram.bandwidth_GBps", 10]]

    zipped = json.loads(json.dumps(SMALL))
    zipped["axes"]["run"] = {"frames": [20, 40, 80]}
    zipped["zip"] = [["mapping", "frames"]]
    z = spec_from_dict(zipped)
    assert count_cells(z) == 3 * 2 * 2
    assert {(c.axes["mapping"], c.axes["frames"]) for c in expand(z)} == {
        ("B4:1-11", 20), ("B2:1-5|s4:6-11", 40), ("B4:1-3|s4:4-12", 80)}
    zipped["axes"]["run"] = {"frames": [20, 40]}
    with pytest.raises(HetsimError, match="different lengths"):
        count_cells(spec_from_dict(zipped))

    assert Range(range=(15, 60, 15)).values() == [15, 30, 45, 60]          # stop included
    assert Range(range=(0.1, 0.3, 0.1)).values() == [0.1, 0.2, 0.3]        # no 0.30000000000000004
    assert Range(linspace=(0, 1, 5)).values() == [0, 0.25, 0.5, 0.75, 1]
    assert Range(geomspace=(1, 100, 3)).values() == [1, 10, 100]

    big = json.loads(json.dumps(SMALL))
    big["axes"]["seed"] = {"range": [0, 99, 1]}
    big["max_cells"] = 500
    with pytest.raises(HetsimError, match="600 cells .* exceeds the limit of 500"):
        run_sweep(spec_from_dict(big))


def test_bad_cells_are_recorded_and_the_sweep_goes_on(hetsim):
    r = run_sweep(spec_from_dict(SMALL), workers=1)
    t = r.table
    assert len(t) == 12 and r.failed == 4
    bad = t[t["mapping"] == "B4:1-3|s4:4-12"]
    assert set(bad["status"]) == {"error"} and bad["throughput_fps"].isna().all()
    assert r.errors == {"mapping: the last stage runs past layer 12 but alexnet has 11 layers": 4}
    ok = t[t["status"] == "ok"]
    assert (ok["throughput_fps"] > 0).all()
    # Seeded noise: the two seeds differ, and each is what `hetsim simulate --seed` gives.
    first = ok[(ok["mapping"] == "B4:1-11") & (ok["memories.dram.bandwidth_GBps"] == 10)]
    assert first["throughput_fps"].nunique() == 2
    p = hetsim("simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-11", "--frames", "40",
               "--noise", "0.05", "--seed", "1", "--set", "memories.dram.bandwidth_GBps=10", "--json")
    assert json.loads(p.stdout)["throughput_fps"] == first[first["seed"] == 1]["throughput_fps"].item()


# -- backends ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_local_pool_and_dask_local_cluster_give_byte_identical_tables(tmp_path):
    from distributed import LocalCluster

    spec = spec_from_dict(SMALL)
    run_sweep(spec, tmp_path / "one", workers=1, plots=False)
    run_sweep(spec, tmp_path / "pool", workers=2, batch=2, plots=False)
    env = dict(os.environ)   # Dask's nanny sets thread and malloc variables in this process
    try:
        with LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster:
            r = run_sweep(spec, tmp_path / "dask", scheduler=cluster.scheduler_address, plots=False)
    finally:
        os.environ.clear()
        os.environ.update(env)
    assert r.ran == 12 and r.failed == 4
    one = (tmp_path / "one" / "results.csv").read_bytes()
    assert (tmp_path / "pool" / "results.csv").read_bytes() == one
    assert (tmp_path / "dask" / "results.csv").read_bytes() == one


def test_unreachable_scheduler_is_one_line(monkeypatch):
    monkeypatch.setattr("hetsim.sweep.engine.CONNECT_TIMEOUT", "1s")
    with pytest.raises(HetsimError, match="cannot reach a Dask scheduler"):
        run_sweep(spec_from_dict(SMALL), scheduler="tcp://127.0.0.1:9")


# -- kill and resume --------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_killed_sweep_resumes_to_every_cell_exactly_once(tmp_path):
    # 60 cells of ~20 ms (the DES with DRAM contention: no fast path), one at a time.
    data = {"schema": 1, "name": "killme",
            "base": {"platform": "hikey970", "workload": "alexnet", "mapping": "B2:1-5|B2:6-11",
                     "engine": "des", "frames": 300, "noise_sigma": 0.02},
            "axes": {"set": {"memories.dram.bandwidth_GBps": {"linspace": [5, 30, 6]}},
                     "seed": {"range": [0, 9, 1]}}}
    spec_file = write_spec(tmp_path / "killme.yaml", data)
    out = tmp_path / "out"
    journal = out / "cells.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hetsim", "sweep", str(spec_file), "--out", str(out),
                             "--workers", "1", "--batch", "1", "--no-plots"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if journal.is_file() and journal.read_bytes().count(b"\n") >= 10:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = journal.read_bytes().count(b"\n")
    assert 10 <= before < 60, before                  # killed midway
    with open(journal, "ab") as f:                     # and as if a write had been cut short
        f.write(b'{"id": "0123456789abcdef", "cell": 3')

    spec = load_spec(spec_file)
    r = run_sweep(spec, out, resume=True, workers=1, plots=False)
    assert r.skipped == before and r.ran == 60 - before
    lines = journal.read_bytes().splitlines()
    ids = [json.loads(line)["id"] for line in lines]
    assert len(ids) == 60 and len(set(ids)) == 60
    assert set(ids) == {c.id for c in expand(spec)}
    # The table equals an uninterrupted run's, byte for byte.
    clean = run_sweep(spec, workers=1).table.to_csv(index=False)
    assert (out / "results.csv").read_text() == clean
    assert read_results(out)["cell"].tolist() == list(range(60))


def test_resume_runs_only_new_cells_and_refuses_to_overwrite(tmp_path):
    spec = spec_from_dict(SMALL)
    run_sweep(spec, tmp_path, workers=1, plots=False)
    with pytest.raises(HetsimError, match="already holds a sweep"):
        run_sweep(spec, tmp_path, workers=1)
    more = json.loads(json.dumps(SMALL))
    more["axes"]["seed"] = [0, 1, 2]
    r = run_sweep(spec_from_dict(more), tmp_path, resume=True, workers=1, plots=False)
    assert (r.skipped, r.ran) == (12, 6)
    assert len(read_journal(tmp_path / "cells.jsonl")) == 18
    assert len(build_table(expand(spec_from_dict(more)), read_journal(tmp_path / "cells.jsonl"))) == 18


# -- plots and the command line ------------------------------------------------------------------------
def test_sweep_and_plot_commands(tmp_path, hetsim):
    spec = write_spec(tmp_path / "s.yaml", SMALL)
    p = hetsim("sweep", str(spec), "--out", str(tmp_path / "out"), "--workers", "1")
    assert p.returncode == 0, p.stderr
    assert "12 cells (2 memories.dram.bandwidth_GBps x 3 mapping x 2 seed)" in " ".join(p.stdout.split())
    assert "8 cells ok, 4 failed" in p.stdout
    assert (tmp_path / "out" / "plots" / "throughput_fps.png").stat().st_size > 1000
    p = hetsim("plot", str(tmp_path / "out"), "--x", "memories.dram.bandwidth_GBps", "--y",
               "latency_p99_s", "--hue", "mapping")
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "out" / "plots" / "latency_p99_s-vs-memories.dram.bandwidth_GBps.png").is_file()
    p = hetsim("plot", str(tmp_path / "out"), "--x", "memories.dram.bandwidth_GBps", "--y", "fps")
    assert p.returncode == 2 and "--y 'fps' is not a metric of this sweep" in p.stderr
    p = hetsim("sweep", str(spec), "--dry-run")
    assert p.returncode == 0 and "12 cells" in p.stdout
    p = hetsim("sweep", "--schema")
    schema = json.loads(p.stdout)
    assert schema["title"] == "hetsim sweep SPEC" and "base" in schema["properties"]


def test_shipped_whatif_spec_runs(tmp_path):
    spec = load_spec("whatif-resnet50-hikey970")
    r = run_sweep(spec, workers=1)
    assert r.failed == 0 and len(r.table) == count_cells(spec)
    # Clocking the little cluster down slows the pipeline whose bottleneck is on it (s2:45-54).
    t = r.table
    by_level = t.groupby("clusters.little.dvfs")["throughput_fps"].mean()
    assert by_level["low"] < by_level["mid"] < by_level["max"]
