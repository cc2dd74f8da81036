"""The SimPy discrete-event engine: bandwidth servers, frame sources, pipeline and DAG runs, and the
max-plus recurrence that equals a pipeline run without contention."""

from hetsim.sim.bandwidth import BandwidthServer
from hetsim.sim.pipeline import PipelineRun, simulate_pipeline
from hetsim.sim.recurrence import run_pipeline_recurrence
from hetsim.sim.source import FrameSource

__all__ = ["BandwidthServer", "FrameSource", "PipelineRun", "run_pipeline_recurrence",
           "simulate_pipeline"]
