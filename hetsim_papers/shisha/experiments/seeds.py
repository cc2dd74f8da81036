"""``shisha:seeds``: Algorithm 1's seeds against seeds derived by hand from it, and the seeds on the
chiplets the other figures start from. Paper II prints no seed: the vectors are derivations from
Algorithm 1 with the tie rules of docs/papers/shisha.md (verification vectors, also in
tests/test_vectors.py)."""

from __future__ import annotations

import pandas as pd

from hetsim.experiment import VECTOR, Artifact, Context
from hetsim.workload import load_workload
from hetsim_papers.shisha.experiments._common import artifact
from hetsim_papers.shisha.experiments.paper import DERIVED_SEEDS
from hetsim_papers.shisha.experiments.runs import chiplet_seeds
from hetsim_papers.shisha.shisha import seed_split


def seeds(ctx: Context) -> Artifact:
    rows, claims = [], []
    for (w, n), expected in DERIVED_SEEDS.items():
        got = seed_split(load_workload(w).layer_weights().tolist(), n)
        rows.append({"workload": w, "platform": None, "N": n, "seed": list(got), "derived": list(expected),
                     "eps": None, "seed_fps": None})
        claims.append(ctx.equal(f"seed of {w}, N = {n} (derived from Algorithm 1)", list(expected), list(got),
                                kind=VECTOR))
    table = pd.DataFrame(rows + [dict(r) for r in chiplet_seeds()])
    return artifact(table, None, claims,
                    ["The vectors are [derived] from Algorithm 1 with the tie rules of docs/papers/shisha.md; the "
                     "chiplet rows show the seeds (with Rank_l / Rank_w EP assignments) the other figures "
                     "start from."])
