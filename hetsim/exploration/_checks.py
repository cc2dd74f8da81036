"""Parameter checks for the explore package: one-line HetsimErrors that name the owner, the
parameter, the value and what is allowed (scikit-learn's validation, without the machinery)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hetsim.errors import HetsimError


def check_choice(owner: str, name: str, value, allowed: Sequence) -> None:
    if value not in allowed:
        raise HetsimError(f"{owner}: {name}={value!r} is not allowed; allowed: "
                          f"{', '.join(repr(a) for a in allowed)}")


def check_number(owner: str, name: str, value, low=None, high=None, integer: bool = False,
                 low_open: bool = False) -> None:
    ok_type = (isinstance(value, int | np.integer) if integer
               else isinstance(value, int | float | np.integer | np.floating))
    if isinstance(value, bool) or not ok_type:
        raise HetsimError(f"{owner}: {name}={value!r} must be {'an integer' if integer else 'a number'}")
    bad_low = low is not None and (value <= low if low_open else value < low)
    if bad_low or (high is not None and value > high) or (not integer and not math.isfinite(value)):
        lo = "" if low is None else f"{'>' if low_open else '>='} {low}"
        hi = "" if high is None else f"<= {high}"
        raise HetsimError(f"{owner}: {name}={value!r} is out of range; allowed: "
                          f"{' and '.join(x for x in (lo, hi) if x) or 'a finite number'}")
