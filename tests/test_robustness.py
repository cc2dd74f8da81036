"""Robustness (docs/robustness.md): the YAML loader's refusals, physical ranges in every schema and
on the command line, runaway work counted before it starts, atomic outputs with the umask's
permissions (under SIGKILL and SIGINT: the papers' reproductions killed,
hetsim_papers/tests/test_reproduce_bytes.py), byte-identical reruns, and the corpus of every bug
the fuzzing harness found (tests/malformed/cli.yaml, tests/malformed/files/)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import yaml
from helpers import assert_one_line_error, check_cli_corpus_entry

from hetsim.errors import HetsimError
from hetsim.options import RunOptions
from hetsim.platform import load_platform, platform_from_dict
from hetsim.validation import atomic_write, read_yaml

REPO = Path(__file__).resolve().parents[1]
MALFORMED = REPO / "tests" / "malformed"
HIKEY = (REPO / "platforms" / "hikey970.yaml").read_text()


# -- the YAML loader ---------------------------------------------------------------------------------
def test_a_duplicate_key_is_refused_naming_the_key_and_both_lines(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("schema: 2\nname: a\nname: b\n")
    with pytest.raises(HetsimError, match=r"p.yaml: refused YAML at line 3, column 1: duplicate key "
                                          r"'name' \(first at line 2\)"):
        read_yaml(f)


def test_an_alias_bomb_is_refused_before_it_expands(tmp_path):
    # 10^9 strings once expanded; composing it touches ~100 nodes.
    lines = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    f = tmp_path / "bomb.yaml"
    f.write_text("\n".join(lines) + "\n")
    t0 = time.perf_counter()
    with pytest.raises(HetsimError) as e:
        read_yaml(f)
    assert time.perf_counter() - t0 < 1.0
    msg = str(e.value)
    assert "aliases expand the document past 5,000,000 nodes" in msg and "\n" not in msg
    assert "line 7" in msg      # where the expansion crossed the limit
    assert len(msg) < 300


def test_small_aliases_are_yaml_and_load(tmp_path):
    data = yaml.safe_load(HIKEY)
    text = HIKEY.replace("    dvfs:\n      - {name: max, freq_MHz: 2400",
                         "    dvfs: &levels\n      - {name: max, freq_MHz: 2400", 1)
    assert text != HIKEY
    f = tmp_path / "aliased.yaml"
    f.write_text(text)
    assert load_platform(f).core_type("cortex-a73").level("max").freq_MHz == 2400
    assert data["name"] == "hikey970"


def test_a_recursive_alias_and_deep_nesting_are_refused(tmp_path):
    f = tmp_path / "r.yaml"
    f.write_text("a: &x [1, *x]\n")
    with pytest.raises(HetsimError, match="alias \\*x refers to a collection it is inside of"):
        read_yaml(f)
    f.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    with pytest.raises(HetsimError, match="nested deeper than 100 levels"):
        read_yaml(f)


@pytest.mark.parametrize("data,fragment", [
    (b"\x08\x01\x12\x04onnx\x00\x00", "a binary file (a NUL byte at offset 8) (it looks like an ONNX model: "
                                      "import it first (hetsim workloads import MODEL.onnx --out W.yaml))"),
    ("schema: 2\ndescription: caf\xe9\n".encode("latin-1"), "not UTF-8 text (byte 0xe9 at offset 26)"),
    (b"", "the file is empty"),
    (b"# only a comment\n", "the file is empty"),
    (b"a: \x01\n", "control character"),
    (b"a: " + b"9" * 5000 + b"\n", "a number of 5000 digits (at most 4300)"),
])
def test_files_that_are_not_yaml_text_are_one_line(tmp_path, data, fragment):
    f = tmp_path / "model.onnx"
    f.write_bytes(data)
    with pytest.raises(HetsimError) as e:
        read_yaml(f)
    assert fragment in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-32"])
def test_unicode_with_a_byte_order_mark_is_read(tmp_path, encoding):
    f = tmp_path / "p.yaml"
    f.write_bytes(HIKEY.encode(encoding))
    assert load_platform(f).name == "hikey970"


def test_yaml_1_2_floats_are_numbers_and_quoted_numbers_are_strings(tmp_path):
    f = tmp_path / "n.yaml"
    f.write_text("a: 1e6\nb: 2E-3\nc: '1e6'\nd: 1_000\ne: 12\n")
    assert read_yaml(f) == {"a": 1e6, "b": 2e-3, "c": "1e6", "d": 1000, "e": 12}


# -- physical ranges and strict types --------------------------------------------------------------------
def _platform_with(path: list, value) -> dict:
    data = yaml.safe_load(HIKEY)
    node = data
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return data


@pytest.mark.parametrize("path,value,fragment", [
    (["memories", 0, "bandwidth_GBps"], float("inf"),
     "memories.0.bandwidth_GBps: must be a finite number in [1e-06, 1e+06] GB/s (got inf)"),
    (["memories", 0, "bandwidth_GBps"], True,
     "memories.0.bandwidth_GBps: must be a number in [1e-06, 1e+06] GB/s, not a boolean (got True)"),
    (["memories", 0, "bandwidth_GBps"], "30",
     "memories.0.bandwidth_GBps: must be a number in [1e-06, 1e+06] GB/s, not a string"),
    (["core_types", 0, "dvfs", 0, "freq_MHz"], 1e308,
     "core_types.0.dvfs.0.freq_MHz: must be a number in [0.001, 100000] MHz (got 1e+308)"),
    (["core_types", 0, "dvfs", 0, "freq_MHz"], "1e3", "not a string"),
    (["core_types", 0, "roofline", "gemm_efficiency"], 0.0,
     "core_types.0.roofline.gemm_efficiency: must be a number in [1e-06, 1] (got 0.0)"),
    (["core_types", 0, "roofline", "parallel_efficiency"], [1.0, float("nan")],
     "core_types.0.roofline.parallel_efficiency.1: must be a finite number in [1e-06, 1]"),
    (["clusters", 0, "cores"], 2.5, "clusters.0.cores: must be an integer in [1, 2147483647] (got 2.5)"),
    (["clusters", 0, "cores"], 2 ** 63, "clusters.0.cores: must be an integer in [1, 2147483647]"),
    (["links", 0, "latency_ns"], -1, "links.0.latency_ns: must be a number in [0, 1e+12] ns (got -1)"),
    (["power", "static_W"], [[[[1.0]]]], "power.static_W: must be a number in [0, 100000] W"),
    (["schema"], True, "schema: must be the integer 2"),
])
def test_a_non_physical_platform_value_names_field_value_and_range(path, value, fragment):
    with pytest.raises(HetsimError) as e:
        platform_from_dict(_platform_with(path, value), "p.yaml")
    assert fragment in str(e.value), str(e.value)


def test_the_json_schema_states_the_ranges():
    from hetsim.platform.loader import json_schema

    schema = json.loads(json_schema())
    bw = schema["$defs"]["Memory"]["properties"]["bandwidth_GBps"]
    assert (bw["minimum"], bw["maximum"]) == (1e-6, 1e6)


@pytest.mark.parametrize("field,value,fragment", [
    ("noise_sigma", 1e6, "--noise (noise_sigma) must be a number in [0, 5] (got 1000000.0)"),
    ("interval_s", float("inf"), "--interval (interval_s) must be a finite number in [1e-09, 1e+09] s"),
    ("frames", 10 ** 10, "--frames (frames) must be an integer in [1, 1000000000] frames"),
    ("seed", -1, "--seed (seed) must be an integer in [0, 9223372036854775807] (got -1)"),
    ("buffer_frames", True, "not a boolean"),
])
def test_run_options_are_range_checked(field, value, fragment):
    with pytest.raises(HetsimError) as e:
        RunOptions.make(**{field: value})
    assert fragment in str(e.value)


# -- runaway work ------------------------------------------------------------------------------------
def test_a_runaway_des_run_is_refused_with_its_estimate_and_force_runs_it(hetsim, monkeypatch):
    p = hetsim("simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-5|s4:6-11", "--frames", "1000000000")
    assert_one_line_error(p, "--frames 1,000,000,000: the run would hold ~224 GiB of memory "
                             "(SimPy pipeline: 2 stages x 1,000,000,000 frames x ~7.0 events)")
    p = hetsim("simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-5|s4:6-11", "--frames", "3000000")
    assert_one_line_error(p, "the run is estimated at 4.26e+07 events (SimPy pipeline")
    from hetsim.sim import budget

    monkeypatch.setattr(budget, "MAX_EVENTS", 100)
    args = ["simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-5|s4:6-11", "--frames", "20", "--json"]
    assert_one_line_error(hetsim(*args), "past the limit of 100")
    p = hetsim(*args, "--force")
    assert p.returncode == 0 and json.loads(p.stdout)["frames"] == 20


def test_the_max_plus_path_is_counted_cheaper_than_simpy():
    from hetsim.cost import RooflineCostModel
    from hetsim.mapping import load_mapping
    from hetsim.sim.budget import estimate_pipeline
    from hetsim.workload import load_workload

    p, w = load_platform("hikey970"), load_workload("alexnet")
    pipe = load_mapping("B4:1-5|s4:6-11", p, w)
    cost = RooflineCostModel(p)
    simpy = estimate_pipeline(p, w, pipe, cost, RunOptions(frames=10 ** 6).resolve(pipe))
    maxplus = estimate_pipeline(p, w, pipe, cost, RunOptions(frames=10 ** 6, contention=False).resolve(pipe))
    assert (simpy.path, maxplus.path) == ("SimPy pipeline", "max-plus recurrence")
    assert maxplus.events * 5 < simpy.events


@pytest.mark.parametrize("contention", [True, False])
def test_progress_is_reported_without_changing_the_run(contention):
    from hetsim.cost import RooflineCostModel
    from hetsim.evaluation import simulate
    from hetsim.mapping import load_mapping
    from hetsim.sim.pipeline import run_pipeline
    from hetsim.workload import load_workload

    p, w = load_platform("hikey970"), load_workload("alexnet")
    pipe = load_mapping("B4:1-5|s4:6-11", p, w)
    opts = RunOptions(frames=1000, contention=contention, noise_sigma=0.1, seed=4).resolve(pipe)
    seen: list[float] = []
    cost = RooflineCostModel(p)
    a = run_pipeline(p, w, pipe, cost, opts, progress=seen.append)
    b = run_pipeline(p, w, pipe, cost, opts)
    assert (a.end == b.end).all() and (a.start == b.start).all()
    assert seen and seen == sorted(seen) and seen[-1] == 1000
    assert simulate(p, w, pipe, opts, progress=True).metrics.frames == 1000


# -- atomic writes -------------------------------------------------------------------------------------
@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_atomic_write_gives_the_permissions_the_umask_gives(tmp_path, umask):
    old = os.umask(umask)
    try:
        with atomic_write(tmp_path / "new" / "dir" / "r.csv") as f:
            f.write("a,b\n1,2\n")
        with open(tmp_path / "plain.csv", "w") as f:
            f.write("x")
    finally:
        os.umask(old)
    mode = (tmp_path / "new" / "dir" / "r.csv").stat().st_mode & 0o777
    assert mode == 0o666 & ~umask == (tmp_path / "plain.csv").stat().st_mode & 0o777


def test_atomic_write_keeps_the_old_file_on_error_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "r.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_write(target) as f:
        f.write("half")
        raise RuntimeError("stop")
    assert target.read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("path,fragment", [
    ("", "an output file name is empty"), (".", "is a directory"),
])
def test_atomic_write_refuses_paths_no_file_can_have(tmp_path, path, fragment):
    os.chdir(tmp_path)
    try:
        with pytest.raises(HetsimError, match=fragment), atomic_write(path) as f:
            f.write("x")
    finally:
        os.chdir(REPO)


def test_result_files_of_the_cli_get_the_umask_permissions(hetsim, tmp_path):
    old = os.umask(0o022)
    try:
        p = hetsim("simulate", "-p", "hikey970", "-w", "alexnet", "-m", "B4:1-5|s4:6-11", "--frames", "3",
                   "--trace", str(tmp_path / "t.json"), "--gantt", str(tmp_path / "g.png"))
        q = hetsim("explore", "-p", "hikey970", "-w", "alexnet", "-a", "RW", "--eps", "B4,s4",
                   "--max-trials", "3", "--trials", str(tmp_path / "missing" / "dir" / "t.csv"))
    finally:
        os.umask(old)
    assert p.returncode == 0 and q.returncode == 0, p.stderr + q.stderr
    for f in ("t.json", "g.png", "missing/dir/t.csv"):
        assert (tmp_path / f).stat().st_mode & 0o777 == 0o644, f


# -- byte-identical reruns (reproducing papers: hetsim_papers/tests/test_reproduce_bytes.py) -------------
def test_simulate_with_noise_and_seed_twice_gives_identical_bytes(hetsim, tmp_path):
    outs = []
    for d in ("a", "b"):
        folder = tmp_path / d
        p = hetsim("simulate", "-p", "hikey970", "-w", "squeezenet", "-m", "B4:1-16|s4:17-26", "--frames", "30",
                   "--noise", "0.2", "--seed", "11", "--source", "poisson", "--interval", "0.05", "--json",
                   "--trace", str(folder / "trace.json"), "--gantt", str(folder / "gantt.png"))
        assert p.returncode == 0, p.stderr
        outs.append((p.stdout, (folder / "trace.json").read_bytes(), (folder / "gantt.png").read_bytes()))
    assert outs[0] == outs[1]


# -- the corpus of what the fuzzing harness found ---------------------------------------------------------
_CLI_CORPUS = yaml.safe_load((MALFORMED / "cli.yaml").read_text())


@pytest.mark.parametrize("entry", _CLI_CORPUS, ids=[e["id"] for e in _CLI_CORPUS])
def test_malformed_command_line(hetsim, tmp_path, entry):
    check_cli_corpus_entry(hetsim, tmp_path, entry)


_FILES = yaml.safe_load((MALFORMED / "files" / "EXPECT.yaml").read_text())


@pytest.mark.parametrize("name", sorted(_FILES))
def test_malformed_file_bytes(hetsim, name):
    entry = _FILES[name]
    path = str(MALFORMED / "files" / name)
    args = {"platform": ["simulate", "-p", path, "-w", "alexnet", "-m", "B4:1-11"],
            "workload": ["simulate", "-p", "hikey970", "-w", path, "-m", "B4:1-11"],
            "mapping": ["simulate", "-p", "hikey970", "-w", "resnet50", "-m", path]}[entry["as"]]
    assert_one_line_error(hetsim(*args), entry["expect"])
