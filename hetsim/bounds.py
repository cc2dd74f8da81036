"""Physical ranges of hetsim's quantities, and the strict pydantic types that enforce them.

Every number a user gives hetsim (in a platform, workload or mapping file, in run options, on the
command line) is a real number inside a stated range. A value outside it is refused with one line
that names the field, the value and the range: a negative bandwidth, a ``.inf`` frequency, a
``1e308`` MHz clock, an efficiency of 2, a core count of zero. Types are strict: a string (``'1e3'``)
or a boolean (``true``) is not a number, an integer field takes no fractions; an integer is a
number wherever a real number goes.

The ranges are wide: each spans every real device, from a microcontroller to a rack, with orders
of magnitude to spare (docs/robustness.md lists them). They keep out what no hardware has and what
makes the arithmetic overflow (times past 1e300 s, counts past 2^53, where float64 stops being
exact).

    Bandwidth = quantity(*BANDWIDTH_GBPS, "GB/s")
    class Link(BaseModel):
        bandwidth_GBps: Bandwidth
"""

from __future__ import annotations

import math
import numbers
from typing import Annotated, Any

from pydantic import BeforeValidator, Field

# -- the ranges: (low, high), low exclusive where a zero is as unphysical as a negative -----------
#: 1 kB/s (a slow serial link) .. 1 PB/s (a thousand HBM3 stacks).
BANDWIDTH_GBPS = (1e-6, 1e6)
#: 1 kHz .. 100 GHz.
FREQ_MHZ = (1e-3, 1e5)
#: Peak multiply-accumulates per cycle per core: 1e-6 (software floating point) .. 1e6.
MACS_PER_CYCLE = (1e-6, 1e6)
#: Peak rate of an accelerator: 1 kMAC/s .. 10 PMAC/s (ten of today's largest GPUs).
PEAK_GMACPS = (1e-6, 1e7)
#: Bytes of one element of a datatype: 1 bit .. 64 bytes.
ELEMENT_BYTES = (0.125, 64.0)
#: Latencies: 0 .. 1000 s.
LATENCY_NS = (0.0, 1e12)
#: Fixed costs per op or kernel: 0 .. 1000 s.
OVERHEAD_US = (0.0, 1e9)
#: Memory capacity: 1 byte .. 1 PiB.
CAPACITY_GIB = (2.0 ** -30, 2.0 ** 20)
#: Cache size: 1 byte .. 1 TiB.
CACHE_KIB = (2.0 ** -10, 2.0 ** 30)
#: Energy of moving a byte: 0 .. 1 uJ.
ENERGY_PJ_PER_BYTE = (0.0, 1e6)
#: Power: 0 .. 100 kW (a rack).
POWER_W = (0.0, 1e5)
#: Fractions of a peak (efficiencies, channel shares): (0, 1], and at least a millionth: below
#: that no hardware runs, and with the other lower ends a time would pass 1e300 s and overflow.
FRACTION = (1e-6, 1.0)
#: A share that may be zero (HOPE's alpha, a compute-bound fraction): [0, 1].
UNIT_INTERVAL = (0.0, 1.0)
#: Time per unit of work (an element, a byte, a MAC, a weight): 0 .. 1 s.
PER_UNIT_NS = (0.0, 1e9)
#: A multiplier of a time or a rate (a parallel speedup, a function's cost factor): up to 1e6.
FACTOR = (0.0, 1e6)
#: Memory a runtime holds: 0 .. 1 PiB.
MEMORY_MIB = (0.0, 2.0 ** 30)
#: Cores of a cluster, flows, tiles: 1 .. 2^31 - 1 (int32, what every runtime indexes them with).
COUNT = (1, 2 ** 31 - 1)
#: Tensor dimensions (dims, H, W, C, kernel, stride, pad): 0 or 1 .. 2^31 - 1.
DIM = (0, 2 ** 31 - 1)
#: Counts of work and data (MACs, FLOPs, bytes): 0 .. 2^53, the largest integer float64 holds
#: exactly (the cost models add them as floats).
WORK = (0, 2 ** 53)
#: Frames of a run: 1 .. 1e9 (the DES keeps a few float64 per stage and frame: a billion frames
#: of a 3-stage pipeline is ~100 GB already; --force cannot go past this).
FRAMES = (1, 10 ** 9)
#: Frames queued between stages or in flight: 1 .. 1e6.
QUEUE_FRAMES = (1, 10 ** 6)
#: Mean seconds between frames: 1 ns (a GHz frame rate) .. 1e9 s (32 years).
INTERVAL_S = (1e-9, 1e9)
#: Seeds: 0 .. 2^63 - 1 (an int64 in every table they are written to).
SEED = (0, 2 ** 63 - 1)
#: Trials of an exploration: 1 .. 1e9.
TRIALS = (1, 10 ** 9)
#: Seconds of a tuning clock or a rate in frames/s: (0, 1e12].
CLOCK_S = (0.0, 1e12)
FPS = (0.0, 1e12)


def fmt(x: float) -> str:
    """A bound for messages: 1e+06, 0.001, 2147483647."""
    if isinstance(x, int):
        return str(x)
    return f"{x:g}"


def describe(low: float, high: float, unit: str = "", low_open: bool = False,
             integer: bool = False) -> str:
    """``an integer in [1, 2147483647]`` / ``a number in (0, 1]``, with the unit."""
    what = "an integer" if integer else "a number"
    text = f"{what} in {'(' if low_open else '['}{fmt(low)}, {fmt(high)}]"
    return f"{text} {unit}".rstrip()


def check(value: Any, low: float, high: float, unit: str = "", low_open: bool = False,
          integer: bool = False) -> float | int:
    """``value`` if it is a number of the range (an int, or a float for a real range), else a
    ValueError saying what is allowed (pydantic turns it into the field's error line)."""
    allowed = describe(low, high, unit, low_open, integer)
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        raise ValueError(f"must be {allowed}, not a boolean")
    if isinstance(value, str):
        raise ValueError(f"must be {allowed}, not a string (write numbers without quotes)")
    if integer:
        if not isinstance(value, numbers.Integral):
            if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
                raise ValueError(f"must be {allowed}, written without a fraction")
            raise ValueError(f"must be {allowed}")
        value = int(value)
    else:
        if not isinstance(value, numbers.Real):
            raise ValueError(f"must be {allowed}")
        if isinstance(value, numbers.Integral):
            value = int(value)
        elif not math.isfinite(value):
            raise ValueError(f"must be a finite number in {allowed.split(' in ', 1)[1]}")
    if value < low or (low_open and value == low) or value > high:
        raise ValueError(f"must be {allowed}")
    return value if integer else float(value)


def _bounds(rng: tuple[float, float], low_open: bool = False) -> Any:
    """The range as pydantic constraints (shown in the JSON Schema; the validator checks first)."""
    if low_open:
        return Field(gt=rng[0], le=rng[1])
    return Field(ge=rng[0], le=rng[1])


def _number(rng: tuple[float, float], unit: str = "", low_open: bool = False, integer: bool = False,
            optional: bool = False) -> Any:
    """A BeforeValidator: :func:`check` (``None`` passes when ``optional``)."""
    def before(v: Any) -> Any:
        if v is None and optional:
            return None
        return check(v, rng[0], rng[1], unit, low_open, integer)

    return BeforeValidator(before)


def _per_cores(rng: tuple[float, float], unit: str = "", optional: bool = False) -> Any:
    """A BeforeValidator for a per-core-count parameter: one number, or a non-empty list whose entry
    n-1 holds on n cores (:func:`hetsim.platform.schema.by_cores`), each in the range."""
    def before(v: Any) -> Any:
        if v is None and optional:
            return None
        if isinstance(v, list | tuple):
            if not v:
                raise ValueError(f"must be {describe(*rng, unit)} or a list of at least one")
            out = []
            for i, x in enumerate(v):
                try:
                    out.append(check(x, rng[0], rng[1], unit))
                except ValueError as e:
                    raise ValueError(f"entry {i} {e}") from None
            return out
        try:
            return check(v, rng[0], rng[1], unit)
        except ValueError as e:
            raise ValueError(f"{e} (or a list of them, entry n-1 for n cores)") from None

    return BeforeValidator(before)


def schema_version(current: int, note: str = "") -> Any:
    """A BeforeValidator for a file's ``schema`` key: the integer ``current`` (``true`` and ``2.0``
    equal 1 and 2 in Python, but are no version). ``note`` follows the message."""
    def before(v: Any) -> Any:
        if type(v) is not int or v != current:
            raise ValueError(f"must be the integer {current}{note}")
        return v

    return BeforeValidator(before)


# -- the types ------------------------------------------------------------------------------------
_Bw = Annotated[float, _bounds(BANDWIDTH_GBPS)]
Bandwidth_GBps = Annotated[float, _bounds(BANDWIDTH_GBPS), _number(BANDWIDTH_GBPS, "GB/s")]
OptBandwidth_GBps = Annotated[_Bw | None, _number(BANDWIDTH_GBPS, "GB/s", optional=True)]
PerCoresBandwidth_GBps = Annotated[_Bw | Annotated[list[_Bw], Field(min_length=1)],
                                   _per_cores(BANDWIDTH_GBPS, "GB/s")]
OptPerCoresBandwidth_GBps = Annotated[_Bw | Annotated[list[_Bw], Field(min_length=1)] | None,
                                      _per_cores(BANDWIDTH_GBPS, "GB/s", optional=True)]
Freq_MHz = Annotated[float, _bounds(FREQ_MHZ), _number(FREQ_MHZ, "MHz")]
MacsPerCycle = Annotated[float, _bounds(MACS_PER_CYCLE), _number(MACS_PER_CYCLE)]
Peak_GMACps = Annotated[float, _bounds(PEAK_GMACPS), _number(PEAK_GMACPS, "GMAC/s")]
OptPeak_GMACps = Annotated[Annotated[float, _bounds(PEAK_GMACPS)] | None,
                           _number(PEAK_GMACPS, "GMAC/s", optional=True)]
OptElementBytes = Annotated[Annotated[float, _bounds(ELEMENT_BYTES)] | None,
                            _number(ELEMENT_BYTES, "bytes", optional=True)]
Latency_ns = Annotated[float, _bounds(LATENCY_NS), _number(LATENCY_NS, "ns")]
_Us = Annotated[float, _bounds(OVERHEAD_US)]
Overhead_us = Annotated[float, _bounds(OVERHEAD_US), _number(OVERHEAD_US, "us")]
PerCoresOverhead_us = Annotated[_Us | Annotated[list[_Us], Field(min_length=1)],
                                _per_cores(OVERHEAD_US, "us")]
OptPerCoresOverhead_us = Annotated[_Us | Annotated[list[_Us], Field(min_length=1)] | None,
                                   _per_cores(OVERHEAD_US, "us", optional=True)]
OptCapacity_GiB = Annotated[Annotated[float, _bounds(CAPACITY_GIB)] | None,
                            _number(CAPACITY_GIB, "GiB", optional=True)]
OptCache_KiB = Annotated[Annotated[float, _bounds(CACHE_KIB)] | None,
                         _number(CACHE_KIB, "KiB", optional=True)]
Energy_pJ_per_byte = Annotated[float, _bounds(ENERGY_PJ_PER_BYTE), _number(ENERGY_PJ_PER_BYTE, "pJ/B")]
Power_W = Annotated[float, _bounds(POWER_W), _number(POWER_W, "W")]
OptPower_W = Annotated[Annotated[float, _bounds(POWER_W)] | None, _number(POWER_W, "W", optional=True)]
Fraction = Annotated[float, _bounds(FRACTION), _number(FRACTION)]
OptFraction = Annotated[Annotated[float, _bounds(FRACTION)] | None,
                        _number(FRACTION, optional=True)]
Count = Annotated[int, _bounds(COUNT), _number(COUNT, integer=True)]
OptCount = Annotated[Annotated[int, _bounds(COUNT)] | None, _number(COUNT, integer=True, optional=True)]
#: Tensor sizes: a dimension that may be 0 (an empty tensor), one that may not, an offset (pad).
Dim = Annotated[int, _bounds(DIM), _number(DIM, integer=True)]
PosDim = Annotated[int, _bounds((1, DIM[1])), _number((1, DIM[1]), integer=True)]
OptPosDim = Annotated[Annotated[int, _bounds((1, DIM[1]))] | None,
                      _number((1, DIM[1]), integer=True, optional=True)]
OptWork = Annotated[Annotated[int, _bounds(WORK)] | None, _number(WORK, integer=True, optional=True)]
OptDim = Annotated[Annotated[int, _bounds(DIM)] | None, _number(DIM, integer=True, optional=True)]
def _finite(v: Any) -> Any:
    if isinstance(v, bool) or isinstance(v, str) or not isinstance(v, numbers.Real):
        raise ValueError("must be a finite number" + (", not a string" if isinstance(v, str) else ""))
    if isinstance(v, numbers.Integral):
        return int(v)
    if not math.isfinite(v):
        raise ValueError("must be a finite number")
    return float(v)


#: Any finite real number (a sweep's range ends): strict, no NaN or infinity.
FiniteReal = Annotated[float, BeforeValidator(_finite)]
#: Seconds of a tuning clock or a cost: [0, 1e12].
OptCost_s = Annotated[Annotated[float, _bounds((0.0, CLOCK_S[1]))] | None,
                      _number((0.0, CLOCK_S[1]), "s", optional=True)]
OptClock_s = Annotated[Annotated[float, _bounds(CLOCK_S, True)] | None,
                       _number(CLOCK_S, "s", low_open=True, optional=True)]
OptFps = Annotated[Annotated[float, _bounds(FPS, True)] | None,
                   _number(FPS, "frames/s", low_open=True, optional=True)]
OptFrames = Annotated[Annotated[int, _bounds(FRAMES)] | None,
                      _number(FRAMES, "frames", integer=True, optional=True)]
OptQueueFrames = Annotated[Annotated[int, _bounds(QUEUE_FRAMES)] | None,
                           _number(QUEUE_FRAMES, "frames", integer=True, optional=True)]
OptInterval_s = Annotated[Annotated[float, _bounds(INTERVAL_S)] | None,
                          _number(INTERVAL_S, "s", optional=True)]
OptTrials = Annotated[Annotated[int, _bounds(TRIALS)] | None, _number(TRIALS, integer=True, optional=True)]
Seed = Annotated[int, _bounds(SEED), _number(SEED, integer=True)]
#: Lognormal measurement noise sigma: 0 .. 5, the one range of every noise (run options, an
#: exploration's measurement, the command line). At sigma = 5 the mean-1 factor already has a median
#: of e^-12.5 and a p99 near e^-0.9: a measurement this noisy carries no information, and past it the
#: factors overflow (Shisha answered ``best_fps inf`` at sigma 1e6).
NOISE_SIGMA = (0.0, 5.0)
OptNoiseSigma = Annotated[Annotated[float, _bounds(NOISE_SIGMA)] | None, _number(NOISE_SIGMA, optional=True)]

#: A layer index of a mapping (1-based).
Layer = Annotated[int, _bounds(COUNT), _number(COUNT, integer=True)]

# -- the cost-model blocks of main's later papers (PIM seed 003, hybrid partitioning seed 004, HOPE)
UnitInterval = Annotated[float, _bounds(UNIT_INTERVAL), _number(UNIT_INTERVAL)]
PerUnit_ns = Annotated[float, _bounds(PER_UNIT_NS), _number(PER_UNIT_NS, "ns")]
_Ns = Annotated[float, _bounds(PER_UNIT_NS)]
OptPerCoresPerUnit_ns = Annotated[_Ns | Annotated[list[_Ns], Field(min_length=1)] | None,
                                  _per_cores(PER_UNIT_NS, "ns", optional=True)]
PosPerUnit_ns = Annotated[float, _bounds(PER_UNIT_NS, True), _number(PER_UNIT_NS, "ns", low_open=True)]
Factor = Annotated[float, _bounds(FACTOR, True), _number(FACTOR, low_open=True)]
Speedup = Annotated[float, _bounds((1.0, FACTOR[1])), _number((1.0, FACTOR[1]))]
#: Core or accelerator cycles per unit of work (gemm2's per-byte, per-tile, per-kernel costs): [0, 1e6].
Cycles = Annotated[float, _bounds(FACTOR), _number(FACTOR, "cycles")]
_Cyc = Annotated[float, _bounds(FACTOR)]
#: Cycles per unit of work on n cores: one value, or a list whose entry n-1 holds on n cores.
PerCoresCycles = Annotated[_Cyc | Annotated[list[_Cyc], Field(min_length=1)], _per_cores(FACTOR, "cycles")]
OptPosFactor = Annotated[Annotated[float, _bounds(FACTOR, True)] | None, _number(FACTOR, low_open=True, optional=True)]
OptMacsPerCycle = Annotated[Annotated[float, _bounds(MACS_PER_CYCLE)] | None,
                            _number(MACS_PER_CYCLE, optional=True)]
ElementBytes = Annotated[float, _bounds(ELEMENT_BYTES), _number(ELEMENT_BYTES, "bytes")]
Memory_MiB = Annotated[float, _bounds(MEMORY_MIB), _number(MEMORY_MIB, "MiB")]
#: Winograd F(m x m, 3 x 3) output tile m: 2 .. 64 (ncnn uses 2, 4, 6).
WinogradTile = Annotated[int, _bounds((2, 64)), _number((2, 64), integer=True)]
#: Relative loss of bandwidth per flow past a memory's knee: [0, 10).
LOSS_PER_FLOW = (0.0, 10.0)
LossPerFlow = Annotated[float, _bounds(LOSS_PER_FLOW), _number(LOSS_PER_FLOW)]
