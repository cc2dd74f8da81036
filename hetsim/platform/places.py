"""Execution places (EPs) and the routes between them.

An EP is where one piece of work runs: a cluster with n of its cores (Pipe-it's ``B4``, ``s2``), a
whole cluster named by its name (Shisha's chiplet EPs ``FEP0``), or an accelerator. Mappings name EPs;
the platform says which exist.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import networkx as nx

from hetsim.errors import HetsimError

if TYPE_CHECKING:
    from hetsim.platform.schema import Platform

_SYMBOL_COUNT = re.compile(r"^([A-Za-z]+)([0-9]{1,9})$")


@dataclass(frozen=True)
class ExecutionPlace:
    """``cores`` cores of cluster ``cluster``, or the accelerator ``accelerator``."""

    name: str
    cluster: str | None
    accelerator: str | None
    cores: int
    memory: str

    @property
    def place(self) -> str:
        """The cluster or accelerator this EP belongs to."""
        return self.cluster or self.accelerator  # type: ignore[return-value]

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Route:
    """How bytes travel from one EP to another: over ``links`` (in order), the narrowest of which
    sets the bandwidth. An empty route means shared memory: no copy is charged.

    ``servers`` are the bandwidth servers a transfer on this route holds at once, (name, B/s): a
    plain link is one server (its name); a switched link is its sender's send port and its
    receiver's receive port (``eth:nx01>`` and ``eth:>nx02``), so that only transfers through the
    same port share it."""

    links: tuple[str, ...]
    latency_s: float
    bandwidth_Bps: float
    energy_J_per_byte: float
    bottleneck: str | None = None  # the narrowest link: the one whose bandwidth a transfer shares
    servers: tuple[tuple[str, float], ...] = ()

    def time_s(self, nbytes: float) -> float:
        if not self.links or nbytes <= 0:
            return 0.0
        return self.latency_s + nbytes / self.bandwidth_Bps


_SHARED_MEMORY = Route((), 0.0, float("inf"), 0.0)


class Topology:
    """EP lookup and routing for one platform (built once per platform, cached)."""

    def __init__(self, platform: Platform):
        self.platform = platform
        self.clusters = {c.name: c for c in platform.clusters}
        self.by_symbol = {c.symbol: c for c in platform.clusters if c.symbol}
        self.accelerators = {a.name: a for a in platform.accelerators}
        self.links = {lk.name: lk for lk in platform.links}
        self._routes: dict[tuple[str, str], Route] = {}
        self._eps: dict[str, ExecutionPlace] = {}

    # -- execution places -------------------------------------------------------------------
    def ep(self, name: str) -> ExecutionPlace:
        """Parse an EP name: ``B4`` (symbol + cores), ``big`` (a whole cluster), ``big:2`` (cluster
        name + cores) or an accelerator's name. One object per name (a search asks for the same
        EPs for every candidate, and caches keyed by them then compare by identity)."""
        got = self._eps.get(name)
        if got is None:
            got = self._eps[name] = self._parse_ep(name)
        return got

    def _parse_ep(self, name: str) -> ExecutionPlace:
        text = name.strip()
        if text in self.clusters:
            c = self.clusters[text]
            return ExecutionPlace(text, c.name, None, c.cores, c.memory)
        if text in self.accelerators:
            a = self.accelerators[text]
            return ExecutionPlace(text, None, a.name, 1, a.memory)
        cluster, cores = None, None
        if ":" in text:
            cname, _, n = text.partition(":")
            cluster = self.clusters.get(cname)
            cores = int(n) if n.isascii() and n.isdigit() and len(n) <= 9 else None
        else:
            m = _SYMBOL_COUNT.match(text)
            if m:
                cluster, cores = self.by_symbol.get(m.group(1)), int(m.group(2))
        if cluster is None or cores is None:
            raise HetsimError(
                f"unknown execution place {_short(name)!r} on platform {self.platform.name}; "
                f"allowed: {', '.join(self.ep_forms())}")
        if not 1 <= cores <= cluster.cores:
            raise HetsimError(
                f"execution place {name!r}: cluster {cluster.name} has {cluster.cores} cores, "
                f"asked for {cores}")
        return ExecutionPlace(text, cluster.name, None, cores, cluster.memory)

    def ep_forms(self) -> list[str]:
        forms = []
        for c in self.platform.clusters:
            forms.append(c.name)
            if c.symbol:
                forms.append(f"{c.symbol}1..{c.symbol}{c.cores}" if c.cores > 1 else f"{c.symbol}1")
        forms.extend(self.accelerators)
        return forms

    def eps(self) -> list[ExecutionPlace]:
        """Every distinct EP: each cluster with 1..n cores (named by symbol when it has one, else
        the whole cluster by name), and each accelerator."""
        out: list[ExecutionPlace] = []
        for c in self.platform.clusters:
            if c.symbol:
                out.extend(self.ep(f"{c.symbol}{n}") for n in range(1, c.cores + 1))
            else:
                out.append(self.ep(c.name))
        out.extend(self.ep(a) for a in self.accelerators)
        return out

    # -- routes -----------------------------------------------------------------------------
    @cached_property
    def graph(self) -> nx.Graph:
        """Places and devices are nodes; each link is a hub node joined to its endpoints; a place
        that sits on a device is joined to it at no cost."""
        g = nx.Graph()
        for c in self.platform.clusters:
            g.add_node(c.name)
            if c.device:
                g.add_edge(c.name, c.device, link=None)
        for a in self.platform.accelerators:
            g.add_node(a.name)
            if a.device:
                g.add_edge(a.name, a.device, link=None)
        for lk in self.platform.links:
            hub = ("link", lk.name)
            for end in lk.connects:
                g.add_edge(hub, end, link=lk.name)
        return g

    def route(self, src: ExecutionPlace, dst: ExecutionPlace) -> Route:
        """Route of a transfer from ``src`` to ``dst``: nothing within one cluster; a link that
        joins both places directly when there is one (a board's CPU-GPU link, rather than the
        free hand-off through the board both sit on); otherwise the lowest-latency path over
        links between places or devices that links join (Pipe-it's CCI, Shisha's inter-chiplet
        network, an Ethernet switch between boards); otherwise, for two places on one memory, a
        coherent shared-memory hand-off at no cost; otherwise an error."""
        if src.place == dst.place:
            return _SHARED_MEMORY
        key = (src.place, dst.place)
        if key not in self._routes:
            self._routes[key] = self._find_route(*key, shared=src.memory == dst.memory)
        return self._routes[key]

    def _find_route(self, a: str, b: str, shared: bool) -> Route:
        links = self.links
        direct = [lk for lk in self.platform.links if a in lk.connects and b in lk.connects]
        if direct:
            hub = ("link", min(direct, key=lambda lk: lk.latency_ns).name)
            return self._make_route([a, hub, b])

        def weight(u, v, _attrs):
            hub = u if isinstance(u, tuple) else v if isinstance(v, tuple) else None
            return links[hub[1]].latency_ns + 1e-9 if hub is not None else 0.0

        try:
            path = nx.shortest_path(self.graph, a, b, weight=weight)
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            if shared:
                return _SHARED_MEMORY
            raise HetsimError(
                f"platform {self.platform.name}: no link joins {a} and {b} (they use different memories); "
                f"add a link whose connects lists both") from None
        if not any(isinstance(n, tuple) for n in path):
            return _SHARED_MEMORY   # two places of one device, no link between them
        return self._make_route(path)

    def _make_route(self, path: list) -> Route:
        links = self.links
        names = tuple(n[1] for n in path if isinstance(n, tuple))
        used = [links[n] for n in names]
        narrow = min(used, key=lambda lk: lk.bandwidth_GBps)
        servers = []
        for i, node in enumerate(path):
            if not isinstance(node, tuple):
                continue
            lk = links[node[1]]
            bw = lk.bandwidth_GBps * 1e9
            if lk.switched:   # the sender's send port, the receiver's receive port
                servers += [(f"{lk.name}:{path[i - 1]}>", bw), (f"{lk.name}:>{path[i + 1]}", bw)]
            else:
                servers.append((lk.name, bw))
        return Route(
            links=names,
            latency_s=sum(lk.latency_ns for lk in used) * 1e-9,
            bandwidth_Bps=narrow.bandwidth_GBps * 1e9,
            energy_J_per_byte=sum(lk.energy_pJ_per_byte for lk in used) * 1e-12,
            bottleneck=narrow.name,
            servers=tuple(servers),
        )


def _short(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "..."
