"""``hetsim platforms list | show | validate | schema``."""

from __future__ import annotations

import sys

import click

from hetsim.cli._common import console, escape
from hetsim.cli._common import table as Table
from hetsim.errors import HetsimError


@click.group()
def platforms() -> None:
    """List, show, validate platforms; export their JSON Schema."""


@platforms.command("list")
def platforms_list() -> None:
    """Every platform on the search path."""
    from hetsim.platform import list_platforms, load_platform
    from hetsim.validation import quiet_notes

    t = Table("name", "clusters", "accelerators", "cost parameters", "description")
    for name in list_platforms():
        try:
            with quiet_notes():   # the cost parameters' provenance is a column here, not a note per board
                p = load_platform(name)
        except HetsimError as e:
            t.add_row(name, "", "", "", f"[red]invalid: {escape(str(e))}[/red]")
            continue
        prov = p.provenance.cost_parameters if p.provenance is not None else ""
        t.add_row(name, ", ".join(f"{c.name} ({c.cores}x {c.core_type})" for c in p.clusters),
                  ", ".join(a.name for a in p.accelerators), prov, escape(p.description))
    console.print(t)


@platforms.command("show")
@click.argument("name")
@click.option("--dvfs", default=None, help="Apply a DVFS preset first.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE")
def platforms_show(name, dvfs, overrides) -> None:
    """The execution places of a platform: peak and effective rates, memories, links, presets."""
    from hetsim.cost import RooflineCostModel
    from hetsim.platform import load_platform

    p = load_platform(name, list(overrides), dvfs)
    cost = RooflineCostModel(p)
    console.print(f"[bold]{p.name}[/bold]: {escape(p.description)}")
    t = Table("EP", "place", "cores", "core type", "datatype", "DVFS", "freq (MHz)", "peak (GMAC/s)",
              "effective GEMM (GMAC/s)", "memory", "effective bandwidth (GB/s)",
              title="execution places", title_justify="left")
    for ep in p.eps():
        rates = cost.ep_rates(ep)
        if ep.cluster:
            c = p.cluster(ep.cluster)
            ct = p.core_type(c.core_type)
            level = ct.level(c.dvfs)
            peak = ep.cores * ct.macs_per_cycle * level.freq_MHz * 1e-3
            t.add_row(ep.name, c.name, str(ep.cores), c.core_type, "float32", level.name,
                      f"{level.freq_MHz:g}", f"{peak:.2f}", f"{rates.gemm_MACps / 1e9:.2f}", c.memory,
                      f"{rates.bandwidth_Bps / 1e9:g}")
            continue
        a = p.accelerator(ep.accelerator)
        rows = [(pr.dtype, pr.peak_GMACps) for pr in a.precisions]
        if a.peak_GMACps is not None:
            rows.insert(0, ("float32" if "float32" not in dict(rows) else "other", a.peak_GMACps))
        for dtype, peak in rows:
            t.add_row(ep.name, a.name, "-", a.kind, dtype + (" *" if dtype == a.compute_dtype else ""), "-",
                      "-", f"{peak:g}", f"{peak * a.roofline.efficiency:.2f}", a.memory,
                      f"{rates.bandwidth_Bps / 1e9:g}")
    console.print(t)
    console.print("effective = what the roofline cost model uses: peak x the roofline block's "
                  "efficiencies (gemm_efficiency x parallel_efficiency for cores, efficiency for "
                  "accelerators); bandwidth = min(cores x per-core, port, memory); * = the datatype an "
                  "accelerator runs every op in (compute_dtype)")
    if p.links:
        lt = Table("link", "connects", "bandwidth (GB/s)", "latency (ns)", "energy (pJ/B)",
                   title="links", title_justify="left")
        for lk in p.links:
            lt.add_row(lk.name, ", ".join(lk.connects), f"{lk.bandwidth_GBps:g}", f"{lk.latency_ns:g}",
                       f"{lk.energy_pJ_per_byte:g}")
        console.print(lt)
    if p.dvfs_presets:
        console.print("DVFS presets: " + "; ".join(
            f"{k} ({', '.join(f'{c}={lv}' for c, lv in v.items())})" for k, v in p.dvfs_presets.items()))
    console.print(f"power model: {'yes' if p.has_power_model else 'no'}")
    r = p.runtime
    if r != type(r)():   # a platform that says how its software runs networks (docs/platforms.md)
        console.print(f"runtime: cost model {r.cost_model}; DAG placements {'serial' if r.serial else 'concurrent'}, "
                      f"copies {'cached' if r.caching else 'per consumer'} per {r.residency}, comm {r.comm}")


@platforms.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
def platforms_validate(files) -> None:
    """Report every error of each file with its field path (exit 2 if any)."""
    from hetsim.platform import validate_file

    bad = 0
    for f in files:
        notes: list[str] = []
        warnings: list[str] = []
        errors = validate_file(f, notes, warnings)
        if errors:
            bad += 1
            for line in errors:
                click.echo(line, err=True)
        else:
            click.echo(f"{f}: ok" + "".join(f" ({note})" for note in notes))
            for line in warnings:
                click.echo(f"warning: {line}", err=True)
    if bad:
        sys.exit(2)


@platforms.command("schema")
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to a file.")
def platforms_schema(out) -> None:
    """The JSON Schema of platform files (for editors)."""
    from hetsim.platform import json_schema
    from hetsim.validation import atomic_write, check_output_path

    check_output_path(out, "--out")
    text = json_schema()
    if out:
        with atomic_write(out) as f:
            f.write(text + "\n")
    else:
        click.echo(text)
