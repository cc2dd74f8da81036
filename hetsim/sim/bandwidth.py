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
from bisect import bisect_right
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
    delays are merged. Times are uncontended and unscaled (a run's noise factor scales them).

    ``ends``: prefix sums of the segments' uncontended times (numpy, then a list for ``bisect``);
    ``caps_Bps``: each segment's cap (0 for a delay); ``total_s``: the uncontended time of the whole
    execution; ``higher[j]``: the next segment whose cap exceeds segment j's (``segments`` if none).

        >>> from hetsim.cost.base import Demand
        >>> p = FlowProfile.from_demands([Demand(0.001, 0.002, 2e6), Demand(0.0, 0.004, 0.0)])
        >>> p.ends, p.caps_Bps
        ([0.001, 0.003, 0.007], [0.0, 1000000000.0, 0.0])
    """

    __slots__ = ("ends", "caps_Bps", "total_s", "tolerance", "higher")

    def __init__(self, durations_s, bytes_) -> None:
        durations = np.asarray(durations_s, dtype=float)
        nbytes = np.asarray(bytes_, dtype=float)
        if durations.shape != nbytes.shape or durations.ndim != 1:
            raise ValueError("durations_s and bytes_ must be 1-D and of one length")
        if durations.size and (np.any(~(durations > 0)) or np.any(~np.isfinite(durations))
                               or np.any(~(nbytes >= 0)) or np.any(~np.isfinite(nbytes))):
            raise ValueError("segment times must be positive and finite, bytes finite and >= 0")
        self.ends: list[float] = np.cumsum(durations).tolist()
        self.caps_Bps: list[float] = (nbytes / np.where(durations > 0, durations, 1.0)).tolist()
        self.total_s = self.ends[-1] if self.ends else 0.0
        #: a position this close to its segment's end is at the end (float residue)
        self.tolerance: list[float] = (_REL_EPS * durations).tolist()
        # The next segment with a higher cap than each (len if none): from segment j on, a flow's
        # largest cap so far changes only at j, higher[j], higher[higher[j]], ... (its records).
        m = len(self.caps_Bps)
        higher = [m] * m
        stack: list[int] = []
        for j in range(m - 1, -1, -1):
            while stack and self.caps_Bps[stack[-1]] <= self.caps_Bps[j]:
                stack.pop()
            higher[j] = stack[-1] if stack else m
            stack.append(j)
        self.higher = higher

    @classmethod
    def from_demands(cls, demands) -> FlowProfile:
        """The profile of ops with these demands, run in this order (``_stage_proc``'s walk)."""
        durations: list[float] = []
        nbytes: list[float] = []

        def delay(s: float) -> None:
            if nbytes and nbytes[-1] == 0.0:
                durations[-1] += s          # adjacent delays: one segment
            else:
                durations.append(s)
                nbytes.append(0.0)

        for d in demands:
            if d.fixed_s > 0:
                delay(d.fixed_s)
            if d.bytes_ > 0 and d.busy_s > 0:
                durations.append(d.busy_s)
                nbytes.append(float(d.bytes_))
            elif d.busy_s > 0:
                delay(d.busy_s)
        return cls(durations, nbytes)

    @property
    def segments(self) -> int:
        return len(self.ends)


class _ProfileFlow:
    __slots__ = ("profile", "ends", "caps", "tolerance", "higher", "total", "last", "scale", "p", "j",
                 "event")

    def __init__(self, profile: FlowProfile, scale: float, event: simpy.Event):
        self.profile = profile
        self.ends = profile.ends
        self.caps = profile.caps_Bps
        self.tolerance = profile.tolerance
        self.higher = profile.higher
        self.total = profile.total_s
        self.last = len(profile.ends) - 1
        self.scale = scale
        self.p = 0.0     # progress: uncontended, unscaled seconds into the profile
        self.j = 0       # the segment it is in
        self.event = event


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
        # profile flows (run): their committed state is at time _plast; _spec holds the state
        # computed forward to the earliest completion, adopted if no arrival supersedes it
        self.pflows: list[_ProfileFlow] = []
        self._plast = 0.0
        self._pgeneration = 0
        self._spec: tuple = (0.0, [], [], [], False, -1)
        #: work counters of the profile flows: SimPy timers scheduled, exact segment steps
        #: (contended), leaps (stretches where nobody is throttled, done in one go)
        self.timers = 0
        self.segment_steps = 0
        self.leaps = 0
        if bandwidth_Bps is not None:
            self.add(name, bandwidth_Bps, knee_flows, loss_per_flow)

    @classmethod
    def for_memory(cls, env: simpy.Environment, memory) -> BandwidthResource:
        """The resource of a platform memory, with its saturation if it has one."""
        sat = memory.saturation
        return cls(env, memory.bandwidth_GBps * 1e9, memory.name,
                   sat.knee_flows if sat else None, sat.loss_per_flow if sat else 0.0)

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
        if self.pflows:
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

        Exact: the fluid max-min trajectory of doing ``timeout`` or :meth:`transfer` per segment,
        to float rounding. While nobody can be throttled (the sum over the flows present of the
        largest cap each has met so far is within ``capacity_Bps(flows present)``: capacity only
        falls with more flows, so this bound is safe past a saturation knee), every flow runs at
        its uncontended pace and the resource leaps ahead, to the earliest completion or to where
        a flow's next higher cap would break the bound, found from the profiles' ``higher``
        indices without per-op work; elsewhere it steps from segment boundary to segment
        boundary, rates recomputed at each, in a plain loop. SimPy sees, per instant where flows
        arrive or complete, one end-of-instant event (the way forward is computed once, after that
        instant's other events) and one timer for the earliest completion."""
        self._only()
        event = self.env.event()
        if profile.total_s <= 0:
            event.succeed()
            return event
        if self.flows:
            raise RuntimeError(f"resource {self.name!r}: a profile flow while transfers are active "
                               "(a resource carries one kind of flow at a time)")
        self._psync()
        self.pflows.append(_ProfileFlow(profile, float(scale), event))
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
    def _psync(self) -> None:
        """Commit the profile flows' state up to now (an arrival: the forward run stops here)."""
        now = self.env.now
        flows = self.pflows
        spec = self._spec
        if self._plast < now and flows and spec[4] and spec[5] == self._pgeneration and now < spec[0]:
            # the pending forward run was one leap: nobody is throttled until its end, so every
            # flow is where its uncontended pace puts it
            dt = now - self._plast
            for f in flows:
                f.p += dt / f.scale
            self._plast = now
        while self._plast < now and flows:
            ps = [f.p for f in flows]
            js = [f.j for f in flows]
            t, done = self._pforward(self._plast, ps, js, now)
            self._pcommit(t if done else now, ps, js, done)
        self._plast = now

    def _pcommit(self, t: float, ps: list, js: list, done: list) -> None:
        flows = self.pflows
        for f, p, j in zip(flows, ps, js, strict=True):
            f.p = p
            f.j = j
        self._plast = t
        for i in reversed(done):
            flows.pop(i).event.succeed()

    def _preschedule(self) -> None:
        """Compute the flows' way forward at the end of this instant: a stage whose flow just
        completed usually starts its next one (or hands a frame to a stage that does) at the same
        time, and each arrival would supersede a forward run computed before it."""
        self._pgeneration += 1
        if self.pflows:
            generation = self._pgeneration
            _EndOfInstant(self.env).callbacks.append(lambda _ev: self._pcompute(generation))

    def _pcompute(self, generation: int) -> None:
        if generation != self._pgeneration:
            return  # an arrival at this instant superseded it
        ps = [f.p for f in self.pflows]
        js = [f.j for f in self.pflows]
        steps, leaps = self.segment_steps, self.leaps
        t, done = self._pforward(self._plast, ps, js, math.inf)
        linear = self.segment_steps == steps and self.leaps == leaps + 1
        self._spec = (t, ps, js, done, linear, generation)
        self.timers += 1
        timer = self.env.timeout(max(t - self.env.now, 0.0))
        timer.callbacks.append(lambda _ev: self._ptimer(generation))

    def _ptimer(self, generation: int) -> None:
        if generation != self._pgeneration:
            return  # an arrival superseded this wake-up
        _t, ps, js, done, _linear, _generation = self._spec
        self._pcommit(self.env.now, ps, js, done)
        self._preschedule()

    def _safe(self, ps: list, js: list, h: float, capacity: float) -> tuple[float, int, int]:
        """How long from now nobody can be throttled, up to ``h``.

        From a start point, the flows' largest caps so far (each flow's *records*: its current
        segment's cap, then each later segment with a higher one, ``FlowProfile.higher``, met at
        the uncontended pace), summed, bound the caps of the flows in byte phases; while that sum
        is within ``capacity`` nobody is throttled. Where the next record would overflow it, the
        bound restarts from that point with the caps current there. Returns (``h``, -1, 0) when
        all of ``h`` is safe; else (time, flow, segment): at that time ``flow`` enters
        ``segment`` and the current caps themselves could overflow (exact steps must follow).
        Refreshes ``js`` (lower bounds between leaps) at the start."""
        flows = self.pflows
        n = len(flows)
        total = 0.0
        running = [0.0] * n     # each flow's largest cap since the start point, scaled
        nxt = [0] * n           # its next record: segment index
        when = [0.0] * n        # and the time from now when it starts
        scale_of = [f.scale for f in flows]
        for i, f in enumerate(flows):
            scale = scale_of[i]
            ends = f.ends
            p = ps[i]
            j = bisect_right(ends, p, js[i])
            if j > f.last:
                j = f.last        # float residue at the very end
            js[i] = j
            m = f.caps[j] / scale
            total += m
            running[i] = m
            r = f.higher[j]
            nxt[i] = r
            when[i] = (ends[r - 1] - p) * scale if r <= f.last else math.inf
        if total > capacity:
            return 0.0, -1, 0
        inf = math.inf
        at = js[:]              # each flow's segment at the last restart
        while True:
            w = min(when)
            if w >= h:
                return h, -1, 0
            i = when.index(w)
            f = flows[i]
            r = nxt[i]
            m = f.caps[r] / scale_of[i]
            grown = total + m - running[i]
            if grown <= capacity:      # the record fits: go on to the next
                total = grown
                running[i] = m
                r = f.higher[r]
                nxt[i] = r
                when[i] = (f.ends[r - 1] - ps[i]) * scale_of[i] if r <= f.last else inf
                continue
            # restart the bound at w from the caps current there
            total = 0.0
            for k, g in enumerate(flows):
                if k == i:
                    j = r               # exactly at its record's start
                    p = g.ends[r - 1]
                else:
                    p = ps[k] + w / scale_of[k]     # as the caller's leap computes it
                    j = bisect_right(g.ends, p, at[k])
                    if when[k] <= w and j < nxt[k]:
                        j = nxt[k]      # its record starts at w too (p fell an ulp short)
                    if j > g.last:
                        j = g.last
                at[k] = j       # never backwards: every restart moves flow i on, so they end
                m = g.caps[j] / scale_of[k]
                total += m
                running[k] = m
                r2 = g.higher[j]
                nxt[k] = r2
                when[k] = (g.ends[r2 - 1] - ps[k]) * scale_of[k] if r2 <= g.last else inf
            if total > capacity:
                return w, i, r

    def _pforward(self, t: float, ps: list, js: list, t_stop: float) -> tuple[float, list]:
        """Advance the positions ``ps``/``js`` (in place) from time ``t`` to the earliest
        completion, or to ``t_stop`` if that comes first: returns the time reached and the indices
        of the flows complete then (empty at ``t_stop``). Leaps where nobody can be throttled
        (:meth:`_safe`), exact steps elsewhere. ``js`` are lower bounds of the segment indices (a
        leap moves positions only; ``_safe`` and ``_pstep`` find the segments)."""
        flows = self.pflows
        capacity = self.servers[0].capacity_Bps(len(flows))   # never rises with more flows: safe
        while True:
            # the earliest completion if nobody were throttled
            h = math.inf
            for f, p in zip(flows, ps, strict=True):
                r = (f.total - p) * f.scale
                if r < h:
                    h = r
            finishing = t + h <= t_stop
            if not finishing:
                h = t_stop - t
            x, record, segment = self._safe(ps, js, h, capacity)
            if x < h:
                if x > 0:       # leap to where flow `record` enters a segment that may throttle
                    self.leaps += 1
                    t += x
                    for i, f in enumerate(flows):
                        if i == record:     # exactly on the boundary its record starts at
                            ps[i] = f.ends[segment - 1]
                            js[i] = segment
                        else:
                            ps[i] += x / f.scale
                t, done = self._pstep(t, ps, js, t_stop, capacity)
                if done or t >= t_stop:
                    return t, done
                continue
            self.leaps += 1
            done = []
            t = t_stop if not finishing else t + h
            for i, f in enumerate(flows):
                scale = f.scale
                if finishing and (f.total - ps[i]) * scale - h <= _REL_EPS * f.total * scale:
                    ps[i] = f.total
                    done.append(i)
                else:
                    p = ps[i] + h / scale
                    if p >= f.total:      # float residue: complete, now
                        p = f.total
                        done.append(i)
                    ps[i] = p
            return t, done

    def _pstep(self, t: float, ps: list, js: list, t_stop: float,
               capacity: float) -> tuple[float, list]:
        """Exact steps, while the current segments' caps could overflow ``capacity`` (the bound
        of :meth:`_safe`): the flows in byte phases at their :func:`max_min_rates`, then on to the
        nearest segment boundary (or ``t_stop``). Returns the time reached and the flows complete
        then."""
        flows = self.pflows
        n = len(flows)
        inv = [1.0 / f.scale for f in flows]
        for i, f in enumerate(flows):
            j = js[i]
            if ps[i] >= f.ends[j]:      # after a leap: find the segment
                j = js[i] = bisect_right(f.ends, ps[i], j)
                if j > f.last:
                    return t, [i]
        caps = [f.caps[js[i]] * inv[i] for i, f in enumerate(flows)]    # scaled, B/s (0: delay)
        ends = [f.ends for f in flows]
        server = self.servers[0]
        indices = range(n)
        first_step = True
        while True:
            busy = sum(caps)
            if not first_step and busy <= capacity:
                return t, []                    # nobody can be throttled: leap again
            first_step = False
            self.segment_steps += 1
            speed = inv[:]       # progress (uncontended s) per second: unthrottled
            active = [i for i in indices if caps[i] > 0]
            if busy > server.capacity_Bps(len(active)):
                rates = max_min_rates([caps[i] for i in active], [server])
                for i, rate in zip(active, rates, strict=True):
                    if rate < caps[i]:
                        speed[i] = rate / caps[i] * inv[i]
            dt = t_stop - t
            first = -1
            for i in indices:
                d = (ends[i][js[i]] - ps[i]) / speed[i]
                if d < dt:
                    dt = d
                    first = i
            done = []
            for i in indices:
                j = js[i]
                end = ends[i][j]
                p = ps[i] + dt * speed[i]
                if i == first or end - p <= flows[i].tolerance[j]:
                    p = end
                    j += 1
                    f = flows[i]
                    if j > f.last:
                        done.append(i)
                    else:
                        caps[i] = f.caps[j] * inv[i]
                ps[i] = p
                js[i] = j
            if first < 0:
                return t_stop, done
            t += dt
            if done:
                return t, done
