"""Hybrid (vertical + horizontal LOP) CNN partitioning over edge devices with NSGA-II
(Savva, "Hybrid CNN Partitioning On Edge Devices", MSc thesis, Leiden 2023; seed 004).

The thesis's method, as explorers of hetsim's one registry (runnable from ``hetsim explore``)::

    problem = HybridProblem("xavier-nx-x8", "alexnet-onnx", devices="cpu")
    result = explore(problem, make_explorer("NSGA-II", chromosome="advanced", p=2), seed=0)
    result.info["generations"]         # per generation: min of each objective, hypervolume
    result.info["pareto"]              # the final Pareto set (genomes, model objectives)
    result.trials                      # the tuning runs and the deployed Pareto points, measured

1. **Tuning** (:mod:`.tuning`): the thesis's procedure, run as trials on the problem's "real"
   cluster (the DES with the ncnn cost model), writes the coefficients JSON of the analytical
   model (unless ``coefficients`` gives one).
2. **Search** (:mod:`.search`): pymoo's NSGA-II over a chromosome (:mod:`.encoding`: naive,
   advanced p x n, or the vertical Split-Point baseline), the analytical model (:mod:`.fitness`,
   eqs. 4.7-4.10, vectorised) as the fitness.
3. **Deployment**: the Pareto points best in each objective are measured on the real cluster, as
   the thesis deployed them with AutoDiCE (its Tables 3, 5, 6): trials with phase ``deploy:<objective>``.

Registered: ``NSGA-II`` (every parameter free), ``NSGA-II-naive``, ``NSGA-II-adv`` (the advanced
chromosome, ``p``), ``Split-Point`` (the vertical baseline of [18]).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from hetsim.errors import HetsimError
from hetsim.exploration._checks import check_choice
from hetsim.exploration.base import Explorer, Session
from hetsim_papers.nsga2.cost import Coefficients
from hetsim_papers.nsga2.encoding import (
    CHROMOSOMES,
    SHARES,
    Advanced,
    Chromosome,
    Naive,
    SplitPoint,
    make_chromosome,
)
from hetsim_papers.nsga2.fitness import OBJECTIVES, Fitness, ThesisModel
from hetsim_papers.nsga2.problem import HybridProblem, HybridResult
from hetsim_papers.nsga2.search import OPERATORS, SearchResult, run_nsga2
from hetsim_papers.nsga2.space import VIEWS, Decoded, HybridSpace, device_view
from hetsim_papers.nsga2.tuning import tune

#: Which Pareto points are measured on the real cluster after the search.
DEPLOY = ("extremes", "none")


class HybridNSGA2(Explorer[HybridProblem]):
    """NSGA-II over hybrid partitions (the module docstring): tune, search, deploy.

    Parameters
    ----------
    chromosome : {"advanced", "naive", "split-point"}
    p : int, default 2
        Splits per layer of the advanced chromosome (thesis: 2..6).
    pop_size, n_gen : int, default 1000, 100
        The thesis's population and generations (after the random initial population).
    operators : {"pymoo-0.5", "pymoo-0.6"}
        pymoo 0.5's integer operators, emulated (the thesis's), or 0.6's.
    shares : {"equal", "multiplicity"}
        Channels of a split layer dealt equally over its devices, or by how many genes name each.
    repair : {"extend", "none"}
        Row 1 of the advanced (and split-point) genome extended to cover every layer.
    coefficients : Coefficients, path or None
        The analytical model's JSON; None: regenerate it by the thesis's tuning procedure.
    fc_macs : {"product", "printed"}
        eq. 4.7's FC MACs: H^X x H^Y, or the thesis's printed H^X + H^Y.
    sync_penalty : bool
        Add §4.3.2's penalty to late slices of split layers.
    deploy : {"extremes", "none"}
        Measure the Pareto points best in energy, memory and latency on the real cluster.
    hv_ref : sequence of 3 floats or None
        Reference point of the hypervolume log (energy J, memory MiB, latency s).
    """

    def __init__(self, chromosome: str = "advanced", p: int = 2, pop_size: int = 1000, n_gen: int = 100,
                 operators: str = "pymoo-0.5", shares: str = "equal", repair: str = "extend",
                 coefficients=None, fc_macs: str = "product", sync_penalty: bool = True,
                 deploy: str = "extremes", hv_ref=None):
        self.chromosome = chromosome
        self.p = p
        self.pop_size = pop_size
        self.n_gen = n_gen
        self.operators = operators
        self.shares = shares
        self.repair = repair
        self.coefficients = coefficients
        self.fc_macs = fc_macs
        self.sync_penalty = sync_penalty
        self.deploy = deploy
        self.hv_ref = hv_ref

    @property
    def name(self) -> str:
        if self.chromosome == "advanced":
            return f"Advanced-{self.p}"
        if not isinstance(self.chromosome, str):   # validate() refuses it; the name must not crash first
            return "NSGA-II"
        return {"naive": "Naive", "split-point": "Split-Point"}.get(self.chromosome, str(self.chromosome))

    @classmethod
    def make_problem(cls, platform, workload, eps=None, noise_sigma: float | None = None,
                     objective: str = "latency") -> HybridProblem:
        """The problem ``hetsim explore`` builds for this explorer: ``eps`` a view (``cpu``,
        ``cpu+gpu``) or EP names; ``noise_sigma`` None keeps the problem's default."""
        if noise_sigma is None:
            return HybridProblem(platform, workload, devices=eps or "cpu", objective=objective)
        return HybridProblem(platform, workload, devices=eps or "cpu", noise_sigma=noise_sigma,
                             objective=objective)

    def validate(self, problem) -> None:
        if not isinstance(problem, HybridProblem):
            raise HetsimError(f"{self.name}: needs a HybridProblem (a CNN on a device view, measured as "
                              f"AutoDiCE's benchmark mode), got {type(problem).__name__}")
        check_choice(self.name, "chromosome", self.chromosome, CHROMOSOMES)
        check_choice(self.name, "operators", self.operators, OPERATORS)
        check_choice(self.name, "shares", self.shares, SHARES)
        check_choice(self.name, "repair", self.repair, ("extend", "none"))
        check_choice(self.name, "fc_macs", self.fc_macs, ("product", "printed"))
        check_choice(self.name, "deploy", self.deploy, DEPLOY)
        if not isinstance(self.sync_penalty, bool):
            raise HetsimError(f"{self.name}: sync_penalty={self.sync_penalty!r} must be true or false")
        self.make_chromosome(problem.space)       # p against the devices, one line
        if self.hv_ref is not None and not (
                isinstance(self.hv_ref, list | tuple) and len(self.hv_ref) == 3
                and all(isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0
                        for v in self.hv_ref)):
            raise HetsimError(f"{self.name}: hv_ref={self.hv_ref!r} must be 3 finite positive numbers (J, MiB, s)")

    def make_chromosome(self, space: HybridSpace) -> Chromosome:
        return make_chromosome(self.chromosome, space, p=self.p, shares=self.shares, repair=self.repair)

    def load_coefficients(self, problem: HybridProblem, session: Session | None = None) -> Coefficients:
        if isinstance(self.coefficients, Coefficients):
            return self.coefficients
        if isinstance(self.coefficients, str | Path):
            return Coefficients.from_json(self.coefficients)
        if self.coefficients is not None:
            raise HetsimError(f"{self.name}: coefficients must be a Coefficients, a JSON path or None, got "
                              f"{type(self.coefficients).__name__}")
        measure = (lambda placement, phase: session.measure(placement, phase)) if session is not None else None
        return tune(problem, measure, fc_macs=self.fc_macs)

    def run(self, session: Session[HybridProblem]):
        problem = session.problem
        coefficients = self.load_coefficients(problem, session)
        if coefficients.fc_macs != self.fc_macs and self.coefficients is None:
            raise HetsimError(f"{self.name}: coefficients were tuned with fc_macs={coefficients.fc_macs}")
        model = ThesisModel(problem.space, coefficients, self.sync_penalty)
        chromosome = self.make_chromosome(problem.space)
        result = run_nsga2(chromosome, model, self.pop_size, self.n_gen, self.operators, session.seed,
                           self.hv_ref)
        front = result.pareto()
        front.insert(1, "mapping", summarize(problem.space, chromosome.decode(chromosome.repair(result.X))))
        session.info.update({
            "generations": result.generations.assign(algorithm=self.name),
            "pareto": front, "search": result, "coefficients": coefficients,
            "chromosome": {"name": chromosome.name, "genes": chromosome.n_var,
                           "log10_space": chromosome.log10_space_size},
        })
        if self.deploy == "none":
            return None
        best, best_value = None, float("inf")
        for objective in OBJECTIVES:
            i = result.argmin(objective)
            placement = problem.space.placement(chromosome.decode(chromosome.repair(result.X[i:i + 1])), 0,
                                                problem.cost)
            measured: HybridResult = session.measure(placement, f"deploy:{objective.split('_')[0]}")
            session.info.setdefault("deployed", {})[objective] = {
                "genome": result.X[i].tolist(), "predicted": dict(zip(OBJECTIVES, result.F[i].tolist(), strict=True)),
                "placement": placement, "real": measured}
            if problem.value(measured) < best_value:
                best, best_value = placement, problem.value(measured)
        return best   # the deployed Pareto point best in the problem's objective (not a tuning run)


def summarize(space: HybridSpace, decoded: Decoded) -> list[str]:
    """Each individual's mapping in one line: layers per device (a split layer counts on each of
    its devices) and how many layers are split, e.g. ``nx01-cpu 14, nx02-cpu 12; 2 split``."""
    out = []
    for i in range(len(decoded)):
        slots = decoded.slots[i]
        counts = np.bincount(slots[slots >= 0], minlength=space.n_devices)
        split = int((slots[:, 1] >= 0).sum()) if slots.shape[1] > 1 else 0
        used = ", ".join(f"{space.device_names[d]} {c}" for d, c in enumerate(counts) if c)
        out.append(f"{used}; {split} split")
    return out


def pareto_placements(exploration) -> list:
    """The final Pareto set of an NSGA-II exploration as placements (the one mapping object)."""
    problem, result = exploration.problem, exploration.info["search"]
    explorer = HybridNSGA2(**exploration.params)
    chromosome = explorer.make_chromosome(problem.space)
    decoded = chromosome.decode(chromosome.repair(result.X))
    return [problem.space.placement(decoded, i, problem.cost) for i in range(len(decoded))]



__all__ = [
    "CHROMOSOMES", "DEPLOY", "OBJECTIVES", "OPERATORS", "SHARES", "VIEWS", "Advanced", "Chromosome",
    "Coefficients", "Decoded", "Fitness", "HybridNSGA2", "HybridProblem", "HybridResult", "HybridSpace",
    "Naive", "SearchResult", "SplitPoint", "ThesisModel", "device_view", "make_chromosome", "pareto_placements",
    "run_nsga2", "summarize", "tune",
]
