"""Per-op times from StarPU performance models through the measured cost table. StarPU is not
installed here: the files are written in StarPU's own layout (perfmodel_history.c's
dump_model_file: comments, version, combinations, devices, implementations, regressions, history
entries in µs), including the older 7-field entries without flops."""

from __future__ import annotations

import json

import pytest
import yaml
from helpers import assert_one_line_error

from hetsim.cost.starpu_perfmodel import (
    import_starpu_perfmodels,
    op_task_bytes,
    read_starpu_perfmodel,
)
from hetsim.workload import load_workload

OPS = [{"name": "conv1", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 8},
       {"name": "conv2", "kind": "conv", "kernel": 3, "pad": 1, "out_c": 16},
       {"name": "conv3", "kind": "conv", "kernel": 1, "out_c": 16},
       {"name": "fc", "kind": "fc", "out_c": 10}]


def _workload(tmp_path):
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({"schema": 1, "name": "tiny", "input": {"h": 16, "w": 16, "c": 3},
                                    "layer_kinds": ["conv", "fc"], "ops": OPS}, sort_keys=False))
    return path


def starpu_file(combs, version: int = 45) -> str:
    """A performance model file as StarPU writes it. ``combs``: [(devices [(type, id, cores)],
    entries [(size, mean_us, n)], nl (a, b, c) or None, old_format)]."""
    out = ["##################", "# Performance Model Version", str(version), "",
           "####################", "# COMBs", "# number of combinations", str(len(combs))]
    for k, (devices, entries, nl, old) in enumerate(combs):
        out += ["####################", f"# COMB_{k}", "# number of types devices", str(len(devices))]
        for d, (t, devid, cores) in enumerate(devices):
            out += ["####################", f"# DEV_{d}",
                    "# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3, MPI_MS - 5)", str(t),
                    "####################", f"# DEV_{d}", "# device id ", str(devid),
                    "####################", f"# DEV_{d}", "# number of cores ", str(cores)]
        out += ["##########", "# number of implementations", "1", "#####", f"# Model for dev_impl0 (Comb{k})",
                "# number of entries", str(len(entries)),
                "# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx",
                "0.000000e+00   \t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \tnan            \tnan"
                "            \t0\t0              \t0              ",
                "# a\t\tb\t\tc",
                "\t".join(f"{v:<15e}" for v in nl) if nl else "nan            \tnan            \tnan            ",
                "# not multiple-regression-base", "0",
                "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn"]
        for j, (size, mean, n) in enumerate(entries):
            cells = [f"{0x1234abcd + j:08x}", f"{size:<15d}"] + ([] if old else [f"{0.0:<15e}"]) + [
                f"{mean:<15e}", f"{0.5:<15e}", f"{mean * n:<15e}", f"{mean * mean * n:<15e}", str(n)]
            out.append("\t".join(cells))
        out.append("")
    return "\n".join(out) + "\n"


@pytest.fixture
def models(tmp_path):
    w = load_workload(str(_workload(tmp_path)))
    convs = [op for op in w.ops if op.kind.value == "conv"]
    fc = w.op("fc")
    # conv: conv1 and conv2 in the history on both devices (conv2 twice, two footprints: averaged by
    # samples); conv3 only through the GPU's non-linear regression. fc: the old 7-field entries.
    conv_file = tmp_path / "conv2d.host"
    conv_file.write_text(starpu_file([
        ([(0, 0, 1)], [(op_task_bytes(convs[0]), 120.0, 10), (op_task_bytes(convs[1]), 300.0, 4),
                       (op_task_bytes(convs[1]), 400.0, 1)], None, False),
        ([(1, 0, 1)], [(op_task_bytes(convs[0]), 12.0, 10), (op_task_bytes(convs[1]), 30.0, 5)],
         (2e-3, 1.0, 5.0), False)]))
    fc_file = tmp_path / "fc.host"
    fc_file.write_text(starpu_file([([(0, 0, 1)], [(op_task_bytes(fc), 50.0, 3)], None, True),
                                    ([(1, 0, 1)], [(op_task_bytes(fc), 20.0, 3)], None, True)]))
    return w, conv_file, fc_file


def test_reads_history_regressions_and_old_entries(models):
    w, conv_file, fc_file = models
    archs = read_starpu_perfmodel(conv_file)
    assert [(a.device, len(a.entries)) for a in archs] == [("cpu0", 3), ("cuda0", 2)]
    table, notes = import_starpu_perfmodels(w, {"conv": conv_file, "fc": fc_file}, {"cpu0": "big", "cuda0": "gpu"})
    t = {(r.op, r.ep): (r.time_s, r.source) for r in table.itertuples()}
    assert t[("conv1", "big")] == (pytest.approx(120e-6), "history")
    assert t[("conv2", "big")] == (pytest.approx((300.0 * 4 + 400.0) / 5 * 1e-6), "history")
    size3 = op_task_bytes(w.op("conv3"))
    assert t[("conv3", "gpu")] == (pytest.approx((2e-3 * size3 + 5.0) * 1e-6), "nl-regression")
    assert ("conv3", "big") not in t and any("1 conv op(s)" in n for n in notes)
    assert t[("fc", "gpu")] == (pytest.approx(20e-6), "history")


def test_import_then_replay_on_the_platform(hetsim, tmp_path, models):
    w, conv_file, fc_file = models
    out = tmp_path / "costs"
    r = hetsim("costs", "import-starpu", "-p", "rk3588", "-w", str(tmp_path / "tiny.yaml"),
               "--model", f"conv={conv_file}", "--model", f"fc={fc_file}",
               "--device", "cpu0=big", "--device", "cuda0=gpu", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert "4 ops on gpu" in r.stdout and "3 ops on big" in r.stdout
    # everything on the GPU for one frame: the latency is the sum of the measured op times
    mapping = tmp_path / "m.yaml"
    mapping.write_text("placement:\n" + "".join(f"  {op['name']}: gpu\n" for op in OPS))
    r = hetsim("simulate", "-p", "rk3588", "-w", str(tmp_path / "tiny.yaml"), "-m", str(mapping),
               "--cost-table", str(out), "--frames", "1", "--json")
    assert r.returncode == 0, r.stderr
    size3 = op_task_bytes(w.op("conv3"))
    want = (12.0 + 30.0 + (2e-3 * size3 + 5.0) + 20.0) * 1e-6
    assert json.loads(r.stdout)["latency_s"]["mean"] == pytest.approx(want, rel=1e-9)
    # conv3 was not measured on big: a mapping that puts it there is refused
    mapping.write_text("placement:\n" + "".join(f"  {op['name']}: big\n" for op in OPS))
    r = hetsim("simulate", "-p", "rk3588", "-w", str(tmp_path / "tiny.yaml"), "-m", str(mapping),
               "--cost-table", str(out), "--frames", "1")
    assert r.returncode == 2 and "conv3" in r.stderr


@pytest.mark.parametrize(("mutate", "fragment"), [
    (lambda s: s.replace("1.200000e+02", "1.2e+0x"), "line 39: mean '1.2e+0x' is not a number"),
    (lambda s: s[:s.index("# hash")], "ends before a history entry"),
    (lambda s: s.replace("\n1\n####################\n# DEV_0\n# device id", "\n7\n####################\n# DEV_0\n# device id", 1),
     "device type 7; allowed: 0 (cpu)"),
    (lambda s: s.replace("1.200000e+02", "-1.200000e+02"), "mean '-1.200000e+02'; allowed: a finite number >= 0"),
    (lambda s: s + "42\n", "'42' after the last combination"),
])
def test_bad_model_files_are_one_line_and_write_nothing(hetsim, tmp_path, models, mutate, fragment):
    w, conv_file, fc_file = models
    conv_file.write_text(mutate(conv_file.read_text()))
    out = tmp_path / "costs"
    r = hetsim("costs", "import-starpu", "-p", "rk3588", "-w", str(tmp_path / "tiny.yaml"),
               "--model", f"conv={conv_file}", "--device", "cpu0=big", "--out", str(out))
    assert_one_line_error(r, fragment)
    assert str(conv_file) in r.stderr
    assert not (out / "costs.csv").exists()


@pytest.mark.parametrize(("device", "fragment"), [
    ("cuda1=gpu", "--device cuda1: no such device combination in the models; they have cpu0, cuda0"),
    ("cpu0=tpu", "--device cpu0=tpu:"),
])
def test_bad_devices(hetsim, tmp_path, models, device, fragment):
    w, conv_file, fc_file = models
    r = hetsim("costs", "import-starpu", "-p", "rk3588", "-w", str(tmp_path / "tiny.yaml"),
               "--model", f"conv={conv_file}", "--device", device, "--out", str(tmp_path / "o"))
    assert_one_line_error(r, fragment)
    assert not (tmp_path / "o" / "costs.csv").exists()
