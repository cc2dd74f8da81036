"""``hetsim costs import-ort``: measured costs from ONNX Runtime profiles."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import console
from hetsim.errors import HetsimError


@click.group()
def costs() -> None:
    """Measured cost tables (for --cost-table) from other tools' measurements."""


def _pairs(items, what: str) -> list[tuple[str, str]]:
    """``DEVICE=VALUE`` items; DEVICE is an EP's name (it is written into the tables and, as the
    profile's file name, into ``hetsim profile``'s folder), checked as one."""
    from hetsim.validation import check_name

    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise HetsimError(f"{what} {item[:80]!r}: expected DEVICE=VALUE")
        check_name(key.strip(), f"{what} DEVICE", strict=True)
        out.append((key.strip(), value.strip()))
    return out


def write_tables(measured, out: Path, workload_spec: dict | None, header: str) -> list[Path]:
    """Write costs.csv, transfers.csv, runs.csv and the workload YAML (when given) into ``out``."""
    from hetsim.cost.measured import COSTS_FILE, TRANSFERS_FILE
    from hetsim.validation import atomic_write
    from hetsim.workload.loader import workload_yaml

    written = []
    for fname, df in ((COSTS_FILE, measured.ops), (TRANSFERS_FILE, measured.transfers),
                      ("runs.csv", measured.runs)):
        with atomic_write(out / fname) as f:
            df.to_csv(f, index=False, float_format="%.9g")
        written.append(out / fname)
    if workload_spec is not None:
        path = out / f"{workload_spec['name']}.yaml"
        with atomic_write(path) as f:
            f.write(workload_yaml(workload_spec, header=header))
        written.append(path)
    return written


def print_summary(measured) -> None:
    """Per op type: time per device (ms) and its share of the device's total."""
    s = measured.summary()
    if s.empty:
        return
    eps = list(dict.fromkeys(s["ep"]))
    t = Table("op type", "ops", *[f"{ep} (ms)" for ep in eps], *[f"{ep} share" for ep in eps],
              title="median time per op type", title_justify="left")
    order = s.groupby("op_type")["time_ms"].max().sort_values(ascending=False).index
    for op_type in order:
        rows = s[s.op_type == op_type].set_index("ep")
        n = int(rows["ops"].max())
        times = [f"{rows.loc[ep, 'time_ms']:.3f}" if ep in rows.index else "-" for ep in eps]
        shares = [f"{rows.loc[ep, 'share']:.1%}" if ep in rows.index else "-" for ep in eps]
        t.add_row(escape(op_type), str(n), *times, *shares)
    console.print(t)


@costs.command("import-ort")
@click.option("--profile", "profiles", multiple=True, required=True, metavar="DEVICE=FILE.json",
              help="An ONNX Runtime profile of one device (repeatable; several files per device "
              "pool their runs). DEVICE names an EP or place of the platform you will simulate on.")
@click.option("--model", default=None, type=click.Path(dir_okay=False),
              help="The profiled ONNX model: names the ops and gives the workload (default: rebuild "
              "the graph from the profiles).")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Directory for costs.csv, transfers.csv, runs.csv and the workload YAML.")
@click.option("--name", default=None, help="Workload name (default: the model's file name, else "
              "'profiled').")
@click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME=1x3x224x224",
              help="Fix a graph input's dims of --model.")
@click.option("--skip-runs", type=int, default=None,
              help="Warm-up runs dropped at the start of every file (default: 1 if it has more).")
@click.option("--host", default=None, help="The device Memcpy nodes copy from and to (default: the "
              "first device measuring the CPU provider).")
@click.option("--provider", "providers", multiple=True, metavar="DEVICE=PROVIDER",
              help="The execution provider a device's profile measures (default: its accelerator's, "
              "else the CPU's).")
@click.option("--force", is_flag=True, help="Import even when the profiles' or the model's estimated "
              "loading work (CPU time, memory) is past the limit (docs/robustness.md).")
def import_ort(profiles, model, out, name, input_shapes, skip_runs, host, providers, force) -> None:
    """Measured per-op costs per device, copy costs and the graph from ONNX Runtime profiles."""
    from hetsim import loading
    from hetsim.cli._common import check_flag

    loading.allow(force)
    from hetsim.cost.ort_profile import import_ort_profiles
    from hetsim.validation import check_name, check_output_dir
    from hetsim.workload.onnx_import import parse_input_shapes

    # Every argument checked before any file is read (one line each, nothing written).
    by_device: dict[str, list[str]] = {}
    for dev, path in _pairs(profiles, "--profile"):
        if path in by_device.get(dev, []):   # its runs would count twice in the medians
            raise HetsimError(f"--profile {dev}={path}: given twice for device {dev}")
        by_device.setdefault(dev, []).append(path)
    shapes = parse_input_shapes(input_shapes)
    wname = check_name(name if name is not None else (Path(model).stem if model else "profiled"),
                       "--name" if name is not None else "workload name (the --model's file name; give --name)")
    check_flag("--skip-runs", skip_runs, (0, 10 ** 9), "runs", integer=True)
    if host is not None:
        check_name(host, "--host", strict=True)
    providers_given = dict(_pairs(providers, "--provider"))
    unknown = sorted(set(providers_given) - set(by_device))
    if unknown:   # a typo would leave the device's provider guessed, silently
        raise HetsimError(f"--provider {unknown[0]}=...: no --profile of device {unknown[0]!r} "
                          f"(devices: {', '.join(by_device)})")
    check_output_dir(out, "--out")
    measured = import_ort_profiles(by_device, model, skip_runs=skip_runs, host=host,
                                   providers=providers_given, input_shapes=shapes, name=wname)
    spec = measured.spec
    assert spec is not None
    if model is None:
        from hetsim.workload import workload_from_dict

        workload_from_dict(spec, f"<rebuilt {wname}>")  # never write a workload that fails to load
    out_dir = Path(out)
    src = f"model {model}" if model else "the profiles"
    written = write_tables(measured, out_dir, spec, f"Written by `hetsim costs import-ort` from {src}.")
    for note in measured.notes:
        console.print(escape(note), soft_wrap=True)
    print_summary(measured)
    console.print(f"{len(measured.ops)} op costs on {measured.ops['ep'].nunique()} devices, "
                  f"{len(measured.transfers)} copy costs; wrote "
                  f"{', '.join(escape(str(p)) for p in written)}", soft_wrap=True)


@costs.command("show")
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path.")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path.")
@click.option("--ep", "ep_names", multiple=True, required=True, help="EP to price the ops on (repeatable).")
@click.option("--dvfs", default=None, help="DVFS preset or cluster=level,...")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE", help="Override a platform field.")
@click.option("--layers", is_flag=True, help="One row per layer instead of per op.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False), default=None, help="Write the table as CSV.")
def show(platform_name, workload_name, ep_names, dvfs, overrides, layers, csv_path) -> None:
    """The gemm2 model's op table: every op's algorithm (im2col, winograd, gemm1x1, depthwise,
    gemv, kernel), threads, fixed, core and memory time and the bytes served by each cache level."""
    import pandas as pd

    from hetsim.cost import Gemm2CostModel
    from hetsim.cost.gemm2 import op_table
    from hetsim.platform import load_platform
    from hetsim.validation import atomic_write, check_output_path
    from hetsim.workload import load_workload

    check_output_path(csv_path, "--csv")
    platform = load_platform(platform_name, list(overrides), dvfs)
    workload = load_workload(workload_name)
    cost = Gemm2CostModel(platform)
    frames = []
    for name in ep_names:
        ep = platform.ep(name)
        frames.append(op_table(cost, workload, ep).assign(ep=ep.name))
    df = pd.concat(frames, ignore_index=True)
    if layers:
        def algorithms(a) -> str:
            return "+".join(dict.fromkeys(x for x in a if x not in ("view", "kernel"))) or "kernel"

        agg: dict[str, object] = {c: "sum" for c in df.columns if c.endswith(("_s", "_B"))}
        agg["algorithm"] = algorithms
        df = df.groupby(["ep", "layer"], sort=False).agg(agg).reset_index()
    if csv_path:
        with atomic_write(csv_path) as f:
            df.to_csv(f, index=False, float_format="%.6g")
    key = "layer" if layers else "op"
    t = Table("ep", key, "algorithm", "fixed (ms)", "core (ms)", "memory (ms)", "time (ms)", "DRAM (MB)",
              title=f"{workload.name} on {platform.name}: gemm2", title_justify="left")
    for row in df.itertuples(index=False):
        t.add_row(row.ep, escape(str(getattr(row, key))), row.algorithm, f"{row.fixed_s * 1e3:.3f}",
                  f"{row.core_s * 1e3:.3f}", f"{row.mem_s * 1e3:.3f}", f"{row.time_s * 1e3:.3f}",
                  f"{row.dram_B / 1e6:.2f}")
    console.print(t)
    for name in dict.fromkeys(df["ep"]):
        console.print(f"{name}: {df[df.ep == name]['time_s'].sum() * 1e3:.2f} ms per frame")
    if csv_path:
        console.print(f"wrote {csv_path}")


@costs.command("import-starpu")
@click.option("--platform", "-p", "platform_name", required=True, help="Platform name or YAML path (the EPs named).")
@click.option("--workload", "-w", "workload_name", required=True, help="Workload name or YAML path (the ops priced).")
@click.option("--model", "models", multiple=True, required=True, metavar="KIND=FILE",
              help="A StarPU performance model file (sampling/codelets/<version>/<symbol>.<host>) for the ops "
              "of one kind (conv, fc, matmul...; repeatable).")
@click.option("--device", "devices", multiple=True, required=True, metavar="DEVICE=EP",
              help="A StarPU device combination (cpu0, cpu0x4, cuda0, opencl0, cpu0+cuda0) and the EP or "
              "place of the platform it measured (repeatable; combinations not named are left out).")
@click.option("--impl", type=click.IntRange(min=0), default=0, show_default=True,
              help="The codelet implementation whose model is read.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False),
              help="Directory for costs.csv (then: hetsim simulate --cost-table DIR).")
def import_starpu(platform_name, workload_name, models, devices, impl, out) -> None:
    """Measured per-op times per device from StarPU performance models (history, else regression)."""
    from hetsim.cost.measured import COSTS_FILE
    from hetsim.cost.starpu_perfmodel import import_starpu_perfmodels
    from hetsim.platform import load_platform
    from hetsim.validation import atomic_write, check_output_dir
    from hetsim.workload import load_workload

    check_output_dir(out, "--out")
    platform = load_platform(platform_name)
    workload = load_workload(workload_name)
    device_eps = dict(_pairs(devices, "--device"))
    for dev, ep in device_eps.items():
        try:
            platform.ep(ep)
        except HetsimError as e:
            raise HetsimError(f"--device {dev}={ep}: {e}") from None
    by_kind: dict[str, str] = {}
    for kind, path in _pairs(models, "--model"):
        if kind in by_kind:
            raise HetsimError(f"--model {kind}={path}: kind {kind!r} already has {by_kind[kind]}")
        by_kind[kind] = path
    table, notes = import_starpu_perfmodels(workload, by_kind, device_eps, impl)
    if table.empty:
        raise HetsimError(f"no op of {workload.name} was priced by the models on {', '.join(device_eps)}: "
                          "check --model kinds and --device names")
    out_dir = Path(out)
    with atomic_write(out_dir / COSTS_FILE) as f:
        table.to_csv(f, index=False, float_format="%.9g")
    for note in notes:
        console.print(escape(note), soft_wrap=True)
    priced = table.groupby("ep")["op"].nunique()
    console.print(f"wrote {out_dir / COSTS_FILE}: " + ", ".join(f"{n} ops on {ep}" for ep, n in priced.items())
                  + f" of {len(workload.ops)}")
