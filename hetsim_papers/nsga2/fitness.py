"""The thesis's analytical model (Savva §4.3, eqs. 4.7-4.10) for a whole population at once.

For every individual the model runs the mapping's schedule as AutoDiCE's ranks would: each
device takes its work in ONNX layer order; a layer's inputs reach each of its devices first (a
transfer blocks its sender and its receiver, MPI's blocking send/receive); a split layer's shares
compute (eq. 4.7, MACs x share), then their slices go to the Concat device, a slice that is late
for it paying the sync penalty of §4.3.2; communication takes bytes / the medium's speed (eq. 4.8).
Then, per device d that the mapping uses:

* latency: T_d = the time d finishes its last task; the inference latency = max_d T_d;
* energy (eq. 4.10): E_d = c_E[unit] x T_d; objective = max_d E_d;
* memory (eq. 4.9): M_d = (weights of its layers or slices + the tensors it produces and the network
  inputs it reads + every byte it sends + every byte it receives) x c_M[unit] + b_M[unit], in MiB;
  objective = max_d M_d.

This is the DAG engine's list schedule of the same placement under
:class:`~hetsim_papers.nsga2.cost.ThesisCostModel` with ``comm="mpi"`` (tests check they agree to
1e-9), computed with numpy over the population instead of task by task, so that NSGA-II's
10^5 evaluations take seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hetsim_papers.nsga2.cost import Coefficients, MiB, ThesisCostModel, link_class, unit_of
from hetsim_papers.nsga2.space import Columns, Decoded, HybridSpace

#: The three objectives, in the order of the fitness matrix F (all minimised).
OBJECTIVES = ("energy_J", "memory_MiB", "latency_s")


@dataclass
class Fitness:
    """The model's answer for a population: the objectives and their per-device parts."""

    energy_J: np.ndarray          # (P,) max over used devices of c_E x T_d
    memory_MiB: np.ndarray        # (P,) max over used devices of eq. 4.9
    latency_s: np.ndarray         # (P,) max over devices of T_d
    device_time_s: np.ndarray     # (P, n) T_d (0 for unused devices)
    device_energy_J: np.ndarray   # (P, n)
    device_memory_MiB: np.ndarray  # (P, n) (0 for unused devices)
    used: np.ndarray              # (P, n) bool

    @property
    def F(self) -> np.ndarray:
        """(P, 3): energy (J), memory (MiB), latency (s)."""
        return np.column_stack([self.energy_J, self.memory_MiB, self.latency_s])


class ThesisModel:
    """The analytical model of a :class:`HybridSpace` with one :class:`Coefficients` JSON.

    model = ThesisModel(space, coefficients)
    model.evaluate(chromosome.decode(X)).F       # (P, 3) objectives
    """

    def __init__(self, space: HybridSpace, coefficients: Coefficients, sync_penalty: bool = True):
        self.space = space
        self.coefficients = coefficients
        self.sync_penalty_s = coefficients.sync_penalty_s if sync_penalty else 0.0
        cost = ThesisCostModel(space.platform, coefficients)
        ops, devs = space.workload.ops, space.devices
        #: eq. 4.7: the whole layer on each device, s
        self.time = np.array([[cost.op_time(op, ep) for ep in devs] for op in ops])
        #: eq. 4.8: bytes/s between every pair of devices
        n = space.n_devices
        self.speed = np.ones((n, n))
        for a in range(n):
            for b in range(n):
                if a != b:
                    self.speed[a, b] = coefficients.links_Bps[link_class(devs[a], devs[b], space.platform)]
        self.out_bytes = np.array([float(op.output_bytes) for op in ops])
        self.weight_bytes = np.array([float(op.weight_bytes) for op in ops])
        units = [coefficients.unit(ep) for ep in devs]
        self.c_E = np.array([u.energy_W for u in units])
        self.c_M = np.array([u.memory_coefficient for u in units])
        self.b_M = np.array([u.memory_bias_MiB for u in units])
        self.units = [unit_of(ep) for ep in devs]

    def evaluate(self, decoded: Decoded | Columns) -> Fitness:
        """The three objectives of every individual: replay its schedule layer by layer (module
        docstring), then read eqs. 4.9-4.10 off the devices' clocks and bytes."""
        columns = decoded if isinstance(decoded, Columns) else Columns.of(decoded)
        replay = _Replay(self, columns)
        for i in range(columns.n_layers):
            replay.layer(i)
        return replay.fitness()

    def predict(self, placement) -> dict[str, float]:
        """The model's three objectives for one placement (its devices must be the space's)."""
        f = self.evaluate(self.space.decode_placement(placement))
        return {"energy_J": float(f.energy_J[0]), "memory_MiB": float(f.memory_MiB[0]),
                "latency_s": float(f.latency_s[0])}


class _Replay:
    """One population's schedule under the model, advanced layer by layer: each device's clock
    (its lane is free then), eq. 4.9's expected bytes per device, and when every layer's output
    (and network input) is ready on each device.

    Laid out for the layer loop: the clocks and bytes are flat (P x n) arrays indexed by
    ``row * n + device``, a layer's slots, shares and home are contiguous (P,) columns, and a
    layer's "reached device d at" times are allocated when its output first moves."""

    def __init__(self, model: ThesisModel, columns: Columns) -> None:
        self.model, self.space = model, model.space
        L, P = columns.slot0.shape
        n = self.space.n_devices
        self.P, self.n = P, n
        self.rows = np.arange(P)
        self.base = self.rows * n                       # row * n: flat index of (row, device 0)
        # Layer-major columns: slot 0 (and its share) of every layer, the other slots of the
        # layers that some individual splits (wide[i]: their row, -1 for the others).
        self.widths, self.wide = columns.widths, columns.wide
        self.slot0, self.share0 = columns.slot0, columns.share0                          # (L, P)
        self.slot_wide, self.share_wide = columns.slot_wide, columns.share_wide          # (W, width-1, P)
        self.home = columns.home                                                         # (L, P)
        self.speed = model.speed.ravel()                # speed[a * n + b]
        self.T = np.zeros(P * n)                        # each device's clock (its lane is free then)
        self.mem = np.zeros(P * n)                      # eq. 4.9's expected bytes
        self.avail = np.zeros((L, P))                   # when a layer's output is ready on its home device
        self.have: dict[int, np.ndarray] = {}           # layer -> when its output reached each device
        self.have_input = {name: np.full(P * n, np.inf) for name in self.space.input_owner}
        self.used = np.zeros(P * n, dtype=bool)         # the devices each individual's slots name

    def layer(self, i: int) -> None:
        """Layer i's shares, each after its inputs reach its device, then its slices' gather."""
        width = int(self.widths[i])
        if width == 1:
            self.avail[i] = self._share(i, 0)
            return
        fin = np.zeros((width, self.P))
        for k in range(width):
            fin[k] = self._share(i, k)
        self._gather(i, width, fin)

    def _share(self, i: int, k: int) -> np.ndarray:
        """Share k of layer i on its device (slot k): when it is done, per individual."""
        m, T, mem = self.model, self.T, self.mem
        d = self.slot(i, k)
        valid = d >= 0
        every = bool(valid.all())
        dd = d if every else np.where(valid, d, 0)
        ready = self._layer_inputs(i, dd, valid, every)
        ready = self._net_inputs(i, dd, valid, ready)
        share = self.share(i, k)
        at = self.base + dd
        done = np.maximum(T[at], ready) + m.time[i][dd] * share
        held = (m.weight_bytes[i] + m.out_bytes[i]) * share
        if every:
            T[at] = done
            mem[at] += held
        else:
            at = at[valid]
            T[at] = done[valid]
            mem[at] += held[valid]
        self.used[at] = True
        return done

    def slot(self, i: int, k: int) -> np.ndarray:
        """slots[:, i, k], contiguous."""
        return self.slot0[i] if k == 0 else self.slot_wide[self.wide[i], k - 1]

    def share(self, i: int, k: int) -> np.ndarray:
        """frac[:, i, k], contiguous."""
        return self.share0[i] if k == 0 else self.share_wide[self.wide[i], k - 1]

    def _transfer(self, at_a: np.ndarray, at_b: np.ndarray, start: np.ndarray, nbytes, link: np.ndarray) -> np.ndarray:
        """A blocking transfer of ``nbytes`` from ``start`` over ``link`` (index into the link
        speeds): both ends' lanes busy until it ends and both ends holding the bytes; its end."""
        end = start + nbytes / self.speed[link]
        self.T[at_a] = end
        self.T[at_b] = end
        self.mem[at_a] += nbytes
        self.mem[at_b] += nbytes
        return end

    def _layer_inputs(self, i: int, dd: np.ndarray, valid: np.ndarray, every: bool) -> np.ndarray:
        """When the outputs of layer i's predecessors are on device dd: each moved there once
        (a blocking transfer on both ends' lanes) where its home is elsewhere."""
        m, T, avail, n = self.model, self.T, self.avail, self.n
        ready = np.zeros(self.P)
        for p in self.space.preds[i]:
            h = self.home[p]
            moved = (h != dd) if every else valid & (h != dd)
            if not moved.any():          # the input is where the layer runs (the usual case)
                ready = np.maximum(ready, avail[p] if every else np.where(valid, avail[p], 0.0))
                continue
            r = np.flatnonzero(moved)
            hs, ds = h[r], dd[r]
            have = self.have.get(p)
            if have is None:
                have = self.have[p] = np.full(self.P * n, np.inf)
            got = have[self.base[r] + ds]
            new = np.isinf(got)
            if new.any():
                r2, h2, d2 = r[new], hs[new], ds[new]
                at_h, at_d = self.base[r2] + h2, self.base[r2] + d2
                nbytes = m.out_bytes[p]
                xs = np.maximum(np.maximum(avail[p][r2], T[at_h]), T[at_d])
                xe = self._transfer(at_h, at_d, xs, nbytes, h2 * n + d2)
                have[at_d] = xe
                got[new] = xe
            arrived = avail[p].copy()
            arrived[r] = got
            ready = np.maximum(ready, arrived if every else np.where(valid, arrived, 0.0))
        return ready

    def _net_inputs(self, i: int, dd: np.ndarray, valid: np.ndarray, ready: np.ndarray) -> np.ndarray:
        """``ready`` after layer i's network inputs reach device dd from their owner's device."""
        T, mem, n = self.T, self.mem, self.n
        for name, nbytes in self.space.net_inputs[i]:
            src = self.slot0[self.space.input_owner[name]]
            got_in = self.have_input[name]
            at = self.base + dd
            need = valid & (src != dd) & np.isinf(got_in[at])
            if need.any():
                ss, ds = src[need], dd[need]
                at_s, at_d = self.base[need] + ss, at[need]
                xs = np.maximum(T[at_s], T[at_d])
                got_in[at_d] = self._transfer(at_s, at_d, xs, nbytes, ss * n + ds)
            local = valid & (src == dd)
            mem[at[local]] += nbytes
            ready = np.maximum(ready, np.where(valid & (src != dd), got_in[at], 0.0))
        return ready

    def _gather(self, i: int, width: int, fin: np.ndarray) -> None:
        """A split layer's slices go to its Concat (home) device; a slice late for it pays the
        sync penalty of §4.3.2."""
        m, T, mem, n = self.model, self.T, self.mem, self.n
        split = self.slot(i, 1) >= 0
        c = self.home[i]
        at_c = self.base + c
        for k in range(width):
            d = self.slot(i, k)
            need = split & (d >= 0) & (d != c)
            if not need.any():
                continue
            ds, cs, f = d[need], c[need], fin[k][need]
            at_d, at_h = self.base[need] + ds, at_c[need]
            late = f > T[at_h]                         # the Concat device is kept waiting
            nbytes = m.out_bytes[i] * self.share(i, k)[need]
            xs = np.maximum(np.maximum(f, T[at_d]), T[at_h])
            self._transfer(at_d, at_h, xs + np.where(late, m.sync_penalty_s, 0.0), nbytes, ds * n + cs)
        mem[at_c[split]] += m.out_bytes[i]             # the Concat's output
        self.avail[i] = np.where(split, T[at_c], fin[0])

    def fitness(self) -> Fitness:
        """Eqs. 4.9-4.10 over the devices each individual uses."""
        m, P, n = self.model, self.P, self.n
        T, mem, used = self.T.reshape(P, n), self.mem.reshape(P, n), self.used.reshape(P, n)
        device_time = np.where(used, T, 0.0)
        energy = m.c_E[None, :] * device_time                   # eq. 4.10
        memory = np.where(used, mem / MiB * m.c_M[None, :] + m.b_M[None, :], 0.0)   # eq. 4.9
        return Fitness(energy.max(axis=1), memory.max(axis=1), T.max(axis=1), device_time, energy,
                       memory, used)
