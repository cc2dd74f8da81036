"""The SimPy discrete-event engine: bandwidth servers, frame sources, the pipeline run
(:mod:`hetsim.sim.pipeline`), the task graph of DAG mappings (:mod:`hetsim.sim.tasks`) and its run
(:mod:`hetsim.sim.dag`), traces."""

from hetsim.sim.bandwidth import BandwidthServer
from hetsim.sim.source import FrameSource

__all__ = ["BandwidthServer", "FrameSource"]
