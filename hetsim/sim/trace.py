"""Traces of a run: Chrome/Perfetto JSON (open in ui.perfetto.dev) and a Gantt chart PNG."""

from __future__ import annotations

import json
from dataclasses import dataclass

from hetsim.sim.dag import DagRun
from hetsim.sim.pipeline import PipelineRun
from hetsim.validation import atomic_write


@dataclass(frozen=True)
class Interval:
    lane: str      # the EP (or stage) the work ran on
    name: str      # what ran
    category: str  # compute | transfer
    frame: int
    start_s: float
    end_s: float


def intervals_of(run: PipelineRun | DagRun) -> list[Interval]:
    out: list[Interval] = []
    if isinstance(run, PipelineRun):
        k, frames = run.start.shape
        for i in range(k):
            lane = f"stage {i + 1} ({run.stage_names[i]})"
            for f in range(frames):
                out.append(Interval(lane, f"frame {f}", "compute", f, float(run.start[i, f]),
                                    float(run.compute_end[i, f])))
                if run.end[i, f] > run.compute_end[i, f]:
                    out.append(Interval(lane, f"frame {f} out", "transfer", f,
                                        float(run.compute_end[i, f]), float(run.end[i, f])))
    else:
        frames = run.start.shape[0]
        for t in run.tasks.tasks:
            lane = t.ep.name if t.ep is not None else (t.lane or "transfers")
            for f in range(frames):
                out.append(Interval(lane, t.name, t.kind, f, float(run.start[f, t.index]),
                                    float(run.end[f, t.index])))
    return out


def chrome_trace(intervals: list[Interval], title: str = "hetsim") -> dict:
    lanes = list(dict.fromkeys(iv.lane for iv in intervals))
    tid = {lane: i for i, lane in enumerate(lanes)}
    events: list[dict] = [{"name": "process_name", "ph": "M", "pid": 0, "tid": 0, "args": {"name": title}}]
    for lane, i in tid.items():
        events.append({"name": "thread_name", "ph": "M", "pid": 0, "tid": i, "args": {"name": lane}})
        events.append({"name": "thread_sort_index", "ph": "M", "pid": 0, "tid": i, "args": {"sort_index": i}})
    for iv in intervals:
        events.append({"name": iv.name, "cat": iv.category, "ph": "X", "pid": 0, "tid": tid[iv.lane],
                       "ts": iv.start_s * 1e6, "dur": (iv.end_s - iv.start_s) * 1e6,
                       "args": {"frame": iv.frame}})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_chrome_trace(intervals: list[Interval], path, title: str = "hetsim") -> None:
    with atomic_write(path) as f:
        json.dump(chrome_trace(intervals, title), f)


def draw_gantt(ax, intervals: list[Interval], max_frames: int = 12, title: str = "",
               labels: bool = True) -> None:
    """Draw one row per lane, one bar per piece of work, on matplotlib axes ``ax``: coloured by frame
    (the first ``max_frames``), transfers hatched. One frame of a DAG: compute blue, transfers orange."""
    import matplotlib.pyplot as plt

    shown = [iv for iv in intervals if iv.frame < max_frames]
    lanes = list(dict.fromkeys(iv.lane for iv in intervals))
    one_frame = all(iv.frame == 0 for iv in shown)
    cmap = plt.get_cmap("tab20")
    for iv in shown:
        y = lanes.index(iv.lane)
        colour: str | tuple[float, ...]
        if one_frame:
            colour = "tab:orange" if iv.category == "transfer" else "tab:blue"
        else:
            colour = cmap(iv.frame % 20)
        hatch = "//" if iv.category == "transfer" else None
        ax.broken_barh([(iv.start_s * 1e3, (iv.end_s - iv.start_s) * 1e3)], (y - 0.4, 0.8),
                       facecolors=colour, edgecolor="black", linewidth=0.3, hatch=hatch)
        width = (iv.end_s - iv.start_s) * 1e3
        if labels and not one_frame and iv.category == "compute" and len(shown) <= 80 and width > 0:
            ax.text((iv.start_s * 1e3) + width / 2, y, str(iv.frame), ha="center", va="center", fontsize=7)
    ax.set_yticks(range(len(lanes)), lanes)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    default = ("one frame (blue = compute, orange hatched = transfer)" if one_frame else
               f"first {max_frames} frames (number = frame, hatched = transfer)")
    ax.set_title(title or default)
    ax.grid(axis="x", alpha=0.3)


def plot_gantt(intervals: list[Interval], path, title: str = "", max_frames: int = 12) -> None:
    """:func:`draw_gantt` into a PNG file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lanes = list(dict.fromkeys(iv.lane for iv in intervals))
    fig, ax = plt.subplots(figsize=(11, 0.6 * len(lanes) + 1.6))
    draw_gantt(ax, intervals, max_frames, title)
    fig.tight_layout()
    with atomic_write(path, "wb") as f:
        fig.savefig(f, format="png", dpi=120)
    plt.close(fig)
