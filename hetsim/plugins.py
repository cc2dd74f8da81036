"""Plugins: how papers (and anyone's package) add to hetsim without touching it.

A plugin is one :class:`Plugin` object that a package names in its entry points, group
``hetsim.plugins``::

    # pyproject.toml of the package
    [project.entry-points."hetsim.plugins"]
    mypaper = "mypaper:plugin"

    # mypaper/__init__.py
    from hetsim.plugins import ExplorerSpec, Plugin
    plugin = Plugin("mypaper", "My paper (2027)",
                    explorers=[ExplorerSpec("MySearch", "mypaper.search:MySearch", "pipeline",
                                            "one line: what it does")],
                    experiments="mypaper.experiments", platforms="platforms")

Everything a plugin adds is named by a ``"module:attribute"`` string and imported only when it is
used, so that listing what exists (``hetsim explore --help``) imports no plugin code. hetsim's own
generic parts are the plugin :data:`CORE`; the shipped papers register through entry points
exactly as a third-party package does. docs/extending.md walks through writing one.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from hetsim.errors import HetsimError

#: The entry-point group hetsim reads.
GROUP = "hetsim.plugins"
#: ``HETSIM_DISABLE_PLUGINS=hope,pim`` leaves those plugins out (as if uninstalled).
DISABLE_ENV = "HETSIM_DISABLE_PLUGINS"


@dataclass(frozen=True)
class ExplorerSpec:
    """A search algorithm: its name in the papers, the Explorer class (``"module:Class"``) or, for
    a placement problem, a DAG scheduling function ``f(view, **params) -> Plan``
    (``"module:function"``, made an explorer by :class:`~hetsim.exploration.dag.explorer.DagScheduler`),
    the problem kind it solves (``pipeline``, ``placement``, ``hybrid``), where it comes from, one
    line on what it does, and parameters the name fixes (``HC_s``: HillClimbing with
    ``start="shisha"``)."""

    name: str
    cls: str
    problem: str
    summary: str
    paper: str = ""                       # default: the plugin's title
    fixed: Mapping[str, Any] = field(default_factory=dict)
    #: The optional dependency it needs, as hetsim's pip extra (``"saga"``): a sweep's ``all`` leaves
    #: it out, so that what a sweep (the tournament) runs does not depend on what is installed.
    extra: str = ""


@dataclass(frozen=True)
class CostModelSpec:
    """A cost model: ``factory(platform)`` (or ``factory(platform, workload)`` when
    ``needs_workload``) returns a :class:`~hetsim.cost.CostModel`. ``fallback``: it prices any op
    from the platform alone, so a measured table may fall back on it (``--fallback``)."""

    name: str
    factory: str
    summary: str = ""
    needs_workload: bool = False
    fallback: bool = False


@dataclass(frozen=True)
class Plugin:
    """What one package adds to hetsim. Every entry is optional.

    - ``explorers``: :class:`ExplorerSpec` rows, listed in this order.
    - ``cost_models``: :class:`CostModelSpec` rows (``--cost-model NAME``, ``runtime.cost_model``).
    - ``parameter_blocks``: ``{"core_types": {"key": "module:Class"}, "accelerators": {...}}``: the
      pydantic models (subclasses of :class:`hetsim.platform.params.CostParams`) that validate a cost
      model's block of a platform YAML, under that key.
    - ``networks``: generated workloads: a ``"module:attribute"`` naming a mapping ``name -> builder``
      (a zero-argument function that returns an ``onnx.ModelProto``), imported when a name is needed.
    - ``mapping_formats``: keys of a mapping file, ``key -> "module:loader"``; a file with that key is
      read by ``loader(data, platform, workload, source, cost)`` (``data``: the whole file's mapping,
      ``source``: its name for errors), which returns a mapping.
    - ``start_points``: named starting configurations for local searches (HC, SA),
      ``name -> "module:factory"``.
    - ``sweep_reports``: ``name -> "module:writer"``, a SPEC's ``report:`` written after the sweep.
    - ``experiments``: a module that registers experiments (:func:`hetsim.experiment.register_experiments`)
      under the plugin's name; ``known_disagreements``: its YAML of claims hetsim is known to fail.
    - ``commands``: click commands added to ``hetsim`` (``"module:command"``), or to one of its
      core groups (``"calibrate:module:command"``: ``hetsim calibrate <command>``).
    - ``platforms``, ``workloads``, ``sweeps``: folders of YAML files found by name, relative to the
      plugin's package (or absolute).
    - ``order``: where the plugin's experiments and algorithms are listed (smaller first).
    - ``package``, ``distribution``: set on discovery (the module of the entry point, the installed
      distribution that declares it); hetsim's own documentation covers the plugins of ``hetsim``.
    """

    name: str
    title: str = ""
    explorers: Sequence[ExplorerSpec] = ()
    cost_models: Sequence[CostModelSpec] = ()
    parameter_blocks: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    networks: str | None = None
    mapping_formats: Mapping[str, str] = field(default_factory=dict)
    start_points: Mapping[str, str] = field(default_factory=dict)
    sweep_reports: Mapping[str, str] = field(default_factory=dict)
    experiments: str | None = None
    known_disagreements: str | None = None
    commands: Sequence[str] = ()
    platforms: str | None = None
    workloads: str | None = None
    sweeps: str | None = None
    order: int = 100
    package: str = ""                     # set on discovery: the module that defines the plugin
    distribution: str = ""                # set on discovery: the installed distribution that declares it

    def path(self, rel: str | None) -> Path | None:
        """A file or folder of the plugin: ``rel`` relative to its package's folder (or absolute);
        None when ``rel`` is None or the package cannot be found."""
        if rel is None:
            return None
        if Path(rel).is_absolute():
            return Path(rel)
        spec = importlib.util.find_spec(self.package)
        if spec is None:
            return None
        if spec.submodule_search_locations:
            return Path(next(iter(spec.submodule_search_locations))) / rel
        return Path(str(spec.origin)).parent / rel if spec.origin else None


_DAG = "hetsim.exploration.dag"
#: hetsim's own generic parts: the baselines and generic searches, the generic DAG schedulers, the
#: generic cost models and their parameter blocks. Registered like any plugin, listed first.
CORE = Plugin(
    "core", "hetsim",
    explorers=[
        ExplorerSpec("ES", "hetsim.exploration.baselines:ExhaustiveSearch", "pipeline",
                     "measure every configuration (after generating the database)",
                     paper="baseline (Papers I and II)"),
        ExplorerSpec("RW", "hetsim.exploration.baselines:RandomWalk", "pipeline",
                     "measure random configurations until a stopping rule fires",
                     paper="baseline (Papers I and II)"),
        ExplorerSpec("HC", "hetsim.exploration.baselines:HillClimbing", "pipeline",
                     "first-improvement hill climbing from a random start", paper="baseline (Paper II)"),
        ExplorerSpec("SA", "hetsim.exploration.baselines:SimulatedAnnealing", "pipeline",
                     "simulated annealing from a random start", paper="baseline (Paper II)"),
        ExplorerSpec("NSGA-II-pipe", "hetsim.exploration.moo:NSGA2Pipeline", "pipeline",
                     "pymoo's NSGA-II over pipelines: a Pareto front of two or more objectives",
                     paper="baseline (pymoo's NSGA-II, Deb et al. 2002)"),
        ExplorerSpec("NSGA-II-place", "hetsim.exploration.moo:NSGA2Placement", "placement",
                     "pymoo's NSGA-II over op -> EP assignments (one categorical gene per op), the engine "
                     "ordering each plan", paper="baseline (pymoo's NSGA-II, Deb et al. 2002)"),
        ExplorerSpec("NSGA-II-split", "hetsim.exploration.moo:NSGA2Split", "placement",
                     "NSGA-II-place plus a second EP and a channel share for every op muLayer could split",
                     paper="baseline (pymoo's NSGA-II; channel splits as Savva's hybrid partitions)"),
        ExplorerSpec("CPU-only", f"{_DAG}.single:single_device", "placement",
                     "every op on the first CPU cluster, one at a time", paper="baseline (HOPE Fig. 4)",
                     fixed={"device": "cpu"}),
        ExplorerSpec("GPU-only", f"{_DAG}.single:single_device", "placement",
                     "every op on the first accelerator, the ones it cannot run on the CPU",
                     paper="baseline (HOPE Fig. 4)", fixed={"device": "gpu"}),
        ExplorerSpec("MOSAIC", f"{_DAG}.mosaic:mosaic", "placement",
                     "linear slicing of the topological order by dynamic programming, slices one after another",
                     paper="baseline (HOPE Fig. 4: Han et al., PACT 2019)"),
        ExplorerSpec("StarPU-DMDAR", f"{_DAG}.dmda:dmdar", "placement",
                     "each ready op to the EP where it ends first, with exact cost tables",
                     paper="baseline (HOPE Fig. 4: StarPU's dmdar policy)"),
        ExplorerSpec("HEFT", f"{_DAG}.heft:heft", "placement",
                     "upward-rank list scheduling with insertion-based earliest finish time",
                     paper="baseline (Topcuoglu et al., TPDS 2002)"),
        ExplorerSpec("saga", f"{_DAG}.saga_schedulers:saga_schedule", "placement",
                     "saga's list schedulers (scheduler=HEFT, CPOP, ETF, MinMin, ...) on a related-machines "
                     "fit of the cost tables; needs pip install 'hetsim[saga]'",
                     paper="saga (Coleman et al.: the anrg-saga package)", extra="saga"),
        ExplorerSpec("muLayer", f"{_DAG}.mulayer:mulayer", "placement",
                     "layer by layer, each compute op's channels split between CPU and GPU",
                     paper="baseline (HOPE Fig. 6: Kim et al., EuroSys 2019)"),
        ExplorerSpec("ILP-exact", f"{_DAG}.exact:exact", "placement",
                     "optimal plan of a small whole graph under the engine's rules, with its lower bound",
                     paper="baseline (exact, CP-SAT)"),
    ],
    cost_models=[
        CostModelSpec("roofline", "hetsim.cost.roofline:RooflineCostModel",
                      "GEMM/roofline model (the default)", fallback=True),
        CostModelSpec("gemm2", "hetsim.cost.gemm2:Gemm2CostModel",
                      "shape-, cache- and algorithm-aware op costs", fallback=True),
    ],
    networks="hetsim.workload.generated:NETWORKS",
    order=0,
    package="hetsim",
    distribution="hetsim",
)


def resolve(ref: str) -> Any:
    """The object a ``"module:attribute"`` string names (``"module"`` alone: the module)."""
    module, _, attr = ref.partition(":")
    try:
        obj: Any = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name and (module == e.name or module.startswith(e.name + ".")):
            raise HetsimError(f"plugin entry {ref!r}: module {e.name!r} is not installed") from None
        raise
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def _disabled() -> set[str]:
    return {n.strip() for n in os.environ.get(DISABLE_ENV, "").split(",") if n.strip()}


@cache
def _discover(disabled: frozenset[str]) -> tuple[Plugin, ...]:
    from importlib.metadata import entry_points

    found: dict[str, Plugin] = {CORE.name: CORE}
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        if ep.name in disabled:
            continue
        module = ep.value.partition(":")[0]
        try:
            plugin = ep.load()
        except ModuleNotFoundError as e:
            # An entry point left behind by an uninstalled (or deleted) package names a module that
            # is gone: nothing to load. A module the plugin itself imports and lacks is its error.
            if e.name and (module == e.name or module.startswith(e.name + ".")):
                continue
            raise HetsimError(f"plugin {ep.name} ({ep.value}, group {GROUP}) needs module {e.name!r}, "
                              "which is not installed") from None
        if not isinstance(plugin, Plugin):
            raise HetsimError(f"entry point {ep.name} = {ep.value} (group {GROUP}) is not a "
                              f"hetsim.plugins.Plugin but {type(plugin).__name__}")
        if plugin.name in found:
            raise HetsimError(f"two plugins are called {plugin.name!r} (entry point {ep.value})")
        if not plugin.package:
            plugin = replace(plugin, package=module)
        if not plugin.distribution:
            dist = getattr(ep, "dist", None)
            plugin = replace(plugin, distribution=dist.name if dist is not None else "")
        found[plugin.name] = plugin
    return tuple(sorted(found.values(), key=lambda p: (p.order, p.name)))


def plugins() -> tuple[Plugin, ...]:
    """Every installed plugin (hetsim's own first), in listing order."""
    return _discover(frozenset(_disabled()))


def plugin(name: str) -> Plugin:
    for p in plugins():
        if p.name == name:
            return p
    raise HetsimError(f"no plugin called {name!r}; installed: {', '.join(p.name for p in plugins())}")


# -- what the plugins add, merged --------------------------------------------------------------
def explorer_specs() -> list[tuple[Plugin, ExplorerSpec]]:
    return [(p, s) for p in plugins() for s in p.explorers]


def cost_model_specs() -> dict[str, CostModelSpec]:
    return _unique_names("cost model", ((p, s.name, s) for p in plugins() for s in p.cost_models))


def cost_model_names() -> tuple[str, ...]:
    """Every cost model by name (``--cost-model``, ``runtime.cost_model``): hetsim's, then the plugins'."""
    return tuple(cost_model_specs())


def fallback_names() -> tuple[str, ...]:
    """The cost models a measured table can fall back on (``--fallback``): those that price any op
    from the platform alone."""
    return tuple(name for name, spec in cost_model_specs().items() if spec.fallback)


def parameter_blocks(section: str) -> dict[str, str]:
    """``key -> "module:Class"`` of the blocks of a platform section (core_types, accelerators)."""
    return _unique_names(f"{section} parameter block",
                         ((p, k, v) for p in plugins() for k, v in p.parameter_blocks.get(section, {}).items()))


def networks() -> dict[str, Callable]:
    """Every generated network, ``name -> builder`` (imports the plugins' network modules)."""
    return _unique_names("generated network", ((p, k, v) for p in plugins() if p.networks
                                               for k, v in resolve(p.networks).items()))


def mapping_formats() -> dict[str, str]:
    return _unique_names("mapping format", ((p, k, v) for p in plugins() for k, v in p.mapping_formats.items()))


def start_points() -> dict[str, str]:
    return _unique_names("start point", ((p, k, v) for p in plugins() for k, v in p.start_points.items()))


def sweep_reports() -> dict[str, str]:
    return _unique_names("sweep report", ((p, k, v) for p in plugins() for k, v in p.sweep_reports.items()))


def folders(kind: str) -> list[Path]:
    """The plugins' folders of ``kind`` (platforms, workloads, sweeps), in plugin order."""
    out = []
    for p in plugins():
        d = p.path(getattr(p, kind))
        if d is not None and d.is_dir():
            out.append(d)
    return out


def command_ref(ref: str) -> tuple[str | None, str]:
    """``"group:module:command"`` -> (group, ``"module:command"``); ``"module:command"`` -> (None, ref)."""
    parts = ref.split(":")
    if len(parts) == 3:
        return parts[0], f"{parts[1]}:{parts[2]}"
    if len(parts) <= 2:
        return None, ref
    raise HetsimError(f"plugin command {ref!r}: expected 'module:command' or 'group:module:command'")


def commands() -> list[tuple[str | None, Any]]:
    """The click commands the plugins add: (core group or None for ``hetsim`` itself, command)."""
    out = []
    for p in plugins():
        for ref in p.commands:
            group, target = command_ref(ref)
            out.append((group, resolve(target)))
    return out


def _unique_names(what: str, rows) -> dict:
    out: dict = {}
    owner: dict[str, str] = {}
    for plug, key, value in rows:
        if key in out:
            raise HetsimError(f"{what} {key!r} is added by two plugins: {owner[key]} and {plug.name}")
        out[key], owner[key] = value, plug.name
    return out
