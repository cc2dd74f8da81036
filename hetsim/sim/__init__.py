"""The SimPy discrete-event engine: bandwidth servers, frame sources, pipeline and DAG runs."""

from hetsim.sim.bandwidth import BandwidthServer
from hetsim.sim.pipeline import PipelineRun, simulate_pipeline
from hetsim.sim.source import FrameSource

__all__ = ["BandwidthServer", "FrameSource", "PipelineRun", "simulate_pipeline"]
