"""Kernel-level co-execution: ARM-CL's default, every kernel split across the chosen cores of both
clusters (Pipe-it §III-A, Figs. 3 and 5).

Images run one after another; each op's work is divided between the Big cores and the Small cores
(``small_share`` of it to the Small cluster: by default ARM-CL's equal split per thread,
n_small / (n_big + n_small)), each cluster runs its part as the ground truth prices it on that many
threads, and the op ends when the slower part ends (fork-join). When an op spans both clusters it
pays a **cross-cluster penalty**: the working set is split between the two L2 caches, conflict
misses of one cluster are served by the other's L2 through the CCI, and both parts slow down by
``hmp_slowdown`` (a fraction); the fork-join barrier crosses the CCI twice (its latency). The paper
gives no number for the slowdown; hetsim_papers/pipeit/experiments/calibration.py derives it from Fig. 5's
statement and Fig. 3 is then the check.

    kl = KernelLevel(truth, hmp_slowdown=0.4)
    kl.throughput(workload, n_big=4, n_small=2)          # B4+s2, equal split per thread
    kl.throughput(workload, 4, 4, small_share=0.1)        # Fig. 5: 10 % of every kernel on Small
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsim.errors import HetsimError
from hetsim.workload.ops import VIEW_KINDS
from hetsim_papers.pipeit.cost import Gemm2GroundTruth, PipeitGroundTruth


@dataclass
class KernelLevel:
    """Kernel-level co-execution on ``n_big`` cores of cluster ``big`` and ``n_small`` of ``small``."""

    truth: PipeitGroundTruth | Gemm2GroundTruth
    hmp_slowdown: float = 0.0
    big: str = "big"
    small: str = "little"

    def __post_init__(self):
        if self.hmp_slowdown < 0:
            raise HetsimError(f"hmp_slowdown must be >= 0 (got {self.hmp_slowdown})")
        platform = self.truth.platform
        self._big = self.truth.params(self.big)
        self._small = self.truth.params(self.small)
        route = platform.route(platform.ep(f"{self.big}:1"), platform.ep(f"{self.small}:1"))
        self.barrier_s = 2 * route.latency_s      # a fork-join across the CCI: there and back

    def op_time(self, op, n_big: int, n_small: int, small_share: float | None = None) -> float:
        """Time of one op split across both clusters (s)."""
        share = self._share(n_big, n_small, small_share)
        if op.kind in VIEW_KINDS:
            return 0.0
        both = 0 < share < 1
        t_big = self.truth.side_time(op, self._big, n_big, 1 - share)[0] if share < 1 else 0.0
        t_small = self.truth.side_time(op, self._small, n_small, share)[0] if share > 0 else 0.0
        overhead = max(self._big.overhead_s if share < 1 else 0.0, self._small.overhead_s if share > 0 else 0.0)
        if both:
            return overhead + self.barrier_s + (1 + self.hmp_slowdown) * max(t_big, t_small)
        return overhead + max(t_big, t_small)

    def layer_times(self, workload, n_big: int, n_small: int,
                    small_share: float | None = None) -> np.ndarray:
        """Per-layer times of one image (index 0 = layer 1), s."""
        self.truth.bind(workload)   # a ground truth whose op costs depend on the network (gemm2)
        return np.array([sum(self.op_time(op, n_big, n_small, small_share) for op in layer.ops)
                         for layer in workload.layers])

    def throughput(self, workload, n_big: int, n_small: int, small_share: float | None = None) -> float:
        """Images per second: one image after another, 1 / the sum of the layer times."""
        return 1.0 / float(self.layer_times(workload, n_big, n_small, small_share).sum())

    def _share(self, n_big: int, n_small: int, small_share: float | None) -> float:
        if not (0 <= n_big <= self._big.cores and 0 <= n_small <= self._small.cores) or n_big + n_small == 0:
            raise HetsimError(f"kernel-level run on {n_big} Big + {n_small} Small cores: the clusters have "
                              f"{self._big.cores} and {self._small.cores}")
        if small_share is None:
            return n_small / (n_big + n_small)     # ARM-CL: the same work for every thread
        if not 0 <= small_share <= 1:
            raise HetsimError(f"small_share must be in [0, 1] (got {small_share})")
        if (small_share > 0 and n_small == 0) or (small_share < 1 and n_big == 0):
            raise HetsimError(f"small_share {small_share} needs cores on the cluster that gets work")
        return small_share
