"""Measured against simulated: run mappings of a workload for real on this machine, simulate the
same mappings on the calibrated platform with the DES, and report the errors.

* Per layer: every layer's median time over the frames of the single-stage mappings (the whole
  network on ``C1``, on ``C2``, ...) against the cost model's layer time on that EP. The layer
  MAPE is the mean of |simulated / measured - 1| over every (layer, EP) pair.
* Per mapping: the measured steady-state throughput (the median over ``repeats`` runs, which go
  round all mappings in turn so that a burst of load spreads over them) against the DES's, with
  contention, over as many frames; error = simulated / measured - 1.

    report = validate_host(load_platform("results/host/host.yaml"), WorkloadRef("alexnet"))
    report.layer_mape, [m.error for m in report.mappings]
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hetsim.analytic import SplitScorer
from hetsim.cost import CostModel, fallback_names, make_cost_model
from hetsim.errors import HetsimError
from hetsim.evaluation import simulate
from hetsim.mapping import Pipeline, load_mapping
from hetsim.validation import atomic_write
from hetsim_host.executor import HostRun, WorkloadRef, run_on_host
from hetsim_host.microbench import cpus as available_cpus


@dataclass
class MappingResult:
    mapping: str
    measured_fps: float            # median over the repeats
    measured_runs_fps: list[float]
    simulated_fps: float
    stage_cpus: list[list[int]]
    layer_measured_s: list[float]  # median per layer over every frame of every repeat
    layer_simulated_s: list[float]  # the cost model's layer time on the stage's EP
    single_stage: bool
    load: list[float] = field(default_factory=list)  # 1-min load average before each run
    other_cpu: list[float] = field(default_factory=list)  # share of the CPUs others used, per run
    #: every cost model simulated: name -> {"simulated_fps": ..., "layer_simulated_s": [...]}
    by_cost: dict[str, dict] = field(default_factory=dict)
    #: 20th percentile per layer over every frame of every repeat (the undisturbed frames' time)
    layer_measured_p20_s: list[float] = field(default_factory=list)

    @property
    def error(self) -> float:
        return self.simulated_fps / self.measured_fps - 1


@dataclass
class Report:
    platform: str
    workload: str
    scale: float
    frames: int
    repeats: int
    layer_names: list[str]
    mappings: list[MappingResult]
    machine: str = ""
    noise_sigma: float = 0.0
    costs: tuple[str, ...] = ("roofline",)

    @property
    def layer_rows(self) -> list[MappingResult]:
        """Mappings whose layers enter the layer MAPE: the single-stage ones (layers measured
        alone), or every mapping when none is single-stage."""
        single = [m for m in self.mappings if m.single_stage]
        return single or self.mappings

    @property
    def layer_mape(self) -> float:
        """Layer MAPE of the first cost model (:meth:`layer_mape_of` for the others)."""
        return self.layer_mape_of(self.costs[0])

    def layer_mape_of(self, cost: str) -> float:
        errs = [abs(s / m - 1) for r in self.layer_rows
                for m, s in zip(r.layer_measured_s, r.by_cost[cost]["layer_simulated_s"], strict=True) if m > 0]
        return float(np.mean(errs)) if errs else float("nan")

    def to_dict(self) -> dict:
        return {
            "platform": self.platform, "workload": self.workload, "scale": self.scale,
            "frames": self.frames, "repeats": self.repeats, "machine": self.machine,
            "noise_sigma": self.noise_sigma, "costs": list(self.costs),
            "layer_mape": self.layer_mape,
            "layer_mape_by_cost": {c: self.layer_mape_of(c) for c in self.costs},
            "mappings": [{"mapping": m.mapping, "measured_fps": m.measured_fps,
                          "simulated_fps": m.simulated_fps, "error": m.error,
                          "by_cost": {c: {"simulated_fps": v["simulated_fps"],
                                          "error": v["simulated_fps"] / m.measured_fps - 1}
                                      for c, v in m.by_cost.items()},
                          "measured_runs_fps": m.measured_runs_fps, "stage_cpus": m.stage_cpus,
                          "single_stage": m.single_stage,
                          "layer_measured_s": m.layer_measured_s,
                          "layer_measured_p20_s": m.layer_measured_p20_s,
                          "load_1min": m.load, "other_cpu": m.other_cpu} for m in self.mappings],
            "layers": [{"layer": i + 1, "name": name,
                        **{f"{r.mapping} measured_s": r.layer_measured_s[i] for r in self.layer_rows},
                        **{f"{r.mapping} simulated_s": r.layer_simulated_s[i] for r in self.layer_rows}}
                       for i, name in enumerate(self.layer_names)],
        }


# -- which mappings ---------------------------------------------------------------------------
def host_cluster(platform):
    """The cluster that stands for this machine: the platform's only cluster with a symbol."""
    clusters = [c for c in platform.clusters if c.symbol]
    if len(clusters) != 1:
        raise HetsimError(f"platform {platform.name}: validate host needs exactly one cluster with a "
                          f"symbol (this machine's cores, as `hetsim calibrate host` writes), got "
                          f"{len(clusters)}")
    return clusters[0]


def default_mappings(platform, workload, cost, frames: int = 30, candidates: int = 5) -> list[str]:
    """The whole network on 1 core and on all cores, and the best 2-stage pipeline the simulator
    finds: every split over every pair of core counts that fits, ranked in closed form, the top
    ``candidates`` simulated with the DES (contention on), the best kept."""
    c = host_cluster(platform)
    n, sym, layers = c.cores, c.symbol, workload.num_layers
    out = [f"{sym}1:1-{layers}"]
    if n > 1:
        out.append(f"{sym}{n}:1-{layers}")
    if n > 1 and layers > 1:
        eps = [platform.ep(f"{sym}{k}") for k in range(1, n)]
        orders = [(a, b) for a in range(len(eps)) for b in range(len(eps)) if a + b + 2 <= n]
        scored = SplitScorer(platform, workload, cost, eps).score(2, orders)
        flat = np.argsort(-scored.throughput, axis=None)[:candidates]
        best, best_fps = f"{sym}1:1-{layers}", -1.0
        for idx in flat:
            i, j = np.unravel_index(int(idx), scored.throughput.shape)
            b = scored.boundaries[i]
            o = scored.orders[j]
            text = f"{eps[o[0]].name}:1-{b[1]}|{eps[o[1]].name}:{b[1] + 1}-{layers}"
            pipe = load_mapping(text, platform, workload, cost)
            fps = simulate(platform, workload, pipe, engine="des", cost=cost, frames=frames).metrics.throughput_fps
            if fps > best_fps:
                best, best_fps = text, fps
        out.append(best)
    return out


def stage_cpus(pipe: Pipeline, cpus: Sequence[int]) -> list[list[int]]:
    """Disjoint CPUs for the stages, in order: stage 1 takes the first ``cores`` CPUs, and so on."""
    need = sum(s.ep.cores for s in pipe.stages)
    if need > len(cpus):
        raise HetsimError(f"mapping {pipe} needs {need} cores but this process may use {len(cpus)} "
                          f"(CPUs {list(cpus)})")
    out, i = [], 0
    for s in pipe.stages:
        out.append(list(cpus[i:i + s.ep.cores]))
        i += s.ep.cores
    return out


# -- the run ----------------------------------------------------------------------------------
def measured_jitter(platform_path: str | os.PathLike) -> float:
    """The frame jitter `calibrate host` saved beside a platform file (0 when there is none, or
    when the file is not one: a FIFO or a device there is not read)."""
    from hetsim.validation import read_json

    path = Path(platform_path)
    raw = path.with_name(path.stem + ".measurements.json")
    try:
        sigma = float(read_json(raw)["fit"]["frame_jitter_sigma"])
    except (HetsimError, ValueError, KeyError, TypeError):
        return 0.0
    return sigma if 0 <= sigma <= 5 else 0.0   # the DES's noise range (options.py)


def check_validation(platform, ref: WorkloadRef, mappings: Sequence[str] | None = None,
                     frames: int = 30, repeats: int = 3, costs: Sequence[str] = ("roofline",)) -> list[Pipeline]:
    """The pipelines :func:`validate_host` will run (default: :func:`default_mappings` of the first
    cost model), after checking every input: one-line errors before anything runs."""
    if repeats < 1:
        raise HetsimError(f"repeats must be at least 1 (got {repeats})")
    if frames < 3:
        raise HetsimError(f"frames must be at least 3 to measure a steady state (got {frames})")
    if not costs:
        raise HetsimError(f"validate host needs a cost model; allowed: {', '.join(fallback_names())}")
    for c in costs:
        if c not in fallback_names():
            raise HetsimError(f"cost model {c!r}: allowed: {', '.join(fallback_names())}")
    host_cluster(platform)
    workload = ref.load()
    cost = make_cost_model(platform, model=costs[0])
    texts = list(mappings) if mappings else default_mappings(platform, workload, cost, frames)
    pipes: list[Pipeline] = []
    for text in texts:
        m = load_mapping(text, platform, workload, cost)
        if not isinstance(m, Pipeline):
            raise HetsimError(f"mapping {text!r}: validate host runs pipelines only, not placements")
        for s in m.stages:
            if s.ep.cluster != host_cluster(platform).name:
                raise HetsimError(f"mapping {text!r}: stage {s} is not on the host cluster")
        pipes.append(m)
    return pipes


def validate_host(platform, ref: WorkloadRef, mappings: Sequence[str] | None = None, frames: int = 30,
                  repeats: int = 3, seed: int = 0, warmup: int = 2, noise_sigma: float = 0.0,
                  progress: Callable[[str, int, int], None] | None = None,
                  costs: Sequence[str] = ("roofline",)) -> Report:
    """Run and simulate ``mappings`` (default: :func:`default_mappings`) with every cost model of
    ``costs`` (the first is the report's headline). The DES draws a seeded lognormal factor of
    sigma ``noise_sigma`` per stage execution (the frame-to-frame jitter of the real machine, which
    slows a balanced pipeline whose stages wait on each other) and runs 10x the frames so that the
    noise averages out. ``progress(label, done, total)`` reports frames as they complete."""
    pipes = check_validation(platform, ref, mappings, frames, repeats, costs)
    workload = ref.load()
    cpus = available_cpus()
    placement = [stage_cpus(p, cpus) for p in pipes]

    runs: list[list[HostRun]] = [[] for _ in pipes]
    total = repeats * len(pipes) * frames
    done = 0
    for _ in range(repeats):
        for i, (pipe, cp) in enumerate(zip(pipes, placement, strict=True)):
            stages = [(s.first, s.last, c) for s, c in zip(pipe.stages, cp, strict=True)]
            base = done

            def tick(n, base=base, label=str(pipe)):
                if progress is not None:
                    progress(label, base + n, total)

            runs[i].append(run_on_host(ref, stages, frames=frames, warmup=warmup, seed=seed, progress=tick))
            done += frames

    models = {c: make_cost_model(platform, model=c) for c in costs}
    results = []
    for pipe, cp, rs in zip(pipes, placement, runs, strict=True):
        by_cost = {c: simulate_mapping(platform, workload, str(pipe), cost, frames, noise_sigma, seed)
                   for c, cost in models.items()}
        head = by_cost[costs[0]]
        times = np.vstack([r.layer_times_s for r in rs])
        fps = [r.throughput_fps for r in rs]
        results.append(MappingResult(
            mapping=str(pipe), measured_fps=float(np.median(fps)), measured_runs_fps=fps,
            simulated_fps=head["simulated_fps"], stage_cpus=cp,
            layer_measured_s=[float(x) for x in np.median(times, axis=0)],
            layer_simulated_s=head["layer_simulated_s"],
            single_stage=len(pipe.stages) == 1, load=[float(r.load_before[0]) for r in rs],
            other_cpu=[float(r.other_cpu) for r in rs], by_cost=by_cost,
            layer_measured_p20_s=[float(x) for x in np.percentile(times, 20, axis=0)]))
    return Report(platform=platform.name, workload=workload.name, scale=ref.scale, frames=frames,
                  repeats=repeats, layer_names=[layer.name for layer in workload.layers],
                  mappings=results, machine=_machine(), noise_sigma=noise_sigma, costs=tuple(costs))


def simulate_mapping(platform, workload, mapping: str, cost: CostModel, frames: int, noise_sigma: float,
                     seed: int) -> dict:
    """What validate host compares with a run: the DES throughput of ``mapping`` over 10x ``frames``
    with the measured jitter, and the cost model's time of every layer on its stage's EP."""
    pipe = load_mapping(mapping, platform, workload, cost)
    assert isinstance(pipe, Pipeline)
    sim = simulate(platform, workload, pipe, engine="des", cost=cost, frames=10 * frames,
                   noise_sigma=noise_sigma, seed=seed).metrics
    layer_sim: list[float] = []
    for s in pipe.stages:
        layer_sim.extend(float(x) for x in cost.layer_times(workload, s.ep)[s.first - 1:s.last])
    return {"simulated_fps": float(sim.throughput_fps), "layer_simulated_s": layer_sim}


def rescore(report: dict, platform, workload, cost: CostModel, seed: int = 0,
            layer_key: str = "layer_measured_s") -> dict:
    """Score another cost model on the measurements of a saved report (``report.json``): layer MAPE
    over its single-stage mappings (against each layer's median, or ``layer_key``
    ``layer_measured_p20_s``) and the throughput error of every mapping, simulated as
    :func:`validate_host` does. What docs/fidelity.md's before/after and ablation tables use: one
    set of measured runs, every model on it."""
    frames, sigma = int(report["frames"]), float(report.get("noise_sigma", 0.0))
    errs, mappings = [], []
    for m in report["mappings"]:
        sim = simulate_mapping(platform, workload, m["mapping"], cost, frames, sigma, seed)
        mappings.append({"mapping": m["mapping"], "measured_fps": m["measured_fps"],
                         "simulated_fps": sim["simulated_fps"],
                         "error": sim["simulated_fps"] / m["measured_fps"] - 1})
        if m.get("single_stage", "|" not in m["mapping"]):
            errs += [abs(s / x - 1) for x, s in zip(m[layer_key], sim["layer_simulated_s"], strict=True)
                     if x > 0]
    return {"layer_mape": float(np.mean(errs)) if errs else float("nan"), "mappings": mappings}


def _machine() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return f"{line.partition(':')[2].strip()}, {len(available_cpus())} CPUs"
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs"


# -- the report -------------------------------------------------------------------------------
def report_markdown(r: Report) -> str:
    lines = [
        f"# {r.workload} on {r.platform}: measured vs simulated",
        "",
        f"Machine: {r.machine}. {r.frames} frames per run, {r.repeats} runs per mapping (median); "
        f"input scale {r.scale:g}. Simulated: DES with contention and lognormal noise sigma "
        f"{r.noise_sigma:.3f} per stage execution (the measured frame jitter), {10 * r.frames} frames.",
        "",
        "| mapping | CPUs | measured (frames/s) | runs |"
        + "".join(f" {c} (frames/s) | error |" for c in r.costs),
        "|---|---|---:|---|" + "---:|---:|" * len(r.costs),
    ]
    for m in r.mappings:
        runs = ", ".join(f"{x:.2f}" for x in m.measured_runs_fps)
        sims = "".join(f" {m.by_cost[c]['simulated_fps']:.2f} | {m.by_cost[c]['simulated_fps'] / m.measured_fps - 1:+.1%} |"
                       for c in r.costs)
        lines.append(f"| `{m.mapping}` | {m.stage_cpus} | {m.measured_fps:.2f} | {runs} |{sims}")
    mapes = ", ".join(f"{c} **{r.layer_mape_of(c):.1%}**" for c in r.costs)
    lines += ["", f"Layer MAPE: {mapes} (mean |simulated / measured - 1| over every layer "
              f"of {', '.join('`' + m.mapping + '`' for m in r.layer_rows)}; the per-layer table is the "
              f"{r.costs[0]} model's).", ""]
    header = "| layer | name |" + "".join(f" {m.mapping.split(':')[0]} measured (ms) | simulated (ms) | error |"
                                          for m in r.layer_rows)
    lines += [header, "|---:|---|" + "---:|---:|---:|" * len(r.layer_rows)]
    for i, name in enumerate(r.layer_names):
        row = f"| {i + 1} | {name} |"
        for m in r.layer_rows:
            a, b = m.layer_measured_s[i], m.layer_simulated_s[i]
            row += f" {a * 1e3:.3f} | {b * 1e3:.3f} | {b / a - 1:+.1%} |" if a > 0 else " - | - | - |"
        lines.append(row)
    loads = [x for m in r.mappings for x in m.load]
    other = [x for m in r.mappings for x in m.other_cpu if x == x]
    if loads:
        lines += ["", f"1-minute load average before the runs: {min(loads):.2f} to {max(loads):.2f}."]
    if other:
        lines += [f"Other processes used {min(other):.0%} to {max(other):.0%} of the CPUs during the runs "
                  f"(median {float(np.median(other)):.0%})."]
    return "\n".join(lines) + "\n"


def plot_report(r: Report, path: str | os.PathLike) -> None:
    import matplotlib.pyplot as plt

    from hetsim.figures import save_figure

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    x = np.arange(1, len(r.layer_names) + 1)
    for m, marker in zip(r.layer_rows, "os^vD<>", strict=False):
        ep = m.mapping.split(":")[0]
        ax1.plot(x, np.array(m.layer_measured_s) * 1e3, marker, ls="-", label=f"{ep} measured")
        ax1.plot(x, np.array(m.layer_simulated_s) * 1e3, marker, ls="--", mfc="none", label=f"{ep} simulated")
    ax1.set_xlabel("layer")
    ax1.set_ylabel("time per frame (ms)")
    ax1.set_title(f"{r.workload}: per-layer time (MAPE {r.layer_mape:.1%})")
    ax1.legend(fontsize=8)
    ax1.grid(alpha=0.3)
    labels = [m.mapping if len(m.mapping) < 22 else m.mapping.replace("|", "|\n") for m in r.mappings]
    pos = np.arange(len(r.mappings))
    ax2.bar(pos - 0.2, [m.measured_fps for m in r.mappings], 0.4, label="measured")
    ax2.bar(pos + 0.2, [m.simulated_fps for m in r.mappings], 0.4, label="simulated (DES)")
    for p, m in zip(pos, r.mappings, strict=True):
        ax2.annotate(f"{m.error:+.0%}", (p + 0.2, m.simulated_fps), ha="center", va="bottom", fontsize=8)
    ax2.set_xticks(pos, labels, fontsize=7)
    ax2.set_ylabel("throughput (frames/s)")
    ax2.set_title("pipeline throughput")
    ax2.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path, dpi=110)


def write_report(r: Report, out_dir: str | os.PathLike) -> list[Path]:
    """report.md, report.png and report.json in ``out_dir``."""
    import json

    out = Path(out_dir)
    paths = [out / "report.md", out / "report.png", out / "report.json"]
    with atomic_write(paths[0]) as f:
        f.write(report_markdown(r))
    plot_report(r, paths[1])
    with atomic_write(paths[2]) as f:
        json.dump(r.to_dict(), f, indent=2)
    return paths
