"""Plausibility warnings: values a schema accepts but a unit slip most likely produced.

A platform file with ``freq_MHz: 2.4`` is valid (a positive number) and simulates a 2.4 MHz core,
i.e. a 226 s ResNet50; it was almost certainly meant as 2.4 GHz. Such values are not errors (a
what-if study may want an extreme value on purpose) but each gets one warning line naming the
field, the value and the likely slip, printed once per process on stderr by
:func:`~hetsim.platform.load_platform` and listed by ``hetsim platforms validate``::

    >>> plausibility_warnings(load_platform("hikey970", ["core_types.cortex-a73.dvfs.max.freq_MHz=2.4"]))
    ['core_types.cortex-a73.dvfs.max.freq_MHz: 2.4 looks like GHz (2.4 GHz is freq_MHz: 2400); ...']

The ranges (:data:`RANGES`) are deliberately wide: a warning means "outside anything shipped
hardware has", not "unusual".
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hetsim.platform.schema import Platform


@dataclass(frozen=True)
class Range:
    """Typical values of a field, and the unit slip a value below ``low`` or above ``high``
    most likely is."""

    low: float | None
    high: float | None
    below: str          # the likely slip under ``low`` ("" = no warning below)
    above: str          # the likely slip over ``high``
    typical: str        # what typical values are, for the message


#: field name -> its plausible range. [choice] Bounds an order of magnitude beyond shipped hardware
#: (a 50 MHz microcontroller core, a 10 TB/s HBM stack, a PMAC/s accelerator).
RANGES: dict[str, Range] = {
    "freq_MHz": Range(50, 10_000, "GHz (2.4 GHz is freq_MHz: 2400)", "kHz or Hz (2.4 GHz is freq_MHz: 2400)",
                      "cores run at 100-5000 MHz"),
    "bandwidth_GBps": Range(0.0001, 10_000, "TB/s", "MB/s (25.6 GB/s is bandwidth_GBps: 25.6)",
                            "memories and links move 0.1-3000 GB/s"),
    "bandwidth_GBps_per_core": Range(0.01, 1_000, "TB/s", "MB/s (6 GB/s is bandwidth_GBps_per_core: 6)",
                                     "one core draws 1-50 GB/s"),
    "macs_per_cycle": Range(None, 512, "", "MAC/s or a whole cluster's rate (a Cortex-A76 core does 8)",
                            "a core does 1-64 FP32 MAC/cycle"),
    "peak_GMACps": Range(0.01, 1_000_000, "TMAC/s (6 TOPS INT8 is peak_GMACps: 3000)",
                         "MAC/s or MMAC/s (1 TMAC/s is peak_GMACps: 1000)",
                         "accelerators run 1-500,000 GMAC/s"),
    "latency_ns": Range(None, 1e10, "", "ps (100 ns is latency_ns: 100)",
                        "memories and links take 1 ns-10 ms"),
    "active_W_per_core": Range(None, 50, "", "mW (1.1 W is active_W_per_core: 1.1)",
                               "a core draws 0.05-10 W"),
    "idle_W_per_core": Range(None, 20, "", "mW (0.05 W is idle_W_per_core: 0.05)",
                             "an idle core draws 0-1 W"),
    "active_W": Range(None, 1_000, "", "mW (5 W is active_W: 5)", "an accelerator draws 0.1-500 W"),
    "idle_W": Range(None, 500, "", "mW (0.5 W is idle_W: 0.5)", "an idle accelerator draws 0-50 W"),
    "static_W": Range(None, 2_000, "", "mW (2 W is static_W: 2)", "a board draws 0-1000 W"),
    "capacity_GiB": Range(None, 65_536, "", "MiB (8 GiB is capacity_GiB: 8)", "memories hold 0.001-4096 GiB"),
    "l2_KiB": Range(16, 262_144, "MiB (2 MiB is l2_KiB: 2048)", "bytes (2 MiB is l2_KiB: 2048)",
                    "an L2 holds 128-65536 KiB"),
}


def _entries(platform: Platform) -> Iterator[tuple[str, object]]:
    """(field path, model) of every part of the platform that has fields, in file order; list
    entries are addressed by name, as --set paths are."""
    yield "", platform
    for m in platform.memories:
        yield f"memories.{m.name}", m
    for t in platform.core_types:
        yield f"core_types.{t.name}", t
        for lvl in t.dvfs:
            yield f"core_types.{t.name}.dvfs.{lvl.name}", lvl
    for c in platform.clusters:
        yield f"clusters.{c.name}", c
    for a in platform.accelerators:
        yield f"accelerators.{a.name}", a
        for pr in a.precisions:
            yield f"accelerators.{a.name}.precisions.{pr.dtype}", pr
    for lk in platform.links:
        yield f"links.{lk.name}", lk
    if platform.power is not None:
        yield "power", platform.power


def plausibility_warnings(platform: Platform) -> list[str]:
    """One line per value outside its typical range (:data:`RANGES`), naming the field path, the
    value and the likely unit slip; [] for a plausible platform."""
    out = []
    for path, model in _entries(platform):
        fields = getattr(type(model), "model_fields", {})   # a miss through pydantic's __getattr__ costs ~3 us
        for name, rng in RANGES.items():
            if name not in fields:
                continue
            value = getattr(model, name, None)
            if not isinstance(value, int | float) or isinstance(value, bool):
                continue
            where = f"{path}.{name}" if path else name
            if rng.low is not None and value < rng.low and rng.below:
                out.append(f"{where}: {value:g} looks like {rng.below}; {rng.typical}")
            elif rng.high is not None and value > rng.high and rng.above:
                out.append(f"{where}: {value:g} looks like {rng.above}; {rng.typical}")
    for t in platform.core_types:
        for lvl in t.dvfs:
            if (lvl.active_W_per_core is not None and lvl.idle_W_per_core is not None
                    and lvl.idle_W_per_core > lvl.active_W_per_core):
                out.append(f"core_types.{t.name}.dvfs.{lvl.name}: idle_W_per_core {lvl.idle_W_per_core:g} "
                           f"is above active_W_per_core {lvl.active_W_per_core:g}; swapped?")
    return out
