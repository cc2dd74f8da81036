"""``hetsim workloads list | show | import | export``."""

from __future__ import annotations

from pathlib import Path

import click
from rich.markup import escape
from rich.table import Table

from hetsim.cli._common import console, fmt
from hetsim.errors import HetsimError


@click.group()
def workloads() -> None:
    """List, show, import (from ONNX) and export (to ONNX) workloads."""


@workloads.command("list")
def workloads_list() -> None:
    """Every workload on the search path."""
    from hetsim.workload import list_workloads, load_workload

    t = Table("name", "layers", "ops", "GMAC", "description")
    for name in list_workloads():
        try:
            w = load_workload(name)
        except HetsimError as e:
            t.add_row(name, "", "", "", f"[red]invalid: {escape(str(e))}[/red]")
            continue
        t.add_row(name, str(w.num_layers), str(len(w.ops)), f"{sum(op.macs for op in w.ops) / 1e9:.3f}",
                  escape(w.description))
    console.print(t)


@workloads.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the layer table as JSON records.")
def workloads_show(name, as_json) -> None:
    """The layers of a workload: ops, GEMM dimensions, MACs, weight hints, bytes."""
    from hetsim.workload import load_workload

    w = load_workload(name)
    df = w.summary()
    if as_json:
        click.echo(df.to_json(orient="records"))
        return
    console.print(f"[bold]{w.name}[/bold]: {escape(w.description)} ({w.num_layers} layers, {len(w.ops)} ops)")
    t = Table(*[str(c) for c in df.columns])
    for row in df.itertuples(index=False):
        t.add_row(*[escape(fmt(v)) for v in row])
    console.print(t)


def _out_yaml(out: str, name: str | None, default: str) -> tuple[str, Path]:
    """The workload name and the file for ``--out`` (a .yaml file or a directory); the file name
    must be the workload's name (the loader checks it). Both checked before any work: the name
    (one that could leave the folder is refused) and the file (not a device, a FIFO, a folder)."""
    from hetsim.validation import check_name, check_output_dir, check_output_path

    path = Path(out)
    if path.suffix in (".yaml", ".yml"):
        check_output_path(out, "--out")
        wname = check_name(name if name is not None else path.stem, "--name" if name is not None else "--out's file name")
        if wname != path.stem:
            raise HetsimError(f"--name {wname!r} must equal the file name of --out ({path.stem!r}): "
                              "a workload file is loaded by its name")
        return wname, path
    if path.suffix:
        raise HetsimError(f"--out {out}: a workload file ends in .yaml (or give a directory)")
    check_output_dir(out, "--out")
    wname = check_name(name if name is not None else default,
                       "--name" if name is not None else "workload name (the model's file name; give --name)")
    check_output_path(path / f"{wname}.yaml", "--out")
    return wname, path / f"{wname}.yaml"


@workloads.command("import")
@click.argument("model", type=click.Path(dir_okay=False))
@click.option("--out", "out", required=True,
              help="Workload YAML to write (its file name is the workload's name), or a directory.")
@click.option("--name", default=None, help="Workload name (default: the --out file name, else the "
              "model's).")
@click.option("--input-shape", "input_shapes", multiple=True, metavar="NAME=1x3x224x224",
              help="Fix a graph input's dims (needed for symbolic dims such as a batch axis).")
@click.option("--layers", default=None, metavar="SPEC",
              help="Where layers start: hetsim kinds (conv,fc,matmul), ONNX op types (Conv,Gemm) "
              "and/or re:PATTERN on node names, comma-separated. Default: conv,dw,fc,matmul.")
@click.option("--allow-unknown", is_flag=True,
              help="Import op types hetsim does not know as memory-bound ops (listed).")
@click.option("--force", is_flag=True, help="Import even when the model's estimated loading work "
              "(CPU time, memory) is past the limit (docs/robustness.md).")
def workloads_import(model, out, name, input_shapes, layers, allow_unknown, force) -> None:
    """Turn an ONNX model into a workload YAML (shape inference, op mapping, FLOPs and bytes)."""
    from hetsim import loading
    from hetsim.validation import atomic_write

    loading.allow(force)
    from hetsim.workload.loader import workload_yaml
    from hetsim.workload.onnx_import import import_onnx, parse_input_shapes

    wname, path = _out_yaml(out, name, Path(model).stem)
    result = import_onnx(model, wname, input_shapes=parse_input_shapes(input_shapes),
                         layers=layers, allow_unknown=allow_unknown)
    text = workload_yaml(result.spec, header=f"Imported by `hetsim workloads import {model}`.\n"
                         "'# L<i>' marks the op that starts layer i.")
    with atomic_write(path) as f:
        f.write(text)
    w = result.workload
    for line in result.report.lines():
        console.print(escape(line), soft_wrap=True)
    console.print(f"{escape(w.name)}: {w.num_layers} layers, {len(w.ops)} ops, "
                  f"{w.total_macs / 1e9:.3f} GMAC, {sum(op.flops for op in w.ops) / 1e9:.3f} GFLOP, "
                  f"{sum(op.weight_bytes for op in w.ops) / 2**20:.2f} MiB of weights")
    console.print(f"wrote {escape(str(path))}")


@workloads.command("export")
@click.argument("name")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False),
              help="ONNX file to write.")
@click.option("--weights", type=click.Choice(["external", "random"]), default="external",
              show_default=True, help="external: weight dims only (no data, for import); random: "
              "seeded random weights ONNX Runtime can run (for profiling).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random weights.")
def workloads_export(name, out, weights, seed) -> None:
    """Write a CNN workload as an ONNX model (NCHW, batch 1)."""
    import onnx

    from hetsim import bounds as B
    from hetsim.cli._common import check_flag
    from hetsim.validation import atomic_write, check_output_path
    from hetsim.workload import load_workload
    from hetsim.workload.onnx_export import workload_to_onnx

    check_flag("--seed", seed, B.SEED, integer=True)
    check_output_path(out, "--out")
    if not out.endswith(".onnx"):
        raise HetsimError(f"--out {out}: an ONNX file ends in .onnx")
    model = workload_to_onnx(load_workload(name), weights=weights, seed=seed)
    onnx.checker.check_model(_without_external_weights(model))
    with atomic_write(out, "wb") as f:
        f.write(model.SerializeToString())
    console.print(f"wrote {escape(out)} ({len(model.graph.node)} nodes, weights {weights})")


def _without_external_weights(model):
    """The model to check: its external weights (dims only, a file that does not exist) turned into
    graph inputs of the same type and dims. ``onnx.checker`` opens an external weight's file, and,
    given a model rather than a path, looks for it in the working directory: it failed on every
    export, or read a same-named file there."""
    from onnx import TensorProto, helper

    copy = type(model)()
    copy.CopyFrom(model)
    graph = copy.graph
    external = [t for t in graph.initializer if t.data_location == TensorProto.EXTERNAL]
    if not external:
        return copy
    inputs = {i.name for i in graph.input}
    keep = [t for t in graph.initializer if t.data_location != TensorProto.EXTERNAL]
    for t in external:
        if t.name not in inputs:
            graph.input.append(helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)))
    del graph.initializer[:]
    graph.initializer.extend(keep)
    return copy
