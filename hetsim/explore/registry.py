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
    try:
        return algo.build(**params)
    except TypeError as e:
        raise HetsimError(f"algorithm {name}: {e}") from None


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
