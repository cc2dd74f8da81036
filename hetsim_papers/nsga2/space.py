"""The hybrid-partitioning design space of a CNN on a list of devices (Savva's thesis, §4.1-4.2).

A :class:`HybridSpace` holds what the chromosomes and the vectorised fitness read of the
workload and the platform: the layers in ONNX order (the workload's op order), which are
splittable (Conv and FC with weights, re-indexed 1..S for the advanced chromosome), each
non-splittable layer's group (the splittable layer before it, §4.2.2 restriction 2), every layer's
producers and first consumer (AutoDiCE's Concat rule), and the devices (EPs) in the order the
genomes number them.

A population's mappings are :class:`Decoded` arrays: for every individual and layer, the devices
that compute it (split 1 first) with their channel shares, and the device that holds its output
(a split layer's Concat device). :meth:`HybridSpace.placement` turns one individual into the one
mapping object, :class:`hetsim.mapping.Placement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hetsim.errors import HetsimError
from hetsim.mapping import SPLITTABLE_KINDS, Placement, hybrid_placement, splittable

#: The device views of a platform (the thesis's two experiment set-ups, §5.1): its CPUs only
#: (n = 8 on xavier-nx-x8), or every CPU and GPU (n = 16).
VIEWS = ("cpu", "cpu+gpu")


def device_view(platform, view: str | Sequence[str]) -> list[str]:
    """The devices of a view, in the genome's order: ``"cpu"`` = every whole cluster,
    ``"cpu+gpu"`` = the clusters and the accelerators of each board in board order (board 1's CPU,
    its GPU, board 2's CPU, ...; places without a board last), or an explicit list of EP names,
    which must be whole clusters or accelerators of the platform (one line otherwise)."""
    if isinstance(view, str) and view in VIEWS:
        places = [(c.device, 0, c.name) for c in platform.clusters]
        if view == "cpu+gpu":
            places += [(a.device, 1, a.name) for a in platform.accelerators]
        boards = {d.name: i for i, d in enumerate(platform.devices)}
        return [name for _, _, name in sorted(places, key=lambda x: (boards.get(x[0], len(boards)), x[1]))]
    names = [view] if isinstance(view, str) else [str(v) for v in view]
    whole = {c.name for c in platform.clusters} | {a.name for a in platform.accelerators}
    for name in names:
        if name not in whole:
            raise HetsimError(f"devices: {name!r} is not a device of platform {platform.name}; allowed: a view "
                              f"({', '.join(VIEWS)}) or names among {', '.join(sorted(whole))}")
    if len(set(names)) != len(names):
        raise HetsimError(f"devices: {names} lists a device twice")
    if not names:
        raise HetsimError("devices: the list is empty")
    return names


@dataclass
class Decoded:
    """A population's mappings as arrays (P individuals, L layers, K slots).

    ``slots[i, l, k]`` is the k-th device (an index into the space's devices) computing layer l
    of individual i, split 1 first, -1 past the last; ``frac`` its share of the output channels;
    ``home[i, l]`` the device holding layer l's output (its Concat device when it is split)."""

    slots: np.ndarray
    frac: np.ndarray
    home: np.ndarray

    @property
    def primary(self) -> np.ndarray:
        return self.slots[:, :, 0]

    def __len__(self) -> int:
        return self.slots.shape[0]


@dataclass
class Columns:
    """A population's decoded arrays laid out for the model's layer loop
    (:class:`~hetsim_papers.nsga2.fitness.ThesisModel`): what :class:`Decoded` holds, layer-major,
    the slots past the first only for the layers some individual splits (a naive genome of
    DenseNet-121 on 16 devices decodes to 668 x 15 slots per individual, few of them used)."""

    slot0: np.ndarray        # (L, P) slot 0 of every layer
    share0: np.ndarray       # (L, P) its share
    home: np.ndarray         # (L, P)
    widths: np.ndarray       # (L,) the most slots any individual uses for the layer
    wide: np.ndarray         # (L,) the layer's row in slot_wide/share_wide, -1 if no one splits it
    slot_wide: np.ndarray    # (W, width - 1, P) slots 1.. of the layers someone splits (-1: none)
    share_wide: np.ndarray   # (W, width - 1, P)

    @property
    def n_layers(self) -> int:
        return self.slot0.shape[0]

    @classmethod
    def of(cls, decoded: Decoded) -> Columns:
        slots, frac = decoded.slots, decoded.frac
        L = slots.shape[1]
        widths = (slots >= 0).sum(axis=2).max(axis=0)
        split = np.flatnonzero(widths > 1)
        width = int(widths.max()) if L else 1
        wide = np.full(L, -1, dtype=np.int64)
        wide[split] = np.arange(split.size)
        return cls(np.ascontiguousarray(slots[:, :, 0].T), np.ascontiguousarray(frac[:, :, 0].T),
                   np.ascontiguousarray(decoded.home.T), widths, wide,
                   np.ascontiguousarray(slots[:, split, 1:width].transpose(1, 2, 0)),
                   np.ascontiguousarray(frac[:, split, 1:width].transpose(1, 2, 0)))


class HybridSpace:
    """A workload's layers and a list of devices, as the thesis's chromosomes see them."""

    def __init__(self, platform, workload, devices: Sequence[str] | str = "cpu",
                 split_kinds: Sequence[str] = SPLITTABLE_KINDS):
        self.platform, self.workload = platform, workload
        self.device_names = device_view(platform, devices)
        self.devices = [platform.ep(d) for d in self.device_names]
        self.n_devices = len(self.devices)
        ops = workload.ops
        self.op_names = [op.name for op in ops]
        self.n_layers = len(ops)
        index = workload.op_index
        g = workload.graph
        bad = [k for k in split_kinds if k not in SPLITTABLE_KINDS]
        if bad:
            raise HetsimError(f"split_kinds: {bad[0]!r} cannot be split; allowed: {', '.join(SPLITTABLE_KINDS)}")
        # Which layers the chromosomes may split: Conv and FC (thesis §4.1), or only some kinds
        # (its §4.2.1 example splits only the FC layers).
        self.splittable = np.array([splittable(op) and op.kind in split_kinds for op in ops], dtype=bool)
        self.split_layers = np.flatnonzero(self.splittable)        # re-indexed 1..S (thesis §4.2.2)
        self.n_split = len(self.split_layers)
        if self.n_split == 0:
            raise HetsimError(f"{workload.name} has no Conv or FC layer with weights: nothing to split")
        self.channels = np.array([max(op.out_c, 1) for op in ops], dtype=np.int64)
        # Restriction 2: a non-splittable layer goes with split 1 of the splittable layer before it
        # (the first splittable layer's, for the layers ahead of it).
        group = np.zeros(self.n_layers, dtype=np.int64)
        current = 0
        for i in range(self.n_layers):
            if self.splittable[i]:
                current = int(np.searchsorted(self.split_layers, i))
            group[i] = current
        self.group = group
        self.preds = [[index[p] for p in g.predecessors(op.name)] for op in ops]
        consumers = [sorted(index[c] for c in g.successors(op.name)) for op in ops]
        self.first_consumer = np.array([c[0] if c else -1 for c in consumers], dtype=np.int64)
        self.first_producer = np.array([min(p) if p else -1 for p in self.preds], dtype=np.int64)
        #: the layer whose split-1 device a split layer's Concat goes to (:meth:`home`)
        self.concat_target = np.where(self.first_consumer >= 0, self.first_consumer,
                                      np.where(self.first_producer >= 0, self.first_producer,
                                               np.arange(self.n_layers)))
        self.net_inputs = [[(name, float(workload.inputs[name].bytes_)) for name in workload.net_inputs_of(op)]
                           for op in ops]
        # A network input lives on the split-1 device of the first layer that reads it.
        self.input_owner: dict[str, int] = {}
        for i, reads in enumerate(self.net_inputs):
            for name, _ in reads:
                self.input_owner.setdefault(name, i)

    def __repr__(self) -> str:
        return (f"HybridSpace({self.workload.name}: {self.n_layers} layers, {self.n_split} splittable, "
                f"on {self.n_devices} devices)")

    # -- building decoded arrays ---------------------------------------------------------------
    def shares(self, slots: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Channel fractions of every slot: whole channels, equal (or in proportion to
        ``weights``), the rounding remainder to split 1 (:func:`hetsim.mapping.channel_counts`)."""
        frac = np.zeros(slots.shape)
        frac[:, :, 0] = 1.0
        if slots.shape[2] == 1:
            return frac
        cols = self.split_layers                     # only splittable layers have several slots
        frac[:, cols, :] = self._split_shares(slots[:, cols, :], None if weights is None else weights[:, cols, :])
        return frac

    def _split_shares(self, split_slots: np.ndarray, split_weights: np.ndarray | None) -> np.ndarray:
        """:meth:`shares` of the splittable layers' slots (P, S, k)."""
        valid = split_slots >= 0
        c = self.channels[self.split_layers][None, :, None].astype(float)
        if split_weights is None:
            counts = np.where(valid, np.floor(c / valid.sum(axis=2, keepdims=True)), 0.0)
        else:
            w = np.where(valid, split_weights, 0.0)
            counts = np.floor(c * w / w.sum(axis=2, keepdims=True))
        counts[:, :, 0] += c[:, :, 0] - counts.sum(axis=2)
        return counts / c

    def home(self, slots: np.ndarray) -> np.ndarray:
        """AutoDiCE's Concat rule (:func:`hetsim.mapping.autodice_concat_device`), vectorised: a
        split layer's output goes to the split-1 device of its first consumer, of its first
        producer for the last layer; any other layer's output stays on its device."""
        primary = slots[:, :, 0]
        split = slots[:, :, 1] >= 0 if slots.shape[2] > 1 else np.zeros_like(primary, dtype=bool)
        return np.where(split, primary[:, self.concat_target], primary)

    def decoded(self, slots: np.ndarray, weights: np.ndarray | None = None) -> Decoded:
        slots = np.ascontiguousarray(slots, dtype=np.int64)
        return Decoded(slots, self.shares(slots, weights), self.home(slots))

    def split_decoded(self, slot0: np.ndarray, split_slots: np.ndarray,
                      split_weights: np.ndarray | None = None) -> Decoded:
        """:meth:`decoded` of slot 0 of every layer (P, L) and the splittable layers' slots
        (P, S, k) (their slot 0 is ``slot0``'s; the other layers have one slot)."""
        P, L = slot0.shape
        k = split_slots.shape[2]
        slots = np.full((P, L, k), -1, dtype=np.int64)
        slots[:, :, 0] = slot0
        slots[:, self.split_layers, :] = split_slots
        weights = None
        if split_weights is not None:
            weights = np.zeros((P, L, k))
            weights[:, :, 0] = 1.0
            weights[:, self.split_layers, :] = split_weights
        return self.decoded(slots, weights)

    def split_columns(self, slot0: np.ndarray, split_slots: np.ndarray,
                      split_weights: np.ndarray | None = None) -> Columns:
        """``Columns.of(split_decoded(...))`` without the (P, L, k) arrays: the same values."""
        P, L = slot0.shape
        k = split_slots.shape[2]
        S = self.split_layers
        n_valid = (split_slots >= 0).sum(axis=2)                        # (P, S)
        widths = np.ones(L, dtype=n_valid.dtype)
        widths[:] = (slot0 >= 0).max(axis=0)
        widths[S] = n_valid.max(axis=0)
        wider = np.flatnonzero(widths[S] > 1)                           # positions in S
        split = S[wider]
        width = int(widths.max()) if L else 1
        wide = np.full(L, -1, dtype=np.int64)
        wide[split] = np.arange(split.size)
        share0 = np.ones((L, P))
        if k > 1:
            frac = self._split_shares(split_slots, split_weights)      # (P, S, k)
            share0[S] = frac[:, :, 0].T
            share_wide = frac[:, wider, 1:width].transpose(1, 2, 0)
            is_split = np.zeros((P, L), dtype=bool)
            is_split[:, S] = split_slots[:, :, 1] >= 0
        else:
            share_wide = np.zeros((0, width - 1, P))
            is_split = np.zeros((P, L), dtype=bool)
        home = np.where(is_split, slot0[:, self.concat_target], slot0)
        return Columns(np.ascontiguousarray(slot0.T), share0, np.ascontiguousarray(home.T), widths, wide,
                       np.ascontiguousarray(split_slots[:, wider, 1:width].transpose(1, 2, 0)),
                       np.ascontiguousarray(share_wide))

    # -- one individual as the mapping object ---------------------------------------------------
    def devices_of(self, decoded: Decoded, i: int = 0) -> dict[str, list[str]]:
        """Layer -> the device names computing it (split 1 first) for individual ``i``."""
        out = {}
        for layer, name in enumerate(self.op_names):
            row = decoded.slots[i, layer]
            out[name] = [self.device_names[d] for d in row if d >= 0]
        return out

    def placement(self, decoded: Decoded, i: int = 0, cost=None) -> Placement:
        """Individual ``i`` as a :class:`~hetsim.mapping.Placement` (the same channel shares, the
        Concat by AutoDiCE's rule)."""
        devices = self.devices_of(decoded, i)
        weights = {}
        for layer, name in enumerate(self.op_names):
            row = decoded.frac[i, layer][decoded.slots[i, layer] >= 0]
            if len(row) > 1:
                weights[name] = [float(x) * int(self.channels[layer]) for x in row]
        return hybrid_placement(self.platform, self.workload, devices, weights=weights,
                                source=f"{self.workload.name} mapping", cost=cost)

    def decode_placement(self, placement: Placement) -> Decoded:
        """A placement as the arrays of a one-individual population (its shares, its Concat
        devices), for the fitness of a mapping that did not come from a genome."""
        index = {name: k for k, name in enumerate(self.device_names)}
        k_max = max(len(placement.devices_of(n)) for n in self.op_names)
        slots = np.full((1, self.n_layers, max(k_max, 1)), -1, dtype=np.int64)
        frac = np.zeros(slots.shape)
        home = np.zeros((1, self.n_layers), dtype=np.int64)
        for layer, name in enumerate(self.op_names):
            devices = placement.devices_of(name)
            shares = placement.splits.get(name)
            for k, ep in enumerate(devices):
                if ep.name not in index:
                    raise HetsimError(f"mapping: layer {name} runs on {ep.name}, which is not one of the "
                                      f"devices {', '.join(self.device_names)}")
                slots[0, layer, k] = index[ep.name]
                frac[0, layer, k] = shares[k].fraction if shares else 1.0
            home[0, layer] = index[placement.ep_of[name].name]
        return Decoded(slots, frac, home)
