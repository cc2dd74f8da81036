"""A bandwidth server: one memory or link shared fluidly by the flows active on it.

Each flow moves ``nbytes`` and may be capped at ``cap_Bps`` (a compute-bound op cannot use more than
its own bytes / uncontended time). Whenever a flow starts or ends the rates are recomputed by
max-min fair sharing (water-filling), so n equal uncapped flows on bandwidth B each get B/n and all
finish at n * bytes / B. Built on SimPy events, the way ``simpy.Store`` is: ``transfer`` returns an
event that succeeds when the flow's last byte has moved.

    >>> env = simpy.Environment(); mem = BandwidthServer(env, 10e9)
    >>> done = mem.transfer(1e9)             # 0.1 s alone, 0.2 s if another equal flow joins
"""

from __future__ import annotations

import math

import simpy

# A flow whose remaining bytes fall below this fraction of its size is finished (float residue).
_REL_EPS = 1e-12


class _Flow:
    __slots__ = ("remaining", "size", "cap", "rate", "event")

    def __init__(self, nbytes: float, cap: float, event: simpy.Event):
        self.remaining = nbytes
        self.size = nbytes
        self.cap = cap
        self.rate = 0.0
        self.event = event


class BandwidthServer:
    """``knee_flows``/``loss_per_flow``: past ``knee_flows`` active flows the server delivers
    ``bandwidth / (1 + loss_per_flow x (n - knee_flows))`` in all (a memory's row-buffer and bank
    conflicts; :class:`hetsim.platform.schema.Saturation`); without them, the full bandwidth."""

    def __init__(self, env: simpy.Environment, bandwidth_Bps: float, name: str = "",
                 knee_flows: int | None = None, loss_per_flow: float = 0.0):
        if bandwidth_Bps <= 0:
            raise ValueError("bandwidth must be positive")
        self.env = env
        self.bandwidth_Bps = bandwidth_Bps
        self.name = name
        self.knee_flows = knee_flows
        self.loss_per_flow = loss_per_flow
        self.flows: list[_Flow] = []
        self._last = 0.0
        self._generation = 0

    @classmethod
    def for_memory(cls, env: simpy.Environment, memory) -> BandwidthServer:
        """The server of a platform memory, with its saturation if it has one."""
        sat = memory.saturation
        return cls(env, memory.bandwidth_GBps * 1e9, memory.name,
                   sat.knee_flows if sat else None, sat.loss_per_flow if sat else 0.0)

    def capacity_Bps(self, flows: int) -> float:
        """What the server delivers in all while ``flows`` flows are active."""
        if self.knee_flows is None or flows <= self.knee_flows:
            return self.bandwidth_Bps
        return self.bandwidth_Bps / (1.0 + self.loss_per_flow * (flows - self.knee_flows))

    def transfer(self, nbytes: float, cap_Bps: float = math.inf) -> simpy.Event:
        """Start a flow of ``nbytes``; the returned event succeeds when it completes."""
        event = self.env.event()
        if nbytes <= 0:
            event.succeed()
            return event
        self._advance()
        self.flows.append(_Flow(float(nbytes), cap_Bps, event))
        self._reschedule()
        return event

    # -- internals --------------------------------------------------------------------------
    def _advance(self) -> None:
        dt = self.env.now - self._last
        if dt > 0:
            for f in self.flows:
                f.remaining -= f.rate * dt
        self._last = self.env.now

    def _share(self) -> None:
        """Max-min fair rates: serve the smallest caps first, split the rest evenly."""
        left = self.capacity_Bps(len(self.flows))
        flows = sorted(self.flows, key=lambda f: f.cap)
        n = len(flows)
        for i, f in enumerate(flows):
            f.rate = min(f.cap, left / (n - i))
            left -= f.rate

    def _reschedule(self) -> None:
        self._share()
        self._generation += 1
        if not self.flows:
            return
        dt = min(max(f.remaining, 0.0) / f.rate for f in self.flows)
        timer = self.env.timeout(dt)
        generation = self._generation
        timer.callbacks.append(lambda _ev: self._on_timer(generation))

    def _on_timer(self, generation: int) -> None:
        if generation != self._generation:
            return  # a newer start or end superseded this wake-up
        self._advance()
        done = [f for f in self.flows if f.remaining <= _REL_EPS * f.size]
        if not done:  # float residue: finish the nearest flow
            done = [min(self.flows, key=lambda f: f.remaining / f.rate)]
        for f in done:
            self.flows.remove(f)
            f.event.succeed()
        self._reschedule()


class FlowNetwork:
    """Bandwidth servers whose flows may hold several servers at once (a transfer through a
    switch holds its sender's send port and its receiver's receive port), shared max-min fairly
    across the whole network by progressive filling: all flows' rates rise together until a
    server is full or a flow reaches its cap, those flows are frozen, and the rest go on rising.
    With one server per flow this is :class:`BandwidthServer`'s water-filling.

        >>> env = simpy.Environment()
        >>> net = FlowNetwork(env); net.add("eth:a>", 0.1e9); net.add("eth:>b", 0.1e9)
        >>> done = net.transfer(1e6, ["eth:a>", "eth:>b"])
        >>> env.run(done); env.now                              # 10 ms alone
        0.01
    """

    def __init__(self, env: simpy.Environment):
        self.env = env
        self.capacity: dict[str, float] = {}
        self.flows: list[tuple[_Flow, tuple[str, ...]]] = []
        self.bytes_moved: dict[str, float] = {}
        self._last = 0.0
        self._generation = 0

    def add(self, name: str, bandwidth_Bps: float) -> None:
        """Declare a server (declaring one twice keeps the first bandwidth)."""
        if bandwidth_Bps <= 0:
            raise ValueError("bandwidth must be positive")
        self.capacity.setdefault(name, float(bandwidth_Bps))

    def transfer(self, nbytes: float, servers, cap_Bps: float = math.inf) -> simpy.Event:
        """Start a flow of ``nbytes`` through every server named in ``servers``."""
        event = self.env.event()
        names = tuple(servers)
        if not names:
            raise ValueError("a flow needs at least one server")
        if nbytes <= 0:
            event.succeed()
            return event
        unknown = [n for n in names if n not in self.capacity]
        if unknown:
            raise KeyError(f"unknown server {unknown[0]!r}")
        self._advance()
        self.flows.append((_Flow(float(nbytes), cap_Bps, event), names))
        for n in names:
            self.bytes_moved[n] = self.bytes_moved.get(n, 0.0) + nbytes
        self._reschedule()
        return event

    # -- internals --------------------------------------------------------------------------
    def _advance(self) -> None:
        dt = self.env.now - self._last
        if dt > 0:
            for f, _ in self.flows:
                f.remaining -= f.rate * dt
        self._last = self.env.now

    def _share(self) -> None:
        left = dict(self.capacity)
        active = list(range(len(self.flows)))
        level = 0.0
        while active:
            users: dict[str, int] = {}
            for i in active:
                for n in self.flows[i][1]:
                    users[n] = users.get(n, 0) + 1
            step = min((left[n] / k for n, k in users.items()), default=math.inf)
            step = min(step, min(self.flows[i][0].cap - level for i in active))
            level += step
            for n, k in users.items():
                left[n] -= step * k
            full = {n for n in users if left[n] <= 1e-9 * self.capacity[n]}
            still = []
            for i in active:
                f, names = self.flows[i]
                if f.cap <= level * (1 + 1e-12) or any(n in full for n in names):
                    f.rate = level
                else:
                    still.append(i)
            if len(still) == len(active):   # nothing froze (float residue): freeze them all
                for i in still:
                    self.flows[i][0].rate = level
                break
            active = still

    def _reschedule(self) -> None:
        self._share()
        self._generation += 1
        if not self.flows:
            return
        dt = min(max(f.remaining, 0.0) / f.rate for f, _ in self.flows)
        timer = self.env.timeout(dt)
        generation = self._generation
        timer.callbacks.append(lambda _ev: self._on_timer(generation))

    def _on_timer(self, generation: int) -> None:
        if generation != self._generation:
            return
        self._advance()
        done = [x for x in self.flows if x[0].remaining <= _REL_EPS * x[0].size]
        if not done:
            done = [min(self.flows, key=lambda x: x[0].remaining / x[0].rate)]
        for x in done:
            self.flows.remove(x)
            x[0].event.succeed()
        self._reschedule()
