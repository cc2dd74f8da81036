"""hetsim: a discrete-event simulator of heterogeneous platforms for DNN mapping research.

The top-level API, in the order of a study::

    import hetsim

    platform = hetsim.load_platform("hikey970")              # a platform YAML, by name or path
    workload = hetsim.load_workload("resnet50")              # a workload (YAML, or a generated network)
    pipe = hetsim.load_mapping("B4:1-35|s2:36-44|s2:45-54", platform, workload)
    m = hetsim.evaluate(platform, workload, pipe, engine="des", frames=50)   # -> Metrics
    m.throughput_fps, m.latency_s["p99"], m.energy_J

    problem = hetsim.PipelineProblem(platform, workload, depths=[3])
    result = hetsim.explore(problem, hetsim.make_explorer("HC"), seed=0)     # -> Exploration
    with hetsim.ExplorationRun(problem, hetsim.make_explorer("HC"), seed=0) as run:   # step by step
        while (candidate := run.ask()) is not None:
            run.tell(candidate, run.measure(candidate))    # or a board's measurement
    [a.name for a in hetsim.algorithms()]                     # every registered algorithm

Everything a user can get wrong raises :class:`HetsimError` with one line. The command line
(``hetsim --help``) is a thin layer over these functions.
"""

from importlib import import_module
from typing import TYPE_CHECKING

from hetsim.errors import HetsimError

#: Where each name of the API lives; imported on first use, so that ``import hetsim`` (and the
#: command line's start-up) does not pay for pandas, SimPy and networkx until they are needed.
_API = {
    "DagOptions": "hetsim.evaluation", "Result": "hetsim.evaluation", "evaluate": "hetsim.evaluation",
    "simulate": "hetsim.evaluation", "Exploration": "hetsim.exploration",
    "ExplorationRun": "hetsim.exploration", "Measurement": "hetsim.exploration",
    "PipelineProblem": "hetsim.exploration", "PlacementProblem": "hetsim.exploration",
    "algorithms": "hetsim.exploration", "explore": "hetsim.exploration", "make_explorer": "hetsim.exploration",
    "Pipeline": "hetsim.mapping", "Placement": "hetsim.mapping", "load_mapping": "hetsim.mapping",
    "Metrics": "hetsim.metrics", "RunOptions": "hetsim.options", "Platform": "hetsim.platform",
    "load_platform": "hetsim.platform", "Workload": "hetsim.workload",
    "load_workload": "hetsim.workload",
}

if TYPE_CHECKING:
    from hetsim.evaluation import DagOptions, Result, evaluate, simulate
    from hetsim.exploration import (
        Exploration,
        ExplorationRun,
        Measurement,
        PipelineProblem,
        PlacementProblem,
        algorithms,
        explore,
        make_explorer,
    )
    from hetsim.mapping import Pipeline, Placement, load_mapping
    from hetsim.metrics import Metrics
    from hetsim.options import RunOptions
    from hetsim.platform import Platform, load_platform
    from hetsim.workload import Workload, load_workload


def __getattr__(name: str):
    if name == "__version__":   # read from the installed metadata when asked (not at import)
        from importlib.metadata import PackageNotFoundError, version

        try:
            value = version("hetsim")
        except PackageNotFoundError:  # a source tree that is not installed
            value = "0+unknown"
        globals()[name] = value
        return value
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'hetsim' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DagOptions", "Exploration", "ExplorationRun", "HetsimError", "Measurement", "Metrics", "Pipeline",
    "PipelineProblem", "Placement", "PlacementProblem", "Platform", "Result", "RunOptions", "Workload", "__version__",
    "algorithms", "evaluate", "explore", "load_mapping", "load_platform", "load_workload",
    "make_explorer", "simulate",
]
