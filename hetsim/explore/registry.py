"""The one registry of search algorithms: ``hetsim explore``, sweeps and the tournament all read it.

Registering an algorithm is all a paper's module does to make it runnable everywhere::

    register("Shisha", Shisha, problem="pipeline", paper="Shisha (seed 000)",
             summary="seed by layer merging, then move layers out of the slowest stage")

``make_explorer(name, **params)`` builds one by name, with one-line errors that list the allowed
names or the algorithm's parameters and their defaults.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from hetsim.errors import HetsimError

#: pipeline: stages of layers; placement: op -> EP plans and splits of a DAG; hybrid: a CNN's
#: vertical + channel-split partitions over edge devices, measured as AutoDiCE's benchmark runs
#: (:class:`~hetsim.explore.nsga2.HybridProblem`, seed 004).
PROBLEM_KINDS = ("pipeline", "placement", "hybrid")


@dataclass(frozen=True)
class Algorithm:
    """One registered algorithm: its name in the papers, how to build it, what it solves."""

    name: str
    cls: type               # the Explorer class
    problem: str            # "pipeline" (stages of layers) or "placement" (op -> EP, plans, splits)
    paper: str              # where it comes from ("Pipe-search (seed 000)", "baseline", ...)
    summary: str            # one line: what it does
    fixed: tuple[tuple[str, object], ...] = ()   # parameters the name fixes (HC_s: start="shisha")

    def parameters(self) -> dict[str, object]:
        """Its keyword parameters and their defaults (those the name fixes left out)."""
        sig = inspect.signature(self.cls)
        fixed = dict(self.fixed)
        return {k: p.default for k, p in sig.parameters.items()
                if k != "self" and k not in fixed
                and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}

    def build(self, **params):
        return self.cls(**dict(self.fixed), **params)


ALGORITHMS: dict[str, Algorithm] = {}


def register(name: str, cls: type, problem: str, paper: str, summary: str, **fixed) -> None:
    """Add an algorithm to the registry (a name registered twice is a programming error);
    ``fixed`` are parameters the name implies (``register("HC_s", HillClimbing, ..., start="shisha")``)."""
    if problem not in PROBLEM_KINDS:
        raise ValueError(f"problem {problem!r}: allowed: {PROBLEM_KINDS}")
    if name in ALGORITHMS:
        raise ValueError(f"algorithm {name!r} registered twice")
    ALGORITHMS[name] = Algorithm(name, cls, problem, paper, summary, tuple(fixed.items()))


#: Listing order (whatever order modules were imported in): the papers' algorithms, then the
#: baselines, then generic searches; modules not named here after them, in registration order.
_MODULE_ORDER = ("hetsim.explore.pipesearch", "hetsim.explore.shisha", "hetsim.explore.baselines",
                 "hetsim.explore.moo")


def algorithms(problem: str | None = None) -> list[Algorithm]:
    """Registered algorithms, optionally only those for one kind of problem, in a fixed order."""
    _load()
    found = [a for a in ALGORITHMS.values() if problem is None or a.problem == problem]

    def rank(a: Algorithm) -> int:
        module = a.cls.__module__
        return _MODULE_ORDER.index(module) if module in _MODULE_ORDER else len(_MODULE_ORDER)

    return sorted(found, key=rank)


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
    hints = _annotations(algo.cls)
    for key, value in params.items():
        _check_param(name, key, value, hints.get(key))
    try:
        return algo.build(**params)
    except TypeError as e:
        raise HetsimError(f"algorithm {name}: {e}") from None


#: The largest magnitude of a numeric algorithm parameter (a time limit, a threshold, a fraction):
#: past it no parameter of the papers means anything, and a 1e308 time limit only overflows.
MAX_PARAM = 1e12


def _annotations(cls) -> dict[str, str]:
    try:
        sig = inspect.signature(cls.__init__)
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


def _load() -> None:
    """Import the modules that register algorithms (each registers on import)."""
    import hetsim.explore.baselines  # noqa: F401
    import hetsim.explore.hope  # noqa: F401
    import hetsim.explore.moo  # noqa: F401
    import hetsim.explore.nsga2  # noqa: F401
    import hetsim.explore.pim  # noqa: F401
    import hetsim.explore.pipeit  # noqa: F401
    import hetsim.explore.pipesearch  # noqa: F401
    import hetsim.explore.shisha  # noqa: F401
