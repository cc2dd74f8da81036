"""One fluid bandwidth resource: memories and links shared by the flows active on them.

A *server* is a memory, a link, or one port of a switch; a *flow* moves ``nbytes`` through one or
more servers at once (a transfer through a switch holds its sender's send port and its receiver's
receive port) and may be capped at ``cap_Bps`` (a compute-bound op cannot use more than its own
bytes / uncontended time). Whenever a flow starts or ends, the rates are recomputed by
:func:`max_min_rates`, a pure function of the active flows' caps and routes and of the servers:
max-min fair sharing, so n equal uncapped flows on bandwidth B each get B/n and all finish at
n * bytes / B. :class:`BandwidthResource` is built on SimPy events, the way ``simpy.Store`` is:
:meth:`~BandwidthResource.transfer` returns an event that succeeds when the flow's last byte has
moved.

    >>> env = simpy.Environment(); mem = BandwidthResource(env, 10e9)
    >>> done = mem.transfer(1e9)             # 0.1 s alone, 0.2 s if another equal flow joins

A *profile flow* (:meth:`BandwidthResource.run`, :class:`FlowProfile`) is a whole stage execution
of per-op flows as one flow: its segments in op order, each a plain delay (an op's fixed overhead,
or an op that moves no bytes) or a byte phase capped at the op's bytes / uncontended time. The
resource advances it through its segments itself and succeeds one event when the last segment
ends: the same fluid max-min trajectory as a SimPy process doing a timeout or a
:meth:`~BandwidthResource.transfer` per op (tested against it), without a SimPy event per op
(docs/model.md, docs/performance.md). It is an accelerator of that general path, on a resource
of one server.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import simpy

# A flow whose remaining bytes fall below this fraction of its size is finished (float residue).
_REL_EPS = 1e-12
# SimPy orders the events of one instant by priority (URGENT 0, NORMAL 1), then by creation.
_AFTER_NORMAL = 2


class _EndOfInstant(simpy.Event):
    """An event processed after every URGENT and NORMAL event of its instant, even those scheduled
    after it (built the way ``simpy.Timeout`` is: triggered at creation, scheduled at once)."""

    def __init__(self, env: simpy.Environment):
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, _AFTER_NORMAL)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Server:
    """A memory, a link or a switch port. ``knee_flows``/``loss_per_flow``: past ``knee_flows``
    flows on it, it delivers ``bandwidth / (1 + loss_per_flow x (n - knee_flows))`` in all (a
    memory's row-buffer and bank conflicts; :class:`hetsim.platform.schema.Saturation`); without
    them, the full bandwidth."""

    name: str
    bandwidth_Bps: float
    knee_flows: int | None = None
    loss_per_flow: float = 0.0

    def __post_init__(self) -> None:
        if not self.bandwidth_Bps > 0:
            raise ValueError("bandwidth must be positive")

    @classmethod
    def of_memory(cls, memory) -> Server:
        """The server of a platform memory, with its saturation if it has one."""
        sat = memory.saturation
        return cls(memory.name, memory.bandwidth_GBps * 1e9, sat.knee_flows if sat else None,
                   sat.loss_per_flow if sat else 0.0)

    def capacity_Bps(self, flows: int) -> float:
        """What the server delivers in all while ``flows`` flows are active on it."""
        if self.knee_flows is None or flows <= self.knee_flows:
            return self.bandwidth_Bps
        return self.bandwidth_Bps / (1.0 + self.loss_per_flow * (flows - self.knee_flows))


def max_min_rates(caps_Bps: Sequence[float], servers: Sequence[Server],
                  routes: Sequence[Sequence[int]] | None = None) -> list[float]:
    """The max-min fair rate of every flow, B/s: flow i, capped at ``caps_Bps[i]``, crosses the
    servers ``routes[i]`` (indices into ``servers``; None: every flow crosses ``servers[0]``).

    Water-filling generalised to several servers: the flows are served one at a time in order of
    their caps; the next is the one whose cap, or fair share of a server it crosses (the server's
    capacity left / its flows not yet served), is the smallest: it gets that, which leaves its
    servers' capacity less and flows fewer. On one server this is the classic water-filling, every
    flow min(cap, capacity left / flows left); on several, the rates progressive filling reaches
    (all rates rise together until a server is full or a flow reaches its cap).

        >>> max_min_rates([1.0, 8.0, 8.0], [Server("dram", 10.0)])
        [1.0, 4.5, 4.5]
        >>> max_min_rates([9.0, 9.0], [Server("a>", 2.0), Server(">b", 10.0)], [[0, 1], [1]])
        [2.0, 8.0]
    """
    n = len(caps_Bps)
    order = sorted(range(n), key=caps_Bps.__getitem__)
    rates = [0.0] * n
    if routes is None:
        capacity = servers[0].capacity_Bps(n)
        for k, i in enumerate(order):
            rate = rates[i] = min(caps_Bps[i], capacity / (n - k))
            capacity -= rate
        return rates
    users = [0] * len(servers)
    for route in routes:
        if not route:
            raise ValueError("a flow needs at least one server")
        for s in route:
            users[s] += 1
    left = [server.capacity_Bps(users[s]) for s, server in enumerate(servers)]
    active = order                  # the flows not yet served, in order of their caps
    while active:
        bottleneck, share = -1, math.inf
        for s, u in enumerate(users):
            if u and left[s] / u < share:
                bottleneck, share = s, left[s] / u
        first = active[0]
        if caps_Bps[first] <= share:        # a cap binds before any server fills
            pick, rate = 0, caps_Bps[first]
        else:                               # the bottleneck's flow with the smallest cap
            pick = next(k for k, i in enumerate(active) if bottleneck in routes[i])
            rate = share
        i = active.pop(pick)
        rates[i] = rate
        for s in routes[i]:
            left[s] -= rate
            users[s] -= 1
    return rates


class _Flow:
    __slots__ = ("remaining", "size", "cap", "rate", "event", "route")

    def __init__(self, nbytes: float, cap: float, event: simpy.Event, route: tuple[int, ...] | None):
        self.remaining = nbytes
        self.size = nbytes
        self.cap = cap
        self.rate = 0.0
        self.event = event
        self.route = route


class FlowProfile:
    """The segments of one stage execution's per-op flows, in op order, precomputed once per run.

    Built from the ops' :class:`~hetsim.cost.base.Demand` exactly as the per-op DES walks them: an
    op's ``fixed_s`` is a plain delay (it holds no bandwidth and is no active flow); its roofline
    part a byte phase of ``bytes_`` capped at ``bytes_ / busy_s``, or a plain delay of ``busy_s``
    when it moves no bytes (an op with bytes but no busy time costs nothing, as there). Adjacent
    delays are merged, and so are adjacent byte phases of one cap (a flow at one cap throughout:
    nobody's rate changes where one ends and the next begins). Times are uncontended and unscaled
    (a run's noise factor scales them).

    ``durations_s``, ``caps_Bps``: each segment's uncontended time and cap (0 for a delay);
    ``ends``: their prefix sums; ``total_s``: the uncontended time of the whole execution.

        >>> from hetsim.cost.base import Demand
        >>> p = FlowProfile.from_demands([Demand(0.001, 0.002, 2e6), Demand(0.0, 0.004, 0.0)])
        >>> p.ends, p.caps_Bps
        ([0.001, 0.003, 0.007], [0.0, 1000000000.0, 0.0])
    """

    __slots__ = ("durations_s", "caps_Bps", "ends", "total_s")

    def __init__(self, durations_s, bytes_) -> None:
        durations = np.asarray(durations_s, dtype=float)
        nbytes = np.asarray(bytes_, dtype=float)
        if durations.shape != nbytes.shape or durations.ndim != 1:
            raise ValueError("durations_s and bytes_ must be 1-D and of one length")
        if durations.size and (np.any(~(durations > 0)) or np.any(~np.isfinite(durations))
                               or np.any(~(nbytes >= 0)) or np.any(~np.isfinite(nbytes))):
            raise ValueError("segment times must be positive and finite, bytes finite and >= 0")
        self.durations_s: list[float] = durations.tolist()
        self.ends: list[float] = np.cumsum(durations).tolist()
        self.caps_Bps: list[float] = (nbytes / np.where(durations > 0, durations, 1.0)).tolist()
        self.total_s = self.ends[-1] if self.ends else 0.0

    @classmethod
    def from_demands(cls, demands) -> FlowProfile:
        """The profile of ops with these demands, run in this order (``_stage_proc``'s walk)."""
        durations: list[float] = []
        nbytes: list[float] = []
        caps: list[float] = []

        def segment(s: float, b: float) -> None:
            cap = b / s
            if caps and caps[-1] == cap:        # the same cap (0: delays) as the one before
                durations[-1] += s
                nbytes[-1] += b
            else:
                durations.append(s)
                nbytes.append(b)
                caps.append(cap)

        for d in demands:
            if d.fixed_s > 0:
                segment(d.fixed_s, 0.0)
            if d.bytes_ > 0 and d.busy_s > 0:
                segment(d.busy_s, float(d.bytes_))
            elif d.busy_s > 0:
                segment(d.busy_s, 0.0)
        return cls(durations, nbytes)

    @property
    def segments(self) -> int:
        return len(self.ends)


def never_throttled(server: Server, profiles: Sequence[FlowProfile], starts: Sequence[np.ndarray],
                    scales: Sequence[np.ndarray | None]) -> bool:
    """Whether profile flows at their uncontended pace fit ``server`` at every instant: flow
    ``(i, f)`` starts at ``starts[i][f]``, its segments' times x ``scales[i][f]`` (None: 1) and
    caps / it, a stage's flows one after the other. If they do, nobody is ever throttled and the
    fluid max-min trajectory is the uncontended one: the closed-form schedule these starts came
    from is the contended run's. Vectorised: every segment boundary of every flow, sorted, the
    load summed over them (in float64, then exactly over the stages at every instant the sum
    comes within 1e-6 of the capacity)."""
    times, rates, counts, levels = [], [], [], []
    for profile, start, scale in zip(profiles, starts, scales, strict=True):
        if not profile.segments:
            continue
        start = np.asarray(start, dtype=float)
        scale = np.ones_like(start) if scale is None else np.asarray(scale, dtype=float)
        caps = np.asarray(profile.caps_Bps)
        edges = np.concatenate(([0.0], profile.ends))                       # J + 1 boundaries
        level = np.concatenate((caps, [0.0]))[None, :] / scale[:, None]      # the cap after each
        byte = np.concatenate(((caps > 0).astype(float), [0.0]))
        t = (start[:, None] + edges[None, :] * scale[:, None]).ravel()
        times.append(t)
        levels.append((t, level.ravel(), np.broadcast_to(byte, level.shape).ravel()))
        rates.append(np.diff(level, axis=1, prepend=0.0).ravel())
        counts.append(np.broadcast_to(np.diff(byte, prepend=0.0), level.shape).ravel())
    if len(times) < 2:
        return True              # one stage runs one flow at a time: at most its own cap
    t = np.concatenate(times)
    order = np.argsort(t, kind="stable")
    t = t[order]
    load = np.cumsum(np.concatenate(rates)[order])
    flows = np.rint(np.cumsum(np.concatenate(counts)[order]))
    last = np.ones(len(t), dtype=bool)          # the load after every boundary of an instant
    last[:-1] = t[1:] != t[:-1]
    if server.knee_flows is None:
        capacity = np.full(len(t), server.bandwidth_Bps)
    else:
        capacity = server.bandwidth_Bps / (1.0 + server.loss_per_flow * np.maximum(flows - server.knee_flows, 0.0))
    near = np.flatnonzero(last & (load > capacity * (1 - 1e-6)))
    for at in t[near]:                          # exactly: each stage's level there, summed
        total, active = 0.0, 0
        for ts, level, byte in levels:
            k = int(np.searchsorted(ts, at, side="right")) - 1
            if k >= 0:
                total += float(level[k])
                active += int(byte[k])
        if total > server.capacity_Bps(active):
            return False
    return True


class _ProfileFlow:
    """A profile flow in a :class:`ProfileSolver`: in segment ``j``, ``w`` of its uncontended,
    unscaled seconds left there at time ``t``, advancing ``speed`` of them per second (``rate``
    B/s on the server); its segment ends at ``tau``."""

    __slots__ = ("durations", "caps", "last", "scale", "inv", "j", "w", "t", "rate", "speed", "tau", "token")

    def __init__(self, profile: FlowProfile, scale: float, t: float, token):
        self.durations = profile.durations_s
        self.caps = profile.caps_Bps
        self.last = len(self.caps) - 1
        self.scale = scale
        self.inv = 1.0 / scale
        self.j = 0
        self.w = self.durations[0]
        self.t = t
        self.rate = 0.0
        self.speed = self.inv
        self.tau = t + self.w * scale
        self.token = token


class ProfileSolver:
    """Profile flows (:class:`FlowProfile`) on one :class:`Server`, advanced event by event: the
    exact fluid max-min trajectory of their per-op flows.

    Rates change only where a flow's segment changes, a flow arrives or one completes; between
    such events every flow's remaining work in its segment falls linearly, so each segment's end
    is known in closed form (``tau``). A flow's position is its segment and the work left in it
    (so a throttled flow in a short segment keeps its precision), brought up to date only when
    its rate changes.

    The rates are :func:`max_min_rates`'s. Most events change one or two flows' rates and are
    updated in place: a flow going on while the caps still fit the server (nobody throttled), a
    throttled flow going on at the level (its next cap is above it), and the common contended
    case of one throttled flow, which gets what the others leave (the server's capacity less
    their caps, all below it): a flow entering or leaving that state, or another's cap moving
    the leftover. Every other event brings every flow to its time and recomputes the rates
    (``rate_changes`` counts those). The trajectory is tested against the general path, a
    SimPy transfer per op, to 1e-12.

    Two drivers: :meth:`BandwidthResource.run` (SimPy) and the pipeline's event loop
    (:mod:`hetsim.sim.fluid`). ``add`` a flow at a time no earlier than every event processed;
    ``step`` processes the events of the instant :attr:`next` and returns the tokens of the flows
    complete then."""

    def __init__(self, server: Server):
        self.server = server
        # the server's capacity for n flows (a constant without a saturation knee)
        bandwidth = server.bandwidth_Bps
        self.capacity_Bps = server.capacity_Bps if server.knee_flows is not None else lambda _n: bandwidth
        self.flows: list[_ProfileFlow] = []
        self.next = math.inf        # the earliest segment end
        self.total = 0.0            # the caps of the flows in byte phases, B/s (scaled)
        self.active = 0             # the flows in byte phases
        self.level = math.inf       # the throttled flows' rate (inf: nobody is throttled)
        self.single: _ProfileFlow | None = None     # the one throttled flow, if only one is
        #: work counters: events that recomputed every rate (``rate_changes``; with someone
        #: throttled: ``throttled_steps``), segment boundaries crossed in all (``boundaries``)
        self.rate_changes = 0
        self.throttled_steps = 0
        self.boundaries = 0

    def add(self, t: float, profile: FlowProfile, scale: float, token) -> None:
        """A flow arrives at ``t`` (every event before ``t`` already processed)."""
        f = _ProfileFlow(profile, float(scale), t, token)
        self.flows.append(f)
        new = f.caps[0] * f.inv
        if self.level == math.inf:
            total, active = self.total + new, self.active + (new > 0)
            if total <= self.capacity_Bps(active):      # it fits: nobody else changes
                self.total, self.active = total, active
                f.rate = new
                if f.tau < self.next:
                    self.next = f.tau
                return
        self._rates(t)

    def advance(self, limit: float) -> tuple[float, list]:
        """Process the events up to ``limit`` (inclusive), stopping after the first instant where
        flows complete: (that instant, their tokens), or (``limit``, []) (the event loop's way of
        stepping: one call for all the boundaries before the loop's next event)."""
        flows = self.flows
        inf = math.inf
        while self.next <= limit:
            now = self.next
            first = None
            count = 0
            for f in flows:
                if f.tau <= now:
                    first = f
                    count += 1
            if count == 1 and first is not None and first.j != first.last:
                # one flow goes on into its next segment: most often updated in place
                self.boundaries += 1
                j = first.j = first.j + 1
                w = first.w = first.durations[j]
                first.t = now
                if self.level == inf:
                    # nobody throttled: if the caps still fit, only this flow changes (inline)
                    inv = first.inv
                    old = first.caps[j - 1] * inv
                    new = first.caps[j] * inv
                    total = self.total - old + new
                    active = self.active - (old > 0) + (new > 0)
                    if total <= self.capacity_Bps(active):
                        self.total, self.active = total, active
                        first.rate, first.speed = new, inv
                        tau = first.tau = now + w * first.scale
                        nxt = tau
                        for g in flows:
                            if g.tau < nxt:
                                nxt = g.tau
                        self.next = nxt
                        continue
                if self._cross(first, now):
                    nxt = inf
                    for g in flows:
                        if g.tau < nxt:
                            nxt = g.tau
                    self.next = nxt
                else:
                    self._rates(now)
                continue
            done = self.step()
            flows = self.flows
            if done:
                return now, done
        return limit, []

    def step(self) -> list:
        """Process every segment end at :attr:`next`; the tokens of the flows complete then."""
        now = self.next
        flows = self.flows
        crossing = [f for f in flows if f.tau <= now]
        done = []
        general = False
        self.boundaries += len(crossing)
        for f in crossing:
            if f.j == f.last:
                done.append(f.token)
                if not self._leave(f, now):
                    general = True
                continue
            j = f.j = f.j + 1
            f.w = f.durations[j]
            f.t = now
            if general or not self._cross(f, now):
                general = True
        if general:
            self._rates(now)
        else:
            self.next = min([f.tau for f in self.flows]) if self.flows else math.inf
        return done

    # -- the events updated in place (False: recompute every rate) -----------------------------
    def _cross(self, f: _ProfileFlow, now: float) -> bool:
        """Flow ``f`` has just entered its segment ``f.j`` (its ``w`` and ``t`` set)."""
        old = f.caps[f.j - 1] * f.inv
        cap = f.caps[f.j]
        new = cap * f.inv
        level = self.level
        if level == math.inf:                        # nobody throttled
            total = self.total - old + new
            active = self.active - (old > 0) + (new > 0)
            capacity = self.capacity_Bps(active)
            self.total, self.active = total, active
            if total <= capacity:
                f.rate, f.speed = new, f.inv
                f.tau = now + f.w * f.scale
                return True
            # f alone throttled, if what the others leave is above every other cap
            left = capacity - (total - new)
            for g in self.flows:
                if g is not f and g.rate > left:
                    return False
            return self._throttle(f, left, now)
        single = self.single
        if f is single:
            if new >= level:                         # throttled on at the level
                f.speed = level / cap
                f.tau = now + f.w / f.speed
                self.total += new - old
                return True
            if (new > 0) != (old > 0):
                return False
            total = self.total - old + new
            self.total = total
            if total <= self.capacity_Bps(self.active):  # it fits now: nobody throttled
                self.level, self.single = math.inf, None
                f.rate, f.speed = new, f.inv
                f.tau = now + f.w * f.scale
                return True
            return False
        if single is None:                           # several throttled
            if f.rate < old and new > 0 and new >= level:
                f.speed = f.rate / cap
                f.tau = now + f.w / f.speed
                self.total += new - old
                return True
            return False
        # another flow's cap moves what the single throttled flow gets
        if (new > 0) != (old > 0):
            return False
        total = self.total - old + new
        self.total = total
        s_cap = single.caps[single.j] * single.inv
        left = self.capacity_Bps(self.active) - (total - s_cap)
        f.rate, f.speed = new, f.inv
        f.tau = now + f.w * f.scale
        if left >= s_cap:                            # it fits: nobody throttled
            self._bring(single, now)
            self.level, self.single = math.inf, None
            single.rate, single.speed = s_cap, single.inv
            single.tau = now + single.w * single.scale
            return True
        if new > left:
            return False
        for g in self.flows:
            if g is not single and g.rate > left:
                return False
        self._bring(single, now)
        return self._throttle(single, left, now)

    def _leave(self, f: _ProfileFlow, now: float) -> bool:
        """Flow ``f`` completes."""
        self.flows.remove(f)
        old = f.caps[f.j] * f.inv
        if self.level == math.inf:                   # nobody throttled: nobody else changes
            if old > 0:
                self.total -= old
                self.active -= 1
            return True
        if f is self.single:
            self.total -= old
            self.active -= 1
            if self.total <= self.capacity_Bps(self.active):
                self.level, self.single = math.inf, None
                return True
        return False

    def _throttle(self, f: _ProfileFlow, left: float, now: float) -> bool:
        """``f`` the one throttled flow, at ``left`` B/s (positive, below its cap)."""
        if not left > 0:
            return False
        self.level, self.single = left, f
        f.rate = left
        f.speed = left / f.caps[f.j]
        f.tau = now + f.w / f.speed
        return True

    @staticmethod
    def _bring(f: _ProfileFlow, now: float) -> None:
        if f.t != now:
            f.w -= f.speed * (now - f.t)
            f.t = now

    # -- every rate ------------------------------------------------------------------------------
    def _rates(self, now: float) -> None:
        """Every flow brought to ``now``, the rates and segment ends recomputed."""
        self.rate_changes += 1
        flows = self.flows
        total, active = 0.0, 0
        for f in flows:
            if f.t != now:
                f.w -= f.speed * (now - f.t)
                f.t = now
            cap = f.caps[f.j]
            if cap > 0:
                total += cap * f.inv
                active += 1
        self.total, self.active = total, active
        self.single = None
        if total <= self.capacity_Bps(active):
            self.level = math.inf
            for f in flows:
                f.rate = f.caps[f.j] * f.inv
                f.speed = f.inv
                f.tau = now + f.w * f.scale
        else:
            self.throttled_steps += 1
            byte = [f for f in flows if f.caps[f.j] > 0]
            rates = max_min_rates([f.caps[f.j] * f.inv for f in byte], [self.server])
            level = 0.0
            throttled = []
            for f, rate in zip(byte, rates, strict=True):
                f.rate = rate
                cap = f.caps[f.j]
                if rate < cap * f.inv:
                    f.speed = rate / cap
                    throttled.append(f)
                    if rate > level:
                        level = rate
                else:
                    f.speed = f.inv
            self.level = level
            if len(throttled) == 1:
                self.single = throttled[0]
            for f in flows:
                if f.caps[f.j] <= 0:
                    f.rate, f.speed = 0.0, f.inv
                f.tau = now + f.w / f.speed
        nxt = math.inf
        for f in flows:
            if f.tau < nxt:
                nxt = f.tau
        self.next = nxt

    def snapshot(self) -> tuple:
        """The solver's state, for :meth:`restore` (a driver that looks ahead of its arrivals)."""
        return (list(self.flows), [(f.j, f.w, f.t, f.rate, f.speed, f.tau) for f in self.flows],
                self.next, self.total, self.active, self.level, self.single)

    def restore(self, state: tuple) -> None:
        flows, values, self.next, self.total, self.active, self.level, self.single = state
        self.flows = list(flows)
        for f, (j, w, t, rate, speed, tau) in zip(flows, values, strict=True):
            f.j, f.w, f.t, f.rate, f.speed, f.tau = j, w, t, rate, speed, tau


class BandwidthResource:
    """Servers (:class:`Server`) shared fluidly by the flows on them, max-min fairly
    (:func:`max_min_rates`); rates change only when a flow starts or ends, and between changes
    each flow's remaining bytes fall linearly, so the next completion is known in closed form and
    one SimPy timer waits for it.

    ``BandwidthResource(env, bandwidth_Bps, name, knee_flows, loss_per_flow)`` is a resource of one
    server (a memory, a link); ``BandwidthResource(env)`` and :meth:`add` declare several (a
    network of links and switch ports), each flow naming the ones it crosses:

        >>> env = simpy.Environment()
        >>> net = BandwidthResource(env); net.add("eth:a>", 0.1e9); net.add("eth:>b", 0.1e9)
        >>> done = net.transfer(1e6, via=["eth:a>", "eth:>b"])
        >>> env.run(done); env.now                              # 10 ms alone
        0.01
    """

    def __init__(self, env: simpy.Environment, bandwidth_Bps: float | None = None, name: str = "",
                 knee_flows: int | None = None, loss_per_flow: float = 0.0):
        self.env = env
        self.servers: list[Server] = []
        self._index: dict[str, int] = {}
        #: bytes each server has been asked to carry
        self.bytes_moved: dict[str, float] = {}
        self.flows: list[_Flow] = []
        self._last = 0.0
        self._generation = 0
        # profile flows (run): their solver, made at the first; _spec, while the solver has
        # looked ahead to the earliest completion, the state to return to if an arrival comes
        # first and the events that complete there
        self.solver: ProfileSolver | None = None
        self._pgeneration = 0
        self._spec: tuple | None = None
        #: SimPy timers scheduled for the profile flows
        self.timers = 0
        if bandwidth_Bps is not None:
            self.add(name, bandwidth_Bps, knee_flows, loss_per_flow)

    @classmethod
    def for_memory(cls, env: simpy.Environment, memory) -> BandwidthResource:
        """The resource of a platform memory, with its saturation if it has one."""
        server = Server.of_memory(memory)
        return cls(env, server.bandwidth_Bps, server.name, server.knee_flows, server.loss_per_flow)

    def add(self, name: str, bandwidth_Bps: float, knee_flows: int | None = None,
            loss_per_flow: float = 0.0) -> None:
        """Declare a server (declaring one twice keeps the first)."""
        server = Server(name, float(bandwidth_Bps), knee_flows, loss_per_flow)
        if name not in self._index:
            self._index[name] = len(self.servers)
            self.servers.append(server)

    @property
    def name(self) -> str:
        return ",".join(s.name for s in self.servers)

    @property
    def bandwidth_Bps(self) -> float:
        """The bandwidth of a one-server resource."""
        return self._only().bandwidth_Bps

    def capacity_Bps(self, flows: int) -> float:
        """What a one-server resource delivers in all while ``flows`` flows are active."""
        return self._only().capacity_Bps(flows)

    def transfer(self, nbytes: float, cap_Bps: float = math.inf,
                 via: Sequence[str] | None = None) -> simpy.Event:
        """Start a flow of ``nbytes`` through every server named in ``via`` (default: the one
        server); the returned event succeeds when it completes."""
        route: tuple[int, ...] | None = None
        if via is not None:
            names = tuple(via)
            if not names:
                raise ValueError("a flow needs at least one server")
            unknown = [n for n in names if n not in self._index]
            if unknown:
                raise KeyError(f"unknown server {unknown[0]!r}")
            route = tuple(self._index[n] for n in names)
        else:
            self._only()
        event = self.env.event()
        if nbytes <= 0:
            event.succeed()
            return event
        if self.solver is not None and self.solver.flows:
            raise RuntimeError(f"resource {self.name!r}: a transfer while profile flows are active "
                               "(a resource carries one kind of flow at a time)")
        self._advance()
        self.flows.append(_Flow(float(nbytes), cap_Bps, event, route))
        for s in (route if route is not None else (0,)):
            name = self.servers[s].name
            self.bytes_moved[name] = self.bytes_moved.get(name, 0.0) + nbytes
        self._reschedule()
        return event

    def run(self, profile: FlowProfile, scale: float = 1.0) -> simpy.Event:
        """Start a profile flow (a stage execution's per-op flows in turn, each segment's time x
        ``scale``, each cap / ``scale``) on a one-server resource; the returned event succeeds
        when its last segment ends.

        Exact: the fluid max-min trajectory of doing ``timeout`` or :meth:`transfer` per segment
        (to 1e-12, tested against it), advanced by a :class:`ProfileSolver` event by event
        without a SimPy event per op. SimPy sees, per instant where flows arrive or complete, one
        end-of-instant event (the solver looks ahead once, after that instant's other events, to
        the earliest completion) and one timer for that completion; an arrival before it takes
        the solver back to where it was and on to the arrival."""
        server = self._only()
        event = self.env.event()
        if profile.total_s <= 0:
            event.succeed()
            return event
        if self.flows:
            raise RuntimeError(f"resource {self.name!r}: a profile flow while transfers are active "
                               "(a resource carries one kind of flow at a time)")
        if self.solver is None:
            self.solver = ProfileSolver(server)
        now = self.env.now
        solver = self.solver
        if self._spec is not None:          # the look-ahead went past this arrival
            solver.restore(self._spec[0])
            self._spec = None
        while solver.next < now:
            for done in solver.step():      # (none: the first completion is not before now)
                done.succeed()
        solver.add(now, profile, scale, event)
        self._preschedule()
        return event

    # -- internals --------------------------------------------------------------------------
    def _only(self) -> Server:
        if len(self.servers) != 1:
            raise ValueError(f"resource {self.name!r} has {len(self.servers)} servers: name the ones "
                             "a flow crosses (via=...)")
        return self.servers[0]

    def _advance(self) -> None:
        dt = self.env.now - self._last
        if dt > 0:
            for f in self.flows:
                f.remaining -= f.rate * dt
        self._last = self.env.now

    def _reschedule(self) -> None:
        flows = self.flows
        routes = [f.route for f in flows]
        rates = max_min_rates([f.cap for f in flows], self.servers,
                              None if len(self.servers) == 1 else routes)   # type: ignore[arg-type]
        for f, rate in zip(flows, rates, strict=True):
            f.rate = rate
        self._generation += 1
        if not flows:
            return
        dt = min(max(f.remaining, 0.0) / f.rate for f in flows)
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

    # -- profile flows ------------------------------------------------------------------------
    def _preschedule(self) -> None:
        """Look ahead at the end of this instant: a stage whose flow just completed usually starts
        its next one (or hands a frame to a stage that does) at the same time, and each arrival
        would supersede a look-ahead made before it."""
        self._pgeneration += 1
        if self.solver is not None and self.solver.flows:
            generation = self._pgeneration
            _EndOfInstant(self.env).callbacks.append(lambda _ev: self._plookahead(generation))

    def _plookahead(self, generation: int) -> None:
        if generation != self._pgeneration:
            return  # an arrival at this instant superseded it
        solver = self.solver
        assert solver is not None
        state = solver.snapshot()
        done: list = []
        t = self.env.now
        while not done and solver.next < math.inf:
            t = solver.next
            done = solver.step()
        self._spec = (state, done)
        self.timers += 1
        timer = self.env.timeout(max(t - self.env.now, 0.0))
        timer.callbacks.append(lambda _ev: self._ptimer(generation))

    def _ptimer(self, generation: int) -> None:
        if generation != self._pgeneration:
            return  # an arrival superseded this wake-up
        assert self._spec is not None
        _, done = self._spec
        self._spec = None           # the look-ahead is now the state
        for event in done:
            event.succeed()
        self._preschedule()
