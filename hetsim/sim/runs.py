"""The raw record of a DES run: when every stage execution (pipelines) or task (DAG mappings) of
every frame started and ended. The SimPy engine and its closed forms (the max-plus recurrence)
fill the same arrays."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsim.tasks import TaskGraph


@dataclass
class PipelineRun:
    """Raw record of a run: per stage and frame, when compute started and when the stage let go."""

    start: np.ndarray      # (stages, frames)
    compute_end: np.ndarray
    end: np.ndarray        # transfer done, frame handed downstream (or completed)
    arrival: np.ndarray    # (frames,) when each frame entered the system
    stage_names: list[str]


@dataclass
class DagRun:
    tasks: TaskGraph
    start: np.ndarray      # (frames, tasks)
    end: np.ndarray
    arrival: np.ndarray    # (frames,)
    done: np.ndarray       # (frames,)
