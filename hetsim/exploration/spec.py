"""One exploration as data: :class:`ExplorationSpec`, the description ``hetsim explore``, ``hetsim
sweep`` and the tournament all build an exploration from, and :func:`build`, the one function that
turns it into a problem, an explorer and the stopping rules::

    spec = ExplorationSpec.make(platform="chiplet-c2", workload="synthnet", algorithm="ES",
                                problem={"depths": [2]})
    setup = build(spec)      # loads, checks and resolves the defaults (setup.notes say what it chose)
    result = setup.run()     # explore(setup.problem, setup.explorer, setup.termination, spec.seed)

The command line fills a spec from its flags and a sweep cell from its SPEC's base and axes; both
then build the same exploration (same problem, same explorer, the same trial table for the same
seed). Errors are one line naming the setting by the caller's name for it (``names``: the flags
``--eps``, ``--depth``, ... on the command line; the keys ``problem.eps``, ... elsewhere).

The defaults :func:`build` resolves (each a choice stated in a note where it is one):

* ``algorithm``: Shisha; NSGA-II-pipe for a Pareto front (``problem.track``) or an objective other
  than throughput (Shisha optimises throughput only); PS over Paper I's per-core space
  (``problem.cores``).
* A pipeline's space: ``problem.assignment`` ``permutations`` of whole EPs (Pipe-it: disjoint core
  groups where a cluster's cores are EPs); ``auto`` chooses permutations where the EPs lie on
  distinct clusters or accelerators, else core groups. Candidate EPs without ``problem.eps``: each
  cluster whole and each accelerator, fastest first (:func:`hetsim.exploration.space.default_eps`).
  Depths: 2..the number of EPs (Pipe-it: 1..), larger ones capped. A trial: Paper I's (every stage
  run alone), or with ``measurement.engine: des`` a stream of 20 frames through the DES.
* A placement's: objective latency; candidate EPs each cluster whole and each accelerator; a trial
  one inference in closed form, [choice] a noisy one in the DES without contention (the closed
  form's model, with noise on top), unless the engine or contention is given.
* An algorithm with a problem of its own (an Explorer class with ``make_problem``: the hybrid
  partitioners) builds it.

A setting that does not apply to the algorithm's problem (``--depth`` for a placement) is refused
with one line when ``strict`` (one exploration: the command line); otherwise (a sweep's base, shared
by every algorithm of its axis) it is left out of the problems it does not apply to.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError

from hetsim import bounds as B
from hetsim.bounds import OptClock_s, OptCost_s, OptFps, OptFrames, OptNoiseSigma, OptTrials, Seed
from hetsim.errors import HetsimError

#: What an exploration optimises (or tracks beside it).
OBJECTIVES = ("throughput", "latency", "energy", "memory")
Objective = Literal["throughput", "latency", "energy", "memory"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ProblemSpec(_Strict):
    """The design space (:class:`~hetsim.exploration.PipelineProblem` /
    :class:`~hetsim.exploration.PlacementProblem` arguments); unset fields take the defaults of
    the module's docstring."""

    assignment: Literal["auto", "permutations", "cores"] | None = Field(
        None, description="Pipelines: 'permutations' (stages on distinct whole EPs, Shisha's space; the "
        "default), 'cores' (stages on disjoint core groups, Pipe-it's; Pipe-it's default), 'auto' "
        "(permutations where the EPs lie on distinct clusters or accelerators, else cores).")
    eps: list[str] | None = Field(None, description="Candidate EP names (default: each cluster whole "
                                  "and each accelerator, fastest first).")
    cores: Annotated[int | None, B._number(B.COUNT, integer=True, optional=True)] = Field(
        None, description="Pipelines: Paper I's per-core space, stages over the first N cores.")
    depths: list[Annotated[int, B._number((1, 1024), "stages", integer=True)]] | None = Field(
        None, description="Pipeline depths (default: 2..the number of EPs; larger ones are capped).")
    space_limit: Annotated[int | None, B._number((1, B.SEED[1]), integer=True, optional=True)] = Field(
        None, description="Refuse to enumerate larger spaces (default: hetsim's 2,000,000).")
    force: StrictBool = Field(False, description="Enumerate past space_limit.")
    objective: Objective | None = Field(
        None, description="What to optimise (default: throughput for pipelines, latency for placements).")
    track: list[Objective] | None = Field(
        None, description="Pipelines: other objectives measured in every trial (a Pareto front's).")
    comm: Literal["free", "consumer", "copy", "mpi"] | None = Field(
        None, description="Placements: where a transfer runs (default: the platform's runtime).")
    caching: StrictBool | None = Field(
        None, description="Placements: false moves a tensor once per consuming op.")


class MeasurementSpec(_Strict):
    """How a trial is measured (:class:`hetsim.exploration.Measurement`; unset fields keep the
    defaults of the module's docstring)."""

    mode: Literal["stages", "stream"] | None = None
    frames_per_trial: OptFrames = None
    engine: Literal["analytic", "des"] | None = None
    noise_sigma: OptNoiseSigma = None
    remeasure: StrictBool | None = None
    contention: StrictBool | None = None
    trial_overhead_s: OptCost_s = None
    database_cost_s: OptCost_s = None
    database_cost_per_config_s: OptCost_s = None


class TerminationSpec(_Strict):
    """Outside limits of the exploration (any one stops it)."""

    max_trials: OptTrials = None
    max_clock_s: OptClock_s = None
    target_fps: OptFps = None


class ExplorationSpec(_Strict):
    """One exploration: what it runs on, with which algorithm, over which space, measured how, and
    until when."""

    platform: str = Field(description="Platform name or YAML path.")
    workload: str = Field(description="Workload name or YAML path.")
    set: dict[str, Any] = Field(default_factory=dict,
                                description="--set overrides of platform fields: key.path: value.")
    dvfs: str | None = Field(None, description="DVFS preset (or cluster=level,...).")
    cost_model: str | None = Field(None, description="The cost model (default: the platform's).")
    cost_table: str | None = Field(None, description="Measured times (a CSV or a profile directory).")
    fallback: str | None = Field(None, description="The model pricing what cost_table lacks.")
    algorithm: str | None = Field(None, description="A registered algorithm (default: see above).")
    params: dict[str, Any] = Field(default_factory=dict, description="The algorithm's parameters.")
    problem: ProblemSpec = Field(default_factory=lambda: ProblemSpec.model_validate({}))
    measurement: MeasurementSpec = Field(default_factory=lambda: MeasurementSpec.model_validate({}))
    termination: TerminationSpec = Field(default_factory=lambda: TerminationSpec.model_validate({}))
    seed: Seed = Field(0, description="Seed of every random choice.")

    @classmethod
    def make(cls, names: Mapping[str, str] | None = None, **data) -> ExplorationSpec:
        """Validate ``data``; the first error is one line naming the setting (``names``: how the
        caller calls each key path, e.g. ``{"problem.eps": "--eps"}``; default the key path)."""
        try:
            return cls.model_validate(data)
        except ValidationError as e:
            raise HetsimError(_one_line(e, names or {})) from None


def _one_line(exc: ValidationError, names: Mapping[str, str]) -> str:
    err = exc.errors()[0]
    path = ".".join(str(p) for p in err["loc"] if not isinstance(p, int))
    what = names.get(path, path) or "exploration"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        model: Any = ExplorationSpec
        for part in err["loc"][:-1]:
            model = model.model_fields[str(part)].annotation
        allowed = list(model.model_fields)
        near = difflib.get_close_matches(str(err["loc"][-1]), allowed, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return f"{what}: unknown key{hint}; allowed: {', '.join(allowed)}"
    if err["type"] == "missing":
        return f"{what} is required"
    if err["type"] == "value_error":   # hetsim.bounds' checks: "must be ... in [a, b]"
        return f"{what} {msg} (got {err['input']!r})"
    return f"{what}: {err['input']!r} is not allowed: {msg[:1].lower() + msg[1:]}"


# -- the built exploration ----------------------------------------------------------------------------
@dataclass
class ExplorationSetup:
    """An exploration ready to run: the spec it came from, the algorithm's name and problem kind
    (``pipeline``, ``placement``, ``hybrid``), the loaded inputs, the problem, the explorer, the
    stopping rules and the notes on what :func:`build` chose."""

    spec: ExplorationSpec
    algorithm: str
    kind: str
    platform: Any
    workload: Any
    cost: Any
    problem: Any
    explorer: Any
    termination: list = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def run(self, progress: bool = False):
        """:func:`hetsim.exploration.explore` of this setup (an :class:`Exploration`)."""
        from hetsim.exploration.base import explore

        return explore(self.problem, self.explorer, self.termination or None, seed=self.spec.seed,
                       progress=progress)


class _Names:
    """How the caller names each setting in messages (a flag, or the key path)."""

    def __init__(self, names: Mapping[str, str] | None):
        self.names = dict(names or {})

    def __call__(self, key: str) -> str:
        return self.names.get(key, key)


def build(spec: ExplorationSpec, *, names: Mapping[str, str] | None = None, strict: bool = True,
          noise_free: bool = False, cache: bool = False) -> ExplorationSetup:
    """The exploration ``spec`` describes (the module's docstring says which defaults it resolves).

    ``names``: how errors and notes name each setting (default its key path). ``strict``: refuse a
    setting the algorithm's problem ignores (else leave it out). ``noise_free``: the same problem
    measured without noise (what the candidate an exploration settles on is really worth).
    ``cache``: share the loaded platforms, workloads, cost models and problems with the other
    explorations of this process (a sweep's cells)."""
    from hetsim.exploration.registry import ALGORITHMS, algorithms

    n = _Names(names)
    notes: list[str] = []
    inputs = _Inputs.of(spec, cache)
    platform, workload, cost = inputs.platform, inputs.workload, inputs.cost
    from hetsim.cost import CompositeCostModel

    if isinstance(cost, CompositeCostModel):
        measured, total = cost.coverage(workload, [platform.ep(x) for x in _places(platform)])
        notes.append(f"{n('cost_table')}: {measured} of {total} ({cost.keyed_by}, EP) times measured on "
                     f"{', '.join(_places(platform))}; the rest from the {cost.fallback.name} model")
    algorithms()   # load the registry
    if spec.algorithm is not None and spec.algorithm not in ALGORITHMS:
        raise HetsimError(f"{n('algorithm')}: unknown algorithm {spec.algorithm!r}; allowed: "
                          f"{', '.join(ALGORITHMS)}")
    kind = ALGORITHMS[spec.algorithm].problem if spec.algorithm is not None else "pipeline"
    p, t = spec.problem, spec.termination
    if kind == "pipeline":
        objective, track = _pipeline_objectives(platform, p, n)
        name = spec.algorithm or _default_algorithm(p, objective, n, notes)
        if strict:
            _refuse(name, ", a pipeline algorithm (placements only: HOPE:GS, HOPE:LP, StarPU-DMDAR, ...)", n,
                    ("problem.comm", p.comm is not None), ("problem.caching", p.caching is not None))
    else:
        name = str(spec.algorithm)
        if strict:
            _refuse(name, ", a placement algorithm (it places ops on EPs, it does not cut stages)", n,
                    ("problem.depths", p.depths is not None), ("problem.cores", p.cores is not None),
                    ("problem.assignment", p.assignment is not None), ("problem.track", p.track is not None),
                    ("termination.target_fps", t.target_fps is not None), ("problem.force", p.force))
    _check_params(name, ALGORITHMS[name].parameters(), spec.params, n)
    from hetsim.exploration.registry import make_explorer

    explorer = make_explorer(name, **spec.params)
    if kind == "pipeline":
        args = _pipeline_args(spec, inputs, name, objective, track, n, notes, noise_free)
        if p.cores is not None and (name == "Shisha" or getattr(explorer, "start", None) == "shisha"):
            raise HetsimError(f"{n('algorithm')} {name} gives each stage a whole EP (Shisha's seed), but "
                              f"{n('problem.cores')} fixes the stages' core groups (Paper I); with "
                              f"{n('problem.cores')} use PS, PS-nohints, ES, RW, HC, SA or NSGA-II-pipe")
    elif getattr(type(explorer), "make_problem", None) is not None:
        args = _own_args(spec, inputs, name, n, strict, noise_free)
    else:
        args = _placement_args(spec, inputs, name, n, strict, noise_free)
    problem = (_cached_problem(inputs.key, args) if cache
               else _make_problem(platform, workload, cost, json.loads(args)))
    return ExplorationSetup(spec, name, kind, platform, workload, cost, problem, explorer,
                            _terminations(t), notes)


# -- inputs ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Inputs:
    key: tuple
    platform: Any
    workload: Any
    cost: Any

    @classmethod
    def of(cls, spec: ExplorationSpec, cache: bool) -> _Inputs:
        key = (spec.platform, overrides(spec.set), spec.dvfs, spec.workload, spec.cost_model,
               spec.cost_table, spec.fallback)
        if cache:
            return _cached_inputs(key)
        return cls(key, *_load(*key))


def overrides(sets: Mapping[str, Any]) -> tuple[str, ...]:
    """``--set key=value`` strings of a ``set`` mapping (read back as YAML: a string is its text,
    anything else JSON, which YAML reads back as itself)."""
    return tuple(f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in sets.items())


def _load(platform_name: str, sets: tuple[str, ...], dvfs: str | None, workload_name: str,
          cost_model: str | None, cost_table: str | None, fallback: str | None) -> tuple:
    from hetsim.cost import make_cost_model
    from hetsim.platform import load_platform
    from hetsim.workload import load_workload

    platform = load_platform(platform_name, list(sets), dvfs)
    workload = load_workload(workload_name)
    return platform, workload, make_cost_model(platform, cost_table, fallback, cost_model, workload)


@lru_cache(maxsize=128)
def cached_platform(name: str, sets: tuple[str, ...], dvfs: str | None):
    """A platform loaded once per process (a sweep's cells share it)."""
    from hetsim.platform import load_platform

    return load_platform(name, list(sets), dvfs)


@lru_cache(maxsize=64)
def cached_workload(name: str):
    from hetsim.workload import load_workload

    return load_workload(name)


@lru_cache(maxsize=128)
def cached_cost(platform_key: tuple, workload: str, cost_model: str | None, cost_table: str | None,
                fallback: str | None):
    from hetsim.cost import make_cost_model

    return make_cost_model(cached_platform(*platform_key), cost_table, fallback, cost_model,
                           cached_workload(workload))


@lru_cache(maxsize=128)
def _cached_inputs(key: tuple) -> _Inputs:
    platform_name, sets, dvfs, workload, cost_model, cost_table, fallback = key
    return _Inputs(key, cached_platform(platform_name, sets, dvfs), cached_workload(workload),
                   cached_cost((platform_name, sets, dvfs), workload, cost_model, cost_table, fallback))


# -- pipelines ------------------------------------------------------------------------------------------
def _pipeline_objectives(platform, p: ProblemSpec, n: _Names) -> tuple[str, list[str]]:
    """The objective best is judged by and the tracked ones; energy only with a power model."""
    objective: str = p.objective or "throughput"
    track: list[str] = [o for o in (p.track or []) if o != objective]
    if "energy" in (objective, *track) and not platform.has_power_model:
        raise HetsimError(f"{n('problem.objective')}/{n('problem.track')} energy: {platform.name} has no "
                          f"power model (every cluster's DVFS level and every accelerator needs active and "
                          f"idle watts, docs/platforms.md); allowed here: throughput, latency, memory")
    return objective, track


def _default_algorithm(p: ProblemSpec, objective: str, n: _Names, notes: list[str]) -> str:
    """The default fits the request: Shisha for throughput over whole EPs; Pipe-search over
    Paper I's per-core stages; NSGA-II for a front or another objective (Shisha and Pipe-search
    optimise throughput only). Without the plugin that adds Shisha or Pipe-search, hetsim's own
    hill climbing."""
    from hetsim.exploration.registry import algorithms

    installed = {a.name for a in algorithms("pipeline")}
    if p.track:
        notes.append(f"{n('problem.track')}: searching with NSGA-II-pipe (pymoo's NSGA-II on both "
                     f"objectives); {n('algorithm')} chooses another algorithm, whose trials then give the front")
        return "NSGA-II-pipe"
    if objective != "throughput":
        notes.append(f"{n('problem.objective')} {objective}: searching with NSGA-II-pipe (Shisha, the "
                     f"default, optimises throughput only); {n('algorithm')} chooses another")
        return "NSGA-II-pipe"
    if p.cores is not None:
        if "PS" in installed:
            notes.append(f"{n('problem.cores')}: searching with PS (Pipe-search, Paper I's per-core space; "
                         f"Shisha gives each stage a whole EP); {n('algorithm')} chooses another")
            return "PS"
        notes.append(f"{n('problem.cores')}: searching with HC (hill climbing; PS, the default here, is "
                     f"not installed); {n('algorithm')} chooses another")
        return "HC"
    if "Shisha" in installed:
        return "Shisha"
    notes.append(f"searching with HC (hill climbing; Shisha, the default, is not installed); "
                 f"{n('algorithm')} chooses another")
    return "HC"


def _pipeline_args(spec: ExplorationSpec, inputs: _Inputs, name: str, objective: str, track: list[str],
                   n: _Names, notes: list[str], noise_free: bool) -> str:
    """The PipelineProblem's arguments, every default resolved (JSON: a problem cache's key)."""
    p = spec.problem
    assignment, eps, n_eps = _stage_eps(inputs, p, name, n, notes)
    depths = _depths(p, name, n_eps, eps, inputs.workload, n, notes)
    fields = spec.measurement.model_dump(exclude_none=True)
    if noise_free:
        fields["noise_sigma"] = 0.0
    # A DES trial is a stream of frames (Paper I's stage trials are closed form).
    fields.setdefault("mode", "stream" if fields.get("engine") == "des" else "stages")
    return json.dumps({"kind": "pipeline", "eps": eps, "depths": depths, "assignment": assignment,
                       "measurement": fields, "limit": p.space_limit, "force": p.force,
                       "objective": objective, "track": track}, sort_keys=True)


def _stage_eps(inputs: _Inputs, p: ProblemSpec, name: str, n: _Names, notes: list[str]):
    """How stages get EPs (permutations of whole EPs, disjoint core groups, or Paper I's first N
    cores), the EP names given or derived, and how many stages they allow at most."""
    platform, workload, cost = inputs.platform, inputs.workload, inputs.cost
    if p.cores is not None and p.eps is not None:
        raise HetsimError(f"{n('problem.cores')} and {n('problem.eps')} both choose the stages' EPs: give "
                          f"one of them")
    if p.cores is not None and p.assignment is not None:
        raise HetsimError(f"{n('problem.cores')} and {n('problem.assignment')} both choose how stages get "
                          f"EPs: give one of them")
    if p.eps is not None and not p.eps:
        raise HetsimError(f"{n('problem.eps')}: give at least one EP name")
    every = platform.eps()
    shared = len({ep.place for ep in every}) < len(every)   # core counts of a cluster (B1..B4)
    assignment = p.assignment
    if assignment is None and name == "Pipe-it" and p.cores is None and shared:
        assignment = "cores"
        notes.append(f"Pipe-it: stages on disjoint core groups ({n('problem.assignment')} cores), the "
                     f"space Algorithm 3 merges cores in")
    if assignment == "auto":
        places = [_ep(platform, e, n).place for e in p.eps] if p.eps is not None else None
        assignment = (("cores" if shared else "permutations") if places is None
                      else ("permutations" if len(set(places)) == len(places) else "cores"))
    if assignment == "cores":
        for e in p.eps or ():
            platform.ep(e)   # unknown names: one line naming the EP and the forms allowed
        # The most stages the platform's EPs allow (one per core where a cluster's cores are EPs,
        # one per whole cluster or accelerator otherwise); PipelineProblem checks the EPs given.
        smallest: dict[str, int] = {}
        for ep in every:
            smallest[ep.place] = min(ep.cores, smallest.get(ep.place, ep.cores))
        clusters = {c.name for c in platform.clusters}
        n_eps = sum((platform.cluster(pl).cores if pl in clusters else 1) // c for pl, c in smallest.items())
        return "cores", (list(p.eps) if p.eps is not None else None), n_eps
    if p.cores is not None:
        total = sum(c.cores for c in platform.clusters)
        if p.cores > total:
            raise HetsimError(f"{n('problem.cores')} {p.cores}: {platform.name} has {total} cores; "
                              f"allowed: 1..{total}")
        return {"core_groups": p.cores}, None, p.cores
    if p.eps is not None:
        eps = _whole_eps(p.eps, platform, n)
    else:
        from hetsim.exploration.space import default_eps

        eps, note = default_eps(platform, workload, cost)
        notes.append(f"{platform.name}: {note}")
    return "permutations", eps, len(eps)


def _ep(platform, name: str, n: _Names):
    try:
        return platform.ep(name)
    except HetsimError:
        raise HetsimError(f"{n('problem.eps')} {name!r}: no such EP on {platform.name}; allowed: "
                          f"{', '.join(platform.topology.ep_forms())}") from None


def _whole_eps(names: list[str], platform, n: _Names) -> list[str]:
    """EPs of a permutation space: each known, none twice, no two on one cluster."""
    seen: dict[str, str] = {}
    for e in names:
        ep = _ep(platform, e, n)
        if e in seen:
            raise HetsimError(f"{n('problem.eps')} lists {e} twice")
        if ep.place in seen.values():
            first = next(k for k, v in seen.items() if v == ep.place)
            raise HetsimError(f"{n('problem.eps')} {first},{e}: both are cores of {ep.place}, and each "
                              f"stage owns a whole EP; give EPs on distinct clusters or accelerators (e.g. "
                              f"{n('problem.eps')} {','.join(_places(platform))}), or {n('problem.cores')} "
                              f"N for Pipe-search's per-core stages")
        seen[e] = ep.place
    return list(names)


def _places(platform) -> list[str]:
    return [c.name for c in platform.clusters] + [a.name for a in platform.accelerators]


def _depths(p: ProblemSpec, name: str, n_eps: int, eps, workload, n: _Names,
            notes: list[str]) -> list[int] | None:
    """The depths to search (None: PipelineProblem's default, 2..the number of EPs), the ones given
    capped at what the EPs and layers allow."""
    from hetsim.exploration.space import cap_depths

    depths = list(p.depths) if p.depths is not None else None
    if depths is None and name == "Pipe-it":
        depths = list(range(1, n_eps + 1))   # Algorithm 3 may merge down to one stage
    if depths is not None:
        depths, capped = cap_depths(depths, n_eps, workload.num_layers, n("problem.depths"))
        if capped:
            notes.append(capped)
        if p.cores is not None:
            depths = [d for d in depths if d >= 2] or depths
    elif n_eps < 2 and p.cores is None:
        depths = [1]
        notes.append(f"one candidate EP ({eps[0] if eps else ''}): a one-stage pipeline")
    return depths


# -- placements -----------------------------------------------------------------------------------------
def _refuse(name: str, why: str, n: _Names, *given: tuple[str, bool]) -> None:
    """The first setting given that the algorithm's problem would ignore, refused in one line."""
    wrong = next((key for key, on in given if on), None)
    if wrong is not None:
        raise HetsimError(f"{n(wrong)} does not apply to {name}{why}")


def _placement_measurement(spec: ExplorationSpec, name: str, n: _Names, strict: bool,
                           noise_free: bool) -> dict:
    fields = spec.measurement.model_dump(exclude_none=True)
    if noise_free:
        fields["noise_sigma"] = 0.0
    if fields.get("mode") == "stages":
        if strict:
            raise HetsimError(f"{n('measurement.mode')} stages does not apply to {name}: a placement runs "
                              f"whole inferences (mode stream)")
        del fields["mode"]   # Paper I's per-stage trial has no meaning for a placement
    # A placement trial is one inference; [choice] a noisy one runs in the DES, without contention
    # unless asked (the closed form has no noise).
    defaults: dict[str, Any] = {"mode": "stream", "frames_per_trial": 1}
    if fields.get("noise_sigma", 0) > 0 and "engine" not in fields:
        defaults.update(engine="des", contention=False)
    return {**defaults, **fields}


def _placement_objective(p: ProblemSpec, n: _Names, allowed: tuple[str, ...]) -> str:
    objective = p.objective or "latency"
    if objective not in allowed:
        raise HetsimError(f"{n('problem.objective')} {objective}: a placement is judged by {', '.join(allowed)}")
    return objective


def _placement_args(spec: ExplorationSpec, inputs: _Inputs, name: str, n: _Names, strict: bool,
                    noise_free: bool) -> str:
    """A PlacementProblem over the EPs given (each known, none twice), measured on the platform's
    DAG execution (its ``runtime``) with the comm and caching asked for."""
    p, platform = spec.problem, inputs.platform
    objective = _placement_objective(p, n, ("latency", "energy", "throughput"))
    if p.eps is not None:
        for e in p.eps:
            _ep(platform, e, n)
        if len(set(p.eps)) != len(p.eps):
            raise HetsimError(f"{n('problem.eps')} lists an EP twice: {','.join(p.eps)}")
    if objective == "energy" and not platform.has_power_model:
        raise HetsimError(f"{n('problem.objective')} energy: {platform.name} has no power model "
                          f"(docs/platforms.md); allowed here: latency, throughput")
    return json.dumps({"kind": "placement", "eps": p.eps, "objective": objective, "comm": p.comm,
                       "caching": p.caching, "measurement": _placement_measurement(spec, name, n, strict,
                                                                                  noise_free)},
                      sort_keys=True)


def _own_args(spec: ExplorationSpec, inputs: _Inputs, name: str, n: _Names, strict: bool,
              noise_free: bool) -> str:
    """The problem of an algorithm with its own (the hybrid-partitioning NSGA-II: the ncnn cluster,
    MPI transfers, AutoDiCE's benchmark runs); ``problem.eps`` is a device view or EP names."""
    p, m = spec.problem, spec.measurement
    if strict:
        _refuse(name, ": it measures on its own problem (the ncnn model, MPI transfers, AutoDiCE's "
                "benchmark mode)", n, ("problem.comm", p.comm is not None), ("problem.caching", p.caching is not None),
                ("measurement.engine", m.engine is not None),
                ("measurement.frames_per_trial", m.frames_per_trial is not None),
                ("cost_table", spec.cost_table is not None),
                ("cost_model", inputs.cost.name not in ("roofline", "ncnn")))
    objective = _placement_objective(p, n, ("latency", "energy", "throughput", "memory"))
    views = ("cpu", "cpu+gpu")
    devices = p.eps[0] if p.eps is not None and len(p.eps) == 1 and p.eps[0] in views else p.eps
    # noise_sigma None keeps the problem's own default (its measured run-to-run noise).
    noise = 0.0 if noise_free else (m.noise_sigma or None)
    return json.dumps({"kind": "own", "algorithm": name, "devices": devices, "noise_sigma": noise,
                       "objective": objective}, sort_keys=True)


# -- the problem ----------------------------------------------------------------------------------------
def _make_problem(platform, workload, cost, args: dict):
    from hetsim.exploration.problem import DEFAULT_SPACE_LIMIT, Measurement, PipelineProblem

    kind = args["kind"]
    if kind == "pipeline":
        assignment = args["assignment"]
        if isinstance(assignment, dict):
            from hetsim.exploration.problem import core_groups

            assignment = core_groups(platform, cores=assignment["core_groups"])
        return PipelineProblem(platform, workload, cost, eps=args["eps"], depths=args["depths"],
                               assignment=assignment, measurement=Measurement(**args["measurement"]),
                               limit=args["limit"] or DEFAULT_SPACE_LIMIT, force=args["force"],
                               objective=args["objective"], track=args["track"])
    if kind == "placement":
        from dataclasses import replace

        from hetsim.evaluation import DagOptions
        from hetsim.exploration.placement import PlacementProblem

        base = DagOptions.for_platform(platform)
        dag = replace(base, comm=args["comm"] or base.comm, caching=base.caching and args["caching"] is not False)
        return PlacementProblem(platform, workload, cost, eps=args["eps"], objective=args["objective"],
                                dag=dag, measurement=Measurement(**args["measurement"]))
    from hetsim.exploration.registry import get_algorithm

    factory = get_algorithm(args["algorithm"]).cls.make_problem  # type: ignore[attr-defined]
    return factory(platform, workload, eps=args["devices"], noise_sigma=args["noise_sigma"],
                   objective=args["objective"])


@lru_cache(maxsize=64)
def _cached_problem(inputs_key: tuple, args: str):
    inputs = _cached_inputs(inputs_key)
    return _make_problem(inputs.platform, inputs.workload, inputs.cost, json.loads(args))


def clear_caches() -> None:
    """Forget the platforms, workloads, cost models and problems the explorations of this process
    share (``cache=True``)."""
    for fn in (cached_platform, cached_workload, cached_cost, _cached_inputs, _cached_problem):
        fn.cache_clear()


def _terminations(t: TerminationSpec) -> list:
    """The stopping rules given (max_trials, max_clock_s, target_fps), in that order."""
    from hetsim.exploration.termination import MaxClock, MaxTrials, TargetThroughput

    out: list = []
    if t.max_trials is not None:
        out.append(MaxTrials(t.max_trials))
    if t.max_clock_s is not None:
        out.append(MaxClock(t.max_clock_s))
    if t.target_fps is not None:
        out.append(TargetThroughput(t.target_fps))
    return out


def _check_params(name: str, allowed: dict, params: Mapping[str, Any], n: _Names) -> None:
    """Every parameter is one of the algorithm's; the error lists them with their defaults."""
    for key in params:
        if key not in allowed:
            listing = ", ".join(f"{k}={v!r}" for k, v in allowed.items()) or "none"
            raise HetsimError(f"{n('params')} {key}: {name} has no parameter {key!r}; its parameters (with "
                              f"defaults): {listing}")
