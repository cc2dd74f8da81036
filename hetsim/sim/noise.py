"""Seeded measurement noise: one definition for every engine and explorer."""

from __future__ import annotations

import numpy as np


def lognormal_factors(rng: np.random.Generator, sigma: float, size) -> np.ndarray | None:
    """Multiplicative lognormal factors of mean 1 (mu = -sigma^2 / 2), or None when sigma is 0
    (and then nothing is drawn, so the generator's stream is unchanged)."""
    if sigma <= 0:
        return None
    return rng.lognormal(-0.5 * sigma**2, sigma, size=size)
