"""``hetsim costs import-ort``: measured costs from ONNX Runtime profiles."""

from __future__ import annotations

from pathlib import Path

import click

from hetsim.cli._common import console, escape
from hetsim.cli._common import table as Table
from hetsim.errors import HetsimError


@click.group()
def costs() -> None:
    """Measured cost tables (for --cost-table) from other tools' measurements."""


def _pairs(items, what: str) -> list[tuple[str, str]]:
    out = []
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise HetsimError(f"{what} {item!r}: expected DEVICE=VALUE")
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
def import_ort(profiles, model, out, name, input_shapes, skip_runs, host, providers) -> None:
    """Measured per-op costs per device, copy costs and the graph from ONNX Runtime profiles."""
    from hetsim.cost.ort_profile import import_ort_profiles
    from hetsim.workload.onnx_import import parse_input_shapes

    by_device: dict[str, list[str]] = {}
    for dev, path in _pairs(profiles, "--profile"):
        by_device.setdefault(dev, []).append(path)
    shapes = parse_input_shapes(input_shapes)
    wname = name or (Path(model).stem if model else "profiled")
    measured = import_ort_profiles(by_device, model, skip_runs=skip_runs, host=host,
                                   providers=dict(_pairs(providers, "--provider")),
                                   input_shapes=shapes, name=wname)
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
    from hetsim.validation import atomic_write
    from hetsim.workload import load_workload

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
