"""The DES of a pipeline without contention, as an exact max-plus recurrence (numpy).

Without contention every service time is known before the run, and the SimPy pipeline of
:mod:`hetsim.sim.pipeline` (blocking after service, bounded queues, a frame source) is a max-plus
linear system: its frame times follow a recurrence over frames and stages that numpy evaluates
tens of times faster than SimPy steps through its events (docs/performance.md), with the same
arrays.

    run = run_pipeline_recurrence([0.010, 0.030], [0.002, 0.0], frames=100_000,
                                  buffer_frames=2, noise_sigma=0.1, seed=7)
    run.end[-1, -1]            # when the last frame left the last stage, s

Derivation
----------
Stages i = 1..k take frames f = 0..F-1 from their input queues Q_i (``simpy.Store`` of capacity
b = ``buffer_frames``); stage i computes for c_i * n_i(f) (the compute time times the frame's
lognormal noise factor, 1 without noise), transfers for x_i (not noisy), then puts the frame into
Q_(i+1), blocking while it is full; the stage takes no other frame meanwhile (blocking after
service). The source is a stage 0 of zero service time: its frame f becomes available at a_f (0
when saturated, the f-th arrival for periodic and Poisson sources) and it puts frames into Q_1 in
order, blocking while Q_1 is full (``FrameSource.process``). Write

    S_i(f)  stage i takes frame f from Q_i            (PipelineRun.start)
    C_i(f) = S_i(f) + c_i n_i(f)                      (PipelineRun.compute_end)
    E_i(f) = C_i(f) + x_i                             (PipelineRun.end)
    D_i(f)  frame f enters Q_(i+1): stage i lets go   (D_k = E_k; D_0(f) = entry into Q_1)
    PipelineRun.arrival = D_0 for a saturated source (a frame arrives when it enters Q_1), a_f else.

A stage takes frame f once the frame is in its queue and it has let go of frame f - 1:

    (1)  S_i(f) = max(D_(i-1)(f), D_i(f-1)),    S_0(f) = max(a_f, D_0(f-1)).

Q_(i+1) holds the frames stage i has put and stage i+1 has not taken yet, so the put of frame f
succeeds once at most b - 1 frames are left in it, i.e. once stage i+1 has taken frame f - b:

    (2)  D_i(f) = max(E_i(f), S_(i+1)(f-b))      (i < k).

By (1), S_(i+1)(f-b) = max(D_i(f-b), D_(i+1)(f-b-1)), and D_i(f-b) <= D_i(f-1) <= S_i(f) <= E_i(f)
(b >= 1, times >= 0), so (1) and (2) close over the departures alone:

    (3)  D_i(f) = max( max(D_(i-1)(f), D_i(f-1)) + t_i(f),  D_(i+1)(f-b-1) ),
         t_i(f) = c_i n_i(f) + x_i,   D_(-1)(f) = a_f,   t_0 = 0,   D_(k+1) = -inf,

with D_i(f) = -inf for f < 0: the classic recursion of a tandem line with blocking after service,
linear in max-plus algebra (max as addition, + as multiplication; Baccelli, Cohen, Olsder and
Quadrat, *Synchronization and Linearity*, Wiley 1992). D_i(f) depends on stage i - 1 of the same
frame, stage i of frame f - 1, and stage i + 1 of frame f - b - 1 (the blocking edge), so the
state x(f) = (D_i(g) : i = 0..k, g = f-b..f), n = (k+1)(b+1) numbers, evolves linearly:
x(f) = A(f) (x) x(f-1) (+) a_f, and every time SimPy computes follows from (1)-(3).

Vectorisation
-------------
Each stage's frames form a chain F long, so no wavefront over the (stage, frame) grid holds more
than k + 1 independent nodes: vectorising over frames needs the scan of a linear recurrence, here
the max-plus form of the two-pass parallel prefix (reduce, then scan):

1. cut the frames into P chunks of L frames and push, through every chunk at once, the n unit
   vectors (0 at one entry of the chunk's entry state, -inf elsewhere) and the arrivals a_f by (3):
   column j of the result is column j of the chunk's transfer matrix M_c (n x (n + 1));
   O(F (k+1) n) element operations in L (k+1) numpy calls;
2. walk the P chunk boundaries: x_(c+1) = M_c (x) [x_c; 0], one small max-plus product each;
3. from its entry state, run every chunk again (all at once) with the DES's own operations in the
   DES's order: S by (1), C = S + c n, E = C + x, D by (2). This writes start, compute_end, end.

Inside the first chunk the arrays are SimPy's bit for bit; later chunks start from a boundary state
whose additions phase 2 associates differently (a few ulps per chunk, relative), and
``tests/test_recurrence.py`` checks them against SimPy to 1e-12. About 7 (k+1) L + 3 P numpy calls
in all, each over P chunks, against F (k+1) SimPy process steps: L ~ sqrt(F) by default.

The random draws are the DES's: ``numpy.random.default_rng(seed)`` first draws the noise matrix
(stages x frames, only when ``noise_sigma > 0``), then the source its Poisson gaps.

Applies to exactly what :func:`hetsim.sim.pipeline.simulate_pipeline` does with
``contention=False`` (fixed compute and transfer times per stage, lognormal noise on compute only,
one buffer size for every queue, saturated/periodic/Poisson sources); not to contention, where a
service time depends on what else streams through a memory or link at that moment, nor to DAG
placements (:mod:`hetsim.sim.dag`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hetsim.errors import HetsimError
from hetsim.sim.noise import lognormal_factors
from hetsim.sim.runs import PipelineRun
from hetsim.sim.source import FrameSource

_OWNER = "run_pipeline_recurrence"


def run_pipeline_recurrence(compute_s: Sequence[float], transfer_s: Sequence[float], frames: int,
                            buffer_frames: int = 1, source: FrameSource | None = None,
                            noise_sigma: float = 0.0, seed: int = 0, *,
                            stage_names: Sequence[str] | None = None,
                            chunk_frames: int | None = None, progress=None) -> PipelineRun:
    """Frame times of a pipeline without contention, equal to ``simulate_pipeline(...,
    contention=False)``'s :class:`PipelineRun` for the same stage costs (``stage_costs``), buffer,
    source, noise and seed.

    ``compute_s[i]`` / ``transfer_s[i]``: stage i's compute time (multiplied by the noise) and the
    time of its hand-over to stage i + 1 (the DES's last stage has none), s. ``stage_names`` label
    the stages (default ``stage1``..``stagek``). ``chunk_frames``: frames per chunk of the scan
    (rounded up to a multiple of ``buffer_frames + 1``; default ~sqrt(frames)); it changes speed
    and the last ulps, never the result beyond that. ``progress(frames_done)``, when given, is
    called as the scan advances (phases 1 and 3 each count for half of the frames).
    """
    compute = _times("compute_s", compute_s)
    transfer = _times("transfer_s", transfer_s)
    if len(compute) != len(transfer):
        raise HetsimError(f"{_OWNER}: compute_s has {len(compute)} stages but transfer_s has "
                          f"{len(transfer)}; allowed: one compute and one transfer time per stage")
    _integer("frames", frames, 1)
    _integer("buffer_frames", buffer_frames, 1)
    if isinstance(noise_sigma, bool) or not isinstance(noise_sigma, int | float | np.number) \
            or not math.isfinite(noise_sigma) or noise_sigma < 0:
        raise HetsimError(f"{_OWNER}: noise_sigma={noise_sigma!r}; allowed: a finite number >= 0")
    if chunk_frames is not None:
        _integer("chunk_frames", chunk_frames, 1)
    source = source or FrameSource()
    if not isinstance(source, FrameSource):
        raise HetsimError(f"{_OWNER}: source={source!r}; allowed: a FrameSource or None")
    k = len(compute)
    names = [f"stage{i + 1}" for i in range(k)] if stage_names is None else list(stage_names)
    if len(names) != k:
        raise HetsimError(f"{_OWNER}: {len(names)} stage_names for {k} stages; allowed: one name "
                          f"per stage")

    # The DES's draws, in the DES's order: noise first, then the source's gaps.
    rng = np.random.default_rng(seed)
    noise = lognormal_factors(rng, float(noise_sigma), (k, frames))
    gaps = source.arrival_gaps_s(frames, rng)
    # a_f: when frame f is available to the source. cumsum adds one gap after the other, as the
    # source's timeouts advance SimPy's clock.
    arrival_at = np.zeros(frames) if gaps is None else np.cumsum(gaps)
    # c_i n_i(f): the product the DES forms (``plain * scale``); without noise c_i itself.
    service = (compute[:, None] * noise) if noise is not None else np.repeat(compute[:, None], frames, 1)

    lag = buffer_frames + 1
    if chunk_frames is None:
        chunk_frames = max(lag, math.isqrt(frames))
    L = lag * -(-chunk_frames // lag)        # a multiple of b + 1: see _scan
    P = -(-frames // L)
    start, compute_end, end, entry = _scan(service, transfer, arrival_at, lag, L, P,
                                           _scaled(progress, frames, L))
    if progress is not None:
        progress(frames)
    arrival = entry if gaps is None else arrival_at
    return PipelineRun(start, compute_end, end, arrival, names)


def _scaled(progress, frames: int, L: int):
    """``tick(step)`` for the scan's 2 L steps (phase 1 then 3), reporting frames done."""
    if progress is None:
        return None
    every = max(1, 2 * L // 100)

    def tick(step: int) -> None:
        if step % every == 0:
            progress(min(frames, frames * step / (2 * L)))

    return tick


def _scan(service: np.ndarray, transfer: np.ndarray, arrival_at: np.ndarray, lag: int, L: int,
          P: int, tick=None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Phases 1-3 of the module docstring. Rows r = 0..k: r = 0 the source, r = i stage i.

    The last ``lag`` = b + 1 departures of every row live in a ring indexed by frame mod lag:
    frame f reads D_r(f-1) from slot (f-1) mod lag and D_(r+1)(f-b-1) from slot f mod lag, which
    row r then overwrites with D_r(f) (its old D_r(f-b-1) was read by row r - 1, computed just
    before). Chunks start at multiples of lag, so a chunk's entry state has the same slots at every
    boundary.
    """
    k, frames = service.shape
    K = k + 1                                # rows: the source and k >= 1 stages
    pad = P * L - frames
    # Frames past the last are padding (zero service, arrival at the last one's): they come after
    # every real frame and cannot change it.
    service = np.pad(service, ((0, 0), (0, pad)))
    arrival_at = np.pad(arrival_at, (0, pad), mode="edge")
    # (row, frame-in-chunk, chunk): the chunk axis is the vectorised one, kept contiguous.
    svc = np.ascontiguousarray(service.reshape(k, P, L).transpose(0, 2, 1))
    arr = np.ascontiguousarray(arrival_at.reshape(P, L).T)
    n = K * lag                              # state entries (row, slot)
    entry_state = np.full((P, n), -np.inf)   # x_c: D at the chunk's last b + 1 frames before it
    if P > 1:
        transfer_matrix = _transfer_matrices(svc, transfer, arr, lag, L, P, tick)
        # Phase 2: x_(c+1) = M_c (x) [x_c; 0], in max-plus.
        for c in range(P - 1):
            m = transfer_matrix[c]
            np.maximum(np.max(m[:, :n] + entry_state[c], axis=1), m[:, n], out=entry_state[c + 1])
    start, compute_end, end, entry = _replay_chunks(svc, transfer, arr, entry_state, lag, L, P, tick)

    def frames_last(a: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(a.transpose(0, 2, 1).reshape(a.shape[0], P * L)[:, :frames])

    return (frames_last(start), frames_last(compute_end), frames_last(end),
            np.ascontiguousarray(entry.T.reshape(P * L)[:frames]))


def _transfer_matrices(svc: np.ndarray, transfer: np.ndarray, arr: np.ndarray, lag: int, L: int, P: int,
                       tick) -> np.ndarray:
    """Phase 1: the transfer matrix of every chunk but the last, column j = unit vector j,
    column n = the arrivals (from a state of -inf); (chunk, out, in)."""
    K = svc.shape[0] + 1
    n = K * lag
    Pm = P - 1
    step = svc[:, :, :Pm] + transfer[:, None, None]          # t_r(f) = c n + x
    ring = np.full((K, lag, Pm, n + 1), -np.inf)
    rows, slots = np.divmod(np.arange(n), lag)
    ring[rows, slots, :, np.arange(n)] = 0.0
    tmp = np.empty((Pm, n + 1))
    for fc in range(L):              # fc: frame within its chunk
        if tick is not None:
            tick(fc)
        cur, prev = fc % lag, (fc - 1) % lag
        # Source: D_0(f) = max(a_f, D_0(f-1), D_1(f-b-1)); a_f enters column n only.
        out = ring[0, cur]
        np.maximum(ring[0, prev], ring[1, cur], out=out)
        np.maximum(out[:, n], arr[fc, :Pm], out=out[:, n])
        for r in range(1, K):
            np.maximum(ring[r - 1, cur], ring[r, prev], out=tmp)
            np.add(tmp, step[r - 1, fc][:, None], out=tmp)
            if r + 1 < K:
                np.maximum(tmp, ring[r + 1, cur], out=ring[r, cur])
            else:
                np.copyto(ring[r, cur], tmp)
    return ring.reshape(n, Pm, n + 1).transpose(1, 0, 2)


def _replay_chunks(svc: np.ndarray, transfer: np.ndarray, arr: np.ndarray, entry_state: np.ndarray,
                   lag: int, L: int, P: int, tick
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Phase 3: every chunk from its entry state, in the DES's order of operations; the start,
    compute end and end of every (stage, frame-in-chunk, chunk) and the entry into Q_1."""
    k = svc.shape[0]
    K = k + 1
    ring3 = np.ascontiguousarray(entry_state.reshape(P, K, lag).transpose(1, 2, 0))   # (K, lag, P)
    start = np.empty((k, L, P))
    compute_end = np.empty((k, L, P))
    end = np.empty((k, L, P))
    entry = np.empty((L, P))
    for fc in range(L):              # fc: frame within its chunk
        if tick is not None:
            tick(L + fc)
        cur, prev = fc % lag, (fc - 1) % lag
        s0 = entry[fc]
        np.maximum(arr[fc], ring3[0, prev], out=s0)                          # (1), source
        np.maximum(s0, ring3[1, cur], out=ring3[0, cur])                    # (2), source
        np.copyto(s0, ring3[0, cur])                                        # entry into Q_1
        for i in range(k):
            r = i + 1
            s, c, e = start[i, fc], compute_end[i, fc], end[i, fc]
            np.maximum(ring3[r - 1, cur], ring3[r, prev], out=s)            # (1)
            np.add(s, svc[i, fc], out=c)
            np.add(c, transfer[i], out=e)
            if r + 1 < K:
                np.maximum(e, ring3[r + 1, cur], out=ring3[r, cur])         # (2)
            else:
                np.copyto(ring3[r, cur], e)
    return start, compute_end, end, entry


def _times(name: str, values: Sequence[float]) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise HetsimError(f"{_OWNER}: {name}={values!r}; allowed: a list of times >= 0 s") from None
    if a.ndim != 1 or a.size == 0:
        raise HetsimError(f"{_OWNER}: {name} has shape {a.shape}; allowed: one time per stage, "
                          f"at least one stage")
    bad = np.flatnonzero(~np.isfinite(a) | (a < 0))
    if bad.size:
        raise HetsimError(f"{_OWNER}: {name}[{bad[0]}]={a[bad[0]]!r}; allowed: a finite time >= 0 s")
    return a


def _integer(name: str, value, low: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise HetsimError(f"{_OWNER}: {name}={value!r}; allowed: an integer >= {low}")
