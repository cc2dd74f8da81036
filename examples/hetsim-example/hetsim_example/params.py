"""The ``sustained:`` block of a core type: what only the sustained-clock cost model reads.

A block's module imports only :mod:`hetsim.platform.params`, :mod:`hetsim.bounds` and pydantic: the
platform schema imports it while the schema itself is being built.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from hetsim.bounds import Fraction
from hetsim.platform.params import CostParams


class SustainedClockParams(CostParams):
    """``core_types[].sustained``: the clock a core type holds under sustained load, read by the
    ``sustained`` cost model (:class:`hetsim_example.cost.SustainedClockCostModel`)."""

    readers: ClassVar[tuple[str, ...]] = ("sustained",)

    clock_fraction: Fraction = Field(
        default=1.0, description="The clock the core type sustains under load (thermal or power limits) as a "
        "fraction of its DVFS level's frequency: the multiply-adds of every op slow down by it, the bytes it "
        "moves do not. Default 1: the level's clock holds.")
