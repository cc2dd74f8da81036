"""The thesis's three genome encodings and their decoders (Savva §4.2.1-4.2.2 and its ref. [18]).

All three decode a whole population at once into :class:`~hetsim_papers.nsga2.space.Decoded`
arrays, which :meth:`HybridSpace.placement` turns into the one mapping object:

* :class:`Naive` (§4.2.1): one gene per non-splittable layer and n genes per splittable layer, in
  layer order, each a device id 1..n; a splittable layer is split over the distinct devices of its
  genes (eq. 4.5: length ``S x n + L - S``).
* :class:`Advanced` (§4.2.2): a p x n matrix of split points over the re-indexed splittable layers
  (values 0..S, 0 = the device takes no part in that split). In row r, the device holding the j-th
  smallest non-zero value v_j runs split r of splittable layers (v_{j-1}, v_j]; the layers between
  splittable layers go with split 1 of the one before them (restriction 2). eq. 4.6: length p x n.
* :class:`SplitPoint` (the vertical baseline of [18], §6): n genes, values 0..L, each device runs
  the layers (previous split point, its split point]; no layer is split.

Where the thesis is silent, one line each in docs/papers/nsga2.md: in a row, equal
values are taken in device order and the later device gets an empty range; row 1 (and the
split-point genome) is repaired so that it covers every layer: the device with the largest value
(the first such) takes the rest, or device 1 everything when the row is all zeros
(``repair="extend"``); channels are dealt equally over the distinct devices of a layer (or in
proportion to how many genes name each device, ``shares="multiplicity"``).
"""

from __future__ import annotations

import math
from typing import Annotated

import numpy as np
from pydantic import Field, ValidationError

from hetsim.bounds import Count, Dim
from hetsim.errors import HetsimError
from hetsim.mapping import FileModel
from hetsim.validation import one_line
from hetsim_papers.nsga2.space import Columns, Decoded, HybridSpace

CHROMOSOMES = ("naive", "advanced", "split-point")
SHARES = ("equal", "multiplicity")


class Chromosome:
    """A genome encoding over a :class:`HybridSpace`: integer genes in ``[xl, xu]``."""

    name = ""

    def __init__(self, space: HybridSpace, shares: str = "equal"):
        if shares not in SHARES:
            raise HetsimError(f"{self.name} chromosome: shares={shares!r}; allowed: {', '.join(SHARES)}")
        self.space = space
        self.shares = shares
        self.xl = np.zeros(0, dtype=np.int64)
        self.xu = np.zeros(0, dtype=np.int64)

    @property
    def n_var(self) -> int:
        return len(self.xl)

    @property
    def space_size(self) -> int:
        """Genomes in the encoding: the product of every gene's number of values."""
        return math.prod(int(u - lo + 1) for lo, u in zip(self.xl, self.xu, strict=True))

    @property
    def log10_space_size(self) -> float:
        return float(np.sum(np.log10(self.xu - self.xl + 1.0)))

    def check(self, X: np.ndarray, source: str = "genome") -> np.ndarray:
        """``X`` as a 2-D integer array of genomes within the bounds (one line otherwise)."""
        arr = np.asarray(X)
        if arr.ndim == 1:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != self.n_var:
            raise HetsimError(f"{source}: a {self.name} genome has {self.n_var} genes, got shape {arr.shape}")
        if not np.all(np.isfinite(arr)) or not np.all(np.equal(np.round(arr), arr)):
            raise HetsimError(f"{source}: genes must be integers")
        arr = arr.astype(np.int64)
        bad = np.argwhere((arr < self.xl) | (arr > self.xu))
        if len(bad):
            i, j = bad[0]
            raise HetsimError(f"{source}: gene {j} is {arr[i, j]}, outside {self.xl[j]}..{self.xu[j]} "
                              f"({self.describe_gene(int(j))})")
        return arr

    def describe_gene(self, j: int) -> str:
        return f"gene {j}"

    def repair(self, X: np.ndarray) -> np.ndarray:
        """Genomes made valid (a no-op unless the encoding needs it)."""
        return X

    def decode(self, X: np.ndarray) -> Decoded:
        raise NotImplementedError

    def columns(self, X: np.ndarray) -> Columns:
        """``Columns.of(decode(X))``: the decoded population as the model's layer loop reads it."""
        return Columns.of(self.decode(X))

    def placement(self, x, cost=None):
        """One genome as the mapping object (checked, repaired, decoded)."""
        X = self.repair(self.check(x))
        return self.space.placement(self.decode(X), 0, cost)


def _distinct_slots(devices: np.ndarray, count: bool = True) -> tuple[np.ndarray, np.ndarray | None]:
    """For device lists (..., m) with -1 for none: the distinct devices in order of first
    appearance, left-aligned and padded with -1, and (``count``) how many times each was named."""
    m = devices.shape[-1]
    flat = devices.reshape(-1, m)
    new = flat >= 0
    if m > 1:
        # new[:, j]: the list names flat[:, j] for the first time at j. Each list's first position
        # of every device, by writing the positions last to first (m writes, not m^2 comparisons).
        width = int(flat.max(initial=-1)) + 2                   # the devices, then a column for -1
        at = np.arange(len(flat))[:, None] * width + np.where(new, flat, width - 1)
        first = np.empty(len(flat) * width, dtype=np.int64)
        for j in range(m - 1, -1, -1):
            first[at[:, j]] = j
        new &= first[at] == np.arange(m)
    # the new ones left-aligned in their order (the others written to a spare last element)
    to = np.where(new, np.arange(len(flat))[:, None] * m + np.cumsum(new, axis=1) - 1, flat.size)
    out = np.full(flat.size + 1, -1, dtype=np.int64)
    out[to.ravel()] = flat.ravel()
    out[-1] = -1
    slots = out[:-1].reshape(devices.shape)
    if not count:
        return slots, None
    counts = (slots[..., :, None] == devices[..., None, :]).sum(axis=-1) * (slots >= 0)
    return slots, counts.astype(float)


class Naive(Chromosome):
    """The naive chromosome (§4.2.1): genes are device ids 1..n, n per splittable layer."""

    name = "naive"

    def __init__(self, space: HybridSpace, shares: str = "equal"):
        super().__init__(space, shares)
        n = space.n_devices
        width = np.where(space.splittable, n, 1)
        self.offsets = np.concatenate(([0], np.cumsum(width)))
        self.width = width
        self.xl = np.ones(int(self.offsets[-1]), dtype=np.int64)
        self.xu = np.full(int(self.offsets[-1]), n, dtype=np.int64)

    @staticmethod
    def length(splittable: int, layers: int, devices: int) -> int:
        """eq. 4.5: ``sp x n + ol - sp``."""
        return splittable * devices + layers - splittable

    def describe_gene(self, j: int) -> str:
        layer = int(np.searchsorted(self.offsets, j, side="right") - 1)
        return f"layer {self.space.op_names[layer]}, device ids 1..{self.space.n_devices}"

    def decode(self, X: np.ndarray) -> Decoded:
        return self.space.split_decoded(*self._slots(X))

    def columns(self, X: np.ndarray) -> Columns:
        return self.space.split_columns(*self._slots(X))

    def _slots(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Slot 0 of every layer (P, L), the splittable layers' slots (P, S, k) and their weights."""
        X = np.asarray(X, dtype=np.int64)
        space = self.space
        P, n, L = X.shape[0], space.n_devices, space.n_layers
        split = space.split_layers
        genes = self.offsets[split][:, None] + np.arange(n)[None, :]            # (S, n)
        split_slots, counts = _distinct_slots(X[:, genes] - 1, self.shares == "multiplicity")
        k = int(max(1, (split_slots >= 0).sum(axis=2).max()))
        slot0 = np.empty((P, L), dtype=np.int64)
        slot0[:, split] = split_slots[:, :, 0]
        others = np.flatnonzero(~space.splittable)
        slot0[:, others] = X[:, self.offsets[others]] - 1
        return slot0, split_slots[:, :, :k], None if counts is None else counts[:, :, :k]


class Advanced(Chromosome):
    """The advanced chromosome (§4.2.2): a p x n matrix of split points, values 0..S."""

    name = "advanced"

    def __init__(self, space: HybridSpace, p: int = 2, shares: str = "equal", repair: str = "extend"):
        super().__init__(space, shares)
        if isinstance(p, bool) or not isinstance(p, int | np.integer) or not 1 <= p <= space.n_devices:
            raise HetsimError(f"advanced chromosome: p={p!r} must be an integer in 1..{space.n_devices} "
                              f"(at most one split per device, thesis §4.2.2 restriction 1)")
        if repair not in ("extend", "none"):
            raise HetsimError(f"advanced chromosome: repair={repair!r}; allowed: extend, none")
        self.p = int(p)
        self.repair_rule = repair
        self.xl = np.zeros(self.p * space.n_devices, dtype=np.int64)
        self.xu = np.full(self.p * space.n_devices, space.n_split, dtype=np.int64)

    @staticmethod
    def length(p: int, devices: int) -> int:
        """eq. 4.6: ``p x n``."""
        return p * devices

    def describe_gene(self, j: int) -> str:
        r, d = divmod(j, self.space.n_devices)
        return f"split {r + 1}, device {d + 1}: a split point 0..{self.space.n_split}"

    def repair(self, X: np.ndarray) -> np.ndarray:
        """Row 1 must cover every splittable layer, or the last ones (and their groups) would have
        no device: extend the device with the largest split point to S (the first such device), or
        give device 1 everything when row 1 is all zeros (docs/papers/nsga2.md)."""
        return _cover(X, self.space.n_devices, self.space.n_split) if self.repair_rule == "extend" else X

    def owners(self, X: np.ndarray) -> np.ndarray:
        """owner[i, r, j]: the device running split r of splittable layer j+1 of individual i
        (-1: none). The device with the smallest split point >= j+1 owns it (equal values: the
        first device, the later one gets an empty range)."""
        P, n, S = X.shape[0], self.space.n_devices, self.space.n_split
        V = X.reshape(P, self.p, n)
        big = S + 1
        Vm = np.where(V > 0, V, big)
        owner = np.full((P, self.p, S), -1, dtype=np.int64)
        for j in range(S):
            masked = np.where(Vm >= j + 1, Vm, big)
            d = masked.argmin(axis=2)
            ok = np.take_along_axis(masked, d[:, :, None], axis=2)[:, :, 0] < big
            owner[:, :, j] = np.where(ok, d, -1)
        return owner

    def decode(self, X: np.ndarray) -> Decoded:
        return self.space.split_decoded(*self._slots(X))

    def columns(self, X: np.ndarray) -> Columns:
        return self.space.split_columns(*self._slots(X))

    def _slots(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """Slot 0 of every layer (P, L), the splittable layers' slots (P, S, k) and their weights."""
        X = np.asarray(X, dtype=np.int64)
        space = self.space
        owner = self.owners(X)                                     # (P, p, S)
        if np.any(owner[:, 0, :] < 0):
            raise HetsimError("advanced chromosome: row 1 leaves a splittable layer without a device; "
                              "repair the genome (repair='extend') first")
        multiplicity = self.shares == "multiplicity"
        split_slots, counts = _distinct_slots(np.swapaxes(owner, 1, 2), multiplicity)   # (P, S, p)
        k = int(max(1, (split_slots >= 0).sum(axis=2).max()))
        P, L = X.shape[0], space.n_layers
        slot0 = np.empty((P, L), dtype=np.int64)
        slot0[:, space.split_layers] = split_slots[:, :, 0]
        others = np.flatnonzero(~space.splittable)
        # Restriction 2: a non-splittable layer runs on split 1 of the splittable layer before it.
        slot0[:, others] = split_slots[:, space.group[others], 0]
        return slot0, split_slots[:, :, :k], None if counts is None else counts[:, :, :k]


class SplitPoint(Chromosome):
    """The vertical baseline (§6, the Split-Point encoding of [18]): n genes, values 0..L."""

    name = "split-point"

    def __init__(self, space: HybridSpace, repair: str = "extend"):
        super().__init__(space, "equal")
        if repair not in ("extend", "none"):
            raise HetsimError(f"split-point chromosome: repair={repair!r}; allowed: extend, none")
        self.repair_rule = repair
        self.xl = np.zeros(space.n_devices, dtype=np.int64)
        self.xu = np.full(space.n_devices, space.n_layers, dtype=np.int64)

    def describe_gene(self, j: int) -> str:
        return f"device {j + 1}: a split point 0..{self.space.n_layers}"

    def repair(self, X: np.ndarray) -> np.ndarray:
        return _cover(X, self.space.n_devices, self.space.n_layers) if self.repair_rule == "extend" else X

    def decode(self, X: np.ndarray) -> Decoded:
        X = np.asarray(X, dtype=np.int64)
        L = self.space.n_layers
        big = L + 1
        Vm = np.where(X > 0, X, big)
        layers = np.arange(1, L + 1)
        masked = np.where(Vm[:, None, :] >= layers[None, :, None], Vm[:, None, :], big)   # (P, L, n)
        d = masked.argmin(axis=2)
        ok = np.take_along_axis(masked, d[:, :, None], axis=2)[:, :, 0] < big
        if not np.all(ok):
            raise HetsimError("split-point chromosome: the genome leaves a layer without a device; repair it "
                              "(repair='extend') first")
        return self.space.decoded(d[:, :, None])


def _cover(X: np.ndarray, n: int, top: int) -> np.ndarray:
    """Row 1 of each genome (its first n genes) reaches ``top``: the first device with the largest
    value gets ``top``; an all-zero row gives device 1 ``top``."""
    X = np.array(X, dtype=np.int64, copy=True)
    row = X[:, :n]
    short = row.max(axis=1) < top
    if np.any(short):
        d = row.argmax(axis=1)          # the first device with the largest value (device 1 if all 0)
        idx = np.flatnonzero(short)
        X[idx, d[idx]] = top
    return X


def make_chromosome(name: str, space: HybridSpace, p: int = 2, shares: str = "equal",
                    repair: str = "extend") -> Chromosome:
    """A chromosome by name: ``naive``, ``advanced`` (with ``p``) or ``split-point``."""
    if name == "naive":
        return Naive(space, shares)
    if name == "advanced":
        return Advanced(space, p, shares, repair)
    if name == "split-point":
        return SplitPoint(space, repair)
    raise HetsimError(f"chromosome {name!r}; allowed: {', '.join(CHROMOSOMES)}")


# -- the mapping format ``genome:`` ---------------------------------------------------------------
class GenomeSpec(FileModel):
    """A hybrid partition as a genome of Savva's thesis (seed 004): ``chromosome`` naive, advanced
    (with ``p``) or split-point, over the ``devices`` view (``cpu``, ``cpu+gpu`` or EP names)."""

    chromosome: str
    genes: Annotated[list[Dim], Field(min_length=1)]   # each in [0, 2^31-1]; the encoding checks its own bounds
    p: Count = 2
    devices: str | list[str] = "cpu"
    shares: str = "equal"


class GenomeFile(FileModel):
    """A mapping file in this plugin's format: ``genome:`` (and an optional ``description``)."""

    description: str = ""
    genome: GenomeSpec


def load_genome(data: dict, platform, workload, source: str, cost):
    """A genome file decoded by its chromosome (the plugin's mapping format ``genome``)."""
    try:
        spec = GenomeFile.model_validate(data).genome
    except ValidationError as e:
        raise one_line(source, e) from None
    where = f"{source}: genome"
    try:
        space = HybridSpace(platform, workload, spec.devices)
        chromosome = make_chromosome(spec.chromosome, space, p=spec.p, shares=spec.shares)
        genes = chromosome.repair(chromosome.check(np.array(spec.genes), f"{where}.genes"))
        return space.placement(chromosome.decode(genes), 0, cost)
    except HetsimError as e:
        text = str(e)
        raise HetsimError(text if text.startswith(source) else f"{where}: {text}") from None
