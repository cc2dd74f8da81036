"""Seed 004 at the command line: NSGA-II from ``hetsim explore``, AutoDiCE files and genomes as
mappings of ``hetsim simulate``, and one line + exit 2 for the thesis's bad inputs (a genome out of
range, a mapping that leaves a layer unplaced, a device list that does not match the platform)."""

from __future__ import annotations

import json

import yaml
from helpers import assert_one_line_error

EXPLORE = ["explore", "-p", "xavier-nx-x8", "-w", "alexnet-onnx", "--param", "pop_size=16",
           "--param", "n_gen=2"]


def test_explore_nsga2_and_export_autodice(hetsim, tmp_path):
    out = tmp_path / "deploy"
    r = hetsim(*EXPLORE, "-a", "NSGA-II-adv", "--param", "p=2", "--eps", "cpu", "--json",
               "--export-autodice", str(out), "--trials", str(tmp_path / "t.csv"))
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["algorithm"] == "Advanced-2" and summary["best_latency_s"] > 0
    mapping = json.loads((out / "mapping.json").read_text())
    assert all(name.endswith("_arm012345") for name in mapping)
    trials = (tmp_path / "t.csv").read_text()
    assert "tune:cpu:latency" in trials and "deploy:latency" in trials
    # The exported files are a mapping hetsim simulates on the ncnn model with MPI transfers.
    r = hetsim("simulate", "-p", "xavier-nx-x8", "-w", "alexnet-onnx", "-m", str(out / "mapping.json"),
               "--cost-model", "ncnn", "--comm", "mpi", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["latency_s"]["mean"] > 0


def test_genome_file_is_a_mapping(hetsim, tmp_path):
    path = tmp_path / "g.yaml"
    path.write_text(yaml.safe_dump({"genome": {"chromosome": "advanced", "p": 2, "devices": "cpu",
                                               "genes": [1, 0, 0, 0, 0, 0, 0, 8] + [0, 8, 0, 0, 0, 0, 0, 0]}}))
    r = hetsim("simulate", "-p", "xavier-nx-x8", "-w", "alexnet-onnx", "-m", str(path), "--cost-model", "ncnn",
               "--comm", "mpi", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ep_busy_s"].keys() == {"nx01-cpu", "nx02-cpu", "nx08-cpu"}


def test_bad_genome_device_list_and_unplaced_layer(hetsim, tmp_path):
    genome = tmp_path / "bad.yaml"
    genome.write_text(yaml.safe_dump({"genome": {"chromosome": "advanced", "p": 2, "genes": [9] + [0] * 15}}))
    base = ["simulate", "-p", "xavier-nx-x8", "-w", "alexnet-onnx", "--cost-model", "ncnn"]
    assert_one_line_error(hetsim(*base, "-m", str(genome)), "genome.genes: gene 0 is 9, outside 0..8")
    devices = tmp_path / "devices.yaml"
    devices.write_text(yaml.safe_dump({"genome": {"chromosome": "naive", "devices": ["nx01-cpu", "nx09-cpu"],
                                                  "genes": [1] * 40}}))
    assert_one_line_error(hetsim(*base, "-m", str(devices)), "'nx09-cpu' is not a device of platform xavier-nx-x8")
    assert_one_line_error(hetsim(*EXPLORE, "-a", "NSGA-II", "--eps", "nx01-cpu,nx09-cpu"),
                          "'nx09-cpu' is not a device of platform xavier-nx-x8")
    unplaced = tmp_path / "mapping.json"
    unplaced.write_text(json.dumps({"nx01_arm012345": ["conv1_1", "conv1_2"]}))
    assert_one_line_error(hetsim(*base, "-m", str(unplaced)), "layer norm1_1 is not mapped to any device")
    assert_one_line_error(hetsim(*EXPLORE, "-a", "NSGA-II", "--param", "chromosome=smart"),
                          "chromosome='smart' is not allowed")
