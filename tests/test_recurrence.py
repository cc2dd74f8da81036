"""The max-plus recurrence equals the SimPy pipeline without contention: same start, compute_end,
end and arrival arrays to 1e-12 on random pipelines, buffers, sources, noise and seeds (and bit for
bit when the scan is one chunk)."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest
from helpers import chain_workload, two_cluster_platform
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hetsim.cost import CostModel, Demand
from hetsim.errors import HetsimError
from hetsim.mapping import pipeline_from_split
from hetsim.options import RunOptions
from hetsim.sim.pipeline import run_pipeline
from hetsim.sim.recurrence import run_pipeline_recurrence
from hetsim.sim.source import FrameSource

ARRAYS = ("start", "compute_end", "end", "arrival")


class StageTimes(CostModel):
    """Replays given stage times: stage i is layer i + 1; a transfer is looked up by the bytes of
    the cut it carries (every cut of :func:`one_layer_per_stage` has a different size)."""

    def __init__(self, platform, compute_s, transfer_by_bytes):
        super().__init__(platform)
        self.compute_s = np.asarray(compute_s, dtype=float)
        self.transfer_by_bytes = transfer_by_bytes

    def layer_times(self, workload, ep, state=None):
        return self.compute_s

    def layer_demands(self, workload, ep, state=None):
        return [Demand(float(t), 0.0, 0.0) for t in self.compute_s]

    def transfer_time(self, nbytes, src, dst):
        return self.transfer_by_bytes[nbytes]


@cache
def one_layer_per_stage(k: int):
    return chain_workload([8 + i for i in range(k)], size=7, name=f"chain{k}")


def des_run(compute_s, transfer_s, frames, buffer_frames, source, noise_sigma, seed):
    """``simulate_pipeline(..., contention=False)`` with these stage times."""
    platform = two_cluster_platform()
    k = len(compute_s)
    workload = one_layer_per_stage(k)
    transfer_by_bytes = {workload.cut_bytes(i + 1): transfer_s[i] for i in range(k - 1)}
    assert len(transfer_by_bytes) == k - 1
    cost = StageTimes(platform, compute_s, transfer_by_bytes)
    pipe = pipeline_from_split([1] * k, [platform.ep("B1")] * k)
    src = {} if source is None or source.kind == "saturated" else {
        "source": source.kind, "interval_s": source.interval_s}
    options = RunOptions.make(frames=frames, contention=False, fast=False, buffer_frames=buffer_frames,
                              noise_sigma=noise_sigma, seed=seed, **src).resolve(pipe)
    return run_pipeline(platform, workload, pipe, cost, options)


# Zero times and repeated values make ties (several events at one instant) common.
times = st.one_of(st.just(0.0), st.sampled_from([0.01, 0.02]), st.floats(1e-4, 0.1))


@st.composite
def cases(draw):
    k = draw(st.integers(1, 8))
    compute = draw(st.lists(times, min_size=k, max_size=k))
    transfer = [*draw(st.lists(times, min_size=k - 1, max_size=k - 1)), 0.0]  # the DES's last: 0
    kind = draw(st.sampled_from(["saturated", "periodic", "poisson"]))
    if kind == "saturated":
        source = FrameSource()
    else:
        # Arrivals from 3x faster to 3x slower than the bottleneck: queues fill and drain.
        bottleneck = max(c + x for c, x in zip(compute, transfer, strict=True)) or 0.01
        source = FrameSource(kind, bottleneck * draw(st.floats(1 / 3, 3.0)))
    sigma = draw(st.one_of(st.just(0.0), st.floats(0.01, 0.5)))
    return dict(compute_s=compute, transfer_s=transfer, frames=draw(st.integers(1, 40)),
                buffer_frames=draw(st.integers(1, 4)), source=source, noise_sigma=sigma,
                seed=draw(st.integers(0, 2**32 - 1)))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases(), st.one_of(st.none(), st.integers(1, 12)))
def test_recurrence_equals_simpy(case, chunk_frames):
    des = des_run(**case)
    rec = run_pipeline_recurrence(**case, chunk_frames=chunk_frames)
    # One chunk: the DES's own additions in the DES's order, so SimPy's floats bit for bit.
    one = run_pipeline_recurrence(**case, chunk_frames=case["frames"])
    for name in ARRAYS:
        got, want = getattr(rec, name), getattr(des, name)
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0, err_msg=name)
        np.testing.assert_array_equal(getattr(one, name), want, err_msg=name)


def test_exact_vectors_of_a_blocked_two_stage_pipeline():
    # Worked by hand from (1)-(3) of the module docstring: stage 1 computes 1 s and hands over in
    # 0.5 s, stage 2 computes 4 s, one-frame queues, saturated source. Stage 1 is blocked from
    # frame 2 on (it holds frame 2 until stage 2 takes frame 1 at 5.5 s), and the source waits.
    run = run_pipeline_recurrence([1.0, 4.0], [0.5, 0.0], frames=4)
    assert run.start.tolist() == [[0.0, 1.5, 3.0, 5.5], [1.5, 5.5, 9.5, 13.5]]
    assert run.compute_end.tolist() == [[1.0, 2.5, 4.0, 6.5], [5.5, 9.5, 13.5, 17.5]]
    assert run.end.tolist() == [[1.5, 3.0, 4.5, 7.0], [5.5, 9.5, 13.5, 17.5]]
    assert run.arrival.tolist() == [0.0, 0.0, 1.5, 3.0]
    assert run.stage_names == ["stage1", "stage2"]
    # Two-frame queues: stage 1 never waits for stage 2 within four frames.
    roomy = run_pipeline_recurrence([1.0, 4.0], [0.5, 0.0], frames=4, buffer_frames=2)
    assert roomy.start[0].tolist() == [0.0, 1.5, 3.0, 4.5]


def test_long_runs_keep_the_steady_period_whatever_the_chunks():
    # Without noise a saturated pipeline settles to one frame per bottleneck time: frame f leaves
    # the bottleneck (stage 2) at 0.021 + 0.03 (f + 1) s and the last stage 0.01 s later, for any
    # chunk size (phases 1-2 of the scan).
    for chunk in (None, 2, 7, 1000):
        run = run_pipeline_recurrence([0.02, 0.03, 0.01], [0.001, 0.0, 0.0], 5000, chunk_frames=chunk)
        assert np.diff(run.end[-1, -100:]) == pytest.approx(np.full(99, 0.03), rel=1e-9)
        assert run.end[-1, -1] == pytest.approx(0.021 + 0.03 * 5000 + 0.01, rel=1e-12)


@pytest.mark.parametrize("kwargs, field", [
    (dict(compute_s=[0.1, -1.0], transfer_s=[0.0, 0.0]), "compute_s[1]"),
    (dict(compute_s=[0.1], transfer_s=[float("nan")]), "transfer_s[0]"),
    (dict(compute_s=[0.1, 0.2], transfer_s=[0.0]), "transfer_s has 1"),
    (dict(compute_s=[], transfer_s=[]), "compute_s has shape"),
    (dict(compute_s=["fast"], transfer_s=[0.0]), "compute_s="),
    (dict(frames=0), "frames=0"),
    (dict(frames=2.5), "frames=2.5"),
    (dict(buffer_frames=0), "buffer_frames=0"),
    (dict(noise_sigma=-0.1), "noise_sigma=-0.1"),
    (dict(chunk_frames=0), "chunk_frames=0"),
    (dict(source="poisson"), "source='poisson'"),
    (dict(stage_names=["a", "b"]), "2 stage_names for 1 stages"),
])
def test_bad_input_is_one_line_naming_the_field(kwargs, field):
    args = dict(compute_s=[0.1], transfer_s=[0.0], frames=10) | kwargs
    with pytest.raises(HetsimError) as err:
        run_pipeline_recurrence(**args)
    message = str(err.value)
    assert "\n" not in message and field in message and "allowed" in message
