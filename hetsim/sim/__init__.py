"""The SimPy discrete-event engine: the fluid bandwidth resource, frame sources, the pipeline run
(:mod:`hetsim.sim.pipeline`), the run of a DAG mapping's task graph (:mod:`hetsim.sim.dag`; the
graph itself is :mod:`hetsim.tasks`'s), traces."""

from hetsim.sim.bandwidth import BandwidthResource
from hetsim.sim.source import FrameSource

__all__ = ["BandwidthResource", "FrameSource"]
