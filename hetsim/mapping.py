"""Mappings: what runs where.

Two forms:

* a **pipeline**: ordered stages, each a contiguous range of layers on one EP. Its string form reads
  like the papers: ``B4:1-35|s2:36-44|s2:45-54`` (EP name as the platform defines it, or cluster
  symbol + core count; 1-based inclusive layer ranges). Stages run concurrently on different frames.
* a **placement**: op -> EP, for DAG schedules (HOPE-style operator placement). One inference runs
  the DAG with every op on its EP.

Both also load from YAML/JSON files::

    stages: [{ep: B4, layers: [1, 35]}, {ep: s2, layers: [36, 44]}, {ep: s2, layers: [45, 54]}]
    # or
    pipeline: "B4:1-35|s2:36-44|s2:45-54"
    # or
    placement: {conv1: gpu, pool1: gpu, fc8: big}
    default: big          # EP of every op the placement does not name (optional)

Every invalid mapping (gaps, overlaps, an unknown EP, more cores than a cluster has, an op an EP
cannot run) is rejected with one line saying what and where.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from hetsim.errors import HetsimError
from hetsim.platform import ExecutionPlace, Platform
from hetsim.validation import read_yaml

_STAGE = re.compile(r"^\s*([^:|\s]+(?::\d+)?)\s*:\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


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
class Placement:
    """Op name -> EP for every op of the workload."""

    ep_of: Mapping[str, ExecutionPlace]

    @property
    def eps(self) -> tuple[ExecutionPlace, ...]:
        seen: dict[str, ExecutionPlace] = {}
        for ep in self.ep_of.values():
            seen.setdefault(ep.name, ep)
        return tuple(seen.values())

    def __str__(self) -> str:
        counts = Counter(ep.name for ep in self.ep_of.values())
        return ", ".join(f"{n}: {c} ops" for n, c in counts.items())


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
    parts = [p for p in text.split("|")]
    stages = []
    for i, part in enumerate(parts, 1):
        m = _STAGE.match(part)
        if not m:
            raise HetsimError(f"{source}: stage {i} {part.strip()!r} is not EP:first-last "
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


def placement_from_dict(spec: Mapping[str, str], platform: Platform, workload,
                        default: str | None = None, source: str = "mapping", cost=None) -> Placement:
    names = {op.name for op in workload.ops}
    for op_name in spec:
        if op_name not in names:
            raise HetsimError(f"{source}: placement names op {op_name!r}, which {workload.name} does not have")
    default_ep = _ep(platform, default, f"{source}: default") if default else None
    ep_of = {}
    cache: dict[str, ExecutionPlace] = {}
    for op in workload.ops:
        ep_name = spec.get(op.name)
        if ep_name is None:
            if default_ep is None:
                raise HetsimError(f"{source}: op {op.name} has no EP (place it or give a default)")
            ep = default_ep
        else:
            ep = cache.get(ep_name) or _ep(platform, str(ep_name), f"{source}: op {op.name}")
            cache[ep_name] = ep
        if cost is not None and not cost.supports(op, ep):
            raise HetsimError(f"{source}: {ep.name} cannot run op {op.name} (kind {op.kind})")
        ep_of[op.name] = ep
    placement = Placement(ep_of)
    _check_cores(list(placement.eps), platform, source, exclusive=False)
    return placement


def load_mapping(spec: str, platform: Platform, workload, cost=None) -> Mapping_:
    """A mapping from its string form or from a YAML/JSON file."""
    text = str(spec).strip()
    if text.endswith((".yaml", ".yml", ".json")) or (Path(text).is_file() and "|" not in text):
        path = Path(text)
        data = read_yaml(path)
        src = str(path)
        keys = set(data)
        if "pipeline" in keys:
            m = parse_pipeline(str(data["pipeline"]), platform, workload, src)
        elif "stages" in keys:
            m = _stages_from_list(data["stages"], platform, workload, src)
        elif "placement" in keys:
            if not isinstance(data["placement"], dict):
                raise HetsimError(f"{src}: placement must map op names to EPs")
            return placement_from_dict(data["placement"], platform, workload, data.get("default"), src, cost)
        else:
            raise HetsimError(f"{src}: a mapping file needs one of the keys pipeline, stages, placement; "
                              f"has {sorted(keys)}")
        unknown = keys - {"pipeline", "stages", "placement", "default", "description"}
        if unknown:
            raise HetsimError(f"{src}: unknown key {sorted(unknown)[0]!r}; allowed: pipeline, stages, "
                              f"placement, default, description")
    else:
        m = parse_pipeline(text, platform, workload)
    if cost is not None:
        validate_pipeline(m, platform, workload, str(spec), cost)
    return m


def _stages_from_list(items, platform, workload, src) -> Pipeline:
    if not isinstance(items, list) or not items:
        raise HetsimError(f"{src}: stages must be a non-empty list of {{ep, layers: [first, last]}}")
    stages = []
    for i, item in enumerate(items, 1):
        if not isinstance(item, dict) or set(item) != {"ep", "layers"}:
            raise HetsimError(f"{src}: stages[{i - 1}] must have exactly the keys ep and layers")
        layers = item["layers"]
        if (not isinstance(layers, list) or len(layers) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in layers)):
            raise HetsimError(f"{src}: stages[{i - 1}].layers must be [first, last] (integers), "
                              f"got {layers!r}")
        ep = _ep(platform, str(item["ep"]), f"{src}: stages[{i - 1}]")
        stages.append(Stage(ep, layers[0], layers[1]))
    pipe = Pipeline(tuple(stages))
    validate_pipeline(pipe, platform, workload, src)
    return pipe


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
            accel[ep.accelerator] += 1
    for cname, n in used.items():
        have = platform.cluster(cname).cores
        if n > have:
            names = "+".join(ep.name for ep in eps if ep.cluster == cname)
            raise HetsimError(f"{source}: stages use {n} cores of cluster {cname} ({names}) but it has {have}")
    if exclusive:
        for aname, n in accel.items():
            if n > 1:
                raise HetsimError(f"{source}: accelerator {aname} is given to {n} stages; a stage owns its EP")
