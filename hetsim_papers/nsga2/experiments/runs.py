"""The NSGA-II runs every experiment of the reproduction reads, cached per process.

A run is an exploration (:func:`hetsim.exploration.explore`) of the thesis's problem on the
calibrated cluster with :class:`~hetsim_papers.nsga2.explorers.HybridNSGA2`: the analytical model's
coefficients come from the thesis's tuning procedure on that cluster (one tuning per network and
device view, :func:`coefficients`), then NSGA-II searches and the Pareto extremes are deployed.
The full scale is the thesis's (population 1000, 100 generations, 24-inference benchmark runs),
over several seeds (the thesis ran one); ``--quick`` is a small population, few generations and
short benchmark runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from hetsim.experiment import Context
from hetsim.exploration import Exploration, explore
from hetsim_papers.nsga2.cost import Coefficients
from hetsim_papers.nsga2.experiments.calibration import LABEL, NETWORKS, calibrated_platform
from hetsim_papers.nsga2.explorers import HybridNSGA2, HybridProblem, ThesisModel, tune

PAPER = "nsga2"
#: The chromosome runs of E1 (the thesis's convergence plots show naive and p = 2, 4, 6; its
#: real-vs-predicted bars add p = 3 and 5).
E1_RUNS = (("naive", 0), ("advanced", 2), ("advanced", 3), ("advanced", 4), ("advanced", 5), ("advanced", 6))
PLOTTED = (("naive", 0), ("advanced", 2), ("advanced", 4), ("advanced", 6))


@dataclass(frozen=True)
class Scale:
    pop_size: int
    n_gen: int
    frames: int       # inferences per benchmark run
    warmup: int
    seeds: tuple[int, ...]
    networks: tuple[str, ...]
    #: DenseNet-121's runs take ~30x AlexNet's, and 16-device runs ~2x 8-device ones: fewer seeds
    #: of them at full scale.
    densenet_seeds: int = 1
    gpu_seeds: int = 1

    def seeds_of(self, network: str, view: str = "cpu") -> tuple[int, ...]:
        n = len(self.seeds)
        if network == "densenet121-onnx":
            n = min(n, self.densenet_seeds)
        if view != "cpu":
            n = min(n, self.gpu_seeds)
        return self.seeds[:n]


FULL = Scale(pop_size=1000, n_gen=100, frames=24, warmup=4, seeds=(0, 1, 2), networks=NETWORKS)
#: CI-sized: AlexNet and VGG-16 only (DenseNet's 668 layers make every evaluation ~30x AlexNet's).
QUICK = Scale(pop_size=40, n_gen=12, frames=6, warmup=1, seeds=(0,), networks=NETWORKS[:2])


def scale(ctx: Context | bool) -> Scale:
    quick = ctx if isinstance(ctx, bool) else ctx.quick
    return QUICK if quick else FULL


def run_label(chromosome: str, p: int) -> str:
    return {"naive": "Naive", "split-point": "Vertical"}.get(chromosome, f"Advanced-{p}")


@lru_cache(maxsize=16)
def problem(network: str, view: str, quick: bool) -> HybridProblem:
    s = scale(quick)
    return HybridProblem(calibrated_platform(), network, devices=view, frames=s.frames, warmup=s.warmup)


@lru_cache(maxsize=16)
def coefficients(network: str, view: str, quick: bool) -> Coefficients:
    """The thesis's tuning procedure on the calibrated cluster (seeded noise)."""
    pr = problem(network, view, quick)
    rng = np.random.default_rng(7)
    return tune(pr, lambda placement, phase: pr.measure(placement, rng))


@lru_cache(maxsize=8)
def hv_reference(network: str, quick: bool) -> tuple[float, float, float]:
    """The hypervolume's reference point, common to every run of a network: twice the model's
    objectives of the whole network on one CPU [choice]."""
    pr = problem(network, "cpu", quick)
    model = ThesisModel(pr.space, coefficients(network, "cpu", quick))
    single = model.predict(pr.single_device(pr.space.device_names[0]))
    return (2 * single["energy_J"], 2 * single["memory_MiB"], 2 * single["latency_s"])


#: Finished explorations by (network, view, chromosome, p, quick, seed): every experiment reads them.
_RUNS: dict[tuple, Exploration] = {}


def _search(key: tuple) -> Exploration:
    """One exploration (in a worker process or here), its problem left out: a problem does not
    travel between processes, and the caller has the same one (:func:`problem`)."""
    network, view, chromosome, p, quick, seed = key
    s = scale(quick)
    explorer = HybridNSGA2(chromosome=chromosome, p=max(p, 1), pop_size=s.pop_size, n_gen=s.n_gen,
                           coefficients=coefficients(network, view, quick),
                           hv_ref=hv_reference(network, quick))
    return dataclasses.replace(explore(problem(network, view, quick), explorer, seed=seed),
                               problem=None)  # type: ignore[arg-type]  # put back by prefetch


def prefetch(ctx: Context | None, keys) -> None:
    """Run the explorations of ``keys`` not run yet, in parallel on the context's workers
    (:meth:`~hetsim.experiment.Context.map`; each run depends only on its key, so the results are
    those of a loop); their tunings first, here, so that forked workers inherit them."""
    todo = [k for k in dict.fromkeys(keys) if k not in _RUNS]
    if not todo:
        return
    for network, view, _c, _p, quick, _s in todo:
        coefficients(network, view, quick)
        hv_reference(network, quick)
    done = ctx.map(_search, todo, "NSGA-II runs") if ctx is not None else [_search(k) for k in todo]
    for key, e in zip(todo, done, strict=True):
        _RUNS[key] = dataclasses.replace(e, problem=problem(key[0], key[1], key[4]))


def run(network: str, view: str, chromosome: str, p: int, quick: bool, seed: int,
        ctx: Context | None = None) -> Exploration:
    key = (network, view, chromosome, p, quick, seed)
    prefetch(ctx, [key])
    return _RUNS[key]


def runs(ctx: Context, view: str, which=E1_RUNS) -> dict[tuple[str, str, int], list[Exploration]]:
    """(network, chromosome, p) -> the runs of every seed (run in parallel, :func:`prefetch`)."""
    s = scale(ctx)
    keys = {(net, c, p): [(net, view, c, p, ctx.quick, ctx.seed + seed) for seed in s.seeds_of(net, view)]
            for net in s.networks for c, p in which}
    # the longest first, so that the workers finish together: DenseNet's, then the 16-device ones
    order = sorted((k for ks in keys.values() for k in ks),
                   key=lambda k: (k[0] != "densenet121-onnx", k[1] == "cpu"))
    prefetch(ctx, order)
    return {nck: [_RUNS[k] for k in ks] for nck, ks in keys.items()}


def final_minima(explorations: list[Exploration]) -> dict[str, float]:
    """Median over seeds of each objective's population minimum at the last generation."""
    last = [e.info["generations"].iloc[-1] for e in explorations]
    return {obj: float(np.median([row[f"min_{obj}"] for row in last]))
            for obj in ("energy_J", "memory_MiB", "latency_s")}


def curve(explorations: list[Exploration], objective: str) -> np.ndarray:
    """Median over seeds of an objective's population minimum per generation."""
    return np.median(np.vstack([e.info["generations"][f"min_{objective}"].to_numpy() for e in explorations]),
                     axis=0)


__all__ = ["E1_RUNS", "FULL", "LABEL", "PAPER", "PLOTTED", "QUICK", "Scale", "coefficients", "curve",
           "final_minima", "hv_reference", "prefetch", "problem", "run", "run_label", "runs", "scale"]
