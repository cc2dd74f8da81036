"""Issue 29: outputs that cannot damage the system, inputs from other tools that cannot poison
results, resources that cannot run away. The one-line refusals are in tests/malformed/ (cli.yaml,
profiles/, onnx/, json/, platforms/37-38, sweeps/); here what is not a refusal: what a refusal
leaves behind, what loads, what a kill leaves running, what is the same on every run."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers import assert_one_line_error, subprocess_env

from hetsim.errors import HetsimError
from hetsim.validation import atomic_write, check_name, load_yaml, read_input, read_json

REPO = Path(__file__).resolve().parents[1]
HIKEY = ["-p", "hikey970", "-w", "alexnet", "-m", "B4:1-11", "--frames", "2"]


# -- outputs ------------------------------------------------------------------------------------------
def test_an_output_through_a_symlink_replaces_the_file_it_names_and_keeps_the_link(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    with atomic_write(link) as f:
        f.write("new")
    assert link.is_symlink() and real.read_text() == "new"


def test_an_output_named_with_250_bytes_is_written(tmp_path):
    """Its temporary name (.<name>.<random>.tmp) used to pass NAME_MAX once the work was done."""
    path = tmp_path / ("t" * 245 + ".json")
    with atomic_write(path) as f:
        f.write("{}")
    assert path.read_text() == "{}" and [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_symlink_to_a_fifo_is_refused_and_left_as_it_was(hetsim, tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "t.json").symlink_to(tmp_path / "fifo")
    assert_one_line_error(hetsim("simulate", *HIKEY, "--trace", str(tmp_path / "t.json")),
                          "is a FIFO (named pipe), not a regular file")
    assert (tmp_path / "t.json").is_symlink() and stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


@pytest.mark.parametrize("name,ok", [("host", True), ("cpu.v2+x", True), ("résumé", True), ("../x", False),
                                     ("/abs", False), ("a/b", False), ("..", False), (".", False),
                                     (".hidden", False), ("", False), ("a\tb", False), ("x" * 201, False)])
def test_check_name(name, ok):
    if ok:
        assert check_name(name, "--name") == name
    else:
        with pytest.raises(HetsimError, match="--name"):
            check_name(name, "--name")


def test_a_platform_name_is_strict():
    with pytest.raises(HetsimError, match="starts with a letter"):
        check_name("résumé", "--name", strict=True)


def test_stdout_closed_is_one_line_and_exit_2(tmp_path):
    """``hetsim ... >&-`` printed nothing and said 0; a file opened later could have taken fd 1."""
    p = subprocess.run(f"{sys.executable} -m hetsim simulate {' '.join(HIKEY)} --json >&-", shell=True, cwd=tmp_path,
                       env=subprocess_env(), text=True, stderr=subprocess.PIPE, timeout=300)
    assert p.returncode == 2 and p.stderr.strip() == ("hetsim: error: standard output is closed; hetsim prints "
                                                      "its results there (redirect it to a file or to /dev/null instead)")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_full_stdout_is_one_line_and_exit_2(tmp_path):
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "hetsim", "simulate", *HIKEY, "--json"], cwd=tmp_path,
                           env=subprocess_env(), text=True, stdout=full, stderr=subprocess.PIPE, timeout=300)
    assert p.returncode == 2
    assert p.stderr.strip() == "hetsim: error: cannot write to standard output (No space left on device)"


# -- inputs -------------------------------------------------------------------------------------------
def test_the_reader_counts_bytes_instead_of_trusting_st_size(tmp_path):
    """/proc files say 0 bytes; the limit is counted while reading."""
    assert read_input("/proc/self/status", 1 << 20)
    with pytest.raises(HetsimError, match="larger than the 0 MiB"):
        read_input("/proc/self/status", 8)


def test_read_json_refuses_what_json_is_not(tmp_path):
    for text, fragment in (('{"a": NaN}', "NaN is no JSON number"), ('{"a": 1e400}', "overflows a float64"),
                           ('{"a": 1, "a": 2}', "duplicate key 'a'"), ("[" * 5000 + "]" * 5000, "nested too deeply")):
        (tmp_path / "f.json").write_text(text)
        with pytest.raises(HetsimError, match="f.json") as e:
            read_json(tmp_path / "f.json")
        assert fragment in str(e.value)


def test_the_fast_yaml_reader_gives_the_full_readers_values_and_messages():
    """Plain documents are built from libyaml's events; anything else goes to hetsim's loader. On
    every file hetsim ships or tests with, the values (and the one-line errors) are the same."""
    import hetsim.validation as V

    files = [p for p in REPO.rglob("*.yaml") if ".venv" not in p.parts] + sorted((REPO / "tests" / "malformed" /
                                                                                  "files").iterdir())
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, IsADirectoryError):
            continue
        results = []
        for fast in (True, False):
            saved = V._load_fast
            if not fast:
                V._load_fast = lambda t: V._FALLBACK   # type: ignore[assignment]
            try:
                results.append(repr(load_yaml(text, "src")))
            except HetsimError as e:
                results.append(str(e))
            finally:
                V._load_fast = saved
        assert results[0] == results[1], path


def test_yaml_1_2_floats_timestamps_and_quoted_numbers_read_as_before():
    text = "a: 1e6\nb: '1e6'\nc: 2001-12-14\nd: 0x10\ne: yes\nf: .inf\ng: ~\nh: 1_000\n"
    import hetsim.validation as V

    slow = V._Loader(text).get_single_data()
    assert V._load_fast(text) == slow and slow["a"] == 1e6 and slow["b"] == "1e6" and slow["d"] == 16


def test_an_onnx_model_whose_weights_sit_beside_it_profiles_from_anywhere(tmp_path, monkeypatch):
    """ONNX Runtime got the serialized model: its external weights were looked up in the working
    directory (and a same-named file there was read instead)."""
    import onnx

    from hetsim.cost.ort_profile import run_ort_profiles
    from hetsim.workload.onnx_graph import OnnxGraph

    g = OnnxGraph("ext", weights="random", seed=1)
    x = g.input("x", (1, 4, 8, 8))
    model = g.model(g.relu(g.conv(x, 8, 3, pad=1)))
    (tmp_path / "m").mkdir()
    onnx.save(model, tmp_path / "m" / "ext.onnx", save_as_external_data=True, location="w.bin", size_threshold=0)
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "w.bin").write_bytes(b"\0" * 4)   # a decoy that would fail to load
    monkeypatch.chdir(tmp_path / "cwd")
    paths = run_ort_profiles(tmp_path / "m" / "ext.onnx", [1], tmp_path / "out", runs=1, warmup=0)
    assert paths[1].is_file()


def test_workloads_export_with_external_weights_checks_without_reading_them(hetsim, tmp_path):
    """The checker opened the external weights' file in the working directory: every export failed."""
    (tmp_path / "squeezenet.weights").write_bytes(b"\0")
    run = hetsim("workloads", "export", "squeezenet", "--out", str(tmp_path / "s.onnx"), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert hetsim("workloads", "import", str(tmp_path / "s.onnx"), "--out", str(tmp_path / "w")).returncode == 0


# -- loading counted ----------------------------------------------------------------------------------
def test_loading_past_the_limit_is_refused_before_the_work_and_forced_it_loads(hetsim, tmp_path, monkeypatch):
    from hetsim import loading

    lines = ["schema: 1", "name: big", "input: {h: 4, w: 4, c: 2}", "layer_kinds: [conv]", "ops:",
             "  - {name: c0, kind: conv, kernel: 1, out_c: 2}"] + [f"  - {{name: r{i}, kind: relu}}" for i in range(999)]
    (tmp_path / "big.yaml").write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(loading, "MAX_LOAD_S", 0.01)
    argv = ["simulate", "-p", "hikey970", "-w", str(tmp_path / "big.yaml"), "-m", "B4:1-1", "--frames", "1"]
    assert_one_line_error(hetsim(*argv), "big.yaml: 1,000 ops would take ~")
    assert hetsim(*argv, "--force").returncode == 0
    assert not loading._FORCE.get()   # the command's --force ended with it


def test_a_forced_load_is_allowed_in_python_for_a_block():
    from hetsim import loading

    with pytest.raises(HetsimError, match="2,000,000 ops would take"):
        loading.check_load("w.yaml", 2_000_000, "ops")
    with loading.forced():
        loading.check_load("w.yaml", 2_000_000, "ops")


# -- sweeps -------------------------------------------------------------------------------------------
SPEC = {"schema": 1, "base": {"platform": "hikey970", "workload": "alexnet", "mapping": "B4:1-11",
                              "engine": "analytic", "frames": 2}, "axes": {"seed": [0, 1, 2]}}


def test_a_second_sweep_on_one_folder_is_refused_while_the_first_runs(tmp_path):
    from hetsim.sweep import run_sweep, spec_from_dict
    from hetsim.sweep.engine import _SweepLock

    spec = spec_from_dict(SPEC)
    with _SweepLock(tmp_path / "out"):   # the first sweep
        for resume in (False, True):
            with pytest.raises(HetsimError, match="another sweep is running there"):
                run_sweep(spec, tmp_path / "out", workers=1, resume=resume, plots=False)
    assert not (tmp_path / "out" / "cells.jsonl").exists()
    assert len(run_sweep(spec, tmp_path / "out", workers=1, plots=False).table) == 3   # then it runs


def test_cells_are_streamed_the_same_as_expanded(monkeypatch):
    from hetsim.sweep import engine, spec_from_dict
    from hetsim.sweep.spec import expand, iter_cells

    spec = spec_from_dict(dict(SPEC, axes={"seed": {"range": [0, 9, 1]}, "run": {"frames": [1, 2]}}))
    assert [c.id for c in iter_cells(spec)] == [c.id for c in expand(spec)]
    monkeypatch.setattr(engine, "KEEP_CELLS", 0)   # past it, made on demand
    cells = engine.CellList(spec, 20)
    assert [c.id for c in cells] == [c.id for c in expand(spec)] and cells[-1].index == 19
    assert cells[3].id == expand(spec)[3].id and [c.index for c in cells[2:4]] == [2, 3]


def test_a_sweep_whose_results_would_not_fit_is_refused_unless_forced():
    from hetsim.sweep import spec_from_dict
    from hetsim.sweep.engine import check_memory

    spec = spec_from_dict(dict(SPEC, max_cells=10 ** 9))
    with pytest.raises(HetsimError, match="would hold ~"):
        check_memory(spec, 10 ** 7)
    check_memory(spec, 10 ** 7, force=True)


@pytest.mark.parametrize("gen", [{"geomspace": [1e-300, 1e300, 3]}, {"linspace": [-1.7e308, 1.7e308, 3]},
                                 {"geomspace": [-1e-300, -1e300, 2]}, {"range": [-1e308, 1e308, 1e307]}])
def test_axis_generators_whose_ends_overflow_give_finite_values(gen):
    import math

    from hetsim.sweep.spec import Range

    values = Range.model_validate(gen).values()
    assert all(math.isfinite(v) for v in values) and values[0] == next(iter(gen.values()))[0]


def test_a_seed_axis_of_non_integers_is_refused():
    from hetsim.sweep import spec_from_dict
    from hetsim.sweep.spec import count_cells

    with pytest.raises(HetsimError, match="axis seed: 1e-320 is not a seed"):
        count_cells(spec_from_dict(dict(SPEC, axes={"seed": {"linspace": [0, 1e-320, 2]}})))


@pytest.mark.slow
def test_pool_workers_die_with_a_killed_sweep(tmp_path):
    """kill -9 of the sweep alone left its workers alive, holding its stdout open forever."""
    spec = dict(SPEC, base=dict(SPEC["base"], engine="des", frames=200), axes={"seed": {"range": [0, 3999, 1]}})
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(spec))
    p = subprocess.Popen([sys.executable, "-m", "hetsim", "sweep", str(tmp_path / "s.yaml"), "--out",
                          str(tmp_path / "out"), "-j", "2"], env=subprocess_env(), stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    deadline = time.time() + 120
    while not (tmp_path / "out" / "cells.jsonl").exists() and time.time() < deadline:
        time.sleep(0.2)
    children = [int(x) for x in subprocess.run(["pgrep", "-P", str(p.pid)], capture_output=True,
                                               text=True).stdout.split()]
    assert children, "no pool workers"
    os.kill(p.pid, signal.SIGKILL)
    assert p.stdout is not None
    p.stdout.read()   # EOF: nothing holds the sweep's stdout any longer
    p.wait(timeout=30)
    time.sleep(0.5)
    for c in children:
        assert not Path(f"/proc/{c}").exists() or "zombie" in Path(f"/proc/{c}/status").read_text().lower()


# -- deterministic outputs ------------------------------------------------------------------------------
def test_wall_clock_columns_go_to_a_file_of_their_own(tmp_path):
    import pandas as pd

    from hetsim.experiment import Artifact, Experiment, Outcome, split_wallclock, write_outcome

    table = pd.DataFrame({"model": ["a", "b"], "latency_ms": [1.0, 2.0], "schedule_s": [0.01, 0.02]})
    plain, wall = split_wallclock(table, ("schedule_s", "absent_s"))
    assert list(plain.columns) == ["model", "latency_ms"] and wall is table
    assert split_wallclock(plain, ("schedule_s",))[1] is None
    exp = Experiment("p", "x", "t", lambda ctx: Artifact(plain))
    written = write_outcome(Outcome(exp, Artifact(plain, wallclock=wall), 0.0), tmp_path)
    assert [p.name for p in written] == ["x.csv", "x.wallclock.csv"]
    assert "schedule_s" not in (tmp_path / "p" / "x.csv").read_text()
    assert json.loads(pd.read_csv(tmp_path / "p" / "x.wallclock.csv").to_json())["schedule_s"]["1"] == 0.02


@pytest.mark.slow
def test_reproductions_with_scheduler_and_solver_times_give_identical_bytes(tmp_path):
    """hope's schedule_s, pim's solver times and nsga2's seconds made these differ on every run."""
    argv = ["reproduce", "pim:table3", "pim:fig5", "pim:optimality", "nsga2:e1", "hope:times", "--quick", "--out"]
    procs = [subprocess.Popen([sys.executable, "-m", "hetsim", *argv, str(tmp_path / d)], env=subprocess_env(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for d in "ab"]
    for p in procs:
        assert p.wait(timeout=1200) == 0, p.stderr.read() if p.stderr else ""
    names = sorted(str(f.relative_to(tmp_path / "a")) for f in (tmp_path / "a").rglob("*") if f.is_file())
    assert "hope/times.wallclock.csv" in names and "pim/table3.wallclock.png" in names
    for name in names:
        if ".wallclock." not in name:
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
