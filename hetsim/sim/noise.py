"""Seeded measurement noise: the one place hetsim draws it, for every engine and explorer.

Noise is a multiplicative lognormal factor of mean 1 per piece of work, of sigma in
:data:`hetsim.bounds.NOISE_SIGMA` (:class:`~hetsim.options.RunOptions` and
:class:`~hetsim.exploration.Measurement` both refuse any other). An exploration's noisy trial that
runs an engine draws that run's seed from the exploration's noise stream (:func:`trial_seed`); a
closed-form trial draws its factors from the stream itself (:func:`lognormal_factors`).
"""

from __future__ import annotations

import numpy as np


def lognormal_factors(rng: np.random.Generator, sigma: float, size) -> np.ndarray | None:
    """Multiplicative lognormal factors of mean 1 (mu = -sigma^2 / 2), or None when sigma is 0
    (and then nothing is drawn, so the generator's stream is unchanged)."""
    if sigma <= 0:
        return None
    return rng.lognormal(-0.5 * sigma**2, sigma, size=size)


def trial_seed(rng: np.random.Generator | None, sigma: float) -> int:
    """The seed of one noisy trial's engine run: one integer drawn from the exploration's noise
    stream ``rng``; 0, with nothing drawn, without noise or without a stream."""
    if rng is None or sigma <= 0:
        return 0
    return int(rng.integers(2**31))
