"""Mappings: what runs where. One module, three forms, one validator.

* a **pipeline**: ordered stages, each a contiguous range of layers on one EP. Its string form reads
  like the papers: ``B4:1-35|s2:36-44|s2:45-54`` (EP name as the platform defines it, or cluster
  symbol + core count; 1-based inclusive layer ranges). Stages run concurrently on different frames.
* a **placement**: op -> EP, for DAG schedules (HOPE-style operator placement). One inference runs
  the DAG with every op on its EP. With an ``order`` (EP -> its ops in execution order) it is a
  **plan** (HOPE, MOSAIC, StarPU, the PIM DP): each EP runs its ops in that order.
* a **split**: a placement in which some ops are divided by output channel over several EPs
  (``splits``: op -> [(EP, share)], shares summing to 1): μLayer's channel-wise split and the
  hybrid (vertical + horizontal) partitioning. The op's ``ep_of`` entry is where its slices are
  gathered (the concat EP).

All load from YAML/JSON files, validated by pydantic::

    stages: [{ep: B4, layers: [1, 35]}, {ep: s2, layers: [36, 44]}, {ep: s2, layers: [45, 54]}]
    # or
    pipeline: "B4:1-35|s2:36-44|s2:45-54"
    # or
    placement: {conv1: gpu, pool1: gpu, fc8: big}
    default: big                        # EP of every op the placement does not name (optional)
    order: {gpu: [conv1, pool1]}        # optional: a plan (per-EP execution order)
    splits: {conv1: {gpu: 0.7, big: 0.3}}   # optional: channel shares of split ops

Every invalid mapping (gaps, overlaps, an unknown EP, more cores than a cluster has, an op an EP
cannot run, an order that is not a permutation of an EP's ops or breaks a data dependency, shares
that do not sum to 1) is rejected with one line saying what and where.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from hetsim.bounds import Fraction, Layer
from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.validation import one_line, read_yaml

#: EP:first-last; layer numbers of at most 9 digits (a longer one is no layer of any workload).
_STAGE = re.compile(r"^\s*([^:|\s]+(?::[0-9]+)?)\s*:\s*([0-9]{1,9})\s*(?:-\s*([0-9]{1,9}))?\s*$")


@dataclass(frozen=True)
class Stage:
    """Layers ``first``..``last`` (1-based, inclusive) on ``ep``."""

    ep: ExecutionPlace
    first: int
    last: int

    @property
    def num_layers(self) -> int:
        return self.last - self.first + 1

    def __str__(self) -> str:
        return f"{self.ep.name}:{self.first}-{self.last}"


@dataclass(frozen=True)
class Pipeline:
    stages: tuple[Stage, ...]

    def __str__(self) -> str:
        return "|".join(str(s) for s in self.stages)

    @property
    def split(self) -> tuple[int, ...]:
        """Layers per stage, the papers' ``[7,4,10]`` form."""
        return tuple(s.num_layers for s in self.stages)

    @property
    def eps(self) -> tuple[ExecutionPlace, ...]:
        return tuple(s.ep for s in self.stages)

    @property
    def config(self) -> str:
        """Pipe-it's ``B4-s2-s2`` form."""
        return "-".join(s.ep.name for s in self.stages)


@dataclass(frozen=True)
class Share:
    """``fraction`` of an op's output channels computed on ``ep``."""

    ep: ExecutionPlace
    fraction: float


@dataclass(frozen=True)
class Placement:
    """Op name -> EP for every op of the workload; optionally a plan (``order``) and channel
    splits (``splits``). See the module docstring."""

    ep_of: Mapping[str, ExecutionPlace]
    #: EP name -> the ops it runs, in execution order (None: the workload's topological order).
    order: Mapping[str, tuple[str, ...]] | None = None
    #: op name -> its channel shares over several EPs (ops not listed run whole on ``ep_of``).
    splits: Mapping[str, tuple[Share, ...]] = field(default_factory=dict)

    @property
    def eps(self) -> tuple[ExecutionPlace, ...]:
        """Every EP the placement uses (split shares included), in order of first use."""
        seen: dict[str, ExecutionPlace] = {}
        for op, ep in self.ep_of.items():
            seen.setdefault(ep.name, ep)
            for share in self.splits.get(op, ()):
                seen.setdefault(share.ep.name, share.ep)
        return tuple(seen.values())

    @property
    def is_plan(self) -> bool:
        return self.order is not None

    def __str__(self) -> str:
        counts = Counter(ep.name for ep in self.ep_of.values())
        text = ", ".join(f"{n}: {c} ops" for n, c in counts.items())
        if self.splits:
            text += f"; {len(self.splits)} split"
        return text


Mapping_ = Pipeline | Placement


# -- building and parsing -------------------------------------------------------------------
def pipeline_from_split(split: Sequence[int], eps: Sequence[ExecutionPlace]) -> Pipeline:
    """A pipeline from layer counts per stage (``[7, 4, 10]``) and one EP per stage."""
    if len(split) != len(eps):
        raise HetsimError(f"split {list(split)} has {len(split)} stages but {len(eps)} EPs were given")
    stages, first = [], 1
    for n, ep in zip(split, eps, strict=True):
        if n < 1:
            raise HetsimError(f"split {list(split)}: every stage needs at least one layer")
        stages.append(Stage(ep, first, first + n - 1))
        first += n
    return Pipeline(tuple(stages))


def parse_pipeline(text: str, platform: Platform, workload, source: str = "mapping") -> Pipeline:
    """Parse ``B4:1-35|s2:36-44|s2:45-54`` and validate it against platform and workload."""
    stages = []
    for i, part in enumerate(text.split("|"), 1):
        m = _STAGE.match(part)
        long = re.search(r"[0-9]{10,}", part)
        if long:
            raise HetsimError(f"{source}: stage {i} has a layer number of {len(long.group())} digits; "
                              f"{workload.name} has layers 1-{workload.num_layers}")
        if not m:
            raise HetsimError(f"{source}: stage {i} {_short(part.strip())!r} is not EP:first-last "
                              f"(e.g. B4:1-35|s2:36-54)")
        ep_name, first, last = m.group(1), int(m.group(2)), int(m.group(3) or m.group(2))
        ep = _ep(platform, ep_name, f"{source}: stage {i}")
        stages.append(Stage(ep, first, last))
    pipe = Pipeline(tuple(stages))
    validate_pipeline(pipe, platform, workload, source)
    return pipe


def validate_pipeline(pipe: Pipeline, platform: Platform, workload, source: str = "mapping",
                      cost=None) -> None:
    n_layers = workload.num_layers
    if not pipe.stages:
        raise HetsimError(f"{source}: a pipeline needs at least one stage")
    expected = 1
    for i, s in enumerate(pipe.stages, 1):
        if s.first < 1:
            raise HetsimError(f"{source}: stage {i} ({s}) starts at layer {s.first}; layers are "
                              f"1-based (1..{n_layers})")
        if s.first > s.last:
            raise HetsimError(f"{source}: stage {i} ({s}) ends before it starts")
        if s.first != expected:
            what = "gap" if s.first > expected else "overlap"
            raise HetsimError(
                f"{source}: stage {i} ({s}) starts at layer {s.first} but the previous stage ends at "
                f"layer {expected - 1} ({what}); stages must cover layers 1-{n_layers} contiguously")
        expected = s.last + 1
    if expected - 1 != n_layers:
        where = "stops at" if expected - 1 < n_layers else "runs past"
        raise HetsimError(f"{source}: the last stage {where} layer {expected - 1} but "
                          f"{workload.name} has {n_layers} layers")
    _check_cores([s.ep for s in pipe.stages], platform, source, exclusive=True)
    if cost is not None:
        for s in pipe.stages:
            for layer in workload.layers[s.first - 1:s.last]:
                for op in layer.ops:
                    if not cost.supports(op, s.ep):
                        raise HetsimError(f"{source}: {s.ep.name} cannot run op {op.name} "
                                          f"(kind {op.kind}) of layer {layer.index}")


def make_placement(spec: Mapping[str, str], platform: Platform, workload, default: str | None = None,
                   order: Mapping[str, Sequence[str]] | None = None,
                   splits: Mapping[str, Mapping[str, float]] | None = None,
                   source: str = "mapping", cost=None) -> Placement:
    """A validated placement (a plan with ``order``, a split with ``splits``) from EP names."""
    names = {op.name for op in workload.ops}
    for op_name in list(spec) + list(splits or {}):
        if op_name not in names:
            raise HetsimError(f"{source}: placement names op {op_name!r}, which {workload.name} does not have")
    default_ep = _ep(platform, default, f"{source}: default") if default else None
    cache: dict[str, ExecutionPlace] = {}

    def ep_named(name: str, where: str) -> ExecutionPlace:
        if name not in cache:
            cache[name] = _ep(platform, str(name), where)
        return cache[name]

    ep_of = {}
    for op in workload.ops:
        ep_name = spec.get(op.name)
        if ep_name is None:
            if default_ep is None:
                raise HetsimError(f"{source}: op {op.name} has no EP (place it or give a default)")
            ep_of[op.name] = default_ep
        else:
            ep_of[op.name] = ep_named(ep_name, f"{source}: op {op.name}")
    shares = {op: tuple(Share(ep_named(e, f"{source}: splits.{op}"), float(f)) for e, f in parts.items())
              for op, parts in (splits or {}).items()}
    plan = None
    if order is not None:
        plan = {ep_named(e, f"{source}: order.{e}").name: tuple(str(o) for o in ops)
                for e, ops in order.items()}
    placement = Placement(ep_of, plan, shares)
    validate_placement(placement, platform, workload, source, cost)
    return placement


def placement_from_dict(spec: Mapping[str, str], platform: Platform, workload,
                        default: str | None = None, source: str = "mapping", cost=None) -> Placement:
    """A placement op -> EP name (``default`` for the ops not named)."""
    return make_placement(spec, platform, workload, default, source=source, cost=cost)


def validate_placement(placement: Placement, platform: Platform, workload, source: str = "mapping",
                       cost=None) -> None:
    """Every op placed once on an EP that can run it; a plan's order a permutation of each EP's
    ops that respects the data dependencies; split shares positive and summing to 1."""
    g = workload.graph
    missing = [op.name for op in workload.ops if op.name not in placement.ep_of]
    if missing:
        raise HetsimError(f"{source}: op {missing[0]} has no EP ({len(missing)} ops unplaced)")
    for op_name, shares in placement.splits.items():
        op = workload.op(op_name)
        if len(shares) < 2:
            raise HetsimError(f"{source}: splits.{op_name}: a split needs at least 2 EPs, got {len(shares)}")
        if len({s.ep.name for s in shares}) != len(shares):
            raise HetsimError(f"{source}: splits.{op_name}: an EP appears twice")
        if any(not (0 < s.fraction <= 1) or not math.isfinite(s.fraction) for s in shares):
            raise HetsimError(f"{source}: splits.{op_name}: every share must be in (0, 1], got "
                              f"{[s.fraction for s in shares]}")
        total = sum(s.fraction for s in shares)
        if abs(total - 1.0) > 1e-9:
            raise HetsimError(f"{source}: splits.{op_name}: shares sum to {total:g}; they must sum to 1")
        if op.out_shape.c < len(shares):
            raise HetsimError(f"{source}: splits.{op_name}: {op.out_shape.c} output channels cannot be "
                              f"split over {len(shares)} EPs")
    if cost is not None:
        for op in workload.ops:
            eps = [s.ep for s in placement.splits.get(op.name, ())] or [placement.ep_of[op.name]]
            for ep in eps:
                if not cost.supports(op, ep):
                    raise HetsimError(f"{source}: {ep.name} cannot run op {op.name} (kind {op.kind})")
    if placement.order is not None:
        placed: dict[str, list[str]] = {}
        for op in workload.ops:
            if op.name not in placement.splits:
                placed.setdefault(placement.ep_of[op.name].name, []).append(op.name)
        for ep_name, listed_ops in placement.order.items():
            if ep_name not in placed and listed_ops:
                raise HetsimError(f"{source}: order.{ep_name}: no op is placed on {ep_name}")
        for ep_name, ops in placed.items():
            listed = list(placement.order.get(ep_name, ()))
            if Counter(listed) != Counter(ops):
                extra = sorted(set(listed) - set(ops))
                lack = sorted(set(ops) - set(listed))
                what = (f"lists {extra[0]!r}, which runs elsewhere" if extra else
                        f"lacks {lack[0]!r}" if lack else "lists an op twice")
                raise HetsimError(f"{source}: order.{ep_name} {what}; it must list exactly the "
                                  f"{len(ops)} ops placed on {ep_name}")
        chain = nx.DiGraph(g)
        for plan in placement.order.values():
            chain.add_edges_from(zip(plan, plan[1:], strict=False))
        if not nx.is_directed_acyclic_graph(chain):
            a, b = next((u, v) for u, v in nx.find_cycle(chain) if not g.has_edge(u, v))
            raise HetsimError(f"{source}: the plan's order runs {a} before {b}, but {b} (or an op "
                              f"before it) feeds {a}: the order must respect the data dependencies")
    _check_cores(list(placement.eps), platform, source, exclusive=False)


# -- mapping files ----------------------------------------------------------------------------
class _FileModel(BaseModel):
    """Strict, and an unknown key is named with the keys allowed."""

    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data):
        if isinstance(data, dict):
            unknown = sorted(str(k) for k in data if k not in cls.model_fields)
            if unknown:
                raise ValueError(f"unknown key {unknown[0]!r}; allowed: {', '.join(cls.model_fields)}")
        return data


class _StageSpec(_FileModel):
    ep: str
    layers: Annotated[list[Layer], Field(min_length=2, max_length=2,
                                             description="[first, last], 1-based")]


class MappingFile(_FileModel):
    """A mapping file: exactly one of ``pipeline``, ``stages``, ``placement``."""

    description: str = ""
    pipeline: str | None = None
    stages: Annotated[list[_StageSpec], Field(min_length=1)] | None = None
    placement: dict[str, str] | None = None
    default: str | None = None
    order: dict[str, list[str]] | None = None
    splits: dict[str, dict[str, Fraction]] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> MappingFile:
        forms = [k for k in ("pipeline", "stages", "placement") if getattr(self, k) is not None]
        if len(forms) != 1:
            raise ValueError("a mapping file needs exactly one of the keys pipeline, stages, placement"
                             + (f"; has {forms}" if forms else ""))
        if forms[0] != "placement" and any(getattr(self, k) is not None
                                           for k in ("default", "order", "splits")):
            raise ValueError("default, order and splits go with placement")
        return self


def load_mapping(spec: str, platform: Platform, workload, cost=None) -> Mapping_:
    """A mapping from its string form or from a YAML/JSON file."""
    text = str(spec).strip()
    if "|" not in text and ":" not in text or text.endswith((".yaml", ".yml", ".json")):
        if _is_file(text):
            return _load_file(Path(text), platform, workload, cost)
    m = parse_pipeline(text, platform, workload)
    if cost is not None:
        validate_pipeline(m, platform, workload, _short(text), cost)
    return m


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file() or text.endswith((".yaml", ".yml", ".json"))
    except OSError:  # a name too long to be a path is not one
        return False


def _load_file(path: Path, platform: Platform, workload, cost) -> Mapping_:
    src = str(path)
    data = read_yaml(path)
    try:
        spec = MappingFile.model_validate(data)
    except ValidationError as e:
        raise one_line(src, e) from None
    if spec.placement is not None:
        return make_placement(spec.placement, platform, workload, spec.default, spec.order, spec.splits,
                              src, cost)
    if spec.pipeline is not None:
        m = parse_pipeline(spec.pipeline, platform, workload, src)
    else:
        stages = tuple(Stage(_ep(platform, s.ep, f"{src}: stages[{i}]"), s.layers[0], s.layers[1])
                       for i, s in enumerate(spec.stages or ()))
        m = Pipeline(stages)
    validate_pipeline(m, platform, workload, src, cost)
    return m


def _short(text: str, n: int = 60) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _ep(platform: Platform, name: str, where: str) -> ExecutionPlace:
    try:
        return platform.ep(name)
    except HetsimError as e:
        raise HetsimError(f"{where}: {e}") from None


def _check_cores(eps: Sequence[ExecutionPlace], platform: Platform, source: str, exclusive: bool) -> None:
    """Stages (or the distinct EPs of a placement) get disjoint cores: per cluster, their core counts
    must fit in the cluster; an accelerator serves one stage."""
    used: Counter[str] = Counter()
    accel: Counter[str] = Counter()
    for ep in eps:
        if ep.cluster:
            used[ep.cluster] += ep.cores
        else:
            accel[ep.place] += 1
    for cname, n in used.items():
        have = platform.cluster(cname).cores
        if n > have:
            names = _short("+".join(ep.name for ep in eps if ep.cluster == cname), 80)
            raise HetsimError(f"{source}: stages use {n} cores of cluster {cname} ({names}) but it has {have}")
    if exclusive:
        for aname, n in accel.items():
            if n > 1:
                raise HetsimError(f"{source}: accelerator {aname} is given to {n} stages; a stage owns its EP")
