"""The one registry of search algorithms: ``hetsim explore``, sweeps and the tournament all read it.

The algorithms come from the plugins (:mod:`hetsim.plugins`): each lists its explorers as
:class:`~hetsim.plugins.ExplorerSpec` rows, whose classes are imported on first use. A row may
name a DAG scheduling function (``f(view, **params) -> Plan``) instead of a class: the one adapter
:class:`~hetsim.exploration.dag.explorer.DagScheduler` makes it an explorer, its keyword
parameters the explorer's. A script or a notebook can add one of its own::

    register("MySearch", MySearch, problem="pipeline", paper="mine", summary="what it does")
    register("MyList", my_list_scheduler, problem="placement", paper="mine", summary="...")

``make_explorer(name, **params)`` builds one by name, with one-line errors that list the allowed
names or the algorithm's parameters and their defaults.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from hetsim.errors import HetsimError
from hetsim.plugins import explorer_specs, resolve

#: pipeline: stages of layers; placement: op -> EP plans and splits of a DAG; hybrid: a CNN's
#: vertical + channel-split partitions over edge devices, measured as AutoDiCE's benchmark runs (the
#: hybrid-partitioning plugin's problem).
PROBLEM_KINDS = ("pipeline", "placement", "hybrid")


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm: its name in the papers, how to build it, what it solves."""

    name: str
    ref: type | Callable | str   # the Explorer class or DAG scheduling function, or "module:name"
    problem: str            # "pipeline" (stages of layers) or "placement" (op -> EP, plans, splits)
    paper: str              # where it comes from ("Pipe-search (seed 000)", "baseline", ...)
    summary: str            # one line: what it does
    fixed: tuple[tuple[str, object], ...] = ()   # parameters the name fixes (HC_s: start="shisha")
    plugin: str = ""        # the plugin that registers it ("" for one a script registers)
    extra: str = ""         # hetsim's pip extra it needs ("saga"); a sweep's "all" leaves it out

    @property
    def target(self) -> type | Callable:
        """The Explorer class or the scheduling function (imported now if named by a string)."""
        obj = resolve(self.ref) if isinstance(self.ref, str) else self.ref
        if not isinstance(obj, type) and self.problem != "placement":
            raise HetsimError(f"algorithm {self.name!r}: {self.ref!r} is a function; a function is a DAG "
                              f"scheduler of a placement problem, but the algorithm solves {self.problem} problems")
        return obj

    @property
    def cls(self) -> type:
        """The Explorer class (for a function: the adapter, DagScheduler)."""
        obj = self.target
        if isinstance(obj, type):
            return obj
        from hetsim.exploration.dag.explorer import DagScheduler

        return DagScheduler

    def parameters(self) -> dict[str, object]:
        """Its keyword parameters and their defaults (those the name fixes left out)."""
        fixed = dict(self.fixed)
        obj = self.target
        if isinstance(obj, type):
            params = [p for k, p in inspect.signature(obj).parameters.items() if k != "self"
                      and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        else:
            from hetsim.exploration.dag.explorer import scheduler_parameters

            params = scheduler_parameters(obj)
        return {p.name: p.default for p in params if p.name not in fixed}

    def build(self, **params):
        obj = self.target
        if isinstance(obj, type):
            return obj(**dict(self.fixed), **params)
        return self.cls(obj, self.name, **dict(self.fixed), **params)


ALGORITHMS: dict[str, Algorithm] = {}


def register(name: str, cls: type | Callable | str, problem: str, paper: str, summary: str, **fixed) -> None:
    """Add an algorithm to the registry (a name registered twice is an error): an Explorer class,
    or a DAG scheduling function for a placement problem; ``fixed`` are parameters the name implies
    (``register("HC_s", HillClimbing, ..., start="shisha")``)."""
    _load()
    _add(name, cls, problem, paper, summary, fixed)


def _add(name: str, cls: type | Callable | str, problem: str, paper: str, summary: str, fixed,
         plugin: str = "", extra: str = "") -> None:
    if problem not in PROBLEM_KINDS:
        raise HetsimError(f"algorithm {name!r}: problem {problem!r}; allowed: {', '.join(PROBLEM_KINDS)}")
    if not isinstance(cls, type | str) and problem != "placement":
        raise HetsimError(f"algorithm {name!r}: a function is a DAG scheduler of a placement problem, but "
                          f"the algorithm solves {problem} problems; register an Explorer class")
    if name in ALGORITHMS:
        raise HetsimError(f"algorithm {name!r} registered twice")
    ALGORITHMS[name] = Algorithm(name, cls, problem, paper, summary, tuple(dict(fixed).items()), plugin, extra)


def algorithms(problem: str | None = None) -> list[Algorithm]:
    """Registered algorithms, optionally only those for one kind of problem: the plugins' in
    plugin order (hetsim's own first), each plugin's in the order it lists them."""
    _load()
    return [a for a in ALGORITHMS.values() if problem is None or a.problem == problem]


def get_algorithm(name: str) -> Algorithm:
    _load()
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise HetsimError(f"unknown algorithm {name!r}; allowed: "
                          f"{', '.join(a.name for a in algorithms())}") from None


def make_explorer(name: str, **params):
    """An explorer by its name in the papers (``"PS"``, ``"Shisha"``, ``"SA_s"``, ...)."""
    algo = get_algorithm(name)
    allowed = algo.parameters()
    unknown = [k for k in params if k not in allowed]
    if unknown:
        listing = ", ".join(f"{k}={v!r}" for k, v in allowed.items()) or "none"
        raise HetsimError(f"algorithm {name}: unknown parameter {unknown[0]!r}; its parameters "
                          f"(with defaults): {listing}")
    hints = _annotations(algo.target)
    for key, value in params.items():
        _check_param(name, key, value, hints.get(key))
    try:
        return algo.build(**params)
    except TypeError as e:
        raise HetsimError(f"algorithm {name}: {e}") from None


#: The largest magnitude of a numeric algorithm parameter (a time limit, a threshold, a fraction):
#: past it no parameter of the papers means anything, and a 1e308 time limit only overflows.
MAX_PARAM = 1e12


def _annotations(target) -> dict[str, str]:
    """The string annotations of a class's ``__init__`` or a function's parameters."""
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return {}
    return {k: p.annotation for k, p in sig.parameters.items() if isinstance(p.annotation, str)}


def _check_param(name: str, key: str, value, annotation: str | None) -> None:
    """The type and magnitude of a parameter whose ``__init__`` annotation is a plain one (bool,
    int, float, str, a sequence of names, each optionally None), in one line; the explorer's own
    ``validate`` checks its ranges. Other annotations (callables, configurations) pass."""
    import math
    import numbers

    if annotation is None:
        return
    kinds = [a.strip() for a in annotation.split("|")]
    optional = "None" in kinds
    kinds = [k for k in kinds if k != "None"]
    if value is None:
        if not optional:
            raise HetsimError(f"algorithm {name}: --param {key}: null is not allowed ({annotation})")
        return
    if len(kinds) != 1:
        return
    kind = kinds[0]
    what = f"algorithm {name}: --param {key}={_short(value)}"
    if kind == "bool" and not isinstance(value, bool):
        raise HetsimError(f"{what} must be true or false")
    if kind in ("int", "float"):
        integer = kind == "int"
        ok = (isinstance(value, numbers.Integral) if integer else isinstance(value, numbers.Real))
        if isinstance(value, bool) or not ok:
            raise HetsimError(f"{what} must be {'an integer' if integer else 'a number'}")
        if not math.isfinite(value) or abs(value) > MAX_PARAM:
            raise HetsimError(f"{what} must be a finite {'integer' if integer else 'number'} of magnitude "
                              f"at most {MAX_PARAM:g}")
    if kind == "str" and not isinstance(value, str):
        raise HetsimError(f"{what} must be a name (a string)")
    if kind == "Sequence[str]" and not (isinstance(value, str) or (
            isinstance(value, list | tuple) and all(isinstance(v, str) for v in value))):
        raise HetsimError(f"{what} must be a list of names, e.g. [a, b]")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


_LOADED: list[bool] = []


def _load() -> None:
    """Register the plugins' explorers (once)."""
    if _LOADED:
        return
    _LOADED.append(True)
    for plug, spec in explorer_specs():
        _add(spec.name, spec.cls, spec.problem, spec.paper or plug.title, spec.summary, spec.fixed, plug.name,
             spec.extra)
